"""Clarabel as the backend of ``solve(model, "clarabel")``, on the model's conic form
(:func:`tpm_models.solvers.conic.conic_form`; Pyomo has no interface to it): LP, QP, SOCP, and an NLP whose rows map
to Clarabel's cones ((23), (26) and (23D) for every p); any other row is refused before any solve.

The form is solved by :func:`~tpm_models.solvers.clarabel_runs.pipeline_solve` (``options["settings"]``: a
:class:`~tpm_models.solvers.clarabel_runs.ClarabelSettings`; the rest of ``options`` are Clarabel's own). Here: what
reads the model, the test at the power cones' apex (:func:`kept_at_apex`) and the point loaded (:func:`load`).
"""

from __future__ import annotations

from functools import partial
from typing import cast

import numpy as np
import pyomo.core as pyo

from tpm_models.certify.certificate import certify
from tpm_models.solvers.apex_moves import APEX_NUDGE, apex_point, nudged_apex
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.clarabel_runs import CLARABEL_STATUS, ClarabelRun, pipeline_solve, split_options
from tpm_models.solvers.common import Termination
from tpm_models.solvers.conic import ConicForm, conic_program
from tpm_models.solvers.program import Program
from tpm_models.solvers.reductions import ConicProgram, ConicSolution
from tpm_models.solvers.violation import model_evaluates

APEX_REASON = "the polish would put power cones at their apex, where the model's rows cannot be evaluated " \
              "(e.g. r**(1-q) at r = 0)"
"""Why a point is not polished (:func:`kept_at_apex`)."""


def _load(variables: list, x: np.ndarray) -> None:
    for var, value in zip(variables, x):
        var.set_value(float(value), skip_validation=True)


def apex_refused(reading: Program, form: ConicForm, point: ConicSolution) -> bool:
    """Whether the polish of ``point`` (of ``form``) would put power cones at their apex
    (:func:`~tpm_models.solvers.apex_moves.apex_point`) where the model's rows have no value. Loads a point into the
    model's variables (``reading``: the solve's :class:`~tpm_models.solvers.program.Program`)."""
    at_apex = apex_point(form, point.x, point.z)
    if at_apex is None:
        return False
    _load(form.variables, at_apex)
    return not model_evaluates(reading.model, reading)


def apex_point_certified(reading: Program, form: ConicForm, point: ConicSolution) -> bool:
    """Whether Clarabel's own ``point`` of ``form`` (loaded into the model) is certified optimal
    (:func:`~tpm_models.certify.certificate.certify`, kept in the solve's memo so that the solve does not certify it
    twice)."""
    _load(form.variables, point.x)
    return certify(reading.model, form.dual_values(point.x, point.z), convex=True,
                   memo=reading.certificates).certified


def kept_at_apex(reading: Program, form: ConicForm, point: ConicSolution) -> str | None:
    """:data:`APEX_REASON` when the polish of ``point`` would land at the apex (:func:`apex_refused`) and Clarabel's
    own point is certified (:func:`apex_point_certified`): then that point is kept, not polished (the polish's
    ``keep_own``; why: ``docs/solvers.md``, "The polish at scale")."""
    if apex_refused(reading, form, point) and apex_point_certified(reading, form, point):
        return APEX_REASON
    return None


def clarabel_program(reading: Program) -> Program:
    """``prepare`` of the Clarabel backend: the solve's ``reading`` of the model once its conic form is built
    (:func:`tpm_models.solvers.conic.conic_program`; :class:`~tpm_models.solvers.cones.NotConicError` if it has
    none)."""
    conic_program(reading)
    return reading


def run_clarabel(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
                 prepared: Program | None = None, tee: bool = False) -> tuple[Termination, dict | None, str]:
    """Clarabel on the model's conic form (``prepared``: the solve's :class:`~tpm_models.solvers.program.Program`
    with the form built by the refusal check) by the pipeline; duals by ``ConicForm.dual_values``."""
    settings, options = split_options({**(options or {}), "verbose": True} if tee else options)
    reading = clarabel_program(Program(model)) if prepared is None else prepared
    form = cast(ConicForm, reading.conic)  # built by clarabel_program; Program.conic is typed object
    if form.A.shape[0] >= settings.forget_rows_large:  # not held beside Clarabel's copy; the certificate reads them
        reading.release_rows()
    run = pipeline_solve(ConicProgram.of(form), settings, time_limit, options, partial(kept_at_apex, reading, form))
    termination = CLARABEL_STATUS.get(run.status, Termination.ERROR)
    note = ""
    if termination not in (Termination.INFEASIBLE, Termination.UNBOUNDED) and run.x.size and np.isfinite(run.x).all():
        note = load(reading, form, run)
    duals = form.dual_values(run.x, run.z) if termination is Termination.OPTIMAL else None
    return termination, duals, run.message + note


def load(reading: Program, form: ConicForm, run: ClarabelRun) -> str:
    """Load ``run``'s point into the model; a polished point where the model's rows have no value is moved into the
    power cones (:func:`~tpm_models.solvers.apex_moves.nudged_apex`), or else given up for Clarabel's own. The note
    for the message."""
    _load(form.variables, run.x)
    if run.interior is None or not form.n_aux or model_evaluates(reading.model, reading):
        return ""
    nudged = nudged_apex(form, run.x)  # a perspective's r at 0: moved to 1e-14, where the rows have a value
    if nudged is not None:
        _load(form.variables, nudged)
        if model_evaluates(reading.model, reading):
            run.x, run.s = nudged, form.b - form.A @ nudged
            return f"; the power cones at their apex, their r set to {APEX_NUDGE:g} (at 0 the rows have no value)"
    run.unpolish("the polished point is where the model's rows cannot be evaluated (e.g. r**(1-q) at r = 0)")
    _load(form.variables, run.x)
    return ""


register_backend("clarabel", "clarabel", {"LP", "QP", "SOCP", "NLP"}, run_clarabel, prepare=clarabel_program,
                 proves_convexity=True, tee=True)
