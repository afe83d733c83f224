"""How two solutions are compared: relative gaps of objectives and distances of solutions.

Objectives are compared relatively to a scale: :func:`rel_gap` with ``scale`` the sum of the
absolute values of the objective's terms at the optimum (:func:`objective_scale`). The robust
and binary objectives are sums of terms that cancel to 1e-4 or less of their size, and every
solver's error is relative to the terms, not to the small total.
"""

from __future__ import annotations

import numpy as np
import pyomo.core as pyo
from pyomo.repn import generate_standard_repn


def rel_gap(a: float, b: float, scale: float = 0.0) -> float:
    """:math:`|a-b| / \\max(|a|, |b|, |scale|)` (0 when all three are 0)."""
    denom = max(abs(a), abs(b), abs(scale))
    return 0.0 if denom == 0.0 else abs(a - b) / denom


def rel_dist(u: np.ndarray, v: np.ndarray) -> float:
    """:math:`\\|u-v\\|_2 / \\max(\\|v\\|_2, 1)`."""
    u, v = np.asarray(u, float), np.asarray(v, float)
    return float(np.linalg.norm(u - v)) / max(float(np.linalg.norm(v)), 1.0)


def objective_scale(model: pyo.ConcreteModel) -> float:
    """Sum of the absolute values of the objective's terms at the model's current values."""
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    repn = generate_standard_repn(objective.expr, quadratic=True)
    total = abs(float(pyo.value(repn.constant)))
    total += sum(abs(c * v.value) for v, c in zip(repn.linear_vars, repn.linear_coefs))
    total += sum(abs(c * u.value * v.value) for (u, v), c in zip(repn.quadratic_vars, repn.quadratic_coefs))
    if repn.nonlinear_expr is not None:
        total += abs(pyo.value(repn.nonlinear_expr))
    return float(total)
