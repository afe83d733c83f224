"""Robust one-versus-all TPMSVM, Section 4: builders (22)/(24), (23), (26), (27), (28), (29).

Every builder takes ``X`` (points as rows), labels ``y``, the class ``c``,
:math:`\\nu, \\alpha`, the norm :math:`p\\in[1,\\infty]` of the uncertainty set (21) and the
radii ``eps`` (a scalar, or one :math:`\\varepsilon_i` per point). :math:`p'` is the
Hölder conjugate (:func:`tpm_models.models.norms.conjugate`).

==========================  =============================  ===================================
paper                        Pyomo component                note
==========================  =============================  ===================================
:math:`w_c,\\theta_c,\\xi_c`    ``w[j]``, ``theta``, ``xi[i]``  ``xi >= 0`` a bound
:math:`\\varepsilon_i`         ``eps[i]``                     mutable parameter
:math:`t_c, u_c, v_c`         ``t``, ``u``, ``v``             ``t, u >= 0`` bounds (errata 8)
:math:`s_c`                   ``s`` (27), ``s[j]`` (29)
row 1 (margin)               ``margin[i]``                  constant on the right
:math:`t_c\\ge\\|w_c\\|_2`       ``cone_t``                     ``sum_j w_j^2 <= t^2``
:math:`u_c+v_c=1`             ``u_plus_v``
:math:`u_c\\ge\\sqrt{t_c^2+v_c^2}`  ``cone_u``                   ``t^2 + v^2 <= u^2``
:math:`s_c \\ge \\pm w_{c,j}`     ``s_ge_w[j]``, ``s_ge_minus_w[j]``
==========================  =============================  ===================================

The second-order cones are written :math:`\\sum_k x_k^2 \\le y^2` with :math:`y \\ge 0`, the
form Gurobi, CPLEX, Xpress and SCIP recognise as a cone; for :math:`y\\ge0` it is the
printed :math:`y \\ge \\sqrt{\\sum_k x_k^2}`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr.numeric_expr import (
    LinearExpression,
    MonomialTermExpression,
    NegationExpression,
    NPV_NegationExpression,
    NPV_SumExpression,
    ProductExpression,
    SumExpression,
)
from pyomo.core.expr.relational_expr import InequalityExpression

from tpm_models.models import shapes
from tpm_models.models.array_params import ArrayParam
from tpm_models.models.lazy_rows import LazyRows, position
from tpm_models.models.multiclass import class_sets
from tpm_models.models.norms import add_pnorm_epigraph, check_p, check_radii, conjugate
from tpm_models.models.registry import register_model
from tpm_models.models.semi_infinite import uncertain_22


@dataclass(frozen=True)
class RobustData:
    """The numbers the rows of (23)-(29) are written from: the points (row ``i - 1`` is :math:`x^i`), the radii
    :math:`\\varepsilon_i` (21), the rows of the points of :math:`\\mathcal X_c` and :math:`\\mathcal X_{-c}` (``i - 1``
    for point ``i``, in the sets' order), and the model's parameters ``eps[i]`` at ``i - 1`` (read once)."""

    points: np.ndarray
    radii: np.ndarray
    own: np.ndarray
    other: np.ndarray
    eps: list


def _robust_skeleton(title: str, X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float,
                     eps: float | np.ndarray) -> tuple[pyo.ConcreteModel, float, RobustData]:
    p = check_p(p)
    X, own, other, nu, alpha = class_sets(X, y, c, nu, alpha)
    radii = check_radii(eps, X.shape[0])
    m = shapes.skeleton(f"{title}, class {c}, p={p:g}", X, own, other, nu, alpha, data_name=None)
    m.p = pyo.Param(initialize=p, doc="p of the uncertainty set (21)")
    # every point 1..m (X_c and X_-c split them): a RangeSet, which stores no members. A list of the sets' own ints
    # (no new int objects) made an ordered Set of 10^6 members, 50 MB (25 more than the RangeSet's new ints): the
    # peak of (28)'s solve at 10^6 points was 12 MB higher (docs/notes/bench-scale-history.md, "the rows made on
    # demand")
    used = pyo.RangeSet(X.shape[0])
    # a parameter, not a number: a row holds eps_i * |w| whatever eps_i is, so the model's class (and
    # the solvers that may take it) do not change at eps = 0 (tpm_models.solvers.model_class)
    # one mutable ParamData per point is most of the build at 10^6 points: made in one pass (ArrayParam; the radii
    # checked by check_radii), not by Pyomo's per-index path
    m.eps = ArrayParam(used, radii, doc="eps[i] >= 0: radius of U_p(x^i) (21)")
    m.w = pyo.Var(m.J, doc="w_c")
    m.theta = pyo.Var(doc="theta_c")
    m.xi = pyo.Var(m.X_c, domain=pyo.NonNegativeReals, doc="xi_c,i >= 0")
    # the parameters eps[i] at i - 1 (eps is indexed by every point, 1..m in order), read once for the objective and
    # the rows
    return m, p, RobustData(X, np.asarray(radii, dtype=float), np.asarray(own[1], dtype=int) - 1,
                            np.asarray(other[1], dtype=int) - 1, list(m.eps.values()))


def _robust_objective(m: pyo.ConcreteModel, data: RobustData, quadratic: Any, norm: Any) -> pyo.Objective:
    """quadratic + nu/m_-c sum_{X_-c} (x_i'w + eps_i * norm) + nu theta + alpha/m_c sum xi.

    The sum over :math:`\\mathcal X_{-c}` is written from column sums, the same term:

    .. math::
        \\frac{\\nu}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}\\big({x^i}^\\top w + \\varepsilon_i\\|w\\|_{p'}\\big)
        \\\\ = \\frac{\\nu}{m_{-c}}\\Big((X_{-c}e)^\\top w
        + \\big(\\textstyle\\sum_{i\\in\\mathcal X_{-c}}\\varepsilon_i\\big)\\|w\\|_{p'}\\Big).

    So for every norm, the :math:`\\sqrt{\\cdot}` of (23) at :math:`p=2` included: written point by point it was
    :math:`m_{-c}` copies of the norm (0.5 s and 226 MB to build at :math:`10^5` points, and as long again to read in
    the solve); from column sums it is one.
    """
    other = data.other
    w = [m.w[j] for j in m.J]
    # sum_i eps_i in the order of X_-c, as the rows were summed, as one flat sum of the parameters: Python's
    # sum() made a chain of m_-c two-term sums (750,000 nodes at 10^6 points), the same value in the same order
    eps_terms = [data.eps[i] for i in other.tolist()]
    eps_sum = NPV_SumExpression(eps_terms) if len(eps_terms) > 1 else eps_terms[0]
    other_term = shapes.linear_row(data.points[other].sum(axis=0), w) + eps_sum * norm
    return pyo.Objective(
        expr=quadratic
        + m.nu / len(m.X_minus_c) * other_term
        + m.nu * m.theta
        + m.alpha / len(m.X_c) * shapes.linear_row([1] * len(m.X_c), list(m.xi.values())),
        sense=pyo.minimize,
    )


class RobustMarginRow:
    """The row maker (:class:`tpm_models.models.lazy_rows.LazyRows`) of (23)-(29)'s margin rows: row ``i`` is
    :math:`\\sum_j p_{kj} w_j + \\theta - \\varepsilon_i\\|w\\|_{p'} + \\xi_i \\ge 0`, ``p_k`` =
    ``points[k]`` (the model's own, :func:`tpm_models.models.shapes.margin_coefficients`' first columns), ``i =
    numbers[k]`` the point's number, ``eps[k]`` the row's mutable parameter, ``norm`` the model's norm (a variable, a
    named expression or a sum of variables), written as :func:`_robust_margin` says."""

    def __init__(self, numbers: np.ndarray, points: np.ndarray, w: list, theta: pyo.Var, eps: list, norm: Any,
                 xi: list) -> None:
        self.numbers, self.points, self.w, self.theta, self.eps, self.norm, self.xi = \
            numbers, points, w, theta, eps, norm, xi

    def __call__(self, i: int) -> InequalityExpression:
        k = position(self.numbers, i)
        terms, theta, norm, e = shapes.linear_terms(self.points[k], self.w), self.theta, self.norm, self.eps[k]
        if norm.is_variable_type():
            return InequalityExpression((0, LinearExpression(
                terms + [theta, MonomialTermExpression((NPV_NegationExpression((e,)), norm)), self.xi[k]])), False)
        return InequalityExpression((0, SumExpression(
            [LinearExpression(terms + [theta]), NegationExpression((ProductExpression((e, norm)),)), self.xi[k]])),
            False)


def _robust_margin(m: pyo.ConcreteModel, data: RobustData, norm: Any) -> None:
    """Rows ``margin[i]``: :math:`{x^i}^\\top w + \\theta - \\varepsilon_i\\|w\\|_{p'} + \\xi_i \\ge 0`.

    Each row is the expression Pyomo's operators make of ``linear_row([*x_i, 1], [*w, theta]) - eps[i] * norm +
    xi[i] >= 0`` (the same nodes, in the same order), made by :class:`RobustMarginRow` without the operators'
    dispatch when the row is first read (:mod:`tpm_models.models.lazy_rows`):

    * the norm a variable (``s``, ``t``, ``r``, ``norm_w``): one ``LinearExpression`` of the terms of ``x_i``
      (:func:`tpm_models.models.shapes.linear_terms`), ``theta``, :math:`-\\varepsilon_i` (the negation of the
      parameter) times the norm, and ``xi[i]``;
    * otherwise (a named expression, ``norm_w`` of (23) at :math:`p \\in \\{2, \\infty\\}`, or the sum of
      ``s[j]`` of (29)): the sum of that ``LinearExpression`` of ``x_i`` and ``theta``, the negation of
      :math:`\\varepsilon_i` times the norm, and ``xi[i]``.

    ``tests/models/test_builders.py`` compares both to the operators' expressions. The rows are recorded
    (:func:`tpm_models.models.shapes.record_margin`: the norm a variable, a sum of variables, or a named expression,
    read as one node beside the linear terms when it is not linear): a solver reads them in one numpy pass."""
    w, theta = [m.w[j] for j in m.J], m.theta
    own = data.own
    eps = [data.eps[i] for i in own.tolist()]
    xi = list(m.xi.values())  # xi is indexed by X_c: its values in the rows' order
    named = [norm] if norm.is_named_expression_type() else []
    terms = norm.expr if named else norm
    atom = None
    if norm.is_variable_type():
        norm_vars = [norm]
    elif terms.__class__ is LinearExpression and all(hasattr(a, "is_variable_type") and a.is_variable_type()
                                                     for a in terms.args):
        norm_vars = list(terms.args)
    elif named:  # (23) at p = 2: the rows hold -eps_i * norm_w, norm_w = sqrt(...) an atom beside the linear terms
        norm_vars, atom = [], norm
    else:
        norm_vars = None  # not recorded: the rows are read by walking them
    coefs = shapes.margin_coefficients(data.points, own, len(norm_vars or ()), 1.0)
    doc = "x_i'w + theta - eps_i*|w|_p' >= -xi_i, stored with the constant on the right"
    m.margin = LazyRows(m.X_c, RobustMarginRow(own + 1, coefs[:, :len(w)], w, theta, eps, norm, xi), doc=doc)
    if norm_vars is not None:
        shapes.record_margin(m.margin, coefs, w, theta, xi, 1.0, norm=norm_vars, eps=eps, named=named, atom=atom)


def _cones(m: pyo.ConcreteModel) -> None:
    """t >= |w|_2, u + v = 1, u >= sqrt(t^2 + v^2) of (26)-(29)."""
    m.t = pyo.Var(domain=pyo.NonNegativeReals, doc="t_c >= |w_c|_2")
    m.u = pyo.Var(domain=pyo.NonNegativeReals, doc="u_c >= 0 (implied by the cone; errata 8)")
    m.v = pyo.Var(doc="v_c")
    m.cone_t = pyo.Constraint(expr=sum(m.w[j] ** 2 for j in m.J) <= m.t**2, doc="t >= |w|_2")
    m.u_plus_v = pyo.Constraint(expr=m.u + m.v == 1, doc="u + v = 1")
    m.cone_u = pyo.Constraint(expr=m.t**2 + m.v**2 <= m.u**2, doc="u >= sqrt(t^2 + v^2)")


def _abs_w(m: pyo.ConcreteModel) -> None:
    """Variables ``abs_w[j] >= 0`` with rows ``abs_ge_w[j]``, ``abs_ge_minus_w[j]``: abs_w_j >= |w_j|."""
    m.abs_w = pyo.Var(m.J, domain=pyo.NonNegativeReals, doc="abs_w[j] >= |w_j|")
    m.abs_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.abs_w[j] - m.w[j] >= 0)
    m.abs_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.abs_w[j] + m.w[j] >= 0)


def pnorm_epigraph(m: pyo.ConcreteModel, a: pyo.Var, r: pyo.Var, q: float) -> pyo.Constraint:
    """:math:`r \\ge \\|a\\|_q` for :math:`a \\ge 0` and finite :math:`q \\notin \\{1, 2\\}`, as convex rows.

    Variables ``z[j] >= 0`` and rows ``perspective[j]``: :math:`a_j^q\\,r^{1-q} \\le z_j` (the
    perspective of :math:`a^q`, jointly convex for :math:`r > 0`), and the returned row
    :math:`\\sum_j z_j \\le r`; together :math:`\\sum_j a_j^q \\le r^q`. Every row is a convex
    function :math:`\\le 0`, so a local NLP solver's KKT point is the optimum. Written as
    :math:`\\sum_j a_j^q \\le r^q` (a convex set, but :math:`-r^q` is concave) Ipopt reported
    "optimal" at a point 3.0 (relative) above the optimum on Wine at :math:`p=1.2`; written as
    :math:`(\\sum_j a_j^q)^{1/q} \\le r`, SCIP did not prove optimality in 60 s. The rows are
    undefined at :math:`r = 0`: Ipopt starts at 0.01, and :math:`r > 0` whenever :math:`w \\ne 0`.
    """
    return add_pnorm_epigraph(m, a, r, q, m.J)


@register_model(23, family="multiclass", model_class="NLP", summary="robust counterpart (Theorem 1)", robust_p=(),
                group="paper", nominal=15, uncertain=uncertain_22, compare=("w",))
@shapes.paused_gc
def build_robust_23(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float, eps: float | np.ndarray
) -> pyo.ConcreteModel:
    """(23) Robust counterpart (Theorem 1), for any :math:`p\\in[1,\\infty]`.

    .. math::
        \\min\\ \\tfrac12\\|w_c\\|_2^2 + \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}
        \\big({x^i}^\\top w_c + \\varepsilon_i\\|w_c\\|_{p'}\\big) + \\nu_c\\theta_c
        + \\frac{\\alpha_c}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i}
        \\quad\\text{s.t.}\\quad {x^i}^\\top w_c + \\theta_c - \\varepsilon_i\\|w_c\\|_{p'} \\ge -\\xi_{c,i},
        \\ \\xi_{c,i}\\ge0

    :math:`\\|w_c\\|_{p'}` is ``norm_w``, written so that the model stays as smooth as the
    norm allows:

    * :math:`p'=2` (:math:`p=2`): the expression ``sqrt(sum_j w_j^2)``;
    * :math:`p'=\\infty` (:math:`p=1`): a variable ``norm_w`` with ``norm_w >= w_j`` and
      ``norm_w >= -w_j`` (a maximum has no Pyomo expression; at the optimum
      ``norm_w`` :math:`=\\max_j|w_j|`);
    * :math:`p'=1` (:math:`p=\\infty`): the expression ``sum_j abs_w[j]`` with variables
      ``abs_w[j] >= w_j``, ``abs_w[j] >= -w_j`` (at the optimum ``abs_w[j]`` :math:`=|w_j|`:
      its coefficients :math:`\\nu\\varepsilon_i/m_{-c}` and :math:`-\\varepsilon_i` push it down);
    * otherwise a variable ``norm_w`` with ``abs_w[j] >= w_j``, ``abs_w[j] >= -w_j`` and
      ``norm_ge_abs_w``: ``norm_w`` :math:`\\ge\\|` ``abs_w`` :math:`\\|_{p'}` written as convex rows
      (:func:`pnorm_epigraph`: ``z[j]``, ``perspective[j]``). At the optimum ``norm_w``
      :math:`=\\|w\\|_{p'}`. Written as the expression :math:`(\\sum_j (w_j^2)^{p'/2})^{1/p'}`, SCIP
      did not recognise it as convex and stopped at its 120 s limit at a 5e-4 gap on every Wine
      class (p = 1.5, 3).

    So (23) is a QP for :math:`p\\in\\{1,\\infty\\}` (any QP solver) and an NLP otherwise; Ipopt and
    SCIP solve it on Iris and Wine for every class (docs/robust.md). Written as
    :math:`\\sum_j\\sqrt{w_j^2}`, the :math:`p=\\infty` norm was nondifferentiable at an optimal
    :math:`w_j=0` and stopped Ipopt at its iteration limit. (26) differs from (23) only in the
    conic epigraph of :math:`\\tfrac12\\|w\\|^2`; (27)-(29) are Corollary 1 as printed.
    """
    m, p, data = _robust_skeleton("(23) robust counterpart", X, y, c, nu, alpha, p, eps)
    q = conjugate(p)
    if math.isinf(q):
        m.norm_w = pyo.Var(domain=pyo.NonNegativeReals, doc="|w|_inf = max_j |w_j|")
        m.norm_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.norm_w - m.w[j] >= 0)
        m.norm_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.norm_w + m.w[j] >= 0)
    elif q == 2.0:
        m.norm_w = pyo.Expression(expr=pyo.sqrt(sum(m.w[j] ** 2 for j in m.J)), doc="|w|_2")
    elif q == 1.0:
        _abs_w(m)
        m.norm_w = pyo.Expression(expr=sum(m.abs_w[j] for j in m.J), doc="|w|_1 = sum_j abs_w[j]")
    else:
        m.norm_w = pyo.Var(domain=pyo.NonNegativeReals, doc=f"norm_w >= |w|_{q:g}")
        _abs_w(m)
        m.norm_ge_abs_w = pnorm_epigraph(m, m.abs_w, m.norm_w, q)
    m.obj = _robust_objective(m, data, 0.5 * sum(m.w[j] ** 2 for j in m.J), m.norm_w)
    _robust_margin(m, data, m.norm_w)
    return m


@register_model(26, family="multiclass", model_class="NLP", summary="robust counterpart, conic epigraph of 1/2|w|^2",
                robust_p=(), group="paper", nominal=15, uncertain=uncertain_22, compare=("w",))
@shapes.paused_gc
def build_robust_26(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float, eps: float | np.ndarray
) -> pyo.ConcreteModel:
    """(26) Conic epigraph of the quadratic term, for any :math:`p\\in[1,\\infty]`.

    .. math::
        \\min\\ \\tfrac12(u_c-v_c) + \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}
        \\big({x^i}^\\top w_c + \\varepsilon_i\\|w_c\\|_{p'}\\big) + \\nu_c\\theta_c
        + \\frac{\\alpha_c}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i}

    s.t. :math:`{x^i}^\\top w_c + \\theta_c - \\varepsilon_i\\|w_c\\|_{p'} \\ge -\\xi_{c,i}`,
    :math:`t_c\\ge\\|w_c\\|_2`, :math:`u_c+v_c=1`, :math:`u_c\\ge\\sqrt{t_c^2+v_c^2}`, :math:`\\xi\\ge0`.

    **How** :math:`\\|w_c\\|_{p'}` **is written** (so that a smooth NLP solver converges):
    an epigraph variable ``r`` replaces it, with ``a[j] >= w_j``, ``a[j] >= -w_j``
    (so :math:`a_j \\ge |w_j|`) and ``norm_r``: :math:`a_j \\le r` for :math:`p'=\\infty`,
    :math:`\\sum_j a_j \\le r` for :math:`p'=1`, the cone :math:`\\sum_j a_j^2 \\le r^2` for
    :math:`p'=2`, and otherwise the convex rows of :func:`pnorm_epigraph` (``z[j]``,
    ``perspective[j]``: :math:`a_j^{p'} r^{1-p'} \\le z_j`, ``norm_r``: :math:`\\sum_j z_j \\le r`);
    ``a, r, z >= 0``. Every row is then a convex function :math:`\\le 0` (differentiable for
    :math:`r > 0`), and :math:`r = \\|w\\|_{p'}` at the optimum since :math:`r` is minimised (its
    coefficients :math:`\\nu\\varepsilon_i/m_{-c} \\ge 0` in the objective and
    :math:`-\\varepsilon_i` in the rows).
    """
    m, p, data = _robust_skeleton("(26) robust conic epigraph", X, y, c, nu, alpha, p, eps)
    q = conjugate(p)
    _cones(m)
    m.r = pyo.Var(domain=pyo.NonNegativeReals, doc="r >= |w|_p'")
    m.a = pyo.Var(m.J, domain=pyo.NonNegativeReals, doc="a_j >= |w_j|")
    m.a_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.a[j] - m.w[j] >= 0)
    m.a_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.a[j] + m.w[j] >= 0)
    if math.isinf(q):
        m.norm_r = pyo.Constraint(m.J, rule=lambda m, j: m.a[j] - m.r <= 0, doc="max_j a_j <= r")
    elif q == 1.0:
        m.norm_r = pyo.Constraint(expr=sum(m.a[j] for j in m.J) - m.r <= 0, doc="sum_j a_j <= r")
    elif q == 2.0:
        m.norm_r = pyo.Constraint(expr=sum(m.a[j] ** 2 for j in m.J) <= m.r**2, doc="sum_j a_j^2 <= r^2 (a cone)")
    else:
        m.norm_r = pnorm_epigraph(m, m.a, m.r, q)
    m.obj = _robust_objective(m, data, 0.5 * (m.u - m.v), m.r)
    _robust_margin(m, data, m.r)
    return m


@register_model(27, family="multiclass", model_class="SOCP", summary="robust SOCP, p = 1", robust_p=(1,), group="paper",
                nominal=15, uncertain=uncertain_22, compare=("w",))
@shapes.paused_gc
def build_socp_27(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float = 1.0,
    eps: float | np.ndarray,
) -> pyo.ConcreteModel:
    """(27) SOCP for :math:`p=1` (:math:`p'=\\infty`), Corollary 1.

    .. math::
        \\min\\ \\tfrac12(u_c-v_c) + \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}
        \\big({x^i}^\\top w_c + \\varepsilon_i s_c\\big) + \\nu_c\\theta_c
        + \\frac{\\alpha_c}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i}

    s.t. :math:`{x^i}^\\top w_c + \\theta_c - \\varepsilon_i s_c \\ge -\\xi_{c,i}`,
    :math:`t_c\\ge\\|w_c\\|_2`, :math:`u_c+v_c=1`, :math:`u_c\\ge\\sqrt{t_c^2+v_c^2}`,
    :math:`s_c\\ge -w_{c,j}`, :math:`s_c\\ge w_{c,j}`, :math:`s_c\\ge0` (implied; errata 9), :math:`\\xi\\ge0`.
    """
    if check_p(p) != 1.0:
        raise ValueError(f"(27) is the SOCP for p = 1; for p = {p:g} use (28) (p=2), (29) (p=inf) or (26)")
    m, _, data = _robust_skeleton("(27) robust SOCP", X, y, c, nu, alpha, 1.0, eps)
    _cones(m)
    m.s = pyo.Var(domain=pyo.NonNegativeReals, doc="s_c >= |w_c|_inf (s_c >= 0 printed, implied)")
    m.s_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.s + m.w[j] >= 0, doc="s_c >= -w_c,j")
    m.s_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.s - m.w[j] >= 0, doc="s_c >= w_c,j")
    m.obj = _robust_objective(m, data, 0.5 * (m.u - m.v), m.s)
    _robust_margin(m, data, m.s)
    return m


@register_model(28, family="multiclass", model_class="SOCP", summary="robust SOCP, p = 2", robust_p=(2,), group="paper",
                nominal=15, uncertain=uncertain_22, compare=("w",))
@shapes.paused_gc
def build_socp_28(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float = 2.0,
    eps: float | np.ndarray,
) -> pyo.ConcreteModel:
    """(28) SOCP for :math:`p=2` (:math:`p'=2`), Corollary 1.

    .. math::
        \\min\\ \\tfrac12(u_c-v_c) + \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}
        \\big({x^i}^\\top w_c + \\varepsilon_i t_c\\big) + \\nu_c\\theta_c
        + \\frac{\\alpha_c}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i}

    s.t. :math:`{x^i}^\\top w_c + \\theta_c - \\varepsilon_i t_c \\ge -\\xi_{c,i}`,
    :math:`t_c\\ge\\|w_c\\|_2`, :math:`u_c+v_c=1`, :math:`u_c\\ge\\sqrt{t_c^2+v_c^2}`, :math:`\\xi\\ge0`.
    """
    if check_p(p) != 2.0:
        raise ValueError(f"(28) is the SOCP for p = 2; for p = {p:g} use (27) (p=1), (29) (p=inf) or (26)")
    m, _, data = _robust_skeleton("(28) robust SOCP", X, y, c, nu, alpha, 2.0, eps)
    _cones(m)
    m.obj = _robust_objective(m, data, 0.5 * (m.u - m.v), m.t)
    _robust_margin(m, data, m.t)
    return m


@register_model(29, family="multiclass", model_class="SOCP", summary="robust SOCP, p = inf",
                robust_p=(math.inf,), group="paper", nominal=15, uncertain=uncertain_22, compare=("w",))
@shapes.paused_gc
def build_socp_29(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float = math.inf,
    eps: float | np.ndarray,
) -> pyo.ConcreteModel:
    """(29) SOCP for :math:`p=\\infty` (:math:`p'=1`), Corollary 1.

    .. math::
        \\min\\ \\tfrac12(u_c-v_c) + \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}
        \\Big({x^i}^\\top w_c + \\varepsilon_i\\sum_{j=1}^n s_{c,j}\\Big) + \\nu_c\\theta_c
        + \\frac{\\alpha_c}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i}

    s.t. :math:`{x^i}^\\top w_c + \\theta_c - \\varepsilon_i\\sum_j s_{c,j} \\ge -\\xi_{c,i}`,
    :math:`t_c\\ge\\|w_c\\|_2`, :math:`u_c+v_c=1`, :math:`u_c\\ge\\sqrt{t_c^2+v_c^2}`,
    :math:`s_{c,j}\\ge -w_{c,j}`, :math:`s_{c,j}\\ge w_{c,j}`, :math:`\\xi\\ge0`.
    """
    if not math.isinf(check_p(p)):
        raise ValueError(f"(29) is the SOCP for p = inf; for p = {p:g} use (27) (p=1), (28) (p=2) or (26)")
    m, _, data = _robust_skeleton("(29) robust SOCP", X, y, c, nu, alpha, math.inf, eps)
    _cones(m)
    m.s = pyo.Var(m.J, doc="s_c,j >= |w_c,j|")
    m.s_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.s[j] + m.w[j] >= 0, doc="s_c,j >= -w_c,j")
    m.s_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.s[j] - m.w[j] >= 0, doc="s_c,j >= w_c,j")
    total = sum(m.s[j] for j in m.J)
    m.obj = _robust_objective(m, data, 0.5 * (m.u - m.v), total)
    _robust_margin(m, data, total)
    return m
