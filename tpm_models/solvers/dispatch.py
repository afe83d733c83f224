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
A solve is ``OPTIMAL`` only if the solver says so **and** the returned point is finite
and feasible to ``FEASIBILITY_TOL``; otherwise :func:`solve` raises
:class:`NoOptimalSolutionError` (its ``result`` attribute holds what the solver returned).
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.util import IncompatibleModelError

from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import default_candidates, model_size, prepared_backend
from tpm_models.solvers.common import NoOptimalSolutionError, SolveResult, SolverUnavailableError, Termination
from tpm_models.solvers.rows import model_violation, one_reading
from tpm_models.solvers.structure import component_values, model_class, objective_of, title, values_of

log = logging.getLogger(__name__)


def solve(
    model: pyo.ConcreteModel,
    solver: str = "default",
    time_limit: float | None = None,
    raise_on_failure: bool = True,
    warm_start: bool = False,
    kind: str | None = None,
    options: dict | None = None,
) -> SolveResult:
    """Solve ``model`` with ``solver`` and return a :class:`SolveResult`.

    Values are loaded into the model. Every solve starts cold (variable values cleared)
    unless ``warm_start=True``, which hands the current values to solvers that take a
    start (Ipopt). Unless the solve is verified optimal (module
    docstring), raises :class:`NoOptimalSolutionError`; with ``raise_on_failure=False``
    the non-optimal result is returned instead, with its termination saying so. ``kind``: the model's
    :func:`~tpm_models.solvers.structure.model_class` when the caller already has it (a model solved by
    several solvers is classified once).

    ``options``: the solver's own settings, over this library's (tolerances, iteration limits: e.g.
    ``{"max_iter": 50, "tol_gap_rel": 1e-8}`` for Clarabel, ``{"eps_abs": 1e-9}`` for PIQP, ``{"tol": 1e-8}``
    for Ipopt); a name the solver does not know is an error of that solver, reported in the result.

    ``solver="default"``: the defaults of the model's class and size in turn
    (:func:`~tpm_models.solvers.backends.registry.default_candidates`): the first that takes the model solves it;
    when it fails (any end but optimal, infeasible or unbounded) the next one that takes the model solves it
    again, and the result's message names each failure before it ("fallback after ...").
    """
    with one_reading():  # the rows are read once for the extraction and the feasibility check
        return _solve(model, solver, time_limit, raise_on_failure, warm_start, kind, options)


def _solve(model, solver, time_limit, raise_on_failure, warm_start, kind, options) -> SolveResult:
    if solver != "default":
        backend, _, prepared = prepared_backend(model, solver, kind)
        return _finish(model, _run(model, backend, prepared, time_limit, warm_start, options), raise_on_failure)
    kind = model_class(model) if kind is None else kind
    candidates = default_candidates(kind, model_size(model))
    reasons, failures, result = [], [], None
    for name in candidates:
        try:
            backend, _, prepared = prepared_backend(model, name, kind)
        except SolverUnavailableError as exc:
            reasons.append(str(exc))
            continue
        result = _run(model, backend, prepared, time_limit, warm_start, options)
        if result.optimal or result.termination in (Termination.INFEASIBLE, Termination.UNBOUNDED):
            break
        log.warning("default %s on %s: %s %s; trying the next default", name, title(model),
                    result.termination.value, result.message)
        failures.append(f"{name}: {result.termination.value} ({result.message})")
    if result is None:
        if not candidates:
            raise SolverUnavailableError(f"no default solver for model class {kind}")
        raise SolverUnavailableError(f"no default solver takes {title(model)}: {'; '.join(reasons)}")
    if failures and failures[-1].startswith(f"{result.solver}:"):
        failures.pop()  # the last one tried failed too: its own message says so
    if failures:
        result.message = f"{result.message}; fallback after {'; '.join(failures)}"
    return _finish(model, result, raise_on_failure)


def _run(model: pyo.ConcreteModel, backend, prepared, time_limit: float | None, warm_start: bool,
         options: dict | None) -> SolveResult:
    """One backend's run on ``model``, checked: ``OPTIMAL`` only when the point is finite and feasible."""
    if not warm_start:
        for v in model.component_data_objects(pyo.Var, descend_into=True):
            if not v.fixed:
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
    if termination is Termination.ERROR and any(w in message.lower() for w in _LICENCE_WORDS):
        termination = Termination.REFUSED  # a size-limited licence refused the model: nothing was solved
    seconds = time.perf_counter() - start

    values = values_of(model)
    violation = model_violation(model)
    objective = pyo.value(objective_of(model), exception=False)
    objective = float(objective) if objective is not None else None
    if termination is Termination.OPTIMAL and (
        objective is None or not math.isfinite(objective) or violation > common.FEASIBILITY_TOL
    ):
        termination = Termination.NUMERICAL_ERROR
        message = f"reported optimal but max violation {violation:.3g} / objective {objective}"
    duals = None
    if raw_duals is not None and termination is Termination.OPTIMAL:

        def get(con):
            value = raw_duals.get(con)
            return np.nan if value is None else float(value)

        duals = component_values(model, get, pyo.Constraint)
    return SolveResult(
        solver=backend.name,
        solver_version=backend.solver_version(),
        termination=termination,
        objective=objective if termination is Termination.OPTIMAL else None,
        values=values,
        duals=duals,
        seconds=seconds,
        max_violation=violation,
        message=message,
    )


def _finish(model: pyo.ConcreteModel, result: SolveResult, raise_on_failure: bool) -> SolveResult:
    if not result.optimal:
        log.warning("%s on %s: %s %s", result.solver, title(model), result.termination.value, result.message)
        if raise_on_failure:
            raise NoOptimalSolutionError(result)
    return result


_LICENCE_WORDS = ("too many rows", "too many columns", "size-limited", "model too large", "licen",
                  "restricted license", "promotional")


def is_licence_limit(result: SolveResult) -> bool:
    """True when a failure is a size-limited free licence refusing the model (not a numerical failure)."""
    return result.termination is Termination.REFUSED and any(w in result.message.lower() for w in _LICENCE_WORDS)

