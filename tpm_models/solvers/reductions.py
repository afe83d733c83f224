"""The conic program a Clarabel run takes (:class:`ConicProgram`: a :class:`~tpm_models.solvers.cones.ConicForm`
without its map back to a model), its solution, and the reductions that rewrite it for the run.

A reduction (:class:`Reduction`, after cvxpy's ``reductions/``) maps a program forward to the one the solver runs on
and that program's solution back; it is used once, ``forward`` keeping what ``back`` needs: :class:`MergeColumns`
here, :class:`~tpm_models.solvers.powsoc.DropImpliedBounds` and :class:`~tpm_models.solvers.powsoc.PowAsSoc`
beside, all exact. :class:`Chain` chains them for the runs of
one solve (which, in which order: ``docs/solvers.md``, "The backend's pipeline").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

from tpm_models.qp import QPMatrices
from tpm_models.solvers.cones import Cone, ConeKind

MERGE_MIN_ROWS = 1_000
"""The fewest rows of a block whose columns are merged (:func:`rank_one_columns`)."""

MERGE_MAX_COLUMNS = 64
"""The most columns read as candidates (those with the most entries, at least :data:`MERGE_MIN_ROWS` each): a row's
pattern on them is one 64-bit word."""


@dataclass(frozen=True)
class ConicProgram:
    """:math:`\\min \\tfrac12 x^\\top Px + q^\\top x` s.t. :math:`b - Ax \\in` ``cones`` (module docstring)."""

    P: sp.csc_matrix
    q: np.ndarray
    A: sp.csc_matrix
    b: np.ndarray
    cones: list[Cone]

    @classmethod
    def of(cls, form: Any) -> ConicProgram:
        """The program of anything with ``P``, ``q``, ``A``, ``b`` and ``cones`` (a ``ConicForm``)."""
        return cls(form.P, np.asarray(form.q, dtype=float), form.A, np.asarray(form.b, dtype=float),
                   list(form.cones))

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, columns)`` of ``A``."""
        return self.A.shape

    def slack(self, x: np.ndarray) -> np.ndarray:
        """:math:`s = b - Ax`."""
        return self.b - self.A @ x


def padded(P: sp.spmatrix, k: int) -> sp.csc_matrix:
    """The objective's ``P`` (n x n) with zero rows and columns for ``k`` new columns after its own."""
    P = sp.csc_matrix(P)
    return sp.csc_matrix((P.data, P.indices, np.append(P.indptr, np.full(k, P.indptr[-1]))),
                         shape=(P.shape[0] + k, P.shape[1] + k))


@dataclass(frozen=True)
class ConicSolution:
    """A primal-dual point of a :class:`ConicProgram`: ``x``, its slack ``s`` and the dual ``z``
    (:math:`Px + q + A^\\top z = 0`, :math:`z \\in \\mathcal K^*` at an optimum)."""

    x: np.ndarray
    s: np.ndarray
    z: np.ndarray


class Reduction(Protocol):
    """A rewrite of a conic program and the map of its solution back (module docstring)."""

    def forward(self, program: ConicProgram) -> ConicProgram:
        """The program the solver runs on (``program`` itself when there is nothing to rewrite)."""

    def back(self, solution: ConicSolution) -> ConicSolution:
        """A solution of the program given to :meth:`forward` from one of the program it returned."""

    @property
    def note(self) -> str:
        """What was rewritten, for the solve's message (empty when nothing was)."""


@dataclass(frozen=True)
class MergedGroup:
    """One merged set of columns: ``columns`` enter every row of ``rows`` as ``A[i, columns] = a_i * ratios``."""

    rows: np.ndarray
    columns: np.ndarray
    ratios: np.ndarray
    """``ratios[0] = 1``: ``a`` is the first column's entries on ``rows``."""


@dataclass(frozen=True)
class MergedColumns:
    """The merged columns of a form of ``shape`` (:func:`rank_one_columns`). Where a set :math:`G` of columns enters
    every row of a block :math:`R` in the same ratios, :math:`A_{R,G} = a\\,k^\\top`, the run is on the same problem
    with one new column :math:`v` and one new equality row: :math:`A_{R,G}\\,x_G \\to a\\,v`, :math:`v - k^\\top x_G
    = 0`. The feasible set is the same, each row of :math:`R` holds :math:`|G| - 1` entries fewer (why that matters:
    ``docs/solvers.md``, "Columns merged for the run"). The point maps back without loss: the new columns and rows
    come after the form's, and stationarity of the merged problem in :math:`x_G` and :math:`v` (:math:`y` the new
    row's multiplier), :math:`\\ldots + A'^\\top_{:,G} z' - k\\,y = 0` and :math:`a^\\top z'_R + y = 0`, gives
    :math:`A'^\\top_{:,G} z' + k\\,a^\\top z'_R = A^\\top_{:,G} z'`: the original's."""

    shape: tuple[int, int]
    groups: tuple[MergedGroup, ...]

    @property
    def note(self) -> str:
        """What was merged, for the solve's message."""
        parts = [f"{g.columns.size} columns into 1 on {g.rows.size:,} rows" for g in self.groups]
        return "columns merged for the run (same rows, fewer entries): " + ", ".join(parts)

    def merged(self, A: sp.spmatrix, with_rows: bool = True) -> sp.csc_matrix:
        """``A`` (of :attr:`shape`) with each group's entries on its block replaced by the new column ``v`` (one per
        group, after ``A``'s columns) and, ``with_rows``, the new rows :math:`v_j - k_j^\\top x_{G_j} = 0` after
        ``A``'s; made on ``A``'s compressed columns (a coordinate copy would be the solve's peak of memory)."""
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

    def qp(self, qp: QPMatrices) -> QPMatrices:
        """``qp`` with the groups of its inequality rows ``G`` (:attr:`shape`) merged: the new columns free, the new
        rows equalities after ``A``'s; its ``variables`` and constraint lists are ``qp``'s (the map back: the first
        columns, the first equality rows)."""
        m, n = self.shape
        k = len(self.groups)
        rows = sp.csc_matrix((np.concatenate([np.append(-g.ratios, 1.0) for g in self.groups]),
                              (np.concatenate([np.full(g.columns.size + 1, j) for j, g in enumerate(self.groups)]),
                               np.concatenate([np.append(g.columns, n + j) for j, g in enumerate(self.groups)]))),
                             shape=(k, n + k))  # v_j - k_j' x_Gj = 0
        A = sp.vstack([sp.hstack([sp.csc_matrix(qp.A), sp.csc_matrix((len(qp.b), k))]), rows], "csc")
        free = np.full(k, np.inf)
        return replace(qp, P=padded(qp.P, k), q=np.append(qp.q, np.zeros(k)), A=A, b=np.append(qp.b, np.zeros(k)),
                       G=self.merged(qp.G, with_rows=False), x_l=np.append(qp.x_l, -free),
                       x_u=np.append(qp.x_u, free))


def rank_one_columns(A: sp.spmatrix, min_rows: int = MERGE_MIN_ROWS) -> MergedColumns | None:
    """The sets of columns of ``A`` that enter a block of at least ``min_rows`` rows in exact fixed ratios
    (``A[i, g] = k_g * a_i`` in floating point, on every row of the block: the run is on the model as written), or
    ``None`` when there is none.

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


class MergeColumns:
    """Merge the columns of :func:`rank_one_columns` (read once, at the first :meth:`forward`): one new column per
    group after the program's, one new ``zero`` row per group after its rows (:class:`MergedColumns`). Back: the
    program's own columns and rows; the solver's own :math:`s` is kept."""

    def __init__(self) -> None:
        self.merged: MergedColumns | None = None
        self.read = False

    def forward(self, program: ConicProgram) -> ConicProgram:
        if not self.read:
            self.merged, self.read = rank_one_columns(program.A), True
        if self.merged is None:
            return program
        k = len(self.merged.groups)
        return ConicProgram(padded(program.P, k), np.append(program.q, np.zeros(k)),
                            self.merged.merged(program.A), np.append(program.b, np.zeros(k)),
                            [*program.cones, Cone(ConeKind.ZERO, k)])

    def back(self, solution: ConicSolution) -> ConicSolution:
        if self.merged is None:
            return solution
        m, n = self.merged.shape
        return ConicSolution(np.asarray(solution.x)[:n], np.asarray(solution.s)[:m], np.asarray(solution.z)[:m])

    @property
    def note(self) -> str:
        return "; " + self.merged.note if self.merged is not None else ""


class Chain:
    """The reductions of one solve's runs: ``once`` applied in order to ``program`` before them (:attr:`program`,
    the one the runs are on), and with ``merge`` :class:`MergeColumns` applied anew in each run
    (:meth:`run_program`; that copy is let go once the solver holds its own). :meth:`back` maps a run's point back
    through all of them, the last first, to a solution of ``program``."""

    def __init__(self, program: ConicProgram, once: list[Reduction] | None = None, merge: bool = False):
        self.once = list(once or [])
        for reduction in self.once:
            program = reduction.forward(program)
        self.program = program
        self.merge = MergeColumns() if merge else None
        self.note = ""
        """The merged columns, for the message (set by the first run)."""

    def run_program(self) -> ConicProgram:
        """The program of one run."""
        if self.merge is None:
            return self.program
        program = self.merge.forward(self.program)
        self.note = self.merge.note
        return program

    def back(self, x: np.ndarray, s: np.ndarray, z: np.ndarray) -> ConicSolution:
        """A run's point ``(x, s, z)`` as a solution of the program given."""
        solution = ConicSolution(*(np.asarray(v, dtype=float) for v in (x, s, z)))
        if self.merge is not None:
            solution = self.merge.back(solution)
        for reduction in reversed(self.once):
            solution = reduction.back(solution)
        return solution
