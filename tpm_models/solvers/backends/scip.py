"""SCIP through Pyomo's ``scip_direct`` (newer solver API): LP, QP, SOCP and NLP (global)."""

from __future__ import annotations

from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.pyomo_interfaces import contrib_runner

register_backend(
    "scip", "pyscipopt", {"LP", "QP", "SOCP", "NLP"},
    contrib_runner("scip_direct", lambda t: {
        # SCIP's spatial branch and bound ran > 25 min on (23) for Wine at 1e-9 tolerances:
        # never without a time limit (a limit is reported, never returned as optimal)
        "limits/time": t or common.SCIP_TIME_LIMIT,
        # verblevel 0: SCIP can block writing to the pipe Pyomo captures (DESIGN.md).
        # Default feastol 1e-6 left 3e-6 relative error on (15); these reach ~1e-9.
        "display/verblevel": 0, "numerics/feastol": 1e-9, "numerics/dualfeastol": 1e-9,
        "numerics/epsilon": 1e-11, "limits/gap": common.MIP_GAP,
    }),
    integers=True, sos=True, nonconvex=True,  # spatial branch and bound: global (silent: its log can block a pipe)
    pyros="scip",
)
