"""Backends on a QP in matrix form (:class:`tpm_models.qp.QPMatrices`), without a Pyomo model: the estimators' one
entry to a dense solver (:mod:`tpm_models.learn`).

A backend declares one in the registry (``register_backend(..., matrix_run=...)``: PIQP, DAQP, with the settings of
``solve(model, name)``); :func:`solve_matrices` runs it and verifies its point. The contract of
``matrix_run(qp, options=None, warm=None) -> MatrixSolution``: solve ``qp`` with the backend's settings, then
``options`` (the solver's own names; an unknown one raises ``ValueError``); ``warm``, a :class:`WarmStart`, keeps
the solver set up between runs on QPs that differ only in ``q``, ``b``, ``h`` and the bounds (a backend that cannot
keep one solves afresh).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from tpm_models.certify.tolerances import FEASIBILITY_TOL
from tpm_models.qp import QPMatrices
from tpm_models.solvers.backends.registry import BACKENDS, default_solver
from tpm_models.solvers.common import (
    NoOptimalSolutionError,
    SolutionStatus,
    SolveResult,
    SolverUnavailableError,
    Termination,
)

log = logging.getLogger(__name__)


@dataclass
class MatrixSolution:
    """What a backend's ``matrix_run`` returned on :class:`~tpm_models.qp.QPMatrices`: its termination, the
    point ``x`` and the multipliers of the minimised form (:math:`\\partial\\min/\\partial b`,
    :math:`\\partial\\min/\\partial h`)."""

    termination: Termination
    x: np.ndarray
    eq_duals: np.ndarray
    ineq_duals: np.ndarray
    message: str


@dataclass
class WarmStart:
    """A backend's solver kept set up between runs (``matrix_run(qp, warm=...)``, :func:`solve_matrices`).

    A run given a ``WarmStart`` that :meth:`holds` a solver set up on the same ``P``, ``A`` and ``G`` arrays as
    ``qp`` (the same objects: the caller keeps them, as :class:`tpm_models.learn.fastqp.ClassDual` does) updates
    ``q``, ``b``, ``h`` and the bounds in it and re-solves (DAQP from its last working set); any other run sets the
    solver up and keeps it here. A fresh ``WarmStart`` gives a cold run."""

    solver: Any = None  # the backend's own solver object (piqp, daqp: untyped)
    matrices: tuple = ()
    arrays: tuple = ()
    """The arrays the solver was set up with, kept alive (a solver may point into them rather than copy them)."""

    def holds(self, qp: QPMatrices) -> bool:
        """A solver set up on ``qp.P``, ``qp.A`` and ``qp.G`` (identity, not equality) is kept here."""
        return self.solver is not None and len(self.matrices) == 3 and all(
            kept is given for kept, given in zip(self.matrices, (qp.P, qp.A, qp.G)))

    def keep(self, solver: object, qp: QPMatrices, arrays: tuple = ()) -> None:
        """Keep ``solver``, set up on ``qp`` from ``arrays``."""
        self.solver, self.matrices, self.arrays = solver, (qp.P, qp.A, qp.G), arrays


def matrix_solvers() -> list[str]:
    """The registered backends that take a QP in matrix form (``Backend.matrix_run``), sorted."""
    return sorted(name for name, backend in BACKENDS.items() if backend.matrix_run is not None)


def matrix_violation(qp: QPMatrices, x: np.ndarray) -> float:
    """Largest violation of the rows and bounds of ``qp`` at ``x`` (absolute, 0 when none is violated; ``inf`` if
    ``x`` is not finite)."""
    largest = np.maximum.reduce  # np.max without its Python wrapper: the duals of a fit are solved thousands of times
    if not len(x):
        worst = 0.0
    else:  # a NaN or an infinity in x makes an excess NaN or +inf (at an infinite bound: inf - inf, NaN); free
        worst = float(largest(np.maximum(qp.x_l - x, x - qp.x_u)))  # variables alone, finite x: -inf
        if not worst < math.inf:
            return math.inf
        worst = max(0.0, worst)
    if len(qp.b):
        worst = max(worst, float(largest(np.abs(qp.A @ x - qp.b))))
    if len(qp.h_l):
        Gx = qp.G @ x
        worst = max(worst, float(largest(qp.h_l - Gx)), float(largest(Gx - qp.h_u)))
    return worst


def solve_matrices(qp: QPMatrices, solver: str = "default", raise_on_failure: bool = True, *,
                   options: dict | None = None, warm: WarmStart | None = None) -> SolveResult:
    """Solve the QP ``qp`` with ``solver``: ``"default"`` (``default_solver("QP")``) or a backend of
    :func:`matrix_solvers` (else :class:`SolverUnavailableError`), with the settings of ``solve(model, solver)``, then
    ``options``; ``warm``: a :class:`WarmStart` to keep the solver set up in. ``OPTIMAL`` only if the solver says so
    and the point is finite and feasible to ``FEASIBILITY_TOL`` (no model to certify on: ``solution_status`` is
    ``FEASIBLE`` at best, ``certificate`` ``None``); otherwise raises :class:`NoOptimalSolutionError`
    (``raise_on_failure=False``: returns the result). ``values["x"]``: the point; ``objective``: in the model's own
    sense.
    """
    backend = BACKENDS.get(default_solver("QP") if solver == "default" else solver)
    if backend is None or backend.matrix_run is None:
        raise SolverUnavailableError(
            f"solver {solver!r} does not take a QP in matrix form; use 'default' or one of {matrix_solvers()}")
    start = time.perf_counter()
    try:
        sol = cast(Callable[..., MatrixSolution], backend.matrix_run)(qp, options, warm)
    except Exception as exc:  # a crash inside the solver is a failure, not a crash
        log.warning("%s raised %s: %s", backend.name, type(exc).__name__, exc)
        sol = MatrixSolution(Termination.ERROR, np.full(len(qp.q), np.nan), np.zeros(0), np.zeros(0),
                             f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - start
    violation = matrix_violation(qp, sol.x)
    termination, message = sol.termination, sol.message
    objective = None if violation == math.inf else qp.objective(sol.x)  # inf: a point not finite (or no bound)
    if termination is Termination.OPTIMAL and (
        objective is None or not math.isfinite(objective) or violation > FEASIBILITY_TOL
    ):
        termination = Termination.NUMERICAL_ERROR
        message = f"reported optimal but max violation {violation:.3g} / objective {objective}"
    result = SolveResult(
        solver=backend.name,
        solver_version=backend.solver_version(),
        termination=termination,
        objective=objective if termination is Termination.OPTIMAL else None,
        values={"x": sol.x},
        seconds=seconds,
        max_violation=violation,
        message=message,
        # no Pyomo model to certify on: feasible (absolute check above), optimality the solver's word
        solution_status=SolutionStatus.FEASIBLE if violation <= FEASIBILITY_TOL else SolutionStatus.INFEASIBLE,
        solver_termination=sol.termination,
    )
    if not result.optimal:
        log.warning("%s on a QP in matrix form: %s %s", backend.name, termination.value, message)
        if raise_on_failure:
            raise NoOptimalSolutionError(result)
    return result
