"""The linear rows of a Pyomo model read into ``scipy.sparse`` in one pass, without Pyomo's generic walker.

The builders write every linear row as one ``LinearExpression`` (:func:`tpm_models.models.shapes.linear_row`),
or as a short sum of such expressions, parameter-times-variable terms and variables (the margin rows of
(23) and (29): ``x_i'w + theta - eps_i * sum_j s_j + xi_i``). :func:`linear_terms` reads such a body
directly from its argument lists (the way :mod:`tpm_models.export.lp_text` reads a row), a few
microseconds a row where ``generate_standard_repn`` takes 30-100; :func:`read_rows` reads every row of a
model that way and returns the rows it could not read (a quadratic or nonlinear body, a node it does not
know) for the caller's generic path. A block of rows its builder recorded (:mod:`tpm_models.models.row_blocks`:
the margin rows of (2), (3), (10), (11), (15), (23), (26)-(29)) is read in one numpy pass instead
(:func:`block_terms`), while the record still holds for the model as it is now; the same arrays to the bit
(``tests/solvers/test_bulk_rows.py``).

What a body is read into: the columns (``column[id(var)]``), coefficients and the constant, with a
repeated variable's coefficients added (as ``generate_standard_repn`` adds them) and no term dropped;
:func:`to_csr` sums duplicates and removes zero coefficients, so the matrix equals the one read by
``generate_standard_repn`` (``tests/solvers/test_sparse.py``: structure exact, numbers to 1e-12).

Why not Pyomo's own compiler: at :math:`10^5` points (``scale_data``, class 1), the linear rows of (15) and (28)
(25,000 x 25,000) take 0.25 s and 0.28 s here against 3.4 s and 4.1 s by Pyomo 6.10's
``LinearStandardFormCompiler`` (``mixed_form=True``), which also refuses a quadratic objective and a cone row
(measured under load 6-9, ratios 13.6 and 14.8). Pyomo's ``LinearRepnVisitor`` is the certificate's reader
(:mod:`tpm_models.solvers.certificate_reading`), so the two readings stay independent.
"""

from __future__ import annotations

import math
import numbers
import operator
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import reduce
from itertools import chain, islice

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp
from pyomo.common.numeric_types import native_numeric_types
from pyomo.core.base.param import ParamData, ScalarParam
from pyomo.core.base.var import ScalarVar, VarData
from pyomo.core.expr import numeric_expr as ne

from tpm_models.models.row_blocks import RowBlock, param_values, row_blocks

_PLAIN = (float, int)
_VARIABLES = (VarData, ScalarVar)


def _is_number(x) -> bool:
    """``x`` is a number (not a Pyomo component or expression). ``isinstance(x, numbers.Number)`` on a Pyomo
    expression walks the ABC's registry (about 10 microseconds a call): Pyomo's objects are told apart first."""
    return x.__class__ in native_numeric_types or (not hasattr(x, "is_expression_type")
                                                   and isinstance(x, numbers.Number))


class _NotLinear(Exception):
    """A node :func:`linear_terms` does not read (the caller's generic path reads the row)."""


def _coefficient(c) -> float:
    """A term's coefficient: a number, or an expression of parameters only (``-eps[i]``: the negation of a
    parameter is read directly, anything else by ``pyo.value``)."""
    cls = c.__class__
    if cls in _PLAIN or _is_number(c):
        return float(c)
    if cls is ParamData:
        return float(c.value)
    if cls is ne.NPV_NegationExpression and c.args[0].__class__ is ParamData:
        return -float(c.args[0].value)
    if cls is ne.NPV_SumExpression:  # (23)-(29): sum_i eps_i, 10^5 terms that Pyomo's visitor reads slowly
        total = _param_sum(c)
        if total is not None:
            return total
    if c.is_potentially_variable():
        raise _NotLinear
    return float(pyo.value(c))


def _constant(e) -> bool:
    """A number or an expression without variables."""
    return _is_number(e) or not e.is_potentially_variable()


def _param_sum(c) -> float | None:
    """The value of a sum (nested sums included) of numbers and parameters, or ``None`` if it holds anything else.
    The terms are added last to first (the order of the walk below); a flat sum of parameters ((23)-(29)'s
    ``sum_i eps_i``, 10^5 terms) is read in one pass (:func:`~tpm_models.models.row_blocks.param_values`) and added
    in that order."""
    args = c.args if c.__class__ is ne.NPV_SumExpression else None
    if args is not None and len(args) > 16 and set(map(type, args)) <= {ParamData}:
        values = param_values(args)
        if set(map(type, values)) <= {float, int}:
            return float(reduce(operator.add, reversed(values), 0.0))
    total, stack = 0.0, [c]
    while stack:
        e = stack.pop()
        cls = e.__class__
        if cls is ne.NPV_SumExpression:
            stack.extend(e.args)
        elif cls is ParamData or cls is ScalarParam:
            total += e.value
        elif cls in _PLAIN:
            total += e
        else:
            return None
    return float(total)


def constant_value(c) -> float:
    """The value of ``c``, a number or an expression without variables, as :func:`_coefficient` reads a term's
    coefficient (a sum of parameters in one pass); ``ValueError`` if it holds a variable."""
    try:
        return _coefficient(c)
    except _NotLinear:
        raise ValueError(f"{c} holds a variable") from None


def _walk(expr, scale: float, column: dict, cols: list, coefs: list) -> float:
    """Add ``scale * expr``'s linear terms to ``cols``/``coefs``; return its constant (``_NotLinear``: not linear)."""
    cls = expr.__class__
    if cls is ne.LinearExpression:
        mono, get = ne.MonomialTermExpression, column.__getitem__
        args = expr.args
        if all(a.__class__ is mono for a in args):  # the builders' rows: monomials only, read in bulk
            cs, vs = zip(*[a._args_ for a in args]) if args else ((), ())
            if all(c.__class__ is float for c in cs):
                cols.extend([get(id(v)) for v in vs])  # a fixed variable has no column: KeyError, the generic path
                coefs.extend(cs if scale == 1.0 else [scale * c for c in cs])
                return 0.0
        const = 0.0
        add_col, add_coef = cols.append, coefs.append
        first = len(coefs)
        for arg in expr.args:
            acls = arg.__class__
            if acls is mono:
                c, v = arg._args_
                add_col(get(id(v)))  # a fixed variable has no column: KeyError, the generic path
                add_coef(c if c.__class__ is float else _coefficient(c))
            elif acls is VarData or acls is ScalarVar:
                add_col(get(id(arg)))
                add_coef(1.0)
            elif acls in _PLAIN:
                const += arg
            else:  # a constant of parameters, or a nested node: its terms are scaled below with the others
                const += _walk(arg, 1.0, column, cols, coefs)
        if scale != 1.0:
            for k in range(first, len(coefs)):
                coefs[k] *= scale
        return scale * const
    if cls in _VARIABLES:
        cols.append(column[id(expr)])
        coefs.append(scale)
        return 0.0
    if cls in _PLAIN or _is_number(expr):
        return scale * float(expr)
    if cls is ne.MonomialTermExpression:
        c, v = expr._args_
        return _walk(v, scale * _coefficient(c), column, cols, coefs)
    if cls is ne.SumExpression:
        return sum(_walk(a, scale, column, cols, coefs) for a in expr.args)
    if cls is ne.NegationExpression:
        return _walk(expr.args[0], -scale, column, cols, coefs)
    if cls is ne.ProductExpression:
        a, b = expr.args
        if _constant(a):
            return _walk(b, scale * _coefficient(a), column, cols, coefs)
        if _constant(b):
            return _walk(a, scale * _coefficient(b), column, cols, coefs)
        raise _NotLinear
    if cls is ne.DivisionExpression and _constant(expr.args[1]):
        return _walk(expr.args[0], scale / _coefficient(expr.args[1]), column, cols, coefs)
    if expr.is_named_expression_type():
        return _walk(expr.expr, scale, column, cols, coefs)
    if not expr.is_potentially_variable():
        return scale * float(pyo.value(expr))
    raise _NotLinear


def linear_terms(body, column: dict) -> tuple[list[int], list[float], float] | None:
    """``(columns, coefficients, constant)`` of a linear ``body`` (columns by ``column[id(var)]``), or ``None``
    when the body holds a node read only by Pyomo's generic walker (a square, a fixed variable, a function...)."""
    cols: list[int] = []
    coefs: list[float] = []
    try:
        const = _walk(body, 1.0, column, cols, coefs)
    except (_NotLinear, KeyError, AttributeError, TypeError):
        return None
    return cols, coefs, float(const)


def scaled_node(expr) -> tuple[float, object | None]:
    """``(c, node)`` with ``expr = c * node`` read through negations, products and divisions by constants and named
    expressions (``-eps_i * norm_w`` -> ``(-eps_i, the expression of norm_w)``); ``(1.0, None)`` when ``expr`` holds
    no variable. The caller recognises ``node`` (a node it has seen)."""
    coef = 1.0
    try:
        while True:
            cls = expr.__class__
            if cls is ne.NegationExpression:
                coef, expr = -coef, expr.args[0]
            elif cls is ne.ProductExpression and _constant(expr.args[0]):
                coef, expr = coef * _coefficient(expr.args[0]), expr.args[1]
            elif cls is ne.ProductExpression and _constant(expr.args[1]):
                coef, expr = coef * _coefficient(expr.args[1]), expr.args[0]
            elif cls is ne.MonomialTermExpression:
                coef, expr = coef * _coefficient(expr.args[0]), expr.args[1]
            elif cls is ne.DivisionExpression and _constant(expr.args[1]):
                coef, expr = coef / _coefficient(expr.args[1]), expr.args[0]
            elif not _is_number(expr) and expr.is_named_expression_type():
                expr = expr.expr
            else:
                break
    except (_NotLinear, AttributeError, TypeError):
        return 1.0, None
    return coef, (None if _is_number(expr) else expr)


class _AnyColumn(dict):
    """Column 0 for every variable: :func:`linear_terms` with it says whether a body is linear, whatever its columns."""

    def __missing__(self, key: int) -> int:
        return 0


ANY_COLUMN = _AnyColumn()
"""A ``column`` argument of :func:`linear_terms` for a test of linearity only (every variable is column 0)."""


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
    """``LinearRows.atom_rows``: the readings of the rows walked, kept, and those of the rows of
    :class:`AtomBlock` s, made from the block's arrays when asked for (one Python object a row would cost more than
    the rest of their reading); keys in the order of ``others``."""

    def __init__(self, walked: dict, blocks: list, others: list):
        self.walked, self.blocks, self.others = walked, blocks, others
        self._where: dict | None = None

    def __getitem__(self, key: int):
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
    """The active constraints whose body :func:`linear_terms` could not read, in model order."""
    position: np.ndarray
    """Where row ``k`` stands among the model's active constraints (``component_data_objects`` order)."""
    other_position: np.ndarray
    """Where ``others[k]`` stands among them."""
    atom_rows: Mapping
    """``id(constraint)`` -> :func:`atom_terms` of its body for each constraint in ``others`` (``None`` where it is
    not read so), its columns and coefficients as ``array.array`` s (8 bytes a term); the rows of :attr:`atom_blocks`
    made only when asked for (:class:`AtomRows`)."""
    atom_blocks: list = field(default_factory=list)
    """The recorded blocks of rows linear in one node ((23)'s margin rows at p = 2, one per point of X_c), read in
    one pass (:class:`AtomBlock`): their rows are consecutive in ``others``."""
    _row_of: dict | None = field(default=None, repr=False)

    @property
    def row_of(self) -> dict:
        """``id(constraint)`` -> its row ``k`` (made when first asked for: a solve of the builders' models that reads
        the rows in chunks never asks)."""
        if self._row_of is None:
            self._row_of = {id(c): k for k, c in enumerate(self.constraints)}
        return self._row_of

    def in_blocks(self) -> np.ndarray:
        """Which rows of ``others`` belong to one of :attr:`atom_blocks` (a mask over ``others``)."""
        mask = np.zeros(len(self.others), dtype=bool)
        for block in self.atom_blocks:
            mask[block.start:block.start + len(block.constraints)] = True
        return mask

    def in_model_order(self) -> np.ndarray:
        """The permutation putting the rows, then ``others``, back in the model's order: with it, ``order[i]`` is
        the index (into ``constraints + others``) of the model's ``i``-th active constraint."""
        order = np.empty(len(self.position) + len(self.other_position), dtype=np.int64)
        order[self.position] = np.arange(len(self.position))
        order[self.other_position] = len(self.position) + np.arange(len(self.other_position))
        return order


def _numbers(values, dtype) -> np.ndarray:
    """``values`` (a list, or an ``array.array`` read without a copy) as a numpy array."""
    if isinstance(values, array):
        return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)
    return np.asarray(values, dtype=dtype)


def to_csr(indptr, cols, coefs, shape: tuple[int, int]) -> sp.csr_matrix:
    """A CSR matrix from row pointers and terms (lists, or ``array.array`` s), duplicates summed and zeros removed."""
    M = sp.csr_matrix((_numbers(coefs, float), _numbers(cols, np.int64), _numbers(indptr, np.int64)), shape=shape)
    M.sum_duplicates()
    M.eliminate_zeros()
    return M


def read_rows(model: pyo.ConcreteModel, column: dict, n: int, bulk: bool = True) -> LinearRows:
    """Every active constraint of ``model`` whose body :func:`linear_terms` reads, as :class:`LinearRows` over
    ``n`` columns (``column[id(var)]``, the model's unfixed variables in order); the others are returned in ``others``.
    ``bulk``: the builders' recorded row blocks (:func:`tpm_models.models.row_blocks.row_blocks`) are read from
    their records, in bulk; ``False`` walks every row's expression (the reading the bulk one is tested against).
    Read afresh at each call (a solve reads it once: :attr:`tpm_models.solvers.program.Program.rows`)."""
    return _read_rows(model, column, n, bulk)


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
    buffer.frombytes(memoryview(np.ascontiguousarray(values)).cast("B"))


def block_terms(block: RowBlock, rows: list, column: dict) -> tuple | None:
    """:meth:`RowBlock.read` of ``rows``, kept only when its first and last rows are also what the walk reads (a
    record that does not match its rows is the builder's error: its rows are then walked)."""
    read = block.read(rows, column)
    if read is None:
        return None
    cols, coefs, atoms = read
    for k in {0, len(rows) - 1}:
        lo, body, up = rows[k].to_bounded_expression(True)
        walked = atom_terms(body, column)
        a, b = block.indptr[k], block.indptr[k + 1]
        if walked is None or walked[0] != cols[a:b].tolist() or walked[1] != coefs[a:b].tolist() \
                or bool(rows[k].equality) != block.equality:
            return None
        if atoms is None:
            if walked[3] or (-math.inf if lo is None else float(lo) - walked[2]) != block.lower[k] \
                    or (math.inf if up is None else float(up) - walked[2]) != block.upper[k]:
                return None
        elif walked[2] != 0.0 or len(walked[3]) != 1 or walked[3][0][0] != atoms[k] \
                or walked[3][0][1] is not block.atom.expr \
                or (-math.inf if lo is None else float(lo)) != block.lower[k] \
                or (math.inf if up is None else float(up)) != block.upper[k]:
            return None
    return read


def _read_rows(model: pyo.ConcreteModel, column: dict, n: int, bulk: bool) -> LinearRows:
    constraints, others, lower, upper, equality = [], [], [], [], []
    position, other_position, atom_rows, atom_blocks = [], [], {}, []
    # the terms as machine numbers (8 bytes each, no Python list of objects): at 10^6 points (15) holds 2.1e7 terms
    indptr, cols, coefs = array("q", [0]), array("q"), array("d")
    inf, linear = math.inf, ne.LinearExpression
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
                                             np.asarray(read[2], dtype=float), block.atom.expr, block.lower,
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
        atoms: list = []
        try:
            const = None
            if body.__class__ is linear:  # the builders' rows: read by _walk without the atom reader's dispatch
                try:
                    const = _walk(body, 1.0, column, cols, coefs)
                except _NotLinear:
                    del cols[start:], coefs[start:]
            if const is None:
                const = _walk_atoms(body, 1.0, column, cols, coefs, atoms)
        except (_NotLinear, KeyError, AttributeError, TypeError, ZeroDivisionError):
            atoms = None
        if atoms != []:  # not linear: the row goes to others, with its reading as linear in nodes if there is one
            atom_rows[id(con)] = None if atoms is None else (cols[start:], coefs[start:], float(const), atoms)
            del cols[start:], coefs[start:]
            others.append(con)
            other_position.append(i)
            continue
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


# ------------------------------------------------------------------- rows linear in shared nonlinear nodes


def _walk_atoms(expr, scale: float, column: dict, cols: list, coefs: list, atoms: list,
                named: dict | None = None) -> float:
    """:func:`_walk` that keeps a term it cannot read linearly as an atom ``(scale, node)`` (``node`` with its
    named-expression wrappers removed) instead of failing; returns the constant. ``named``: the named expressions
    already read as one atom, ``id -> (node, factor)`` (the :math:`m_{-c}` terms ``eps_i * norm_w`` of (23)'s
    objective at p = 2 share one ``norm_w``: it is walked once, not once per point)."""
    cls = expr.__class__
    if cls is ne.SumExpression:
        if named is None:
            named = {}
        total = 0.0
        linear = ne.LinearExpression
        for a in expr.args:
            if a.__class__ is linear:  # a term read by _walk (below), without the dispatch: (23)'s objective at
                start = len(cols)      # p = 2 sums m_-c rows x_i'w
                try:
                    total += _walk(a, scale, column, cols, coefs)
                    continue
                except _NotLinear:
                    del cols[start:], coefs[start:]
            total += _walk_atoms(a, scale, column, cols, coefs, atoms, named)
        return total
    if cls is ne.NegationExpression:
        return _walk_atoms(expr.args[0], -scale, column, cols, coefs, atoms, named)
    if cls is ne.ProductExpression or cls is ne.MonomialTermExpression or cls is ne.DivisionExpression:
        a, b = expr.args
        if cls is not ne.DivisionExpression and _constant(a):
            return _walk_atoms(b, scale * _coefficient(a), column, cols, coefs, atoms, named)
        if _constant(b):
            factor = _coefficient(b)
            return _walk_atoms(a, scale / factor if cls is ne.DivisionExpression else scale * factor,
                               column, cols, coefs, atoms, named)
    elif cls not in _VARIABLES and not _is_number(expr) and expr.is_named_expression_type():
        known = None if named is None else named.get(id(expr))
        if known is not None:
            atoms.append((scale * known[1], known[0]))
            return 0.0
        start, first = len(cols), len(atoms)
        const = _walk_atoms(expr.expr, scale, column, cols, coefs, atoms, named)
        if named is not None and len(cols) == start and len(atoms) == first + 1 and const == 0.0 and scale != 0.0:
            named[id(expr)] = (atoms[first][1], atoms[first][0] / scale)  # one atom: read as such from now on
        return const
    start = len(cols)
    try:
        return _walk(expr, scale, column, cols, coefs)
    except _NotLinear:
        del cols[start:], coefs[start:]
        atoms.append((scale, expr))
        return 0.0


def atom_terms(expr, column: dict) -> tuple[list[int], list[float], float, list[tuple[float, object]]] | None:
    """``expr`` read as ``constant + sum_k a_k x_k + sum_j c_j * node_j``: ``(columns, coefficients, constant,
    [(c_j, node_j)])``, the nodes being the terms :func:`linear_terms` cannot read (``eps_i * norm_w`` in (23)'s
    margin rows: ``(-eps_i, sqrt(...))``; ``0.5 * w_j**2``), the same node object wherever the model shares it, so
    a caller reads each distinct node once. ``None`` when a variable is not in ``column`` (a fixed variable, a
    variable of another model) or a node is not an expression."""
    cols: list[int] = []
    coefs: list[float] = []
    atoms: list[tuple[float, object]] = []
    try:
        const = _walk_atoms(expr, 1.0, column, cols, coefs, atoms)
    except (_NotLinear, KeyError, AttributeError, TypeError, ZeroDivisionError):
        return None
    return cols, coefs, float(const), atoms


def read_atom_rows(model: pyo.ConcreteModel, rows: LinearRows, column: dict, n: int) -> dict:
    """``id(constraint)`` -> :func:`atom_terms` of its body (``None`` where it is not read so) for every constraint
    in ``rows.others`` (``rows`` read by :func:`read_rows` with the same ``column``, ``n``, in the same walk)."""
    return rows.atom_rows


def _product_term(node, column: dict) -> tuple[int, int, float] | None:
    """``(i, j, c)`` of a node ``c * x_i * x_j`` (``x_i**2``, ``x_i*x_j``, ``(c*x_i)*x_j``), else ``None``."""
    cls = node.__class__
    if cls is ne.PowExpression:
        v, e = node.args
        if e.__class__ in _PLAIN and e == 2 and v.__class__ in _VARIABLES and id(v) in column:
            return column[id(v)], column[id(v)], 1.0
        return None
    if cls is ne.ProductExpression:
        a, b = node.args
        coef = 1.0
        if a.__class__ is ne.MonomialTermExpression:
            coef, a = _coefficient(a.args[0]), a.args[1]
        if b.__class__ is ne.MonomialTermExpression:
            c2, b = b.args
            coef *= _coefficient(c2)
        if a.__class__ in _VARIABLES and b.__class__ in _VARIABLES and id(a) in column and id(b) in column:
            return column[id(a)], column[id(b)], coef
    return None


def product_terms(terms: tuple | None, column: dict) -> tuple | None:
    """An objective's :func:`atom_terms` ``terms`` as ``const + l'x + sum_k a_k x_{i_k} x_{j_k}``:
    ``(i, j, a, linear columns, linear coefficients, const)`` (arrays; a square has ``i == j``), every term as written
    (a term of coefficient 0 is kept: what the objective holds); ``None`` when ``terms`` is or a node is not such a
    product (then Pyomo's ``generate_standard_repn`` reads it)."""
    if terms is None:
        return None
    qi, qj, qa = [], [], []
    try:
        for c, node in terms[3]:
            term = _product_term(node, column)
            if term is None:
                return None
            qi.append(term[0])
            qj.append(term[1])
            qa.append(c * term[2])
    except (AttributeError, TypeError, ValueError):
        return None
    return (np.asarray(qi, dtype=np.int64), np.asarray(qj, dtype=np.int64), np.asarray(qa, dtype=float),
            np.asarray(terms[0], dtype=np.int64), np.asarray(terms[1], dtype=float), terms[2])
