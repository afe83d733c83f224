"""Robust counterpart of the kernel model (19), "(23K)": (23) with :math:`p=2` written in the feature space.

The paper leaves a robust kernel model to future work (Section 6); the derivation is in
``docs/robust_kernel.md``. Every training point may move in :math:`\\mathcal U_p(x^i)` (21). In the feature
space :math:`\\mathcal H` of the kernel the image :math:`\\varphi(\\mathcal U_p(x^i))` lies in the ball of
radius :math:`\\rho_i` (:func:`feature_radius`) around :math:`\\varphi(x^i)`, so (23) with :math:`p = 2` written
in :math:`\\mathcal H` with the radii :math:`\\rho_i` is a **safe approximation** of the semi-infinite model
(22) written in :math:`\\mathcal H` with the input-space sets :math:`\\mathcal U_p(x^i)`: every feasible point of
it is feasible there, with an objective at least as large.

Radii. :math:`R_i = \\max\\{\\|\\delta\\|_2 : \\|\\delta\\|_p\\le\\varepsilon_i\\}
= \\varepsilon_i\\,n^{\\max(0,1/2-1/p)}` (:func:`l2_radius`), and
:math:`\\rho_i \\ge \\max_{\\|\\delta\\|_p\\le\\varepsilon_i}\\|\\varphi(x^i+\\delta)-\\varphi(x^i)\\|`
(:func:`feature_radius`), with :math:`a_i = \\|x^i\\|_2` and :math:`b_i = \\sqrt{\\gamma + a_i^2}`:

==============  ==============================================  ===================================================
kernel          :math:`\\rho_i`                                   the largest move of :math:`\\varphi` is
==============  ==============================================  ===================================================
``linear``      :math:`R_i`                                      attained, over the :math:`p`-ball
``gaussian``    :math:`\\sqrt{2-2\\exp(-R_i^2/(2\\sigma^2))}`       attained, over the :math:`p`-ball
``hom-poly``    :math:`(a_i+R_i)^d - a_i^d`                      attained over the 2-ball of radius :math:`R_i`
``inhom-poly``  :math:`(b_i+R_i)^d - b_i^d`                      bounded, not attained (:math:`\\gamma > 0`)
``sigmoid``     refused: not positive semidefinite               no feature space
==============  ==============================================  ===================================================

No bound is uniform in :math:`x` for the polynomial kernels (the change grows like
:math:`\\|x\\|^{d-1}\\|\\delta\\|`), hence a radius per point.

The model. By the representer argument of ``docs/robust_kernel.md`` the optimal :math:`w_c` lies in
:math:`S = \\operatorname{span}\\{\\varphi(x^j)\\}` (all training points). :func:`span_basis` gives an
orthonormal basis of :math:`S` from :math:`K = V\\,\\mathrm{diag}(s)\\,V^\\top`:
:math:`u_k = \\sum_j V_{jk}\\varphi(x^j)/\\sqrt{s_k}` for the eigenvalues :math:`s_k` above :data:`EIG_TOL`
times the largest. The coordinates of :math:`\\varphi(x^i)` are the rows of
:math:`L = V_r\\,\\mathrm{diag}(\\sqrt{s_r})` (``phi[i, k]``, :math:`K \\approx LL^\\top`), and
:math:`w_c = \\sum_k w_k u_k = \\sum_j\\beta_j\\varphi(x^j)` with
:math:`\\beta = V_r\\,\\mathrm{diag}(s_r^{-1/2})\\,w` (so :math:`w = L^\\top\\beta` and
:math:`\\|w_c\\| = \\sqrt{\\beta^\\top K\\beta} = \\|L^\\top\\beta\\|_2`). The model is then an SOCP in
:math:`(w, \\theta, \\xi, t)`: (23) at :math:`p=2` with :math:`x^i \\to` ``phi[i, :]`` and
:math:`\\varepsilon_i\\to\\rho_i`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyomo.core as pyo

from tpm_models.kernels import Kernel
from tpm_models.models.multiclass import class_sets
from tpm_models.models.norms import check_p, check_radii
from tpm_models.models.recovery import PlaneDistance, choose_theta, theta_interval_primal
from tpm_models.models.registry import register_model
from tpm_models.models.shapes import linear_row, paused_gc
from tpm_models.validation import check_class, check_features, check_labels, check_nu_alpha

EIG_TOL = 1e-10
"""Eigenvalues of :math:`K` at or below ``EIG_TOL`` times the largest are left out of the basis of
:func:`span_basis` (this also drops the slightly negative eigenvalues that rounding gives a positive
semidefinite :math:`K`). The model then looks for :math:`w_c` in a subspace of the span: every point of
it is still exact (and safe), and the optimum rises by at most
:math:`(\\nu+\\alpha)\\,s_{\\rm drop}\\,\\|\\beta^\\star\\|_2` (``docs/robust_kernel.md``), about 1e-9 on Iris
and Wine. Smaller values let rounding in the eigenvectors (relative :math:`10^{-16}\\max s / s_k`) into
the orthonormality of the basis."""

KERNELS = ("linear", "hom-poly", "inhom-poly", "gaussian")
"""The kernels (23K) takes: those with a feature space and a radius (module table)."""


# --------------------------------------------------------------------------- radii


def l2_radius(eps: float | np.ndarray, p: float, n: int) -> np.ndarray:
    """:math:`R = \\max\\{\\|\\delta\\|_2 : \\|\\delta\\|_p \\le \\varepsilon\\} = \\varepsilon\\, n^{\\max(0,1/2-1/p)}`
    in :math:`\\mathbb R^n`: :math:`\\|\\delta\\|_2\\le\\|\\delta\\|_p` for :math:`p \\le 2` (attained at
    :math:`\\varepsilon e_1`), :math:`\\|\\delta\\|_2 \\le n^{1/2-1/p}\\|\\delta\\|_p` for :math:`p \\ge 2` (Hölder;
    attained at :math:`\\varepsilon n^{-1/p}(\\pm1,\\dots,\\pm1)`)."""
    p = check_p(p)
    inverse = 0.0 if math.isinf(p) else 1.0 / p
    return np.asarray(eps, dtype=float) * float(n) ** max(0.0, 0.5 - inverse)


def check_kernel_23k(kernel: object) -> Kernel:
    if not isinstance(kernel, Kernel):
        raise ValueError(f"(23K) needs a tpm_models.Kernel, got {kernel!r}")
    if kernel.name not in KERNELS:
        raise ValueError(
            f"(23K) takes the kernels {KERNELS}, not {kernel}: the sigmoid kernel is not positive semidefinite "
            "in general, so it has no feature space in which phi(U_p(x)) lies in a ball (docs/robust_kernel.md)"
        )
    return kernel


def feature_radius(kernel: Kernel, X: np.ndarray, eps: float | np.ndarray, p: float) -> np.ndarray:
    """:math:`\\rho_i \\ge \\max_{\\|\\delta\\|_p\\le\\varepsilon_i}\\|\\varphi(x^i+\\delta)-\\varphi(x^i)\\|` for
    each row :math:`x^i` of ``X`` (module table); ``eps`` is a scalar or one radius per row.

    Polynomial kernels: :math:`\\varphi(x)` is the tensor power :math:`x^{\\otimes d}` (of :math:`(\\sqrt\\gamma, x)`
    for ``inhom-poly``), and :math:`(x+\\delta)^{\\otimes d} - x^{\\otimes d}` is the sum of the
    :math:`2^d - 1` products with at least one factor :math:`\\delta`, :math:`\\binom dk` of them of norm
    :math:`b^{d-k}\\|\\delta\\|^k`: the triangle inequality gives :math:`\\sum_{k\\ge1}\\binom dk b^{d-k}R^k =
    (b+R)^d-b^d`, summed in that form (no cancellation for small :math:`R`).
    """
    kernel = check_kernel_23k(kernel)
    X = check_features(X)
    R = l2_radius(check_radii(eps, len(X)), p, X.shape[1])
    if kernel.name == "linear":
        return R
    if kernel.name == "gaussian":
        return np.sqrt(-2.0 * np.expm1(-(R**2) / (2.0 * kernel.param("sigma") ** 2)))
    d = int(kernel.param("degree"))
    b = np.sqrt((kernel.gamma or 0.0) + (X * X).sum(axis=1))
    return sum(math.comb(d, k) * b ** (d - k) * R**k for k in range(1, d + 1))


# --------------------------------------------------------------------------- the span of phi(x^j)


@dataclass(frozen=True)
class SpanBasis:
    """An orthonormal basis :math:`u_1..u_r` of :math:`\\operatorname{span}\\{\\varphi(x^j)\\}` (module docstring).

    Attributes
    ----------
    kernel : Kernel
    points : ndarray of shape (m, n)
        The training points :math:`x^j`.
    phi : ndarray of shape (m, r)
        :math:`L = V_r\\mathrm{diag}(\\sqrt{s_r})`: row :math:`i` holds the coordinates of :math:`\\varphi(x^i)`.
    coef : ndarray of shape (m, r)
        :math:`V_r\\mathrm{diag}(1/\\sqrt{s_r})`: :math:`u_k = \\sum_j` ``coef[j, k]`` :math:`\\varphi(x^j)`.
    dropped : float
        The largest eigenvalue left out, in absolute value (0.0 if none): :math:`\\|K - LL^\\top\\|_2`.
    """

    kernel: Kernel
    points: np.ndarray
    phi: np.ndarray
    coef: np.ndarray
    dropped: float

    def beta(self, w: np.ndarray) -> np.ndarray:
        """Expansion coefficients :math:`\\beta` of :math:`w = \\sum_k w_k u_k = \\sum_j \\beta_j\\varphi(x^j)`."""
        return self.coef @ np.asarray(w, dtype=float)

    def coordinates(self, X: np.ndarray) -> np.ndarray:
        """Coordinates of the projection of :math:`\\varphi(x)` onto the span, one row per row of ``X``
        (:math:`\\langle w,\\varphi(x)\\rangle` = ``coordinates(X) @ w`` for :math:`w` in the span)."""
        return self.kernel.gram(X, self.points) @ self.coef


def span_basis(kernel: Kernel, X: np.ndarray, eig_tol: float = EIG_TOL) -> SpanBasis:
    """:class:`SpanBasis` from the eigendecomposition of :math:`K(X, X)` (eigenvalues above
    ``eig_tol`` times the largest kept; :data:`EIG_TOL`)."""
    kernel = check_kernel_23k(kernel)
    X = check_features(X)
    if not 0.0 < eig_tol < 1.0:
        raise ValueError(f"eig_tol must lie in (0, 1), got {eig_tol}")
    K = kernel.gram(X, X)
    s, V = np.linalg.eigh(0.5 * (K + K.T))
    if s[-1] <= 0.0:
        raise ValueError(f"K(X, X) of the {kernel} kernel is 0: every phi(x^j) is 0 and w_c = 0")
    keep = s > eig_tol * s[-1]
    dropped = float(np.abs(s[~keep]).max()) if (~keep).any() else 0.0
    root = np.sqrt(s[keep])
    return SpanBasis(kernel, X.copy(), V[:, keep] * root, V[:, keep] / root, dropped)


# --------------------------------------------------------------------------- the model


@register_model("23K", family="multiclass", model_class="SOCP", kernel="gram", robust_p=(), group="kernel",
                summary="robust kernel model: (23) with p = 2 in feature space, radii rho_i; a safe approximation")
@paused_gc
def build_robust_kernel_23(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, kernel: Kernel, p: float,
    eps: float | np.ndarray,
) -> pyo.ConcreteModel:
    """(23K) Robust kernel model: (23) with :math:`p=2` in the feature space, radii :math:`\\rho_i`.

    .. math::
        \\begin{aligned}
        \\min\\ & \\tfrac12 t_c^2 + \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}
        \\big(\\langle w_c,\\varphi(x^i)\\rangle + \\rho_i t_c\\big) + \\nu_c\\theta_c
        + \\frac{\\alpha_c}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i} \\\\
        \\text{s.t.}\\ & \\langle w_c,\\varphi(x^i)\\rangle + \\theta_c - \\rho_i t_c \\ge -\\xi_{c,i}
        \\ (i\\in\\mathcal X_c),\\ \\ t_c \\ge \\|w_c\\|,\\ \\ \\xi_{c,i}\\ge0
        \\end{aligned}

    with :math:`\\rho_i` = :func:`feature_radius` (``kernel``, ``X``, ``eps``, ``p``) and
    :math:`\\langle w_c,\\varphi(x^i)\\rangle = \\sum_k` ``phi[i, k] * w[k]`` in the orthonormal basis of
    :func:`span_basis`. It is (23) at :math:`p = 2` with :math:`\\|w_c\\|` replaced by :math:`t_c`:
    :math:`t_c = \\|w_c\\|` at the optimum, since :math:`t_c` only hurts (coefficients :math:`t_c`,
    :math:`\\nu\\rho_i/m_{-c}\\ge0` in the objective and :math:`-\\rho_i` in the rows). :math:`\\tfrac12\\|w_c\\|^2`
    is written :math:`\\tfrac12 t_c^2`: written :math:`\\tfrac12\\sum_k w_k^2`, :math:`t_c` would be free at
    :math:`\\varepsilon = 0` and an interior-point solver's barrier would push it to infinity.

    ==============================================  ====================================================
    paper / derivation                               Pyomo component
    ==============================================  ====================================================
    coordinates of :math:`w_c` in :math:`u_1..u_r`       ``w[k]``, ``k in J`` (:math:`r` = rank kept)
    :math:`\\theta_c`, :math:`\\xi_{c,i}`                ``theta``, ``xi[i]`` (bound ``>= 0``)
    :math:`t_c \\ge \\|w_c\\|`                            ``t`` (bound ``>= 0``), ``cone_t``: ``sum_k w_k^2 <= t^2``
    coordinates of :math:`\\varphi(x^i)`                 ``phi[i, k]`` (:math:`L`, :math:`K\\approx LL^\\top`)
    :math:`\\varepsilon_i`, :math:`\\rho_i`, :math:`p`     ``eps[i]``, ``rho[i]`` (mutable), ``p``
    row 1                                            ``margin[i]``: ``phi_i'w + theta - rho_i t + xi_i >= 0``
    ==============================================  ====================================================

    The :math:`\\nu`-term is written from the other points' summed coordinates (:func:`objective_and_margins`).

    An SOCP (default solver Clarabel). :math:`\\beta` with :math:`w_c = \\sum_j\\beta_j\\varphi(x^j)`:
    :func:`recover_robust_kernel_23`. With the linear kernel and :math:`p = 2` it is (28) in rotated
    coordinates (:math:`\\rho_i=\\varepsilon_i`); at :math:`\\varepsilon = 0` it is the primal of (19).
    """
    p = check_p(p)
    kernel = check_kernel_23k(kernel)
    X, own, other, nu, alpha = class_sets(X, y, c, nu, alpha)
    radii = check_radii(eps, X.shape[0])
    rho = feature_radius(kernel, X, radii, p)
    basis = span_basis(kernel, X)
    # the components of shapes.skeleton with data_name="phi", the data by a rule (3x faster than a dict here;
    # within=Any: Pyomo's implicit domain validated each value, half the Param's time)
    m = pyo.ConcreteModel(name=f"(23K) robust kernel model, {kernel}, class {c}, p={p:g}")
    m.J = pyo.RangeSet(basis.phi.shape[1], doc="coordinates k = 1..r in an orthonormal basis of span{phi(x^j)}")
    for set_name, members, doc in (own, other):
        m.add_component(set_name, pyo.Set(initialize=members, ordered=True, doc=doc))
    used = sorted(own[1] + other[1])
    m.phi = pyo.Param(used, m.J, within=pyo.Any, initialize=lambda m, i, k: float(basis.phi[i - 1, k - 1]),
                      doc="phi[i, k]: coordinate k of phi(x^i) (row i of L, K = L L')")
    m.nu = pyo.Param(initialize=nu, mutable=True, doc="nu > 0")
    m.alpha = pyo.Param(initialize=alpha, mutable=True, doc="alpha >= nu")
    m.eps = pyo.Param(used, initialize={i: float(radii[i - 1]) for i in used}, doc="eps[i]: radius of U_p(x^i) (21)")
    m.rho = pyo.Param(used, initialize={i: float(rho[i - 1]) for i in used}, mutable=True,
                      doc="rho[i] >= max |phi(x^i + delta) - phi(x^i)| over U_p(x^i) (feature_radius)")
    m.p = pyo.Param(initialize=p, doc="p of the uncertainty set (21)")
    m.w = pyo.Var(m.J, doc="w_c: coordinates in the basis of span{phi(x^j)}")
    m.theta = pyo.Var(doc="theta_c")
    m.xi = pyo.Var(m.X_c, domain=pyo.NonNegativeReals, doc="xi_c,i >= 0")
    m.t = pyo.Var(domain=pyo.NonNegativeReals, doc="t_c >= |w_c|")
    m.cone_t = pyo.Constraint(expr=sum(m.w[k] ** 2 for k in m.J) <= m.t**2, doc="t >= |w|_2")
    objective_and_margins(m, basis.phi)
    return m


def objective_and_margins(m: pyo.ConcreteModel, phi: np.ndarray) -> None:
    """(23K)'s objective ``obj`` and rows ``margin`` on the model ``m`` of :func:`build_robust_kernel_23` (its sets,
    parameters and variables made), ``phi[i - 1]`` the coordinates of :math:`\\varphi(x^i)`. The :math:`\\nu`-term is
    written from the sum of the other points' coordinates, as (15)'s is (:func:`tpm_models.models.shapes.primal_plus`):
    for any :math:`w_c, t_c`,

    .. math::
        \\sum_{i\\in\\mathcal X_{-c}}\\big(\\langle w_c,\\varphi(x^i)\\rangle + \\rho_i t_c\\big)
        = \\Big(\\sum_{i\\in\\mathcal X_{-c}}\\varphi(x^i)\\Big)^{\\top} w_c
        + \\sum_{i\\in\\mathcal X_{-c}}\\rho_i t_c ,

    the same term with :math:`r` coefficients instead of :math:`m_{-c} r` products (each ``rho[i] * t`` kept:
    ``rho`` is mutable). Row ``i``'s :math:`\\langle w_c,\\varphi(x^i)\\rangle` is the ``LinearExpression`` that
    ``sum(m.phi[i, k] * m.w[k] for k in m.J)`` makes, built directly (:func:`~tpm_models.models.shapes.linear_row`)."""
    w = [m.w[k] for k in m.J]
    other_rows = np.asarray(list(m.X_minus_c), dtype=int) - 1
    m.obj = pyo.Objective(
        expr=0.5 * m.t**2
        + m.nu / len(m.X_minus_c) * (linear_row(phi[other_rows].sum(axis=0), w)
                                     + sum(m.rho[i] * m.t for i in m.X_minus_c))
        + m.nu * m.theta
        + m.alpha / len(m.X_c) * sum(m.xi[i] for i in m.X_c),
        sense=pyo.minimize,
    )
    m.margin = pyo.Constraint(
        m.X_c, rule=lambda m, i: linear_row(phi[i - 1], w) + m.theta - m.rho[i] * m.t + m.xi[i] >= 0,
        doc="<w, phi(x^i)> + theta - rho_i t >= -xi_i, stored with the constant on the right",
    )


# --------------------------------------------------------------------------- recovery, decision (20)


@dataclass(frozen=True)
class RobustKernelHyperplane(PlaneDistance):
    """The hyperplane :math:`\\langle w_c,\\varphi(x)\\rangle + \\theta_c = 0` of a solved (23K).

    Attributes
    ----------
    kernel : Kernel
    points : ndarray of shape (m, n)
        The training points.
    beta : ndarray of shape (m,)
        :math:`w_c = \\sum_j \\beta_j\\varphi(x^j)`.
    theta : float
        :math:`\\theta_c` by the rule of :mod:`tpm_models.models.recovery` on ``theta_interval``.
    theta_interval : tuple of float
        The optimal :math:`\\theta_c` for this :math:`w_c`.
    norm_w : float
        :math:`\\|w_c\\| = \\sqrt{\\beta^\\top K\\beta}`.
    """

    kernel: Kernel
    points: np.ndarray
    beta: np.ndarray
    theta: float
    theta_interval: tuple[float, float]
    norm_w: float

    def w_phi(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\langle w_c,\\varphi(x)\\rangle = \\sum_j\\beta_j k(x^j, x)` for each row of ``X``."""
        return self.kernel.gram(np.atleast_2d(np.asarray(X, dtype=float)), self.points) @ self.beta

    def gradient(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\nabla_x\\langle w_c,\\varphi(x)\\rangle` for each row of ``X`` (:func:`kernel_gradient`)."""
        return kernel_gradient(self.kernel, self.points, self.beta, X)


def recover_robust_kernel_23(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float, eps: float | np.ndarray,
    kernel: Kernel, w: np.ndarray, basis: SpanBasis | None = None,
) -> RobustKernelHyperplane:
    """:math:`\\beta`, :math:`\\|w_c\\|` and :math:`\\theta_c` from the solved ``w`` of (23K) (20-style).

    :math:`\\theta_c` is not read from the solver (errata 5): it is :func:`~tpm_models.models.recovery.choose_theta`
    on :func:`~tpm_models.models.recovery.theta_interval_primal` with the scores
    :math:`\\langle w_c,\\varphi(x^i)\\rangle - \\rho_i\\|w_c\\|` of the own points, as for the linear robust models.
    """
    X = check_features(X)
    y = check_labels(X, y)
    check_class(y, c)
    nu, alpha = check_nu_alpha(nu, alpha)
    basis = basis or span_basis(kernel, X)
    beta = basis.beta(w)
    K = kernel.gram(X, X)
    norm_w = float(np.sqrt(max(beta @ K @ beta, 0.0)))
    own = y == c
    rho = feature_radius(kernel, X, eps, p)
    scores = (K @ beta)[own] - rho[own] * norm_w
    interval = theta_interval_primal(-scores, nu, alpha)
    return RobustKernelHyperplane(kernel, X.copy(), beta, choose_theta(interval), interval, norm_w)


# --------------------------------------------------------------------------- the decision function's gradient


def kernel_gradient(kernel: Kernel, points: np.ndarray, beta: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """:math:`\\nabla_z \\sum_j \\beta_j k(x^j, z)` at each row :math:`z` of ``Z``, shape ``(len(Z), n)``."""
    return value_and_gradient(kernel, points, beta, Z)[1]


def _weighted_sum(G: np.ndarray, B: np.ndarray, points: np.ndarray) -> np.ndarray:
    """:math:`\\sum_m G_{zm} B_{mc}\\, x^m_n`, shape ``(len(G), C, n)``: one matrix product per column of ``B``
    (``einsum("zm,mc,mn->zcn")`` loops over the four indices: 15x slower on Wine's 1,068 x 178 Gram matrix)."""
    return np.matmul(G[None], B.T[:, :, None] * points[None]).transpose(1, 0, 2)


def value_and_gradient(kernel: Kernel, points: np.ndarray, beta: np.ndarray,
                       Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:math:`\\sum_j \\beta_j k(x^j, z)` and its gradient at each row of ``Z`` from one Gram matrix; ``beta`` of
    shape ``(m,)`` gives shapes ``(len(Z),)``, ``(len(Z), n)``, and of shape ``(m, C)`` (one column per
    hyperplane) ``(len(Z), C)``, ``(len(Z), C, n)``."""
    kernel = check_kernel_23k(kernel)
    Z = np.atleast_2d(np.asarray(Z, dtype=float))
    B = np.asarray(beta, dtype=float).reshape(len(points), -1)
    if kernel.name == "linear":
        W = B.T @ points  # (C, n)
        values, grads = Z @ W.T, np.broadcast_to(W, (len(Z), *W.shape)).copy()
    elif kernel.name == "gaussian":
        G = kernel.gram(Z, points)  # k(x^j, z)
        values = G @ B
        sigma = kernel.param("sigma")
        grads = (_weighted_sum(G, B, points) - values[:, :, None] * Z[:, None, :]) / sigma**2
    else:
        d = int(kernel.param("degree"))
        inner = (kernel.gamma or 0.0) + Z @ points.T
        values = inner**d @ B
        grads = _weighted_sum(d * inner ** (d - 1), B, points)
    if np.ndim(beta) == 1:
        return values[:, 0], grads[:, 0]
    return values, grads
