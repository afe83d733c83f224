"""CPLEX through Pyomo's ``cplex_direct``; the pip wheel's Community licence is size-limited."""

from __future__ import annotations

from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.pyomo_interfaces import legacy_runner

PROBLEM_SIZE_LIMITS_EXCEEDED = 1016
"""CPLEX's error 1016 (``CplexSolverError.args[2]``): the Community Edition's size limits exceeded."""

register_backend(
    "cplex", "cplex", {"LP", "QP", "SOCP"},
    legacy_runner("cplex_direct", lambda t: {
        "barrier_convergetol": common.OPTIMALITY_TOL, "barrier_qcpconvergetol": common.OPTIMALITY_TOL,
        "mip_tolerances_mipgap": common.MIP_GAP,
        **({"timelimit": t} if t else {}),
    }),
    tee=True, integers=True, sos=True,
    licence_limit=lambda exc: type(exc).__name__ == "CplexSolverError" and len(exc.args) > 2
    and exc.args[2] == PROBLEM_SIZE_LIMITS_EXCEEDED,
)
