"""``working-set``: a conic model with many margin rows solved by Clarabel on a working set of them.

It takes a model whose conic form (:func:`tpm_models.solvers.conic.conic_program`) has margin rows
(:mod:`tpm_models.solvers.margin_rows`: (15), (23) for every p, (26)-(29), per-point radii too) and refuses every
other before it runs. The method (``docs/derivations.md``, "A working set of margin rows"):

1. **A start** (:func:`start`). On a sample of ``sample`` of the margin rows, at least ``start`` (their costs
   scaled by the rows over the sample), Clarabel solves the form (not polished); its point ranks every row by its
   score :math:`r_i(y_0)`, and the working set :math:`W` is ``window`` of the rows (at least ``start``) about the
   row where the sample's multipliers' mass is carried, the rows before them taken as violated, the rows after as
   loose.
2. **Rounds** (:func:`rounds`). Clarabel (:func:`~tpm_models.solvers.clarabel_runs.pipeline_solve`, the Clarabel
   backend's pipeline with its polish) solves the form on :math:`W` with the violated rows' cost kept
   (:meth:`~tpm_models.solvers.margin_rows.MarginRows.reduced`); every row outside :math:`W` on the wrong side at
   its point (by more than ``side_tol`` of the scores' scale) joins :math:`W`. When none is, the whole form's point
   and duals are its KKT point (:meth:`~tpm_models.solvers.margin_rows.MarginRows.whole`), loaded and returned, for
   the certificate to judge on the model as written. A form on :math:`W` that is unbounded (the rows taken as
   violated carry more than the multipliers' mass) is solved again with :math:`W` doubled.

:math:`W` only grows, so the rounds end (at the latest with every row in it, Clarabel on the whole form). A round
whose Clarabel run is not optimal, or ``max_rounds`` rounds, or a point that the certificate does not certify
(:func:`certified`; or where the model's rows have no value, a power cone's apex) hand the model to the Clarabel
backend on the whole form, said in the message (``TIME_LIMIT`` when the time is out); so do fewer than
``whole_below`` margin rows, and a working set grown to every row. ``options``: a :class:`WorkingSetSettings` as
``"working_set"``, and those of ``solve(model, "clarabel")`` (a
:class:`~tpm_models.solvers.clarabel_runs.ClarabelSettings` as ``"settings"``, Clarabel's own), for every run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import cast

import numpy as np
import pyomo.core as pyo

from tpm_models.certify.certificate import certify
from tpm_models.solvers.backends.clarabel import clarabel_program, nudged_apex, run_clarabel
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.clarabel_runs import CLARABEL_STATUS, ClarabelSettings, pipeline_solve, split_options
from tpm_models.solvers.common import Termination
from tpm_models.solvers.conic import ConicForm
from tpm_models.solvers.margin_rows import MarginRows, margin_rows
from tpm_models.solvers.program import Program
from tpm_models.solvers.reductions import ConicSolution
from tpm_models.solvers.variables import set_values
from tpm_models.solvers.violation import model_evaluates


@dataclass(frozen=True)
class WorkingSetSettings:
    """The method's settings (module docstring), given as ``solve(model, "working-set", options={"working_set":
    WorkingSetSettings(...)})``."""

    start: int = 2_000
    """The fewest rows of the start's sample and of the first working set."""
    sample: float = 0.03
    """The start's sample's share of the margin rows (at least ``start``)."""
    window: float = 0.08
    """The first working set's share of the margin rows (at least ``start``): the band of rows about the margin
    grows with the rows."""
    whole_below: int = 8_000
    """Below this many margin rows the Clarabel backend solves the whole form (the rounds are no faster there).
    Why each of these values: ``docs/solvers.md``, "Margin rows by a working set"."""
    max_rounds: int = 20
    """Rounds before the model goes to the Clarabel backend on the whole form."""
    side_tol: float = 1e-12
    """A row outside the working set is on the wrong side when its score is past 0 by more than this times the
    scores' scale (:math:`1 + \\max_i |r_i|`): the polished point's accuracy, well under the certificate's."""
    seed: int = 0
    """The seed of the start's sample (a solve is repeatable)."""


DEFAULT_WORKING_SET = WorkingSetSettings()
"""The settings unless ``options["working_set"]`` says otherwise."""


def working_set_program(reading: Program) -> tuple[Program, MarginRows]:
    """``prepare`` of the backend: the solve's ``reading`` with its conic form built, and the form's margin rows
    (:class:`~tpm_models.solvers.matrices.NotAQPError` when it has none, ``NotConicError`` when it has no form)."""
    clarabel_program(reading)
    return reading, margin_rows(cast(ConicForm, reading.conic))


def start(rows: MarginRows, method: WorkingSetSettings, settings: ClarabelSettings, deadline: float | None,
          options: dict) -> tuple[np.ndarray, np.ndarray] | str:
    """The first working set and violated rows (module docstring, 1.), or why there is none (too few rows, a run
    not optimal).
    The rows in order of their scores at the sample's point (most violated first); the sample's multipliers add to a
    mass :math:`M` (the paper's :math:`\\nu`), which the rows carry at their bound in that order up to a row
    :math:`k_0`; the working set is ``method.window`` of the rows (at least ``method.start``) about :math:`k_0`, the
    rows before it violated. So the violated rows' bounds add to less than :math:`M` and the working set's take the
    rest (else the form on them is unbounded), also where every score is one number (:math:`w = 0`)."""
    m = len(rows.rows)
    every = np.arange(m)
    if m < max(method.whole_below, method.start + 1):
        return f"{m} margin rows, fewer than {max(method.whole_below, method.start + 1)}"
    size = min(m, max(method.start, int(method.sample * m)))
    sample = np.sort(np.random.default_rng(method.seed).choice(m, size, replace=False))
    # not polished: its point ranks the rows only, and at a degenerate optimum (w = 0) the polished point gives every
    # row one score where the interior point's still ranks them (measured: docs/solvers.md, "Margin rows by ...")
    sampled = replace(settings, polish=False)
    run = pipeline_solve(rows.reduced(sample, every[:0], weight=m / size), sampled, remaining(deadline), options)
    if CLARABEL_STATUS.get(run.status) is not Termination.OPTIMAL:
        return f"given up: the start on {size} rows ended {run.status}"
    mass = float(np.maximum(rows.margin_duals(run.z, sample), 0.0).sum())
    order = np.argsort(rows.scores(run.x[:len(rows.core)]), kind="stable")
    k0 = int(np.searchsorted(np.cumsum(rows.u[order]), mass))
    width = min(m, max(method.start, int(method.window * m)))
    first = max(0, min(k0 - width // 2, m - width))
    return np.sort(order[first:first + width]), np.sort(order[:first])


def remaining(deadline: float | None) -> float | None:
    """Seconds left before ``deadline`` (``time.monotonic()``), at least 0; ``None`` without one."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def rounds(rows: MarginRows, method: WorkingSetSettings, settings: ClarabelSettings, deadline: float | None,
           options: dict) -> tuple[ConicSolution, str] | str:
    """The rounds (module docstring, 2.): the whole form's KKT point and what was done, or why there are none or
    they stopped (the whole form is then Clarabel's)."""
    first = start(rows, method, settings, deadline, options)
    if isinstance(first, str):
        return first
    W, U = first
    m = len(rows.rows)
    r: np.ndarray | None = None
    for k in range(1, method.max_rounds + 1):
        if len(W) == m:
            return "the working set grew to every row"
        run = pipeline_solve(rows.reduced(W, U), settings, remaining(deadline), options)
        status = CLARABEL_STATUS.get(run.status)
        if status is Termination.INFEASIBLE_OR_UNBOUNDED:  # the relaxation unbounded: W doubled
            W, U = doubled(W, U, r, m)
            continue
        if status is not Termination.OPTIMAL:
            return f"given up: round {k} on {len(W)} of {m} rows ended {run.status}"
        r = rows.scores(run.x[:len(rows.core)])
        tol = method.side_tol * (1.0 + float(np.abs(r).max(initial=0.0)))
        outside = np.ones(m, dtype=bool)
        outside[W] = False
        violated = np.zeros(m, dtype=bool)
        violated[U] = True
        wrong = outside & np.where(violated, r > tol, r < -tol)
        if not wrong.any():
            note = f"{k} rounds, the last on {len(W)} of {m} margin rows ({len(U)} taken as violated): {run.message}"
            return rows.whole(ConicSolution(run.x, run.s, run.z), W, U), note
        W = np.union1d(W, np.flatnonzero(wrong))
        U = np.setdiff1d(U, W)
    return f"given up: {method.max_rounds} rounds without every row on its side"


def doubled(W: np.ndarray, U: np.ndarray, r: np.ndarray | None, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``W`` with as many rows again from outside it, the nearest to 0 by the scores ``r`` (in order without
    them), and ``U`` without those."""
    outside = np.setdiff1d(np.arange(m), W)
    if r is not None:
        outside = outside[np.argsort(np.abs(r[outside]), kind="stable")]
    W = np.union1d(W, outside[:len(W)])
    return W, np.setdiff1d(U, W)


def run_working_set(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
                    prepared: tuple[Program, MarginRows] | None = None) -> tuple[Termination, dict | None, str]:
    """The backend (module docstring); ``prepared``: :func:`working_set_program`'s (made afresh when not given)."""
    reading, rows = working_set_program(Program(model)) if prepared is None else prepared
    rest = dict(options or {})
    method = rest.pop("working_set", DEFAULT_WORKING_SET)
    if not isinstance(method, WorkingSetSettings):
        raise TypeError(f"options['working_set'] must be a WorkingSetSettings, not {type(method).__name__}")
    settings, clarabel_own = split_options(rest)
    deadline = None if time_limit is None else time.monotonic() + time_limit
    outcome = rounds(rows, method, settings, deadline, clarabel_own)
    form = rows.form
    if not isinstance(outcome, str):
        point, note = outcome
        duals = certified(reading, form, point.x, point.z)
        if duals is not None:
            return Termination.OPTIMAL, duals, f"working set: {note}"
        nudged = nudged_apex(form, point.x)  # only when the point as put back fails
        duals = None if nudged is None else certified(reading, form, nudged, point.z)
        if duals is not None:
            return Termination.OPTIMAL, duals, f"working set: {note}; the power cones at their apex moved inside"
        outcome = "given up: its point is not certified on the model (or the model's rows have no value there)"
    if deadline is not None and remaining(deadline) == 0.0:
        return Termination.TIME_LIMIT, None, f"working set: {outcome}; out of time"
    termination, duals, message = run_clarabel(model, remaining(deadline), rest, prepared=reading)
    return termination, duals, f"working set: {outcome}; Clarabel on the whole form: {message}"


def certified(reading: Program, form: ConicForm, x: np.ndarray, z: np.ndarray) -> dict | None:
    """The duals of the point ``x`` (the whole form's columns) with the conic duals ``z``, loaded into the model, when
    the model's rows have a value there and the certificate certifies it (kept in the solve's memo, so that the solve
    does not certify it twice); else ``None``, the model then being the Clarabel backend's. A point of the rounds is
    the whole form's KKT point only to the reduced runs' accuracy, and a degenerate optimum (every row active, the
    multipliers not unique) may leave it short where Clarabel's point on the whole form is certified."""
    set_values(form.variables, x)
    if not model_evaluates(reading.model, reading):
        return None
    duals = form.dual_values(x, z)
    return duals if certify(reading.model, duals, convex=True, memo=reading.certificates).certified else None


register_backend("working-set", "clarabel", {"QP", "SOCP", "NLP"}, run_working_set, prepare=working_set_program,
                 shape="tpm_models.solvers.margin_rows", proves_convexity=True)
