"""CPLEX through Pyomo's ``cplex_direct``; the pip wheel's Community licence is size-limited."""

from __future__ import annotations

from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.pyomo_interfaces import legacy_runner

register_backend(
    "cplex", "cplex", {"LP", "QP", "SOCP"},
    legacy_runner("cplex_direct", lambda t: {
        "barrier_convergetol": common.OPTIMALITY_TOL, "barrier_qcpconvergetol": common.OPTIMALITY_TOL,
        "mip_tolerances_mipgap": common.MIP_GAP,
        **({"timelimit": t} if t else {}),
    }),
    integers=True, sos=True,
)
