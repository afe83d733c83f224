"""Fast path for the robust counterpart (23): numpy + Clarabel, no Pyomo model.

For class :math:`c` (points :math:`X_c`, :math:`m_c` rows; the others :math:`X_{-c}`, :math:`m_{-c}` rows) and one
radius :math:`\\varepsilon`, (23) is written with the norm epigraph :math:`r \\ge \\|w\\|_{p'}` (tight at the optimum:
:math:`r` only raises the objective) in Clarabel's form :math:`\\min \\tfrac12 x^\\top Px + q^\\top x` s.t.
:math:`Ax + s = b`, :math:`s \\in \\mathcal K`, with :math:`x = (w, \\theta, \\xi, r, a)`:

.. math::
    \\min\\ \\tfrac12\\|w\\|_2^2 + \\frac{\\nu}{m_{-c}} e^\\top X_{-c} w + \\nu\\varepsilon r + \\nu\\theta
    + \\frac{\\alpha}{m_c} e^\\top\\xi
    \\quad\\text{s.t.}\\quad X_c w + e\\theta - \\varepsilon r e + \\xi \\ge 0,\\ \\ \\xi \\ge 0,
    \\ \\ r \\ge \\|w\\|_{p'}

(the objective's :math:`\\frac{\\nu}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}\\varepsilon\\|w\\|_{p'}` is
:math:`\\nu\\varepsilon\\|w\\|_{p'}`). The norm rows, by :math:`p' = p/(p-1)`:

* :math:`p' = \\infty` (:math:`p = 1`): :math:`\\pm w_j \\le r` (nonnegative cone);
* :math:`p' = 1` (:math:`p = \\infty`): :math:`\\pm w_j \\le a_j`, :math:`e^\\top a \\le r`;
* :math:`p' = 2`: :math:`(r, w) \\in \\mathrm{SOC}(n+1)`;
* otherwise: :math:`e^\\top a \\le r` and :math:`(a_j, r, w_j) \\in \\mathcal K_{\\mathrm{pow}}(1/p')`, i.e.
  :math:`|w_j|^{p'} \\le a_j r^{p'-1}`, so :math:`\\sum_j |w_j|^{p'} \\le r^{p'}`.

At :math:`\\varepsilon = 0` (the deterministic (15)) there is no :math:`r` and no norm row. Clarabel runs with the
settings of ``solve(model, "clarabel")`` (:func:`tpm_models.solvers.clarabel_runs.clarabel_solve`);
``tests/learn/test_fastconic.py`` ties the solutions to the registry builder of (23) solved by ``solve()``.

When every run stops ``AlmostSolved`` short of the accepted tolerance (a primal residual stalled at ~1e-7 while the
gap is 1e-12: digits, class 4, p = 2, eps = 0.05, nu = 0.5), the point is repaired -- :math:`r = \\|w\\|_{p'}`,
the optimal :math:`\\theta` for :math:`w` (:func:`~tpm_models.models.recovery.theta_interval_primal`), the least
:math:`\\xi` -- which makes it feasible, and it is taken when its value is within ``ClarabelSettings.accept_tol``
(relative to ``max(1, |value|)``) of Clarabel's dual value (with a dual residual within the same tolerance): a
duality-gap certificate of the repaired point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tpm_models.models.norms import check_p, conjugate
from tpm_models.models.recovery import choose_theta, theta_interval_primal
from tpm_models.solvers.clarabel_runs import CLARABEL_STATUS, DEFAULT_SETTINGS, clarabel_solve
from tpm_models.solvers.common import Termination
from tpm_models.solvers.cones import Cone, ConeKind


@dataclass
class Dense23Solution:
    """What Clarabel returned on one class model of (23)."""

    termination: Termination
    objective: float
    w: np.ndarray
    theta: float
    message: str

    @property
    def optimal(self) -> bool:
        return self.termination is Termination.OPTIMAL


def solve_23_dense(Xc: np.ndarray, Xo: np.ndarray, nu: float, alpha: float, p: float, eps: float,
                   time_limit: float | None = None) -> Dense23Solution:
    """(23) for one class (module docstring) by Clarabel; ``objective`` is (23)'s value at the point returned."""
    p = check_p(p)
    q_norm = conjugate(p)
    Xc, Xo = np.asarray(Xc, dtype=float), np.asarray(Xo, dtype=float)
    m, n = Xc.shape
    robust = eps > 0
    n_aux = n if robust and q_norm != math.inf and q_norm != 2.0 else 0
    iw, it, ixi = 0, n, n + 1
    ir = n + 1 + m
    ia = ir + (1 if robust else 0)
    nx = ia + n_aux
    P = sp.csc_matrix((np.ones(n), (np.arange(n), np.arange(n))), shape=(nx, nx))
    q = np.zeros(nx)
    q[iw:iw + n] = nu / len(Xo) * Xo.sum(axis=0)
    q[it] = nu
    q[ixi:ixi + m] = alpha / m
    if robust:
        q[ir] = nu * eps
    rows, cones = _margin_rows(Xc, eps, nx, ixi, ir)
    if robust:
        norm_rows, norm_cones = _norm_rows(q_norm, n, nx, iw, ir, ia)
        rows += norm_rows
        cones += norm_cones
    A = sp.vstack(rows).tocsc()
    b = np.zeros(A.shape[0])
    run = clarabel_solve(sp.triu(P).tocsc(), q, A, b, cones, time_limit)
    status, x = run.status, run.x
    w, theta = x[iw:iw + n], float(x[it])
    norm = 0.0 if not robust else float(np.linalg.norm(w, q_norm))
    objective = _objective(Xc, Xo, nu, alpha, eps, w, theta, norm)
    message = run.message
    if status == "AlmostSolved" and np.isfinite(x).all():
        # the point repaired: r = ||w||, the optimal theta for w, the least xi; Clarabel's dual value bounds it below
        interval = theta_interval_primal(-(Xc @ w - eps * norm), nu, alpha)
        repaired = _objective(Xc, Xo, nu, alpha, eps, w, choose_theta(interval), norm)
        bound = run.obj_val_dual
        accept = DEFAULT_SETTINGS.accept_tol
        if run.r_dual <= accept and repaired - bound <= accept * max(1.0, abs(repaired)):
            status, theta, objective = "Solved", choose_theta(interval), repaired
            message += f"; repaired point within {repaired - bound:.1e} of Clarabel's dual value"
    return Dense23Solution(CLARABEL_STATUS.get(status, Termination.ERROR), objective, w, theta, message)


def _margin_rows(Xc: np.ndarray, eps: float, nx: int, ixi: int, ir: int) -> tuple[list[sp.csr_matrix], list[Cone]]:
    """The rows (nonnegative cone, ``s = -A x``) of the margins :math:`X_c w + e\\theta - \\varepsilon r e + \\xi
    \\ge 0` (no :math:`r` at :math:`\\varepsilon = 0`) and of :math:`\\xi \\ge 0`."""
    m, n = Xc.shape
    margin = sp.hstack([sp.csr_matrix(-Xc), sp.csr_matrix(-np.ones((m, 1))), -sp.identity(m, format="csr"),
                        sp.csr_matrix((m, nx - (n + 1 + m)))]).tocsr()
    if eps > 0:
        margin = margin.tolil()
        margin[:, ir] = eps
        margin = margin.tocsr()
    xi = sp.hstack([sp.csr_matrix((m, ixi)), -sp.identity(m, format="csr"), sp.csr_matrix((m, nx - ixi - m))]).tocsr()
    return [margin, xi], [Cone(ConeKind.NONNEG, m), Cone(ConeKind.NONNEG, m)]


def _norm_rows(q_norm: float, n: int, nx: int, iw: int, ir: int, ia: int) -> tuple[list[sp.csr_matrix], list[Cone]]:
    """The rows of :math:`r \\ge \\|w\\|_{p'}` by :math:`p'` (module docstring), ``s = -A x`` in each cone."""
    rows: list[sp.csr_matrix] = []
    cones: list[Cone] = []

    def nonneg(block: sp.spmatrix) -> None:  # block @ x <= 0
        rows.append(sp.csr_matrix(block))
        cones.append(Cone(ConeKind.NONNEG, block.shape[0]))

    def place(block_w: sp.spmatrix | None, col_r: float | None, block_a: sp.spmatrix | None,
              k: int) -> sp.csr_matrix:
        parts = sp.lil_matrix((k, nx))
        if block_w is not None:
            parts[:, iw:iw + n] = block_w
        if col_r is not None:
            parts[:, ir] = col_r
        if block_a is not None:
            parts[:, ia:ia + n] = block_a
        return parts.tocsr()

    eye = sp.identity(n, format="csr")
    if q_norm == math.inf:  # +-w_j - r <= 0
        nonneg(place(eye, -1.0, None, n))
        nonneg(place(-eye, -1.0, None, n))
    elif q_norm == 1.0:  # +-w_j - a_j <= 0, e'a - r <= 0
        nonneg(place(eye, None, -eye, n))
        nonneg(place(-eye, None, -eye, n))
        nonneg(place(None, -1.0, sp.csr_matrix(np.ones((1, n))), 1))
    elif q_norm == 2.0:  # (r, w) in SOC
        block = sp.lil_matrix((n + 1, nx))
        block[0, ir] = -1.0
        block[1:, iw:iw + n] = -eye
        rows.append(block.tocsr())
        cones.append(Cone(ConeKind.SOC, n + 1))
    else:  # e'a - r <= 0; (a_j, r, w_j) in Kpow(1/q)
        nonneg(place(None, -1.0, sp.csr_matrix(np.ones((1, n))), 1))
        for j in range(n):
            block = sp.lil_matrix((3, nx))
            block[0, ia + j] = -1.0
            block[1, ir] = -1.0
            block[2, iw + j] = -1.0
            rows.append(block.tocsr())
            cones.append(Cone(ConeKind.POW, 3, 1.0 / q_norm))
    return rows, cones


def _objective(Xc: np.ndarray, Xo: np.ndarray, nu: float, alpha: float, eps: float, w: np.ndarray, theta: float,
               norm: float) -> float:
    """(23) at ``(w, theta)`` with the least feasible xi (``norm`` = ||w||_p')."""
    xi = np.maximum(0.0, -(Xc @ w + theta - eps * norm))
    return float(0.5 * w @ w + nu / len(Xo) * Xo.sum(axis=0) @ w + nu * eps * norm + nu * theta
                 + alpha / len(Xc) * xi.sum())
