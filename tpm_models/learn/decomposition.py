"""The scalable fit path: the duals (4)/(5), (12)/(13), (16), (19) by decomposition, kernel rows on demand.

All six duals are one QP (:func:`tpm_models.models.shapes.dual_matrices`). For the points of the own set
:math:`X_o` (:math:`X_c`, :math:`X_+` or :math:`X_-`, :math:`m` of them) against the other set
:math:`X_{\\bar o}` (:math:`m_{\\bar o}` points), as the minimisation of the negated objective:

.. math::
    \\min_\\lambda\\ f(\\lambda) = \\tfrac12\\lambda^\\top K_{oo}\\lambda - a\\,r^\\top\\lambda
    \\quad\\text{s.t.}\\quad e^\\top\\lambda = \\nu,\\ \\ 0\\le\\lambda\\le u,
    \\qquad a = \\frac{\\nu}{m_{\\bar o}},\\ \\ r = K(X_o, X_{\\bar o})\\,e,\\ \\ u = \\frac{\\alpha}{m}.

On :math:`e^\\top\\lambda = \\nu` this is the one-class SVM dual on the features centred at the mean
:math:`\\mu` of the other set, :math:`f(\\lambda) = \\tfrac12\\|\\sum_i\\lambda_i(\\varphi(x^i)-\\mu)\\|^2
- \\tfrac12\\nu^2\\|\\mu\\|^2` (``docs/derivations.md``, "The duals are one-class SVMs"), so it is solved like
one: a decomposition method (Joachims' SVMlight; Chang & Lin's libsvm for the working-set rule) that never
holds :math:`K_{oo}`.

* **State.** :math:`\\lambda` and the gradient :math:`G = K_{oo}\\lambda - a r`, which is also the score
  :math:`G_i = \\langle w, \\varphi(x^i)\\rangle` of every own point (:math:`w` of (6)/(17)/(20)).
* **Start.** :math:`\\lambda = \\frac{\\nu}{m}e` (feasible as :math:`\\nu\\le\\alpha`, errata 6), whose gradient
  needs only the kernel sums :math:`K_{oo}e` and :math:`r` (:func:`group_kernel_sums`, one pass over the
  points in blocks, no :math:`m\\times m` array), or the greedy vertex built from it, whichever has the lower
  objective (:func:`_start`).
* **Working set.** With :math:`I_{up} = \\{\\lambda_i < u\\}` and :math:`I_{low} = \\{\\lambda_i > 0\\}`, the
  ``working_set/2`` points of :math:`I_{up}` with the smallest :math:`G_i` and those of :math:`I_{low}`
  with the largest (the maximal violating pairs, first order).
* **Subproblem.** The QP in the working set :math:`B` with the others fixed, exactly solved by DAQP
  (dense active set; PIQP if DAQP fails): :math:`\\min \\tfrac12\\lambda_B^\\top K_{BB}\\lambda_B
  + (G_B - K_{BB}\\lambda_B^{old})^\\top\\lambda_B` s.t. :math:`e^\\top\\lambda_B = e^\\top\\lambda_B^{old}`,
  :math:`0\\le\\lambda_B\\le u`. The gradient is updated with the kernel rows of :math:`B` only,
  :math:`G \\mathrel{+}= K_{oB}(\\lambda_B - \\lambda_B^{old})`; rows are kept in a cache of
  ``cache_mb`` megabytes.
* **Stop.** The KKT conditions hold with the multiplier :math:`\\rho` of :math:`e^\\top\\lambda=\\nu`
  (:math:`-\\rho = \\theta`) when :math:`\\max_{I_{low}} G \\le \\min_{I_{up}} G`; the solver stops when the
  violation ``gap`` :math:`= \\max_{I_{low}} G - \\min_{I_{up}} G \\le` ``tol`` :math:`\\cdot\\,\\nu\\kappa`,
  :math:`\\kappa = \\max_i k(x^i, x^i)`. What that means: every own point's score is within the stopping
  gap of the KKT conditions, so the interval of :math:`\\theta` of errata 5
  (:func:`tpm_models.models.recovery.kkt_theta`) is exact up to ``gap`` (it can be inverted by at most
  ``gap``), and the objective is within ``gap`` :math:`\\cdot\\,\\nu` of the optimum
  (:math:`f(\\lambda) - f^* \\le \\nabla f(\\lambda)^\\top(\\lambda - \\lambda^*) \\le \\text{gap}\\,\\nu`),
  so :math:`\\|w - w^*\\|^2 \\le 2\\,\\text{gap}\\,\\nu` (:math:`f` is :math:`\\tfrac12\\|w\\|^2` plus a
  constant on the feasible set, and :math:`w \\mapsto \\tfrac12\\|w\\|^2` is 1-strongly convex).
* **Cap.** After ``max_outer`` subproblems (:data:`OUTER_PER_POINT`) the solution is returned with
  ``converged=False`` and a :class:`DecompositionWarning` if its gap is within :data:`ACCEPT_GAP_TOL`
  :math:`\\cdot\\,\\nu\\kappa` (the bounds above, with the gap reached), else
  :class:`DecompositionError` is raised. Nothing is returned without the gap it reached.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from ctypes import c_int
from dataclasses import dataclass

import daqp
import numpy as np
import piqp
from threadpoolctl import ThreadpoolController

from tpm_models.kernels import Kernel
from tpm_models.learn.fastqp import DAQP_SETTINGS
from tpm_models.models.recovery import FREE_TOL, kkt_theta
from tpm_models.solvers.common import DENSE_QP_TOL, ITERATION_LIMIT

log = logging.getLogger(__name__)

GAP_TOL = 1e-9
"""Default stopping tolerance of :func:`solve_decomposition`, relative to :math:`\\nu\\kappa` (the scale of
the scores :math:`G_i`: :math:`|\\langle w,\\varphi(x)\\rangle| \\le \\|w\\|\\sqrt\\kappa \\le 2\\nu\\kappa`).
The dense path solves to :data:`tpm_models.solvers.common.DENSE_QP_TOL` and agrees with the Pyomo duals to
about 1e-8 in :math:`w`; 1e-9 keeps the decomposition's objective within 1e-9 relative of it."""

WORKING_SET = 64
"""Points per working set (the subproblem's size). Own sets up to this size are solved in one subproblem."""

CACHE_MB = 256.0
"""Megabytes of kernel rows kept between iterations."""

BLOCK_MB = 32.0
"""Megabytes of kernel entries computed at once by :func:`group_kernel_sums` and :func:`expansion_values`."""

PROXIMAL = 1e-8
"""Weight :math:`\\delta/\\kappa` of the proximal term :math:`\\tfrac\\delta2\\|\\lambda_B-\\lambda_B^{old}\\|^2`
added to every subproblem: the Gram blocks are singular (the linear kernel has rank at most :math:`n`, repeated points
make any kernel singular); with it DAQP solves a strictly convex QP in one active-set pass."""

DAQP_STRICT = {**DAQP_SETTINGS, "eps_prox": 0.0}
"""DAQP's settings for the strictly convex subproblems: those of the fast path without its proximal loop."""

BOUND_SNAP = 1e-12
"""A subproblem's multiplier within ``BOUND_SNAP * u`` of a bound is put on it: DAQP's proximal iterations
leave multipliers of active bounds ~1e-30 off them, which would count them as free in the working sets."""

OUTER_PER_POINT = 0.5
"""Cap on the decomposition's subproblems: ``1000 + OUTER_PER_POINT * m`` (measured: 10-600 on
:math:`m_c` up to 18,750 on ``make_classification`` sets). At the cap the result is accepted, with a
:class:`DecompositionWarning`, if its gap is within :data:`ACCEPT_GAP_TOL`, else
:class:`DecompositionError` is raised."""

ACCEPT_GAP_TOL = 1e-7
"""The looser KKT gap (relative to :math:`\\nu\\kappa`, like :data:`GAP_TOL`) that a solve stopped by its cap
must meet to be returned, with a :class:`DecompositionWarning` that reports the gap reached and what it
bounds (objective within ``gap`` :math:`\\cdot\\,\\nu`, :math:`\\|w-w^*\\| \\le \\sqrt{2\\,\\text{gap}\\,\\nu}`), and
``converged=False`` on the result. Nearly flat duals reach it where :data:`GAP_TOL` would take ten times the
cap: the Gaussian kernel on points much closer than :math:`\\sigma` is numerically of low rank
(uniform points in :math:`[0,1]^5`, :math:`\\sigma=1`: 675 of 4,000 eigenvalues above :math:`10^{-10}` of the
largest), the optimum then has thousands of free multipliers, and first-order working sets converge
sublinearly on it. A gap above it at the cap raises :class:`DecompositionError`: a kernel that is not
positive semidefinite on the data (the sigmoid kernel can be) makes the QP nonconvex and is the usual
reason."""


@functools.cache
def _threadpools() -> ThreadpoolController:
    """The process's BLAS thread pools, found once (``threadpoolctl`` reads the loaded libraries: ~10 ms)."""
    return ThreadpoolController()


ONE_THREAD_MIN_POINTS = 2000
"""From this many points on, :func:`fit_planes` and :func:`plane_distances` run BLAS on one thread. Finding
the thread pools costs ~0.1 s once per process (``threadpoolctl`` reads every loaded library), more than a
whole fit below this size, where the products are small anyway."""


def one_blas_thread(m: int):
    """A context in which BLAS runs on one thread when ``m >= ONE_THREAD_MIN_POINTS`` (:func:`fit_planes`,
    :func:`plane_distances`): their products are a working set's rows or one kernel block, and multithreaded
    OpenBLAS on such products was measured 10x slower on this shared 2-core machine."""
    if m < ONE_THREAD_MIN_POINTS:
        return contextlib.nullcontext()
    return _threadpools().limit(limits=1, user_api="blas")


def self_kernel(kernel: Kernel, X: np.ndarray) -> np.ndarray:
    """:math:`k(x^i, x^i)` for every row of ``X``: 1 for the Gaussian kernel, :math:`\\|x^i\\|^2` for the linear
    one (both without :meth:`tpm_models.kernels.Kernel.diagonal`'s Gram blocks, which cost a fit's worth of
    time at 1,000 points), :meth:`~tpm_models.kernels.Kernel.diagonal` for the others."""
    if kernel.name == "gaussian":
        return np.ones(len(X))
    if kernel.name == "linear":
        return np.einsum("ij,ij->i", X, X)
    return kernel.diagonal(X)


class DecompositionError(RuntimeError):
    """The decomposition did not reach :data:`ACCEPT_GAP_TOL` within its cap (or a subproblem was not solved)."""


class DecompositionWarning(UserWarning):
    """The decomposition stopped at its cap with a gap between :data:`GAP_TOL` and :data:`ACCEPT_GAP_TOL`:
    the solution is returned with the gap it reached (``DecompositionResult.gap``, ``converged=False``)."""


def _block_rows(m_columns: int, block_mb: float = BLOCK_MB) -> int:
    return max(1, int(block_mb * 2**20 / (8 * max(1, m_columns))))


def kernel_block(kernel: Kernel, A: np.ndarray, B: np.ndarray, sq_B: np.ndarray | None = None) -> np.ndarray:
    """:math:`K(A, B)` as :meth:`tpm_models.kernels.Kernel.gram` computes it; for the Gaussian kernel in place
    (one ``A @ B.T`` array, no temporaries of its size: the blocks here are the scalable path's main cost),
    with ``sq_B`` the squared norms of ``B``'s rows when known. Equal to ``kernel.gram(A, B)`` to rounding."""
    if kernel.name != "gaussian":
        return kernel.gram(A, B)
    inv = 1.0 / (2.0 * kernel.sigma**2)
    sq_B = (B * B).sum(axis=1) if sq_B is None else sq_B
    K = A @ B.T
    K *= 2.0 * inv
    K -= ((A * A).sum(axis=1) * inv)[:, None]
    K -= (sq_B * inv)[None, :]
    np.minimum(K, 0.0, out=K)
    return np.exp(K, out=K)


FACTOR_LIMIT = 600.0
"""The Gaussian sums use :math:`k(a,b) = f(a)f(b)e^{2\\gamma a^\\top b}` (:math:`f(x) = e^{-\\gamma\\|x\\|^2}`,
:math:`\\gamma = 1/(2\\sigma^2)`): one product and one ``exp`` per entry instead of five passes over the block.
It is used when :math:`2\\gamma\\max_i\\|x^i\\|^2 \\le` ``FACTOR_LIMIT`` (no overflow; relative error
about :math:`2\\gamma|a^\\top b|` ulps, like the distance form's), else the distance form."""


def _gaussian_factors(kernel: Kernel, *point_sets: np.ndarray) -> tuple[float, list[np.ndarray]] | None:
    """:math:`(2\\gamma, [f(X) \\text{ for each set}])` when the factored Gaussian form applies, else None."""
    if kernel.name != "gaussian":
        return None
    gamma = 1.0 / (2.0 * kernel.sigma**2)
    sqs = [(P * P).sum(axis=1) for P in point_sets]
    if 2.0 * gamma * max(float(sq.max(initial=0.0)) for sq in sqs) > FACTOR_LIMIT:
        return None
    return 2.0 * gamma, [np.exp(-gamma * sq) for sq in sqs]


def group_kernel_sums(kernel: Kernel, X: np.ndarray, groups: np.ndarray, n_groups: int, rows: np.ndarray | None = None,
                      block_mb: float = BLOCK_MB) -> np.ndarray:
    """:math:`S_{ig} = \\sum_{j:\\,g_j = g} k(x, x^j)` for every point ``x`` of ``rows`` (default ``X``) and
    every group ``g`` (the classes): shape ``(len(rows), n_groups)``, computed by blocks of rows of at most
    ``block_mb`` megabytes (no ``len(rows) x len(X)`` array). For the linear kernel it is
    :math:`x^\\top(\\sum_{j:\\,g_j=g} x^j)`, exact and :math:`O(mn)`.

    Everything the duals need of the other set comes from these sums: :math:`r = K(X_o, X_{\\bar o})e` is
    the sum of the other groups' columns over the own rows, and :math:`e^\\top K(X_{\\bar o},X_{\\bar o})e`
    their sum over the other rows.
    """
    X = np.asarray(X, dtype=float)
    onehot = np.zeros((len(X), n_groups))
    onehot[np.arange(len(X)), groups] = 1.0
    if kernel.name == "linear":
        R = X if rows is None else np.atleast_2d(np.asarray(rows, dtype=float))
        return R @ (X.T @ onehot)
    step = _block_rows(len(X), block_mb)
    R = X if rows is None else np.atleast_2d(np.asarray(rows, dtype=float))
    factors = _gaussian_factors(kernel, R, X)
    if factors is not None:
        two_gamma, (f_R, f_X) = factors
        W = f_X[:, None] * onehot
        if rows is not None:
            return f_R[:, None] * _exp_products(R, X, W, two_gamma, step)
        out = np.zeros((len(X), n_groups))  # symmetric: blocks on and above the diagonal only
        for s in range(0, len(X), step):
            E = (two_gamma * X[s:s + step]) @ X[s:].T
            np.exp(E, out=E)
            out[s:s + step] += f_X[s:s + step, None] * (E @ W[s:])
            out[s + step:] += f_X[s + step:, None] * (E[:, step:].T @ W[s:s + step])
        return out
    sq = (X * X).sum(axis=1)
    if rows is not None:
        R = np.atleast_2d(np.asarray(rows, dtype=float))
        out = np.empty((len(R), n_groups))
        for s in range(0, len(R), step):
            out[s:s + step] = kernel_block(kernel, R[s:s + step], X, sq) @ onehot
        return out
    out = np.zeros((len(X), n_groups))  # K(X, X) is symmetric: blocks on and above the diagonal only
    for s in range(0, len(X), step):
        block = kernel_block(kernel, X[s:s + step], X[s:], sq[s:])  # rows s.., columns s..
        out[s:s + step] += block @ onehot[s:]
        out[s + step:] += block[:, step:].T @ onehot[s:s + step]
    return out


def _exp_products(A: np.ndarray, B: np.ndarray, W: np.ndarray, two_gamma: float, step: int) -> np.ndarray:
    """:math:`e^{2\\gamma AB^\\top}W` by blocks of ``step`` rows of ``A``."""
    out = np.empty((len(A), W.shape[1]))
    for s in range(0, len(A), step):
        E = (two_gamma * A[s:s + step]) @ B.T
        np.exp(E, out=E)
        out[s:s + step] = E @ W
    return out


def expansion_values(kernel: Kernel, X_train: np.ndarray, coef: np.ndarray, X: np.ndarray,
                     block_mb: float = BLOCK_MB) -> np.ndarray:
    """:math:`K(X, X_{train})\\,C` for expansion coefficients ``coef`` (``(m_train, k)``), by blocks of rows:
    :math:`\\langle w,\\varphi(x)\\rangle` of (20) for every column of ``coef``. Linear kernel:
    :math:`X (X_{train}^\\top C)`."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    if kernel.name == "linear":
        return X @ (X_train.T @ coef)
    step = _block_rows(len(X_train), block_mb)
    factors = _gaussian_factors(kernel, X, X_train)
    if factors is not None:
        two_gamma, (f_X, f_train) = factors
        return f_X[:, None] * _exp_products(X, X_train, f_train[:, None] * coef, two_gamma, step)
    out = np.empty((len(X), coef.shape[1]))
    sq = (X_train * X_train).sum(axis=1)
    for s in range(0, len(X), step):
        out[s:s + step] = kernel_block(kernel, X[s:s + step], X_train, sq) @ coef
    return out


class KernelRows:
    """Rows :math:`k(x^i, X)` of the own set's Gram matrix on demand, the latest ``cache_mb`` megabytes kept
    (least recently used dropped first)."""

    def __init__(self, kernel: Kernel, X: np.ndarray, cache_mb: float = CACHE_MB):
        self.kernel, self.X = kernel, X
        self.sq = (X * X).sum(axis=1)
        self.capacity = max(2 * WORKING_SET, int(cache_mb * 2**20 / (8 * max(1, len(X)))))
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self.computed = 0

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """The rows ``idx`` of :math:`K(X, X)`, shape ``(len(idx), m)``."""
        missing = [i for i in idx.tolist() if i not in self._cache]
        if missing:
            fresh = kernel_block(self.kernel, self.X[missing], self.X, self.sq)
            self.computed += len(missing)
            for i, row in zip(missing, fresh):
                self._cache[i] = row
        out = np.empty((len(idx), len(self.X)))
        for k, i in enumerate(idx.tolist()):
            out[k] = self._cache[i]
            self._cache.move_to_end(i)
        while len(self._cache) > self.capacity:
            self._cache.popitem(last=False)
        return out


@dataclass(frozen=True)
class DecompositionResult:
    """The solution of the dual and how it was reached.

    ``lam``: :math:`\\lambda`; ``gradient``: :math:`G = K_{oo}\\lambda - a r` (the own points' scores
    :math:`\\langle w,\\varphi(x^i)\\rangle`); ``gap``: the final KKT violation
    :math:`\\max_{I_{low}}G - \\min_{I_{up}}G` (absolute); ``tol``: the absolute tolerance it met;
    ``iterations``: subproblems solved; ``rows``: kernel rows computed; ``seconds``: wall time;
    ``converged``: whether ``gap <= tol`` (False: stopped at the cap within :data:`ACCEPT_GAP_TOL`, with a
    :class:`DecompositionWarning`)."""

    lam: np.ndarray
    gradient: np.ndarray
    gap: float
    tol: float
    iterations: int
    rows: int
    seconds: float
    converged: bool = True

    def objective(self, r: np.ndarray, a: float) -> float:
        """The dual's objective as printed (a maximisation, without the constant of errata 1):
        :math:`-\\tfrac12\\lambda^\\top K_{oo}\\lambda + a r^\\top\\lambda = -\\tfrac12\\lambda^\\top(G - a r)
        + a r^\\top\\lambda`."""
        return float(-0.5 * self.lam @ (self.gradient + a * r) + a * (r @ self.lam))


def _kkt_gap(lam: np.ndarray, G: np.ndarray, u: float) -> float:
    up, low = lam < u, lam > 0.0
    if not up.any() or not low.any():
        return 0.0
    return float(G[low].max() - G[up].min())


def _select(lam: np.ndarray, G: np.ndarray, u: float, q: int) -> np.ndarray:
    """The working set: ``q/2`` points of :math:`I_{up}` with the smallest :math:`G`, ``q/2`` of
    :math:`I_{low}` with the largest (a point in both may be picked once)."""
    half = max(1, q // 2)
    up = np.flatnonzero(lam < u)
    low = np.flatnonzero(lam > 0.0)
    if len(up) > half:
        up = up[np.argpartition(G[up], half - 1)[:half]]
    if len(low) > half:
        low = low[np.argpartition(-G[low], half - 1)[:half]]
    return np.union1d(up, low)


def solve_box_qp(P: np.ndarray, c: np.ndarray, total: float, upper: float) -> np.ndarray:
    """:math:`\\min \\tfrac12 x^\\top P x + c^\\top x` s.t. :math:`e^\\top x = ` ``total``,
    :math:`0\\le x\\le` ``upper`` (the subproblem, ``P`` positive definite), by DAQP (:data:`DAQP_STRICT`),
    PIQP if DAQP fails; the result is clipped to the bounds
    and multipliers within :data:`BOUND_SNAP` of a bound put on it."""
    m = len(c)
    A = np.ones((1, m))
    bu = np.concatenate([np.full(m, upper), [total]])
    bl = np.concatenate([np.zeros(m), [total]])
    sense = np.concatenate([np.zeros(m), [5]]).astype(c_int)
    x, _, flag, _ = daqp.solve(np.ascontiguousarray(P), c, A, bu, bl, sense, **DAQP_STRICT)
    if flag in (1, 2):
        return _snap(np.asarray(x, dtype=float), upper)
    s = piqp.DenseSolver()
    st = s.settings
    st.verbose = False
    st.eps_abs = st.eps_rel = DENSE_QP_TOL
    st.check_duality_gap = True
    st.eps_duality_gap_abs = st.eps_duality_gap_rel = DENSE_QP_TOL
    st.max_iter = ITERATION_LIMIT
    s.setup(np.asfortranarray(P), c, np.asfortranarray(A), np.array([total]), None, None, None,
            np.zeros(m), np.full(m, upper))
    status = s.solve()
    if status != piqp.PIQP_SOLVED:
        raise DecompositionError(f"the subproblem of {m} points was solved neither by DAQP (exit flag {flag}) "
                                 f"nor by PIQP ({status})")
    return _snap(np.asarray(s.result.x, dtype=float), upper)


def _snap(x: np.ndarray, upper: float) -> np.ndarray:
    x = np.clip(x, 0.0, upper)
    x[x <= BOUND_SNAP * upper] = 0.0
    x[x >= upper * (1.0 - BOUND_SNAP)] = upper
    return x


def _start(kernel: Kernel, X_own: np.ndarray, own_sums: np.ndarray, q: np.ndarray, nu: float, u: float,
           working_set: int) -> tuple[np.ndarray, np.ndarray]:
    """The first point and its gradient. Small sets: :math:`\\lambda = \\frac{\\nu}{m}e`, whose gradient is
    :math:`\\frac{\\nu}{m}K_{oo}e + q` (the kernel sums). Larger ones: the greedy vertex that puts :math:`u`
    on the :math:`\\lfloor\\nu/u\\rfloor` points of smallest such gradient (the points the uniform start
    scores lowest, the ones the optimum pushes to the bound) and the rest of :math:`\\nu` on the next one;
    its gradient costs the kernel rows of those points, by blocks. Of the two, the one of lower objective
    :math:`f = \\tfrac12\\lambda^\\top(G + q)`: the vertex when the optimum has few free multipliers (most
    sets), the uniform point when it has many (a kernel of low numerical rank on the points)."""
    m = len(X_own)
    lam = np.full(m, nu / m)
    G = (nu / m) * np.asarray(own_sums, dtype=float) + q
    if m <= working_set:
        return lam, G
    k = int(np.floor(nu / u * (1.0 + 1e-12)))
    order = np.argsort(G, kind="stable")
    lam = np.zeros(m)
    lam[order[:k]] = u
    if k < m:
        lam[order[k]] = nu - k * u
    support = np.flatnonzero(lam)
    G = q.copy()
    sq = (X_own * X_own).sum(axis=1)
    step = _block_rows(m)
    for s in range(0, len(support), step):
        idx = support[s:s + step]
        G += lam[idx] @ kernel_block(kernel, X_own[idx], X_own, sq)
    uniform = np.full(m, nu / m)
    G_uniform = (nu / m) * np.asarray(own_sums, dtype=float) + q
    if uniform @ (G_uniform + q) < lam @ (G + q):
        return uniform, G_uniform
    return _snap(lam, u), G


def solve_decomposition(
    kernel: Kernel, X_own: np.ndarray, own_sums: np.ndarray, q: np.ndarray, nu: float, alpha: float, *,
    tol: float = GAP_TOL, working_set: int = WORKING_SET, cache_mb: float = CACHE_MB, max_outer: int | None = None,
    accept_tol: float = ACCEPT_GAP_TOL,
) -> DecompositionResult:
    """The dual (module docstring) of the points ``X_own`` (rows), from ``own_sums`` :math:`= K_{oo}e` and
    its linear term ``q`` :math:`= -a r = -a K(X_o, X_{\\bar o})e` (:func:`group_kernel_sums`), to the KKT gap ``tol``
    :math:`\\cdot\\,\\nu\\kappa`. When ``max_outer`` subproblems do not reach it: the result with
    ``converged=False`` and a :class:`DecompositionWarning` if its gap is within ``accept_tol``
    :math:`\\cdot\\,\\nu\\kappa`, else :class:`DecompositionError`."""
    start = time.perf_counter()
    X_own = np.asarray(X_own, dtype=float)
    m = len(X_own)
    u = alpha / m
    q = np.asarray(q, dtype=float)
    lam, G = _start(kernel, X_own, own_sums, q, nu, u, working_set)
    kappa = float(np.abs(self_kernel(kernel, X_own)).max())
    tol_abs = tol * nu * max(kappa, np.finfo(float).tiny)
    rows = KernelRows(kernel, X_own, cache_mb)
    max_outer = int(1000 + OUTER_PER_POINT * m) if max_outer is None else max_outer
    delta = PROXIMAL * max(kappa, np.finfo(float).tiny)
    iterations = 0
    gap = _kkt_gap(lam, G, u)
    accept_abs = max(accept_tol * nu * max(kappa, np.finfo(float).tiny), tol_abs)
    while gap > tol_abs:
        if iterations >= max_outer:
            if gap > accept_abs:
                raise DecompositionError(
                    f"the decomposition of {m} points stopped at its cap of {max_outer} subproblems with the KKT "
                    f"gap {gap:.3g} > {accept_abs:.3g} (accept_tol). Is the kernel positive semidefinite on these "
                    f"points ({kernel})? A sigmoid kernel can make the dual nonconvex; otherwise raise max_outer "
                    "or use backend='dense' on a subsample")
            seconds = time.perf_counter() - start
            message = (f"the decomposition of {m} points stopped at its cap of {max_outer} subproblems with the KKT "
                       f"gap {gap:.3g} > {tol_abs:.3g} (tol) but <= {accept_abs:.3g} (accept_tol): the dual objective "
                       f"is within {gap * nu:.3g} of the optimum and |w - w*| <= {np.sqrt(2.0 * gap * nu):.3g}; "
                       "raise max_outer for the tighter tolerance")
            log.warning(message)
            warnings.warn(message, DecompositionWarning, stacklevel=2)
            return DecompositionResult(lam, G, gap, tol_abs, iterations, rows.computed, seconds, converged=False)
        B = np.arange(m) if m <= working_set else _select(lam, G, u, working_set)
        K_B = rows.rows(B)  # (|B|, m)
        K_BB = K_B[:, B]
        old = lam[B]
        # the proximal subproblem: + (delta/2)|lam_B - old|^2 makes it strictly convex (DAQP without its own
        # proximal loop) and changes no fixed point: a step that leaves lam_B = old solves the subproblem
        P = K_BB + delta * np.eye(len(B))
        new = solve_box_qp(P, G[B] - P @ old, float(old.sum()), u)
        lam[B] = new
        G += (new - old) @ K_B
        iterations += 1
        gap = _kkt_gap(lam, G, u)
    seconds = time.perf_counter() - start
    log.debug("decomposition: m=%d, %d subproblems, %d kernel rows, gap %.3g, %.3f s", m, iterations,
              rows.computed, gap, seconds)
    return DecompositionResult(lam, G, gap, tol_abs, iterations, rows.computed, seconds)


@dataclass(frozen=True)
class ExpansionPlane:
    """A hyperplane of the scalable path: :math:`\\langle w,\\varphi(x)\\rangle = K(x, X_{train})\\,\\beta` with
    expansion coefficients :math:`\\beta` over the training points (:math:`\\sigma\\lambda_i` on the own set,
    :math:`-\\sigma\\nu/m_{\\bar o}` on the other: (6), (7), (17), (20)). Same fields and rule for
    :math:`\\theta` (errata 5, :func:`tpm_models.models.recovery.kkt_theta`) as
    :class:`tpm_models.models.recovery.Hyperplane`; :math:`\\langle w,w\\rangle` is computed once at fit
    from the gradient, so nothing of size :math:`m\\times m` is ever formed."""

    kernel: Kernel
    X_train: np.ndarray
    beta: np.ndarray  # (m_train,)
    lam: np.ndarray
    nu_over_m_other: float
    sign: int
    theta: float
    theta_interval: tuple[float, float]
    free: np.ndarray
    theta_rule: str
    w_w: float
    result: DecompositionResult

    @property
    def norm_w(self) -> float:
        """:math:`\\sqrt{\\langle w,w\\rangle}`."""
        return float(np.sqrt(max(self.w_w, 0.0)))

    @property
    def w(self) -> np.ndarray:
        """:math:`w` in input space (linear kernel only)."""
        if self.kernel.name != "linear":
            raise ValueError(f"w is explicit only for the linear kernel, not {self.kernel}")
        return self.X_train.T @ self.beta

    def w_phi(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\langle w,\\varphi(x)\\rangle` for each row of ``X`` (blocks of rows)."""
        return expansion_values(self.kernel, self.X_train, self.beta[:, None], X)[:, 0]

    def score(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\langle w,\\varphi(x)\\rangle + \\theta`."""
        return self.w_phi(X) + self.theta

    def distance(self, X: np.ndarray) -> np.ndarray:
        """Signed distance :math:`(\\langle w,\\varphi(x)\\rangle+\\theta)/\\sqrt{\\langle w,w\\rangle}`."""
        if self.norm_w == 0.0:
            raise ValueError("w = 0: the hyperplane is degenerate and has no distance")
        return self.score(X) / self.norm_w


def fit_plane(
    kernel: Kernel, X: np.ndarray, sums: np.ndarray, groups: np.ndarray, own_group: int, nu: float, alpha: float,
    sign: int = 1, free_tol: float = FREE_TOL, **solver_options: object,
) -> ExpansionPlane:
    """Solve the dual of the group ``own_group`` of ``X`` against all other points and recover (6)/(7)/(17)/(20).

    ``sums`` are :func:`group_kernel_sums` of ``X`` by ``groups``; ``sign=+1`` for (4), (12), (16), (19)
    (recovery (6), (17), (20)), ``-1`` for (5), (13) (recovery (7)); the QP is the same.
    """
    own = groups == own_group
    m_own, m_other = int(own.sum()), int((~own).sum())
    if m_own == 0 or m_other == 0:
        raise ValueError(f"group {own_group} has {m_own} points and the rest {m_other}; need both > 0")
    a = nu / m_other
    own_sums = sums[own, own_group]
    r = sums[own].sum(axis=1) - own_sums  # K(X_o, X_other) e
    total_other = float(sums[~own].sum() - sums[~own, own_group].sum())  # e'K(X_other, X_other)e
    res = solve_decomposition(kernel, X[own], own_sums, -a * r, nu, alpha, **solver_options)
    lam, G = res.lam, res.gradient  # G_i = <w, phi(x^i)> for sign = +1
    theta, interval, free, rule = kkt_theta(-sign * G, lam, alpha / m_own, sign, free_tol)
    w_w = float(lam @ G - a * (r @ lam) + a * a * total_other)
    beta = np.where(own, 0.0, -a)
    beta[own] = lam
    return ExpansionPlane(kernel, X, sign * beta, lam, a, sign, theta, interval, free, rule, w_w, res)


def fit_planes(
    kernel: Kernel, X: np.ndarray, groups: np.ndarray, n_groups: int, specs: Sequence[tuple[int, float, float, int]],
    free_tol: float = FREE_TOL, **solver_options: object,
) -> list[ExpansionPlane]:
    """:func:`fit_plane` for each ``(own_group, nu, alpha, sign)`` of ``specs``, from one pass of
    :func:`group_kernel_sums`. BLAS runs on one thread here (``threadpoolctl``): the products are small
    (a working set's rows), and multithreaded OpenBLAS on such products is several times slower on a
    shared machine."""
    X = np.ascontiguousarray(X, dtype=float)
    groups = np.asarray(groups)
    with one_blas_thread(len(X)):
        sums = group_kernel_sums(kernel, X, groups, n_groups)
        return [fit_plane(kernel, X, sums, groups, g, nu, alpha, sign, free_tol, **solver_options)
                for g, nu, alpha, sign in specs]


def plane_distances(planes: Sequence[ExpansionPlane], X: np.ndarray) -> np.ndarray:
    """Signed distances :math:`(\\langle w,\\varphi(x)\\rangle+\\theta)/\\sqrt{\\langle w,w\\rangle}` of every
    row of ``X`` to every plane (planes fitted on the same training points), shape ``(len(X), len(planes))``,
    in one pass over the kernel blocks; a plane with :math:`w = 0` gets ``nan`` (the estimators leave
    degenerate planes out before dividing)."""
    beta = np.column_stack([p.beta for p in planes])
    theta = np.array([p.theta for p in planes])
    norm = np.array([p.norm_w for p in planes])
    with one_blas_thread(len(planes[0].X_train) + len(X)):
        values = expansion_values(planes[0].kernel, planes[0].X_train, beta, X)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norm > 0.0, (values + theta) / np.where(norm > 0.0, norm, 1.0), np.nan)
