"""A Pyomo model read for CasADi's Ipopt (:mod:`tpm_models.solvers.ipopt`): expressions translated into CasADi's
(:func:`to_casadi`), the convexity of a QCQP checked from its standard representations (:func:`convexity`), and
those representations kept between solves of the same model (:class:`RowCache`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr import numeric_expr as ne
from pyomo.core.expr.numvalue import native_numeric_types
from pyomo.repn import generate_standard_repn

_UNARY = frozenset({"sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                    "tanh"})
"""Pyomo's unary functions that CasADi has under the same name (``abs``, an ``AbsExpression``, is ``fabs``)."""


class UnsupportedExpression(ValueError):
    """The model uses an expression the CasADi translation does not know."""


def to_casadi(expr: Any, symbols: dict) -> Any:
    """Translate a Pyomo expression; ``symbols`` maps ``id(var)`` to a CasADi symbol."""
    import casadi as ca

    if expr.__class__ in native_numeric_types:
        return float(expr)
    if expr.is_variable_type():
        if expr.fixed:
            return float(expr.value)
        return symbols[id(expr)]
    if not expr.is_potentially_variable():  # parameters, constants, expressions of them
        return float(pyo.value(expr))
    if expr.is_named_expression_type():
        return to_casadi(expr.expr, symbols)
    args = [to_casadi(a, symbols) for a in expr.args]
    if isinstance(expr, (ne.SumExpression, ne.LinearExpression)):
        total = 0
        for a in args:
            total = total + a
        return total
    if isinstance(expr, (ne.ProductExpression, ne.MonomialTermExpression)):
        return args[0] * args[1]
    if isinstance(expr, ne.DivisionExpression):
        return args[0] / args[1]
    if isinstance(expr, ne.PowExpression):
        base, exponent = args
        return base**exponent
    if isinstance(expr, ne.NegationExpression):
        return -args[0]
    if isinstance(expr, ne.AbsExpression):
        return ca.fabs(args[0])
    if isinstance(expr, ne.UnaryFunctionExpression) and expr.getname() in _UNARY:
        return getattr(ca, expr.getname())(args[0])
    raise UnsupportedExpression(f"cannot pass {type(expr).__name__} ({expr}) to Ipopt via CasADi")


CONVEXITY_TOL = 1e-10
"""A quadratic form counts as positive semidefinite when its smallest eigenvalue is at least ``-CONVEXITY_TOL``
times its largest absolute eigenvalue (and 1)."""

CONVEXITY_MAX_DIM = 2000
"""Most variables of one quadratic form whose eigenvalues are computed; a larger form is not certified."""


def _curvature_ok(repn: Any, direction: float) -> bool:
    """True if ``direction * (quadratic part of repn)`` is a positive semidefinite form and there is no other
    nonlinear part (``direction`` +1: convex, -1: concave)."""
    if repn.nonlinear_expr is not None:
        return False
    if not repn.quadratic_vars:
        return True
    index: dict[int, int] = {}
    for u, v in repn.quadratic_vars:
        index.setdefault(id(u), len(index))
        index.setdefault(id(v), len(index))
    if len(index) > CONVEXITY_MAX_DIM:
        return False
    Q = np.zeros((len(index), len(index)))
    for (u, v), coef in zip(repn.quadratic_vars, repn.quadratic_coefs):
        i, j = index[id(u)], index[id(v)]
        Q[i, j] += direction * coef / 2
        Q[j, i] += direction * coef / 2
    eig = np.linalg.eigvalsh(Q)
    return bool(eig.min() >= -CONVEXITY_TOL * max(1.0, float(np.abs(eig).max())))


def convexity(objective: Any, constraints: Any, objective_repn: Any, constraint_repns: Any) -> tuple[bool, str]:
    """Whether the model is a convex QCQP, by its exact quadratic forms: ``(certified, why not)``.

    Convex: a minimised objective with a positive semidefinite quadratic part (a maximised one negative
    semidefinite), every ``body <= u`` positive semidefinite, every ``body >= l`` negative semidefinite, ranged and
    equality rows linear, no other nonlinear term (a convex ``sqrt`` or ``abs`` is not certified). There a KKT point
    is a global optimum, and Ipopt's ``Infeasible_Problem_Detected`` a proof of infeasibility (to its tolerance)."""
    direction = 1.0 if objective.sense == pyo.minimize else -1.0
    if not _curvature_ok(objective_repn, direction):
        return False, f"objective {objective.name} is not a {'convex' if direction > 0 else 'concave'} quadratic"
    for con, repn in zip(constraints, constraint_repns):
        if repn.nonlinear_expr is None and not repn.quadratic_vars:
            continue
        if con.lower is not None and con.upper is not None:
            ok = False
        else:
            ok = _curvature_ok(repn, 1.0 if con.upper is not None else -1.0)
        if not ok:
            return False, f"constraint {con.name} is not a convex quadratic row"
    return True, ""


class NumericRepn:
    """A standard repn with numeric coefficients (fixed variables and parameters evaluated)."""

    __slots__ = ("constant", "linear_vars", "linear_coefs", "quadratic_vars", "quadratic_coefs",
                 "nonlinear_expr", "nonlinear_vars")

    def __init__(self, repn):
        self.constant = float(pyo.value(repn.constant))
        self.linear_vars = tuple(repn.linear_vars)
        self.linear_coefs = tuple(float(pyo.value(c)) for c in repn.linear_coefs)
        self.quadratic_vars = tuple(repn.quadratic_vars)
        self.quadratic_coefs = tuple(float(pyo.value(c)) for c in repn.quadratic_coefs)
        self.nonlinear_expr = repn.nonlinear_expr
        self.nonlinear_vars = tuple(repn.nonlinear_vars)


def _leaves(expr: Any) -> list[tuple] | None:
    """The variables and mutable parameters of ``expr`` with their fixed flags and values, or None if it holds a
    named ``Expression`` (whose content can change in place): while they are unchanged, so is its translation."""
    out, stack = [], [expr]
    while stack:
        e = stack.pop()
        if e.__class__ in native_numeric_types:
            continue
        if e.is_variable_type():
            out.append((e, e.fixed, e.value if e.fixed else None))
        elif e.is_parameter_type():
            out.append((e, True, e.value))
        elif e.is_named_expression_type():
            return None
        elif e.is_expression_type():
            stack.extend(e.args)
    return out


def _unchanged(leaves: list[tuple]) -> bool:
    for leaf, fixed, value in leaves:
        if leaf.is_variable_type():
            if leaf.fixed is not fixed or (fixed and leaf.value != value):
                return False
        elif leaf.value != value:
            return False
    return True


def row_repn(con: Any) -> tuple[NumericRepn, float, float]:
    """``(repn of the body, lower, upper)`` of a constraint (bounds +-inf where absent)."""
    lb, body, ub = con.to_bounded_expression(evaluate_bounds=True)
    return (NumericRepn(generate_standard_repn(body, quadratic=True)),
            -math.inf if lb is None else float(lb), math.inf if ub is None else float(ub))


class RowCache:
    """Translated rows kept between solves of the same model (PyROS re-solves its separation models and a growing
    master): a row is reused while its component holds the same expression object and every variable and mutable
    parameter in it has the fixed flag and (if fixed) the value it had (:func:`_leaves`); a row with a named
    ``Expression`` is translated at every solve."""

    def __init__(self):
        self._rows: dict[int, tuple] = {}

    def _get(self, component, translate):
        expr = component.expr
        hit = self._rows.get(id(component))
        if hit is not None and hit[0] is component and hit[1] is expr:
            if hit[3] is None:  # a named expression: may change in place
                return translate(component)
            if _unchanged(hit[3]):
                return hit[2]
        leaves = _leaves(expr)
        out = translate(component)
        self._rows[id(component)] = (component, expr, out, leaves)
        return out

    def row(self, con: Any) -> tuple[NumericRepn, float, float]:
        return self._get(con, row_repn)

    def objective(self, obj: Any) -> NumericRepn:
        return self._get(obj, objective_repn)


def objective_repn(obj: Any) -> NumericRepn:
    return NumericRepn(generate_standard_repn(obj.expr, quadratic=True))
