"""One ``solve()`` for every backend, one result type.

The backends, what each takes and the defaults: ``tpm-models solvers``, :mod:`tpm_models.solvers.backends.registry`
and ``docs/solvers.md`` ("Which solver for which model", "The defaults and their fallbacks"). Dual sign convention:
:mod:`tpm_models.solvers.common`.

Never a silent non-optimum: a solve is ``OPTIMAL`` only if the solver says so **and** the certificate on the model
as written (:func:`tpm_models.certify.certificate.certify`: every row feasible relative to its size and, on a convex
model, the KKT conditions with the backend's duals) passes; a failed certificate is ``CERTIFICATE_FAILED`` with the
residuals in the message, an optimum it could not check ``solution_status == FEASIBLE`` ("optimal, not certified";
``docs/solvers.md``, "A status is not a proof: the certificate"). Otherwise :func:`solve` raises
:class:`NoOptimalSolutionError` (its ``result``: what the solver returned).

Refused before any solve (:class:`SolverUnavailableError`): integer variables on a backend that would relax them,
a model proved not convex on a backend that is not global, a ``time_limit`` a backend cannot honour; a model
without exactly one active objective or a ``time_limit <= 0`` is a :class:`ModelError`.
"""

from __future__ import annotations

import logging
import math
import operator
import time
from typing import Any

import pyomo.core as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.contrib.solver.common.util import IncompatibleModelError

from tpm_models.certify.certificate import Certificate, certify
from tpm_models.certify.tolerances import FEASIBILITY_TOL
from tpm_models.solvers.backends.registry import no_default, prepared_backend, raised_by, takers
from tpm_models.solvers.common import ModelError, NoOptimalSolutionError, SolutionStatus, SolveResult, Termination
from tpm_models.solvers.conic import why_not_conic
from tpm_models.solvers.program import Program, objective_of, title
from tpm_models.solvers.structure import ModelTraits, model_traits, solution_values
from tpm_models.solvers.variables import far_variable, fill_unused_variables, foreign_variables
from tpm_models.solvers.violation import real_value

log = logging.getLogger(__name__)
_VALUE = operator.attrgetter("value")


def solve(
    model: pyo.ConcreteModel,
    solver: str = "default",
    time_limit: float | None = None,
    raise_on_failure: bool = True,
    warm_start: bool = False,
    kind: str | ModelTraits | None = None,
    options: dict | None = None,
    tee: bool = False,
    fallback: bool = True,
    program: Program | None = None,
) -> SolveResult:
    """Solve ``model`` with ``solver``, load the values into it and return a :class:`SolveResult`; unless the solve
    is verified optimal (module docstring), raise :class:`NoOptimalSolutionError` (``raise_on_failure=False``: return
    the result, its termination saying so).

    ``warm_start``: hand the current values to the solvers that take a start (Ipopt); else every solve starts cold.
    ``kind``: the model's :func:`~tpm_models.solvers.structure.model_class` or
    :func:`~tpm_models.solvers.structure.model_traits` when the caller has it (not computed again). ``time_limit``:
    seconds, > 0. ``tee``: stream the backend's own log to standard output (``Backend.tee``). ``options``: the
    solver's own settings, over this library's (``docs/solvers.md``, "A user's settings"); a name it does not know
    is that solver's error, reported in the result.

    ``solver="default"``: the defaults of the model's class and size in turn
    (:func:`~tpm_models.solvers.backends.registry.takers`, :func:`_default`), the result's message naming each
    failure before it ("fallback after ..."); ``fallback=False``: the first default that takes the model runs alone,
    as ``solve(model, its name)`` would (``result.solver`` names it).

    ``program``: the reading of ``model`` (:class:`~tpm_models.solvers.program.Program`) its caller made for this
    solve (e.g. for ``kind``), of a model unchanged since; one program serves one solve (``None``: a fresh one).
    """
    if time_limit is not None and not (isinstance(time_limit, (int, float)) and 0 < time_limit < math.inf):
        raise ModelError(f"time_limit must be a positive number of seconds (or None for no limit), got {time_limit!r}")
    # the model is read once, into one Program passed down (the certificate reads it on its own); the cyclic
    # collector is paused, as Pyomo's writers do: each collection walks the model's live objects (docs/bench-scale.md)
    with PauseGC():
        if program is None:
            program = Program(model)
        elif program.model is not model or program.certificates:
            raise ValueError("program: a reading of this model not used by a solve before (one program a solve)")
        traits = kind if isinstance(kind, ModelTraits) else model_traits(model, kind, program)
        run = Run(program, traits, time_limit, warm_start, options, tee)
        if solver != "default":
            backend, _, prepared = prepared_backend(model, solver, traits, time_limit, program)
            return _finish(model, run(backend, prepared), raise_on_failure)
        return _finish(model, _default(run, fallback), raise_on_failure)


def _default(run: Run, fallback: bool = True) -> SolveResult:
    """``solve(model)``: the defaults in turn (:func:`~tpm_models.solvers.backends.registry.takers`) until one is
    optimal, two agree that no optimum exists (:data:`CONFIRMATIONS`), or none is left (without ``fallback``: the
    first that takes the model only); the best result by :func:`_rank`, its message naming the failures before it."""
    model = run.program.model
    reasons, failures, result, claims, feasible = [], [], None, [], False
    for name, backend, prepared, why in takers(run.program, run.traits, run.time_limit):
        if backend is None:
            reasons.append(why)
            continue
        out = run(backend, prepared)
        optimal = out.optimal
        feasible = feasible or optimal or out.locally_optimal
        if result is None or _rank(out, feasible) >= _rank(result, feasible):
            result = out
        if optimal or not fallback:
            break
        if out.termination in NO_OPTIMUM:  # a claim that no optimum exists: confirmed by a second backend
            claims.append(f"{name}: {out.termination.value}")
            if len(claims) == CONFIRMATIONS:
                break
            log.info("default %s on %s: %s; asking the next default to confirm", name, title(model),
                     out.termination.value)
            continue
        if out.locally_optimal:  # a global backend further on may prove the optimum
            log.info("default %s on %s: locally optimal; trying the next default", name, title(model))
            continue
        log.warning("default %s on %s: %s %s; trying the next default", name, title(model),
                    out.termination.value, out.message)
        failures.append(f"{name}: {out.termination.value} ({out.message})")
    if result is None:
        raise no_default(model, run.traits.kind, reasons)
    if result.termination in NO_OPTIMUM:
        others = [c for c in claims if not c.startswith(f"{result.solver}:")]
        if others:
            result.message = f"{result.message}; confirmed by {', '.join(others)}"
    elif claims:
        result.message = f"{result.message}; not {', '.join(claims)}"
    if failures and failures[-1].startswith(f"{result.solver}:"):
        failures.pop()  # the last one tried failed too: its own message says so
    if failures:
        result.message = f"{result.message}; fallback after {'; '.join(failures)}"
    return result


NO_OPTIMUM = (Termination.INFEASIBLE, Termination.UNBOUNDED, Termination.INFEASIBLE_OR_UNBOUNDED)
"""The ends that say no optimum exists."""

CONFIRMATIONS = 2
"""Backends of the default that must say no optimum exists before ``solve(model)`` says so: a dual infeasibility
certificate of an interior point on a badly scaled LP (PIQP, DAQP) is not a proof that a second backend shares. A
backend's feasible point refutes an infeasibility claim."""


def _rank(result: SolveResult, feasible: bool) -> int:
    """Which of the default's results ``solve(model)`` returns: the optimum, then a proof of infeasibility or
    unboundedness (an infeasibility refuted by a feasible point found on the way ranks last), then a local optimum,
    then a claim of "infeasible or unbounded", then a failure."""
    t = result.termination
    if t is Termination.OPTIMAL:
        return 5
    if t is Termination.UNBOUNDED or (t is Termination.INFEASIBLE and not feasible):
        return 4
    if t is Termination.LOCALLY_OPTIMAL:
        return 3
    if t is Termination.INFEASIBLE_OR_UNBOUNDED and not feasible:
        return 2
    return 0


class Run:
    """One backend's run on a solve's program, checked (:meth:`__call__`): the settings of the solve, shared by the
    backends the default tries in turn."""

    def __init__(self, program: Program, traits: ModelTraits, time_limit: float | None, warm_start: bool,
                 options: dict | None, tee: bool = False):
        self.program, self.traits, self.time_limit = program, traits, time_limit
        self.warm_start, self.options, self.tee = warm_start, options, tee

    def __call__(self, backend: Any, prepared: Any) -> SolveResult:
        """``backend`` run on the model (``prepared``: what its ``prepare`` built), its word checked by the
        certificate: ``OPTIMAL`` only when the certificate on the model passes (module docstring)."""
        model = self.program.model
        if not self.warm_start:
            for v in self.program.free:
                v.set_value(None, skip_validation=True)
        start = time.perf_counter()
        termination, raw_duals, message, limited = self._backend_run(backend, prepared)
        fill_unused_variables(model, self.program.variables)  # in no active row: a value within its bounds
        seconds = time.perf_counter() - start
        certificate = None
        if None not in map(_VALUE, self.program.variables):  # every variable, fixed or not, has a value
            certificate = certify(model, raw_duals if termination is Termination.OPTIMAL else None,
                                  self.traits.convex or backend.proves_convexity,
                                  bool(self.traits.integers) or self.traits.sos, self.program.certificates)
        verdict, message, objective, status = self._verdict(backend, termination, message, certificate)
        values, duals = solution_values(model, raw_duals if verdict is Termination.OPTIMAL else None)
        return SolveResult(
            solver=backend.name,
            solver_version=backend.solver_version(),
            termination=verdict,
            objective=objective if verdict in (Termination.OPTIMAL, Termination.LOCALLY_OPTIMAL) else None,
            values=values,
            duals=duals,
            seconds=seconds,
            max_violation=math.inf if certificate is None else certificate.absolute,  # None: a variable has no value
            message=message,
            solution_status=status,
            solver_termination=termination,
            licence_limited=limited,
            certificate=None if certificate is None else certificate.to_dict(),
        )

    def _backend_run(self, backend: Any, prepared: Any) -> tuple[Termination, dict | None, str, bool]:
        """The backend's own ``(termination, duals, message)`` and whether its licence refused the model
        (``Backend.licence_limit``); a licence limit or a crash inside the solver is a failure, not a crash."""
        extra: dict[str, object] = {"options": self.options} if self.options else {}  # a user's backend may take
        # (model, time_limit) only
        if prepared is not None:
            extra["prepared"] = prepared
        if self.tee and backend.tee:
            extra["tee"] = True
        elif self.tee:
            log.info("%s has no log to stream (tee): it runs silent", backend.name)
        model = self.program.model
        try:
            return (*backend.run(model, self.time_limit, **extra), False)
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            if backend.licence_limit is not None and raised_by(exc, backend.licence_limit):
                log.info("%s: its licence refused the model: %s", backend.name, exc)
                return Termination.REFUSED, None, message, True  # nothing was solved
            log.warning("%s raised %s: %s", backend.name, type(exc).__name__, exc)
            termination = Termination.REFUSED if isinstance(exc, IncompatibleModelError) else Termination.ERROR
            foreign = foreign_variables(model) if isinstance(exc, KeyError) else None
            if foreign:  # the backend's reader numbers the model's own variables only
                termination = Termination.REFUSED
                message = (f"{backend.name} cannot take a row that holds a variable of another model ({foreign}): "
                           "declare the variable on this model (or on one of its blocks)")
            return termination, None, message, False

    def _verdict(self, backend: Any, termination: Termination, message: str, certificate: Certificate | None) \
            -> tuple[Termination, str, float | None, SolutionStatus]:
        """The library's verdict on the backend's word ``termination``, given the ``certificate`` (``None``: a
        variable has no value), its message, the objective, and what the point is: certified optimal, feasible
        (optimal not certified, or a stop with a feasible point), infeasible, or none."""
        model, traits = self.program.model, self.traits
        objective = None if certificate is None else certificate.objective  # the certificate read it (cheaper)
        if objective is None:  # not read by the certificate: Pyomo's value, None where it has no real one
            objective = real_value(objective_of(model))
        if certificate is None:
            status = SolutionStatus.NO_SOLUTION
        else:
            status = SolutionStatus.FEASIBLE if certificate.primal <= FEASIBILITY_TOL else SolutionStatus.INFEASIBLE
        if termination is Termination.OPTIMAL and (objective is None or not math.isfinite(objective)):
            return Termination.NUMERICAL_ERROR, f"reported optimal but the objective is {objective}", objective, status
        if certificate is None:
            if termination is Termination.OPTIMAL:
                message = f"{message}; reported optimal but a variable has no value"
                return Termination.NUMERICAL_ERROR, message, objective, status
            return termination, message, objective, status
        conic = certificate.level in ("local", "feasible") and traits.kind == "NLP" and \
            why_not_conic(model, self.program) is None
        if certificate.level == "local" and conic:
            certificate.level, certificate.why = "kkt", "feasible, KKT conditions hold on a convex (conic) model"
        if termination is not Termination.OPTIMAL:
            return termination, message, objective, status
        if not certificate.passed:
            return Termination.CERTIFICATE_FAILED, f"{message}; {backend.name} said optimal but the certificate " \
                f"failed: {certificate.why} ({certificate.residuals()})", objective, status
        if certificate.certified:
            return termination, message, objective, SolutionStatus.OPTIMAL
        far = far_variable(self.program.free)
        if far is not None:  # SCIP's "optimal" 36.8 on max log(x): x at 1e16, its infinity
            return Termination.NUMERICAL_ERROR, f"{message}; said optimal at {far}, beyond any backend's finite " \
                "range: the model may be unbounded", objective, status
        if not backend.nonconvex and not traits.convex and not conic and certificate.level in ("local", "feasible"):
            # a local solver's point on a model not proved convex
            return Termination.LOCALLY_OPTIMAL, f"{message}; locally optimal: the model is not proved convex, so " \
                f"the point may not be its optimum (a global backend, e.g. scip, proves one) ({certificate.why})", \
                objective, status
        return termination, f"{message}; optimal, not certified: {certificate.why}", objective, status


def _finish(model: pyo.ConcreteModel, result: SolveResult, raise_on_failure: bool) -> SolveResult:
    if not result.optimal:
        log.warning("%s on %s: %s %s", result.solver, title(model), result.termination.value, result.message)
        if raise_on_failure:
            raise NoOptimalSolutionError(result)
    return result


def is_licence_limit(result: SolveResult) -> bool:
    """True when a failure is a size-limited free licence refusing the model (not a numerical failure)."""
    return result.licence_limited
