"""Columns that enter a large block of rows in fixed ratios, merged into one column for the solver's run.

The margin rows of (23)-(29) hold the same few terms in every row: :math:`\\theta - \\varepsilon\\,r` ((23), (26),
(28)), or :math:`\\theta - \\varepsilon \\sum_j s_j` ((29): 21 columns in each of the :math:`m_c` rows). Where a set
:math:`G` of columns enters every row of a block :math:`R` in the same ratios,

.. math::  A_{R,G} = a\\,k^\\top \\quad (a = A_{R,g_0},\\ k_g = A_{i,g} / A_{i,g_0} \\text{ the same on every row}),

the solver's run is on the same problem written with one new column :math:`v` and one new equality row:

.. math::  A_{R,G}\\,x_G \\;\\to\\; a\\,v, \\qquad v - k^\\top x_G = 0 .

Its feasible set is the same (:math:`v = k^\\top x_G`), and each row of :math:`R` holds :math:`|G| - 1` entries fewer.
Clarabel's factorisation of its KKT matrix costs about the square of the entries each margin row shares with the
dense columns (:math:`w`, :math:`\\theta`, ...): (29) at :math:`10^5` points goes from 42 to 22 such entries a row,
and its run from 17 iterations in 10-11 s to 16 in 1.8 s (``docs/notes/bench-scale-history.md``, "the columns merged
for Clarabel's run").

The point maps back without loss: the rows keep their place (the new rows come after them), so
:math:`x = x'_{1..n}`, :math:`s = s'_{1..m}`, :math:`z = z'_{1..m}`. Stationarity of the merged problem in
:math:`x_G` and :math:`v` (:math:`y` the new row's multiplier) is :math:`\\ldots + A'^\\top_{:,G} z' - k\\,y = 0` and
:math:`a^\\top z'_R + y = 0`, so :math:`A'^\\top_{:,G} z' + k\\,a^\\top z'_R = A^\\top_{:,G} z'`: the original's.

Only exact ratios are merged (:math:`A_{i,g} = k_g\\,a_i` in floating point, on every row of the block), so the run is
on the model as written, not on an approximation of it; and only blocks of :data:`MERGE_MIN_ROWS` rows or more, so
the small models (Iris, Wine) are handed to the solver as they were.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from tpm_models.qp import QPMatrices
from tpm_models.solvers.cones import Cone, ConeKind

MERGE_MIN_ROWS = 1_000
"""The fewest rows of a block whose columns are merged (:func:`rank_one_columns`); below it the form is left as it
is (the conic survey's models, Iris and Wine, have at most a few hundred rows)."""

MERGE_MAX_COLUMNS = 64
"""The most columns read as candidates (those with the most entries, at least :data:`MERGE_MIN_ROWS` each): a row's
pattern on them is one 64-bit word."""


@dataclass(frozen=True)
class MergedGroup:
    """One merged set of columns: ``columns`` enter every row of ``rows`` as ``A[i, columns] = a_i * ratios``."""

    rows: np.ndarray
    columns: np.ndarray
    ratios: np.ndarray
    """``ratios[0] = 1``: ``a`` is the first column's entries on ``rows``."""


@dataclass(frozen=True)
class MergedColumns:
    """The merged columns of a form of ``shape`` (:func:`rank_one_columns`); :meth:`form` writes the form the solver
    runs on, :meth:`point` maps its point back."""

    shape: tuple[int, int]
    groups: tuple[MergedGroup, ...]

    @property
    def note(self) -> str:
        """What was merged, for the solve's message."""
        parts = [f"{g.columns.size} columns into 1 on {g.rows.size:,} rows" for g in self.groups]
        return "columns merged for the run (same rows, fewer entries): " + ", ".join(parts)

    def equality_rows(self) -> sp.csc_matrix:
        """The new rows :math:`v_j - k_j^\\top x_{G_j} = 0`, one per group, on ``n + len(groups)`` columns."""
        m, n = self.shape
        k = len(self.groups)
        rows = np.concatenate([np.full(g.columns.size + 1, j) for j, g in enumerate(self.groups)])
        cols = np.concatenate([np.append(g.columns, n + j) for j, g in enumerate(self.groups)])
        vals = np.concatenate([np.append(-g.ratios, 1.0) for g in self.groups])
        return sp.csc_matrix((vals, (rows, cols)), shape=(k, n + k))

    def merged(self, A: sp.spmatrix, with_rows: bool = True) -> sp.csc_matrix:
        """``A`` (of :attr:`shape`) with each group's entries on its block replaced by the new column ``v`` (one per
        group, after ``A``'s columns) and, ``with_rows``, the new rows of :meth:`equality_rows` after ``A``'s.

        Made on ``A``'s compressed columns in one pass, the entries kept and the new ones placed with one
        ``np.insert`` (no coordinate copy of ``A``). Measured on (28) at :math:`10^6` points (6 million entries), the
        solve's peak: 1,669 MB unmerged; 1,740 MB when this was made through a coordinate copy and ``vstack``; 1,723
        MB now, the merged matrix held while Clarabel copies it (cvxpy + Clarabel: 1,755 MB)."""
        m, n = self.shape
        k = len(self.groups)
        A = sp.csc_matrix(A)
        if not A.has_sorted_indices:
            A = A.sorted_indices()
        indptr, indices, data = A.indptr, A.indices, A.data
        keep = np.ones(data.size, dtype=bool)
        in_rows = np.zeros(m, dtype=bool)
        v_rows, v_vals = [], []
        extra = np.zeros(n, dtype=np.int64)  # entries of the new rows in each of A's columns
        for group in self.groups:
            in_rows[group.rows] = True
            for c in group.columns:
                lo, hi = indptr[c], indptr[c + 1]
                on_block = in_rows[indices[lo:hi]]
                if c == group.columns[0]:  # the column v: a on the block
                    v_rows.append(indices[lo:hi][on_block])
                    v_vals.append(data[lo:hi][on_block])
                keep[lo:hi] &= ~on_block
            in_rows[group.rows] = False
            if with_rows:
                np.add.at(extra, group.columns, 1)
        kept = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])[indptr]  # each column's start among the kept
        counts = np.diff(kept) + extra
        at, new_rows, new_vals = [], [], []
        if with_rows:  # the new rows' entries go last in their columns (their rows come after A's)
            for j, group in enumerate(self.groups):
                at.append(kept[group.columns + 1])
                new_rows.append(np.full(group.columns.size, m + j))
                new_vals.append(-group.ratios)
        for j in range(k):  # the columns v after A's, each with its new row's entry last
            at.append(np.full(v_rows[j].size + with_rows, kept[-1]))
            new_rows.append(np.append(v_rows[j], [m + j] if with_rows else []))
            new_vals.append(np.append(v_vals[j], [1.0] if with_rows else []))
        places, row_of, val_of = np.concatenate(at), np.concatenate(new_rows), np.concatenate(new_vals)
        del at, new_rows, new_vals  # the pieces freed as before
        order = np.argsort(places, kind="stable")  # np.insert keeps the order given among equal places
        out_indices = np.insert(indices[keep], places[order], row_of[order].astype(indices.dtype))
        out_data = np.insert(data[keep], places[order], val_of[order])
        out_indptr = np.concatenate([[0], np.cumsum(np.concatenate([counts, [r.size + with_rows for r in v_rows]]))])
        return sp.csc_matrix((out_data, out_indices, out_indptr), shape=(m + k * with_rows, n + k))

    def padded(self, P: sp.spmatrix) -> sp.csc_matrix:
        """The objective's ``P`` (n x n) with zero rows and columns for the new columns."""
        k = len(self.groups)
        P = sp.csc_matrix(P)
        return sp.csc_matrix((P.data, P.indices, np.append(P.indptr, np.full(k, P.indptr[-1]))),
                             shape=(P.shape[0] + k, P.shape[1] + k))

    def form(self, P: sp.spmatrix, q: np.ndarray, A: sp.spmatrix, b: np.ndarray, cones: list[Cone]
             ) -> tuple[sp.csc_matrix, np.ndarray, sp.csc_matrix, np.ndarray, list[Cone]]:
        """The conic form ``(P, q, A, b, cones)`` with each group's columns merged (module docstring): one new column
        per group, after ``A``'s, and one new ``zero`` row per group, after ``A``'s rows."""
        k = len(self.groups)
        return (self.padded(P), np.append(np.asarray(q, dtype=float), np.zeros(k)), self.merged(A),
                np.append(np.asarray(b, dtype=float), np.zeros(k)), [*cones, Cone(ConeKind.ZERO, k)])

    def qp(self, qp: QPMatrices) -> QPMatrices:
        """``qp`` with the groups of its inequality rows ``G`` (:attr:`shape`) merged: the new columns free, the new
        rows equalities after ``A``'s; its ``variables`` and constraint lists are ``qp``'s (the map back is
        :meth:`point`'s: the first columns, the first equality rows)."""
        k = len(self.groups)
        merged, rows = self.merged(qp.G, with_rows=False), self.equality_rows()
        A = sp.vstack([sp.hstack([sp.csc_matrix(qp.A), sp.csc_matrix((len(qp.b), k))]), rows], "csc")
        free = np.full(k, np.inf)
        return replace(qp, P=self.padded(qp.P), q=np.append(qp.q, np.zeros(k)), A=A, b=np.append(qp.b, np.zeros(k)),
                       G=merged, x_l=np.append(qp.x_l, -free), x_u=np.append(qp.x_u, free))

    def point(self, x: np.ndarray, s: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The point of the original form from one of the merged form: its own columns and rows."""
        m, n = self.shape
        return np.asarray(x)[:n], np.asarray(s)[:m], np.asarray(z)[:m]


def rank_one_columns(A: sp.spmatrix, min_rows: int = MERGE_MIN_ROWS) -> MergedColumns | None:
    """The sets of columns of ``A`` that enter a block of at least ``min_rows`` rows in exact fixed ratios (module
    docstring), or ``None`` when there is none.

    A block is a set of rows with the same pattern on the candidate columns (those with at least ``min_rows`` entries,
    the :data:`MERGE_MAX_COLUMNS` largest); within it, columns are grouped with the first column they are an exact
    multiple of, on every row of the block."""
    csc = sp.csc_matrix(A)
    if not csc.has_sorted_indices:
        csc = csc.sorted_indices()
    m, n = csc.shape
    counts = np.diff(csc.indptr)
    candidates = np.flatnonzero(counts >= min_rows)
    if candidates.size < 2:
        return None
    candidates = np.sort(candidates[np.argsort(-counts[candidates], kind="stable")[:MERGE_MAX_COLUMNS]])
    pattern = np.zeros(m, dtype=np.uint64)
    for bit, c in enumerate(candidates):
        pattern[csc.indices[csc.indptr[c]:csc.indptr[c + 1]]] |= np.uint64(1) << np.uint64(bit)
    values, block_of, sizes = np.unique(pattern, return_inverse=True, return_counts=True)
    groups = []
    for b in np.flatnonzero((sizes >= min_rows) & (values != 0)):
        members = [c for bit, c in enumerate(candidates) if int(values[b]) >> bit & 1]
        if len(members) < 2:
            continue
        rows = np.flatnonzero(block_of == b)
        on_block: dict[np.intp, np.ndarray] = {}
        for c in members:
            lo, hi = csc.indptr[c], csc.indptr[c + 1]
            on_block[c] = csc.data[lo:hi][block_of[csc.indices[lo:hi]] == b]  # aligned: sorted rows, all present
        open_groups: list[tuple[np.intp, list[np.intp], list[float]]] = []
        for c in members:
            for first, columns, ratios in open_groups:
                ratio = on_block[c][0] / on_block[first][0]
                if np.array_equal(on_block[c], ratio * on_block[first]):
                    columns.append(c)
                    ratios.append(float(ratio))
                    break
            else:
                open_groups.append((c, [c], [1.0]))
        groups += [MergedGroup(rows, np.array(columns), np.array(ratios))
                   for _, columns, ratios in open_groups if len(columns) >= 2]
    return MergedColumns((m, n), tuple(groups)) if groups else None
