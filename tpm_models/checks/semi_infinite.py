"""The semi-infinite robust model (22) solved two independent ways: Theorem 1 checked numerically.

The models are :mod:`tpm_models.models.semi_infinite` (the scenario model of the cutting planes
and (22) with uncertain parameters for PyROS); this module solves them.

(a) **Cutting planes** (:func:`solve_22_cutting_plane`): each round solves the scenario QP
:func:`tpm_models.models.semi_infinite.build_scenarios_22`, asks the (25) oracle
(:func:`tpm_models.models.norms.worst_case_delta`) for the worst :math:`\\delta` of every point,
and adds it where it is violated by more than ``tol``. The returned objective is the
semi-infinite objective at the final point (an upper bound); the master's objective is a
lower bound; both are reported.

(b) **PyROS** (:func:`solve_22_pyros`): PyROS minimises the worst case of the objective of
:func:`tpm_models.models.semi_infinite.build_semi_infinite_22` over the Cartesian product of
the per-point sets.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo

from tpm_models.models.norms import check_p, dual_norm, worst_case_delta
from tpm_models.models.semi_infinite import (
    add_scenario,
    add_separation_order,
    build_scenarios_22,
    build_semi_infinite_22,
    semi_infinite_objective,
)
from tpm_models.solvers import ipopt as casadi_ipopt
from tpm_models.solvers.common import NoOptimalSolutionError, SolveResult, Termination
from tpm_models.solvers.dispatch import solve

log = logging.getLogger(__name__)


CUT_TOL = 1e-11
"""Largest worst-case violation accepted by the cutting planes (absolute; the data are
scaled to [0, 1]). At 1e-9, w of (22) for p=3 on Iris was 1e-6 (absolute) from Ipopt's and
SCIP's (26); at 1e-11 it is 1e-7, for 10 rounds instead of 7 (the masters are PIQP QPs at
1e-12)."""


MAX_ROUNDS = 500


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
    history: list[tuple[int, float, float]] = field(default_factory=list)
    termination: str = ""
    """PyROS's termination condition (``robust_optimal``, ``time_out``...); empty for the cutting planes."""


def solve_22_cutting_plane(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray,
    solver: str = "default", tol: float = CUT_TOL, max_rounds: int = MAX_ROUNDS,
) -> SemiInfiniteResult:
    """(22) by cutting planes with the (25) oracle (module docstring).

    Raises :class:`tpm_models.solvers.common.NoOptimalSolutionError` if a master QP fails, and
    ``RuntimeError`` if ``max_rounds`` pass with a violation above ``tol``.
    """
    start = time.perf_counter()
    p = check_p(p)
    model = build_scenarios_22(X, y, c, nu, alpha, p=p, eps=eps)
    Xs = np.asarray(X, dtype=float)
    history = []
    for rounds in range(1, max_rounds + 1):
        result: SolveResult = solve(model, solver)
        w, theta = result.values["w"], result.values["theta"]
        dn = dual_norm(w, p)
        worst = []
        for i in model.X_minus_c:
            value = Xs[i - 1] @ w + theta + pyo.value(model.eps[i]) * dn - pyo.value(model.eta[i])
            worst.append((value, i, 1.0))
        for i in model.X_c:
            value = -(Xs[i - 1] @ w + theta - pyo.value(model.eps[i]) * dn + pyo.value(model.xi[i]))
            worst.append((value, i, -1.0))
        violation = max(v for v, _, _ in worst)
        history.append((rounds, result.objective, violation))
        log.info("cutting plane round %d: master %.12g, worst violation %.3g", rounds, result.objective, violation)
        if violation <= tol:
            xi = result.values["xi"]
            objective = semi_infinite_objective(Xs, np.asarray(y), c, nu, alpha, p, eps, w, theta)
            return SemiInfiniteResult(
                "cutting-plane", objective, w, float(theta), xi, rounds, violation, result.objective,
                time.perf_counter() - start, f"{rounds} rounds, master solver {result.solver}", history,
            )
        for value, i, sign in worst:
            if value > tol:
                add_scenario(model, i, sign * worst_case_delta(w, p, pyo.value(model.eps[i])))
    raise RuntimeError(
        f"cutting planes for (22) did not reach a violation <= {tol:g} in {max_rounds} rounds "
        f"(last {history[-1][2]:.3g}); raise max_rounds or tol"
    )


PYROS_FEASIBILITY_TOL = 1e-8
"""PyROS's ``robust_feasibility_tolerance`` (default 1e-4): a separation violation below it
counts as robust. At 1e-4 PyROS stopped 1e-7 to 1e-5 above the optimum of (23) on a
24-point Iris subset; see docs/robust.md for the measured gaps."""


PYROS_SUBSOLVERS = {"local": ("gurobi_direct", "scip"), "global": ("gurobi_direct", "scip")}
"""Subsolvers tried in order when none is named. ``"tpm_ipopt"`` (:class:`tpm_models.solvers.ipopt.CasadiIpopt`,
always installed) is accepted by name: :func:`solve_22_pyros` below explains why it may
serve as PyROS's *global* solver on (22)."""


_NO_TIME_ADJUSTMENT = "Subproblem time limit setting not adjusted"


class _DropTimeAdjustmentWarning(logging.Filter):
    """PyROS adjusts the time limit of its subproblems only for the executables it knows
    (GAMS, BARON, Ipopt's ``.nl`` interface, SCIP's shell) and otherwise warns at every
    subproblem. Our subsolvers get the whole limit as their own (``_pyros_subsolver``) and
    PyROS checks its limit after every subproblem, so the warning carries nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_NO_TIME_ADJUSTMENT)


GUROBI_BACKUP_OPTIONS = {"NumericFocus": 3}
"""Gurobi's most careful numerics, for the Gurobi backup that :func:`solve_22_pyros` gives
PyROS beside a Gurobi subsolver. PyROS's masters are QCPs (the objective epigraph row is
quadratic). Measured (Gurobi 13.0.3, Iris class 0, the subsets of ``tpm-models check``):
after a solve by Xpress (``xpress_direct``) in the same process, Gurobi's default barrier
ended a master of p = 1 (21 points, iteration 3) and of p = 2 (24 points, iteration 2)
with status 13, SUBOPTIMAL, about 7e-9 from the optimum, and PyROS stopped with
``subsolver_error``; NumericFocus = 3 solved both masters (status 2), and so did
BarHomogeneous = 1. Without the Xpress solve the same masters are solved by the defaults."""


def _pyros_subsolver(kind: str, prefer: str | None, time_limit: float | None = None,
                     gurobi_options: dict | None = None, **kwds):
    """A Pyomo solver object PyROS can call: Gurobi (QP; pip licence; ``gurobi_options`` on
    top of ours), SCIP, or our Ipopt (``kwds`` go to :class:`tpm_models.solvers.ipopt.CasadiIpopt`)."""
    names = [prefer] if prefer else list(PYROS_SUBSOLVERS[kind])
    for name in names:
        if name == "tpm_ipopt":

            opt = pyo.SolverFactory(casadi_ipopt.PLUGIN_NAME, **kwds)
            if time_limit:
                opt.options["max_wall_time"] = float(time_limit)
            return opt
        if name == "scip":

            opt = pyo.SolverFactory("scip_direct")
            if opt.available(exception_flag=False):
                opt.options["display/verblevel"] = 0  # SCIP can block on the captured pipe
                opt.options["limits/gap"] = 0.0
                # SCIP's default feastol 1e-6 is 100 times PYROS_FEASIBILITY_TOL: separation could
                # miss violations PyROS must see. The tolerances of tpm_models.solvers' SCIP:
                opt.options.update({"numerics/feastol": 1e-9, "numerics/dualfeastol": 1e-9,
                                    "numerics/epsilon": 1e-11})
                if time_limit:
                    opt.options["limits/time"] = float(time_limit)
                return opt
        else:
            opt = pyo.SolverFactory(name)
            if opt.available(exception_flag=False):
                if name.startswith("gurobi"):
                    opt.options.update({
                        "OutputFlag": 0, "FeasibilityTol": 1e-9, "OptimalityTol": 1e-9,
                        "BarConvTol": 1e-10, "BarQCPConvTol": 1e-10, "MIPGap": 0.0,
                        **(gurobi_options or {}),
                    })
                return opt
    raise RuntimeError(f"no {kind} subsolver for PyROS among {names}; pip install gurobipy or pyscipopt, "
                       f"or name 'tpm_ipopt'")


def _counting(opt):
    """``opt`` with a ``solves`` count of its ``solve`` calls (as :class:`tpm_models.solvers.ipopt.CasadiIpopt`
    keeps one), so the result can say how often PyROS needed a backup."""
    solve = opt.solve
    opt.solves = 0

    def counted(*args, **kwds):
        opt.solves += 1
        return solve(*args, **kwds)

    opt.solve = counted
    return opt


def solve_22_pyros(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray,
    local_solver: str | None = None, global_solver: str | None = None, time_limit: float | None = None,
    raise_on_failure: bool = True, separation_order: bool | None = None,
) -> SemiInfiniteResult:
    """(22) by Pyomo's robust solver PyROS (module docstring): every variable first stage,
    worst-case objective, master problems solved globally. Raises
    :class:`tpm_models.solvers.common.NoOptimalSolutionError` unless PyROS reports ``robust_optimal``
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
    it certifies convex (:func:`tpm_models.solvers.ipopt.convexity`), else ``locallyOptimal``, which
    PyROS does not accept from a global solver. With Ipopt as both solvers, local separation
    would repeat the global one with the same solver, so it is bypassed
    (``bypass_local_separation``), and the separation problems are ordered and helped by a
    redundant row (:func:`add_separation_order`; ``separation_order`` defaults to it only
    with Ipopt: with Gurobi, the 18-point Iris subset at p = 2 then met a master Gurobi
    ended with status ``other``, iteration 6, where the unordered run is robust_optimal).

    Each Ipopt subsolver gets a cold-started Ipopt as PyROS backup: from iteration 1 on,
    PyROS starts every master at the solution of a feasibility problem (minimise the slacks
    of the new rows) whose solution set is unbounded, and Ipopt, an interior point, ends near
    its analytic centre, at ``|theta|, xi ~ 1e4``; from there Ipopt has diverged on the
    master (``Diverging_Iterates``, 24-point Iris subset, p = inf). The backup starts from
    :data:`tpm_models.solvers.ipopt.COLD_START`. A Gurobi subsolver gets a Gurobi backup with
    :data:`GUROBI_BACKUP_OPTIONS` (a master Gurobi ended SUBOPTIMAL). The result's message
    counts the backup solves. A backup that also fails still ends PyROS with
    ``subsolver_error``, which raises here.
    """
    from pyomo.contrib import pyros

    start = time.perf_counter()
    model = build_semi_infinite_22(X, y, c, nu, alpha, p=p, eps=eps)
    if separation_order is None:
        separation_order = local_solver == global_solver == "tpm_ipopt"
    if separation_order:
        add_separation_order(model, one_by_one=check_p(p) != 2.0)
    first_stage = list(model.w.values()) + [model.theta] + list(model.xi.values())
    progress = logging.getLogger("tpm_models.pyros")
    if not any(isinstance(f, _DropTimeAdjustmentWarning) for f in progress.filters):
        progress.addFilter(_DropTimeAdjustmentWarning())
    options = {
        "robust_feasibility_tolerance": PYROS_FEASIBILITY_TOL,
        "objective_focus": pyros.ObjectiveType.worst_case,
        "solve_master_globally": True,
        "progress_logger": progress,
    }
    if time_limit:
        options["time_limit"] = time_limit
    local = _pyros_subsolver("local", local_solver, time_limit)
    global_ = _pyros_subsolver("global", global_solver, time_limit)
    backups = []
    for kind, name, opt in (("local", local_solver, local), ("global", global_solver, global_)):
        if name == "tpm_ipopt":
            backups.append(_pyros_subsolver(kind, name, time_limit, warmstart=False))
        elif opt.name.startswith("gurobi"):
            backups.append(_counting(_pyros_subsolver(kind, opt.name, time_limit,
                                                      gurobi_options=GUROBI_BACKUP_OPTIONS)))
        else:
            continue
        options[f"backup_{kind}_solvers"] = [backups[-1]]
    if local_solver == global_solver == "tpm_ipopt":
        options["bypass_local_separation"] = True
    with contextlib.redirect_stdout(io.StringIO()):
        res = pyo.SolverFactory("pyros").solve(
            model, first_stage_variables=first_stage, second_stage_variables=[],
            uncertain_params=model.uncertain, uncertainty_set=model.uncertainty_set,
            local_solver=local, global_solver=global_, **options,
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
