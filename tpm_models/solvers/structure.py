"""What a Pyomo model holds and where its values stand: its class, its values, its violations.

Nothing here solves; :func:`tpm_models.solvers.dispatch.solve` and the checks use these readings.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyomo.environ as pyo
from pyomo.repn import generate_standard_repn

from tpm_models.solvers.rows import ANY_COLUMN, linear_terms


def _structure(expr):
    """The standard representation of ``expr`` with parameters kept as symbols (``compute_values=False``):
    what the expression *holds*, whatever the current values of its mutable ``Param`` s."""
    return generate_standard_repn(expr, quadratic=True, compute_values=False)


def model_class(model: pyo.ConcreteModel) -> str:
    """``"LP"``, ``"QP"`` (quadratic objective, linear rows), ``"SOCP"`` (linear or quadratic
    objective; every nonlinear row a second-order cone ``sum a_k x_k^2 <= b y^2`` with
    ``a, b > 0`` and ``y >= 0``) or ``"NLP"``.

    The class is read from what the objective and the rows *hold*, never from the values of
    their parameters: (23) at p = 2 is an NLP at ``eps = 0`` too (its rows still hold
    ``eps[i] * sqrt(...)``), so a model's class, and the solvers that may take it, do not change
    with ``eps``. Only the cone test reads the signs of the quadratic coefficients.
    """
    objective = _structure(objective_of(model).expr)
    if objective.nonlinear_expr is not None:
        return "NLP"
    conic = False
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        if linear_terms(con.body, ANY_COLUMN) is not None:  # a linear row, read fast (tpm_models.solvers.rows)
            continue
        repn = _structure(con.body)
        if repn.nonlinear_expr is not None:
            return "NLP"
        if repn.quadratic_vars:
            if not _is_cone(con, repn):
                return "NLP"
            conic = True
    if conic:
        return "SOCP"
    return "QP" if objective.quadratic_vars else "LP"


def _is_cone(con, repn) -> bool:
    """``sum a_k x_k^2 - b y^2 <= 0`` (or its negation >= 0) with a, b > 0 and y >= 0."""
    if repn.linear_vars or pyo.value(repn.constant) != 0:
        return False
    if con.upper is not None and con.lower is None and pyo.value(con.upper) == 0:
        sign = 1.0
    elif con.lower is not None and con.upper is None and pyo.value(con.lower) == 0:
        sign = -1.0
    else:
        return False
    negative = []
    for (u, v), coef in zip(repn.quadratic_vars, repn.quadratic_coefs):
        if u is not v:
            return False
        if sign * pyo.value(coef) < 0:
            negative.append(u)
    return len(negative) == 1 and negative[0].lb is not None and pyo.value(negative[0].lb) >= 0


def component_values(model: pyo.ConcreteModel, get: Callable, ctype) -> dict[str, float | np.ndarray]:
    """``get(data)`` of every component of type ``ctype`` by name: a float for a scalar component,
    an array in index order otherwise (the layout of :class:`tpm_models.solvers.common.SolveResult`)."""
    out: dict[str, float | np.ndarray] = {}
    for comp in model.component_objects(ctype, active=None if ctype is pyo.Var else True, descend_into=True):
        if comp.is_indexed():
            out[comp.local_name] = np.array([get(comp[k]) for k in comp.index_set()], dtype=float)
        else:
            out[comp.local_name] = float(get(comp))
    return out


def values_of(model: pyo.ConcreteModel) -> dict[str, float | np.ndarray]:
    """Current variable values by component name (NaN where unset)."""

    def get(v):
        return np.nan if v.value is None else float(v.value)

    return component_values(model, get, pyo.Var)


def max_violation(model: pyo.ConcreteModel) -> float:
    """Largest violation of a constraint or variable bound at the model's current values."""
    worst = 0.0
    for v in model.component_data_objects(pyo.Var, descend_into=True):
        if v.value is None:
            return math.inf
        if v.lb is not None:
            worst = max(worst, v.lb - v.value)
        if v.ub is not None:
            worst = max(worst, v.value - v.ub)
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        body = pyo.value(con.body, exception=False)
        if body is None or not math.isfinite(body):
            return math.inf
        if con.lower is not None:
            worst = max(worst, pyo.value(con.lower) - body)
        if con.upper is not None:
            worst = max(worst, body - pyo.value(con.upper))
    return float(worst)


def title(model: pyo.ConcreteModel) -> str:
    """The model's name as given to its builder (Pyomo quotes names with spaces)."""
    return model.name.strip("'")


def objective_of(model: pyo.ConcreteModel):
    """The active objective of ``model``."""
    return next(model.component_data_objects(pyo.Objective, active=True))
