"""Pyomo's value of an expression at the loaded point, for the certificate's check of its own reading of the
objective (:func:`tpm_models.certify.reading.objective_disagrees`).

:func:`pyomo_value` computes what ``pyo.value(expr)`` computes, in the same order: the tree walked in post-order,
each node's value by the node's own ``_apply_operation`` on its arguments' values (Pyomo's arithmetic of that node,
the method Pyomo's evaluation visitor calls). Only the leaves are read more directly: a ``VarData``'s and a
``ParamData``'s stored value as Pyomo's ``value()`` returns it (an unset one refused with Pyomo's ``ValueError``),
any other leaf by ``pyo.value``. So it is no reading of the objective's terms (no coefficient is collected, no sum
taken apart): it evaluates the expression as written, and a misreading of the certificate's reader
(:mod:`tpm_models.certify.gradients`, :mod:`tpm_models.certify.objective`) does not recur here.
"""

from __future__ import annotations

from typing import Any

import pyomo.core as pyo
from pyomo.common.numeric_types import native_types
from pyomo.core.base.param import Param, ParamData
from pyomo.core.base.var import VarData

_NO_VALUE = Param.NoValue


def _unset(leaf: Any) -> ValueError:
    return ValueError(f"No value for uninitialized {type(leaf).__name__} object {leaf.name}")


def pyomo_value(expr: Any) -> Any:
    """``pyo.value(expr)`` at the point (module docstring): the same operations in the same order, so the same
    number; ``ValueError`` for a variable or parameter without a value, Pyomo's own errors for the rest."""
    if expr.__class__ in native_types or not getattr(expr, "is_expression_type", lambda: False)():
        return pyo.value(expr)
    stack: list[tuple[Any, Any, list]] = [(expr, expr.args, [])]
    while True:
        node, args, values = stack[-1]
        for k in range(len(values), len(args)):
            a = args[k]
            cls = a.__class__
            if cls in native_types:
                values.append(a)
            elif cls is VarData:
                v = a.value
                if v is None:
                    raise _unset(a)
                values.append(v)
            elif cls is ParamData:
                v = a._value
                if v is _NO_VALUE or v is None:
                    raise _unset(a)
                values.append(v)
            elif a.is_expression_type():
                stack.append((a, a.args, []))
                break
            else:
                values.append(pyo.value(a))
        else:
            stack.pop()
            result = node._apply_operation(values)
            if not stack:
                return result
            stack[-1][2].append(result)
