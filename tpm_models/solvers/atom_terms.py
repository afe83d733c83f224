"""Rows and objectives linear in nodes (``sqrt``, powers, products): their linear terms and the nodes with their
coefficients (:func:`atom_terms`), the blocks of such rows a builder recorded (:class:`AtomBlock`), and an objective's
products of two columns (:func:`product_terms`), for :mod:`tpm_models.solvers.rows`, the program and the conic form."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, MutableSequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from pyomo.core.expr import numeric_expr as ne

from tpm_models.solvers.linear_walk import PLAIN, VARIABLES, NotLinear, coefficient, is_constant, is_number, walk


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


def walk_atoms(expr: Any, scale: float, column: dict, cols: MutableSequence[int], coefs: MutableSequence[float],
               atoms: list,
                named: dict | None = None) -> float:
    """:func:`walk` that keeps a term it cannot read linearly as an atom ``(scale, node)`` (``node`` with its
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
            if a.__class__ is linear:  # a term read by walk (below), without the dispatch: (23)'s objective at
                start = len(cols)      # p = 2 sums m_-c rows x_i'w
                try:
                    total += walk(a, scale, column, cols, coefs)
                    continue
                except NotLinear:
                    del cols[start:], coefs[start:]
            total += walk_atoms(a, scale, column, cols, coefs, atoms, named)
        return total
    if cls is ne.NegationExpression:
        return walk_atoms(expr.args[0], -scale, column, cols, coefs, atoms, named)
    if cls is ne.ProductExpression or cls is ne.MonomialTermExpression or cls is ne.DivisionExpression:
        a, b = expr.args
        if cls is not ne.DivisionExpression and is_constant(a):
            return walk_atoms(b, scale * coefficient(a), column, cols, coefs, atoms, named)
        if is_constant(b):
            factor = coefficient(b)
            return walk_atoms(a, scale / factor if cls is ne.DivisionExpression else scale * factor,
                               column, cols, coefs, atoms, named)
    elif cls not in VARIABLES and not is_number(expr) and expr.is_named_expression_type():
        known = None if named is None else named.get(id(expr))
        if known is not None:
            atoms.append((scale * known[1], known[0]))
            return 0.0
        start, first = len(cols), len(atoms)
        const = walk_atoms(expr.expr, scale, column, cols, coefs, atoms, named)
        if named is not None and len(cols) == start and len(atoms) == first + 1 and const == 0.0 and scale != 0.0:
            named[id(expr)] = (atoms[first][1], atoms[first][0] / scale)  # one atom: read as such from now on
        return const
    start = len(cols)
    try:
        return walk(expr, scale, column, cols, coefs)
    except NotLinear:
        del cols[start:], coefs[start:]
        atoms.append((scale, expr))
        return 0.0


def atom_terms(expr: Any, column: dict) -> tuple[list[int], list[float], float, list[tuple[float, object]]] | None:
    """``expr`` read as ``constant + sum_k a_k x_k + sum_j c_j * node_j``: ``(columns, coefficients, constant,
    [(c_j, node_j)])``, the nodes being the terms :func:`linear_terms` cannot read (``eps_i * norm_w`` in (23)'s
    margin rows: ``(-eps_i, sqrt(...))``; ``0.5 * w_j**2``), the same node object wherever the model shares it, so
    a caller reads each distinct node once. ``None`` when a variable is not in ``column`` (a fixed variable, a
    variable of another model) or a node is not an expression."""
    cols: list[int] = []
    coefs: list[float] = []
    atoms: list[tuple[float, object]] = []
    try:
        const = walk_atoms(expr, 1.0, column, cols, coefs, atoms)
    except (NotLinear, KeyError, AttributeError, TypeError, ZeroDivisionError):
        return None
    return cols, coefs, float(const), atoms


def _product_term(node: Any, column: dict) -> tuple[int, int, float] | None:
    """``(i, j, c)`` of a node ``c * x_i * x_j`` (``x_i**2``, ``x_i*x_j``, ``(c*x_i)*x_j``), else ``None``."""
    cls = node.__class__
    if cls is ne.PowExpression:
        v, e = node.args
        if e.__class__ in PLAIN and e == 2 and v.__class__ in VARIABLES and id(v) in column:
            return column[id(v)], column[id(v)], 1.0
        return None
    if cls is ne.ProductExpression:
        a, b = node.args
        coef = 1.0
        if a.__class__ is ne.MonomialTermExpression:
            coef, a = coefficient(a.args[0]), a.args[1]
        if b.__class__ is ne.MonomialTermExpression:
            c2, b = b.args
            coef *= coefficient(c2)
        if a.__class__ in VARIABLES and b.__class__ in VARIABLES and id(a) in column and id(b) in column:
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
