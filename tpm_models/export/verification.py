"""Optima of the library's instances verified by two solvers that agree (:func:`verify`)."""

from __future__ import annotations

from dataclasses import dataclass

import pyomo.environ as pyo

from tpm_models.export.ripopt import ripopt_executable, solve_ripopt
from tpm_models.solvers.common import NoOptimalSolutionError, SolverUnavailableError
from tpm_models.solvers.compare import objective_scale, rel_gap
from tpm_models.solvers.dispatch import is_licence_limit, solve
from tpm_models.solvers.program import title
from tpm_models.solvers.structure import model_class

AGREEMENT_TOL = 1e-6
"""Largest disagreement between two verifying solvers, :func:`tpm_models.solvers.compare.rel_gap`
(relative to the objective's terms, as every robust tie)."""


VERIFIERS = {
    "QP": ("piqp", "daqp", "gurobi", "cplex", "highs"),
    "SOCP": ("ipopt", "gurobi", "cplex", "scip"),
    "NLP": ("ipopt", "scip", "ripopt"),
}
"""Solvers tried, in order, until two agree. ``ripopt`` solves the instance's own ``.nl`` file."""


SCIP_VERIFY_TIME_LIMIT = 30.0
"""Seconds SCIP may take to verify an NLP (a limit is noted, and ripopt is tried). With (23)'s norm
written as ``(sum_j (w_j^2)^(p'/2))^(1/p')``, SCIP left a gap of 5e-4 on Wine at p = 3 after 60 s;
with the epigraph form of :func:`tpm_models.models.robust.build_robust_23` it verifies every NLP here."""

VERIFY_TIME_LIMITS = {"scip": SCIP_VERIFY_TIME_LIMIT}
"""Seconds a verifier of :data:`VERIFIERS` may take, by name (no limit for a name not here)."""


@dataclass
class Verification:
    """Two or more solvers that agree on an instance's optimum."""

    objective: float
    scale: float
    solvers: list[str]
    disagreement: float
    notes: list[str]


def verify(model: pyo.ConcreteModel, kind: str | None = None) -> Verification:
    """Solve ``model`` with the :data:`VERIFIERS` of its class until two agree within :data:`AGREEMENT_TOL`.

    The first solver's objective is the reference. A licence size limit, a non-optimal end, a
    missing solver or a disagreeing solver is passed over (and noted, except a missing one).
    Raises ``RuntimeError`` if fewer than two agree.
    """
    kind = kind or model_class(model)
    reference: float | None = None
    scale = 0.0
    solvers: list[str] = []
    worst = 0.0
    notes: list[str] = []
    for name in VERIFIERS[kind]:
        if len(solvers) == 2:
            break
        if name == "ripopt":
            if ripopt_executable() is None:
                continue
            objective, message = solve_ripopt(model)
        else:
            try:
                limit = VERIFY_TIME_LIMITS.get(name)
                objective, message = solve(model, name, time_limit=limit).objective, ""
            except SolverUnavailableError:
                continue
            except NoOptimalSolutionError as exc:
                kind_of = "licence size limit" if is_licence_limit(exc.result) else exc.result.termination.value
                objective, message = None, f"{name}: {kind_of}"
        if objective is None:
            notes.append(message)
            continue
        if reference is None:
            reference, scale = objective, objective_scale(model)
            solvers.append(name)
            continue
        residual = rel_gap(reference, objective, scale)
        if residual > AGREEMENT_TOL:
            notes.append(f"{name}: disagrees by {residual:.1e}")
            continue
        solvers.append(name)
        worst = max(worst, residual)
    if reference is None or len(solvers) < 2:
        raise RuntimeError(
            f"{title(model)}: only {solvers or 'no solver'} reached a verified optimum "
            f"({'; '.join(notes) or 'no other solver installed'}); tried {VERIFIERS[kind]}"
        )
    return Verification(reference, scale, solvers, worst, notes)
