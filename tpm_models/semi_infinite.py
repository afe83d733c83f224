"""The semi-infinite robust model (22)/(24), solved two independent ways.

(22):

.. math::
    \\min\\ \\tfrac12\\|w_c\\|_2^2 + \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}
    \\max_{\\|\\delta^i\\|_p\\le\\varepsilon_i}\\big[(x^i+\\delta^i)^\\top w_c + \\theta_c\\big]
    + \\frac{\\alpha_c}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i}
    \\quad\\text{s.t.}\\quad x^\\top w_c + \\theta_c \\ge -\\xi_{c,i}\\ \\ \\forall x\\in\\mathcal U_p(x^i),
    \\ i\\in\\mathcal X_c;\\quad \\xi_{c,i}\\ge0

(24) writes the constraint as :math:`\\min_{\\|\\delta^i\\|_p\\le\\varepsilon_i}(x^i+\\delta^i)^\\top w_c
+ \\theta_c \\ge -\\xi_{c,i}`: the same model.

(a) **Cutting planes** (:func:`solve_22_cutting_plane`): :func:`build_scenarios_22` is (22)
over finite scenario sets :math:`S_i \\ni \\delta`, with the inner maximum of the objective
as an epigraph variable ``eta[i]`` (``eta_i >= (x^i+delta)'w + theta`` for every
:math:`\\delta\\in S_i`). Each round solves this QP, asks the (25) oracle
(:func:`tpm_models.norms.worst_case_delta`) for the worst :math:`\\delta` of every point,
and adds it where it is violated by more than ``tol``. The returned objective is the
semi-infinite objective at the final point (an upper bound); the master's objective is a
lower bound; both are reported.

(b) **PyROS** (:func:`solve_22_pyros`): :func:`build_semi_infinite_22` is (22) itself
with :math:`\\delta^i` as uncertain parameters ``delta[i, j]``; PyROS minimises the
worst case of the objective over the Cartesian product of the per-point sets
(box for :math:`p=\\infty`, ball for :math:`p=2`, and for :math:`p=1` the cross-polytope
written as :math:`\\delta = d^+ - d^-`, :math:`(d^+, d^-)` in a budget set
:math:`\\{d\\ge0: \\sum d \\le \\varepsilon_i\\}`, whose image is exactly the
:math:`\\ell_1` ball). PyROS has no :math:`\\ell_p`-ball set for other :math:`p`, so
:func:`solve_22_pyros` refuses them (the cutting planes take every :math:`p`).
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

from tpm_models import _forms
from tpm_models.multiclass import _sets
from tpm_models.norms import check_p, check_radii, dual_norm, worst_case_delta
from tpm_models.solvers import NoOptimalSolutionError, SolveResult, Termination, solve

log = logging.getLogger(__name__)

CUT_TOL = 1e-11
"""Largest worst-case violation accepted by the cutting planes (absolute; the data are
scaled to [0, 1]). At 1e-9, w of (22) for p=3 on Iris was 1e-6 (absolute) from Ipopt's and
SCIP's (26); at 1e-11 it is 1e-7, for 10 rounds instead of 7 (the masters are PIQP QPs at
1e-12)."""

MAX_ROUNDS = 500


def _point_data(X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps):
    X, own, other, nu, alpha = _sets(X, y, c, nu, alpha)
    return X, own, other, nu, alpha, check_radii(eps, X.shape[0])


def build_scenarios_22(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray
) -> pyo.ConcreteModel:
    """(22) over finite scenario sets, starting from :math:`S_i = \\{0\\}` (module docstring).

    Rows: ``worst_other`` (:math:`\\eta_i \\ge (x^i+\\delta)^\\top w + \\theta`, :math:`i\\in\\mathcal X_{-c}`)
    and ``margin`` (:math:`(x^i+\\delta)^\\top w + \\theta + \\xi_i \\ge 0`, :math:`i\\in\\mathcal X_c`),
    one row per scenario; :func:`add_scenario` adds more.
    """
    p = check_p(p)
    X, own, other, nu, alpha, radii = _point_data(X, y, c, nu, alpha, eps)
    m = _forms.skeleton(f"(22) by scenarios, class {c}, p={p:g}", X, own, other, nu, alpha)
    m.p = pyo.Param(initialize=p, doc="p of the uncertainty set (21)")
    m.eps = pyo.Param(sorted(own[1] + other[1]), initialize={i: float(radii[i - 1]) for i in own[1] + other[1]})
    m.w = pyo.Var(m.J)
    m.theta = pyo.Var()
    m.xi = pyo.Var(m.X_c, domain=pyo.NonNegativeReals)
    m.eta = pyo.Var(m.X_minus_c, doc="eta_i = max over the scenarios of (x^i + delta)'w + theta")
    m.obj = pyo.Objective(
        expr=0.5 * sum(m.w[j] ** 2 for j in m.J)
        + m.nu / len(m.X_minus_c) * sum(m.eta[i] for i in m.X_minus_c)
        + m.alpha / len(m.X_c) * sum(m.xi[i] for i in m.X_c),
        sense=pyo.minimize,
    )
    m.worst_other = pyo.ConstraintList(doc="eta_i >= (x^i + delta)'w + theta")
    m.margin = pyo.ConstraintList(doc="(x^i + delta)'w + theta + xi_i >= 0")
    zero = np.zeros(X.shape[1])
    for i in m.X_minus_c:
        add_scenario(m, i, zero)
    for i in m.X_c:
        add_scenario(m, i, zero)
    return m


def add_scenario(m: pyo.ConcreteModel, i: int, delta: np.ndarray) -> None:
    """Add the rows of perturbation ``delta`` of point ``i``."""
    score = sum((m.x[i, j] + float(delta[j - 1])) * m.w[j] for j in m.J) + m.theta
    if i in m.X_c:
        m.margin.add(score + m.xi[i] >= 0)
    else:
        m.worst_other.add(m.eta[i] - score >= 0)


def semi_infinite_objective(X, y, c, nu, alpha, p, eps, w, theta) -> float:
    """The objective of (22) at :math:`(w,\\theta)` with the optimal :math:`\\xi`, the inner
    maxima by the closed form (25): :math:`\\max_\\delta \\delta^\\top w = \\varepsilon_i\\|w\\|_{p'}`."""
    radii = check_radii(eps, len(X))
    dn = dual_norm(w, p)
    own, other = y == c, y != c
    worst_other = X[other] @ w + theta + radii[other] * dn
    xi = np.maximum(0.0, -(X[own] @ w + theta - radii[own] * dn))
    return float(0.5 * w @ w + nu / other.sum() * worst_other.sum() + alpha / own.sum() * xi.sum())


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


def solve_22_cutting_plane(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray,
    solver: str = "default", tol: float = CUT_TOL, max_rounds: int = MAX_ROUNDS,
) -> SemiInfiniteResult:
    """(22) by cutting planes with the (25) oracle (module docstring).

    Raises :class:`tpm_models.solvers.NoOptimalSolutionError` if a master QP fails, and
    ``RuntimeError`` if ``max_rounds`` pass with a violation above ``tol``.
    """
    start = time.perf_counter()
    p = check_p(p)
    model = build_scenarios_22(X, y, c, nu, alpha, p, eps)
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


def build_semi_infinite_22(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray
) -> pyo.ConcreteModel:
    """(22) with :math:`\\delta^i` as uncertain parameters ``delta[i, j]`` (nominal value 0).

    Objective :math:`\\tfrac12\\|w\\|^2 + \\frac{\\nu}{m_{-c}}\\sum_{\\mathcal X_{-c}}((x^i+\\delta^i)^\\top w
    + \\theta) + \\frac{\\alpha}{m_c}\\sum\\xi_i` and rows ``margin[i]``
    :math:`(x^i+\\delta^i)^\\top w + \\theta + \\xi_i \\ge 0`; the maximum over :math:`\\delta` is
    PyROS's worst-case objective. ``model.uncertainty_set`` is the PyROS set of the
    perturbed points (those with :math:`\\varepsilon_i > 0`), ``model.uncertain`` its parameters.
    """
    from pyomo.contrib import pyros

    p = check_p(p)
    if p not in (1.0, 2.0, math.inf):
        raise ValueError(f"PyROS has no l_p-ball uncertainty set for p = {p:g}; use solve_22_cutting_plane")
    X, own, other, nu, alpha, radii = _point_data(X, y, c, nu, alpha, eps)
    m = _forms.skeleton(f"(22) semi-infinite, class {c}, p={p:g}", X, own, other, nu, alpha)
    n = X.shape[1]
    points = [i for i in sorted(own[1] + other[1]) if radii[i - 1] > 0]
    m.perturbed = pyo.Set(initialize=points, ordered=True, doc="points with eps_i > 0")
    if p == 1.0:  # delta = d_plus - d_minus, (d_plus, d_minus) >= 0 with sum <= eps_i
        m.d_plus = pyo.Param(m.perturbed, m.J, initialize=0.0, mutable=True)
        m.d_minus = pyo.Param(m.perturbed, m.J, initialize=0.0, mutable=True)

        def delta(i, j):
            return m.d_plus[i, j] - m.d_minus[i, j] if i in m.perturbed else 0.0

        sets = [pyros.BudgetSet(budget_membership_mat=[[1] * (2 * n)], rhs_vec=[radii[i - 1]]) for i in points]
        uncertain = [v for i in points for v in [m.d_plus[i, j] for j in m.J] + [m.d_minus[i, j] for j in m.J]]
    else:
        m.delta = pyo.Param(m.perturbed, m.J, initialize=0.0, mutable=True, doc="delta^i_j, uncertain")

        def delta(i, j):
            return m.delta[i, j] if i in m.perturbed else 0.0

        if p == 2.0:
            sets = [pyros.AxisAlignedEllipsoidalSet(center=[0.0] * n, half_lengths=[radii[i - 1]] * n)
                    for i in points]
        else:
            sets = [pyros.BoxSet(bounds=[[-radii[i - 1], radii[i - 1]]] * n) for i in points]
        uncertain = [m.delta[i, j] for i in points for j in m.J]
    m.w = pyo.Var(m.J)
    m.theta = pyo.Var()
    m.xi = pyo.Var(m.X_c, domain=pyo.NonNegativeReals)

    def score(i):
        return sum((m.x[i, j] + delta(i, j)) * m.w[j] for j in m.J) + m.theta

    m.obj = pyo.Objective(
        expr=0.5 * sum(m.w[j] ** 2 for j in m.J)
        + m.nu / len(m.X_minus_c) * sum(score(i) for i in m.X_minus_c)
        + m.alpha / len(m.X_c) * sum(m.xi[i] for i in m.X_c),
        sense=pyo.minimize,
    )
    m.margin = pyo.Constraint(m.X_c, rule=lambda m, i: score(i) + m.xi[i] >= 0)
    m.uncertainty_set = pyros.CartesianProductSet(sets) if len(sets) > 1 else sets[0]
    m.uncertain = uncertain
    return m


PYROS_FEASIBILITY_TOL = 1e-8
"""PyROS's ``robust_feasibility_tolerance`` (default 1e-4): a separation violation below it
counts as robust. At 1e-4 PyROS stopped 1e-7 to 1e-5 above the optimum of (23) on a
24-point Iris subset; see docs/robust.md for the measured gaps."""

PYROS_SUBSOLVERS = {"local": ("gurobi_direct", "scip"), "global": ("gurobi_direct", "scip")}


def _pyros_subsolver(kind: str, prefer: str | None):
    """A Pyomo solver object PyROS can call: Gurobi (QP; pip licence) or SCIP."""
    names = [prefer] if prefer else list(PYROS_SUBSOLVERS[kind])
    for name in names:
        if name == "scip":

            opt = pyo.SolverFactory("scip_direct")
            if opt.available(exception_flag=False):
                opt.options["display/verblevel"] = 0  # SCIP can block on the captured pipe
                opt.options["limits/gap"] = 0.0
                return opt
        else:
            opt = pyo.SolverFactory(name)
            if opt.available(exception_flag=False):
                if name.startswith("gurobi"):
                    opt.options.update({
                        "OutputFlag": 0, "FeasibilityTol": 1e-9, "OptimalityTol": 1e-9,
                        "BarConvTol": 1e-10, "BarQCPConvTol": 1e-10, "MIPGap": 0.0,
                    })
                return opt
    raise RuntimeError(f"no {kind} subsolver for PyROS among {names}; pip install gurobipy or pyscipopt")


def solve_22_pyros(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray,
    local_solver: str | None = None, global_solver: str | None = None, time_limit: float | None = None,
) -> SemiInfiniteResult:
    """(22) by Pyomo's robust solver PyROS (module docstring): every variable first stage,
    worst-case objective, master problems solved globally. Raises
    :class:`tpm_models.solvers.NoOptimalSolutionError` unless PyROS reports ``robust_optimal``."""
    from pyomo.contrib import pyros

    start = time.perf_counter()
    model = build_semi_infinite_22(X, y, c, nu, alpha, p, eps)
    first_stage = list(model.w.values()) + [model.theta] + list(model.xi.values())
    options = {
        "robust_feasibility_tolerance": PYROS_FEASIBILITY_TOL,
        "objective_focus": pyros.ObjectiveType.worst_case,
        "solve_master_globally": True,
        "progress_logger": logging.getLogger("tpm_models.pyros"),
    }
    if time_limit:
        options["time_limit"] = time_limit
    with contextlib.redirect_stdout(io.StringIO()):
        res = pyo.SolverFactory("pyros").solve(
            model, first_stage_variables=first_stage, second_stage_variables=[],
            uncertain_params=model.uncertain, uncertainty_set=model.uncertainty_set,
            local_solver=_pyros_subsolver("local", local_solver),
            global_solver=_pyros_subsolver("global", global_solver), **options,
        )
    seconds = time.perf_counter() - start
    if res.pyros_termination_condition != pyros.pyrosTerminationCondition.robust_optimal:
        raise NoOptimalSolutionError(SolveResult(
            solver="pyros", solver_version=pyros.pyros.__version__, termination=Termination.ERROR,
            objective=None, seconds=seconds, message=str(res.pyros_termination_condition),
        ))
    w = np.array([pyo.value(model.w[j]) for j in model.J])
    theta = float(pyo.value(model.theta))
    xi = np.array([pyo.value(model.xi[i]) for i in model.X_c])
    objective = semi_infinite_objective(np.asarray(X, float), np.asarray(y), c, nu, alpha, p, eps, w, theta)
    return SemiInfiniteResult(
        "pyros", objective, w, theta, xi, int(res.iterations), 0.0, float(res.final_objective_value),
        seconds, f"{res.pyros_termination_condition}, {res.iterations} iterations",
    )
