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

(a) **Cutting planes** (:func:`solve_22_cutting_plane`): the generic verifier's route
(:func:`tpm_models.verify.solve_cutting_planes`) on the nominal model (15) with the uncertain data
:func:`uncertain_22`; it solves the same masters as the scenario model kept here for reference.
:func:`build_scenarios_22` is (22)
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
from tpm_models.multiclass import _sets, build_primal_15
from tpm_models.norms import check_p, check_radii, dual_norm
from tpm_models.solvers import NoOptimalSolutionError, SolveResult, Termination
from tpm_models.verify import (  # the tolerances and PyROS settings live in tpm_models.verify; kept importable here
    CUT_TOL,
    GUROBI_BACKUP_OPTIONS,  # noqa: F401
    MAX_ROUNDS,
    PYROS_FEASIBILITY_TOL,  # noqa: F401
    PYROS_SUBSOLVERS,  # noqa: F401
    NormBall,
    Uncertain,
    UncertainRow,
    UncertainTerm,
    pyros_options,
    solve_cutting_planes,
)
from tpm_models.verify import pyros_subsolver as _pyros_subsolver  # solve_22_pyros's (tests patch it here)

log = logging.getLogger(__name__)



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
    termination: str = ""
    """PyROS's termination condition (``robust_optimal``, ``time_out``...); empty for the cutting planes."""


def uncertain_22(model: pyo.ConcreteModel, p: float, eps: float | np.ndarray) -> list[Uncertain]:
    """The uncertain data of (22) on the nominal model (15) (:func:`tpm_models.multiclass.build_primal_15`,
    the same data and classes), for :func:`tpm_models.verify.verify`: every point :math:`x^i` moves to
    :math:`x^i+\\delta^i` with :math:`\\|\\delta^i\\|_p\\le\\varepsilon_i` (21).

    * a row ``margin[i]`` (:math:`i\\in\\mathcal X_c`): :math:`(x^i+\\delta^i)^\\top w + \\theta + \\xi_i \\ge 0`,
      coefficients :math:`w` (:class:`~tpm_models.verify.UncertainRow`);
    * a term per :math:`i\\in\\mathcal X_{-c}`: :math:`\\frac{\\nu}{m_{-c}}\\max_{\\delta^i}(x^i+\\delta^i)^\\top w`,
      coefficients :math:`w`, weight :math:`\\nu/m_{-c}` (:class:`~tpm_models.verify.UncertainTerm`).

    ``eps``: a scalar or one radius per point of the data (numbered 1..m as the model's points)."""
    points = sorted(set(model.X_c) | set(model.X_minus_c))
    radii = check_radii(eps, len(points))
    w = [model.w[j] for j in model.J]
    weight = pyo.value(model.nu) / len(model.X_minus_c)
    out: list[Uncertain] = [UncertainRow(model.margin[i], w, NormBall(p, float(radii[i - 1])), f"margin[{i}]")
                            for i in model.X_c]
    out += [UncertainTerm(w, NormBall(p, float(radii[i - 1])), weight, f"objective, point {i}")
            for i in model.X_minus_c]
    return out


def solve_22_cutting_plane(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray,
    solver: str = "default", tol: float = CUT_TOL, max_rounds: int = MAX_ROUNDS,
) -> SemiInfiniteResult:
    """(22) by cutting planes with the (25) oracle (module docstring), through the generic verifier's
    route (a): :func:`tpm_models.verify.solve_cutting_planes` on (15) with :func:`uncertain_22`.

    Raises :class:`tpm_models.solvers.NoOptimalSolutionError` if a master QP fails, and
    ``RuntimeError`` if ``max_rounds`` pass with a violation above ``tol``.
    """
    p = check_p(p)
    model = build_primal_15(X, y, c, nu, alpha)
    sol = solve_cutting_planes(model, uncertain_22(model, p, eps), solver, tol, max_rounds)
    return SemiInfiniteResult(
        "cutting-plane", sol.objective, np.asarray(sol.values["w"]), float(sol.values["theta"]),
        np.asarray(sol.values["xi"]), sol.rounds, sol.history[-1][2], sol.lower_bound, sol.seconds, sol.message,
        sol.history,
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


def add_separation_order(m: pyo.ConcreteModel, one_by_one: bool) -> None:
    """Order PyROS's separation problems (Suffix ``pyros_separation_priority``) and add
    ``margin_sum``, the sum of the rows ``margin[i]`` (implied by them: the robust model is
    unchanged).

    PyROS separates its rows by priority groups, highest first, stops at the first group
    with a violation, and adds one uncertain-parameter realization per iteration: of the
    group's violated rows, the realization whose sum of violations over the group is
    largest. The worst :math:`\\delta^i` of ``margin[i]`` leaves every other
    :math:`\\delta^j` where the separation solver put it, so (22) takes about one iteration
    per tight row of :math:`\\mathcal X_c` (more for p = 2, whose worst cases move with w).
    Here:

    * ``margin_sum`` (priority 1) first: its worst case is the worst case of every
      ``margin[i]`` at once (each :math:`\\delta^i` minimises :math:`\\delta^{i\\top} w`), the cut
      of :func:`solve_22_cutting_plane`. Violated only while the violations outweigh the
      slack of the other rows (Iris, class 0, p = inf: 3 iterations instead of 17; Wine,
      class 0, p = 1: never).
    * the objective's epigraph row (PyROS's ``epigraph_con``, priority 0): one problem, the
      worst case of every point of :math:`\\mathcal X_{-c}`.
    * the rows ``margin[i]``: with ``one_by_one`` each alone (priorities -1, -2, ...), so an
      iteration stops at the first violated row (Wine, class 0, p = 1: the same 21
      iterations in 421 s instead of 782 s); else together (priority -1). For p = 2 one by
      one is much worse: Iris, class 0, 105 iterations in 872 s against 20 in 71 s together
      (the realizations found together violate several rows at once: Ipopt starts each
      separation problem where the previous one ended).

    The last iteration still separates every row (PyROS's ``robust_optimal`` needs all
    groups free of violations)."""
    m.margin_sum = pyo.Constraint(expr=sum(m.margin[i].body for i in m.X_c) >= 0,
                                  doc="sum of the margin rows (redundant; a separation aid)")
    m.pyros_separation_priority = pyo.Suffix(direction=pyo.Suffix.LOCAL)
    m.pyros_separation_priority[m.margin_sum] = 1
    for k, i in enumerate(m.X_c, start=1):
        m.pyros_separation_priority[m.margin[i]] = -k if one_by_one else -1


def solve_22_pyros(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray,
    local_solver: str | None = None, global_solver: str | None = None, time_limit: float | None = None,
    raise_on_failure: bool = True, separation_order: bool | None = None,
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
    it certifies convex (:func:`tpm_models.ipopt.convexity`), else ``locallyOptimal``, which
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
    :data:`tpm_models.ipopt.COLD_START`. A Gurobi subsolver gets a Gurobi backup with
    :data:`GUROBI_BACKUP_OPTIONS` (a master Gurobi ended SUBOPTIMAL). The result's message
    counts the backup solves. A backup that also fails still ends PyROS with
    ``subsolver_error``, which raises here.
    """
    from pyomo.contrib import pyros

    start = time.perf_counter()
    model = build_semi_infinite_22(X, y, c, nu, alpha, p, eps)
    if separation_order is None:
        separation_order = local_solver == global_solver == "tpm_ipopt"
    if separation_order:
        add_separation_order(model, one_by_one=check_p(p) != 2.0)
    first_stage = list(model.w.values()) + [model.theta] + list(model.xi.values())
    # the subsolvers are looked up here at call time (tests patch _pyros_subsolver)
    options, backups = pyros_options(local_solver, global_solver, time_limit, subsolver=_pyros_subsolver)
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
