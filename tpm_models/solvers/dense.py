"""Dense QP solvers on a QP in matrix form (:class:`tpm_models.qp.QPMatrices`), without a Pyomo model.

:func:`solve_matrices` runs PIQP or DAQP (:data:`MATRIX_SOLVERS`, with the settings of
``solve(model, "piqp")`` and ``solve(model, "daqp")``) on matrices such as those of
:func:`tpm_models.models.shapes.dual_matrices`, with :func:`tpm_models.solvers.dispatch.solve`'s verification:
``OPTIMAL`` only when the solver says so and the point is finite and feasible to ``FEASIBILITY_TOL``.
The estimators' default route (``backend="dense"``). The Pyomo backends ``piqp`` and ``daqp`` run the
same functions on :func:`tpm_models.solvers.matrices.qp_matrices` of a model.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tpm_models.qp import QPMatrices
from tpm_models.solvers import common
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
    """What a dense QP solver returned on :class:`~tpm_models.qp.QPMatrices`: its termination, the
    point ``x`` and the multipliers of the minimised form (:math:`\\partial\\min/\\partial b`,
    :math:`\\partial\\min/\\partial h`)."""

    termination: Termination
    x: np.ndarray
    eq_duals: np.ndarray
    ineq_duals: np.ndarray
    message: str


MATRIX_SOLVERS: dict[str, Callable[[QPMatrices], MatrixSolution]] = {}
"""The dense QP solvers that take :class:`~tpm_models.qp.QPMatrices` directly (:func:`solve_matrices`);
``backends/piqp.py`` and ``backends/daqp.py`` add theirs."""


def matrix_violation(qp: QPMatrices, x: np.ndarray) -> float:
    """Largest violation of the rows and bounds of ``qp`` at ``x`` (absolute; ``inf`` if ``x`` is not finite)."""
    if not np.isfinite(x).all():
        return math.inf
    parts = [np.abs(qp.A @ x - qp.b), qp.h_l - qp.G @ x, qp.G @ x - qp.h_u, qp.x_l - x, x - qp.x_u]
    return float(max([0.0] + [float(np.max(v)) for v in parts if v.size]))
def solve_matrices(qp: QPMatrices, solver: str = "default", raise_on_failure: bool = True) -> SolveResult:
    """Solve the QP ``qp`` (:class:`~tpm_models.qp.QPMatrices`) with a dense solver, no Pyomo model.

    ``solver``: ``"default"`` (``default_solver("QP")``) or one of :data:`MATRIX_SOLVERS`, run with the settings
    of ``solve(model, solver)``. The same verification as :func:`solve`: ``OPTIMAL`` only if the solver
    says so and the point is finite and feasible to ``FEASIBILITY_TOL``; otherwise raises
    :class:`NoOptimalSolutionError` (or, with ``raise_on_failure=False``, returns the non-optimal result).
    ``values["x"]`` is the point, ``objective`` the objective in the model's own sense.
    """
    name = default_solver("QP") if solver == "default" else solver
    if name not in MATRIX_SOLVERS:
        raise SolverUnavailableError(
            f"solver {solver!r} does not take a QP in matrix form; use 'default' or one of {sorted(MATRIX_SOLVERS)}"
        )
    start = time.perf_counter()
    try:
        sol = MATRIX_SOLVERS[name](qp)
    except Exception as exc:  # a crash inside the solver is a failure, not a crash
        log.warning("%s raised %s: %s", name, type(exc).__name__, exc)
        sol = MatrixSolution(Termination.ERROR, np.full(len(qp.q), np.nan), np.zeros(0), np.zeros(0),
                             f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - start
    violation = matrix_violation(qp, sol.x)
    termination, message = sol.termination, sol.message
    objective = qp.objective(sol.x) if np.isfinite(sol.x).all() else None
    if termination is Termination.OPTIMAL and (
        objective is None or not math.isfinite(objective) or violation > common.FEASIBILITY_TOL
    ):
        termination = Termination.NUMERICAL_ERROR
        message = f"reported optimal but max violation {violation:.3g} / objective {objective}"
    result = SolveResult(
        solver=name,
        solver_version=BACKENDS[name].solver_version(),
        termination=termination,
        objective=objective if termination is Termination.OPTIMAL else None,
        values={"x": sol.x},
        seconds=seconds,
        max_violation=violation,
        message=message,
        # no Pyomo model to certify on: feasible (absolute check above), optimality the solver's word
        solution_status=SolutionStatus.FEASIBLE if violation <= common.FEASIBILITY_TOL else SolutionStatus.INFEASIBLE,
        solver_termination=sol.termination,
    )
    if not result.optimal:
        log.warning("%s on a QP in matrix form: %s %s", name, termination.value, message)
        if raise_on_failure:
            raise NoOptimalSolutionError(result)
    return result
