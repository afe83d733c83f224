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
  needs only the kernel sums :math:`K_{oo}e` and :math:`r`
  (:func:`tpm_models.learn.kernel_sums.group_kernel_sums`, one pass over the points in blocks, no
  :math:`m\\times m` array), or the greedy vertex built from it, whichever has the lower
  objective (:func:`_start`).
* **Working set.** With :math:`I_{up} = \\{\\lambda_i < u\\}` and :math:`I_{low} = \\{\\lambda_i > 0\\}`, the
  ``working_set/2`` points of :math:`I_{up}` with the smallest :math:`G_i` and those of :math:`I_{low}`
  with the largest (the maximal violating pairs, first order).
* **Subproblem.** The QP in the working set :math:`B` with the others fixed, exactly solved by DAQP
  (dense active set; PIQP if DAQP fails; :func:`solve_box_qp`): :math:`\\min \\tfrac12\\lambda_B^\\top K_{BB}\\lambda_B
  + (G_B - K_{BB}\\lambda_B^{old})^\\top\\lambda_B` s.t. :math:`e^\\top\\lambda_B = e^\\top\\lambda_B^{old}`,
  :math:`0\\le\\lambda_B\\le u`. The gradient is updated with the kernel rows of :math:`B` only,
  :math:`G \\mathrel{+}= K_{oB}(\\lambda_B - \\lambda_B^{old})`; rows are kept in a cache of
  ``cache_mb`` megabytes.
* **Stop.** The KKT conditions hold with the multiplier :math:`\\rho` of :math:`e^\\top\\lambda=\\nu`
  (:math:`-\\rho = \\theta`) when :math:`\\max_{I_{low}} G \\le \\min_{I_{up}} G`; the solver stops when the
  violation ``gap`` :math:`= \\max_{I_{low}} G - \\min_{I_{up}} G \\le` ``tol`` :math:`\\cdot\\,\\nu\\kappa`,
  :math:`\\kappa = \\max_i k(x^i, x^i)`. What that means (all absolute; :attr:`DecompositionResult.w_bound`
  and :attr:`DecompositionResult.theta_bound` give the numbers):

  - the objective is within ``gap`` :math:`\\cdot\\,\\nu` of the optimum
    (:math:`f(\\lambda) - f^* \\le \\nabla f(\\lambda)^\\top(\\lambda - \\lambda^*) \\le \\text{gap}\\,\\nu`),
    so :math:`\\|w - w^*\\|^2 \\le 2\\,\\text{gap}\\,\\nu` (:math:`f` is :math:`\\tfrac12\\|w\\|^2` plus a
    constant on the feasible set, and :math:`f(\\lambda)-f^* \\ge \\tfrac12\\|w-w^*\\|^2` there);
  - the interval of :math:`\\theta` of errata 5 (:func:`tpm_models.models.recovery.kkt_theta`) is inverted by
    exactly ``gap`` (its ends are :math:`-\\min_{I_{up}}G` and :math:`-\\max_{I_{low}}G`), and the
    :math:`\\theta` chosen in it is within ``gap`` of a :math:`\\theta` optimal for this :math:`w` (the primal's
    slopes in :math:`\\theta` change sign in it, as :math:`e^\\top\\lambda=\\nu`);
  - the scores :math:`G_i` are within :math:`\\|w-w^*\\|\\sqrt\\kappa` of the optimal ones, and the optimal
    :math:`\\theta` for a :math:`w` moves no more than the scores do (order statistics,
    :func:`tpm_models.models.recovery.theta_interval_primal`), so :math:`\\theta` is within
    ``gap`` :math:`+\\sqrt{2\\,\\text{gap}\\,\\nu\\kappa}` of a :math:`\\theta` optimal for :math:`w^*`,
    and a decision value :math:`\\langle w,\\varphi(x)\\rangle+\\theta` within
    :math:`\\sqrt{2\\,\\text{gap}\\,\\nu\\, k(x,x)}` + ``theta_bound`` of the optimal one.

  The bound on :math:`w` is absolute: when :math:`\\|w\\|` is itself as small as it (classes with the same
  distribution), the normal stop does not determine :math:`w`'s direction; :data:`W_REL_TOL` is applied at the
  cap only.
* **Cap.** After ``max_outer`` subproblems (:data:`OUTER_PER_POINT`) the solution is returned with
  ``converged=False`` and a :class:`DecompositionWarning` if its gap is within :data:`ACCEPT_GAP_TOL`
  :math:`\\cdot\\,\\nu\\kappa` (the bounds above, with the gap reached), else
  :class:`DecompositionError` is raised. Nothing is returned without the gap it reached.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict

import numpy as np

from tpm_models.kernels import Kernel
from tpm_models.learn.kernel_sums import block_rows, kernel_block, self_kernel
from tpm_models.models.recovery import DEGENERATE_TOL
from tpm_models.solvers.working_sets import (  # noqa: F401  (re-exported: the decomposition's names)
    ACCEPT_GAP_TOL,
    BOUND_SNAP,
    GAP_TOL,
    OUTER_PER_POINT,
    PROXIMAL,
    SUBPROBLEM_OPTIONS,
    SUBPROBLEM_SOLVER,
    W_REL_TOL,
    WORKING_SET,
    DecompositionError,
    DecompositionResult,
    DecompositionWarning,
    accept_at_cap,
    greedy_vertex,
    kkt_gap,
    select_working_set,
    snap_to_bounds,
    solve_box_qp,
    solve_subproblem,
)

log = logging.getLogger(__name__)

CACHE_MB = 256.0
"""Megabytes of kernel rows kept between iterations."""


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
    lam = greedy_vertex(G, nu, u)
    support = np.flatnonzero(lam)
    G = q.copy()
    sq = (X_own * X_own).sum(axis=1)
    step = block_rows(m)
    for s in range(0, len(support), step):
        idx = support[s:s + step]
        G += lam[idx] @ kernel_block(kernel, X_own[idx], X_own, sq)
    uniform = np.full(m, nu / m)
    G_uniform = (nu / m) * np.asarray(own_sums, dtype=float) + q
    if uniform @ (G_uniform + q) < lam @ (G + q):
        return uniform, G_uniform
    return lam, G


def solve_decomposition(
    kernel: Kernel, X_own: np.ndarray, own_sums: np.ndarray, q: np.ndarray, nu: float, alpha: float, *,
    tol: float = GAP_TOL, working_set: int = WORKING_SET, cache_mb: float = CACHE_MB, max_outer: int | None = None,
    accept_tol: float = ACCEPT_GAP_TOL, w_offset: float | None = None,
) -> DecompositionResult:
    """The dual (module docstring) of the points ``X_own`` (rows), from ``own_sums`` :math:`= K_{oo}e` and
    its linear term ``q`` :math:`= -a r = -a K(X_o, X_{\\bar o})e`
    (:func:`tpm_models.learn.kernel_sums.group_kernel_sums`), to the KKT gap ``tol`` :math:`\\cdot\\,\\nu\\kappa`.
    When ``max_outer`` subproblems do not reach it: the result with
    ``converged=False`` and a :class:`DecompositionWarning` if its gap is within ``accept_tol``
    :math:`\\cdot\\,\\nu\\kappa`, else :class:`DecompositionError`. With ``w_offset`` (the constant
    :math:`a^2 e^\\top K(X_{\\bar o},X_{\\bar o})e`, so that
    :math:`\\langle w,w\\rangle = \\lambda^\\top(G+q)` + ``w_offset``) both also need
    the bound of :data:`W_REL_TOL` on :math:`w` to be returned at the cap."""
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
    gap = kkt_gap(lam, G, u)
    accept_abs = max(accept_tol * nu * max(kappa, np.finfo(float).tiny), tol_abs)
    w_floor_sq = (DEGENERATE_TOL * nu) ** 2 * kappa

    while gap > tol_abs:
        if iterations >= max_outer:
            w_w = None if w_offset is None else float(lam @ (G + q)) + w_offset
            accept_at_cap(f"the decomposition of {m} points", max_outer, gap, nu, tol_abs, accept_abs, w_w, w_floor_sq,
                          f"a kernel that is not positive semidefinite on these points ({kernel}, the sigmoid can be) "
                          "makes the dual nonconvex")
            return DecompositionResult(lam, G, gap, tol_abs, iterations, rows.computed, time.perf_counter() - start,
                                       converged=False, nu=nu, kappa=kappa)
        B = np.arange(m) if m <= working_set else select_working_set(lam, G, u, working_set)
        K_B = rows.rows(B)  # (|B|, m)
        K_BB = K_B[:, B]
        old = lam[B]
        new = solve_subproblem(K_BB, G[B], old, u, delta)
        lam[B] = new
        G += (new - old) @ K_B
        iterations += 1
        gap = kkt_gap(lam, G, u)
    seconds = time.perf_counter() - start
    log.debug("decomposition: m=%d, %d subproblems, %d kernel rows, gap %.3g, %.3f s", m, iterations,
              rows.computed, gap, seconds)
    return DecompositionResult(lam, G, gap, tol_abs, iterations, rows.computed, seconds, nu=nu, kappa=kappa)
