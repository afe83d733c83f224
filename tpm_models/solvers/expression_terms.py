"""The terms of a Pyomo expression read without Pyomo's generic walker, for :mod:`tpm_models.solvers.rows`, the
program and the conic form: :func:`walk` reads its linear terms from the argument lists (with ``atoms``, the terms
it cannot read linearly, ``sqrt``, powers, products, kept as nodes with their coefficients); :func:`atom_terms` is
that reading of a row or objective; :func:`product_terms` an objective's products of two columns."""

from __future__ import annotations

import numbers
import operator
from collections.abc import MutableSequence
from functools import reduce
from typing import Any

import numpy as np
import pyomo.core as pyo
from pyomo.common.numeric_types import native_numeric_types
from pyomo.core.base.param import ParamData, ScalarParam
from pyomo.core.base.var import ScalarVar, VarData
from pyomo.core.expr import numeric_expr as ne

from tpm_models.models.row_blocks import param_values

PLAIN = (float, int)
VARIABLES = (VarData, ScalarVar)


def is_number(x: Any) -> bool:
    """``x`` is a number (not a Pyomo component or expression). ``isinstance(x, numbers.Number)`` on a Pyomo
    expression walks the ABC's registry (about 10 microseconds a call): Pyomo's objects are told apart first."""
    return x.__class__ in native_numeric_types or (not hasattr(x, "is_expression_type")
                                                   and isinstance(x, numbers.Number))


class NotLinear(Exception):
    """A node :func:`walk` does not read linearly (the caller's generic path reads the row)."""


def coefficient(c: Any) -> float:
    """A term's coefficient: a number, or an expression of parameters only (``-eps[i]``: the negation of a
    parameter is read directly, anything else by ``pyo.value``)."""
    cls = c.__class__
    if cls in PLAIN or is_number(c):
        return float(c)
    if cls is ParamData:
        return float(c.value)
    if cls is ne.NPV_NegationExpression and c.args[0].__class__ is ParamData:
        return -float(c.args[0].value)
    if cls is ne.NPV_SumExpression:  # (23)-(29): sum_i eps_i, 10^5 terms that Pyomo's visitor reads slowly
        total = param_sum(c)
        if total is not None:
            return total
    if c.is_potentially_variable():
        raise NotLinear
    return float(pyo.value(c))


def is_constant(e: Any) -> bool:
    """A number or an expression without variables."""
    return is_number(e) or not e.is_potentially_variable()


def param_sum(c: Any) -> float | None:
    """The value of a sum (nested sums included) of numbers and parameters, added last to first, or ``None`` if it
    holds anything else (a flat sum of parameters, (23)-(29)'s ``sum_i eps_i``, read in one pass)."""
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
        elif cls in PLAIN:
            total += e
        else:
            return None
    return float(total)


def _linear_terms(expr: Any, scale: float, column: dict, cols: MutableSequence[int],
                  coefs: MutableSequence[float]) -> float:
    """:func:`walk` of a ``LinearExpression`` (its nested nodes read strictly: ``NotLinear`` if one is not linear)."""
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
    for arg in args:
        acls = arg.__class__
        if acls is mono:
            c, v = arg._args_
            add_col(get(id(v)))  # a fixed variable has no column: KeyError, the generic path
            add_coef(c if c.__class__ is float else coefficient(c))
        elif acls is VarData or acls is ScalarVar:
            add_col(get(id(arg)))
            add_coef(1.0)
        elif acls in PLAIN:
            const += arg
        else:  # a constant of parameters, or a nested node: its terms are scaled below with the others
            const += walk(arg, 1.0, column, cols, coefs)
    if scale != 1.0:
        for k in range(first, len(coefs)):
            coefs[k] *= scale
    return scale * const


def walk(expr: Any, scale: float, column: dict, cols: MutableSequence[int], coefs: MutableSequence[float],
         atoms: list | None = None, named: dict | None = None) -> float:
    """Add ``scale * expr``'s linear terms to ``cols``/``coefs`` and return its constant. A term not linear raises
    :class:`NotLinear` when ``atoms`` is ``None``, else is kept in ``atoms`` as ``(scale, node)`` (``node`` without
    its named-expression wrappers; a ``LinearExpression`` holding such a term is kept whole). ``named``: the named
    expressions under a sum already read as one atom, ``id -> (node, factor)``, so that a shared one ((23)'s
    ``norm_w`` in ``eps_i * norm_w``) is walked once. A variable not in ``column`` raises ``KeyError``."""
    cls = expr.__class__
    if cls is ne.LinearExpression:
        start = len(cols)
        try:
            return _linear_terms(expr, scale, column, cols, coefs)
        except NotLinear:
            del cols[start:], coefs[start:]
            if atoms is None:
                raise
            atoms.append((scale, expr))
            return 0.0
    if cls in VARIABLES:
        cols.append(column[id(expr)])
        coefs.append(scale)
        return 0.0
    if cls in PLAIN or is_number(expr):
        return scale * float(expr)
    if cls is ne.SumExpression:
        if named is None and atoms is not None:
            named = {}
        total = 0.0
        for a in expr.args:
            total += walk(a, scale, column, cols, coefs, atoms, named)
        return total
    if cls is ne.NegationExpression:
        return walk(expr.args[0], -scale, column, cols, coefs, atoms, named)
    if cls is ne.ProductExpression or cls is ne.MonomialTermExpression or cls is ne.DivisionExpression:
        a, b = expr.args
        if cls is not ne.DivisionExpression and is_constant(a):
            return walk(b, scale * coefficient(a), column, cols, coefs, atoms, named)
        if is_constant(b):
            factor = coefficient(b)
            return walk(a, scale / factor if cls is ne.DivisionExpression else scale * factor,
                        column, cols, coefs, atoms, named)
    elif expr.is_named_expression_type():
        if named is None or atoms is None:
            return walk(expr.expr, scale, column, cols, coefs, atoms, named)
        known = named.get(id(expr))
        if known is not None:
            atoms.append((scale * known[1], known[0]))
            return 0.0
        start, first = len(cols), len(atoms)
        const = walk(expr.expr, scale, column, cols, coefs, atoms, named)
        if len(cols) == start and len(atoms) == first + 1 and const == 0.0 and scale != 0.0:
            named[id(expr)] = (atoms[first][1], atoms[first][0] / scale)  # one atom: read as such from now on
        return const
    if not expr.is_potentially_variable():
        return scale * float(pyo.value(expr))
    if atoms is None:
        raise NotLinear
    atoms.append((scale, expr))
    return 0.0


def atom_terms(expr: Any, column: dict) -> tuple[list[int], list[float], float, list[tuple[float, object]]] | None:
    """``expr`` as ``constant + sum_k a_k x_k + sum_j c_j * node_j``: ``(columns, coefficients, constant,
    [(c_j, node_j)])``, the nodes the terms :func:`walk` keeps as atoms (a node the model shares is the same object
    each time); ``None`` when a variable is not in ``column`` (fixed, of another model) or a node is no expression."""
    cols: list[int] = []
    coefs: list[float] = []
    atoms: list[tuple[float, object]] = []
    try:
        const = walk(expr, 1.0, column, cols, coefs, atoms)
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
    """An objective's :func:`atom_terms` ``terms`` as ``const + l'x + sum_k a_k x_{i_k} x_{j_k}``: ``(i, j, a,
    linear columns, linear coefficients, const)`` (arrays; a square has ``i == j``; every term as written, a zero
    kept); ``None`` when ``terms`` is or a node is not such a product."""
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
