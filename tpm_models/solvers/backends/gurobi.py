"""Gurobi through Pyomo's ``gurobi_direct``; the pip wheel's licence is size-limited."""

from __future__ import annotations

from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.pyomo_interfaces import legacy_runner

SIZE_LIMIT_EXCEEDED = 10010
"""Gurobi's ``GRB_ERROR_SIZE_LIMIT_EXCEEDED``: the pip wheel's licence refused the model's size."""

register_backend(
    "gurobi", "gurobipy", {"LP", "QP", "SOCP"},
    legacy_runner("gurobi_direct", lambda t: {
        "OutputFlag": 0, "BarConvTol": common.OPTIMALITY_TOL, "BarQCPConvTol": common.OPTIMALITY_TOL,
        "OptimalityTol": common.OPTIMALITY_TOL,
        "FeasibilityTol": common.OPTIMALITY_TOL, "MIPGap": common.MIP_GAP, **({"TimeLimit": t} if t else {}),
    }, loud={"OutputFlag": 1}),
    tee=True, integers=True, sos=True, pyros="gurobi_direct",
    nonconvex=True,  # Gurobi >= 11 solves non-convex quadratic models globally by default
    licence_limit=lambda exc: (type(exc).__name__ == "GurobiError"
                               and getattr(exc, "errno", None) == SIZE_LIMIT_EXCEEDED),
)
