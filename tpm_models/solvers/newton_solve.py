"""The linear algebra of the polish's Newton steps (:func:`newton_step`; the system: :mod:`.face_newton`):
:math:`J\\,\\Delta = -F` solved through the LU factors of the Ruiz-equilibrated, regularised
:math:`J + \\rho\\,\\mathrm{diag}(\\text{reg})` (:class:`Factors`) and iterative refinement on :math:`J` itself
(:func:`refine`). Measured: ``docs/solvers.md``, "The polish at scale".
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

POLISH_REG = 1e-9
"""The proximal regularisation of each Newton system (removed by iterative refinement)."""
POLISH_REFINE = 20
"""Iterative refinement steps per Newton step at most."""
POLISH_SWEEPS = 5
"""Ruiz equilibration sweeps of each Newton system (:func:`equilibrate`)."""

POLISH_REUSE = 1e-14
"""A step solved with a run's kept factors (:func:`newton_step`) is taken when :math:`\\|J\\,step + F\\|_\\infty` is at
most 1e-14 of :math:`\\max(1, \\|F\\|_\\infty)`; else the matrix is factorised."""

POLISH_DENSE = 50
"""More nonzeros than this make a row or column of the Newton matrix *dense* for :func:`dense_last`."""
POLISH_SCHUR = 100
"""At most this many dense rows and columns are eliminated by a dense Schur complement (:meth:`Factors._schur`)."""
POLISH_SCHUR_SIZE = 10_000_000
"""At most this many entries :math:`n_S n_D` in :math:`X = M_{SS}^{-1} M_{SD}` (80 MB; the equilibration holds five
more arrays of that size, for a moment)."""


def equilibrate(M: sp.spmatrix, sweeps: int = POLISH_SWEEPS) -> tuple[np.ndarray, np.ndarray]:
    """Ruiz scaling of a square ``M``: ``r``, ``c`` with the rows and columns of ``diag(r) M diag(c)`` of largest entry
    near 1 (the power cones' Hessians near their edges reach 1e8 beside entries of 1)."""
    M = sp.csr_matrix(M)
    M.sum_duplicates()
    n = M.shape[0]
    (r, _), (c, _) = _equilibrate_blocks(M, np.zeros((n, 0)), np.zeros((0, n)), np.zeros((0, 0)), sweeps)
    return r, c


def _equilibrate_blocks(M_SS: sp.csr_matrix, M_SD: np.ndarray, M_DS: np.ndarray, M_DD: np.ndarray,
                        sweeps: int = POLISH_SWEEPS) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The Ruiz scaling (:func:`equilibrate`) of ``[[M_SS, M_SD], [M_DS, M_DD]]`` from its blocks (sparse, and three
    dense arrays, empty for a whole sparse matrix): ``((r_S, r_D), (c_S, c_D))``."""
    R, C = sp.csr_matrix(M_SS), sp.csc_matrix(M_SS)
    row_data, col_data = np.abs(R.data), np.abs(C.data)
    row_has, col_has = np.diff(R.indptr) > 0, np.diff(C.indptr) > 0
    row_starts, col_starts = R.indptr[:-1][row_has], C.indptr[:-1][col_has]
    a_SD, a_DS, a_DD = np.abs(M_SD), np.abs(M_DS), np.abs(M_DD)
    ns, nd = M_SD.shape
    r_S, c_S, r_D, c_D = np.ones(ns), np.ones(ns), np.ones(nd), np.ones(nd)
    t_SD, t_DS = np.empty_like(a_SD), np.empty_like(a_DS)  # the products, in place: no new array per sweep

    def largest(a: np.ndarray, scale: np.ndarray, out: np.ndarray, axis: int) -> np.ndarray:
        return np.multiply(a, scale, out=out).max(axis=axis, initial=0.0)

    for _ in range(sweeps):  # the largest |r_i m_ij c_j| of row i is r_i max_j |m_ij| c_j (and so for columns)
        row_S, col_S = np.zeros(ns), np.zeros(ns)
        if row_data.size:
            row_S[row_has] = np.maximum.reduceat(row_data * c_S[R.indices], row_starts)
            col_S[col_has] = np.maximum.reduceat(col_data * r_S[C.indices], col_starts)
        row_S = r_S * np.maximum(row_S, largest(a_SD, c_D, t_SD, 1))
        col_S = c_S * np.maximum(col_S, largest(a_DS, r_D[:, None], t_DS, 0))
        row_D = r_D * np.maximum(largest(a_DS, c_S, t_DS, 1), (a_DD * c_D).max(axis=1, initial=0.0))
        col_D = c_D * np.maximum(largest(a_SD, r_S[:, None], t_SD, 0), (a_DD * r_D[:, None]).max(axis=0, initial=0.0))
        r_S /= np.sqrt(np.where(row_S > 0, row_S, 1.0))
        r_D /= np.sqrt(np.where(row_D > 0, row_D, 1.0))
        c_S /= np.sqrt(np.where(col_S > 0, col_S, 1.0))
        c_D /= np.sqrt(np.where(col_D > 0, col_D, 1.0))
    return (r_S, r_D), (c_S, c_D)


def _dense(M: sp.spmatrix) -> np.ndarray:
    """The rows and columns (one mask: the ordering is symmetric) with more than :data:`POLISH_DENSE` nonzeros."""
    M = sp.csr_matrix(M)
    return (np.diff(M.indptr) > POLISH_DENSE) | (np.bincount(M.indices, minlength=M.shape[1]) > POLISH_DENSE)


def dense_last(M: sp.spmatrix) -> np.ndarray:
    """A symmetric ordering of ``M``: the rows and columns with more than :data:`POLISH_DENSE` nonzeros (those of
    :math:`w`, :math:`\\theta`, :math:`t`) last, the others in their order, so fill stays in the dense block."""
    dense = _dense(M)
    return np.concatenate([np.flatnonzero(~dense), np.flatnonzero(dense)])


class Factors:
    """The factors of one Newton matrix, equilibrated and regularised, and their solve: the LU of the whole matrix;
    when ``large``, with 1 to :data:`POLISH_SCHUR` dense rows and columns and at most :data:`POLISH_SCHUR_SIZE`
    entries in :math:`X`, the LU of the sparse block and the dense Schur complement (:meth:`_schur`), else (or if
    either is exactly singular) the LU in the order of :func:`dense_last`."""

    def __init__(self, J: sp.csc_matrix, reg: np.ndarray, large: bool = False):
        self.perm: np.ndarray | None = None
        self.sparse: np.ndarray | None = None
        if large:
            J = sp.csr_matrix(J)
            J.sum_duplicates()
            dense = _dense(J)
            n_dense = int(dense.sum())
            if 0 < n_dense <= POLISH_SCHUR and (len(dense) - n_dense) * n_dense <= POLISH_SCHUR_SIZE:
                try:
                    self._schur(J, POLISH_REG * reg, dense)
                    return
                except RuntimeError:  # M_SS or C exactly singular: the whole matrix, pivoting across the blocks
                    self.sparse = None
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

    def _schur(self, J: sp.csr_matrix, diagonal: np.ndarray, dense: np.ndarray) -> None:
        """``J`` equilibrated (on its blocks: :func:`_equilibrate_blocks`) plus ``diag(diagonal)``, in blocks sparse
        ``S`` and dense ``D``: the LU of :math:`M_{SS}` (SuperLU), :math:`X = M_{SS}^{-1} M_{SD}` and the LU of the
        Schur complement :math:`C = M_{DD} - M_{DS} X` (LAPACK). ``RuntimeError`` if :math:`M_{SS}` or :math:`C` is
        exactly singular (then so is the matrix)."""
        n = J.shape[0]
        self.sparse, self.dense = S, D = np.flatnonzero(~dense), np.flatnonzero(dense)
        ns, nd = len(S), len(D)
        place = np.empty(n, dtype=np.int32)  # 32-bit indices and boolean masks: fewer and smaller new arrays
        place[S] = np.arange(ns)
        place[D] = np.arange(nd)
        J_S = J[S]  # the sparse rows: their dense columns as an array, the others sparse
        rows = np.repeat(np.arange(ns, dtype=np.int32), np.diff(J_S.indptr))
        to_dense = dense[J_S.indices]
        cols = place[J_S.indices]
        M_SD = np.zeros((ns, nd), order="F")  # column by column: its maxima (_equilibrate_blocks) and SuperLU's solve
        M_SD[rows[to_dense], cols[to_dense]] = J_S.data[to_dense]
        to_sparse = ~to_dense
        M_SS = sp.csr_matrix((J_S.data[to_sparse], cols[to_sparse],
                              np.concatenate([[0], np.cumsum(np.bincount(rows[to_sparse], minlength=ns))])),
                             shape=(ns, ns))
        del J_S, rows, to_dense, to_sparse, cols
        J_D = J[D].toarray()  # the dense rows, whole
        M_DS, M_DD = J_D[:, S], J_D[:, D]
        del J_D
        (r_S, r_D), (c_S, c_D) = _equilibrate_blocks(M_SS, M_SD, M_DS, M_DD)
        self.r, self.c = np.empty(n), np.empty(n)
        self.r[S], self.r[D], self.c[S], self.c[D] = r_S, r_D, c_S, c_D
        M_SS.data *= r_S[np.repeat(np.arange(ns), np.diff(M_SS.indptr))] * c_S[M_SS.indices]
        M_SS = (M_SS + sp.diags(diagonal[S])).tocsc()
        M_SD *= r_S[:, None]
        M_SD *= c_D
        M_DS *= r_D[:, None]
        M_DS *= c_S
        M_DD *= r_D[:, None]
        M_DD *= c_D
        M_DD[np.arange(nd), np.arange(nd)] += diagonal[D]
        self.lu = spla.splu(M_SS)
        self.X = np.ascontiguousarray(self.lu.solve(M_SD))  # rows in memory order: X y by numpy's own loop (solve)
        del M_SD
        self.M_DS = M_DS
        C = M_DD - np.einsum("ik,kj->ij", M_DS, self.X)  # not BLAS (face_newton._norm)
        self.lu_C = scipy.linalg.lu_factor(C, check_finite=False)
        if not np.all(np.diag(self.lu_C[0])):
            raise RuntimeError("the Schur complement is exactly singular")

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        rhs = self.r * rhs
        out = np.empty_like(rhs)
        if self.sparse is not None:  # block elimination: y_S = M_SS^-1 rhs_S, C y_D = rhs_D - M_DS y_S
            y = self.lu.solve(rhs[self.sparse])
            out[self.dense] = scipy.linalg.lu_solve(self.lu_C, rhs[self.dense] - np.einsum("ij,j->i", self.M_DS, y),
                                                    check_finite=False)
            out[self.sparse] = y - np.einsum("ij,j->i", self.X, out[self.dense])  # not BLAS: face_newton._norm
        elif self.perm is None:
            out = self.lu.solve(rhs)
        else:
            out[self.perm] = self.lu.solve(rhs[self.perm])
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
    """``J step = -F``, ``None`` when ``J`` is exactly singular even regularised. ``kept``: a list holding the factors
    of an earlier step of the same run, tried first and kept while the refined step meets :data:`POLISH_REUSE` (a
    list given also asks for :class:`Factors`' ``large`` path)."""
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
