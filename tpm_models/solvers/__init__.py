"""One ``solve()`` for every backend, one result type, and the capability table.

What each module of the package holds: ``docs/architecture.md``, "What each layer holds".
"""

from tpm_models.certify.certificate import Certificate, certify
from tpm_models.certify.tolerances import FEASIBILITY_TOL, KKT_FAIL_TOL, KKT_TOL, PSD_TOL
from tpm_models.solvers.backends import (
    BACKENDS,
    DEFAULT,
    Backend,
    available_solvers,
    backend_for,
    default_solver,
    register_backend,
)
from tpm_models.solvers.common import (
    DENSE_QP_TOL,
    ITERATION_LIMIT,
    MIP_GAP,
    OPTIMALITY_TOL,
    SCIP_TIME_LIMIT,
    ModelError,
    NoOptimalSolutionError,
    SolutionStatus,
    SolveResult,
    SolverUnavailableError,
    Termination,
)
from tpm_models.solvers.components import UnsupportedComponentError
from tpm_models.solvers.dense import MatrixSolution, WarmStart, matrix_solvers, solve_matrices
from tpm_models.solvers.dispatch import is_licence_limit, solve
from tpm_models.solvers.program import Program, objective_of, title
from tpm_models.solvers.structure import ModelTraits, max_violation, model_class, model_traits, values_of

__all__ = [
    "available_solvers", "Backend", "backend_for", "BACKENDS", "Certificate", "certify", "DEFAULT", "default_solver",
    "DENSE_QP_TOL", "FEASIBILITY_TOL", "KKT_FAIL_TOL", "KKT_TOL", "MIP_GAP", "ModelError", "ModelTraits",
    "model_traits", "PSD_TOL", "SolutionStatus", "is_licence_limit", "ITERATION_LIMIT", "matrix_solvers",
    "MatrixSolution", "max_violation", "model_class", "NoOptimalSolutionError", "objective_of", "OPTIMALITY_TOL",
    "Program", "register_backend", "SCIP_TIME_LIMIT", "solve", "solve_matrices", "SolveResult",
    "SolverUnavailableError", "Termination", "title", "UnsupportedComponentError", "values_of", "WarmStart",
]
