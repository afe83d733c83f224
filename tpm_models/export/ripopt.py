"""ripopt, an external ``.nl`` solver (the ``pyomo-ripopt`` wheel's binary), run on the files the writers write.

It is the library's independent reader of ``.nl`` files: :func:`run_ripopt` solves a written file and reads
ripopt's JSON report; :func:`solve_ripopt` writes a model's ``.nl`` (:func:`tpm_models.export.writers.nl_text`),
solves it and loads the point back, for the tolerant check of ``formulations/``
(:func:`tpm_models.export.library.check_library`). Why the options have their values: ``docs/formulations.md``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyomo.environ as pyo

from tpm_models.certify.tolerances import FEASIBILITY_TOL
from tpm_models.export.writers import nl_text, read_text
from tpm_models.solvers.structure import max_violation

RIPOPT_OPTIONS = {"print_level": 0, "tol": 1e-10, "constr_viol_tol": 1e-10, "compl_inf_tol": 1e-13, "mu_min": 1e-15,
                  "bound_relax_factor": 0}
"""Options given to ripopt (Ipopt's names): tolerances at which its objectives agree with the other solvers'
to the library's tolerance; ``bound_relax_factor=0`` keeps its point inside the bounds as written."""


RIPOPT_SOLVED = ("Optimal", "Acceptable")
"""ripopt statuses taken as solved; the objective must still agree with another solver."""


def ripopt_executable() -> str | None:
    """The ``ripopt`` binary of the ``pyomo-ripopt`` wheel, else one on the PATH, else ``None``."""
    spec = importlib.util.find_spec("pyomo_ripopt")
    if spec is not None and spec.origin:
        bundled = Path(spec.origin).parent / "bin" / "ripopt"
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return str(bundled)
    return shutil.which("ripopt")


@dataclass
class RipoptResult:
    """What ripopt wrote to its JSON report for one ``.nl`` file."""

    status: str
    objective: float
    """As ripopt reports it: the *minimised* objective, so ``-f`` for a maximisation."""
    x: np.ndarray
    """Variable values in the ``.nl`` column order."""
    seconds: float
    report: dict = field(repr=False, default_factory=dict)


def run_ripopt(nl_path: str | os.PathLike, timeout: float = 300.0) -> RipoptResult:
    """Solve a ``.nl`` file (``.nl.gz`` is decompressed first) with the ripopt executable.

    Raises ``RuntimeError`` if ripopt is not installed (``pip install pyomo-ripopt``) or fails.
    """
    exe = ripopt_executable()
    if exe is None:
        raise RuntimeError("ripopt is not installed: pip install pyomo-ripopt (the test extra has it)")
    with tempfile.TemporaryDirectory(prefix="tpm-ripopt-") as tmp:
        nl = Path(tmp) / "model.nl"
        nl.write_bytes(read_text(nl_path))
        report = Path(tmp) / "model.json"
        cmd = [exe, str(nl), "-o", str(report), *(f"{k}={v}" for k, v in RIPOPT_OPTIONS.items())]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - start
        if not report.is_file():
            raise RuntimeError(f"ripopt wrote no report (exit {proc.returncode}): {proc.stderr[-500:]}")
        data = json.loads(report.read_text())
    return RipoptResult(str(data["status"]), float(data["objective"]),
                        np.asarray(data["solution"]["x"], dtype=float), seconds, data)


def solve_ripopt(model: pyo.ConcreteModel) -> tuple[float | None, str]:
    """ripopt on ``model``'s ``.nl``: its point loaded into ``model``; ``(objective or None, message)``."""
    with tempfile.TemporaryDirectory(prefix="tpm-ripopt-") as tmp:
        text, variables = nl_text(model)
        path = Path(tmp) / "model.nl"
        path.write_text(text)
        result = run_ripopt(path)
    if result.status not in RIPOPT_SOLVED:
        return None, f"ripopt: {result.status}"
    for v, value in zip(variables, result.x):
        v.set_value(float(value), skip_validation=True)
    violation = max_violation(model)
    if violation > FEASIBILITY_TOL:
        return None, f"ripopt: point infeasible by {violation:.2g}"
    objective = float(pyo.value(next(model.component_data_objects(pyo.Objective, active=True))))
    return objective, ""
