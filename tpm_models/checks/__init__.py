"""The ties between the formulations: each a function returning measured residuals (:class:`CheckResult`).

=================  ===========================================================================
module             ties
=================  ===========================================================================
``deterministic``  strong duality with the omitted constants, primal/dual recovery, the kernel
                   trick, inhom. linear = linear, cross-solver agreement
``robust``         the robust reductions, the (25) oracle, the conic duals, the robust kernel model
``semi_infinite``  Theorem 1: (22) solved by cutting planes and by PyROS; the paper's uncertain data
``wasserstein``    the Wasserstein model (23W): (15) at eps = 0, (23) at nu = alpha, the bounds between them,
                   the worst case attained
``verify``         the verifier of robust counterparts: :func:`verify` (the package's ``verify`` is this function),
                   ``verify_model`` (any registered one), three verdicts
``registered``     the generic ties of any registered model: cross-solver, primal/dual gap
``solves``         :class:`Solves`: each model built once and solved once per solver for the ties
                   that share it
=================  ===========================================================================

The ties that need the fast path or the experiments' protocol live above, in
:mod:`tpm_models.experiments.ties`; ``tpm-models check`` runs them all.
"""

from tpm_models.checks.deterministic import (
    TOL,
    CheckResult,
    check_cross_solver,
    check_kernel_trick,
    check_pair,
    failures,
    run_checks,
)
from tpm_models.checks.registered import check_model_cross_solver, check_model_dual_gap, check_registered
from tpm_models.checks.robust import check_robust, check_robust_duals, run_robust_checks, verify_model
from tpm_models.checks.semi_infinite import SemiInfiniteResult, solve_22_cutting_plane, solve_22_pyros
from tpm_models.checks.solves import Solves

# Last, and on purpose: importing the submodule ``tpm_models.checks.verify`` (above, through ``robust``) binds the
# package's attribute ``verify`` to the module; this binds it to the function, so that
# ``from tpm_models.checks import verify`` gives what can be called. The module stays importable by its full name.
from tpm_models.checks.verify import (
    NOT_A_COUNTERPART,
    UNDECIDED,
    VERDICTS,
    VERIFIED,
    Verification,
    verify,
    verify_counterpart,
)
from tpm_models.checks.wasserstein import check_wasserstein
from tpm_models.models.shapes import dual_constant
from tpm_models.solvers.compare import objective_scale, rel_dist, rel_gap

__all__ = [
    "TOL", "CheckResult", "SemiInfiniteResult", "Solves", "check_cross_solver", "check_kernel_trick",
    "check_model_cross_solver",
    "check_model_dual_gap", "check_pair", "check_registered",
    "check_robust", "check_robust_duals", "dual_constant", "failures", "objective_scale", "rel_dist", "rel_gap",
    "run_checks", "run_robust_checks", "check_wasserstein", "solve_22_cutting_plane", "solve_22_pyros", "verify_model",
    "NOT_A_COUNTERPART", "UNDECIDED", "VERDICTS", "VERIFIED", "Verification", "verify", "verify_counterpart",
]
