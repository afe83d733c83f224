"""What every backend shares: the tolerances, the result type, the errors, and the dual sign convention.

Dual sign convention (all backends)
-----------------------------------
The dual of a constraint is the derivative of the optimal objective value, in the
model's own sense, with respect to the constraint's bound (right-hand side):

* minimisation: :math:`\\ge` rows have duals :math:`\\ge 0`, :math:`\\le` rows :math:`\\le 0`;
* maximisation: the signs flip;
* equality rows: any sign.

So the duals of the ``margin`` rows of (15) are the :math:`\\lambda_c` of (16), and the
dual of ``sum_lam`` in (16) is an optimal :math:`\\theta_c`. Every backend is mapped to
this convention and the test suite checks it per backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

FEASIBILITY_TOL = 1e-6
"""Largest constraint or bound violation accepted at a point reported optimal (absolute;
the data are min-max scaled to [0, 1], so rows are of order one)."""


OPTIMALITY_TOL = 1e-9
"""Tolerance asked of every backend (absolute/relative gap and residuals where the
backend has such settings)."""


DENSE_QP_TOL = 1e-12
"""Residual and duality-gap tolerance asked of PIQP. An interior point's error in the
solution is about the square root of its objective gap, and the duals here have
rank-deficient Hessians: at 1e-9 PIQP left w of (15) on Wine 4e-6 away from the other
solvers' consensus; at 1e-12 it agrees to 1e-8 in ~10 iterations (0.25 ms)."""


SCIP_TIME_LIMIT = 120.0
"""Seconds SCIP may take when no ``time_limit`` is given."""


ITERATION_LIMIT = 10_000
"""Cap on iterations of iterative backends. HiGHS's QP solver defaults to 2**31 and has
been seen to iterate without end on this paper's duals. PIQP needs ~10 iterations and DAQP
< 200 on these QPs; HiGHS still hit this cap on 123 of the paper's 918 duals
(docs/solvers.md), which are then reported, never returned as optimal."""


class Termination(StrEnum):
    """Why the solver stopped."""

    OPTIMAL = "optimal"
    """Converged to its optimality tolerances, and the point passed our feasibility check."""
    INFEASIBLE = "infeasible"
    """Proved infeasible."""
    UNBOUNDED = "unbounded"
    """Proved unbounded (or dual infeasible)."""
    ITERATION_LIMIT = "iteration_limit"
    """Stopped at ``ITERATION_LIMIT``."""
    TIME_LIMIT = "time_limit"
    """Stopped at the time limit."""
    NUMERICAL_ERROR = "numerical_error"
    """Numerical trouble: NaN values, or a point the solver called optimal that is infeasible."""
    REFUSED = "refused"
    """The solver refused the model before solving it: a licence limit on its size, or a model
    the solver's own interface cannot take. Nothing was solved; another solver may take it."""
    ERROR = "error"
    """Any other failure: the solver ran and failed (or crashed) without a usable answer."""


@dataclass
class SolveResult:
    """What one solve returned.

    ``values`` and ``duals`` are keyed by component name (``"w"``, ``"theta"``,
    ``"margin"``...): a float for a scalar component, an array in index order otherwise.
    ``objective`` is the model's objective exactly as built (no constant added).
    """

    solver: str
    solver_version: str
    termination: Termination
    objective: float | None
    values: dict[str, float | np.ndarray] = field(default_factory=dict)
    duals: dict[str, float | np.ndarray] | None = None
    seconds: float = 0.0
    max_violation: float | None = None
    message: str = ""

    @property
    def optimal(self) -> bool:
        return self.termination is Termination.OPTIMAL

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
                Termination.INFEASIBLE, Termination.UNBOUNDED) else "Try another solver "
               "(tpm_models.available_solvers()), e.g. solver='piqp' for the QPs.")
        )


class SolverUnavailableError(RuntimeError):
    """The named solver is unknown, not installed, or cannot take the model's class."""
