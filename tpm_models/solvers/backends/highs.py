"""HiGHS through Pyomo's ``highs`` interface (newer solver API): LP and QP. Unreliable on this paper's
duals (docs/solvers.md), so never a default."""

from __future__ import annotations

from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.pyomo_interfaces import contrib_runner

register_backend(
    "highs", "highspy", {"LP", "QP"},
    contrib_runner("highs", lambda t: {
        "qp_iteration_limit": common.ITERATION_LIMIT, "simplex_iteration_limit": common.ITERATION_LIMIT,
        "primal_feasibility_tolerance": common.OPTIMALITY_TOL, "dual_feasibility_tolerance": common.OPTIMALITY_TOL,
        "mip_rel_gap": common.MIP_GAP,
    }),
    tee=True,
    integers=True,  # HiGHS's branch and bound (MILP; a MIQP it does not take ends as an error, never relaxed)
)
