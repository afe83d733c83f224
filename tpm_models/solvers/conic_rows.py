"""The rows of a conic form as they are read, and their assembly into :math:`(A, b)` (for
:mod:`tpm_models.solvers.conic_shapes` and :func:`tpm_models.solvers.conic.conic_form`).

A row is stored as :math:`s = c + a^\\top x` (then :math:`A = -a`, :math:`b = c`). The rows of one cone kind are a
:class:`RowList` of items in row order: a single row ``(dict column -> coefficient, c)`` or ``((k, sign), c)`` (row
``k`` of the read linear rows' matrix :math:`M` times ``sign`` is its :math:`A` row), or a chunk of many rows held as
arrays: :class:`LinearChunk` (rows of :math:`M`, the builders' linear rows, :math:`10^6` of them at :math:`10^6`
points) and :class:`ColumnChunk` (the variables' bounds, one column each). A chunk is what a loop over its rows would
have added, row for row (``tests/solvers/test_conic_rows.py``: bit-identical :math:`A`, :math:`b` and duals), without
a Python object per row: at :math:`10^6` points the per-row dictionaries, tuples and dual maps were most of the conic
form's transient memory (``docs/bench-scale.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tpm_models.certify.tolerances import PSD_TOL
from tpm_models.solvers.cones import NotConicError


@dataclass
class LinearChunk:
    """Rows ``sign[i] * M[k[i]]`` with constants ``const[i]`` (:math:`A` row :math:`= \\mathrm{sign}_i M_{k_i}`)."""

    k: np.ndarray
    sign: np.ndarray
    const: np.ndarray

    def __len__(self) -> int:
        return len(self.k)


@dataclass
class ColumnChunk:
    """Rows :math:`s = c_i + a_i x_{j_i}`: one column ``col[i]`` of coefficient ``coef[i]`` each (the bounds)."""

    col: np.ndarray
    coef: np.ndarray
    const: np.ndarray

    def __len__(self) -> int:
        return len(self.col)


class SparseRun:
    """Consecutive single rows :math:`s = c_i + a_i^\top x` held as CSR arrays (``indptr``, ``indices``, ``data``:
    the entries of :math:`A = -a`, a repeated column summed, in ``const``): the rows of (23) at p = 2 linear in its
    norm's epigraph column, one per point."""

    def __init__(self):
        self.indptr: list[int] = [0]
        self.indices: list[int] = []
        self.data: list[float] = []
        self.const: list[float] = []

    def __len__(self) -> int:
        return len(self.const)


@dataclass
class SparseChunk:
    """Rows :math:`s = c_i + a_i^\top x` given as CSR arrays (``indptr``, ``indices``, ``data``: the entries of
    :math:`A = -a`, a repeated column summed), as a :class:`SparseRun` of the same rows would hold them: a block of
    (23)'s margin rows at p = 2, read in one pass (:meth:`tpm_models.solvers.conic_shapes.ShapeReader.atom_block`)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    const: np.ndarray

    def __len__(self) -> int:
        return len(self.const)


class RowList:
    """The rows of one cone kind in order: single rows and chunks (module docstring); ``len`` counts rows."""

    def __init__(self):
        self.items: list = []
        self.size = 0

    def append(self, row: tuple) -> None:
        self.items.append(row)
        self.size += 1

    def append_sparse(self, cols: list, entries: list, const: float) -> None:
        """A single row given by its :math:`A` entries (``entries`` at ``cols``) and its constant, kept in a
        :class:`SparseRun` with the single rows so given right before it."""
        run = self.items[-1] if self.items else None
        if run.__class__ is not SparseRun:
            run = SparseRun()
            self.items.append(run)
        run.indices.extend(cols)
        run.data.extend(entries)
        run.indptr.append(len(run.indices))
        run.const.append(const)
        self.size += 1

    def add_chunk(self, chunk: LinearChunk | ColumnChunk | SparseChunk) -> None:
        if len(chunk):
            self.items.append(chunk)
            self.size += len(chunk)

    def __len__(self) -> int:
        return self.size


def linear_rows(lower: np.ndarray, upper: np.ndarray, equality: np.ndarray, k0: int, k1: int
                ) -> tuple[LinearChunk, LinearChunk, tuple, tuple]:
    """Rows ``k0 <= k < k1`` of the read linear rows (sides ``lower``, ``upper`` minus the body's constant,
    ``equality``) as a loop over them would add them, one at a time: an equality (or equal sides) is a ``zero`` row
    :math:`s = l - a^\\top x` with dual factor -1; otherwise the ``nonneg`` rows :math:`s = u - a^\\top x` (factor -1)
    for a finite upper side, then :math:`s = a^\\top x - l` (factor +1) for a finite lower side. Returns the zero and
    the nonneg chunk and, for each, the duals' ``(owner k, factor)`` arrays, entry by entry."""
    ks = np.arange(k0, k1, dtype=np.int64)
    lo, up = lower[k0:k1], upper[k0:k1]
    eq = equality[k0:k1] | (lo == up)
    zk = ks[eq]
    zero = LinearChunk(zk, np.ones(len(zk)), lo[eq].copy())
    zero_duals = (zk, np.full(len(zk), -1.0))
    rest = ~eq
    mask = np.stack([rest & (up < math.inf), rest & (lo > -math.inf)], axis=1).ravel()
    count = len(ks)
    nk = np.repeat(ks, 2)[mask]
    nonneg = LinearChunk(nk, np.tile([1.0, -1.0], count)[mask], np.stack([up, -lo], axis=1).ravel()[mask])
    return zero, nonneg, zero_duals, (nk, np.tile([-1.0, 1.0], count)[mask])


def bound_rows(lb: np.ndarray, ub: np.ndarray) -> tuple[ColumnChunk, ColumnChunk]:
    """The variables' bounds as a loop over the columns adds them: :math:`l_j = u_j` a ``zero`` row
    :math:`s = l_j - x_j`; otherwise :math:`s = x_j - l_j` for a finite :math:`l_j`, then :math:`s = u_j - x_j`
    for a finite :math:`u_j` (``nonneg``), column by column."""
    cols = np.arange(len(lb), dtype=np.int64)
    fixed = lb == ub
    zero = ColumnChunk(cols[fixed], np.full(int(fixed.sum()), -1.0), lb[fixed].copy())
    rest = ~fixed
    mask = np.stack([rest & np.isfinite(lb), rest & np.isfinite(ub)], axis=1).ravel()
    nonneg = ColumnChunk(np.repeat(cols, 2)[mask], np.tile([1.0, -1.0], len(cols))[mask],
                         np.stack([-lb, ub], axis=1).ravel()[mask])
    return zero, nonneg


def _single_rows(rows: list, M: sp.csr_matrix, n: int) -> sp.csr_matrix:
    """Single rows ``(dict, c)`` / ``((k, sign), c)`` as the CSR rows of :math:`A` (``A = -a``; a zero coefficient
    of a dict is not stored)."""
    ri: list[int] = []
    ci: list[int] = []
    data: list[float] = []
    at, ks, signs = [], [], []
    for r, (row, _) in enumerate(rows):
        if row.__class__ is tuple:
            at.append(r)
            ks.append(row[0])
            signs.append(row[1])
            continue
        for c, a in row.items():
            if a != 0.0:
                ri.append(r)
                ci.append(c)
                data.append(-a)
    ri_a, ci_a, data_a = np.asarray(ri, dtype=np.int64), np.asarray(ci, dtype=np.int64), np.asarray(data, dtype=float)
    if at:
        picked = M[np.asarray(ks, dtype=np.int64)]
        counts = np.diff(picked.indptr)
        ri_a = np.concatenate([ri_a, np.repeat(np.asarray(at, dtype=np.int64), counts)])
        ci_a = np.concatenate([ci_a, picked.indices.astype(np.int64)])
        data_a = np.concatenate([data_a, picked.data * np.repeat(np.asarray(signs, dtype=float), counts)])
    return sp.csr_matrix((data_a, (ri_a, ci_a)), shape=(len(rows), n))


def _chunk_rows(chunk: LinearChunk | ColumnChunk | SparseRun | SparseChunk, M: sp.csr_matrix, n: int
                ) -> sp.csr_matrix:
    if isinstance(chunk, (SparseRun, SparseChunk)):
        block = sp.csr_matrix((np.asarray(chunk.data, dtype=float), np.asarray(chunk.indices, dtype=np.int64),
                               np.asarray(chunk.indptr, dtype=np.int64)), shape=(len(chunk), n))
        block.sum_duplicates()
        return block
    if isinstance(chunk, ColumnChunk):
        return sp.csr_matrix((-chunk.coef, chunk.col, np.arange(len(chunk) + 1, dtype=np.int64)),
                             shape=(len(chunk), n))
    picked = M[chunk.k]
    data = picked.data * np.repeat(chunk.sign, np.diff(picked.indptr))
    return sp.csr_matrix((data, picked.indices, picked.indptr), shape=(len(chunk), n))


def assemble(lists: list, M: sp.csr_matrix, n: int) -> tuple[sp.csc_matrix, np.ndarray]:
    """:math:`(A, b)` of the rows of ``lists`` (each a :class:`RowList` or a list of single rows), in that order,
    over ``n`` columns (``M``: the read linear rows' matrix the ``(k, sign)`` rows and chunks refer to)."""
    blocks: list[sp.csr_matrix] = []
    consts: list[np.ndarray] = []
    run: list = []

    def flush() -> None:
        if run:
            blocks.append(_single_rows(run, M, n))
            consts.append(np.array([c for _, c in run], dtype=float))
            run.clear()

    for rows in lists:
        for item in (rows.items if isinstance(rows, RowList) else rows):
            if isinstance(item, (LinearChunk, ColumnChunk, SparseRun, SparseChunk)):
                flush()
                blocks.append(_chunk_rows(item, M, n))
                consts.append(np.asarray(item.const, dtype=float))
            else:
                run.append(item)
    flush()
    if not blocks:
        return sp.csc_matrix((0, n)), np.zeros(0)
    A = sp.vstack(blocks, format="csr").tocsc()
    A.eliminate_zeros()
    return A, np.concatenate(consts)


def summed(cols: list, coefs: list) -> dict[int, float]:
    """``{column: sum of its coefficients}``, summed in the order of the terms (a loop adding them one by one; from
    1,000 terms by ``np.bincount``, which adds them in the same order: (23)'s objective at p = 2 has 20 m_-c)."""
    if len(cols) < 1000:
        lin: dict[int, float] = {}
        for c, a in zip(cols, coefs):
            lin[c] = lin.get(c, 0.0) + a
        return lin
    index = np.asarray(cols, dtype=np.int64)
    present = np.unique(index)
    sums = np.bincount(index, weights=np.asarray(coefs, dtype=float))[present]
    return dict(zip(present.tolist(), sums.tolist()))


def squares(quad: dict, lin: dict, const: float, where: str) -> tuple[list[dict], list[float], float]:
    """:math:`x^\\top Qx + l^\\top x + c = \\|Fx+g_0\\|^2 + c_0` with :math:`c_0 \\ge 0`: rows of
    :math:`F` (dicts), :math:`g_0`, :math:`c_0`. Diagonal :math:`Q` without :math:`l`: :math:`F =
    \\mathrm{diag}(\\sqrt{Q_{kk}})` exactly."""
    cols = sorted({c for k in quad for c in k} | set(lin))
    if all(i == j for i, j in quad) and not lin:
        if any(a < 0 for a in quad.values()) or const < 0:
            raise NotConicError(f"{where}: the quadratic is not a sum of squares plus a constant >= 0")
        return [{i: math.sqrt(a)} for (i, _), a in sorted(quad.items()) if a > 0], \
            [0.0] * sum(a > 0 for a in quad.values()), const
    index = {c: k for k, c in enumerate(cols)}
    Q = np.zeros((len(cols), len(cols)))
    for (i, j), a in quad.items():
        if i == j:
            Q[index[i], index[i]] += a
        else:
            Q[index[i], index[j]] += a / 2
            Q[index[j], index[i]] += a / 2
    l_vec = np.array([lin.get(c, 0.0) for c in cols])
    lam, V = np.linalg.eigh(Q)
    top = max(float(np.abs(lam).max(initial=0.0)), 1.0)
    if lam.size and lam.min() < -PSD_TOL * top:
        raise NotConicError(f"{where}: the quadratic form is not convex (eigenvalue {lam.min():.3g})")
    keep = lam > PSD_TOL * top
    Vk, root = V[:, keep], np.sqrt(lam[keep])
    F = root[:, None] * Vk.T
    g0 = 0.5 * (Vk.T @ l_vec) / root
    if np.linalg.norm(l_vec - 2 * F.T @ g0) > 1e-9 * (1 + np.linalg.norm(l_vec)):
        raise NotConicError(f"{where}: a linear term outside the quadratic's range: not a sum of squares")
    c0 = const - float(g0 @ g0)
    if c0 < -1e-9 * (1 + abs(const)):
        raise NotConicError(f"{where}: the quadratic can be negative: not a norm")
    rows = [{cols[k]: float(a) for k, a in enumerate(row) if a != 0} for row in F]
    return rows, [float(g) for g in g0], max(c0, 0.0)
