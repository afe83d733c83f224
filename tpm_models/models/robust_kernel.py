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
import pyomo.environ as pyo

from tpm_models.kernels import Kernel
from tpm_models.models.multiclass import class_sets
from tpm_models.models.norms import check_p, check_radii, worst_case_delta
from tpm_models.models.recovery import choose_theta, theta_interval_primal
from tpm_models.models.registry import register_model
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
        return np.sqrt(-2.0 * np.expm1(-(R**2) / (2.0 * kernel.sigma**2)))
    d = int(kernel.degree)
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
def build_robust_kernel_23(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, kernel: Kernel, p: float,
    eps: float | np.ndarray,
) -> pyo.ConcreteModel:
    """(23K) Robust kernel model: (23) with :math:`p=2` in the feature space, radii :math:`\\rho_i`.

    .. math::
        \\min\\ \\tfrac12 t_c^2 + \\frac{\\nu_c}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}
        \\big(\\langle w_c,\\varphi(x^i)\\rangle + \\rho_i t_c\\big) + \\nu_c\\theta_c
        + \\frac{\\alpha_c}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i}
        \\quad\\text{s.t.}\\quad \\langle w_c,\\varphi(x^i)\\rangle + \\theta_c - \\rho_i t_c \\ge -\\xi_{c,i}
        \\ (i\\in\\mathcal X_c),\\ \\ t_c \\ge \\|w_c\\|,\\ \\ \\xi_{c,i}\\ge0

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
    # the components of shapes.skeleton with data_name="phi", the data by a rule (3x faster than a dict here)
    m = pyo.ConcreteModel(name=f"(23K) robust kernel model, {kernel}, class {c}, p={p:g}")
    m.J = pyo.RangeSet(basis.phi.shape[1], doc="coordinates k = 1..r in an orthonormal basis of span{phi(x^j)}")
    for set_name, members, doc in (own, other):
        m.add_component(set_name, pyo.Set(initialize=members, ordered=True, doc=doc))
    used = sorted(own[1] + other[1])
    m.phi = pyo.Param(used, m.J, initialize=lambda m, i, k: float(basis.phi[i - 1, k - 1]),
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

    def phi_w(i: int) -> pyo.Expression:
        return sum(m.phi[i, k] * m.w[k] for k in m.J)

    m.obj = pyo.Objective(
        expr=0.5 * m.t**2
        + m.nu / len(m.X_minus_c) * sum(phi_w(i) + m.rho[i] * m.t for i in m.X_minus_c)
        + m.nu * m.theta
        + m.alpha / len(m.X_c) * sum(m.xi[i] for i in m.X_c),
        sense=pyo.minimize,
    )
    m.margin = pyo.Constraint(
        m.X_c, rule=lambda m, i: phi_w(i) + m.theta - m.rho[i] * m.t + m.xi[i] >= 0,
        doc="<w, phi(x^i)> + theta - rho_i t >= -xi_i, stored with the constant on the right",
    )
    return m


# --------------------------------------------------------------------------- recovery, decision (20)


@dataclass(frozen=True)
class RobustKernelHyperplane:
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

    def score(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\langle w_c,\\varphi(x)\\rangle + \\theta_c` for each row of ``X``."""
        return self.w_phi(X) + self.theta

    def distance(self, X: np.ndarray) -> np.ndarray:
        """Signed distance :math:`(\\langle w_c,\\varphi(x)\\rangle+\\theta_c)/\\|w_c\\|` of (20)."""
        if self.norm_w == 0.0:
            raise ValueError("w = 0: the hyperplane is degenerate and has no distance")
        return self.score(X) / self.norm_w


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


# --------------------------------------------------------------------------- worst cases in input space


def kernel_gradient(kernel: Kernel, points: np.ndarray, beta: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """:math:`\\nabla_z \\sum_j \\beta_j k(x^j, z)` at each row :math:`z` of ``Z``, shape ``(len(Z), n)``."""
    return _value_and_gradient(kernel, points, beta, Z)[1]


def _value_and_gradient(kernel: Kernel, points: np.ndarray, beta: np.ndarray, Z: np.ndarray):
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
        grads = (np.einsum("zm,mc,mn->zcn", G, B, points) - values[:, :, None] * Z[:, None, :]) / kernel.sigma**2
    else:
        d = int(kernel.degree)
        inner = (kernel.gamma or 0.0) + Z @ points.T
        values = inner**d @ B
        grads = np.einsum("zm,mc,mn->zcn", d * inner ** (d - 1), B, points)
    if np.ndim(beta) == 1:
        return values[:, 0], grads[:, 0]
    return values, grads


def project(delta: np.ndarray, p: float, eps: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``delta`` (last axis) onto :math:`\\{\\|\\delta\\|_p\\le\\varepsilon\\}`,
    :math:`p\\in\\{1,2,\\infty\\}`; ``eps`` broadcasts against ``delta[..., 0]``."""
    p = check_p(p)
    eps = np.asarray(eps, dtype=float)[..., None]
    if math.isinf(p):
        return np.clip(delta, -eps, eps)
    if p == 2.0:
        norm = np.linalg.norm(delta, axis=-1, keepdims=True)
        return delta * np.minimum(1.0, eps / np.maximum(norm, 1e-300))
    if p == 1.0:  # soft thresholding at the level that puts the row on the sphere (Duchi et al. 2008)
        a = np.abs(delta)
        inside = a.sum(axis=-1, keepdims=True) <= eps
        u = -np.sort(-a, axis=-1)
        k = np.arange(1, a.shape[-1] + 1)
        level = (np.cumsum(u, axis=-1) - eps) / k
        count = (u > level).sum(axis=-1, keepdims=True)
        tau = np.take_along_axis(level, count - 1, axis=-1)
        return np.where(inside, delta, np.sign(delta) * np.maximum(a - np.maximum(tau, 0.0), 0.0))
    raise ValueError(f"the projection is implemented for p in {{1, 2, inf}}, got p={p:g}")


def perturbation_samples(n: int, p: float, eps: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` perturbations with :math:`\\|\\delta\\|_p\\le\\varepsilon_i` per radius, shape
    ``(len(eps), count, n)``: half on the sphere :math:`\\|\\delta\\|_p=\\varepsilon_i` (directions
    ``normal * exponential``, as :func:`tpm_models.checks.robust.check_oracle`), half inside (radius
    scaled by :math:`U^{1/n}`); for :math:`p = \\infty` a quarter are vertices of the box."""
    p = check_p(p)
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    z = rng.normal(size=(len(eps), count, n)) * rng.exponential(size=(len(eps), count, 1))
    z /= np.maximum(np.linalg.norm(z, ord=p, axis=-1, keepdims=True), 1e-300)
    scale = np.where(np.arange(count) < count // 2, 1.0, rng.uniform(size=count) ** (1.0 / n))
    delta = z * scale[None, :, None] * eps[:, None, None]
    if math.isinf(p):
        vertices = count // 4
        delta[:, -vertices:] = rng.choice([-1.0, 1.0], size=(len(eps), vertices, n)) * eps[:, None, None]
    return delta


SEARCH_STARTS = 6
"""Starts of :func:`worst_case_search` per point: the linearised worst case
(:func:`tpm_models.models.norms.worst_case_delta` of the gradient at :math:`x^i`), :math:`\\delta = 0`, and
random points of the sphere."""

SEARCH_ITERATIONS = 100
"""Most projected-gradient steps of :func:`worst_case_search` per start."""

SEARCH_STEP_TOL = 1e-6
""":func:`worst_case_search` stops when every start's step is below this fraction of the radius (steps grow by
1.5 when they improve the value and halve when not, so the point no longer moves)."""


def worst_case_search(
    plane: RobustKernelHyperplane, X: np.ndarray, p: float, eps: float | np.ndarray, sense: int = -1,
    starts: int = SEARCH_STARTS, iterations: int = SEARCH_ITERATIONS, seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """A local search for :math:`\\min` (``sense=-1``) or :math:`\\max` (``sense=+1``) of
    :math:`\\langle w_c,\\varphi(x+\\delta)\\rangle` over :math:`\\|\\delta\\|_p\\le\\varepsilon_i` for each row
    :math:`x` of ``X``; :math:`p \\in \\{1, 2, \\infty\\}`.

    Projected gradient with the exact Euclidean projection (:func:`project`) and a step per start that
    grows on success and halves on failure (monotone), from :data:`SEARCH_STARTS` starts; returns the best
    value per row and its :math:`\\delta`. A lower (upper) bound on the true minimum (maximum): the value is
    attained at a point of the set.
    """
    if sense not in (-1, 1):
        raise ValueError(f"sense must be -1 (minimise) or +1 (maximise), got {sense}")
    X = np.atleast_2d(np.asarray(X, dtype=float))
    N, n = X.shape
    radii = check_radii(eps, N)
    rng = np.random.default_rng(seed)
    grad0 = sense * plane.gradient(X)
    first = np.array([worst_case_delta(g, p, r) for g, r in zip(grad0, radii)])
    rest = perturbation_samples(n, p, radii, max(2 * (starts - 2), 2), rng)[:, : starts - 2]
    D = np.concatenate([first[:, None], np.zeros((N, 1, n)), rest], axis=1)[:, :starts]
    S = D.shape[1]
    R = np.broadcast_to(radii[:, None], (N, S))
    centre = np.broadcast_to(X[:, None, :], D.shape)

    def evaluate(D):
        f, g = _value_and_gradient(plane.kernel, plane.points, plane.beta, (centre + D).reshape(-1, n))
        g = sense * g.reshape(N, S, n)
        return sense * f.reshape(N, S), g / np.maximum(np.linalg.norm(g, axis=-1, keepdims=True), 1e-300)

    f, G = evaluate(D)
    step = l2_radius(R, p, n).copy()
    cap, finest = 2.0 * step, SEARCH_STEP_TOL * step
    for _ in range(iterations):
        trial = project(D + step[..., None] * G, p, R)
        f_trial, G_trial = evaluate(trial)
        better = f_trial > f
        D = np.where(better[..., None], trial, D)
        f = np.where(better, f_trial, f)
        G = np.where(better[..., None], G_trial, G)
        step = np.where(better, np.minimum(1.5 * step, cap), 0.5 * step)
        if np.all(step < finest):
            break
    best = np.argmax(f, axis=1)
    return sense * f[np.arange(N), best], D[np.arange(N), best]


@dataclass(frozen=True)
class SafetyReport:
    """What :func:`safety_report` measured on one solved (23K).

    Attributes
    ----------
    sampled_violation : float
        :math:`\\max` over :math:`i\\in\\mathcal X_c` and the sampled :math:`\\delta` of
        :math:`-(\\langle w_c,\\varphi(x^i+\\delta)\\rangle+\\theta_c+\\xi_{c,i})`, clipped at 0: how far a robust row
        of the solver's point is violated at a perturbed point (exact kernel).
    search_violation : float
        The same at the local search's worst :math:`\\delta` (:func:`worst_case_search`).
    sampled_ratio : float
        :math:`\\max_i` of the largest sampled change of :math:`\\langle w_c,\\varphi(x)\\rangle` over
        :math:`\\mathcal U_p(x^i)` divided by the model's bound :math:`\\rho_i\\|w_c\\|` (decrease for
        :math:`\\mathcal X_c`, the rows; increase for :math:`\\mathcal X_{-c}`, the objective terms).
        Safe: :math:`\\le 1`.
    search_ratios : ndarray of shape (m,)
        Per point, the same ratio for the local search's worst case: how much of the bound the exact
        worst case uses (1 = the bound is attained, smaller = conservative).
    samples : int
        Perturbations evaluated in all.
    """

    sampled_violation: float
    search_violation: float
    sampled_ratio: float
    search_ratios: np.ndarray
    samples: int


def safety_report(
    X: np.ndarray, y: np.ndarray, c: object, p: float, eps: float | np.ndarray, plane: RobustKernelHyperplane,
    theta: float, xi: np.ndarray, samples: int = 400, starts: int = SEARCH_STARTS, seed: int = 0,
) -> SafetyReport:
    """Sampled and searched perturbations of every training point against a solved (23K) (:class:`SafetyReport`).

    ``theta`` and ``xi`` (one per point of class ``c``, in row order) are the solver's; ``plane`` gives
    :math:`\\beta` and :math:`\\|w_c\\|`. The bound compared with is :math:`\\rho_i\\|w_c\\| \\le \\rho_i t_c`, the
    stronger statement.
    """
    X = check_features(X)
    y = check_labels(X, y)
    radii = check_radii(eps, len(X))
    bound = feature_radius(plane.kernel, X, radii, p) * plane.norm_w
    rng = np.random.default_rng(seed)
    centre = plane.w_phi(X)
    sampled, searched = np.zeros(len(X)), np.zeros(len(X))
    violation = {}
    # the rows (own points) may only lose, the objective terms (other points) only gain, rho_i |w|
    for rows, sense in ((y == c, -1), (y != c, 1)):
        delta = perturbation_samples(X.shape[1], p, radii[rows], samples, rng)
        moved = (X[rows][:, None, :] + delta).reshape(-1, X.shape[1])
        values = plane.w_phi(moved).reshape(len(delta), samples)
        found, _ = worst_case_search(plane, X[rows], p, radii[rows], sense, starts, seed=seed)
        for out, change in ((sampled, (sense * (values - centre[rows][:, None])).max(axis=1)),
                            (searched, sense * (found - centre[rows]))):
            out[rows] = np.divide(change, bound[rows], out=np.zeros(len(change)), where=bound[rows] > 0)
        if sense == -1:
            base = theta + np.asarray(xi, dtype=float)
            violation["sampled"] = float(max(0.0, -(values.min(axis=1) + base).min()))
            violation["search"] = float(max(0.0, -(found + base).min()))
    return SafetyReport(violation["sampled"], violation["search"], float(sampled.max()), searched, samples * len(X))


ATTACK_STARTS = 4
"""Starts per (point, other class) of :func:`decision_attack_search`: the linearised attack, and random points
of the sphere."""

ATTACK_ITERATIONS = 60
"""Projected-gradient steps of :func:`decision_attack_search` (with :data:`SEARCH_STEP_TOL` as stopping rule)."""


def decision_attack_search(
    kernel: Kernel, points: np.ndarray, beta: np.ndarray, theta: np.ndarray, degenerate: np.ndarray,
    X: np.ndarray, y: np.ndarray, p: float, eps: float, starts: int = ATTACK_STARTS,
    iterations: int = ATTACK_ITERATIONS, seed: int = 0,
) -> np.ndarray:
    """Rows of ``X`` that a perturbation :math:`\\|\\delta\\|_p\\le\\varepsilon` found by a local search moves away
    from class ``y`` under decision (20) (``True`` = moved; a row already wrong counts as moved);
    :math:`p \\in \\{1, 2, \\infty\\}`.

    ``beta[:, c]`` expands :math:`w_c = \\sum_j` ``beta[j, c]`` :math:`\\varphi(x^j)` over ``points``; a degenerate
    hyperplane is at distance :math:`+\\infty` and never the nearest, ties go to the first class (as
    :func:`tpm_models.experiments.robust.predict`). For each point and each other live class :math:`c'`,
    projected gradient ascent on :math:`d_y(x+\\delta) - d_{c'}(x+\\delta)` (distances of (20)) from
    :data:`ATTACK_STARTS` starts; every point tried is a perturbation of the set, and the point counts as moved if
    any of them is classified otherwise. A search, not a proof: the count of points it moves is a lower bound
    on what the exact worst case moves.
    """
    X = np.atleast_2d(np.asarray(X, dtype=float))
    y = np.asarray(y)
    B = np.asarray(beta, dtype=float)
    norms = np.sqrt(np.maximum(np.einsum("mc,mk,kc->c", B, kernel.gram(points, points), B), 0.0))
    live = ~np.asarray(degenerate, dtype=bool)
    scale = np.where(live, norms, 1.0)

    def distances(Z):
        values, grads = _value_and_gradient(kernel, points, B, Z)
        score = values + theta
        d = np.where(live, np.abs(score) / scale, np.inf)
        return d, np.sign(score)[:, :, None] * grads / scale[:, None]

    d0, _ = distances(X)
    moved = np.argmin(d0, axis=1) != y
    pairs = [(i, t) for i in np.flatnonzero(~moved) for t in np.flatnonzero(live) if t != y[i]]
    if not pairs or eps == 0:
        return moved
    rows, targets = np.array(pairs).T
    P, n = len(rows), X.shape[1]
    rng = np.random.default_rng(seed)
    own = y[rows]

    def objective(D):
        """:math:`d_y - d_{c'}`, its normalised gradient, and whether the point is classified otherwise."""
        d, g = distances((X[rows][:, None, :] + D).reshape(-1, n))
        d, g = d.reshape(P, D.shape[1], -1), g.reshape(P, D.shape[1], *g.shape[1:])
        mine, theirs = own[:, None, None], targets[:, None, None]
        f = np.take_along_axis(d, mine, 2)[..., 0] - np.take_along_axis(d, theirs, 2)[..., 0]
        gf = np.take_along_axis(g, mine[..., None], 2)[:, :, 0] - np.take_along_axis(g, theirs[..., None], 2)[:, :, 0]
        gf /= np.maximum(np.linalg.norm(gf, axis=-1, keepdims=True), 1e-300)
        return f, gf, np.argmin(d, axis=2) != own[:, None]

    _, g0, _ = objective(np.zeros((P, 1, n)))
    first = np.array([worst_case_delta(g, p, eps) for g in g0[:, 0]])
    D = np.concatenate([first[:, None], perturbation_samples(n, p, np.full(P, eps), 2 * starts, rng)[:, : starts - 1]],
                       axis=1)
    f, G, flipped = objective(D)
    hit = flipped.any(axis=1)
    step = np.full(f.shape, float(l2_radius(eps, p, n)))
    cap, finest = 2.0 * step, SEARCH_STEP_TOL * step
    for _ in range(iterations):
        trial = project(D + step[..., None] * G, p, eps)
        f_trial, G_trial, flipped = objective(trial)
        hit |= flipped.any(axis=1)
        better = f_trial > f
        D = np.where(better[..., None], trial, D)
        f = np.where(better, f_trial, f)
        G = np.where(better[..., None], G_trial, G)
        step = np.where(better, np.minimum(1.5 * step, cap), 0.5 * step)
        if np.all(step < finest):
            break
    moved[rows[hit]] = True
    return moved




