"""The linear rows of a Pyomo model read into ``scipy.sparse`` in one pass, without Pyomo's generic walker.

:func:`read_rows` reads each row's body with :func:`~.expression_terms.walk` and leaves the rows it does not read as
linear to the caller; a block of rows its builder recorded (:mod:`tpm_models.models.row_blocks`) is read in one numpy
pass while the record holds for the model as it is now, to the bit (``tests/solvers/test_bulk_rows.py``). Repeated
variables are added, no term dropped: the matrix of ``generate_standard_repn`` (``tests/solvers/test_sparse.py``).
Why not Pyomo's ``LinearStandardFormCompiler``: ``docs/solvers.md``, "The rows' reading during a large run".
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any, cast

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp
from pyomo.core.expr import numeric_expr as ne

from tpm_models.models.row_blocks import RowBlock, row_blocks
from tpm_models.solvers.expression_terms import NotLinear, atom_terms, walk


@dataclass
class AtomBlock:
    """Rows of a recorded block (:class:`~tpm_models.models.row_blocks.RowBlock` with an ``atom``) read in one pass:
    ``lower[k] <= sum_t coefs_t x_{cols_t} + atom[k] * node <= upper[k]``, ``t`` in ``indptr[k]:indptr[k+1]`` (the
    terms as written, a repeated column not summed), ``constraints[k]`` being ``others[start + k]`` of the
    :class:`LinearRows` that holds it. Row ``k`` is what :func:`atom_terms` reads of its body (:meth:`row`)."""

    start: int
    constraints: list
    indptr: np.ndarray
    cols: np.ndarray
    coefs: np.ndarray
    atom: np.ndarray
    node: object
    lower: np.ndarray
    upper: np.ndarray

    def row(self, k: int) -> tuple:
        """Row ``k`` as :func:`atom_terms` reads it: ``(columns, coefficients, 0.0, [(atom[k], node)])``."""
        a, b = int(self.indptr[k]), int(self.indptr[k + 1])
        return (array("q", self.cols[a:b].astype(np.int64).tobytes()), array("d", self.coefs[a:b].tobytes()), 0.0,
                [(float(self.atom[k]), self.node)])

    def linear(self, n: int) -> sp.csr_matrix:
        """The rows' linear parts over ``n`` columns (a repeated column summed, a zero kept). The arrays are copied:
        ``sum_duplicates`` sorts in place, and they may be the builder's record."""
        L = sp.csr_matrix((self.coefs, self.cols, self.indptr), shape=(len(self.constraints), n), copy=True)
        L.sum_duplicates()
        return L


class AtomRows(Mapping):
    """``LinearRows.atom_rows``: the readings of the rows walked, and those of the :class:`AtomBlock` s' rows made
    from the block's arrays when asked for; keys in the order of ``others``."""

    def __init__(self, walked: dict, blocks: list, others: list):
        self.walked, self.blocks, self.others = walked, blocks, others
        self._where: dict | None = None

    def __getitem__(self, key: int) -> Any:
        if key in self.walked:
            return self.walked[key]
        if self._where is None:
            self._where = {id(con): (block, k) for block in self.blocks for k, con in enumerate(block.constraints)}
        block, k = self._where[key]
        return block.row(k)

    def __iter__(self) -> Iterator[int]:
        return (id(con) for con in self.others)

    def __len__(self) -> int:
        return len(self.others)


@dataclass
class LinearRows:
    """The linear rows of a model: ``lower <= M x <= upper`` (``-inf``/``inf`` for a missing side; an equality
    has ``lower == upper``), row ``k`` being ``constraints[k]``, and the rows left to a generic reader."""

    constraints: list
    M: sp.csr_matrix
    lower: np.ndarray
    upper: np.ndarray
    equality: np.ndarray
    """``con.equality`` of each row (a ranged row with equal sides is not one)."""
    others: list
    """The active constraints whose body :func:`read_rows` could not read as linear, in model order."""
    position: np.ndarray
    """Where row ``k`` stands among the model's active constraints (``component_data_objects`` order)."""
    other_position: np.ndarray
    """Where ``others[k]`` stands among them."""
    atom_rows: Mapping
    """``id(constraint)`` -> :func:`atom_terms` of its body for each of ``others`` (``None`` where it is not read
    so; columns and coefficients as ``array.array`` s), :class:`AtomRows`."""
    atom_blocks: list = field(default_factory=list)
    """The recorded blocks of rows linear in one node ((23)'s margin rows at p = 2), consecutive in ``others``."""
    _row_of: dict | None = field(default=None, repr=False)

    @property
    def row_of(self) -> dict:
        """``id(constraint)`` -> its row ``k`` (made when first asked for)."""
        if self._row_of is None:
            self._row_of = {id(c): k for k, c in enumerate(self.constraints)}
        return self._row_of

    def in_blocks(self) -> np.ndarray:
        """Which rows of ``others`` belong to one of :attr:`atom_blocks` (a mask over ``others``)."""
        mask = np.zeros(len(self.others), dtype=bool)
        for block in self.atom_blocks:
            mask[block.start:block.start + len(block.constraints)] = True
        return mask


def _numbers(values: Any, dtype: Any) -> np.ndarray:
    """``values`` (a list, or an ``array.array`` read without a copy) as a numpy array."""
    if isinstance(values, array):
        return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)
    return np.asarray(values, dtype=dtype)


def to_csr(indptr: Any, cols: Any, coefs: Any, shape: tuple[int, int]) -> sp.csr_matrix:
    """A CSR matrix from row pointers and terms (lists, or ``array.array`` s), duplicates summed and zeros removed."""
    M = sp.csr_matrix((_numbers(coefs, float), _numbers(cols, np.int64), _numbers(indptr, np.int64)), shape=shape)
    M.sum_duplicates()
    M.eliminate_zeros()
    return M


def sign_rows(rows: LinearRows, variables: list) -> set[int]:
    """``id`` s of the variables (the columns ``variables`` of ``rows``) that a row of their own keeps nonnegative
    (``y >= 0`` written as a constraint rather than a bound, ``a*y + c >= l`` with ``a > 0`` and ``l - c >= 0``): a
    cone's ``y`` may be bounded either way."""
    single = np.flatnonzero(np.diff(rows.M.indptr) == 1)
    a = rows.M.data[rows.M.indptr[single]]
    keeps = ((a > 0) & (rows.lower[single] >= 0)) | ((a < 0) & (rows.upper[single] <= 0))
    out: set[int] = {id(variables[j]) for j in rows.M.indices[rows.M.indptr[single[keeps]]]}
    for con, blocked in zip(rows.others, rows.in_blocks().tolist()):
        if blocked:  # a row linear in a node (AtomBlock): not a single variable's
            continue
        body = con.body
        kind = type(body)
        if kind is ne.LinearExpression and len(body.args) == 1:
            body = body.args[0]
            kind = type(body)
        if kind is ne.MonomialTermExpression:
            coef, v = body.args
            coef = float(pyo.value(coef))
        elif not isinstance(body, (int, float)) and body.is_variable_type():
            coef, v = 1.0, body
        else:
            continue
        if v.fixed:
            continue
        lo, up = con.lb, con.ub
        if (coef > 0 and lo is not None and lo >= 0) or (coef < 0 and up is not None and up <= 0):
            out.add(id(v))
    return out


def _append(buffer: array, values: np.ndarray) -> None:
    """Append ``values`` (of the buffer's type) to the ``array.array`` ``buffer`` without a Python object a term."""
    # numpy's stubs give ndarray no __buffer__ before Python 3.12; an ndarray has the buffer protocol
    buffer.frombytes(memoryview(np.ascontiguousarray(values)).cast("B"))  # type: ignore[arg-type]


def block_terms(block: RowBlock, rows: list, column: dict) -> tuple | None:
    """:meth:`RowBlock.read` of ``rows``, or ``None`` unless its first and last rows are what the walk reads."""
    read = block.read(rows, column)
    if read is None:
        return None
    cols, coefs, atoms = read
    atom: Any = block.atom  # RowBlock.atom: a named expression, typed object there
    for k in {0, len(rows) - 1}:
        lo, body, up = rows[k].to_bounded_expression(True)
        walked = atom_terms(body, column)
        a, b = block.indptr[k], block.indptr[k + 1]
        if walked is None or walked[0] != cols[a:b].tolist() or walked[1] != coefs[a:b].tolist() \
                or bool(rows[k].equality) != block.equality:
            return None
        kept = not walked[3] if atoms is None else (walked[2] == 0.0 and len(walked[3]) == 1
                                                     and walked[3][0][0] == atoms[k] and walked[3][0][1] is atom.expr)
        if not kept or (-math.inf if lo is None else float(lo) - walked[2]) != block.lower[k] \
                or (math.inf if up is None else float(up) - walked[2]) != block.upper[k]:
            return None
    return read


def _row_terms(body: Any, column: dict, cols: array, coefs: array) -> tuple[float | None, list | None]:
    """One row's body read onto ``cols``/``coefs`` by :func:`~.expression_terms.walk`: ``(constant, atoms)``
    (``atoms`` empty when it is linear), ``(None, None)`` when it is not read (the caller takes off what it
    appended)."""
    atoms: list = []
    try:
        return walk(body, 1.0, column, cols, coefs, atoms), atoms
    except (NotLinear, KeyError, AttributeError, TypeError, ZeroDivisionError):
        return None, None


def read_rows(model: pyo.ConcreteModel, column: dict, n: int, bulk: bool = True) -> LinearRows:
    """The active constraints of ``model`` as :class:`LinearRows` over ``n`` columns (``column[id(var)]``, the
    unfixed variables in order), those :func:`~.expression_terms.walk` does not read as linear in ``others``.
    ``bulk``: the builders' recorded row blocks are read from their records; ``False`` walks every row."""
    constraints: list = []
    others: list = []
    lower: list[float] = []
    upper: list[float] = []
    equality: list[bool] = []
    position: list[int] = []
    other_position: list[int] = []
    atom_rows: dict = {}
    atom_blocks: list[AtomBlock] = []
    indptr, cols, coefs = array("q", [0]), array("q"), array("d")  # machine numbers: (15) holds 2.1e7 at 10^6
    inf = math.inf
    starts = {id(b.rows[0]): b for b in row_blocks(model) if b.rows} if bulk else {}
    rows = iter(model.component_data_objects(pyo.Constraint, active=True, descend_into=True))
    i = -1
    while (con := next(rows, None)) is not None:
        i += 1
        block = starts.get(id(con)) if starts else None
        if block is not None:  # a recorded block: read in one pass if the record holds for the model as it is now
            chunk = [con, *islice(rows, len(block.rows) - 1)]
            read = block_terms(block, chunk, column)
            if read is not None and read[2] is not None:  # rows linear in one node each: to others, as one block
                atom_blocks.append(AtomBlock(len(others), chunk, block.indptr, read[0].astype(np.int64), read[1],
                                             np.asarray(read[2], dtype=float), cast(Any, block.atom).expr, block.lower,
                                             block.upper))
                others.extend(chunk)
                other_position.extend(range(i, i + len(chunk)))
                i += len(chunk) - 1
                continue
            if read is not None:
                _append(indptr, block.indptr[1:] + len(cols))
                block_cols, block_coefs, _ = read
                del read
                _append(cols, block_cols)
                del block_cols  # one block's terms at a time beside the buffers: (15) at 10^6 has 5.5e6
                _append(coefs, block_coefs)
                del block_coefs
                constraints.extend(chunk)
                lower.extend(block.lower.tolist())
                upper.extend(block.upper.tolist())
                equality.extend([block.equality] * len(chunk))
                position.extend(range(i, i + len(chunk)))
                i += len(chunk) - 1
                continue
            rows = chain(chunk[1:], rows)  # the rest of the chunk is read row by row, as any row
        start = len(cols)
        lo, body, up = con.to_bounded_expression(True)
        const, atoms = _row_terms(body, column, cols, coefs)
        if atoms != []:  # not linear: the row goes to others, with its reading as linear in nodes if there is one
            atom_rows[id(con)] = None if atoms is None else (cols[start:], coefs[start:], float(cast(float, const)),
                                                             atoms)
            del cols[start:], coefs[start:]
            others.append(con)
            other_position.append(i)
            continue
        assert const is not None  # a row walk raised on went to others above
        position.append(i)
        lo = -inf if lo is None else float(lo) - const
        up = inf if up is None else float(up) - const
        constraints.append(con)
        lower.append(lo)
        upper.append(up)
        equality.append(bool(con.equality))
        indptr.append(len(cols))
    M = to_csr(indptr, cols, coefs, (len(constraints), n))
    return LinearRows(constraints, M, np.array(lower, dtype=float), np.array(upper, dtype=float),
                      np.array(equality, dtype=bool), others, np.array(position, dtype=np.int64),
                      np.array(other_position, dtype=np.int64), AtomRows(atom_rows, atom_blocks, others), atom_blocks)
