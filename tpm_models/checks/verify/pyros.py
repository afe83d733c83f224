"""Route (b) of the verifier: the semi-infinite model by Pyomo's robust solver PyROS (``pyomo.contrib.pyros``).

Every uncertain row's body gets :math:`a(x)^\\top\\delta` and the objective every
:math:`\\omega_k a_k(x)^\\top\\delta_k`, with :math:`\\delta` as PyROS uncertain parameters in the set's PyROS
counterpart (:meth:`tpm_models.models.uncertainty.UncertaintySet.pyros_set`: a box, an axis-aligned ellipsoid for
:math:`p=2`, the cross-polytope as a budget set for :math:`p=1`, an ellipsoid, a polyhedron, a cardinality set).
The subsolvers (:func:`pyros_subsolver`: those the backends declare, ``register_backend(..., pyros=...)``, with
:data:`PYROS_SETTINGS`), their backups and PyROS's tolerances (:func:`pyros_options`) are shared
with :func:`tpm_models.checks.semi_infinite.solve_22_pyros`; when the default subsolver's licence refuses a
subproblem, :func:`pyros_with_fallback` runs PyROS again with a free one.
What was measured to choose the tolerances is in ``docs/verify.md`` (section "Why the tolerances").
"""

from __future__ import annotations

import contextlib
import io
import itertools
import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import pyomo.environ as pyo

from tpm_models.checks.verify.model import SemiInfinite, SemiInfiniteSolution, evaluate_point, failure_summary, row_with
from tpm_models.models.uncertainty import NormBall, Uncertain
from tpm_models.solvers import ipopt as casadi_ipopt
from tpm_models.solvers.backends.registry import is_licence_refusal, pyros_backends

log = logging.getLogger(__name__)

PYROS_FEASIBILITY_TOL = 1e-8
"""PyROS's ``robust_feasibility_tolerance`` (PyROS's default: 1e-4): a separation violation below it counts as
robust. The verifier does not take PyROS's word for it: it evaluates PyROS's point exactly
(:func:`tpm_models.checks.verify.model.evaluate_point`)."""

SCIP_PYROS_OPTIONS = {"numerics/feastol": 1e-7, "numerics/dualfeastol": 1e-7, "numerics/epsilon": 1e-11}
"""SCIP's tolerances as PyROS's subsolver: the tightest at which SCIP's LP retry (:data:`SCIP_LP_RETRY_FACTOR`
times these) stays at or above :data:`SOPLEX_MIN_TOL`, which SoPlex without GMP takes silently. Below that SoPlex
writes a line to stderr on every retry, and Pyomo's ``scip_direct``, which captures stderr in a pipe drained by a
Python thread that cannot run while ``pyscipopt`` holds the GIL, blocks once the pipe is full."""

SCIP_PYROS_FEASIBILITY_TOL = 1e-6
"""PyROS's ``robust_feasibility_tolerance`` when a subsolver is SCIP (:data:`SCIP_PYROS_OPTIONS`): ten times SCIP's
feasibility tolerance, so that a master solved to SCIP's tolerance can remove every violation PyROS counts."""

SOPLEX_MIN_TOL = 1e-10
"""The smallest LP tolerance SoPlex takes without GMP (what it says when given less)."""

SCIP_LP_RETRY_FACTOR = 1e-3
"""SCIP's re-solve of a failed LP tightens its tolerances by this factor (``FEASTOLTIGHTFAC`` in SCIP's lp.c)."""

GUROBI_BACKUP_OPTIONS = {"NumericFocus": 3}
"""Gurobi's most careful numerics, for the Gurobi backup PyROS gets beside a Gurobi subsolver: PyROS's masters are
QCPs (the objective epigraph row is quadratic), on which Gurobi's default barrier can end SUBOPTIMAL."""


class PyrosSettings(NamedTuple):
    """How :func:`pyros_subsolver` makes one PyROS subsolver: the Pyomo solver (``SolverFactory`` name), our settings
    on it (its own names), the setting that takes PyROS's time limit (``None``: none), PyROS's
    ``robust_feasibility_tolerance`` beside it, and its backup (:func:`pyros_options`): the settings of a counted
    backup on top of ``options`` (``backup_options``) or the keywords of a fresh one (``backup_kwds``); ``local``: a
    local NLP solver whose KKT points are global on the convex separation problems, so that as both of PyROS's
    solvers the local separation is bypassed (:func:`pyros_options`) and the separation problems are ordered
    (:func:`tpm_models.checks.semi_infinite.solve_22_pyros`)."""

    factory: str
    options: dict
    time_limit_option: str | None = None
    feasibility_tol: float = PYROS_FEASIBILITY_TOL
    backup_options: dict | None = None
    backup_kwds: dict | None = None
    local: bool = False


PYROS_SETTINGS: dict[str, PyrosSettings] = {
    casadi_ipopt.PLUGIN_NAME: PyrosSettings(casadi_ipopt.PLUGIN_NAME, {}, "max_wall_time",
                                            backup_kwds={"warmstart": False}, local=True),
    "scip": PyrosSettings("scip_direct", {"display/verblevel": 0,  # SCIP can block on the captured pipe
                                          "limits/gap": 0.0, **SCIP_PYROS_OPTIONS}, "limits/time",
                          feasibility_tol=SCIP_PYROS_FEASIBILITY_TOL),
    "gurobi_direct": PyrosSettings("gurobi_direct", {"OutputFlag": 0, "FeasibilityTol": 1e-9, "OptimalityTol": 1e-9,
                                                     "BarConvTol": 1e-10, "BarQCPConvTol": 1e-10, "MIPGap": 0.0},
                                   backup_options=GUROBI_BACKUP_OPTIONS),
}
"""Our settings of each PyROS subsolver a backend declares (``register_backend(..., pyros=NAME)``), by that name;
a name not here (another Pyomo solver) is made by ``SolverFactory(name)`` with its own settings."""


class DropTimeAdjustmentWarning(logging.Filter):
    """PyROS adjusts the time limit of its subproblems only for the executables it knows (GAMS, BARON,
    Ipopt's ``.nl`` interface, SCIP's shell) and otherwise warns at every subproblem. Our subsolvers get
    the whole limit as their own (:func:`pyros_subsolver`) and PyROS checks its limit after every
    subproblem, so the warning carries nothing."""

    PREFIX = "Subproblem time limit setting not adjusted"

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.PREFIX)


def pyros_logger() -> logging.Logger:
    """The logger PyROS reports its progress to (``tpm_models.pyros``), with :class:`DropTimeAdjustmentWarning`."""
    progress = logging.getLogger("tpm_models.pyros")
    if not any(isinstance(f, DropTimeAdjustmentWarning) for f in progress.filters):
        progress.addFilter(DropTimeAdjustmentWarning())
    return progress


def pyros_subsolvers() -> tuple[str, ...]:
    """PyROS's subsolvers tried in order when none is named, local and global alike: the PyROS subsolvers of the
    global backends (:func:`~tpm_models.solvers.backends.registry.pyros_backends`, Gurobi then SCIP here).
    ``"tpm_ipopt"`` (:class:`tpm_models.solvers.ipopt.CasadiIpopt`, always installed) is accepted by name; it serves
    as a *global* solver only on models it certifies convex (:func:`tpm_models.checks.semi_infinite.solve_22_pyros`
    explains when that is sound)."""
    return tuple(b.pyros for b in pyros_backends(global_only=True) if b.pyros is not None)


def pyros_settings(name: str) -> PyrosSettings:
    """:data:`PYROS_SETTINGS` of the subsolver ``name``, or of the Pyomo solver ``name`` with none of ours."""
    return PYROS_SETTINGS.get(name) or PyrosSettings(name, {})


def settings_of(opt: Any) -> PyrosSettings | None:
    """The :data:`PYROS_SETTINGS` entry whose Pyomo solver ``opt`` is (``None``: another solver)."""
    name = str(getattr(opt, "name", ""))
    return next((s for s in PYROS_SETTINGS.values() if s.factory == name), None)


def pyros_subsolver(kind: str, prefer: str | None, time_limit: float | None = None,
                    gurobi_options: dict | None = None, **kwds: Any) -> Any:
    """A Pyomo solver object PyROS can call, with its :data:`PYROS_SETTINGS` and then ``gurobi_options`` (a backup's
    settings, the solver's names, on top of ours); ``kwds`` go to its ``SolverFactory`` (those of
    :class:`tpm_models.solvers.ipopt.CasadiIpopt`). ``prefer`` None: the first installed of
    :func:`pyros_subsolvers` (``kind``, ``"local"`` or ``"global"``, names the role in the error)."""
    names = [prefer] if prefer else list(pyros_subsolvers())
    for name in names:
        settings = pyros_settings(name)
        opt = pyo.SolverFactory(settings.factory, **kwds)
        if opt.available(exception_flag=False):
            opt.options.update({**settings.options, **(gurobi_options or {})})
            if time_limit and settings.time_limit_option:
                opt.options[settings.time_limit_option] = float(time_limit)
            return opt
    raise RuntimeError(f"no {kind} subsolver for PyROS among {names}; pip install gurobipy or pyscipopt, "
                       f"or name 'tpm_ipopt'")


def counting(opt):
    """``opt`` with a ``solves`` count of its ``solve`` calls (as :class:`tpm_models.solvers.ipopt.CasadiIpopt`
    keeps one), so a result can say how often PyROS needed a backup."""
    solve_ = opt.solve
    opt.solves = 0

    def counted(*args, **kwds):
        opt.solves += 1
        return solve_(*args, **kwds)

    opt.solve = counted
    return opt


def pyros_options(local_solver: str | None, global_solver: str | None, time_limit: float | None = None,
                  subsolver: Callable[..., Any] = pyros_subsolver) -> tuple[dict, list]:
    """PyROS's keyword arguments (subsolvers, backups, tolerances, worst-case objective, masters solved
    globally) and the list of backup solvers (each with a ``solves`` count). Each subsolver's backup and PyROS's
    tolerance beside it are its :data:`PYROS_SETTINGS`: a Gurobi subsolver gets a counted Gurobi backup with
    :data:`GUROBI_BACKUP_OPTIONS`, ``tpm_ipopt`` a cold-started Ipopt
    (:func:`tpm_models.checks.semi_infinite.solve_22_pyros` explains why), SCIP none."""
    from pyomo.contrib import pyros

    options = {
        "robust_feasibility_tolerance": PYROS_FEASIBILITY_TOL,
        "objective_focus": pyros.ObjectiveType.worst_case,
        "solve_master_globally": True,
        "progress_logger": pyros_logger(),
    }
    if time_limit:
        options["time_limit"] = time_limit
    local = subsolver("local", local_solver, time_limit)
    global_ = subsolver("global", global_solver, time_limit)
    options["local_solver"], options["global_solver"] = local, global_
    made = [settings_of(opt) for opt in (local, global_)]
    options["robust_feasibility_tolerance"] = max([PYROS_FEASIBILITY_TOL, *(s.feasibility_tol for s in made if s)])
    backups = []
    for kind, name, opt, settings in zip(("local", "global"), (local_solver, global_solver), (local, global_), made):
        if settings is not None and settings.backup_kwds is not None and name is not None:
            backups.append(subsolver(kind, name, time_limit, **settings.backup_kwds))
        elif settings is not None and settings.backup_options is not None:
            backups.append(counting(subsolver(kind, opt.name, time_limit, gurobi_options=settings.backup_options)))
        else:
            continue
        options[f"backup_{kind}_solvers"] = [backups[-1]]
    if local_solver == global_solver and made[0] is not None and made[0].local:
        options["bypass_local_separation"] = True  # both our Ipopt: its separations are global on convex models
    return options, backups


def solve_pyros(
    nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain], local_solver: str | None = None,
    global_solver: str | None = None, time_limit: float | None = None,
) -> SemiInfiniteSolution:
    """The semi-infinite model by PyROS: route (b) of :mod:`tpm_models.checks.verify`.

    Every uncertain row's body gets :math:`a(x)^\\top\\delta` and the objective every
    :math:`\\omega_k a_k(x)^\\top\\delta_k`, with :math:`\\delta` as PyROS uncertain parameters in the set's
    PyROS counterpart (:meth:`UncertaintySet.pyros_set`; a norm ball with :math:`p=1` as
    :math:`\\delta=d^+-d^-`); sets of one point stay numbers. Every variable is first stage; PyROS
    minimises the worst case of the objective (the sum of the terms' maxima: each term has its own
    :math:`\\delta`), masters solved globally, subsolvers by :func:`pyros_options`. The result's
    ``termination`` is PyROS's (only ``robust_optimal`` counts); its ``objective`` and
    ``max_violation`` are the exact evaluation of PyROS's point, not PyROS's numbers (``lower_bound``
    holds PyROS's final objective).
    """
    start = time.perf_counter()
    si = SemiInfinite(nominal, uncertain)
    m = si.model
    items = [(k, item.coefficients, item.uncertainty) for k, item in enumerate(si.rows)]
    items += [(len(si.rows) + k, term.coefficients, term.uncertainty) for k, term in enumerate(si.terms)]
    m.verify_delta = pyo.Param(pyo.Any, mutable=True, initialize={}, dense=False, doc="uncertain perturbations")
    sets, params, deltas = [], [], {}
    for k, coefs, uset in items:
        n = len(coefs)
        if uset.is_point():
            deltas[k] = [float(x) for x in uset.start(n)]
            continue
        split = isinstance(uset, NormBall) and uset.p == 1.0
        keys = [(k, j, s) for s in (("+", "-") if split else ("",)) for j in range(n)]
        nominal_point = [0.0] * len(keys) if split else [float(x) for x in uset.start(n)]
        for key, x in zip(keys, nominal_point):
            m.verify_delta[key] = x  # PyROS wants its nominal point in the set (a scenario, not 0)
        params += [m.verify_delta[key] for key in keys]
        deltas[k] = ([m.verify_delta[k, j, "+"] - m.verify_delta[k, j, "-"] for j in range(n)] if split
                     else [m.verify_delta[k, j, ""] for j in range(n)])
        sets.append(uset.pyros_set(n))
    m.verify_robust_rows = pyo.ConstraintList(doc="the uncertain rows with a(x)'delta added")
    for k, item in enumerate(si.rows):
        item.row.deactivate()
        extra = sum(a * d for a, d in zip(item.coefficients, deltas[k]))
        m.verify_robust_rows.add(row_with(item.row, extra))
    worst = si.nominal_objective + sum(
        term.weight * sum(a * d for a, d in zip(term.coefficients, deltas[len(si.rows) + k]))
        for k, term in enumerate(si.terms))
    if si.sense < 0:  # PyROS minimises the worst case: a maximised objective as the minimised negation
        si.objective.sense = pyo.minimize
        worst = -worst
    si.objective.set_value(worst)
    first_stage = [v for v in m.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
    if not params:
        raise ValueError("no uncertain parameter: every uncertainty set is a point; solve the nominal model")
    options, backups = pyros_options(local_solver, global_solver, time_limit)
    with contextlib.redirect_stdout(io.StringIO()):
        res = pyo.SolverFactory("pyros").solve(
            m, first_stage_variables=first_stage, second_stage_variables=[], uncertain_params=params,
            uncertainty_set=joint_set(sets), **options,
        )
    seconds = time.perf_counter() - start
    termination = str(res.pyros_termination_condition).rsplit(".", 1)[-1]
    n_backup = sum(getattr(b, "solves", 0) for b in backups)
    message = f"{termination}, {res.iterations} iterations" + (f", {n_backup} backup solves" if n_backup else "")
    if termination != "robust_optimal":
        return SemiInfiniteSolution("pyros", math.nan, {}, math.nan, None, int(res.iterations), seconds,
                                    termination, message)
    values = si.values()
    ev = evaluate_point(nominal, uncertain, values)
    final = si.sense * float(res.final_objective_value)
    return SemiInfiniteSolution("pyros", ev.objective, values, ev.violation, final, int(res.iterations), seconds,
                                termination, message)


def joint_set(sets: list) -> Any:
    """The PyROS set of all the declarations' perturbations together: their Cartesian product, or, when every set is
    a ``DiscreteScenarioSet`` (which PyROS's product refuses), the scenarios of the product, every combination
    (``ValueError`` for scenarios beside a continuous set, which PyROS cannot combine)."""
    from pyomo.contrib import pyros

    if len(sets) == 1:
        return sets[0]
    discrete = [isinstance(s, pyros.DiscreteScenarioSet) for s in sets]
    if not any(discrete):
        return pyros.CartesianProductSet(sets)
    if not all(discrete):
        raise ValueError("PyROS cannot combine scenarios with a continuous set: declare every uncertain item "
                         "under scenarios, or verify with the cutting planes (method='cutting_planes')")
    return pyros.DiscreteScenarioSet(scenarios=[tuple(x for point in combo for x in point)
                                                for combo in itertools.product(*(s.scenarios for s in sets))])


def free_pyros_subsolvers() -> tuple[str, ...]:
    """PyROS's subsolvers, tried in order, when the default one's licence refuses a subproblem (Gurobi's pip licence:
    200 variables once a quadratic term is present, less than PyROS's separation problems on the whole Iris set):
    those of the backends whose licence never refuses a model's size
    (:func:`~tpm_models.solvers.backends.registry.pyros_backends`): our Ipopt (always installed; global on the models
    it certifies convex, :func:`tpm_models.checks.semi_infinite.solve_22_pyros` explains when that is sound;
    ``tpm-models solve --model 22 --method pyros`` uses it on the whole Iris set), then SCIP (free, global; at
    :data:`SCIP_PYROS_FEASIBILITY_TOL`) when installed. The first that ends ``robust_optimal`` is kept; else the last
    one's result."""
    return tuple(b.pyros for b in pyros_backends(free_only=True) if b.pyros is not None)


def subsolver_available(name: str) -> bool:
    """Whether the Pyomo solver of the PyROS subsolver ``name`` (:func:`pyros_settings`) can run here."""
    return bool(pyo.SolverFactory(pyros_settings(name).factory).available(exception_flag=False))


def pyros_with_fallback(nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain], local_solver: str | None,
                        global_solver: str | None, time_limit: float | None) -> SemiInfiniteSolution:
    """:func:`solve_pyros`; when no subsolver was named and the default one's licence refuses a subproblem, the
    same again with each of :func:`free_pyros_subsolvers` until one ends ``robust_optimal`` (the message says
    which, and why)."""
    try:
        return solve_pyros(nominal, uncertain, local_solver, global_solver, time_limit)
    except Exception as exc:
        if local_solver is not None or global_solver is not None or not is_licence_refusal(exc):
            raise
        refused, refusal = failure_summary(exc), exc
    tried: list[str] = []
    si = None
    for free in free_pyros_subsolvers():
        if not subsolver_available(free):
            continue
        log.warning("PyROS: a subsolver's licence refused a subproblem (%s); again with %s", refused, free)
        try:
            si = solve_pyros(nominal, uncertain, free, free, time_limit)
        except Exception as exc:  # this one failed too: say so, try the next
            tried.append(f"{free}: {failure_summary(exc)}")
            continue
        si.message += f"; {free} subsolvers (the default's licence refused: {refused}" + (
            f"; before: {'; '.join(tried)}" if tried else "") + ")"
        if si.ok:
            return si
        tried.append(f"{free}: {si.termination}")
    if si is None:
        raise RuntimeError(f"the default subsolver's licence refused ({refused}) and no free one ended: "
                           + "; ".join(tried)) from refusal
    return si


PYROS_SUBSOLVER_NAMES: dict[str, str | None] = {
    "default": None, **{b.name: b.pyros for b in pyros_backends() if b.pyros is not None}}
"""``--solver`` of ``tpm-models verify --method pyros``: PyROS's local and global subsolver, by backend name
(``register_backend(..., pyros=...)``: ``ipopt``, ``gurobi``, ``scip`` here; ``default``: the first installed of
:func:`pyros_subsolvers`, and :func:`free_pyros_subsolvers` if its licence refuses)."""
