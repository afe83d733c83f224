"""The call profile of issue 48 (``scripts/call_profile.py``): how often one solve of (28) at 10^4 points calls
from one module of the package into another.

The truth is the same script run on the commit the issue's work started from (096765e, where the scale data lived
in ``tpm_models.experiments.bench_scale``): 167 calls across modules. The issue asks for at most half. The count is
a structure of the code, not a time: the same calls for the same model and backend, but for the polish's Newton
steps (2 here; on another CPU's BLAS one more is possible, one call each), which the 5 calls of margin cover."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "call_profile.py"
BEFORE_ISSUE_48 = 167  # calls across modules at 096765e, by this script (docs/architecture.md)


def _script():
    spec = importlib.util.spec_from_file_location("call_profile", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_solve_of_28_at_10k_points_makes_at_most_half_the_module_visits_of_before():
    pytest.importorskip("clarabel")
    crossings, result = _script().profile(28, 10_000, "default")
    assert result.termination.value == "optimal" and result.solver == "clarabel"
    assert all(caller != callee for caller, callee, _ in crossings)
    assert len(crossings) <= BEFORE_ISSUE_48 // 2, (
        f"{len(crossings)} calls across modules (at most {BEFORE_ISSUE_48 // 2}); run "
        "PYTHONPATH=. python scripts/call_profile.py --eq 28 --points 10000 --list to see them")
