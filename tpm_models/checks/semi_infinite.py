"""The semi-infinite robust model (22) solved two independent ways: Theorem 1 checked numerically.

The models are :mod:`tpm_models.models.semi_infinite`; the routes are the generic verifier's
(:mod:`tpm_models.checks.verify`), which this module applies to the paper's own counterpart.

(a) **Cutting planes** (:func:`solve_22_cutting_plane`): :func:`tpm_models.checks.verify.solve_cutting_planes`
on the nominal model (15) with the uncertain data :func:`uncertain_22`: each round solves the master,
asks the (25) oracle for the worst :math:`\\delta` of every point, and adds it where it is violated by
more than ``tol``. The returned objective is the semi-infinite objective at the final point (an
upper bound); the master's objective is a lower bound; both are reported.

(b) **PyROS** (:func:`solve_22_pyros`): PyROS minimises the worst case of the objective of
:func:`tpm_models.models.semi_infinite.build_semi_infinite_22` over the Cartesian product of the
per-point sets, with the subsolvers and backups of :func:`tpm_models.checks.verify.pyros_options`.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib import pyros

from tpm_models.checks.verify import (
    CUT_TOL,
    MAX_ROUNDS,
    PYROS_SETTINGS,
    pyros_options,
    pyros_subsolver,
    solve_cutting_planes,
)
from tpm_models.checks.verify.model import Round
from tpm_models.models.multiclass import build_primal_15
from tpm_models.models.norms import check_p
from tpm_models.models.semi_infinite import (
    add_separation_order,
    build_semi_infinite_22,
    semi_infinite_objective,
    uncertain_22,
)
from tpm_models.solvers import NoOptimalSolutionError, SolveResult, Termination

log = logging.getLogger(__name__)

@dataclass
class SemiInfiniteResult:
    """A solve of (22): the point, its semi-infinite objective, and how it was reached."""

    method: str
    objective: float
    w: np.ndarray
    theta: float
    xi: np.ndarray
    rounds: int
    max_violation: float
    lower_bound: float | None
    seconds: float
    message: str = ""
    history: list[Round] = field(default_factory=list)
    termination: str = ""
    """PyROS's termination condition (``robust_optimal``, ``time_out``...); empty for the cutting planes."""


PAPER_COUNTERPARTS = (23, 26, 27, 28, 29)
"""The paper's robust counterparts of (22): their registry entries name the nominal model (15) and its uncertain
data :func:`tpm_models.models.semi_infinite.uncertain_22` (:mod:`tpm_models.models.robust`), so
``tpm-models verify --model 23`` reads both."""


def solve_22_cutting_plane(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray,
    solver: str = "default", tol: float = CUT_TOL, max_rounds: int = MAX_ROUNDS,
) -> SemiInfiniteResult:
    """(22) by cutting planes with the (25) oracle (module docstring), through the generic verifier's
    route (a): :func:`tpm_models.checks.verify.solve_cutting_planes` on (15) with :func:`uncertain_22`.

    Raises :class:`tpm_models.solvers.NoOptimalSolutionError` if a master QP fails, and
    ``RuntimeError`` if ``max_rounds`` pass with a violation above ``tol``.
    """
    p = check_p(p)
    model = build_primal_15(X, y, c, nu, alpha)
    sol = solve_cutting_planes(model, uncertain_22(model, p, eps), solver, tol, max_rounds)
    return SemiInfiniteResult(
        "cutting-plane", sol.objective, np.asarray(sol.values["w"]), float(sol.values["theta"]),
        np.asarray(sol.values["xi"]), sol.rounds, sol.history[-1].violation, sol.lower_bound, sol.seconds, sol.message,
        sol.history,
    )


def solve_22_pyros(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray,
    local_solver: str | None = None, global_solver: str | None = None, time_limit: float | None = None,
    raise_on_failure: bool = True, separation_order: bool | None = None,
    subsolver: Callable[..., object] = pyros_subsolver,
) -> SemiInfiniteResult:
    """(22) by Pyomo's robust solver PyROS (module docstring): every variable first stage,
    worst-case objective, master problems solved globally. Raises
    :class:`tpm_models.solvers.NoOptimalSolutionError` unless PyROS reports ``robust_optimal``
    (with ``raise_on_failure=False`` returns the result instead, objective NaN, PyROS's
    termination in ``termination``).

    Ipopt (``"tpm_ipopt"``) as PyROS's *global* solver is sound here: every subproblem PyROS
    builds from (22) is convex. The masters minimise an epigraph variable under the rows of
    (22) at fixed :math:`\\delta` scenarios (linear) and the epigraph row of the objective
    (:math:`\\tfrac12\\|w\\|^2` + linear :math:`\\le \\tau`: a convex quadratic); each separation
    problem maximises one such row, linear in :math:`\\delta` once the first-stage variables
    are fixed, over a box, an axis-aligned ellipsoid (a convex quadratic row) or a budget
    polytope. A KKT point of a convex problem is a global optimum. The plugin does not take
    this on trust: it reports ``globallyOptimal`` only for models whose exact quadratic forms
    it certifies convex (:func:`tpm_models.solvers.nlp_reading.convexity`), else ``locallyOptimal``, which
    PyROS does not accept from a global solver. With Ipopt as both solvers, local separation
    would repeat the global one with the same solver, so it is bypassed
    (``bypass_local_separation``), and the separation problems are ordered and helped by a
    redundant row (:func:`add_separation_order`; ``separation_order`` defaults to it only
    with a local subsolver as both (``PyrosSettings.local``: Ipopt, the subsolver it was measured with).

    Each Ipopt subsolver gets a cold-started Ipopt as PyROS backup (PyROS starts every master
    at the solution of a feasibility problem whose solution set is unbounded, where a warm
    started interior point can diverge); the backup starts from
    :data:`tpm_models.solvers.ipopt.COLD_START`. A Gurobi subsolver gets a Gurobi backup with
    :data:`tpm_models.checks.verify.GUROBI_BACKUP_OPTIONS`. The result's message counts the
    backup solves. A backup that also fails still ends PyROS with ``subsolver_error``, which
    raises here. What was measured to choose all this: ``docs/robust.md`` ("PyROS on the whole
    data sets").

    ``subsolver`` makes PyROS's subsolvers and their backups: ``subsolver(kind, prefer, time_limit,
    gurobi_options=None, **kwds)`` with the signature of :func:`tpm_models.checks.verify.pyros_subsolver` (the
    default); wrap that to give a subsolver options of your own (``gurobi_options`` is set for the Gurobi backup).
    """
    start = time.perf_counter()
    model = build_semi_infinite_22(X, y, c, nu, alpha, p=p, eps=eps)
    if separation_order is None:
        both = PYROS_SETTINGS.get(local_solver) if local_solver is not None and local_solver == global_solver else None
        separation_order = both is not None and both.local
    if separation_order:
        add_separation_order(model, one_by_one=check_p(p) != 2.0)
    first_stage = list(model.w.values()) + [model.theta] + list(model.xi.values())
    options, backups = pyros_options(local_solver, global_solver, time_limit, subsolver=subsolver)
    with contextlib.redirect_stdout(io.StringIO()):
        res = pyo.SolverFactory("pyros").solve(
            model, first_stage_variables=first_stage, second_stage_variables=[],
            uncertain_params=model.uncertain, uncertainty_set=model.uncertainty_set,
            **options,
        )
    seconds = time.perf_counter() - start
    termination = str(res.pyros_termination_condition).rsplit(".", 1)[-1]
    n_backup = sum(b.solves for b in backups)
    message = f"{termination}, {res.iterations} iterations" + (f", {n_backup} backup solves" if n_backup else "")
    if res.pyros_termination_condition != pyros.pyrosTerminationCondition.robust_optimal:
        if raise_on_failure:
            raise NoOptimalSolutionError(SolveResult(
                solver="pyros", solver_version=pyros.pyros.__version__, termination=Termination.ERROR,
                objective=None, seconds=seconds, message=str(res.pyros_termination_condition),
            ))
        return SemiInfiniteResult("pyros", math.nan, np.full(len(model.J), np.nan), math.nan,
                                  np.full(len(model.X_c), np.nan), int(res.iterations), math.nan, None, seconds,
                                  message, termination=termination)
    w = np.array([pyo.value(model.w[j]) for j in model.J])
    theta = float(pyo.value(model.theta))
    xi = np.array([pyo.value(model.xi[i]) for i in model.X_c])
    objective = semi_infinite_objective(np.asarray(X, float), np.asarray(y), c, nu, alpha, p, eps, w, theta)
    return SemiInfiniteResult(
        "pyros", objective, w, theta, xi, int(res.iterations), 0.0, float(res.final_objective_value),
        seconds, message, termination=termination,
    )
