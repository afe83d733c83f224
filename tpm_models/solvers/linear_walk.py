"""Linear terms read off a Pyomo expression without Pyomo's generic walker (for :mod:`tpm_models.solvers.rows` and
:mod:`tpm_models.solvers.atom_terms`): :func:`linear_terms` reads a body made of the builders' ``LinearExpression`` s,
parameter-times-variable terms and variables directly from its argument lists, a few microseconds a row where
``generate_standard_repn`` takes 30-100; a node it does not know raises :class:`NotLinear` (the caller's generic path
reads the row)."""

from __future__ import annotations

import numbers
import operator
from collections.abc import MutableSequence
from functools import reduce
from typing import Any

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
    """A node :func:`linear_terms` does not read (the caller's generic path reads the row)."""


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
        elif cls in PLAIN:
            total += e
        else:
            return None
    return float(total)


def constant_value(c: Any) -> float:
    """The value of ``c``, a number or an expression without variables, as :func:`coefficient` reads a term's
    coefficient (a sum of parameters in one pass); ``ValueError`` if it holds a variable."""
    try:
        return coefficient(c)
    except NotLinear:
        raise ValueError(f"{c} holds a variable") from None


def walk(expr: Any, scale: float, column: dict, cols: MutableSequence[int], coefs: MutableSequence[float]) -> float:
    """Add ``scale * expr``'s linear terms to ``cols``/``coefs``; return its constant (``NotLinear``: not linear)."""
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
    if cls in VARIABLES:
        cols.append(column[id(expr)])
        coefs.append(scale)
        return 0.0
    if cls in PLAIN or is_number(expr):
        return scale * float(expr)
    if cls is ne.MonomialTermExpression:
        c, v = expr._args_
        return walk(v, scale * coefficient(c), column, cols, coefs)
    if cls is ne.SumExpression:
        return sum(walk(a, scale, column, cols, coefs) for a in expr.args)
    if cls is ne.NegationExpression:
        return walk(expr.args[0], -scale, column, cols, coefs)
    if cls is ne.ProductExpression:
        a, b = expr.args
        if is_constant(a):
            return walk(b, scale * coefficient(a), column, cols, coefs)
        if is_constant(b):
            return walk(a, scale * coefficient(b), column, cols, coefs)
        raise NotLinear
    if cls is ne.DivisionExpression and is_constant(expr.args[1]):
        return walk(expr.args[0], scale / coefficient(expr.args[1]), column, cols, coefs)
    if expr.is_named_expression_type():
        return walk(expr.expr, scale, column, cols, coefs)
    if not expr.is_potentially_variable():
        return scale * float(pyo.value(expr))
    raise NotLinear


def linear_terms(body: Any, column: dict) -> tuple[list[int], list[float], float] | None:
    """``(columns, coefficients, constant)`` of a linear ``body`` (columns by ``column[id(var)]``), or ``None``
    when the body holds a node read only by Pyomo's generic walker (a square, a fixed variable, a function...)."""
    cols: list[int] = []
    coefs: list[float] = []
    try:
        const = walk(body, 1.0, column, cols, coefs)
    except (NotLinear, KeyError, AttributeError, TypeError):
        return None
    return cols, coefs, float(const)


def scaled_node(expr: Any) -> tuple[float, object | None]:
    """``(c, node)`` with ``expr = c * node`` read through negations, products and divisions by constants and named
    expressions (``-eps_i * norm_w`` -> ``(-eps_i, the expression of norm_w)``); ``(1.0, None)`` when ``expr`` holds
    no variable. The caller recognises ``node`` (a node it has seen)."""
    coef = 1.0
    try:
        while True:
            cls = expr.__class__
            if cls is ne.NegationExpression:
                coef, expr = -coef, expr.args[0]
            elif cls is ne.ProductExpression and is_constant(expr.args[0]):
                coef, expr = coef * coefficient(expr.args[0]), expr.args[1]
            elif cls is ne.ProductExpression and is_constant(expr.args[1]):
                coef, expr = coef * coefficient(expr.args[1]), expr.args[0]
            elif cls is ne.MonomialTermExpression:
                coef, expr = coef * coefficient(expr.args[0]), expr.args[1]
            elif cls is ne.DivisionExpression and is_constant(expr.args[1]):
                coef, expr = coef / coefficient(expr.args[1]), expr.args[0]
            elif not is_number(expr) and expr.is_named_expression_type():
                expr = expr.expr
            else:
                break
    except (NotLinear, AttributeError, TypeError):
        return 1.0, None
    return coef, (None if is_number(expr) else expr)


