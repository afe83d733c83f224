"""Issue 50's battery (:mod:`benchmarks.robust_battery`): robust LPs and SOCPs from RSOME's and PyROS's documentation
examples, each derived by ``robust_counterpart`` and solved by ``solve``, against two independent truths: the
closed form where one exists, and RSOME's optimum of the same case written in RSOME's own language
(``benchmarks/rsome_battery.py``, run in a throwaway venv; its CSV ``docs/results/rsome-battery.csv`` is shipped, not
made by this library)."""

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from benchmarks.robust_battery import SetSpec, cases, pyomo_model
from tpm_models import robust_counterpart, solve
from tpm_models.solvers import Termination

RSOME_CSV = Path(__file__).resolve().parents[2] / "docs" / "results" / "rsome-battery.csv"

OBJ_TOL = 1e-6
"""Relative agreement of two optima, ``|a - b| / max(1, |b|)``. Our counterparts are solved by PIQP (LPs) or Clarabel
(SOCPs), certified to a relative gap of 1e-9 and feasibility 1e-6 relative to each row (``tpm_models.solvers.common``);
RSOME's by SciPy's HiGHS (LPs: feasibility 1e-7) or ECOS (SOCPs: feasibility and gaps 1e-8, its defaults, which RSOME
1.3 does not change). Measured worst differences: 2.7e-9 against RSOME (ECOS's), 5e-13 against the closed forms; 1e-6
leaves the solvers' tolerances two orders of room and would still see any wrong support (the sets here move the
optima by 1e-2 to 2e-1 relative)."""

CASES = cases()


def rsome_optima() -> dict[str, dict]:
    with RSOME_CSV.open(newline="") as f:
        return {row["case"]: row for row in csv.DictReader(f)}


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(b))


def kinds(spec: SetSpec) -> set[str]:
    out = {spec.label() if spec.kind in ("ball", "ellipsoid") else spec.kind}
    for member in spec.members:
        out |= kinds(member)
    return out


def test_the_battery_covers_the_sets_senses_and_row_forms():
    assert len(CASES) >= 25
    assert len({c.name for c in CASES}) == len(CASES)
    sets = set().union(*(kinds(u.uset) for c in CASES for u in c.uncertain))
    assert {"box", "l1 ball", "l2 ball", "linf ball", "ellipsoid", "degenerate ellipsoid", "budget", "polyhedron",
            "intersection", "product", "factor", "scenarios"} <= sets
    forms = set(" ".join(c.forms() for c in CASES).split())
    assert {"min", "max", "<=", ">=", "ranged", "rhs", "objective", "joint", "free-x"} <= forms
    assert {c.kind for c in CASES} == {"LP", "SOCP"}
    assert any(c.cones for c in CASES)  # a nominal SOCP
    assert sum(c.closed is not None for c in CASES) >= 20


def test_the_rsome_table_holds_every_case_solved_by_rsome():
    ref = rsome_optima()
    assert set(ref) == {c.name for c in CASES}
    for name, row in ref.items():
        assert row["rsome"].startswith("1.3"), name
        assert row["status"] in ("0", "Optimal solution found"), (name, row["status"])  # linprog's 0, ECOS's text
        assert math.isfinite(float(row["rsome_objective"])), name


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_against_rsome_and_the_closed_form(case):
    nominal, declared = pyomo_model(case)
    counterpart = robust_counterpart(nominal, declared)
    result = solve(counterpart)
    assert result.termination is Termination.OPTIMAL
    ours = result.objective
    theirs = float(rsome_optima()[case.name]["rsome_objective"])
    assert rel(ours, theirs) <= OBJ_TOL, (ours, theirs)
    if case.closed is not None:
        assert rel(ours, case.closed) <= OBJ_TOL, (ours, case.closed, case.note)
        assert rel(theirs, case.closed) <= OBJ_TOL, (theirs, case.closed, "RSOME and the closed form disagree")
    # the nominal model is not touched and is no more conservative than its counterpart
    plain = solve(nominal).objective
    assert (ours <= plain + 1e-9 * max(1.0, abs(plain))) if case.sense == "max" else \
        (ours >= plain - 1e-9 * max(1.0, abs(plain)))


def test_the_counterpart_keeps_the_sense_and_the_nominal_model():
    case = next(c for c in CASES if c.name == "issue-max-box")
    nominal, declared = pyomo_model(case)
    before = str(nominal.cap.expr)
    counterpart = robust_counterpart(nominal, declared)
    assert str(nominal.cap.expr) == before
    assert counterpart.obj.sense == nominal.obj.sense
    assert np.isclose(solve(counterpart).objective, 4 / 1.5, rtol=1e-9)
