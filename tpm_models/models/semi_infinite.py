"""The semi-infinite robust model (22)/(24), solved two independent ways.

(22):

.. math::
    \\begin{aligned}
    \\min\\ & \\tfrac12\\|w_c\\|_2^2 + \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}
    \\max_{\\|\\delta^i\\|_p\\le\\varepsilon_i}\\big[(x^i+\\delta^i)^\\top w_c + \\theta_c\\big]
    + \\frac{\\alpha_c}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i} \\\\
    \\text{s.t.}\\ & x^\\top w_c + \\theta_c \\ge -\\xi_{c,i}\\ \\ \\forall x\\in\\mathcal U_p(x^i),
    \\ i\\in\\mathcal X_c;\\quad \\xi_{c,i}\\ge0
    \\end{aligned}

(24) writes the constraint as :math:`\\min_{\\|\\delta^i\\|_p\\le\\varepsilon_i}(x^i+\\delta^i)^\\top w_c
+ \\theta_c \\ge -\\xi_{c,i}`: the same model.

(a) **Cutting planes** (:func:`solve_22_cutting_plane`): :func:`build_scenarios_22` is (22)
over finite scenario sets :math:`S_i \\ni \\delta`, with the inner maximum of the objective
as an epigraph variable ``eta[i]`` (``eta_i >= (x^i+delta)'w + theta`` for every
:math:`\\delta\\in S_i`). Each round solves this QP, asks the (25) oracle
(:func:`tpm_models.models.norms.worst_case_delta`) for the worst :math:`\\delta` of every point,
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

import logging
import math

import numpy as np
import pyomo.core as pyo

from tpm_models.models import shapes
from tpm_models.models.multiclass import class_sets
from tpm_models.models.norms import check_p, check_radii, dual_norm
from tpm_models.models.registry import register_model
from tpm_models.models.uncertainty import NormBall, Uncertain, UncertainRow, UncertainTerm

log = logging.getLogger(__name__)


def _point_data(X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps: float | np.ndarray
                ) -> tuple:
    X, own, other, nu, alpha = class_sets(X, y, c, nu, alpha)
    return X, own, other, nu, alpha, check_radii(eps, X.shape[0])


def build_scenarios_22(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float, eps: float | np.ndarray
) -> pyo.ConcreteModel:
    """(22) over finite scenario sets, starting from :math:`S_i = \\{0\\}` (module docstring).

    Rows: ``worst_other`` (:math:`\\eta_i \\ge (x^i+\\delta)^\\top w + \\theta`, :math:`i\\in\\mathcal X_{-c}`)
    and ``margin`` (:math:`(x^i+\\delta)^\\top w + \\theta + \\xi_i \\ge 0`, :math:`i\\in\\mathcal X_c`),
    one row per scenario; :func:`add_scenario` adds more.
    """
    p = check_p(p)
    X, own, other, nu, alpha, radii = _point_data(X, y, c, nu, alpha, eps)
    m = shapes.skeleton(f"(22) by scenarios, class {c}, p={p:g}", X, own, other, nu, alpha)
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


def semi_infinite_objective(X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float,
                            eps: float | np.ndarray, w: np.ndarray, theta: float) -> float:
    """The objective of (22) at :math:`(w,\\theta)` with the optimal :math:`\\xi`, the inner
    maxima by the closed form (25): :math:`\\max_\\delta \\delta^\\top w = \\varepsilon_i\\|w\\|_{p'}`."""
    radii = check_radii(eps, len(X))
    dn = dual_norm(w, p)
    own, other = y == c, y != c
    worst_other = X[other] @ w + theta + radii[other] * dn
    xi = np.maximum(0.0, -(X[own] @ w + theta - radii[own] * dn))
    return float(0.5 * w @ w + nu / other.sum() * worst_other.sum() + alpha / own.sum() * xi.sum())


@register_model(22, family="multiclass", model_class="semi-infinite",
                summary="semi-infinite robust model (delta as PyROS uncertain parameters)", robust_p=(1, 2, math.inf),
                group="paper")
def build_semi_infinite_22(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float, eps: float | np.ndarray
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
    m = shapes.skeleton(f"(22) semi-infinite, class {c}, p={p:g}", X, own, other, nu, alpha)
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


@shapes.paused_gc
def uncertain_22(model: pyo.ConcreteModel, p: float, eps: float | np.ndarray) -> list[Uncertain]:
    """The uncertain data of (22) on the nominal model (15) (:func:`tpm_models.models.multiclass.build_primal_15`,
    the same data and classes), for :func:`tpm_models.checks.verify.verify` and
    :func:`tpm_models.models.counterpart.robust_counterpart`: every point :math:`x^i` moves to
    :math:`x^i+\\delta^i` with :math:`\\|\\delta^i\\|_p\\le\\varepsilon_i` (21).

    * a row ``margin[i]`` (:math:`i\\in\\mathcal X_c`): :math:`(x^i+\\delta^i)^\\top w + \\theta + \\xi_i \\ge 0`,
      coefficients :math:`w` (:class:`~tpm_models.models.uncertainty.UncertainRow`);
    * a term per :math:`i\\in\\mathcal X_{-c}`: :math:`\\frac{\\nu}{m_{-c}}\\max_{\\delta^i}(x^i+\\delta^i)^\\top w`,
      coefficients :math:`w`, weight :math:`\\nu/m_{-c}` (:class:`~tpm_models.models.uncertainty.UncertainTerm`).

    ``eps``: a scalar or one radius per point of the data (numbered 1..m as the model's points)."""
    points = sorted(set(model.X_c) | set(model.X_minus_c))
    radii = check_radii(eps, len(points))
    w = [model.w[j] for j in model.J]
    weight = pyo.value(model.nu) / len(model.X_minus_c)
    balls = {r: NormBall(p, r) for r in set(radii.tolist())}  # one set per radius: 10^5 points share a few
    out: list[Uncertain] = [UncertainRow(model.margin[i], w, balls[radii[i - 1]], f"margin[{i}]")
                            for i in model.X_c]
    out += [UncertainTerm(w, balls[radii[i - 1]], weight, f"objective, point {i}") for i in model.X_minus_c]
    return out
