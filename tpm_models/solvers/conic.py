"""A Pyomo model as a conic program in Clarabel's standard form (no solving here): :func:`conic_form`.

The form, its cones and duals: :mod:`tpm_models.solvers.cones`; how a row is recognised as cones:
:mod:`tpm_models.solvers.conic_shapes`. Here: the form's rows as they are added (:class:`FormRows`) and their
assembly into :math:`(A, b)`. A row is stored as :math:`s = c + a^\\top x` (:math:`A = -a`, :math:`b = c`); the rows
of one cone kind are a :class:`RowList` of chunks held as arrays, in row order: :class:`LinearChunk` (rows of the read
linear rows' matrix :math:`M`), :class:`SparseChunk` (the bounds; rows linear in atoms met before) and
:class:`SparseRun` (single rows). A chunk is what a loop over its rows would add, row for row, without a Python object
per row (``tests/solvers/test_conic_rows.py``: the same :math:`A`, :math:`b` and duals bit for bit; the memory it
saves: ``docs/notes/bench-scale-history.md``, "Issue 24, the solve's preparation").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp

from tpm_models.certify.tolerances import APEX_TOL, PSD_TOL
from tpm_models.solvers.atoms.terms import Piece
from tpm_models.solvers.cones import Cone, ConeKind, ConicForm, DualMap, NotConicError, RowDuals
from tpm_models.solvers.conic_shapes import ShapeReader
from tpm_models.solvers.program import Program
from tpm_models.solvers.rows import AtomBlock

__all__ = ["APEX_TOL", "PSD_TOL", "Cone", "ConicForm", "DualMap", "FormRows", "NotConicError", "RowDuals",
           "ShapeReader", "conic_form", "conic_program", "why_not_conic"]


@dataclass
class LinearChunk:
    """Rows ``sign[i] * M[k[i]]`` with constants ``const[i]`` (:math:`A` row :math:`= \\mathrm{sign}_i M_{k_i}`)."""

    k: np.ndarray
    sign: np.ndarray
    const: np.ndarray

    def __len__(self) -> int:
        return len(self.k)


@dataclass
class SparseChunk:
    """Rows :math:`s = c_i + a_i^\\top x` as CSR arrays (``indptr``, ``indices``, ``data``: the entries of
    :math:`A = -a`, a repeated column summed); as lists in a :class:`SparseRun`."""

    indptr: Any
    indices: Any
    data: Any
    const: Any

    def __len__(self) -> int:
        return len(self.const)


class SparseRun(SparseChunk):
    """Consecutive single rows, appended one at a time (:meth:`RowList.append_sparse`)."""

    def __init__(self):
        super().__init__([0], [], [], [])


class RowList:
    """The rows of one cone kind (or one cone block) in order, as chunks (module docstring); ``len`` counts rows."""

    def __init__(self, rows: list | None = None):
        self.items: list = []
        self.size = 0
        for row in rows or ():
            self.append(row)

    def append(self, row: tuple) -> None:
        """A single row ``(dict column -> coefficient, c)``: :math:`s = c + a^\\top x`."""
        coefs, const = row
        self.append_sparse(list(coefs), [-a for a in coefs.values()], const)

    def append_sparse(self, cols: list, entries: list, const: float) -> None:
        """A single row given by its :math:`A` entries (``entries`` at ``cols``) and its constant."""
        run = self.items[-1] if self.items else None
        if run.__class__ is not SparseRun:
            run = SparseRun()
            self.items.append(run)
        run.indices.extend(cols)
        run.data.extend(entries)
        run.indptr.append(len(run.indices))
        run.const.append(const)
        self.size += 1

    def add_chunk(self, chunk: LinearChunk | SparseChunk) -> None:
        if len(chunk):
            self.items.append(chunk)
            self.size += len(chunk)

    def __len__(self) -> int:
        return self.size


def linear_chunks(lower: np.ndarray, upper: np.ndarray, equality: np.ndarray, k0: int, k1: int
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


def bound_chunks(lb: np.ndarray, ub: np.ndarray) -> tuple[SparseChunk, SparseChunk]:
    """The variables' bounds as a loop over the columns adds them: :math:`l_j = u_j` a ``zero`` row
    :math:`s = l_j - x_j`; otherwise :math:`s = x_j - l_j` for a finite :math:`l_j`, then :math:`s = u_j - x_j`
    for a finite :math:`u_j` (``nonneg``), column by column: one column a row."""
    cols = np.arange(len(lb), dtype=np.int64)
    fixed = lb == ub
    rest = ~fixed
    mask = np.stack([rest & np.isfinite(lb), rest & np.isfinite(ub)], axis=1).ravel()
    chunks = []
    for col, coef, const in ((cols[fixed], np.full(int(fixed.sum()), -1.0), lb[fixed].copy()),
                             (np.repeat(cols, 2)[mask], np.tile([1.0, -1.0], len(cols))[mask],
                              np.stack([-lb, ub], axis=1).ravel()[mask])):
        chunks.append(SparseChunk(np.arange(len(col) + 1, dtype=np.int64), col, -coef, const))
    return chunks[0], chunks[1]


def _chunk_rows(chunk: LinearChunk | SparseChunk, M: sp.csr_matrix, n: int) -> sp.csr_matrix:
    if isinstance(chunk, SparseChunk):
        block = sp.csr_matrix((np.asarray(chunk.data, dtype=float), np.asarray(chunk.indices, dtype=np.int64),
                               np.asarray(chunk.indptr, dtype=np.int64)), shape=(len(chunk), n))
        block.sum_duplicates()
        return block
    picked = M[chunk.k]
    data = picked.data * np.repeat(chunk.sign, np.diff(picked.indptr))
    return sp.csr_matrix((data, picked.indices, picked.indptr), shape=(len(chunk), n))


def assemble(lists: list[RowList], M: sp.csr_matrix, n: int) -> tuple[sp.csc_matrix, np.ndarray]:
    """:math:`(A, b)` of the rows of ``lists``, in that order, over ``n`` columns (``M``: the read linear rows' matrix
    the :class:`LinearChunk` s refer to; an explicit zero of :math:`A` is not kept)."""
    chunks = [chunk for rows in lists for chunk in rows.items]
    if not chunks:
        return sp.csc_matrix((0, n)), np.zeros(0)
    A = sp.vstack([_chunk_rows(chunk, M, n) for chunk in chunks], format="csr").tocsc()
    A.eliminate_zeros()
    return A, np.concatenate([np.asarray(chunk.const, dtype=float) for chunk in chunks])


class FormRows:
    """A model's conic form as its rows are added, by cone kind: ``zero`` and ``nonneg`` (:class:`RowList`), the
    ``soc`` / ``pow`` blocks in order, and what each constraint's dual reads. The builders' linear rows and the rows
    linear in atoms already met are added here as arrays; every other row is read by the ``reader`` (:meth:`add`)."""

    def __init__(self, program: Program, reader: ShapeReader, batched: bool = True):
        self.program = program
        self.reader = reader
        self.batched = batched  # linear rows and rows linear in atoms met before added as arrays
        self.variables = reader.variables
        self.linear = program.rows  # the builders' linear rows
        self._sides: tuple[list, list] | None = None  # self.linear's lower and upper sides (linear_constraint)
        self.zero = RowList()
        self.nonneg = RowList()
        self.blocks: list[tuple[tuple, RowList]] = []  # ((kind, dim, alpha), rows) of each soc / pow block
        self.duals: list[tuple] = []  # (constraint, [(kind, row, factor)], (block, (orient, quad, lin)) or None)
        self.row_duals: list[tuple] = []  # the linear chunks': (kind, owner, row, factor) arrays
        self.atom_duals: tuple[list, list, list] = ([], [], [])  # atom rows': (constraint, nonneg row, factor)

    def add(self, con: Any, pieces: list[Piece]) -> None:
        """The pieces of ``con`` (``None`` for the objective's), in order: ``zero`` and ``nonneg`` rows after those
        of their kind, a ``soc`` or ``pow`` piece as the next block; the dual of the pieces that carry one kept as
        ``con``'s (none kept if none does)."""
        rows, block = [], None
        for kind, items, alpha, dual in pieces:
            if kind is ConeKind.ZERO or kind is ConeKind.NONNEG:
                target = self.zero if kind is ConeKind.ZERO else self.nonneg
                for row in items:
                    target.append(row)
                    if dual is not None:
                        rows.append((kind, len(target) - 1, dual))
                continue
            if dual is not None:
                block = (len(self.blocks), dual)
            self.blocks.append(((kind, len(items), alpha), RowList(items)))
        if rows or block is not None:
            self.duals.append((con, rows, block))

    def read_rows(self) -> None:
        """Every active row in model order: the rows the reader reads between the builders' linear rows, which are
        added as chunks of arrays (batched) or one by one (:meth:`linear_constraint`)."""
        reader, atom_rows = self.reader, self.program.atom_rows  # the rows not read as linear, linear in nodes
        if not self.batched:
            for con in self.program.model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
                if not self.linear_constraint(con):
                    self.add(con, reader.constraint(con, atom_rows.get(id(con))))
            return
        others, positions = self.linear.others, self.linear.other_position.tolist()
        blocks = {b.start: b for b in self.linear.atom_blocks}
        done, j = 0, 0
        while j < len(others):
            at = positions[j]
            self.linear_rows(done, at - j)  # at - j: the linear rows before the j-th other row
            done = at - j
            block = blocks.get(j)
            if block is not None and self.atom_block(block):  # its rows are consecutive in the model: no linear row
                j += len(block.constraints)                     # between them
                continue
            con, read = others[j], atom_rows.get(id(others[j]))
            if read is None or not self.atom_row(con, read):
                self.add(con, reader.constraint(con, read))
            j += 1
        self.linear_rows(done, len(self.linear.constraints))

    def linear_constraint(self, con: Any) -> bool:
        """A row read by :func:`tpm_models.solvers.rows.read_rows` (the builders' linear rows), added by itself as
        the reader would add it, its body row ``k`` of the read rows' matrix; ``False`` when it is not such a row."""
        k = self.linear.row_of.get(id(con))
        if k is None:
            return False
        if self._sides is None:  # the rows' sides as Python floats, once (numpy scalars are slow one at a time)
            self._sides = (self.linear.lower.tolist(), self.linear.upper.tolist())
        lower, upper = self._sides[0][k], self._sides[1][k]  # sides minus the body's constant
        M = self.linear.M
        body = dict(zip(M.indices[M.indptr[k]:M.indptr[k + 1]].tolist(), M.data[M.indptr[k]:M.indptr[k + 1]].tolist()))
        minus = {c: -a for c, a in body.items()}
        if con.equality or lower == upper:
            self.zero.append((minus, lower))  # s = rhs - body = 0
            self.duals.append((con, [(ConeKind.ZERO, len(self.zero) - 1, -1.0)], None))
            return True
        rows = []
        if upper < math.inf:  # s = upper - body >= 0
            self.nonneg.append((minus, upper))
            rows.append((ConeKind.NONNEG, len(self.nonneg) - 1, -1.0))
        if lower > -math.inf:  # s = body - lower >= 0
            self.nonneg.append((body, -lower))
            rows.append((ConeKind.NONNEG, len(self.nonneg) - 1, 1.0))
        if rows:
            self.duals.append((con, rows, None))
        return True

    def linear_rows(self, k0: int, k1: int) -> None:
        """The read linear rows ``k0 <= k < k1`` (in model order, as :meth:`linear_constraint` would add them one
        by one) added as two chunks of arrays, their duals as arrays (:func:`linear_chunks`)."""
        if k1 <= k0:
            return
        zero, nonneg, zero_duals, nonneg_duals = linear_chunks(self.linear.lower, self.linear.upper,
                                                             self.linear.equality, k0, k1)
        for kind, rows, chunk, (owner, factor) in ((ConeKind.ZERO, self.zero, zero, zero_duals),
                                                    (ConeKind.NONNEG, self.nonneg, nonneg, nonneg_duals)):
            self.row_duals.append((kind, owner, len(rows) + np.arange(len(chunk), dtype=np.int64), factor))
            rows.add_chunk(chunk)

    def atom_row(self, con: Any, read: tuple) -> bool:
        """A one-sided row linear in atoms already met (``read``: its :func:`~.expression_terms.atom_terms`; (23)'s
        margin rows at p = 2) added as the reader would add it: one ``nonneg`` row in a :class:`SparseRun`, its dual as
        arrays. ``False`` when the row is not such a row (then the reader reads it)."""
        lower, _, upper = con.to_bounded_expression(True)
        if (lower is None) == (upper is None):
            return False
        orient, bound = (1.0, float(upper)) if upper is not None else (-1.0, float(lower))
        if not math.isfinite(bound):
            return False
        cols, coefs, const, terms = read
        taus, weights = [], []
        for coef, node in terms:
            known = self.reader.nodes.get(id(node))
            if known is None or (orient * coef < 0) != (known[1] in self.reader.concave):
                return False  # a new node, or a term on the wrong side: the reader reads it (or says why not)
            taus.append(known[1])
            weights.append(orient * coef)
        # the row g = orient * (body - bound) <= 0 as s = -g >= 0: A = orient * (a, atoms' coefficients)
        self.nonneg.append_sparse(list(cols) + taus, [orient * a for a in coefs] + weights, -(orient * (const - bound)))
        self.atom_duals[0].append(con)
        self.atom_duals[1].append(len(self.nonneg) - 1)
        self.atom_duals[2].append(-orient)
        return True

    def atom_block(self, block: AtomBlock) -> bool:
        """The rows of ``block`` (:class:`~.rows.AtomBlock`) added as :meth:`atom_row` would add them one by one, as
        one :class:`SparseChunk` of ``nonneg`` rows; ``False`` (nothing added) unless every row is one-sided with a
        finite side and the node is an atom already met, on its convex side (then each row is read by itself)."""
        known = self.reader.nodes.get(id(block.node))
        upper_side, lower_side = np.isfinite(block.upper), np.isfinite(block.lower)
        if known is None or not (upper_side != lower_side).all() or \
                np.isnan(block.upper).any() or np.isnan(block.lower).any():
            return False
        tau = known[1]
        orient = np.where(upper_side, 1.0, -1.0)
        bound = np.where(upper_side, block.upper, block.lower)
        weights = orient * block.atom
        if ((weights < 0) != (tau in self.reader.concave)).any():
            return False
        # each row: its linear terms (times orient), then the epigraph column of the node (atom_row's order)
        k = len(block.constraints)
        counts = np.diff(block.indptr)
        indptr = block.indptr + np.arange(k + 1, dtype=np.int64)
        last = indptr[1:] - 1
        indices = np.empty(indptr[-1], dtype=np.int64)
        data = np.empty(indptr[-1])
        linear = np.ones(indptr[-1], dtype=bool)
        linear[last] = False
        indices[linear] = block.cols
        data[linear] = np.repeat(orient, counts) * block.coefs
        indices[last] = tau
        data[last] = weights
        first = len(self.nonneg)
        self.nonneg.add_chunk(SparseChunk(indptr, indices, data, -(orient * (0.0 - bound))))
        self.atom_duals[0].extend(block.constraints)
        self.atom_duals[1].extend(range(first, first + k))
        self.atom_duals[2].extend((-orient).tolist())
        return True

    def bounds(self) -> None:
        """The variables' bounds, column by column (:func:`bound_chunks`)."""
        zero, nonneg = bound_chunks(*self.program.bounds)
        self.zero.add_chunk(zero)
        self.nonneg.add_chunk(nonneg)

    def form(self, n: int, objective: tuple, aux_names: list[str]) -> ConicForm:
        """The form of the rows added, over ``n`` columns: rows in cone order (zero, nonneg, then the blocks), each
        constraint's dual read off them; ``objective``: ``(P, q, q0, sense)``."""
        cones = [(kind, len(rows)) for kind, rows in ((ConeKind.ZERO, self.zero), (ConeKind.NONNEG, self.nonneg))
                 if len(rows)]
        block_start = []
        start = len(self.zero) + len(self.nonneg)
        for cone, rows in self.blocks:
            block_start.append(start)
            cones.append(cone)
            start += len(rows)
        offset = {ConeKind.ZERO: 0, ConeKind.NONNEG: len(self.zero)}
        duals: list[tuple] = []
        for con, rows, block in self.duals:
            if block is None:
                duals.append((con, [(offset[kind] + r, f) for kind, r, f in rows]))
                continue
            index, (orient, quad, lin) = block
            duals.append((con, [], block_start[index], self.blocks[index][0][1], quad, lin, orient))
        row_duals = []
        if self.row_duals:
            row_duals.append((self.linear.constraints, np.concatenate([o for _, o, _, _ in self.row_duals]),
                              np.concatenate([offset[kind] + r for kind, _, r, _ in self.row_duals]),
                              np.concatenate([f for _, _, _, f in self.row_duals])))
        if self.atom_duals[0]:
            cons, at, factor = self.atom_duals
            rows_at = offset[ConeKind.NONNEG] + np.asarray(at, dtype=np.int64)
            row_duals.append((cons, np.arange(len(cons), dtype=np.int64), rows_at, np.asarray(factor, dtype=float)))
        A, b = assemble([self.zero, self.nonneg] + [rows for _, rows in self.blocks], self.linear.M, n)
        return ConicForm.from_parts(self.variables, aux_names, objective, A, b, cones, duals, row_duals)


def objective_matrices(sense: int, quad: dict, lin: dict, n: int) -> tuple[sp.csc_matrix, np.ndarray]:
    """:math:`(P, q)` of the objective :math:`\\sum_{ij} Q_{ij} x_i x_j + l^\\top x` in the sense of a minimisation,
    as :math:`\\tfrac12 x^\\top Px + q^\\top x` (``P``: its upper triangle); :class:`NotConicError` if it is not
    convex."""
    q = np.zeros(n)
    for c, a in lin.items():
        q[c] += sense * a
    pr, pc, pd = [], [], []
    for (i, j), a in quad.items():  # 1/2 x'Px: P_ii = 2a, P_ij = a (upper triangle)
        pr.append(i)
        pc.append(j)
        pd.append(sense * (2.0 * a if i == j else a))
    P = sp.csc_matrix((pd, (pr, pc)), shape=(n, n))
    if any(a < 0 or i != j for (i, j), a in quad.items()):  # else a nonnegative diagonal: convex
        cols = sorted({c for k in quad for c in k})
        sub = P[cols, :][:, cols].toarray()
        lam = np.linalg.eigvalsh(sub + np.triu(sub, 1).T)
        if lam.min() < -PSD_TOL * max(1.0, float(np.abs(lam).max())):
            raise NotConicError(f"the objective's quadratic part is not convex (eigenvalue {lam.min():.3g})")
    return P, q


def conic_form(model: pyo.ConcreteModel, program: Program | None = None, batched: bool = True) -> ConicForm:
    """``model`` in Clarabel's standard form; :class:`NotConicError` if a row or the objective is not one of the
    recognised shapes. ``program``: the solve's reading of ``model`` (a fresh one if not given). ``batched=False``
    adds every row by itself (the same form: the reference of ``tests/solvers/test_conic_rows.py``)."""
    program = Program(model) if program is None else program
    reader = ShapeReader(program)
    rows = FormRows(program, reader, batched)
    sense, quad, lin, q0, pieces = reader.objective()
    rows.add(None, pieces)
    rows.read_rows()
    rows.bounds()
    n = reader.n + len(reader.aux_names)
    P, q = objective_matrices(sense, quad, lin, n)
    return rows.form(n, (P, q, sense * q0, sense), reader.aux_names)


def conic_program(program: Program) -> ConicForm:
    """The conic form of ``program``'s model (:func:`conic_form`), built once per program and kept on it
    (``program.conic``); :class:`NotConicError`, also kept (``program.not_conic``), when it has none."""
    if program.not_conic is not None:
        raise NotConicError(program.not_conic)
    if program.conic is None:
        try:
            program.conic = conic_form(program.model, program)
        except NotConicError as exc:
            program.not_conic = str(exc)
            raise
    return cast(ConicForm, program.conic)  # Program.conic: typed object there (no import of cones: a cycle)


def why_not_conic(model: pyo.ConcreteModel, program: Program | None = None) -> str | None:
    """``None`` if :func:`conic_form` maps ``model``, else the reason it cannot (``program``: the solve's reading of
    ``model``, whose conic form, if built, is not built again)."""
    try:
        conic_program(Program(model) if program is None else program)
    except NotConicError as exc:
        return str(exc)
    return None
