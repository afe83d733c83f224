"""One module per backend; each joins the capability table (:mod:`.registry`) when imported.

The order here is the order of ``tpm-models solvers`` and of the cross-solver ties.
"""

from tpm_models.solvers.backends import ipopt, piqp, daqp, highs, gurobi, cplex, xpress, scip, clarabel, mosek  # noqa: F401, I001
from tpm_models.solvers.backends import linear_decomposition, working_set  # noqa: F401, I001
from tpm_models.solvers.backends.registry import (
    BACKENDS,
    DEFAULT,
    MODEL_CLASSES,
    Backend,
    available_solvers,
    backend_for,
    default_solver,
    honoured_time_limit,
    package_version,
    register_backend,
)

__all__ = ["BACKENDS", "DEFAULT", "MODEL_CLASSES", "Backend", "available_solvers", "backend_for", "default_solver",
           "honoured_time_limit", "package_version", "register_backend"]
