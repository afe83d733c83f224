"""The variables of a Pyomo model as a solve reads them (its columns, bounds, integer domains, values), each
reading one pass, made once per solve by :class:`tpm_models.solvers.program.Program`."""

from __future__ import annotations

import math
import operator

import numpy as np
import pyomo.core as pyo
from pyomo.core.base.var import ScalarVar, VarData
from pyomo.core.expr.visitor import identify_variables

_BOUND_TYPES = frozenset((float, int, type(None)))


def model_variables(model: pyo.ConcreteModel) -> list:
    """Every variable of the model, fixed or not, in model order (``component_data_objects``)."""
    return list(model.component_data_objects(pyo.Var, descend_into=True))


def free_variables(model: pyo.ConcreteModel, variables: list | None = None) -> tuple[list, dict]:
    """The model's unfixed variables in model order (``component_data_objects``; of ``variables``, the model's
    variables, when the caller has read them) and their columns ``{id(v): k}``, the numbering of
    :func:`tpm_models.solvers.rows.read_rows`."""
    free = [v for v in (model_variables(model) if variables is None else variables) if not v.fixed]
    return free, {id(v): k for k, v in enumerate(free)}


def variable_bounds(variables: list) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper bounds of ``variables`` (``-inf``/``inf`` where absent: ``v.bounds``, one call a variable),
    as read-only arrays."""
    out = _stored_bounds(variables)
    if out is None:
        both = np.array([v.bounds for v in variables], dtype=float).reshape(-1, 2)  # None -> NaN (never NaN else)
        lb, ub = both[:, 0], both[:, 1]
        lb[np.isnan(lb)] = -math.inf
        ub[np.isnan(ub)] = math.inf
        out = (np.ascontiguousarray(lb), np.ascontiguousarray(ub))
    for bound in out:
        bound.flags.writeable = False  # shared by the steps of a solve (Program.bounds)
    return out


_STORED_LB, _STORED_UB, _STORED_DOMAIN = (operator.attrgetter(name) for name in ("_lb", "_ub", "_domain"))


def _stored_bounds(variables: list) -> tuple[np.ndarray, np.ndarray] | None:
    """``v.bounds`` of every variable (``-inf``/``inf`` where absent) from what a ``VarData`` stores (``_lb``,
    ``_ub``, its domain's bounds read once a domain), resolved as ``VarData.bounds`` does (a missing or infinite bound
    is the domain's, the tighter of two holds); ``None`` unless every variable is a ``VarData`` or ``ScalarVar`` with
    number or missing bounds (else Pyomo's own reading decides)."""
    if not variables or not set(map(type, variables)) <= {VarData, ScalarVar}:
        return None
    lower, upper = list(map(_STORED_LB, variables)), list(map(_STORED_UB, variables))
    if not set(map(type, lower)) <= _BOUND_TYPES or not set(map(type, upper)) <= _BOUND_TYPES:
        return None
    lo, up = np.array(lower, dtype=float), np.array(upper, dtype=float)  # None -> NaN
    if int(np.isnan(lo).sum()) != lower.count(None) or int(np.isnan(up).sum()) != upper.count(None) \
            or (lo == math.inf).any() or (up == -math.inf).any():
        return None  # a NaN or a bound on the wrong side of infinity: Pyomo raises, and says why
    domains = list(map(_STORED_DOMAIN, variables))
    _, first, inverse = np.unique(np.fromiter(map(id, domains), dtype=np.int64, count=len(domains)),
                                  return_index=True, return_inverse=True)
    table = np.array([domains[k].bounds() for k in first.tolist()], dtype=float).reshape(-1, 2)  # None -> NaN
    d_lo, d_up = table[inverse.ravel(), 0], table[inverse.ravel(), 1]
    lo[lo == -math.inf] = np.nan  # an infinite bound is no bound
    up[up == math.inf] = np.nan
    lb = np.where(np.isnan(lo), d_lo, np.where(np.isnan(d_lo), lo, np.maximum(lo, d_lo)))
    ub = np.where(np.isnan(up), d_up, np.where(np.isnan(d_up), up, np.minimum(up, d_up)))
    lb[np.isnan(lb)] = -math.inf
    ub[np.isnan(ub)] = math.inf
    return lb, ub


def integer_mask(variables: list) -> np.ndarray:
    """Which of ``variables`` have an integer or binary domain (``not v.is_continuous()``), each distinct domain tested
    once (the builders' 10^5 variables share a few)."""
    ids = list(map(id, map(operator.attrgetter("domain"), variables)))
    continuous = {key: v.is_continuous() for key, v in dict(zip(ids, variables)).items()}  # a variable a domain
    if all(continuous.values()):
        return np.zeros(len(variables), dtype=bool)
    return np.array([not continuous[key] for key in ids], dtype=bool)


def set_values(variables: list, x: np.ndarray) -> None:
    """Load ``x`` into ``variables`` (one value each, in order; the inverse of :func:`values_array`), unvalidated: a
    backend's point, which the certificate then judges."""
    for var, value in zip(variables, x):
        var.set_value(float(value), skip_validation=True)


def values_array(variables: list) -> np.ndarray:
    """The current values of ``variables`` (NaN where unset)."""
    return np.array([math.nan if v.value is None else v.value for v in variables], dtype=float)


def fill_unused_variables(model: pyo.ConcreteModel, variables: list | None = None) -> int:
    """Give each unfixed variable without a value that no active row or objective holds (Pyomo's interfaces leave
    them so) a value within its bounds: 0 moved into them (the integer nearest 0 for an integer one). Returns how many
    were given one. ``variables``: the model's variables, when the caller has read them."""
    missing = [v for v in (model_variables(model) if variables is None else variables)
               if v.value is None and not v.fixed]
    if not missing:
        return 0
    used: set[int] = set()  # the variables the active rows and objectives hold
    for ctype in (pyo.Constraint, pyo.Objective):
        for data in model.component_data_objects(ctype, active=True, descend_into=True):
            used.update(map(id, identify_variables(data.expr, include_fixed=False)))
    filled = 0
    for v in missing:
        if id(v) in used:
            continue
        lb, ub = v.bounds
        lo, hi = (-math.inf if lb is None else float(lb)), (math.inf if ub is None else float(ub))
        value = min(max(0.0, lo), hi)
        if v.is_integer():  # the integer nearest 0 within the bounds
            value = float(math.ceil(lo) if value == lo else math.floor(hi) if value == hi else 0.0)
        v.set_value(value, skip_validation=True)
        filled += 1
    return filled


def foreign_variables(model: pyo.ConcreteModel) -> str | None:
    """The first active row holding a variable that is not one of the model's own components, as
    ``"row holds variable"``; ``None`` when there is none (the rows are walked: called after a failure only)."""
    own = {id(v) for v in model_variables(model)}
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        for v in identify_variables(con.body, include_fixed=True):
            if id(v) not in own:
                return f"{con.name} holds {v.name}"
    return None


FAR = 1e15
"""A value this large (in absolute value) of a variable unbounded on that side is no optimum a backend can have
found: it is a backend's stand-in for infinity (SCIP's is 1e20; its "optimal" on ``max log(x)`` stopped at 1e16)."""


def far_variable(variables: list) -> str | None:
    """``"x = 1e+16"`` for the first of the unfixed ``variables`` at :data:`FAR` or beyond on a side without a bound,
    else ``None`` (:func:`tpm_models.solvers.dispatch.solve` does not take such a point as optimal without a proof)."""
    for v in variables:
        x = v.value
        if x is None or abs(x) < FAR:
            continue
        lb, ub = v.bounds
        if (x > 0 and ub is None) or (x < 0 and lb is None):
            return f"{v.name} = {x:.3g}"
    return None
