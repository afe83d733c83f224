"""One ``solve()`` for every backend, one result type, and the capability table.

==================  ==========================================================================
module              what it holds
==================  ==========================================================================
``common``          tolerances, :class:`SolveResult`, :class:`Termination`, the errors, the dual
                    sign convention
``components``      which Pyomo components a solve reads, and which it refuses by name
``structure``       what a model holds (:func:`model_class`) and where its values stand
``rows``            a model's linear rows read into ``scipy.sparse`` in one pass
``violation``       a model at its loaded point: the largest violation, whether its rows have values
``variables``       a model's variables, their bounds and domains
``program``         :class:`Program`: the model as a solve reads it, once, passed down
``matrices``        a Pyomo QP read into dense or sparse matrices (PIQP, DAQP, the fast paths)
``dense``           :func:`solve_matrices`: a backend that takes a QP in matrix form, no Pyomo model
``conic``           a Pyomo model read into Clarabel's cones
``powsoc``          power cones of a rational exponent written as second-order cones
``compare``         relative gaps and distances between two solutions
``backends``        the capability table (:func:`register_backend`) and one module per backend
``pyomo_interfaces``  adapters for the backends reached through Pyomo's own interfaces
``ipopt``           the Ipopt library of the CasADi wheel as a Pyomo solver plugin
``certificate``     :func:`certify`: the certificate of a point on the model as written
``certificate_reading``  the certificate's own reading of the model (never the solve path's)
``solve``           :func:`solve`
==================  ==========================================================================
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
    "model_traits", "PSD_TOL", "SolutionStatus",
    "is_licence_limit", "ITERATION_LIMIT", "matrix_solvers", "MatrixSolution", "max_violation", "model_class",
    "NoOptimalSolutionError", "objective_of", "OPTIMALITY_TOL", "Program", "register_backend", "SCIP_TIME_LIMIT",
    "solve",
    "solve_matrices", "SolveResult", "SolverUnavailableError", "Termination", "title", "UnsupportedComponentError",
    "values_of", "WarmStart",
]
