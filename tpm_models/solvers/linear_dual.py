"""The linear kernel's duals (4)/(5), (16) by a working-set method that keeps :math:`w` explicitly: no kernel rows.

The QP is :mod:`tpm_models.learn.decomposition`'s, for :math:`K = X_oX_o^\\top`. With the other set's mean
:math:`\\mu = \\frac1{m_{\\bar o}}X_{\\bar o}^\\top e` and :math:`c = \\nu\\mu` (so :math:`a r = X_o c`, as
:math:`a = \\nu/m_{\\bar o}` and :math:`r = X_oX_{\\bar o}^\\top e`):

.. math::
    \\min_\\lambda\\ f(\\lambda) = \\tfrac12\\lambda^\\top X_oX_o^\\top\\lambda - c^\\top X_o^\\top\\lambda
    = \\tfrac12\\|v\\|^2 - \\tfrac12\\|c\\|^2,\\qquad v = X_o^\\top\\lambda - c,
    \\quad\\text{s.t.}\\quad e^\\top\\lambda = \\nu,\\ \\ 0\\le\\lambda\\le u = \\frac{\\alpha}{m}.

:math:`v` is the recovery (6)/(17) (:math:`w_+ = X_+^\\top\\lambda_+ - \\frac{\\nu_+}{m_-}X_-^\\top e_-`) and, negated,
(7) (:math:`w_- = \\frac{\\nu_-}{m_+}X_+^\\top e_+ - X_-^\\top\\lambda_-`), and the gradient of :math:`f` is the
vector of the own points' scores :math:`G = X_o v`: one product of :math:`O(n)` per point, where the kernel
path needs a kernel row of :math:`O(mn)` per working-set point.

The method (two levels of working sets: :data:`OUTER_WORKING_SET` maximal violators a pass, subproblems of
:data:`WORKING_SET` points among them; the stop of :func:`kkt_gap` on a :math:`v` recomputed from :math:`\\lambda`)
and its measurements: ``docs/notes/bench-estimators.md``, "The linear kernel". Used by the estimators
(:mod:`tpm_models.learn.linear_dual`) and the ``linear-decomposition`` backend of ``solve()``. Memory: the own set's
rows once and :math:`O(m_c)` vectors; nothing of size :math:`m_c\\times m_c`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from tpm_models.models.recovery import DEGENERATE_TOL
from tpm_models.solvers.working_sets import (
    ACCEPT_GAP_TOL,
    GAP_TOL,
    OUTER_PER_POINT,
    PROXIMAL,
    WORKING_SET,
    DecompositionResult,
    accept_at_cap,
    greedy_vertex,
    kkt_gap,
    select_working_set,
    solve_subproblem,
)
from tpm_models.validation import check_nu_alpha

log = logging.getLogger(__name__)

OUTER_WORKING_SET = 2048
"""Points of a pass's working set (the maximal violators of the full gradient; measured: module docstring)."""

INNER_GAP_FRACTION = 0.1
"""A pass's subproblems stop when the KKT gap within its working set is this fraction of the pass's gap (or the
tolerance): a smaller fraction spends more subproblems on points whose gradient the next pass corrects anyway, a
larger one more passes over all points."""


@dataclass(frozen=True)
class LinearDualResult(DecompositionResult):
    """:class:`~DecompositionResult` (``rows`` is 0: no kernel rows) with
    ``v`` :math:`= X_o^\\top\\lambda - \\nu\\mu` (the :math:`w` of (6)/(17), minus that of (7)), recomputed from
    ``lam``, and ``passes``: the products :math:`G = X_o v` over all own points."""

    v: np.ndarray = field(default_factory=lambda: np.zeros(0))
    passes: int = 0


def linear_dual_objective(result: LinearDualResult, other_mean: np.ndarray) -> float:
    """The dual's objective as printed (a maximisation, without the constant of errata 1) at ``result``:
    :math:`-\\tfrac12\\|v\\|^2 + \\tfrac12\\nu^2\\|\\mu\\|^2` with :math:`\\mu` = ``other_mean``."""
    c = result.nu * np.asarray(other_mean, dtype=float)
    return float(-0.5 * (result.v @ result.v) + 0.5 * (c @ c))


def _checked(X_own: object, other_mean: object, nu: float, alpha: float, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """``X_own`` as a finite 2-D float array with at least one row and ``other_mean`` as a finite vector of its
    width; :math:`0<\\nu\\le\\alpha` and ``tol`` > 0, else ``ValueError``."""
    X = np.ascontiguousarray(X_own, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"solve_linear_dual: X_own must be a 2-D array of points as rows (at least one point and "
                         f"one feature); got shape {X.shape}")
    mu = np.asarray(other_mean, dtype=float)
    if mu.shape != (X.shape[1],):
        raise ValueError(f"solve_linear_dual: other_mean must be a vector of the {X.shape[1]} features of X_own; "
                         f"got shape {mu.shape}")
    if not (np.isfinite(X).all() and np.isfinite(mu).all()):
        raise ValueError("solve_linear_dual: X_own and other_mean must be finite (NaN or inf found); impute or drop "
                         "those points")
    check_nu_alpha(nu, alpha, "solve_linear_dual")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"solve_linear_dual: tol must be a positive number; got {tol!r}")
    return X, mu


def _start(X: np.ndarray, c: np.ndarray, nu: float, u: float, working_set: int) -> tuple[np.ndarray, np.ndarray]:
    """``(lam, v)``: the uniform point, or the greedy vertex of its scores when that has the smaller
    :math:`\\|v\\|` (only for sets larger than a working set, as the decomposition does)."""
    m = len(X)
    lam = np.full(m, nu / m)
    v = (nu / m) * (np.ones(m) @ X) - c
    if m <= working_set:
        return lam, v
    vertex = greedy_vertex(X @ v, nu, u)
    v_vertex = vertex @ X - c
    return (lam, v) if v @ v < v_vertex @ v_vertex else (vertex, v_vertex)


def _improve_block(X_B: np.ndarray, lam_B: np.ndarray, v: np.ndarray, u: float, delta: float, working_set: int,
                   target: float, budget: int) -> int:
    """Subproblems on the pass's working set (rows ``X_B``, multipliers ``lam_B``, both updated in place, and
    ``v``) until its KKT gap is at most ``target`` or ``budget`` subproblems are solved; returns how many."""
    done = 0
    while done < budget:
        G_B = X_B @ v
        if kkt_gap(lam_B, G_B, u) <= target:
            break
        b = np.arange(len(lam_B)) if len(lam_B) <= working_set else select_working_set(lam_B, G_B, u, working_set)
        X_b, old = X_B[b], lam_B[b]
        new = solve_subproblem(X_b @ X_b.T, G_B[b], old, u, delta)
        lam_B[b] = new
        v += (new - old) @ X_b
        done += 1
    return done


def solve_linear_dual(
    X_own: object, other_mean: object, nu: float, alpha: float, *, tol: float = GAP_TOL,
    working_set: int = WORKING_SET, outer_working_set: int = OUTER_WORKING_SET, max_outer: int | None = None,
    accept_tol: float = ACCEPT_GAP_TOL,
) -> LinearDualResult:
    """The dual (module docstring) of the own points ``X_own`` (rows) against the other set's mean ``other_mean``
    (:math:`\\mu`), to the KKT gap ``tol`` :math:`\\cdot\\,\\nu\\kappa` (:math:`\\kappa=\\max_i\\|x^i\\|^2`). At
    ``max_outer`` subproblems (default ``1000 + OUTER_PER_POINT * m``): the result with ``converged=False`` and a
    :class:`~DecompositionWarning` if the gap is within ``accept_tol``
    :math:`\\cdot\\,\\nu\\kappa` and :math:`w` within :data:`~W_REL_TOL` of its
    bound, else :class:`~DecompositionError`. Bad inputs (not finite, wrong shapes,
    :math:`\\nu>\\alpha`) raise ``ValueError``."""
    start = time.perf_counter()
    X, mu = _checked(X_own, other_mean, nu, alpha, tol)
    m = len(X)
    u, c = alpha / m, nu * mu
    kappa = max(float(np.einsum("ij,ij->i", X, X).max()), np.finfo(float).tiny)
    tol_abs = tol * nu * kappa
    accept_abs = max(accept_tol * nu * kappa, tol_abs)
    delta = PROXIMAL * kappa
    cap = int(1000 + OUTER_PER_POINT * m) if max_outer is None else max_outer
    lam, v = _start(X, c, nu, u, working_set)
    iterations = passes = 0
    converged = True
    while True:
        G = X @ v
        passes += 1
        gap = kkt_gap(lam, G, u)
        if gap <= tol_abs or iterations >= cap:  # judged on v recomputed from lam, without the updates' rounding
            passes += int(gap <= tol_abs)  # a confirmation counts as a pass; the recomputation at the cap does not
            v = lam @ X - c
            G = X @ v
            gap = kkt_gap(lam, G, u)
            if gap <= tol_abs:
                break
        if iterations >= cap:
            accept_at_cap(f"the linear working-set method on {m} points", cap, gap, nu, tol_abs, accept_abs,
                          float(v @ v), (DEGENERATE_TOL * nu) ** 2 * kappa,
                          "the data may have classes alike (w near 0)")
            converged = False
            break
        B = np.arange(m) if m <= outer_working_set else select_working_set(lam, G, u, outer_working_set)
        lam_B = lam[B]
        iterations += _improve_block(X[B], lam_B, v, u, delta, working_set, max(tol_abs, INNER_GAP_FRACTION * gap),
                                     max(1, min(cap - iterations, max(10, len(B) // 8))))
        lam[B] = lam_B
    seconds = time.perf_counter() - start
    log.debug("linear dual: m=%d, %d passes, %d subproblems, gap %.3g, %.3f s", m, passes, iterations, gap, seconds)
    return LinearDualResult(lam, G, gap, tol_abs, iterations, 0, seconds, converged, nu, kappa, v, passes)
