"""Ipopt on a fresh machine: the Ipopt + MUMPS library bundled in CasADi's PyPI wheel,
driven from a Pyomo model.

Pyomo's own ``ipopt`` interface needs an ``ipopt`` executable and its ``cyipopt``
interface needs the PyNumero ASL library, neither of which pip provides. So
:func:`to_casadi` translates the model's objective and constraints into CasADi
expressions (exact first and second derivatives by CasADi's automatic
differentiation), Ipopt solves, and :func:`run` loads the solution and maps the
multipliers back onto the Pyomo constraints. When an ``ipopt`` executable is on the
``PATH`` (idaes-pse or conda installs), :mod:`tpm_models.solvers` uses it through
Pyomo instead.

Multipliers: CasADi's Lagrangian is :math:`f + \\lambda_g^\\top g + \\lambda_x^\\top x` for the
minimised :math:`f`, so :math:`\\partial f^\\star/\\partial(\\text{bound of } g) = -\\lambda_g`; the
model's dual (``tpm_models.solvers`` convention) is ``-sense * lam_g``.
"""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr import numeric_expr as ne
from pyomo.core.expr.numvalue import native_numeric_types
from pyomo.repn import generate_standard_repn

IPOPT_OPTIONS = {
    "tol": 1e-12,
    "constr_viol_tol": 1e-12,
    "compl_inf_tol": 1e-12,
    "dual_inf_tol": 1e-12,
    "bound_relax_factor": 0.0,
}
"""Ipopt's defaults stop at an absolute constraint violation of 1e-4 and relax every bound
by 1e-8: on (15) (objective ~1e-3) that left 8e-6 relative error; at 1e-10 (3) on Iris was still
3e-6 off relative to its terms, at 1e-12 it is 5e-8, at no cost in time (the problems are
small and Ipopt converges superlinearly). ``bound_relax_factor = 0`` keeps ``xi >= 0`` exact."""

COLD_START = 0.01
"""Start value of variables without a value. Not 0: the norms of (23) (``sqrt``, powers) have
no derivative at w = 0, where Ipopt stopped with ``Invalid_Number_Detected``."""

_UNARY = {
    "sqrt": "sqrt", "exp": "exp", "log": "log", "log10": "log10", "sin": "sin", "cos": "cos",
    "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh",
    "tanh": "tanh", "abs": "fabs",
}


class UnsupportedExpression(ValueError):
    """The model uses an expression the CasADi translation does not know."""


def to_casadi(expr, symbols: dict):
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
        return getattr(ca, _UNARY[expr.getname()])(args[0])
    raise UnsupportedExpression(f"cannot pass {type(expr).__name__} ({expr}) to Ipopt via CasADi")


def _translate(expr, x, column: dict, symbols: dict):
    """Polynomial part of degree <= 2 through matrices (fast), the rest through :func:`to_casadi`."""
    import casadi as ca

    repn = generate_standard_repn(expr, quadratic=True)
    n = x.shape[0]
    out = float(pyo.value(repn.constant))
    if repn.linear_vars:
        a = np.zeros(n)
        for v, coef in zip(repn.linear_vars, repn.linear_coefs):
            a[column[id(v)]] += coef
        out = out + ca.dot(ca.DM(a), x)
    if repn.quadratic_vars:
        rows = [column[id(u)] for u, _ in repn.quadratic_vars]
        cols = [column[id(v)] for _, v in repn.quadratic_vars]
        Q = ca.DM.triplet(rows, cols, ca.DM(list(repn.quadratic_coefs)), n, n)
        out = out + ca.bilin(Q, x, x)
    if repn.nonlinear_expr is not None:
        out = out + to_casadi(repn.nonlinear_expr, symbols)
    return out


def run(model: pyo.ConcreteModel, time_limit: float | None, iteration_limit: int):
    """Solve ``model`` with CasADi's Ipopt; returns ``(status, duals by constraint, message)``
    where ``status`` is Ipopt's return status string."""
    import casadi as ca

    objective = next(model.component_data_objects(pyo.Objective, active=True))
    variables = [v for v in model.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
    x = ca.SX.sym("x", len(variables))
    symbols = {id(v): x[k] for k, v in enumerate(variables)}
    column = {id(v): k for k, v in enumerate(variables)}
    sense = 1.0 if objective.sense == pyo.minimize else -1.0
    f = sense * _translate(objective.expr, x, column, symbols)
    constraints = list(model.component_data_objects(pyo.Constraint, active=True, descend_into=True))
    g = [_translate(c.body, x, column, symbols) for c in constraints]

    def bound(value, default):
        return default if value is None else float(pyo.value(value))

    lbg = [bound(c.lower, -math.inf) for c in constraints]
    ubg = [bound(c.upper, math.inf) for c in constraints]
    lbx = np.array([bound(v.lb, -math.inf) for v in variables])
    ubx = np.array([bound(v.ub, math.inf) for v in variables])
    start = np.array([COLD_START if v.value is None else float(v.value) for v in variables])
    start = np.clip(start, lbx, ubx)

    options = {
        "print_time": False,
        "ipopt": {
            "print_level": 0, "sb": "yes", "max_iter": iteration_limit, **IPOPT_OPTIONS,
            **({"max_cpu_time": float(time_limit)} if time_limit else {}),
        },
    }
    nlp = {"x": x, "f": f, "g": ca.vertcat(*g) if g else ca.SX(0, 1)}
    solver = ca.nlpsol("tpm_models_ipopt", "ipopt", nlp, options)
    sol = solver(x0=start, lbx=lbx, ubx=ubx, lbg=lbg if g else [], ubg=ubg if g else [])
    status = solver.stats()["return_status"]
    for v, value in zip(variables, np.asarray(sol["x"]).ravel()):
        v.set_value(float(value), skip_validation=True)
    lam_g = np.asarray(sol["lam_g"]).ravel()
    duals = {c: float(-sense * lam) for c, lam in zip(constraints, lam_g)}
    return status, duals, status

