"""Robust one-versus-all TPMSVM, Section 4: builders (22)/(24), (23), (26), (27), (28), (29).

Every builder takes ``X`` (points as rows), labels ``y``, the class ``c``,
:math:`\\nu, \\alpha`, the norm :math:`p\\in[1,\\infty]` of the uncertainty set (21) and the
radii ``eps`` (a scalar, or one :math:`\\varepsilon_i` per point). :math:`p'` is the
Hölder conjugate (:func:`tpm_models.norms.conjugate`).

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

import numpy as np
import pyomo.environ as pyo

from tpm_models import _forms
from tpm_models.multiclass import _sets
from tpm_models.norms import check_p, check_radii, conjugate


def _robust_skeleton(title: str, X, y, c, nu, alpha, p, eps) -> tuple[pyo.ConcreteModel, float]:
    p = check_p(p)
    X, own, other, nu, alpha = _sets(X, y, c, nu, alpha)
    radii = check_radii(eps, X.shape[0])
    m = _forms.skeleton(f"{title}, class {c}, p={p:g}", X, own, other, nu, alpha)
    used = sorted(own[1] + other[1])
    m.eps = pyo.Param(used, initialize={i: float(radii[i - 1]) for i in used}, mutable=True,
                      doc="eps[i] >= 0: radius of U_p(x^i) (21)")
    m.p = pyo.Param(initialize=p, doc="p of the uncertainty set (21)")
    m.w = pyo.Var(m.J, doc="w_c")
    m.theta = pyo.Var(doc="theta_c")
    m.xi = pyo.Var(m.X_c, domain=pyo.NonNegativeReals, doc="xi_c,i >= 0")
    return m, p


def _xw(m: pyo.ConcreteModel, i: int) -> pyo.Expression:
    return sum(m.x[i, j] * m.w[j] for j in m.J)


def _robust_objective(m: pyo.ConcreteModel, quadratic, norm) -> pyo.Objective:
    """quadratic + nu/m_-c sum_{X_-c} (x_i'w + eps_i * norm) + nu theta + alpha/m_c sum xi."""
    return pyo.Objective(
        expr=quadratic
        + m.nu / len(m.X_minus_c) * sum(_xw(m, i) + m.eps[i] * norm for i in m.X_minus_c)
        + m.nu * m.theta
        + m.alpha / len(m.X_c) * sum(m.xi[i] for i in m.X_c),
        sense=pyo.minimize,
    )


def _robust_margin(m: pyo.ConcreteModel, norm) -> pyo.Constraint:
    return pyo.Constraint(
        m.X_c,
        rule=lambda m, i: _xw(m, i) + m.theta - m.eps[i] * norm + m.xi[i] >= 0,
        doc="x_i'w + theta - eps_i*|w|_p' >= -xi_i, stored with the constant on the right",
    )


def _cones(m: pyo.ConcreteModel) -> None:
    """t >= |w|_2, u + v = 1, u >= sqrt(t^2 + v^2) of (26)-(29)."""
    m.t = pyo.Var(domain=pyo.NonNegativeReals, doc="t_c >= |w_c|_2")
    m.u = pyo.Var(domain=pyo.NonNegativeReals, doc="u_c >= 0 (implied by the cone; errata 8)")
    m.v = pyo.Var(doc="v_c")
    m.cone_t = pyo.Constraint(expr=sum(m.w[j] ** 2 for j in m.J) <= m.t**2, doc="t >= |w|_2")
    m.u_plus_v = pyo.Constraint(expr=m.u + m.v == 1, doc="u + v = 1")
    m.cone_u = pyo.Constraint(expr=m.t**2 + m.v**2 <= m.u**2, doc="u >= sqrt(t^2 + v^2)")


def build_robust_23(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray
) -> pyo.ConcreteModel:
    """(23) Robust counterpart (Theorem 1), for any :math:`p\\in[1,\\infty]`.

    .. math::
        \\min\\ \\tfrac12\\|w_c\\|_2^2 + \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}
        \\big({x^i}^\\top w_c + \\varepsilon_i\\|w_c\\|_{p'}\\big) + \\nu_c\\theta_c
        + \\frac{\\alpha_c}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i}
        \\quad\\text{s.t.}\\quad {x^i}^\\top w_c + \\theta_c - \\varepsilon_i\\|w_c\\|_{p'} \\ge -\\xi_{c,i},
        \\ \\xi_{c,i}\\ge0

    :math:`\\|w_c\\|_{p'}` is the Pyomo expression ``norm_w``: ``sqrt(sum w_j^2)`` for
    :math:`p'=2`, ``sum sqrt(w_j^2)`` for :math:`p'=1`, ``(sum (w_j^2)^(p'/2))^(1/p')`` otherwise
    (:math:`|w_j|` written as :math:`\\sqrt{w_j^2}`, which SCIP's Pyomo interface accepts and
    ``abs`` is not). A maximum has no Pyomo expression, so for :math:`p=1`
    (:math:`p'=\\infty`) ``norm_w`` is a variable with ``norm_w >= w_j`` and ``norm_w >= -w_j``
    (at the optimum it equals :math:`\\max_j|w_j|`). The model is nonsmooth where a
    :math:`w_j = 0`: SCIP (global) solves it; Ipopt needs a start away from :math:`w = 0`
    (``solve(..., warm_start=True)`` after setting ``w``, e.g. to the solution of (15)).
    The smooth forms are (26)-(29).
    """
    m, p = _robust_skeleton("(23) robust counterpart", X, y, c, nu, alpha, p, eps)
    q = conjugate(p)
    if math.isinf(q):
        m.norm_w = pyo.Var(domain=pyo.NonNegativeReals, doc="|w|_inf = max_j |w_j|")
        m.norm_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.norm_w - m.w[j] >= 0)
        m.norm_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.norm_w + m.w[j] >= 0)
    elif q == 2.0:
        m.norm_w = pyo.Expression(expr=pyo.sqrt(sum(m.w[j] ** 2 for j in m.J)), doc="|w|_2")
    elif q == 1.0:
        m.norm_w = pyo.Expression(expr=sum(pyo.sqrt(m.w[j] ** 2) for j in m.J), doc="|w|_1")
    else:
        m.norm_w = pyo.Expression(expr=sum((m.w[j] ** 2) ** (q / 2) for j in m.J) ** (1.0 / q), doc=f"|w|_{q:g}")
    m.obj = _robust_objective(m, 0.5 * sum(m.w[j] ** 2 for j in m.J), m.norm_w)
    m.margin = _robust_margin(m, m.norm_w)
    return m


def build_robust_26(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray
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
    (so :math:`a_j \\ge |w_j|`) and ``norm_r``: :math:`\\sum_j a_j^{p'} \\le r^{p'}` for finite
    :math:`p' > 1` (a cone for :math:`p'=2`), :math:`\\sum_j a_j \\le r` for :math:`p'=1`,
    :math:`a_j \\le r` for :math:`p'=\\infty`; ``a, r >= 0``. Every function is then
    differentiable (:math:`a^{p'}` with :math:`a \\ge 0`), the feasible set is convex, and
    :math:`r = \\|w\\|_{p'}` at the optimum since :math:`r` is minimised (its coefficients
    :math:`\\nu\\varepsilon_i/m_{-c} \\ge 0` in the objective and :math:`-\\varepsilon_i` in the rows).
    """
    m, p = _robust_skeleton("(26) robust conic epigraph", X, y, c, nu, alpha, p, eps)
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
    else:
        m.norm_r = pyo.Constraint(expr=sum(m.a[j] ** q for j in m.J) <= m.r**q, doc=f"sum_j a_j^{q:g} <= r^{q:g}")
    m.obj = _robust_objective(m, 0.5 * (m.u - m.v), m.r)
    m.margin = _robust_margin(m, m.r)
    return m


def build_socp_27(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps: float | np.ndarray, p: float = 1
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
    m, _ = _robust_skeleton("(27) robust SOCP p=1", X, y, c, nu, alpha, 1.0, eps)
    _cones(m)
    m.s = pyo.Var(domain=pyo.NonNegativeReals, doc="s_c >= |w_c|_inf (s_c >= 0 printed, implied)")
    m.s_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.s + m.w[j] >= 0, doc="s_c >= -w_c,j")
    m.s_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.s - m.w[j] >= 0, doc="s_c >= w_c,j")
    m.obj = _robust_objective(m, 0.5 * (m.u - m.v), m.s)
    m.margin = _robust_margin(m, m.s)
    return m


def build_socp_28(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps: float | np.ndarray, p: float = 2
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
    m, _ = _robust_skeleton("(28) robust SOCP p=2", X, y, c, nu, alpha, 2.0, eps)
    _cones(m)
    m.obj = _robust_objective(m, 0.5 * (m.u - m.v), m.t)
    m.margin = _robust_margin(m, m.t)
    return m


def build_socp_29(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps: float | np.ndarray,
    p: float = math.inf,
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
    m, _ = _robust_skeleton("(29) robust SOCP p=inf", X, y, c, nu, alpha, math.inf, eps)
    _cones(m)
    m.s = pyo.Var(m.J, doc="s_c,j >= |w_c,j|")
    m.s_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.s[j] + m.w[j] >= 0, doc="s_c,j >= -w_c,j")
    m.s_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.s[j] - m.w[j] >= 0, doc="s_c,j >= w_c,j")
    total = sum(m.s[j] for j in m.J)
    m.obj = _robust_objective(m, 0.5 * (m.u - m.v), total)
    m.margin = _robust_margin(m, total)
    return m
