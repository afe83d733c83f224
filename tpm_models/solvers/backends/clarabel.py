"""Clarabel as the backend of ``solve(model, "clarabel")``: a conic interior point (zero, nonnegative, second-order
and power cones, a quadratic objective) on the model's conic form (:func:`tpm_models.solvers.conic.conic_form`);
Pyomo has no interface to it. Takes LP, QP, SOCP, and an NLP when its rows map to Clarabel's cones (the robust
models (23), (26) and (23D) for every p); any other row is refused before any solve.

Clarabel's runs on the form, their settings and the polish of their point are
:func:`tpm_models.solvers.clarabel_runs.clarabel_solve` (shared with the estimators' dense adapter); this module
prepares the form (power cones written as second-order cones at scale, implied bounds left out), polishes a point of
that form on the model's own power cones, and loads the point into the model. Every optimal point is polished
(Newton's method on the optimality conditions of the cone faces Clarabel's point is on), and the polished point is
used only when its KKT residual is lower and at most 1e-11; else Clarabel's own point is kept. The message says which.
A point whose power cones read at their apex, where the polished point would have no value in the model's rows, is not
polished when Clarabel's own point is certified (:func:`apex_refused`, :func:`apex_point_certified`); a polished point
at the apex has its perspectives' :math:`r` moved to 1e-14, where the rows have a value
(:func:`~tpm_models.solvers.power_apex.nudged_apex`)."""

from __future__ import annotations

import math

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp

from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.certificate import certify
from tpm_models.solvers.clarabel_runs import (
    CLARABEL_APEX_GAP_TOL,
    CLARABEL_FEAS_TOL,
    CLARABEL_POLISH,
    CLARABEL_POLISH_ALMOST_ACCEPT,
    CLARABEL_STATUS,
    CLARABEL_TOL,
    CLARABEL_TOLS,
    ClarabelRun,
    clarabel_solve,
)
from tpm_models.solvers.common import Termination
from tpm_models.solvers.conic import ConicForm, conic_program
from tpm_models.solvers.polish import POLISH_ACCEPT, Polished, polish
from tpm_models.solvers.power_apex import APEX_NUDGE, apex_point, nudged_apex
from tpm_models.solvers.powsoc import dual_of_power_form, implied_bounds, pow_as_soc_map, without_rows
from tpm_models.solvers.program import Program
from tpm_models.solvers.violation import model_evaluates

SOC_FORM_TOLS: tuple[float, ...] = (CLARABEL_TOL,)
"""The runs before the rescue on a form whose power cones were written as second-order cones before the first run
(from :data:`POW_AS_SOC_COLUMNS` columns on): the run at 1e-12 only. The runs at 1e-10 and 1e-8 of
:data:`CLARABEL_TOLS` end 27 of the conic survey's 936 models (all small: they keep their power cones), but on the
second-order-cone forms at scale none was measured to help: on (26) at p = 1.5 (``tpm-models bench scale``'s data)
they stop ``AlmostSolved`` short of 1e-8 at 10^4 points (then the rescue run solves it) and on the very point of the
run at 1e-12 at 10^5 (31 iterations, the same residuals), 2 s each; every other model there ends at the first run.
Since the implied bounds are left out (:data:`DROP_IMPLIED_BOUNDS`), a point short of 1e-8 is first polished on the
power cones (:data:`~tpm_models.solvers.clarabel_runs.CLARABEL_POLISH_ALMOST_TOL`), and the rescue run is made only when
that polish fails."""

POW_AS_SOC_COLUMNS = 2_000
"""From this many columns of the conic form on, its power cones are written as second-order cones
(:func:`tpm_models.solvers.powsoc.pow_as_soc`) before the first run; below, only after a run on them failed. Measured
(``docs/solvers.md``, "Power cones as second-order cones"): Clarabel's power cones fail on every model with a p-norm
at p = 1.5 or 3 from 10^4 points (about 2,550 columns for (23)) and solve at 3,000 points (about 770 columns), so
at scale the failed runs are skipped (each costs a full interior-point run)."""

DROP_IMPLIED_BOUNDS = True
"""On a form whose power cones were written as second-order cones before the first run (from
:data:`POW_AS_SOC_COLUMNS` columns on), Clarabel's run leaves out the bound rows that other rows imply
(:func:`tpm_models.solvers.powsoc.implied_bounds`: (23)'s and (26)'s :math:`z_j \\ge 0` beside
:math:`z_j \\ge \\tau_j`, :math:`a_j \\ge 0` beside :math:`a_j \\ge \\pm w_j`, 41 rows at p = 1.5); the feasible set is
the same, and the point is of the whole form with :math:`z = 0` on those rows, polished and certified on it. Near
:math:`w_j = 0` such a bound and the rows implying it are active together, their multipliers are not unique, and the
polish's readings give them the wrong signs. Measured (``docs/bench-scale.md``, "Issue 24, Clarabel, the polish and
the certificate"): (23) at p = 1.5 on 10^5 points 39 -> 35 iterations and polished (before: refused, its point
3e-8 from the optimum), (26) at p = 1.5 on 10^5 points polished and certified (before: "optimal, not certified"),
(23) at p = 1.5 on 10^4 points one Newton run of the polish instead of eight."""



def _load(variables: list, x: np.ndarray) -> None:
    for var, value in zip(variables, x):
        var.set_value(float(value), skip_validation=True)


def _evaluates(program: Program) -> bool:
    """Whether every active row of ``program``'s model has a real value at the loaded point."""
    return model_evaluates(program.model, program)


def clarabel_program(program: Program) -> Program:
    """``prepare`` of the Clarabel backend: ``program`` once its conic form is built
    (:func:`tpm_models.solvers.conic.conic_program`; :class:`~tpm_models.solvers.cones.NotConicError` if it has
    none)."""
    conic_program(program)
    return program


def polish_power_form(run: ClarabelRun, power: ConicForm, soc: ConicForm, back: sp.csr_matrix,
                      polished: Polished | None = None) -> ConicForm:
    """Polish Clarabel's point of ``soc`` (:func:`~tpm_models.solvers.powsoc.pow_as_soc_map` of ``power``, ``back``
    its map) on ``power``'s own cones, and return the form ``run``'s point is of: the polish's faces are then the
    power cones' (:func:`~tpm_models.solvers.polish.polish`), not those of their trees of rotated cones, whose
    rows near :math:`|w_j|` of 1e-6 read degenerate (``docs/solvers.md``, "The polish at scale"). When the polish
    is refused, Clarabel's own point of ``soc`` is kept, and ``soc`` returned. ``polished``: that polish, made
    already (of an ``AlmostSolved`` point, :func:`clarabel_solve`'s ``almost``)."""
    if polished is None:
        x, z = dual_of_power_form(power, back, run.x, run.z)
        polished = polish(power.P, power.q, power.A, power.b, power.cones, x, power.b - power.A @ x, z)
    run.polished = polished
    if not run.polished.accepted:
        return soc
    run.interior = (run.x, run.s, run.z)
    run.x, run.z = run.polished.x, run.polished.z
    run.s = power.b - power.A @ run.x
    return power


def whole_z(form: ConicForm, kept: np.ndarray | None, z: np.ndarray) -> np.ndarray:
    """A dual of ``form`` from one of its rows ``kept`` (:func:`~tpm_models.solvers.powsoc.without_rows`): 0 on the
    others."""
    if kept is None:
        return z
    out = np.zeros(form.A.shape[0])
    out[kept] = z
    return out


def on_power_cones(power: ConicForm, soc: ConicForm, back: sp.csr_matrix, x: np.ndarray, z: np.ndarray,
                   kept: np.ndarray | None, accept: float = POLISH_ACCEPT) -> Polished:
    """The polish on ``power``'s cones of a point ``(x, z)`` of ``soc`` (:func:`polish_power_form`), ``z`` on ``soc``'s
    rows ``kept`` (all when ``None``); ``accept``: :func:`~tpm_models.solvers.polish.polish`'s."""
    xp, zp = dual_of_power_form(power, back, x, whole_z(soc, kept, z))
    return polish(power.P, power.q, power.A, power.b, power.cones, xp, power.b - power.A @ xp, zp,
                  accept=accept)


APEX_REASON = "the polish would put power cones at their apex, where the model's rows cannot be evaluated " \
              "(e.g. r**(1-q) at r = 0)"
"""The message of a point not polished by :func:`apex_refused`."""


def apex_refused(program: Program, power: ConicForm, back: sp.csr_matrix, run: ClarabelRun) -> bool:
    """Whether the polish of ``run``'s point on ``power``'s cones (:func:`polish_power_form`) would be refused
    because it puts power cones at their apex (:func:`~tpm_models.solvers.power_apex.apex_point`) where ``model``'s
    rows have no value (a perspective :math:`c\\,a^q r^{1-q} \\le d z` at :math:`r = 0`): that polish is then not made
    (measured, ``docs/bench-scale.md``: (23) at p = 3 on 10^5 points, 0.35-0.44 s of Newton runs whose point was
    thrown away). Clarabel's own point is kept, as after the refusal, and the certificate reads its rows at the
    apex (:mod:`tpm_models.solvers.power_apex`). Loads a point into ``model``'s variables."""
    x, z = dual_of_power_form(power, back, run.x, run.z)
    at_apex = apex_point(power, x, z)
    if at_apex is None:
        return False
    _load(power.variables, at_apex)
    return not _evaluates(program)


def apex_point_certified(program: Program, form: ConicForm, run: ClarabelRun) -> bool:
    """Whether Clarabel's own point of ``form`` (loaded into ``model``) is certified optimal
    (:func:`~tpm_models.solvers.certificate.certify`): asked when the polish would land at the power cones' apex
    (:func:`apex_refused`). Then that point is kept and the polish not made (0.15-0.2 s at 10^5 points); else the
    polish is made and its point moved into the cones (:func:`~tpm_models.solvers.power_apex.nudged_apex`), as
    Clarabel's point, about 1e-12 off the apex, is then "optimal, not certified" ((26) at p = 1.5 on 5*10^4 points of
    the scale benchmark's data: a perspective row 1e-10 off its apex; with the polish, certified at objective
    5.6e-17)."""
    _load(form.variables, run.x)
    return certify(program.model, form.dual_values(run.x, run.z), convex=True, memo=program.certificates).certified


def run_clarabel(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
                 prepared: Program | None = None):
    """Clarabel on :func:`tpm_models.solvers.conic.conic_form` of the model (``prepared``: the form built by the
    refusal check, so it is built once per solve); duals by ``ConicForm.dual_values``. A form whose power cones
    were written as second-order cones is polished on its power cones (:func:`polish_power_form`)."""
    program = clarabel_program(Program(model)) if prepared is None else prepared
    form = program.conic
    power, back, note = form, None, ""
    if form.A.shape[1] >= POW_AS_SOC_COLUMNS:
        soc, back = pow_as_soc_map(form)
        if soc is not form:
            form, note = soc, f"; power cones written as second-order cones ({form.A.shape[1]:,} columns)"
    rewritable = any(c.kind == "pow" for c in form.cones)  # a failure is followed by the second-order-cone form
    plain = not (rewritable or note)  # no power cones: the polish of an AlmostSolved point
    A, b, cones, kept = form.A, form.b, form.cones, None
    dropped = implied_bounds(power.A, power.b, power.cones) if back is not None and DROP_IMPLIED_BOUNDS else None
    if dropped is not None and dropped.size:  # the same feasible set (implied_bounds); their z is 0
        A, b, cones, kept = without_rows(A, b, cones, dropped)
        note += f"; {dropped.size} implied bounds left out of Clarabel's run"
    run = clarabel_solve(form.P, form.q, A, b, cones, time_limit, options=options,
                         judged_by_certificate=not rewritable, polish_point=CLARABEL_POLISH and back is None,
                         tols=CLARABEL_TOLS if back is None else SOC_FORM_TOLS, polish_almost=plain or back is not None,
                         columns=form.A.shape[1] if plain or back is not None else 0,
                         feas_tol=CLARABEL_FEAS_TOL if plain or back is not None else None,
                         gap_tol=CLARABEL_APEX_GAP_TOL if back is not None else None,
                         almost=None if back is None or not CLARABEL_POLISH else
                         lambda x, s, z, accept=CLARABEL_POLISH_ALMOST_ACCEPT: on_power_cones(power, form, back, x, z,
                                                                                              kept, accept))
    early = run.polished  # an AlmostSolved point polished on the power cones (CLARABEL_POLISH_ALMOST_TOL)
    if kept is not None:  # the point of the whole form: z = 0 on the rows left out
        run.z, run.s = whole_z(form, kept, run.z), form.b - form.A @ run.x
    termination = CLARABEL_STATUS.get(run.status, Termination.ERROR)
    if termination in (Termination.NUMERICAL_ERROR, Termination.ERROR):
        soc, back = pow_as_soc_map(form)  # Clarabel's power cones stall at 10^4 points: the same cones as SOCs
        if soc is not form:
            first = run.message
            run = clarabel_solve(soc.P, soc.q, soc.A, soc.b, soc.cones, time_limit, options=options,
                                 judged_by_certificate=True, polish_point=False)
            termination, form = CLARABEL_STATUS.get(run.status, Termination.ERROR), soc
            note = f"; power cones written as second-order cones after: {first}"
    solved = form
    if back is not None and form is not power and run.status == "Solved" and CLARABEL_POLISH:
        if early is None and apex_refused(program, power, back, run) and apex_point_certified(program, form, run):
            run.polished = Polished(run.x, run.z, False, math.nan, math.nan, APEX_REASON)
        else:  # at the apex, the polished point's perspective rows are moved into their cones below (nudged_apex)
            form = polish_power_form(run, power, form, back, early)
    if termination not in (Termination.INFEASIBLE, Termination.UNBOUNDED) and run.x.size and np.isfinite(run.x).all():
        _load(form.variables, run.x)  # a certificate is no point: left unloaded
        if run.interior is not None and form.n_aux and not _evaluates(program):  # atoms: sqrt, r**(1-q)
            nudged = nudged_apex(form, run.x)  # a perspective's r at 0: moved to 1e-14, where the rows have a value
            if nudged is not None:
                _load(form.variables, nudged)
            if nudged is not None and _evaluates(program):
                run.x, run.s = nudged, form.b - form.A @ nudged
                note += f"; the power cones at their apex, their r set to {APEX_NUDGE:g} (at 0 the rows have no value)"
            else:
                run.unpolish("the polished point is where the model's rows cannot be evaluated (e.g. r**(1-q) at "
                             "r = 0)")
                form = solved  # Clarabel's own point is of the form it solved
                _load(form.variables, run.x)
    duals = None
    if termination is Termination.OPTIMAL:
        duals = form.dual_values(run.x, run.z)
    return termination, duals, run.message + note


register_backend("clarabel", "clarabel", {"LP", "QP", "SOCP", "NLP"}, run_clarabel, prepare=clarabel_program,
                 proves_convexity=True)
