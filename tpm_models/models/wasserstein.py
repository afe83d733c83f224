"""Distributionally robust (15), "(23W)": type-1 Wasserstein balls around the empirical distribution of each class.

The derivation and its relation to (23) are in ``docs/wasserstein.md``. (15) is, with :math:`\\xi` eliminated,

.. math::
    \\tfrac12\\|w\\|_2^2 + \\nu\\,\\mathbb E_{\\hat P_{-c}}[w^\\top x + \\theta]
    + \\alpha\\,\\mathbb E_{\\hat P_c}[(-w^\\top x - \\theta)_+],

:math:`\\hat P_c` (:math:`\\hat P_{-c}`) the empirical distribution of the points of :math:`\\mathcal X_c`
(:math:`\\mathcal X_{-c}`): both data terms are expectations. (23W) replaces each by its worst case over the type-1
Wasserstein ball :math:`\\mathbb B_{\\varepsilon}(\\hat P)=\\{Q: W_1(Q,\\hat P)\\le\\varepsilon\\}`, transport cost
:math:`\\|x-x'\\|_p` (features move, labels stay, support :math:`\\mathbb R^n` as in (21)): radius
:math:`\\varepsilon_c` around :math:`\\hat P_c`, :math:`\\varepsilon_{-c}` around :math:`\\hat P_{-c}`. For a loss
:math:`\\max_k(a_k^\\top x + b_k)` the worst case is (Mohajerin Esfahani & Kuhn 2018, Thm 6.3)
:math:`\\min_{\\kappa,s}\\ \\kappa\\varepsilon + \\frac1N\\sum_i s_i` s.t. :math:`s_i \\ge a_k^\\top x^i + b_k`,
:math:`\\kappa \\ge \\|a_k\\|_{p'}`; for the hinge (pieces :math:`-w, 0`) the :math:`s_i` are the :math:`\\xi_i` of
(15), for the linear term (one piece :math:`w`) they are :math:`w^\\top x^i+\\theta`. Hence the builder below: (15)
as written, plus :math:`\\nu\\varepsilon_{-c}\\kappa_{-c} + \\alpha\\varepsilon_c\\kappa_c` and
:math:`\\kappa_c, \\kappa_{-c} \\ge \\|w\\|_{p'}`.

:func:`worst_case_terms` gives the two worst-case expectations in closed form,
:func:`gap_to_23` the exact difference (23W) - (23) of the two objectives at one point :math:`(w, \\theta)`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyomo.core as pyo

from tpm_models.models import shapes
from tpm_models.models.multiclass import class_sets
from tpm_models.models.norms import add_pnorm_epigraph, check_p, conjugate, norm
from tpm_models.models.registry import register_model


def check_radius(value: object, name: str = "eps") -> float:
    """A Wasserstein radius: one real number, finite, :math:`\\ge 0` (``ValueError`` saying which)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        if isinstance(value, (np.ndarray, list, tuple)) and np.ndim(value) > 0:
            raise ValueError(f"{name}: a Wasserstein ball has one radius, got {np.shape(value)} values; per-point "
                             "radii are the sets (21) of (23)")
        raise ValueError(f"{name} must be a real number >= 0 (the radius of the Wasserstein ball), got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0 (the radius of the Wasserstein ball), got {value}")
    return float(value)


def _norm_epigraph(m: pyo.ConcreteModel, q: float) -> None:
    """A variable ``r`` :math:`\\ge \\|w\\|_q`, written as a cone on ``w``, once for both balls:

    * :math:`q=\\infty` (:math:`p=1`): ``r_ge_w[j]``: :math:`r - w_j \\ge 0`, ``r_ge_minus_w[j]``:
      :math:`r + w_j \\ge 0`;
    * :math:`q=2`: ``r_ge_norm``: :math:`\\sum_j w_j^2 \\le r^2` (:math:`r\\ge0`: a second-order cone, as (27)-(29)'s
      ``cone_t``);
    * :math:`q=1` (:math:`p=\\infty`): ``abs_w[j]`` :math:`\\ge \\pm w_j` (rows ``abs_ge_w``, ``abs_ge_minus_w``),
      ``r_ge_norm``: :math:`\\sum_j` ``abs_w[j]`` :math:`\\le r`;
    * otherwise: ``abs_w[j]`` as for :math:`q=1`, ``z[j]``, ``perspective[j]``:
      :math:`\\text{abs\\_w}_j^q r^{1-q}\\le z_j` (power cones, :func:`tpm_models.models.norms.add_pnorm_epigraph`),
      ``r_ge_norm``: :math:`\\sum_j z_j \\le r`.

    One cone, not one per ball: at an optimum :math:`w = 0` (a radius large enough) both would sit at their apex on
    the same columns, and the certificate reads one cone's apex at a time
    (:mod:`tpm_models.certify.certificate`, "A cone's apex"): Clarabel's optimum of two such cones was refused."""
    m.r = pyo.Var(domain=pyo.NonNegativeReals, doc="r >= |w|_p'")
    if math.isinf(q):
        m.r_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.r - m.w[j] >= 0, doc="r >= w_j")
        m.r_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.r + m.w[j] >= 0, doc="r >= -w_j")
        return
    if q == 2.0:
        m.r_ge_norm = pyo.Constraint(expr=sum(m.w[j] ** 2 for j in m.J) <= m.r**2, doc="r >= |w|_2 (a cone)")
        return
    m.abs_w = pyo.Var(m.J, domain=pyo.NonNegativeReals, doc="abs_w[j] >= |w_j|")
    m.abs_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.abs_w[j] - m.w[j] >= 0)
    m.abs_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.abs_w[j] + m.w[j] >= 0)
    if q == 1.0:
        m.r_ge_norm = pyo.Constraint(expr=sum(m.abs_w[j] for j in m.J) - m.r <= 0, doc="r >= |w|_1")
    else:
        m.r_ge_norm = add_pnorm_epigraph(m, m.abs_w, m.r, q, m.J, doc=f"r >= |w|_{q:g}")


@register_model("23W", family="multiclass", model_class="SOCP", robust_p=(), group="dro",
                summary="distributionally robust (15): type-1 Wasserstein balls (cost |x - x'|_p) around each class")
@shapes.paused_gc
def build_wasserstein_23W(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, p: float, eps: float,
    eps_minus_c: float | None = None,
) -> pyo.ConcreteModel:
    """(23W) (15) with its two expectations at their worst over type-1 Wasserstein balls (``docs/wasserstein.md``).

    .. math::
        \\min\\ \\tfrac12\\|w_c\\|_2^2
        + \\nu_c\\Big(\\frac{1}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}({x^i}^\\top w_c + \\theta_c)
        + \\varepsilon_{-c}\\kappa_{-c}\\Big)
        + \\alpha_c\\Big(\\frac{1}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i} + \\varepsilon_c\\kappa_c\\Big)

    s.t. :math:`{x^i}^\\top w_c + \\theta_c \\ge -\\xi_{c,i}` (:math:`i\\in\\mathcal X_c`), :math:`\\xi_c\\ge0`,
    :math:`\\kappa_c \\ge \\|w_c\\|_{p'}`, :math:`\\kappa_{-c} \\ge \\|w_c\\|_{p'}`.

    :math:`\\kappa_c` (:math:`\\kappa_{-c}`) is the multiplier of the transport budget of the ball of radius
    :math:`\\varepsilon_c` = ``eps`` around :math:`\\hat P_c` (:math:`\\varepsilon_{-c}` = ``eps_minus_c``, by default
    ``eps``, around :math:`\\hat P_{-c}`); the :math:`\\lambda` of Mohajerin Esfahani & Kuhn, renamed: the paper's
    :math:`\\lambda_c` are (16)'s. At the optimum :math:`\\kappa = \\|w\\|_{p'}` when its radius is :math:`> 0`;
    at radius 0 it has no cost and any :math:`\\kappa\\ge\\|w\\|_{p'}` is optimal.

    ==============================================  ====================================================
    derivation                                       Pyomo component
    ==============================================  ====================================================
    :math:`w_c,\\theta_c,\\xi_c`, row 1, objective     as (15) (:func:`tpm_models.models.shapes.primal_plus`):
                                                     ``w[j]``, ``theta``, ``xi[i]``, ``margin[i]``
    :math:`\\varepsilon_c, \\varepsilon_{-c}`, :math:`p`  ``eps_c``, ``eps_minus_c`` (mutable), ``p``
    :math:`\\kappa_c, \\kappa_{-c}`                     ``kappa_c``, ``kappa_minus_c`` (bounds ``>= 0``)
    :math:`\\kappa\\ge\\|w\\|_{p'}`                      ``kappa_c_ge_norm``: ``kappa_c >= r``, the same for
                                                     ``minus_c``; ``r`` :math:`\\ge\\|w\\|_{p'}` a cone on ``w``
                                                     (:func:`_norm_epigraph`)
    ==============================================  ====================================================

    A QP at :math:`p \\in\\{1, \\infty\\}`, an SOCP at :math:`p = 2`, power cones otherwise: every norm is a cone
    (``r >= |w|_q`` written as (26)'s ``norm_r`` is), so a conic backend (Clarabel) takes every :math:`p`. The two
    multipliers share one epigraph ``r`` of the norm: :math:`\\kappa\\ge r\\ge\\|w\\|_{p'}` is
    :math:`\\kappa\\ge\\|w\\|_{p'}` for every :math:`w` (:math:`r` is free between).
    """
    p = check_p(p)
    eps_c = check_radius(eps, "eps")
    eps_other = eps_c if eps_minus_c is None else check_radius(eps_minus_c, "eps_minus_c")
    X, own, other, nu, alpha = class_sets(X, y, c, nu, alpha)
    title = f"(23W) Wasserstein distributionally robust TPMSVM, class {c}, p={p:g}"
    m = shapes.skeleton(title, X, own, other, nu, alpha, data_name=None)
    shapes.primal_plus(m, "X_c", "X_minus_c", X)  # (15): w, theta, xi, margin[i], obj
    nominal = m.obj.expr
    m.del_component(m.obj)
    m.p = pyo.Param(initialize=p, doc="p of the transport cost |x - x'|_p")
    # parameters, not numbers: the model's class does not change at eps = 0 (as (23)'s eps[i])
    m.eps_c = pyo.Param(initialize=eps_c, mutable=True, doc="eps_c >= 0: radius of the ball around P_c")
    m.eps_minus_c = pyo.Param(initialize=eps_other, mutable=True, doc="eps_-c >= 0: radius of the ball around P_-c")
    m.kappa_c = pyo.Var(domain=pyo.NonNegativeReals, doc="kappa_c >= |w|_p': multiplier of the budget of P_c's ball")
    m.kappa_minus_c = pyo.Var(domain=pyo.NonNegativeReals,
                              doc="kappa_-c >= |w|_p': multiplier of the budget of P_-c's ball")
    _norm_epigraph(m, conjugate(p))
    m.kappa_c_ge_norm = pyo.Constraint(expr=m.kappa_c - m.r >= 0, doc="kappa_c >= r >= |w|_p'")
    m.kappa_minus_c_ge_norm = pyo.Constraint(expr=m.kappa_minus_c - m.r >= 0, doc="kappa_-c >= r >= |w|_p'")
    m.obj = pyo.Objective(expr=nominal + m.nu * m.eps_minus_c * m.kappa_minus_c + m.alpha * m.eps_c * m.kappa_c,
                          sense=pyo.minimize)
    return m


def _sides(X: np.ndarray, y: np.ndarray, c: object, w: Any, theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:math:`w`, and :math:`{x^i}^\\top w + \\theta` on :math:`\\mathcal X_c` and on :math:`\\mathcal X_{-c}`."""
    X, y, w = np.asarray(X, float), np.asarray(y), np.asarray(w, float).ravel()
    if X.ndim != 2 or w.shape != (X.shape[1],) or y.shape != (X.shape[0],):
        raise ValueError(f"X of shape {X.shape}, y of shape {y.shape}, w of shape {w.shape}: need (m, n), (m,), (n,)")
    values = X @ w + float(theta)
    return w, values[y == c], values[y != c]


def worst_case_terms(X: np.ndarray, y: np.ndarray, c: object, p: float, eps_c: float, eps_minus_c: float,
                     w: Any, theta: float) -> tuple[float, float]:
    """The two worst-case expectations of (23W) at :math:`(w,\\theta)`, in closed form:
    :math:`\\sup_{Q\\in\\mathbb B_{\\varepsilon_{-c}}(\\hat P_{-c})}\\mathbb E_Q[w^\\top x+\\theta]
    = \\mathbb E_{\\hat P_{-c}}[w^\\top x+\\theta] + \\varepsilon_{-c}\\|w\\|_{p'}` and
    :math:`\\sup_{Q\\in\\mathbb B_{\\varepsilon_c}(\\hat P_c)}\\mathbb E_Q[(-w^\\top x-\\theta)_+]
    = \\mathbb E_{\\hat P_c}[(-w^\\top x-\\theta)_+] + \\varepsilon_c\\|w\\|_{p'}` (``docs/wasserstein.md``)."""
    w, own, other = _sides(X, y, c, w, theta)
    lip = norm(w, conjugate(p))
    return (float(other.mean() + check_radius(eps_minus_c, "eps_minus_c") * lip),
            float(np.maximum(-own, 0.0).mean() + check_radius(eps_c, "eps_c") * lip))


def gap_to_23(X: np.ndarray, y: np.ndarray, c: object, alpha: float, p: float, eps: float, w: Any,
              theta: float) -> float:
    """(23W)'s objective minus (23)'s at one point :math:`(w,\\theta)`, both with :math:`\\xi` at its least, radius
    ``eps`` for every ball and every point:
    :math:`\\frac{\\alpha}{m_c}\\sum_{i\\in\\mathcal X_c}\\min\\big(\\varepsilon\\|w\\|_{p'},
    ({x^i}^\\top w+\\theta)_+\\big) \\ge 0` (``docs/wasserstein.md``, Proposition 2). At an optimum of (23) it bounds
    opt(23W) - opt(23) from above."""
    w, own, _ = _sides(X, y, c, w, theta)
    lip = check_radius(eps) * norm(w, conjugate(p))
    return float(alpha * np.minimum(lip, np.maximum(own, 0.0)).mean())
