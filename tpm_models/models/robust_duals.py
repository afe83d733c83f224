"""Duals of the robust models (the paper's future work, Section 6): (27D), (28D), (29D), (23D).

(27D), (28D) and (29D) are the **conic duals** of the SOCPs (27), (28), (29): one dual
variable per primal constraint, the second-order cones kept as cones. (23D) is the dual of
(23) for any :math:`p\\in[1,\\infty]`, written like (16): it *is* (16) plus a vector
:math:`\\beta_c` in a :math:`\\|\\cdot\\|_p` ball. The derivation, step by step, is in
``docs/robust_duals.md``; the ties are measured by
:func:`tpm_models.checks.robust.check_robust_duals`.

Cones and signs
---------------
:math:`\\mathcal L^{k+1} = \\{(y_0, y)\\in\\mathbb R\\times\\mathbb R^k : y_0 \\ge \\|y\\|_2\\}`, the
second-order cone, is self-dual: the multiplier of a constraint :math:`(y_0, y)\\in\\mathcal L^{k+1}`
is a vector of :math:`\\mathcal L^{k+1}`. The Lagrangian of a minimisation subtracts
:math:`\\text{multiplier}^\\top\\text{row}` for every row written ":math:`\\ge 0`", ":math:`= 0`" or
":math:`\\in\\mathcal L`": multipliers of :math:`\\ge` rows are :math:`\\ge 0`, of equality rows free,
of cone rows in the cone. Paper symbol, Pyomo component, primal constraint, and how the value
reads off the primal solver's duals (``tpm_models.solvers`` convention: the duals of the
:math:`\\le` cone rows ``cone_t``, ``cone_u`` are :math:`\\le 0`):

==========================================  ============================================  =======================
dual variable (component)                   multiplier of (primal row)                    from the primal's duals
==========================================  ============================================  =======================
:math:`\\lambda_i\\in[0,\\alpha/m_c]` ``lam``  ``margin[i]`` (bound: :math:`\\xi_i\\ge0`)      ``margin``
:math:`\\mu` free, ``mu``                    ``u_plus_v``: :math:`u+v=1`                   ``u_plus_v``
:math:`(\\tau,z)\\in\\mathcal L^{n+1}`         ``cone_t``: :math:`(t,w)\\in\\mathcal L^{n+1}`  :math:`-2d_t(t,-w)`
:math:`(\\rho,\\sigma,\\zeta)\\in\\mathcal L^3`  ``cone_u``: :math:`(u,t,v)\\in\\mathcal L^3`    :math:`-2d_u(u,-t,-v)`
:math:`\\pi^+_j\\ge0` ``pi_plus``             ``s_ge_w[j]``: :math:`s\\ge w_j`               ``s_ge_w``
:math:`\\pi^-_j\\ge0` ``pi_minus``            ``s_ge_minus_w[j]``: :math:`s\\ge -w_j`        ``s_ge_minus_w``
==========================================  ============================================  =======================

:math:`d_t, d_u \\le 0` are the duals the solver reports for the quadratic rows
:math:`\\sum_j w_j^2 - t^2 \\le 0` and :math:`t^2+v^2-u^2\\le0`: a scalar multiplier
:math:`-d` of :math:`g(x)\\le0` contributes :math:`-d\\,\\nabla g`, which is the cone multiplier
above (:func:`multipliers_from_primal`). The dual rows are the stationarity conditions of the
Lagrangian, one per primal variable, named ``stat_<variable>`` (``sum_lam`` for
:math:`\\theta`, as in (16)); their own duals, in the dual's sense, are the primal variables
(:math:`w, \\theta, t, u, v, s`).

Constants: opt(27) = opt(27D), opt(28) = opt(28D), opt(29) = opt(29D) exactly (the row
:math:`u+v=1` brings the constant in: the dual objective is :math:`\\mu`); opt(23) = opt(23D) +
``tpm_models.models.shapes.dual_constant(X_minus_c, nu)``, the constant that (16) omits (errata 1).
:func:`omitted_constant` returns the constant of each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from tpm_models.models import shapes
from tpm_models.models.multiclass import class_sets
from tpm_models.models.norms import check_p, check_radii
from tpm_models.models.registry import register_model
from tpm_models.models.robust import pnorm_epigraph
from tpm_models.models.shapes import dual_constant

DUAL_EQUATIONS = ("23D", "27D", "28D", "29D")
"""The registry keys of the duals built here (``group_keys("dual")`` of :mod:`tpm_models.models.registry`)."""


@dataclass(frozen=True)
class DualData:
    """The numbers the rows of the duals are written from: :math:`X_c` (row ``a`` is the ``a``-th point of
    :math:`\\mathcal X_c`, the order of ``lam``), the column sums :math:`X_{-c}e` and the radii of
    :math:`\\mathcal X_c` and :math:`\\mathcal X_{-c}` in the order of their sets; ``lam``: the variables
    ``lam[i]`` in the order of :math:`\\mathcal X_c` (the rows' columns, looked up once)."""

    own: np.ndarray
    other_sum: np.ndarray
    own_radii: list[float]
    other_radii: list[float]
    lam: list


def _dual_skeleton(title: str, X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float,
                   eps: float | np.ndarray) -> tuple[pyo.ConcreteModel, bool, DualData]:
    """Sets, ``nu``, ``alpha``, ``eps[i]``, ``lam[i]`` and ``sum_lam``; second value: every :math:`\\varepsilon_i`
    is 0; third: the numbers of the rows.

    The data :math:`x_{ij}` are the rows' coefficients, not a ``Param`` (as in the primal builders,
    ``shapes.skeleton(data_name=None)``): an immutable ``Param`` ``x[i, j]`` only stored the numbers its
    expressions held already, and was most of the build (6 of 7 s at :math:`10^4` points, 2 million entries at
    :math:`10^5`)."""
    X, own, other, nu, alpha = class_sets(X, y, c, nu, alpha)
    radii = check_radii(eps, X.shape[0])
    m = shapes.skeleton(f"{title}, class {c}", X, own, other, nu, alpha, data_name=None)
    used = sorted(own[1] + other[1])
    # one entry per point: from a number when every radius is the same, else by a rule (Pyomo then skips the check
    # of each index that a dict's keys get), as the primal builders do
    values = radii.tolist()
    same = bool(len(values)) and all(r == values[0] for r in values)
    m.eps = pyo.Param(used, initialize=values[0] if same else (lambda _, i: values[i - 1]),
                      doc="eps[i] >= 0: radius of U_p(x^i) (21), fixed at build")
    m.lam = pyo.Var(m.X_c, bounds=(0, m.alpha / len(m.X_c)), doc="lam[i] in [0, alpha/m_c]: multiplier of margin[i]")
    lam = [m.lam[i] for i in m.X_c]
    m.sum_lam = pyo.Constraint(expr=shapes.linear_row([1] * len(lam), lam) == m.nu,
                               doc="e'lam = nu (stationarity in theta)")
    own_rows, other_rows = np.asarray(own[1]) - 1, np.asarray(other[1]) - 1
    # X_-c e summed over axis 0 adds the points one after another in the order of X_-c, as a sum over the set does
    data = DualData(X[own_rows], X[other_rows].sum(axis=0), [values[i] for i in own_rows.tolist()],
                    [values[i] for i in other_rows.tolist()], lam)
    return m, not any(radii[i - 1] for i in used), data


def _x_lam(m: pyo.ConcreteModel, data: DualData, j: int) -> LinearExpression:
    """:math:`(X_c\\lambda)_j = \\sum_{i\\in\\mathcal X_c} x_{ij}\\lambda_i`, as one ``LinearExpression``: the terms
    Pyomo's operators make of ``sum(x_ij * lam[i] for i in X_c)`` (``shapes.linear_terms``)."""
    return LinearExpression(shapes.linear_terms(data.own[:, j - 1], data.lam))


def _a_xbar(m: pyo.ConcreteModel, data: DualData, j: int) -> pyo.Expression:
    """:math:`\\frac{\\nu}{m_{-c}}(X_{-c}e)_j = \\frac{\\nu}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}} x_{ij}`."""
    return m.nu / len(m.X_minus_c) * float(data.other_sum[j - 1])


def _radius_terms(m: pyo.ConcreteModel, data: DualData) -> tuple[pyo.Expression, pyo.Expression]:
    """The constant :math:`\\frac{\\nu}{m_{-c}}\\sum_{\\mathcal X_{-c}}\\varepsilon_i` and the :math:`\\lambda`
    part :math:`\\sum_{\\mathcal X_c}\\varepsilon_i\\lambda_i` of the radius :math:`r(\\lambda)` of the dual ball (one
    ``LinearExpression``, the terms of ``sum(eps[i] * lam[i] for i in X_c)``)."""
    return (m.nu / len(m.X_minus_c) * sum(data.other_radii),
            LinearExpression(shapes.linear_terms(data.own_radii, data.lam)))


def _conic_dual(title: str, X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float,
                eps: float | np.ndarray, norm_var: str) -> tuple[pyo.ConcreteModel, bool, DualData]:
    """The part shared by (27D), (28D), (29D); ``norm_var`` is the primal variable that carries
    :math:`\\|w\\|_{p'}` (``"s"`` or ``"t"``). Second value: every :math:`\\varepsilon_i` is 0; third: the numbers
    of the rows."""
    m, nominal, data = _dual_skeleton(title, X, y, c, nu, alpha, eps)
    m.mu = pyo.Var(doc="mu: multiplier of u_plus_v (u + v = 1)")
    m.tau = pyo.Var(domain=pyo.NonNegativeReals, doc="tau: (tau, z) in L^{n+1}, multiplier of cone_t")
    m.z = pyo.Var(m.J, doc="z[j]: (tau, z) in L^{n+1}, multiplier of cone_t")
    m.rho = pyo.Var(domain=pyo.NonNegativeReals, doc="rho: (rho, sigma, zeta) in L^3, multiplier of cone_u")
    m.sigma = pyo.Var(doc="sigma: (rho, sigma, zeta) in L^3, multiplier of cone_u")
    m.zeta = pyo.Var(doc="zeta: (rho, sigma, zeta) in L^3, multiplier of cone_u")
    m.obj = pyo.Objective(expr=m.mu, sense=pyo.maximize)
    if norm_var == "t":  # (28): t carries |w|_2 in the objective and the margin rows
        constant, lam_part = _radius_terms(m, data)
        m.stat_t = pyo.Constraint(expr=m.tau + m.sigma - lam_part == constant,
                                  doc="tau + sigma = nu/m_-c sum eps_i + sum_c eps_i lam_i (stationarity in t)")
    else:
        m.stat_t = pyo.Constraint(expr=m.tau + m.sigma == 0, doc="tau + sigma = 0 (stationarity in t)")
    m.stat_u = pyo.Constraint(expr=m.rho + m.mu == 0.5, doc="rho + mu = 1/2 (stationarity in u)")
    m.stat_v = pyo.Constraint(expr=m.zeta + m.mu == -0.5, doc="zeta + mu = -1/2 (stationarity in v)")
    m.cone_tau = pyo.Constraint(expr=sum(m.z[j] ** 2 for j in m.J) <= m.tau**2, doc="tau >= |z|_2")
    m.cone_rho = pyo.Constraint(expr=m.sigma**2 + m.zeta**2 <= m.rho**2, doc="rho >= sqrt(sigma^2 + zeta^2)")
    return m, nominal, data


def _pi(m: pyo.ConcreteModel, data: DualData, nominal: bool) -> None:
    """:math:`\\pi^\\pm \\ge 0` and ``stat_w[j]`` of (27D), (29D). ``nominal`` (every
    :math:`\\varepsilon_i = 0`): the rows ``stat_s`` force :math:`\\pi^\\pm = 0`, a set without interior
    on which Ipopt stopped (``Search_Direction_Becomes_Too_Small``, (29D), Wine class 1); the
    variables are then fixed at 0 and ``stat_s`` (``0 <= 0``, ``0 = 0``) is left out."""
    m.pi_plus = pyo.Var(m.J, domain=pyo.NonNegativeReals, doc="pi_plus[j] >= 0: multiplier of s_ge_w[j]")
    m.pi_minus = pyo.Var(m.J, domain=pyo.NonNegativeReals, doc="pi_minus[j] >= 0: multiplier of s_ge_minus_w[j]")
    if nominal:
        m.pi_plus.fix(0.0)
        m.pi_minus.fix(0.0)
    m.stat_w = pyo.Constraint(m.J, rule=lambda m, j: m.z[j] + _x_lam(m, data, j) - m.pi_plus[j] + m.pi_minus[j]
                              == _a_xbar(m, data, j),
                              doc="z + X_c lam - pi+ + pi- = nu/m_-c X_-c e (stationarity in w)")


@register_model("27D", family="multiclass", model_class="SOCP", role="dual", primal=27, robust_p=(1,), group="dual",
                summary="conic dual of (27), p = 1; opt(27) = opt")
@shapes.paused_gc
def build_dual_27(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float = 1.0,
    eps: float | np.ndarray,
) -> pyo.ConcreteModel:
    """(27D) Conic dual of the SOCP (27) (:math:`p=1`, :math:`p'=\\infty`). opt(27) = opt(27D): no constant.

    .. math::
        \\max_{\\lambda,\\mu,\\tau,z,\\rho,\\sigma,\\zeta,\\pi^\\pm}\\ \\mu
        \\quad\\text{s.t.}\\quad
        z + X_c\\lambda - \\pi^+ + \\pi^- = \\frac{\\nu_c}{m_{-c}}X_{-c}e_{-c},\\ \\
        e_c^\\top\\lambda = \\nu_c,\\ \\
        e^\\top(\\pi^+ + \\pi^-) \\le \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}\\varepsilon_i
        + \\sum_{i\\in\\mathcal X_c}\\varepsilon_i\\lambda_i,

    .. math::
        \\tau + \\sigma = 0,\\ \\ \\rho + \\mu = \\tfrac12,\\ \\ \\zeta + \\mu = -\\tfrac12,\\ \\
        \\tau \\ge \\|z\\|_2,\\ \\ \\rho \\ge \\sqrt{\\sigma^2+\\zeta^2},\\ \\
        0 \\le \\lambda \\le \\frac{\\alpha_c}{m_c},\\ \\ \\pi^\\pm \\ge 0

    ================================  ==========================  ==============================================
    row                               component                   stationarity in
    ================================  ==========================  ==============================================
    first row (per :math:`j`)         ``stat_w[j]``               :math:`w_j`
    :math:`e^\\top\\lambda=\\nu`         ``sum_lam``                 :math:`\\theta`
    :math:`e^\\top(\\pi^++\\pi^-)\\le r`  ``stat_s``                  :math:`s` (slack: multiplier of :math:`s\\ge0`)
    :math:`\\tau+\\sigma=0`             ``stat_t``                  :math:`t`
    :math:`\\rho+\\mu=\\frac12`          ``stat_u``                  :math:`u`
    :math:`\\zeta+\\mu=-\\frac12`        ``stat_v``                  :math:`v`
    the cones                         ``cone_tau``, ``cone_rho``
    ================================  ==========================  ==============================================

    With :math:`\\beta = \\pi^- - \\pi^+` (:math:`\\|\\beta\\|_1\\le r(\\lambda)`, the :math:`p=1` ball) it
    reduces to (23D) at :math:`p = 1` (``docs/robust_duals.md``). :math:`w = (\\sigma/\\tau) z = -z`
    (:func:`recover_w_socp`). When every :math:`\\varepsilon_i` is 0, ``stat_s`` forces :math:`\\pi^\\pm=0`:
    they are fixed at 0 and ``stat_s`` is left out (``_pi``).
    """
    if check_p(p) != 1.0:
        raise ValueError(f"(27D) is the dual of the SOCP for p = 1; for p = {p:g} use (28D), (29D) or (23D)")
    m, nominal, data = _conic_dual("(27D) conic dual of (27), p=1", X, y, c, nu, alpha, eps, "s")
    _pi(m, data, nominal)
    if nominal:
        return m
    constant, lam_part = _radius_terms(m, data)
    m.stat_s = pyo.Constraint(expr=sum(m.pi_plus[j] + m.pi_minus[j] for j in m.J) - lam_part <= constant,
                              doc="e'(pi+ + pi-) <= nu/m_-c sum eps_i + sum_c eps_i lam_i (stationarity in s >= 0)")
    return m


@register_model("28D", family="multiclass", model_class="SOCP", role="dual", primal=28, robust_p=(2,), group="dual",
                summary="conic dual of (28), p = 2; opt(28) = opt")
@shapes.paused_gc
def build_dual_28(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float = 2.0,
    eps: float | np.ndarray,
) -> pyo.ConcreteModel:
    """(28D) Conic dual of the SOCP (28) (:math:`p=p'=2`). opt(28) = opt(28D): no constant.

    .. math::
        \\max_{\\lambda,\\mu,\\tau,z,\\rho,\\sigma,\\zeta}\\ \\mu
        \\quad\\text{s.t.}\\quad
        z + X_c\\lambda = \\frac{\\nu_c}{m_{-c}}X_{-c}e_{-c},\\ \\
        e_c^\\top\\lambda = \\nu_c,\\ \\
        \\tau + \\sigma = \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}\\varepsilon_i
        + \\sum_{i\\in\\mathcal X_c}\\varepsilon_i\\lambda_i,

    .. math::
        \\rho + \\mu = \\tfrac12,\\ \\ \\zeta + \\mu = -\\tfrac12,\\ \\
        \\tau \\ge \\|z\\|_2,\\ \\ \\rho \\ge \\sqrt{\\sigma^2+\\zeta^2},\\ \\
        0 \\le \\lambda \\le \\frac{\\alpha_c}{m_c}

    Components: ``stat_w[j]`` (from :math:`w_j`), ``sum_lam`` (:math:`\\theta`), ``stat_t``
    (:math:`t`, which carries :math:`\\|w\\|_2` in (28)), ``stat_u``, ``stat_v``, ``cone_tau``,
    ``cone_rho``; variables as in the module table. Eliminating :math:`\\rho,\\zeta,\\mu` gives
    :math:`\\max -\\tfrac12\\sigma^2` s.t. :math:`\\|X_c\\lambda - \\frac{\\nu_c}{m_{-c}}X_{-c}e\\|_2 \\le
    r(\\lambda) - \\sigma`: (23D) at :math:`p=2` (``docs/robust_duals.md``).
    :math:`w = (\\sigma/\\tau) z` (:func:`recover_w_socp`).
    """
    if check_p(p) != 2.0:
        raise ValueError(f"(28D) is the dual of the SOCP for p = 2; for p = {p:g} use (27D), (29D) or (23D)")
    m, _, data = _conic_dual("(28D) conic dual of (28), p=2", X, y, c, nu, alpha, eps, "t")
    m.stat_w = pyo.Constraint(m.J, rule=lambda m, j: m.z[j] + _x_lam(m, data, j) == _a_xbar(m, data, j),
                              doc="z + X_c lam = nu/m_-c X_-c e (stationarity in w)")
    return m


@register_model("29D", family="multiclass", model_class="SOCP", role="dual", primal=29, robust_p=(math.inf,),
                group="dual", summary="conic dual of (29), p = inf; opt(29) = opt")
@shapes.paused_gc
def build_dual_29(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float = math.inf,
    eps: float | np.ndarray,
) -> pyo.ConcreteModel:
    """(29D) Conic dual of the SOCP (29) (:math:`p=\\infty`, :math:`p'=1`). opt(29) = opt(29D): no constant.

    .. math::
        \\max_{\\lambda,\\mu,\\tau,z,\\rho,\\sigma,\\zeta,\\pi^\\pm}\\ \\mu
        \\quad\\text{s.t.}\\quad
        z + X_c\\lambda - \\pi^+ + \\pi^- = \\frac{\\nu_c}{m_{-c}}X_{-c}e_{-c},\\ \\
        e_c^\\top\\lambda = \\nu_c,\\ \\
        \\pi^+_j + \\pi^-_j = \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}\\varepsilon_i
        + \\sum_{i\\in\\mathcal X_c}\\varepsilon_i\\lambda_i\\ (j=1..n),

    .. math::
        \\tau + \\sigma = 0,\\ \\ \\rho + \\mu = \\tfrac12,\\ \\ \\zeta + \\mu = -\\tfrac12,\\ \\
        \\tau \\ge \\|z\\|_2,\\ \\ \\rho \\ge \\sqrt{\\sigma^2+\\zeta^2},\\ \\
        0 \\le \\lambda \\le \\frac{\\alpha_c}{m_c},\\ \\ \\pi^\\pm \\ge 0

    Components as (27D), but ``stat_s[j]`` is one equality per feature (:math:`s_j` is free in
    (29)). With :math:`\\beta = \\pi^- - \\pi^+` (:math:`\\|\\beta\\|_\\infty \\le r(\\lambda)`, the
    :math:`p=\\infty` ball) it reduces to (23D) at :math:`p=\\infty`. :math:`w = (\\sigma/\\tau)z = -z`
    (:func:`recover_w_socp`). When every :math:`\\varepsilon_i` is 0, :math:`\\pi^\\pm` are fixed at 0 and
    ``stat_s`` is left out, as in (27D).
    """
    if not math.isinf(check_p(p)):
        raise ValueError(f"(29D) is the dual of the SOCP for p = inf; for p = {p:g} use (27D), (28D) or (23D)")
    m, nominal, data = _conic_dual("(29D) conic dual of (29), p=inf", X, y, c, nu, alpha, eps, "s")
    _pi(m, data, nominal)
    if nominal:
        return m
    constant, lam_part = _radius_terms(m, data)
    m.stat_s = pyo.Constraint(m.J, rule=lambda m, j: m.pi_plus[j] + m.pi_minus[j] - lam_part == constant,
                              doc="pi+_j + pi-_j = nu/m_-c sum eps_i + sum_c eps_i lam_i (stationarity in s_j)")
    return m


def constant_of_23d(X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float,
                    eps: float | np.ndarray) -> float:
    """The constant (23D) omits, as (16) does: opt(23) = opt(23D) + ``dual_constant(X_{-c}, nu)``."""
    return omitted_constant("23D", X, y, c, nu)


@register_model("23D", family="multiclass", model_class="NLP", role="dual", primal=23, robust_p=(),
                omitted_constant=constant_of_23d, group="dual",
                summary="dual of (23), any p: (16) + beta in a p-ball (QP at p = 1, inf; SOCP at p = 2)")
@shapes.paused_gc
def build_dual_23(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float, eps: float | np.ndarray
) -> pyo.ConcreteModel:
    """(23D) Dual of (23) for any :math:`p\\in[1,\\infty]`: (16) with a vector :math:`\\beta_c` in a
    :math:`\\|\\cdot\\|_p` ball. opt(23) = opt(23D) + ``dual_constant(X_minus_c, nu)`` (errata 1).

    .. math::
        \\max_{\\lambda_c,\\beta_c}\\ -\\tfrac12(X_c\\lambda_c+\\beta_c)^\\top(X_c\\lambda_c+\\beta_c)
        + \\frac{\\nu_c}{m_{-c}}e_{-c}^\\top X_{-c}^\\top(X_c\\lambda_c+\\beta_c)

    .. math::
        \\text{s.t.}\\quad e_c^\\top\\lambda_c = \\nu_c,\\ \\ 0\\le\\lambda_c\\le\\frac{\\alpha_c}{m_c},\\ \\
        \\|\\beta_c\\|_p \\le r(\\lambda_c) = \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}\\varepsilon_i
        + \\sum_{i\\in\\mathcal X_c}\\varepsilon_i\\lambda_{c,i}

    The norm of the ball is :math:`p`, the norm of (21), not :math:`p'`: the term
    :math:`r\\|w\\|_{p'}` of the Lagrangian is :math:`\\max_{\\|\\beta\\|_p\\le r}\\beta^\\top w` (Hölder,
    (25)). :math:`w_c = X_c\\lambda_c - \\frac{\\nu_c}{m_{-c}}X_{-c}e_{-c} + \\beta_c` (:func:`recover_w_23`):
    (17) on the worst-case points of (22).

    ==========================  =============================  ===================================
    symbol                      component                      note
    ==========================  =============================  ===================================
    :math:`\\lambda_c`           ``lam[i]``                     multiplier of ``margin[i]`` of (23)
    :math:`\\beta_c`             ``beta[j]``                    free
    :math:`e^\\top\\lambda=\\nu`   ``sum_lam``                    stationarity in :math:`\\theta`
    :math:`r(\\lambda_c)`        ``r``, row ``radius``          ``r >= 0``
    :math:`\\|\\beta_c\\|_p\\le r`  ``ball`` (and the rows below)
    ==========================  =============================  ===================================

    The ball, written as (23) writes :math:`\\|w\\|_{p'}`: :math:`p=\\infty`: rows
    ``ball_plus[j]``: :math:`r-\\beta_j\\ge0` and ``ball_minus[j]``: :math:`r+\\beta_j\\ge0` (a QP);
    :math:`p=1`: ``abs_beta[j]`` :math:`\\ge\\pm\\beta_j` (rows ``abs_ge_beta[j]``,
    ``abs_ge_minus_beta[j]``) and ``ball``: :math:`\\sum_j` ``abs_beta[j]`` :math:`\\le r` (a QP);
    :math:`p=2`: ``ball``: :math:`\\sum_j\\beta_j^2\\le r^2` (an SOCP); otherwise ``abs_beta`` as for
    :math:`p=1` and the convex perspective rows of ``tpm_models.models.robust.pnorm_epigraph`` (``z[j]``,
    ``perspective[j]``, ``ball``: an NLP). When every :math:`\\varepsilon_i` is 0 the ball is
    :math:`\\{0\\}`: ``beta`` is fixed at 0 and there is no ``r`` and no ball, so the model is (16)
    term for term (the perspective rows are undefined at :math:`r=0`).
    """
    p = check_p(p)
    m, nominal, data = _dual_skeleton(f"(23D) dual of (23), p={p:g}", X, y, c, nu, alpha, eps)
    m.p = pyo.Param(initialize=p, doc="p of the uncertainty set (21): the norm of the ball")
    m.beta = pyo.Var(m.J, doc="beta[j]: w = X_c lam - nu/m_-c X_-c e + beta")
    m.obj = pyo.Objective(
        expr=-0.5 * sum((_x_lam(m, data, j) + m.beta[j]) ** 2 for j in m.J)
        + sum(_a_xbar(m, data, j) * (_x_lam(m, data, j) + m.beta[j]) for j in m.J),
        sense=pyo.maximize,
    )
    if nominal:
        m.beta.fix(0.0)
        return m
    constant, lam_part = _radius_terms(m, data)
    m.r = pyo.Var(domain=pyo.NonNegativeReals, doc="r = r(lam): radius of the ball of beta")
    m.radius = pyo.Constraint(expr=m.r - lam_part == constant, doc="r = nu/m_-c sum eps_i + sum_c eps_i lam_i")
    if math.isinf(p):
        m.ball_plus = pyo.Constraint(m.J, rule=lambda m, j: m.r - m.beta[j] >= 0, doc="beta_j <= r")
        m.ball_minus = pyo.Constraint(m.J, rule=lambda m, j: m.r + m.beta[j] >= 0, doc="-beta_j <= r")
    elif p == 2.0:
        m.ball = pyo.Constraint(expr=sum(m.beta[j] ** 2 for j in m.J) <= m.r**2, doc="|beta|_2 <= r (a cone)")
    else:
        m.abs_beta = pyo.Var(m.J, domain=pyo.NonNegativeReals, doc="abs_beta[j] >= |beta_j|")
        m.abs_ge_beta = pyo.Constraint(m.J, rule=lambda m, j: m.abs_beta[j] - m.beta[j] >= 0)
        m.abs_ge_minus_beta = pyo.Constraint(m.J, rule=lambda m, j: m.abs_beta[j] + m.beta[j] >= 0)
        if p == 1.0:
            m.ball = pyo.Constraint(expr=sum(m.abs_beta[j] for j in m.J) - m.r <= 0, doc="|beta|_1 <= r")
        else:
            m.ball = pnorm_epigraph(m, m.abs_beta, m.r, p)
    return m


# --------------------------------------------------------------------------- recovery and constants


def recover_w_socp(values: dict) -> np.ndarray:
    """Primal :math:`w` of (27), (28), (29) from a solution of (27D), (28D), (29D):
    :math:`w = (\\sigma/\\tau)\\,z`.

    Complementarity of :math:`(u,t,v)` and :math:`(\\rho,\\sigma,\\zeta)` in :math:`\\mathcal L^3` with
    :math:`\\rho-\\zeta=1` gives :math:`(\\rho,\\sigma,\\zeta) = (u,-t,-v)`, so :math:`t = -\\sigma`; that
    of :math:`(t,w)` and :math:`(\\tau,z)` gives :math:`w = -(t/\\tau) z`. For (27D), (29D)
    :math:`\\tau=-\\sigma` and :math:`w=-z`. ``values``: ``SolveResult.values`` of the dual.
    """
    tau = float(values["tau"])
    if tau <= 0.0:
        return np.zeros_like(np.asarray(values["z"], float))
    return float(values["sigma"]) / tau * np.asarray(values["z"], float)


def recover_w_23(X: np.ndarray, y: np.ndarray, c: object, nu: float, values: dict) -> np.ndarray:
    """Primal :math:`w` of (23) from a solution of (23D):
    :math:`w_c = X_c\\lambda_c - \\frac{\\nu_c}{m_{-c}}X_{-c}e_{-c} + \\beta_c`. ``values``:
    ``SolveResult.values`` of the dual (``lam`` in the order of the points of class ``c``)."""
    X, y = np.asarray(X, float), np.asarray(y)
    own, other = X[y == c], X[y != c]
    return own.T @ np.asarray(values["lam"], float) - nu / len(other) * other.sum(axis=0) \
        + np.asarray(values["beta"], float)


def omitted_constant(eq: str, X: np.ndarray, y: np.ndarray, c: object, nu: float) -> float:
    """The constant :math:`k` with opt(primal) = opt(``eq``) + :math:`k`: 0 for the conic duals
    (27D), (28D), (29D); ``dual_constant(X_minus_c, nu)`` for (23D), as for (16)."""
    eq = str(eq).strip().upper()
    if eq not in DUAL_EQUATIONS:
        raise ValueError(f"{eq!r} is not one of the robust duals {DUAL_EQUATIONS}")
    return dual_constant(np.asarray(X, float)[np.asarray(y) != c], nu) if eq == "23D" else 0.0


def multipliers_from_primal(eq: str, primal_values: dict, primal_duals: dict) -> dict[str, float | np.ndarray]:
    """The dual variables of ``eq`` (27D, 28D, 29D: all of them; 23D: ``lam`` and, where the primal
    writes :math:`\\|w\\|_{p'}` with linear rows, ``beta``) read off the primal solver's duals of (27),
    (28), (29) or (23) by the module table. For 23D the primal may be (23) or, at :math:`p=1,2,\\infty`,
    the SOCP (27), (28), (29): :math:`\\beta = \\pi^- - \\pi^+`. A component the solver did not give is NaN."""
    d, v = primal_duals, primal_values
    out: dict[str, float | np.ndarray] = {"lam": np.asarray(d["margin"], float)}
    if eq == "23D":
        rows = (("norm_ge_w", "norm_ge_minus_w"), ("abs_ge_w", "abs_ge_minus_w"), ("s_ge_w", "s_ge_minus_w"))
        for plus, minus in rows:
            if plus in d:  # (23) at p = 1 (|w|_inf) / p != 1, 2 (abs_w); (27), (29): beta = pi- - pi+
                out["beta"] = np.asarray(d[minus], float) - np.asarray(d[plus], float)
        return out
    out["mu"] = float(d["u_plus_v"])
    mult_t, mult_u = -float(d["cone_t"]), -float(d["cone_u"])
    out["tau"] = 2 * mult_t * float(v["t"])
    out["z"] = -2 * mult_t * np.asarray(v["w"], float)
    out["rho"] = 2 * mult_u * float(v["u"])
    out["sigma"] = -2 * mult_u * float(v["t"])
    out["zeta"] = -2 * mult_u * float(v["v"])
    if eq in ("27D", "29D"):
        out["pi_plus"] = np.asarray(d["s_ge_w"], float)
        out["pi_minus"] = np.asarray(d["s_ge_minus_w"], float)
    return out


def shrunk_15(w15: np.ndarray, nu: float, eps: float) -> np.ndarray:
    """The :math:`w` of (23) at :math:`p = 2` with one radius ``eps`` for every point, from (15)'s ``w15``:
    :math:`(1 - 2\\nu\\varepsilon/\\|w_{(15)}\\|)_+\\,w_{(15)}`
    (``docs/derivations.md``, "One :math:`\\varepsilon`")."""
    size = float(np.linalg.norm(w15))
    return max(0.0, 1.0 - 2.0 * nu * eps / size) * w15 if size > 0 else np.zeros_like(w15)
