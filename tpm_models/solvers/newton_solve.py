"""The linear algebra of the polish's Newton steps (:mod:`tpm_models.solvers.polish`): :math:`J\\,\\Delta = -F` solved
through the LU factors of the Ruiz-equilibrated, regularised :math:`J + \\rho\\,\\mathrm{diag}(\\text{reg})`
(:class:`Factors`) and iterative refinement on :math:`J` itself (:func:`refine`), so that the step is the one of
:math:`J`, not of the regularised matrix; at scale the factors of a run's first step are reused by the next steps
(:data:`POLISH_REUSE`) and the matrix is ordered with its dense rows and columns last (:func:`dense_last`).

One concern: factorising and solving a Newton system. What the system is (the faces, the residual, the Jacobian)
is :mod:`tpm_models.solvers.polish`'s.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

POLISH_REG = 1e-9
"""The proximal regularisation of each Newton system (removed by iterative refinement)."""
POLISH_REFINE = 20
"""Iterative refinement steps per Newton step at most."""
POLISH_SWEEPS = 5
"""Ruiz equilibration sweeps of each Newton system (:func:`equilibrate`)."""

POLISH_REUSE = 1e-14
"""When a Newton run keeps its factors (:func:`newton_step`'s ``kept``: the polish does from ``POLISH_LARGE``
unknowns on), a step is first solved with the factors of the run's first step (the Newton matrix changes only in
the cone blocks' rows) and iterative refinement on its own matrix; that step is taken when its residual
:math:`\\|J\\,step + F\\|_\\infty` is at most 1e-14 of :math:`\\max(1, \\|F\\|_\\infty)`, else the matrix is
factorised. Each polished point is still judged by its KKT residual (``POLISH_ACCEPT``)."""

POLISH_DENSE = 50
"""More nonzeros than this make a row or column of the Newton matrix *dense* for :func:`dense_last`."""


def equilibrate(M: sp.spmatrix, sweeps: int = POLISH_SWEEPS) -> tuple[np.ndarray, np.ndarray]:
    """Ruiz scaling: ``r``, ``c`` with the rows and columns of ``diag(r) M diag(c)`` of largest entry near 1 (the
    power cones' Hessians near their edges reach 1e8 beside entries of 1)."""
    R, C = sp.csr_matrix(M), sp.csc_matrix(M)
    R.sum_duplicates()
    C.sum_duplicates()
    row_data, col_data = np.abs(R.data), np.abs(C.data)
    row_has, col_has = np.diff(R.indptr) > 0, np.diff(C.indptr) > 0
    row_starts, col_starts = R.indptr[:-1][row_has], C.indptr[:-1][col_has]
    r, c = np.ones(M.shape[0]), np.ones(M.shape[1])
    for _ in range(sweeps):  # the largest |r_i m_ij c_j| of row i is r_i max_j |m_ij| c_j (and so for columns)
        row_max, col_max = np.ones_like(r), np.ones_like(c)
        if row_data.size:
            row_max[row_has] = r[row_has] * np.maximum.reduceat(row_data * c[R.indices], row_starts)
            col_max[col_has] = c[col_has] * np.maximum.reduceat(col_data * r[C.indices], col_starts)
        r /= np.sqrt(np.where(row_max > 0, row_max, 1.0))
        c /= np.sqrt(np.where(col_max > 0, col_max, 1.0))
    return r, c


def dense_last(M: sp.spmatrix) -> np.ndarray:
    """A symmetric ordering of ``M``: the rows and columns with more than :data:`POLISH_DENSE` nonzeros (the
    columns of :math:`w`, :math:`\\theta`, :math:`t` that every margin row holds) last, the others in their order.
    Each point's rows then eliminate with fill only in the dense block: on (28) at 10^5 points, 1.3 million
    nonzeros in the factors and 0.3 s, against 30 million and 4.5 s with SuperLU's own COLAMD ordering."""
    M = sp.csc_matrix(M)
    dense = (np.diff(M.indptr) > POLISH_DENSE) | (np.bincount(M.indices, minlength=M.shape[0]) > POLISH_DENSE)
    return np.concatenate([np.flatnonzero(~dense), np.flatnonzero(dense)])


class Factors:
    """The LU factors of one Newton matrix (:func:`newton_step`), equilibrated and regularised, and their solve."""

    def __init__(self, J: sp.csc_matrix, reg: np.ndarray, large: bool = False):
        self.r, self.c = equilibrate(J)
        J = sp.csr_matrix(J)
        rows = np.repeat(np.arange(J.shape[0]), np.diff(J.indptr))  # diag(r) J diag(c), entry by entry
        M = sp.csr_matrix(((J.data * self.r[rows]) * self.c[J.indices], J.indices, J.indptr), shape=J.shape)
        M.eliminate_zeros()
        M = (M + sp.diags(POLISH_REG * reg)).tocsc()
        self.perm = dense_last(M) if large else None
        # RuntimeError: exactly singular even with the regularisation
        self.lu = spla.splu(M) if self.perm is None else spla.splu(M[self.perm][:, self.perm].tocsc(),
                                                                   permc_spec="NATURAL")

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        if self.perm is None:
            return self.c * self.lu.solve(self.r * rhs)
        out = np.empty_like(rhs)
        out[self.perm] = self.lu.solve((self.r * rhs)[self.perm])
        return self.c * out


def refine(J: sp.csc_matrix, F: np.ndarray, factors: Factors) -> tuple[np.ndarray | None, float]:
    """``J step = -F`` by ``factors`` and iterative refinement on ``J`` (:data:`POLISH_REFINE` steps at most): the
    step (``None`` if not finite) and its residual :math:`\\|J\\,step + F\\|_\\infty / \\max(1, \\|F\\|_\\infty)`."""
    scale = max(1.0, float(np.max(np.abs(F), initial=0.0)))
    step = factors.solve(-F)
    size = math.inf
    for _ in range(POLISH_REFINE):
        res = -F - J @ step
        if not np.isfinite(res).all():
            return None, math.inf
        largest = float(np.max(np.abs(res), initial=0.0))
        size = largest / scale
        if largest <= 1e-17 * scale:
            break
        step += factors.solve(res)
    return (step, size) if np.isfinite(step).all() else (None, math.inf)


def newton_step(J: sp.csc_matrix, F: np.ndarray, reg: np.ndarray, kept: list | None = None) -> np.ndarray | None:
    """``J step = -F`` through the LU factors of the equilibrated ``J + POLISH_REG diag(reg)`` (:func:`equilibrate`)
    and iterative refinement on ``J`` itself. ``kept``: a list (the polish passes one from ``POLISH_LARGE`` unknowns
    on, else ``None``) holding the factors of an earlier step of the same Newton run: they are tried first, as a
    preconditioner of the refinement on this ``J``, and kept when the refined step meets :data:`POLISH_REUSE` (else
    ``J`` is factorised, in the order of :func:`dense_last`)."""
    if kept:
        step, size = refine(J, F, kept[0])
        if step is not None and size <= POLISH_REUSE:
            return step
    try:
        factors = Factors(J, reg, kept is not None)
    except RuntimeError:  # exactly singular even with the regularisation
        return None
    if kept is not None:
        kept[:] = [factors]
    return refine(J, F, factors)[0]
