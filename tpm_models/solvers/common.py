"""What every backend shares: the tolerances, the result type, the errors, and the dual sign convention.

Dual sign convention (all backends)
-----------------------------------
The dual of a constraint is the derivative of the optimal objective value, in the model's own sense, with respect
to the constraint's bound (right-hand side):

* minimisation: :math:`\\ge` rows have duals :math:`\\ge 0`, :math:`\\le` rows :math:`\\le 0`;
* maximisation: the signs flip;
* equality rows: any sign.

So the duals of the ``margin`` rows of (15) are the :math:`\\lambda_c` of (16), and the dual of ``sum_lam`` in (16)
is an optimal :math:`\\theta_c`. Every backend is mapped to this convention; the test suite checks it per backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from pyomo.contrib.solver.common.results import SolutionStatus as PyomoSolutionStatus
from pyomo.contrib.solver.common.results import TerminationCondition

OPTIMALITY_TOL = 1e-9
"""Tolerance asked of every backend (absolute/relative gap and residuals where the backend has such settings)."""

DENSE_QP_TOL = 1e-12
"""Residual and duality-gap tolerance asked of PIQP (``docs/solvers.md``, "Defaults chosen from these numbers")."""

MIP_GAP = 1e-9
"""Relative gap asked of the backends that take integer variables (their defaults, 1e-4, stop a branch and
bound with an incumbent up to 0.01% from the integer optimum)."""

SCIP_TIME_LIMIT = 120.0
"""Seconds SCIP may take when no ``time_limit`` is given."""

ITERATION_LIMIT = 10_000
"""Cap on iterations of iterative backends (HiGHS's QP solver defaults to 2**31); a run stopped by it is reported,
never returned as optimal (``docs/solvers.md``, "Summary")."""


class Termination(StrEnum):
    """The library's verdict on a solve (:attr:`SolveResult.termination`): the backend's stop, mapped per backend,
    then checked by the certificate (:mod:`tpm_models.certify.certificate`) on the model as written (the table:
    ``docs/solvers.md``, "Statuses, per backend")."""

    OPTIMAL = "optimal"
    """Converged to its optimality tolerances, and the point passed the certificate (see
    :attr:`SolveResult.certified` for whether optimality is proved or only the point's feasibility)."""
    LOCALLY_OPTIMAL = "locally_optimal"
    """A local solver's point that passed the certificate's feasibility and KKT conditions on a model not proved
    convex: a local optimum, which may not be the model's optimum (:attr:`SolveResult.optimal` is ``False``)."""
    INFEASIBLE = "infeasible"
    """Proved infeasible."""
    UNBOUNDED = "unbounded"
    """Proved unbounded (or dual infeasible with a feasible primal)."""
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    """The backend proved that no optimum exists without saying which (Gurobi's, CPLEX's ``INF_OR_UNBD``)."""
    ITERATION_LIMIT = "iteration_limit"
    """Stopped at ``ITERATION_LIMIT``."""
    TIME_LIMIT = "time_limit"
    """Stopped at the time limit."""
    NUMERICAL_ERROR = "numerical_error"
    """Numerical trouble: NaN values, or a point the solver called optimal that is infeasible."""
    REFUSED = "refused"
    """The solver refused the model before solving it (a licence limit on its size, a model its own interface cannot
    take): nothing was solved; another solver may take it."""
    ERROR = "error"
    """Any other failure: the solver ran and failed (or crashed) without a usable answer."""
    CERTIFICATE_FAILED = "certificate_failed"
    """The backend said optimal, but the certificate on the model as written failed (a row violated relative to its
    size, or on a convex model the KKT conditions with the backend's duals); the message holds the residuals."""


class SolutionStatus(StrEnum):
    """What the returned point is (apart from why the solve ended: :class:`Termination`), after Pyomo's
    ``contrib.solver`` ``SolutionStatus``."""

    OPTIMAL = "optimal"
    """Certified optimal: feasible (scaled per row) and, on a model classified convex, the KKT conditions hold
    with the backend's duals mapped to the model's rows."""
    FEASIBLE = "feasible"
    """Feasible (scaled per row), optimality not proved: "optimal, not certified" when the backend said optimal
    (no duals, or a model not classified convex whose KKT conditions prove a local optimum only)."""
    INFEASIBLE = "infeasible"
    """A point that violates a row or a bound (scaled), or that cannot be evaluated."""
    NO_SOLUTION = "no_solution"
    """No point."""


TERMINATION_CONDITIONS: dict[Termination, TerminationCondition] = {
    Termination.OPTIMAL: TerminationCondition.convergenceCriteriaSatisfied,
    Termination.LOCALLY_OPTIMAL: TerminationCondition.convergenceCriteriaSatisfied,
    Termination.INFEASIBLE: TerminationCondition.provenInfeasible,
    Termination.UNBOUNDED: TerminationCondition.unbounded,
    Termination.INFEASIBLE_OR_UNBOUNDED: TerminationCondition.infeasibleOrUnbounded,
    Termination.ITERATION_LIMIT: TerminationCondition.iterationLimit,
    Termination.TIME_LIMIT: TerminationCondition.maxTimeLimit,
    Termination.NUMERICAL_ERROR: TerminationCondition.error,
    Termination.REFUSED: TerminationCondition.error,
    Termination.ERROR: TerminationCondition.error,
}
"""What a backend's stop (:attr:`SolveResult.solver_termination`) is in Pyomo's ``contrib.solver`` terms. A
backend's stop is never ``CERTIFICATE_FAILED`` (the library's verdict, not the backend's word)."""

_PYOMO_SOLUTION_STATUS = {
    SolutionStatus.OPTIMAL: PyomoSolutionStatus.optimal, SolutionStatus.FEASIBLE: PyomoSolutionStatus.feasible,
    SolutionStatus.INFEASIBLE: PyomoSolutionStatus.infeasible,
    SolutionStatus.NO_SOLUTION: PyomoSolutionStatus.noSolution,
}


@dataclass
class SolveResult:
    """What one solve returned, alike for every backend: the verdict (``termination``) apart from the backend's own
    stop (``solver_termination``, :attr:`termination_condition`) and from what the point is (``solution_status``),
    and the ``certificate``. ``values`` and ``duals`` are keyed by component name (``"w"``, ``"margin"``...): a float
    for a scalar component, an array in index order otherwise; ``objective`` is the model's objective as built."""

    solver: str
    solver_version: str
    termination: Termination
    objective: float | None
    values: dict[str, float | np.ndarray] = field(default_factory=dict)
    duals: dict[str, float | np.ndarray] | None = None
    seconds: float = 0.0
    max_violation: float | None = None
    message: str = ""
    solution_status: SolutionStatus = SolutionStatus.NO_SOLUTION
    """What the point is (:class:`SolutionStatus`), apart from why the solve ended (``termination``)."""
    solver_termination: Termination | None = None
    """What the backend itself said (mapped to :class:`Termination`), before the certificate."""
    licence_limited: bool = False
    """The backend's licence refused the model's size (``REFUSED``; ``Backend.licence_limit``)."""
    certificate: dict | None = None
    """The certificate's residuals (:class:`tpm_models.certify.certificate.Certificate` as a dict); ``None`` when no
    point."""

    @property
    def termination_condition(self) -> TerminationCondition:
        """Why the backend stopped, in Pyomo's ``contrib.solver`` terms (:data:`TERMINATION_CONDITIONS` of
        :attr:`solver_termination`; ``licensingProblems`` when its licence refused the model), apart from what the
        point is (:attr:`solution_status`) and from the library's verdict (:attr:`termination`)."""
        if self.licence_limited:
            return TerminationCondition.licensingProblems
        if self.solver_termination is None:
            return TerminationCondition.unknown
        return TERMINATION_CONDITIONS.get(self.solver_termination, TerminationCondition.unknown)

    @property
    def pyomo_solution_status(self) -> PyomoSolutionStatus:
        """:attr:`solution_status` as Pyomo's ``contrib.solver`` ``SolutionStatus``."""
        return _PYOMO_SOLUTION_STATUS[self.solution_status]

    @property
    def optimal(self) -> bool:
        """The optimum (certified, or "optimal, not certified"); never a local optimum (:attr:`locally_optimal`)."""
        return self.termination is Termination.OPTIMAL

    @property
    def locally_optimal(self) -> bool:
        """A KKT point of a model not proved convex, from a local solver (``Termination.LOCALLY_OPTIMAL``)."""
        return self.termination is Termination.LOCALLY_OPTIMAL

    @property
    def certified(self) -> bool:
        """Optimal *and* proved so on the model as written (``solution_status`` ``OPTIMAL``); an optimal result
        that is not certified is "optimal, not certified" (no duals, or convexity not established)."""
        return self.optimal and self.solution_status is SolutionStatus.OPTIMAL

    def to_dict(self) -> dict:
        """A JSON-ready dict (arrays become lists)."""

        def plain(d):
            if d is None:
                return None
            return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}

        return {
            "objective": self.objective,
            "termination": self.termination.value,
            "solver": self.solver,
            "solver_version": self.solver_version,
            "seconds": self.seconds,
            "max_violation": self.max_violation,
            "solution_status": self.solution_status.value,
            "solver_termination": None if self.solver_termination is None else self.solver_termination.value,
            "certified": self.certified,
            "termination_condition": self.termination_condition.name,
            "licence_limited": self.licence_limited,
            "certificate": self.certificate,
            "message": self.message,
            "values": plain(self.values),
            "duals": plain(self.duals),
        }


class NoOptimalSolutionError(RuntimeError):
    """The solver did not reach a verified optimum; ``.result`` holds what it returned."""

    def __init__(self, result: SolveResult):
        self.result = result
        super().__init__(
            f"{result.solver} did not solve the model to optimality: {result.termination.value}"
            f"{' (' + result.message + ')' if result.message else ''}. "
            + ("The solver proved it: check the model's data, bounds and objective" if result.termination in (
                Termination.INFEASIBLE, Termination.UNBOUNDED) else
               "A local optimum only: solve with a global backend (e.g. solver='scip'), or pass "
               "raise_on_failure=False to take it" if result.termination is Termination.LOCALLY_OPTIMAL else
               f"Try a solver other than {result.solver} (tpm_models.available_solvers(); solver='default' tries "
               "each that takes the model in turn).")
        )


class SolverUnavailableError(RuntimeError):
    """The named solver is unknown, not installed, or cannot take the model's class."""


class ModelError(ValueError):
    """The model cannot be solved as given (no objective, several active objectives, a bad ``time_limit``);
    the message says what to change."""
