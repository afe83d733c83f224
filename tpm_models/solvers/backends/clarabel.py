"""Clarabel as the backend of ``solve(model, "clarabel")``: a conic interior point (zero, nonnegative, second-order
and power cones, a quadratic objective) on the model's conic form (:func:`tpm_models.solvers.conic.conic_form`);
Pyomo has no interface to it. Takes LP, QP, SOCP, and an NLP when its rows map to Clarabel's cones (the robust
models (23), (26) and (23D) for every p); any other row is refused before any solve.

The pipeline of one solve (its settings: :class:`~tpm_models.solvers.clarabel_settings.ClarabelSettings`, given as
``options["settings"]``; the rest of ``options`` are Clarabel's own):

1. the reductions (:func:`reductions_for`): from ``pow_as_soc_columns`` columns on, the implied bounds left out and
   the power cones written as second-order cones; in every run, the columns merged
   (:mod:`tpm_models.solvers.reductions`);
2. the retry policy (:class:`~tpm_models.solvers.clarabel_runs.RetryPolicy`) on the reduced program, each point
   mapped back to the form; a program that keeps its power cones and fails is solved again with them as
   second-order cones;
3. the polish of the point on the form's own cones (:class:`~tpm_models.solvers.clarabel_runs.Polisher`; at the
   power cones' apex :class:`PowerConePolisher`), used only when accepted;
4. the point loaded into the model (a polished point at the apex has its perspectives' :math:`r` moved to
   :data:`~tpm_models.solvers.apex_moves.APEX_NUDGE`, where the model's rows have a value), the duals read off it.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np
import pyomo.core as pyo

from tpm_models.certify.certificate import certify
from tpm_models.solvers.apex_moves import APEX_NUDGE, apex_point, nudged_apex
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.clarabel_runs import ClarabelRun, Polisher, RetryPolicy, Runner, RunPlan
from tpm_models.solvers.clarabel_settings import CLARABEL_STATUS, ClarabelSettings, split_options
from tpm_models.solvers.common import Termination
from tpm_models.solvers.cones import ConeKind
from tpm_models.solvers.conic import ConicForm, conic_program
from tpm_models.solvers.conic_program import ConicProgram, ConicSolution
from tpm_models.solvers.polish import Polished
from tpm_models.solvers.powsoc import rational
from tpm_models.solvers.program import Program
from tpm_models.solvers.reductions import DropImpliedBounds, PowAsSoc, Reduction, reduce
from tpm_models.solvers.violation import model_evaluates

APEX_REASON = "the polish would put power cones at their apex, where the model's rows cannot be evaluated " \
              "(e.g. r**(1-q) at r = 0)"
"""The message of a point not polished by :class:`PowerConePolisher`."""


def _load(variables: list, x: np.ndarray) -> None:
    for var, value in zip(variables, x):
        var.set_value(float(value), skip_validation=True)


def apex_refused(reading: Program, form: ConicForm, point: ConicSolution) -> bool:
    """Whether the polish of ``point`` (of ``form``) would put power cones at their apex
    (:func:`~tpm_models.solvers.apex_moves.apex_point`) where the model's rows have no value (a perspective
    :math:`c\\,a^q r^{1-q} \\le d z` at :math:`r = 0`). Loads a point into the model's variables (``reading``: the
    solve's :class:`~tpm_models.solvers.program.Program`)."""
    at_apex = apex_point(form, point.x, point.z)
    if at_apex is None:
        return False
    _load(form.variables, at_apex)
    return not model_evaluates(reading.model, reading)


def apex_point_certified(reading: Program, form: ConicForm, point: ConicSolution) -> bool:
    """Whether Clarabel's own ``point`` of ``form`` (loaded into the model) is certified optimal
    (:func:`~tpm_models.certify.certificate.certify`, kept in the solve's memo so that the solve does not certify it
    twice): then it is kept and the polish at the apex not made."""
    _load(form.variables, point.x)
    return certify(reading.model, form.dual_values(point.x, point.z), convex=True,
                   memo=reading.certificates).certified


class PowerConePolisher(Polisher):
    """The polish on ``form``'s power cones of a point found with them written as second-order cones: not made when
    it would land at the apex (:func:`apex_refused`) and Clarabel's own point is certified
    (:func:`apex_point_certified`); the polish's faces are the power cones', not those of their trees of rotated
    cones, whose rows near :math:`|w_j|` of 1e-6 read degenerate (``docs/solvers.md``, "The polish at scale")."""

    def __init__(self, reading: Program, form: ConicForm, settings: ClarabelSettings):
        super().__init__(ConicProgram.of(form), settings)
        self.reading, self.form = reading, form

    def optimal(self, point: ConicSolution) -> Polished:
        if apex_refused(self.reading, self.form, point) and apex_point_certified(self.reading, self.form, point):
            return Polished(point.x, point.z, False, math.nan, math.nan, APEX_REASON)
        return self.polish(point)


def rewritable(program: ConicProgram) -> bool:
    """Whether ``program`` has a power cone that :class:`~tpm_models.solvers.reductions.PowAsSoc` writes."""
    # a pow cone has its alpha (Cone's check)
    return any(c.kind is ConeKind.POW and rational(cast(float, c.alpha)) is not None for c in program.cones)


def reductions_for(program: ConicProgram, settings: ClarabelSettings) -> list[Reduction]:
    """The reductions before the runs (the columns are merged in each run, :class:`~tpm_models.solvers.clarabel_runs.
    Runner`): from ``settings.pow_as_soc_columns`` columns on, the implied bounds left out (read on the power cones,
    so first) and the power cones written as second-order cones; none below."""
    if program.shape[1] < settings.pow_as_soc_columns or not rewritable(program):
        return []
    return [DropImpliedBounds(), PowAsSoc()] if settings.drop_implied_bounds else [PowAsSoc()]


def first_solve(reading: Program, form: ConicForm, settings: ClarabelSettings, time_limit: float | None,
                options: dict) -> tuple[ClarabelRun, list[Reduction]]:
    """The runs on ``form`` through :func:`reductions_for`, and those reductions."""
    program = ConicProgram.of(form)
    reductions = reductions_for(program, settings)
    reduced = reduce(program, reductions)
    polish = settings.polish
    polisher: Polisher | None
    if reductions:  # its power cones written as second-order cones: polished on them
        plan = RunPlan(settings.soc_ladder, settings.feas_tol, settings.apex_gap_tol, judged=not any(
            c.kind is ConeKind.POW for c in reduced.cones), polish_short=True)
        polisher, columns = PowerConePolisher(reading, form, settings) if polish else None, reduced.shape[1]
    elif any(c.kind is ConeKind.POW for c in program.cones):  # a failure is followed by the second-order-cone form
        plan, polisher, columns = RunPlan(settings.ladder), Polisher(program, settings) if polish else None, 0
    else:  # a point short of the accepted tolerance polished (one Newton run) and judged by the certificate
        plan = RunPlan(settings.ladder, settings.feas_tol, judged=True, polish_short=True)
        polisher, columns = Polisher(program, settings, short_attempts=1) if polish else None, program.shape[1]
    if form.A.shape[0] >= settings.forget_rows_large:  # not held beside Clarabel's copy; the certificate reads them
        reading.release_rows()
    run = RetryPolicy(Runner(reduced, reductions, settings, time_limit, options, columns), plan, settings,
                      polisher).solve()
    return run, reductions


def clarabel_program(reading: Program) -> Program:
    """``prepare`` of the Clarabel backend: the solve's ``reading`` of the model once its conic form is built
    (:func:`tpm_models.solvers.conic.conic_program`; :class:`~tpm_models.solvers.cones.NotConicError` if it has
    none)."""
    conic_program(reading)
    return reading


def run_clarabel(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
                 prepared: Program | None = None, tee: bool = False) -> tuple[Termination, dict | None, str]:
    """Clarabel on :func:`tpm_models.solvers.conic.conic_form` of the model (``prepared``: the solve's
    :class:`~tpm_models.solvers.program.Program` with the form built by the refusal check, so it is built once per
    solve) by the pipeline of the module docstring; duals by ``ConicForm.dual_values``."""
    settings, options = split_options({**(options or {}), "verbose": True} if tee else options)
    reading = clarabel_program(Program(model)) if prepared is None else prepared
    form = cast(ConicForm, reading.conic)  # built by clarabel_program; Program.conic is typed object
    run, reductions = first_solve(reading, form, settings, time_limit, options)
    note = "".join(r.note for r in reversed(reductions))
    termination = CLARABEL_STATUS.get(run.status, Termination.ERROR)
    program = ConicProgram.of(form)
    if termination in (Termination.NUMERICAL_ERROR, Termination.ERROR) and not reductions and rewritable(program):
        first = run.message  # Clarabel's power cones stall at 10^4 points: the same cones as SOCs
        reduction = PowAsSoc()
        polisher = PowerConePolisher(reading, form, settings) if settings.polish else None
        runner = Runner(reduction.forward(program), [reduction], settings, time_limit, options)
        run = RetryPolicy(runner, RunPlan(settings.ladder, judged=True), settings, polisher).solve()
        termination = CLARABEL_STATUS.get(run.status, Termination.ERROR)
        note = f"; power cones written as second-order cones after: {first}"
    if termination not in (Termination.INFEASIBLE, Termination.UNBOUNDED) and run.x.size and np.isfinite(run.x).all():
        note += load(reading, form, run)
    duals = form.dual_values(run.x, run.z) if termination is Termination.OPTIMAL else None
    return termination, duals, run.message + note


def load(reading: Program, form: ConicForm, run: ClarabelRun) -> str:
    """Load ``run``'s point into ``model``; a polished point where the model's rows have no value (atoms: sqrt,
    :math:`r^{1-q}`) is moved into the power cones (:func:`~tpm_models.solvers.apex_moves.nudged_apex`), or else
    given up for Clarabel's own. The note for the message."""
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
