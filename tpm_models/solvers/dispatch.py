"""One ``solve()`` for every backend, one result type.

Backends
--------
========  ================================================  ===================  ==========================
name      what                                              model classes        package
========  ================================================  ===================  ==========================
piqp      PIQP interior point, from the model's matrices   LP, QP               ``piqp`` (default LP, QP)
          (:mod:`tpm_models.solvers.matrices`): dense when
          small, sparse when large
daqp      DAQP dual active set, from the model's matrices    LP, QP               ``daqp``
highs     HiGHS through Pyomo's ``highs`` interface          LP, QP               ``highspy``
ipopt     Ipopt: the ``ipopt`` executable if on PATH, else   LP, QP, SOCP, NLP    ``casadi``
          CasADi's bundled Ipopt (:mod:`tpm_models.solvers.ipopt`)
gurobi    Gurobi through Pyomo's ``gurobi_direct``           LP, QP, SOCP         ``gurobipy`` (size-limited)
cplex     CPLEX through Pyomo's ``cplex_direct``             LP, QP, SOCP         ``cplex`` (size-limited)
xpress    Xpress through Pyomo's ``xpress_direct``           LP, QP, SOCP         ``xpress`` (size-limited)
scip      SCIP through Pyomo's ``scip_direct``               LP, QP, SOCP, NLP    ``pyscipopt``
========  ================================================  ===================  ==========================

HiGHS, PIQP and DAQP take no quadratic constraint: asking them for an SOCP or NLP is a
:class:`SolverUnavailableError` naming the installed solvers that can.

Size limits of the pip licences (a refusal is a reported ``ERROR``, never numbers):
Gurobi takes at most 200 variables once the objective is quadratic; Xpress Community at
most 200 rows plus columns; CPLEX Community 1000 variables and 1000 constraints.

``solver="default"`` picks the default for the model's class and size (``DEFAULT``, ``DEFAULT_LARGE``),
chosen from the measurements in ``docs/solvers.md`` and ``docs/bench-scale.md``, and falls back to the next
default when one fails.

Dual sign convention: :mod:`tpm_models.solvers.common` (one for every backend).

Never a silent non-optimum
--------------------------
A solve is ``OPTIMAL`` only if the solver says so **and** the certificate computed on the model as written
(:func:`tpm_models.solvers.certificate.certify`: every row feasible relative to its size, and on a convex model
the KKT conditions with the backend's duals) passes; a failed certificate is ``CERTIFICATE_FAILED`` with the
residuals in the message. Otherwise :func:`solve` raises :class:`NoOptimalSolutionError` (its ``result``
attribute holds what the solver returned). An optimal result whose optimality the certificate could not check
(no duals; a model not classified convex) is ``solution_status == FEASIBLE``: "optimal, not certified".

Refused before any solve (:class:`SolverUnavailableError`): integer variables on a backend that would relax them,
a model proved not convex on a backend that is not global, a ``time_limit`` a backend cannot honour; a model
without exactly one active objective or a ``time_limit <= 0`` is a :class:`ModelError`.
"""

from __future__ import annotations

import logging
import math
import operator
import time

import pyomo.core as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.contrib.solver.common.util import IncompatibleModelError

from tpm_models.solvers.backends.registry import default_candidates, model_size, prepared_backend
from tpm_models.solvers.certificate import Certificate, certify
from tpm_models.solvers.common import (
    FEASIBILITY_TOL,
    ModelError,
    NoOptimalSolutionError,
    SolutionStatus,
    SolveResult,
    SolverUnavailableError,
    Termination,
)
from tpm_models.solvers.conic import why_not_conic
from tpm_models.solvers.reading import one_reading
from tpm_models.solvers.structure import (
    ModelTraits,
    component_values,
    max_violation,
    model_traits,
    objective_of,
    title,
    values_of,
)
from tpm_models.solvers.variables import (
    far_variable,
    fill_unused_variables,
    foreign_variables,
    free_variables,
    model_variables,
)
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
) -> SolveResult:
    """Solve ``model`` with ``solver`` and return a :class:`SolveResult`.

    Values are loaded into the model. Every solve starts cold (variable values cleared)
    unless ``warm_start=True``, which hands the current values to solvers that take a
    start (Ipopt). Unless the solve is verified optimal (module
    docstring), raises :class:`NoOptimalSolutionError`; with ``raise_on_failure=False``
    the non-optimal result is returned instead, with its termination saying so. ``kind``: the model's
    :func:`~tpm_models.solvers.structure.model_class` when the caller already has it (a model solved by
    several solvers is classified once), or its :func:`~tpm_models.solvers.structure.model_traits` (then the
    objective's convexity test is not repeated either). ``time_limit``: seconds, > 0; a backend that cannot
    honour it refuses.

    ``options``: the solver's own settings, over this library's (tolerances, iteration limits: e.g.
    ``{"max_iter": 50, "tol_gap_rel": 1e-8}`` for Clarabel, ``{"eps_abs": 1e-9}`` for PIQP, ``{"tol": 1e-8}``
    for Ipopt); a name the solver does not know is an error of that solver, reported in the result.

    ``solver="default"``: the defaults of the model's class and size in turn
    (:func:`~tpm_models.solvers.backends.registry.default_candidates`): the first that takes the model solves it;
    when it fails (any end but optimal, infeasible or unbounded) the next one that takes the model solves it
    again, and the result's message names each failure before it ("fallback after ...").
    """
    if time_limit is not None and not (isinstance(time_limit, (int, float)) and 0 < time_limit < math.inf):
        raise ModelError(f"time_limit must be a positive number of seconds (or None for no limit), got {time_limit!r}")
    # the linear rows are read once: for the class, the extraction and the certificate. Python's cyclic collector is
    # paused (Pyomo's PauseGC, as the builders and Pyomo's writers do): every collection would walk the model's
    # millions of live objects again, a third of the conic form's time on (28) at 10^4 points (docs/bench-scale.md)
    with PauseGC(), one_reading():
        traits = kind if isinstance(kind, ModelTraits) else model_traits(model, kind)
        return _solve(model, solver, time_limit, raise_on_failure, warm_start, traits, options)


def _solve(model, solver, time_limit, raise_on_failure, warm_start, traits: ModelTraits, options) -> SolveResult:
    if solver != "default":
        backend, _, prepared = prepared_backend(model, solver, traits, time_limit)
        return _finish(model, _run(model, backend, prepared, time_limit, warm_start, options, traits),
                       raise_on_failure)
    candidates = default_candidates(traits.kind, model_size(model))
    reasons, failures, result, claims, feasible = [], [], None, [], False
    for name in candidates:
        try:
            backend, _, prepared = prepared_backend(model, name, traits, time_limit)
        except SolverUnavailableError as exc:
            reasons.append(str(exc))
            continue
        run = _run(model, backend, prepared, time_limit, warm_start, options, traits)
        feasible = feasible or run.optimal or run.locally_optimal
        if result is None or _rank(run, feasible) >= _rank(result, feasible):
            result = run
        if run.optimal:
            break
        if run.termination in NO_OPTIMUM:  # a claim that no optimum exists: confirmed by a second backend
            claims.append(f"{name}: {run.termination.value}")
            if len(claims) == CONFIRMATIONS:
                break
            log.info("default %s on %s: %s; asking the next default to confirm", name, title(model),
                     run.termination.value)
            continue
        if run.locally_optimal:  # a global backend further on may prove the optimum
            log.info("default %s on %s: locally optimal; trying the next default", name, title(model))
            continue
        log.warning("default %s on %s: %s %s; trying the next default", name, title(model),
                    run.termination.value, run.message)
        failures.append(f"{name}: {run.termination.value} ({run.message})")
    if result is not None and result.termination in NO_OPTIMUM:
        others = [c for c in claims if not c.startswith(f"{result.solver}:")]
        if others:
            result.message = f"{result.message}; confirmed by {', '.join(others)}"
    elif claims and result is not None:
        result.message = f"{result.message}; not {', '.join(claims)}"
    if result is None:
        if not candidates:
            raise SolverUnavailableError(f"no default solver for model class {traits.kind}")
        raise SolverUnavailableError(
            f"no default solver takes the {traits.kind} {title(model)!r}: {'; '.join(reasons)}")
    if failures and failures[-1].startswith(f"{result.solver}:"):
        failures.pop()  # the last one tried failed too: its own message says so
    if failures:
        result.message = f"{result.message}; fallback after {'; '.join(failures)}"
    return _finish(model, result, raise_on_failure)


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


def _run(model: pyo.ConcreteModel, backend, prepared, time_limit: float | None, warm_start: bool,
         options: dict | None, traits: ModelTraits) -> SolveResult:
    """One backend's run on ``model``, checked: ``OPTIMAL`` only when the certificate on the model passes."""
    if not warm_start:
        for v in free_variables(model)[0]:  # read once per solve (reading.one_reading)
            v.set_value(None, skip_validation=True)
    start = time.perf_counter()
    try:
        extra = {"options": options} if options else {}  # a user's backend may take (model, time_limit) only
        if prepared is not None:
            extra["prepared"] = prepared
        termination, raw_duals, message = backend.run(model, time_limit, **extra)
    except Exception as exc:  # a licence limit or a crash inside the solver is a failure, not a crash
        log.warning("%s raised %s: %s", backend.name, type(exc).__name__, exc)
        message = f"{type(exc).__name__}: {exc}"
        termination = Termination.REFUSED if isinstance(exc, IncompatibleModelError) else Termination.ERROR
        raw_duals = None
        foreign = foreign_variables(model) if isinstance(exc, KeyError) else None
        if foreign:  # the backend's reader numbers the model's own variables only
            termination = Termination.REFUSED
            message = (f"{backend.name} cannot take a row that holds a variable of another model ({foreign}): "
                       "declare the variable on this model (or on one of its blocks)")
    fill_unused_variables(model)  # a variable in no active row: a value within its bounds (the backend gave none)
    if termination is Termination.ERROR and any(w in message.lower() for w in _LICENCE_WORDS):
        termination = Termination.REFUSED  # a size-limited licence refused the model: nothing was solved
    seconds = time.perf_counter() - start

    solver_termination = termination
    values = values_of(model)
    certificate, conic = None, False
    if None not in map(_VALUE, model_variables(model)):  # every variable, fixed or not, has a value
        certificate = certify(model, raw_duals if termination is Termination.OPTIMAL else None,
                              traits.convex or backend.proves_convexity, bool(traits.integers) or traits.sos)
    objective = None if certificate is None else certificate.objective  # the certificate read it (cheaper)
    if objective is None:  # not read by the certificate: Pyomo's value, None where it has no real one (violation)
        objective = real_value(objective_of(model))
    if termination is Termination.OPTIMAL and (objective is None or not math.isfinite(objective)):
        termination = Termination.NUMERICAL_ERROR
        message = f"reported optimal but the objective is {objective}"
    elif termination is Termination.OPTIMAL and certificate is None:
        termination = Termination.NUMERICAL_ERROR
        message = f"{message}; reported optimal but a variable has no value"
    elif certificate is not None:
        optimal = termination is Termination.OPTIMAL
        conic = certificate.level in ("local", "feasible") and traits.kind == "NLP" and why_not_conic(model) is None
        if certificate.level == "local" and conic:
            certificate.level, certificate.why = "kkt", "feasible, KKT conditions hold on a convex (conic) model"
        if optimal and not certificate.passed:
            termination = Termination.CERTIFICATE_FAILED
            message = f"{message}; {backend.name} said optimal but the certificate failed: {certificate.why} " \
                      f"({certificate.residuals()})"
    if termination is Termination.OPTIMAL and certificate is not None and not certificate.certified:
        far = far_variable(model)
        if far is not None:  # SCIP's "optimal" 36.8 on max log(x): x at 1e16, its infinity
            termination = Termination.NUMERICAL_ERROR
            message = f"{message}; said optimal at {far}, beyond any backend's finite range: the model may be unbounded"
    if termination is Termination.OPTIMAL and certificate is not None and not certificate.certified and \
            not backend.nonconvex and not traits.convex and not conic and certificate.level in ("local", "feasible"):
        termination = Termination.LOCALLY_OPTIMAL  # a local solver's point on a model not proved convex
        message = f"{message}; locally optimal: the model is not proved convex, so the point may not be its optimum " \
                  "(a global backend, e.g. scip, proves one)"
    solution_status = _solution_status(termination, certificate)
    violation = certificate.absolute if certificate is not None else max_violation(model)
    if termination is Termination.OPTIMAL and not certificate.certified:
        message = f"{message}; optimal, not certified: {certificate.why}"
    elif termination is Termination.LOCALLY_OPTIMAL:
        message = f"{message} ({certificate.why})"
    duals = None
    if raw_duals is not None and termination is Termination.OPTIMAL:

        duals = component_values(model, raw_duals.get, pyo.Constraint)  # None (no dual) -> NaN
    return SolveResult(
        solver=backend.name,
        solver_version=backend.solver_version(),
        termination=termination,
        objective=objective if termination in (Termination.OPTIMAL, Termination.LOCALLY_OPTIMAL) else None,
        values=values,
        duals=duals,
        seconds=seconds,
        max_violation=violation,
        message=message,
        solution_status=solution_status,
        solver_termination=solver_termination,
        certificate=None if certificate is None else certificate.to_dict(),
    )


def _finish(model: pyo.ConcreteModel, result: SolveResult, raise_on_failure: bool) -> SolveResult:
    if not result.optimal:
        log.warning("%s on %s: %s %s", result.solver, title(model), result.termination.value, result.message)
        if raise_on_failure:
            raise NoOptimalSolutionError(result)
    return result


def _solution_status(termination: Termination, certificate: Certificate | None) -> SolutionStatus:
    """What the point is: certified optimal, feasible (optimal not certified, or a stop with a feasible point),
    infeasible, or none."""
    if certificate is None:
        return SolutionStatus.NO_SOLUTION
    if termination is Termination.OPTIMAL and certificate.certified:
        return SolutionStatus.OPTIMAL
    return SolutionStatus.FEASIBLE if certificate.primal <= FEASIBILITY_TOL else SolutionStatus.INFEASIBLE


_LICENCE_WORDS = ("too many rows", "too many columns", "size-limited", "model too large", "licen",
                  "restricted license", "promotional", "problem size limits exceeded")
"""Words of a size-limited licence's refusal in a solver's message (Gurobi's "Model too large for size-limited
license", Xpress's "too many rows and columns", CPLEX's "Error 1016: Community Edition. Problem size limits
exceeded")."""


def is_licence_limit(result: SolveResult) -> bool:
    """True when a failure is a size-limited free licence refusing the model (not a numerical failure)."""
    return result.termination is Termination.REFUSED and any(w in result.message.lower() for w in _LICENCE_WORDS)

