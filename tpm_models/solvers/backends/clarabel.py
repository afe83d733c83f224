"""Clarabel as the backend of ``solve(model, "clarabel")``, on the model's conic form
(:func:`tpm_models.solvers.conic.conic_form`; Pyomo has no interface to it): LP, QP, SOCP, and an NLP whose rows map
to Clarabel's cones ((23), (26) and (23D) for every p); any other row is refused before any solve.

The form is solved by :func:`~tpm_models.solvers.clarabel_runs.pipeline_solve` (``options["settings"]``: a
:class:`~tpm_models.solvers.clarabel_runs.ClarabelSettings`; the rest of ``options`` are Clarabel's own). Here: what
reads the model, the test at the power cones' apex (:func:`kept_at_apex`) and the point loaded (:func:`load`), and the
moves of a point at a power cone's apex, where a perspective row :math:`c\\,a^q r^{1-q} \\le d z` at :math:`r = 0` has
no value: put where the polish would put it (:func:`apex_point`), or moved just inside the cone (:func:`nudged_apex`;
the certificate's reading of such rows: :mod:`tpm_models.certify.power_apex`).
"""

from __future__ import annotations

from functools import partial
from typing import cast

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp

from tpm_models.certify.certificate import certify
from tpm_models.certify.tolerances import APEX_TOL
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.clarabel_runs import CLARABEL_STATUS, ClarabelRun, pipeline_solve, split_options
from tpm_models.solvers.common import Termination
from tpm_models.solvers.cones import ConeKind
from tpm_models.solvers.conic import ConicForm, conic_program
from tpm_models.solvers.polish import faces
from tpm_models.solvers.program import Program
from tpm_models.solvers.reductions import ConicProgram, ConicSolution
from tpm_models.solvers.variables import set_values
from tpm_models.solvers.violation import model_evaluates

APEX_REASON = "the polish would put power cones at their apex, where the model's rows cannot be evaluated " \
              "(e.g. r**(1-q) at r = 0)"
"""Why a point is not polished (:func:`kept_at_apex`)."""


def apex_point(form: ConicForm, x: np.ndarray, z: np.ndarray) -> np.ndarray | None:
    """``x`` with the power cones of ``form`` that read at their apex at ``(x, z)`` (:func:`~.polish.faces`) put
    there as the polish puts them (each row of one column :math:`s_i = b_i - a_i x_c` of the block solved for
    :math:`s_i = 0`), ``None`` when no power cone reads so."""
    starts = np.cumsum([0] + [c.dim for c in form.cones])
    read = faces(form.cones, form.b - form.A @ x, z)
    rows = [np.arange(starts[k], starts[k + 1]) for k, c in enumerate(form.cones)
            if c.kind is ConeKind.POW and read[k] == "apex"]
    if not rows:
        return None
    return with_slacks(form, x, np.concatenate(rows), 0.0)[0]


def with_slacks(form: ConicForm, x: np.ndarray, rows: np.ndarray, slack: float) -> tuple[np.ndarray, int]:
    """``x`` with the column of each of ``rows`` that is a row of one column :math:`s_i = b_i - a_i x_c` solved for
    :math:`s_i` = ``slack``: :math:`x_c = (b_i - s_i) / a_i` (the other rows left alone), and how many were."""
    A = sp.csr_matrix(form.A)
    rows = np.asarray(rows, dtype=np.int64)
    rows = rows[np.diff(A.indptr)[rows] == 1]
    rows = rows[A.data[A.indptr[rows]] != 0]
    out = np.array(x, dtype=float)
    out[A.indices[A.indptr[rows]]] = (np.asarray(form.b, dtype=float)[rows] - slack) / A.data[A.indptr[rows]]
    return out, len(rows)


APEX_NUDGE = 1e-14
"""Where :func:`nudged_apex` puts the :math:`r` of a perspective block at its apex: where the model's rows have a
value, at 1e-4 of :data:`~tpm_models.certify.tolerances.APEX_TOL` (so the certificate still reads the apex)."""


def nudged_apex(form: ConicForm, x: np.ndarray) -> np.ndarray | None:
    """``x`` with each power cone of ``form`` at its apex (its components within
    :data:`~tpm_models.certify.tolerances.APEX_TOL` of 0) moved inside it, its second component (a perspective's
    :math:`r`, a row of one column) set to :data:`APEX_NUDGE`; ``None`` when no such cone."""
    starts = np.cumsum([0] + [c.dim for c in form.cones])
    s = np.asarray(form.b, dtype=float) - form.A @ x
    second = [starts[k] + 1 for k, cone in enumerate(form.cones)
              if cone.kind is ConeKind.POW and np.abs(s[starts[k]:starts[k + 1]]).max() <= APEX_TOL]
    out, moved = with_slacks(form, x, np.asarray(second, dtype=np.int64), APEX_NUDGE)
    return out if moved else None


def apex_refused(reading: Program, form: ConicForm, point: ConicSolution) -> bool:
    """Whether the polish of ``point`` (of ``form``) would put power cones at their apex (:func:`apex_point`), where
    the model's rows have no value. Loads a point into the model's variables (``reading``: the solve's ``Program``)."""
    at_apex = apex_point(form, point.x, point.z)
    if at_apex is None:
        return False
    set_values(form.variables, at_apex)
    return not model_evaluates(reading.model, reading)


def apex_point_certified(reading: Program, form: ConicForm, point: ConicSolution) -> bool:
    """Whether Clarabel's own ``point`` of ``form`` (loaded into the model) is certified optimal (the certificate kept
    in the solve's memo, so that the solve does not certify it twice)."""
    set_values(form.variables, point.x)
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
    (:func:`~tpm_models.solvers.conic.conic_program`; ``NotConicError`` if it has none)."""
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
    power cones (:func:`nudged_apex`), or else given up for Clarabel's own. The note for the message."""
    set_values(form.variables, run.x)
    if run.interior is None or not form.n_aux or model_evaluates(reading.model, reading):
        return ""
    nudged = nudged_apex(form, run.x)  # a perspective's r at 0: moved to 1e-14, where the rows have a value
    if nudged is not None:
        set_values(form.variables, nudged)
        if model_evaluates(reading.model, reading):
            run.x, run.s = nudged, form.b - form.A @ nudged
            return f"; the power cones at their apex, their r set to {APEX_NUDGE:g} (at 0 the rows have no value)"
    run.unpolish("the polished point is where the model's rows cannot be evaluated (e.g. r**(1-q) at r = 0)")
    set_values(form.variables, run.x)
    return ""


register_backend("clarabel", "clarabel", {"LP", "QP", "SOCP", "NLP"}, run_clarabel, prepare=clarabel_program,
                 proves_convexity=True, tee=True)
