"""Ipopt on a fresh machine: the Ipopt + MUMPS library bundled in CasADi's PyPI wheel, driven from a Pyomo model.

Pyomo's ``ipopt`` interface needs an executable and its ``cyipopt`` one the PyNumero ASL library, neither of which
pip provides: :func:`solve_nlp` translates the model into CasADi expressions (exact derivatives by automatic
differentiation; :mod:`tpm_models.solvers.nlp_reading`), Ipopt solves, and :func:`run` loads the point and maps the
multipliers onto the Pyomo constraints. :class:`CasadiIpopt` is the same bridge as a Pyomo solver (``tpm_ipopt``),
for Pyomo code that takes solver objects (PyROS's subsolvers).

Multipliers: CasADi's Lagrangian is :math:`f + \\lambda_g^\\top g + \\lambda_x^\\top x` for the minimised :math:`f`,
so the model's dual (``tpm_models.solvers`` convention) is ``-sense * lam_g``.
"""

from __future__ import annotations

import datetime
import functools
import glob
import importlib.util
import logging
import math
import os
import re
import time
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pyomo.core as pyo
from pyomo.common.collections import ComponentMap
from pyomo.common.config import Bool, ConfigValue
from pyomo.contrib.solver.common.base import Availability, LegacySolverWrapper, SolverBase
from pyomo.contrib.solver.common.config import SolverConfig
from pyomo.contrib.solver.common.factory import SolverFactory as ContribSolverFactory
from pyomo.contrib.solver.common.results import Results, SolutionStatus, TerminationCondition
from pyomo.contrib.solver.common.solution_loader import SolutionLoader
from pyomo.contrib.solver.common.util import (
    IncompatibleModelError,
    NoDualsError,
    NoOptimalSolutionError,
    NoSolutionError,
)
from pyomo.opt import SolverStatus as LegacySolverStatus
from pyomo.opt import TerminationCondition as LegacyTC

from tpm_models.solvers.nlp_reading import RowCache, convexity, objective_repn, row_repn, to_casadi
from tpm_models.solvers.variables import set_values

log = logging.getLogger(__name__)

IPOPT_OPTIONS = {"tol": 1e-12, "constr_viol_tol": 1e-12, "compl_inf_tol": 1e-12, "dual_inf_tol": 1e-12,
                 "bound_relax_factor": 0.0}
"""Ipopt's tolerances and no relaxation of the bounds (``bound_relax_factor = 0`` keeps ``xi >= 0`` exact); why:
``docs/solvers.md``, "Ipopt's settings"."""

COLD_START = 0.01
"""Start value of variables without a value. Not 0: the norms of (23) (``sqrt``, powers) have no derivative at
w = 0, where Ipopt cannot start (``Invalid_Number_Detected``)."""


@dataclass
class NLPSolution:
    """What :func:`solve_nlp` returned (nothing is loaded into the model)."""

    status: str
    """Ipopt's return status (``Solve_Succeeded``, ``Infeasible_Problem_Detected``, ...)."""
    variables: list
    """The free variables handed to Ipopt, in column order."""
    x: np.ndarray
    objective: float
    """The model's objective, in the model's sense, at ``x``."""
    constraints: list
    duals: np.ndarray
    """d objective / d bound of each constraint, model's sense (``tpm_models.solvers`` convention)."""
    reduced_costs: np.ndarray
    """d objective / d bound of each variable, model's sense."""
    iterations: int
    seconds: float
    convex: bool | None
    """True: certified convex QCQP (:func:`convexity`); False: not certified; None: not checked."""
    note: str = ""


def solve_nlp(
    model: Any, time_limit: float | None = None, iteration_limit: int | None = None, options: dict | None = None,
    tee: bool = False, referenced_only: bool = False, check_convexity: bool = False,
    time_option: str = "max_cpu_time", cache: RowCache | None = None, rows_to_bounds: bool = False,
    warm_start: bool = True,
) -> NLPSolution:
    """Solve ``model`` (active objective and constraints) with CasADi's Ipopt without touching its values.
    ``options``: Ipopt options over :data:`IPOPT_OPTIONS`; ``referenced_only``: only the variables of the active
    objective and constraints, else every unfixed variable; ``cache``: repns kept between solves (:class:`RowCache`);
    ``rows_to_bounds``: rows of one variable (``l <= a v <= u``) as bounds of ``v`` (their duals then NaN). Ipopt
    starts from the variables' values (``warm_start``; :data:`COLD_START` where unset) or from :data:`COLD_START`
    everywhere, clipped to the bounds."""
    import casadi as ca

    start_time = time.perf_counter()
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    constraints = list(model.component_data_objects(pyo.Constraint, active=True, descend_into=True))
    obj_repn = objective_repn(objective) if cache is None else cache.objective(objective)
    rows = [row_repn(c) for c in constraints] if cache is None else [cache.row(c) for c in constraints]
    repns = [r[0] for r in rows]
    variables = _nlp_variables(model, obj_repn, repns, referenced_only)
    convex, note = convexity(objective, constraints, obj_repn, repns) if check_convexity else (None, "")
    n, m = len(variables), len(constraints)
    column = {id(v): k for k, v in enumerate(variables)}
    sense = 1.0 if objective.sense == pyo.minimize else -1.0
    lbg = np.array([r[1] for r in rows])
    ubg = np.array([r[2] for r in rows])
    bounds = [v.bounds for v in variables]
    lbx = np.array([-math.inf if lo is None else lo for lo, _ in bounds], dtype=float)
    ubx = np.array([math.inf if hi is None else hi for _, hi in bounds], dtype=float)

    if n == 0:  # every variable fixed: only check the rows
        body = np.array([r.constant for r in repns]) if m else np.zeros(0)
        ok = bool(np.all(body >= lbg - 1e-9) and np.all(body <= ubg + 1e-9))
        return NLPSolution("Solve_Succeeded" if ok else "Infeasible_Problem_Detected", [], np.zeros(0),
                           float(pyo.value(objective.expr)), constraints, np.zeros(m), np.zeros(0), 0,
                           time.perf_counter() - start_time, convex, note)

    kept = _rows_kept(repns, column, lbg, ubg, lbx, ubx) if rows_to_bounds else list(range(m))
    start = np.clip(np.array([COLD_START if v.value is None or not warm_start else float(v.value)
                              for v in variables]), lbx, ubx)

    x = ca.SX.sym("x", n)
    symbols: dict[int, object] = {}
    f = sense * _polynomial([obj_repn], x, variables, column, symbols)
    g = _polynomial([repns[k] for k in kept], x, variables, column, symbols) if kept else ca.SX(0, 1)
    lbg, ubg = lbg[kept], ubg[kept]
    ipopt_options = {"print_level": 5 if tee else 0, "sb": "yes", **IPOPT_OPTIONS}
    if iteration_limit is not None:
        ipopt_options["max_iter"] = int(iteration_limit)
    if time_limit:
        ipopt_options[time_option] = float(time_limit)
    ipopt_options.update(options or {})
    solver = ca.nlpsol("tpm_models_ipopt", "ipopt", {"x": x, "f": f, "g": g},
                       {"print_time": False, "ipopt": ipopt_options})
    sol = solver(x0=start, lbx=lbx, ubx=ubx, lbg=lbg if kept else [], ubg=ubg if kept else [])
    stats = solver.stats()
    duals = np.full(m, np.nan)
    duals[kept] = -sense * np.asarray(sol["lam_g"]).ravel()
    return NLPSolution(
        status=stats["return_status"], variables=variables, x=np.asarray(sol["x"]).ravel(),
        objective=sense * float(sol["f"]), constraints=constraints,
        duals=duals, reduced_costs=-sense * np.asarray(sol["lam_x"]).ravel(),
        iterations=int(stats.get("iter_count", 0)), seconds=time.perf_counter() - start_time, convex=convex,
        note=note,
    )


def _nlp_variables(model: Any, obj_repn: Any, repns: list, referenced_only: bool) -> list:
    """The columns Ipopt is given: the variables of the objective's and the rows' repns (``referenced_only``), else
    every unfixed variable of the model, in model order."""
    if not referenced_only:
        return [v for v in model.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
    seen: dict[int, object] = {}
    for repn in [obj_repn, *repns]:
        for v in (*repn.linear_vars, *(u for pair in repn.quadratic_vars for u in pair), *repn.nonlinear_vars):
            seen.setdefault(id(v), v)
    return list(seen.values())


def _rows_kept(repns: list, column: dict, lbg: np.ndarray, ubg: np.ndarray, lbx: np.ndarray,
               ubx: np.ndarray) -> list[int]:
    """The rows Ipopt is given as rows: a row of one variable ``l <= a v <= u`` whose interval meets ``v``'s bounds
    tightens them (``lbx``, ``ubx``, in place) instead."""
    kept = []
    for k, r in enumerate(repns):
        if len(r.linear_vars) == 1 and not r.quadratic_vars and r.nonlinear_expr is None and r.linear_coefs[0]:
            a, j = r.linear_coefs[0], column[id(r.linear_vars[0])]
            lo, hi = (lbg[k] - r.constant) / a, (ubg[k] - r.constant) / a
            lo, hi = (lo, hi) if a > 0 else (hi, lo)
            if max(lbx[j], lo) <= min(ubx[j], hi):
                lbx[j], ubx[j] = max(lbx[j], lo), min(ubx[j], hi)
                continue
        kept.append(k)
    return kept


def _polynomial(rows: list, x: Any, variables: list, column: dict, symbols: dict) -> Any:
    """The constant, linear and quadratic parts of the repns ``rows`` as one vectorised CasADi column over ``x``, and
    their nonlinear parts translated (:func:`to_casadi`; ``symbols``: the columns' symbols, made once)."""
    import casadi as ca

    n = x.shape[0]
    const = np.array([r.constant for r in rows])
    li, lj, lv, qi, qa, qb, qv = [], [], [], [], [], [], []
    for k, r in enumerate(rows):
        for v, coef in zip(r.linear_vars, r.linear_coefs):
            li.append(k)
            lj.append(column[id(v)])
            lv.append(float(coef))
        for (u, v), coef in zip(r.quadratic_vars, r.quadratic_coefs):
            qi.append(k)
            qa.append(column[id(u)])
            qb.append(column[id(v)])
            qv.append(float(coef))
    out = ca.SX(ca.DM(const))
    if lv:
        out = out + ca.mtimes(ca.DM.triplet(li, lj, ca.DM(lv), len(rows), n), x)
    if qv:
        terms = x[qa] * x[qb]
        out = out + ca.mtimes(ca.DM.triplet(qi, list(range(len(qv))), ca.DM(qv), len(rows), len(qv)), terms)
    for k, r in enumerate(rows):
        if r.nonlinear_expr is not None:
            if not symbols:
                symbols.update({id(v): xk for v, xk in zip(variables, ca.vertsplit(x))})
            extra = ca.SX.zeros(len(rows), 1)
            extra[k] = to_casadi(r.nonlinear_expr, symbols)
            out = out + extra
    return out


def run(model: pyo.ConcreteModel, time_limit: float | None, iteration_limit: int, options: dict | None = None,
        tee: bool = False) -> tuple[str, dict, str]:
    """Solve ``model`` with CasADi's Ipopt (``options``: Ipopt options over :data:`IPOPT_OPTIONS`; ``tee``: its log on
    standard output) and load the point; returns ``(status, duals by constraint, message)`` where ``status`` is
    Ipopt's return status string."""
    sol = solve_nlp(model, time_limit, iteration_limit, options, tee=tee)
    set_values(sol.variables, sol.x)
    duals = {c: float(d) for c, d in zip(sol.constraints, sol.duals)}
    return sol.status, duals, sol.status


# --------------------------------------------------------------------------- Pyomo plugin


@functools.cache
def ipopt_version() -> tuple[int, int, int, int]:
    """Version of the Ipopt library bundled in the casadi wheel (from its file name; read once)."""
    import casadi as ca

    here = os.path.dirname(ca.__file__)
    for pattern in ("libipopt.so.*.*.*", "libipopt.*.*.*.dylib"):
        for path in glob.glob(os.path.join(here, pattern)):
            numbers = re.findall(r"\d+", os.path.basename(path))
            if len(numbers) >= 3:
                return (int(numbers[0]), int(numbers[1]), int(numbers[2]), 0)
    return (0, 0, 0, 0)


IPOPT_TERMINATION = {
    "Maximum_Iterations_Exceeded": TerminationCondition.iterationLimit,
    "Maximum_CpuTime_Exceeded": TerminationCondition.maxTimeLimit,
    "Maximum_WallTime_Exceeded": TerminationCondition.maxTimeLimit,
    "User_Requested_Stop": TerminationCondition.interrupted,
    "Search_Direction_Becomes_Too_Small": TerminationCondition.minStepLength,
    "Invalid_Problem_Definition": TerminationCondition.error,
    "Invalid_Option": TerminationCondition.error,
    "Invalid_Number_Detected": TerminationCondition.error,
    "Not_Enough_Degrees_Of_Freedom": TerminationCondition.error,
    "Restoration_Failed": TerminationCondition.error,
    "Error_In_Step_Computation": TerminationCondition.error,
}
"""Why Ipopt stopped, for its statuses other than success and infeasibility (the rest, among them
``Solved_To_Acceptable_Level`` and ``Diverging_Iterates``: ``unknown``, never a claim of optimality or
unboundedness Ipopt cannot prove)."""

PLUGIN_NAME = "tpm_ipopt"


def termination(status: str, convex: bool | None) -> tuple[TerminationCondition, SolutionStatus]:
    """Pyomo's (why it stopped, what the point is) for Ipopt's return ``status``: a KKT point
    (``Solve_Succeeded``) is ``optimal`` only when ``convex`` (certified convex QCQP: a KKT point is a global
    minimum), else ``feasible``; an infeasibility is ``provenInfeasible`` only when certified convex, else
    ``locallyInfeasible``; every other stop leaves the point ``unknown``."""
    if status == "Solve_Succeeded":
        return (TerminationCondition.convergenceCriteriaSatisfied,
                SolutionStatus.optimal if convex else SolutionStatus.feasible)
    if status == "Infeasible_Problem_Detected":
        return (TerminationCondition.provenInfeasible if convex else TerminationCondition.locallyInfeasible,
                SolutionStatus.infeasible)
    return IPOPT_TERMINATION.get(status, TerminationCondition.unknown), SolutionStatus.unknown


class CasadiIpoptConfig(SolverConfig):
    """Pyomo's solver options (``tee``, ``load_solutions``, ``raise_exception_on_nonoptimal_result``,
    ``time_limit`` as Ipopt's ``max_wall_time``, ``solver_options`` as Ipopt options over
    :data:`IPOPT_OPTIONS`) and two of this plugin."""

    def __init__(self, description=None, doc=None, implicit=False, implicit_domain=None, visibility=0):
        super().__init__(description=description, doc=doc, implicit=implicit, implicit_domain=implicit_domain,
                         visibility=visibility)
        self.certify_convex: bool = self.declare("certify_convex", ConfigValue(
            domain=Bool, default=True,
            description="Check each solved model for a convex QCQP (convexity); off: never optimal, "
                        "only feasible."))
        self.warmstart: bool = self.declare("warmstart", ConfigValue(
            domain=Bool, default=True,
            description="Start from the variables' values (COLD_START where unset); off: COLD_START "
                        "everywhere."))


class NLPSolutionLoader(SolutionLoader):
    """The point, duals and reduced costs of one :class:`NLPSolution`, for Pyomo's ``Results``. Only a
    converged point (``optimal`` or ``feasible``) is loadable; duals of rows handed to Ipopt as bounds do
    not exist (``NoDualsError``)."""

    def __init__(self, model: Any, sol: NLPSolution, converged: bool):
        self._pyomo_model = model  # SolutionLoader.load_import_suffixes reads this name
        self.sol = sol
        self.converged = converged

    def get_number_of_solutions(self) -> int:
        return int(self.converged)

    def _check(self, what: str) -> None:
        if not self.converged:
            raise NoSolutionError(f"{PLUGIN_NAME}: no {what}: Ipopt ended {self.sol.status}")

    def _by_variable(self, what: str, numbers: np.ndarray, vars_to_load: Any) -> ComponentMap:
        self._check(what)
        values = ComponentMap(zip(self.sol.variables, map(float, numbers)))
        return values if vars_to_load is None else ComponentMap((v, values[v]) for v in vars_to_load)

    def get_vars(self, vars_to_load: Any = None) -> ComponentMap:
        return self._by_variable("point", self.sol.x, vars_to_load)

    def get_duals(self, cons_to_load: Any = None) -> dict:
        self._check("duals")
        duals = dict(zip(self.sol.constraints, map(float, self.sol.duals)))
        wanted = duals if cons_to_load is None else {c: duals[c] for c in cons_to_load}
        if any(math.isnan(d) for d in wanted.values()):
            raise NoDualsError(f"{PLUGIN_NAME}: rows of one variable went to Ipopt as bounds; declare an "
                               "import Suffix 'dual' on the model before solving to keep them rows")
        return wanted

    def get_reduced_costs(self, vars_to_load: Any = None) -> ComponentMap:
        return self._by_variable("reduced costs", self.sol.reduced_costs, vars_to_load)

    def load_import_suffixes(self) -> None:
        """Pyomo's, except that without a converged point the suffixes are left as they were."""
        if self.converged:
            super().load_import_suffixes()


class CasadiIpopt(SolverBase):
    """:func:`solve_nlp` as a Pyomo solver (``pyomo.contrib.solver`` interface, registered as ``tpm_ipopt`` there
    and, by :class:`LegacyCasadiIpopt`, in ``pyo.SolverFactory``), for Pyomo code that wants an Ipopt solver object
    without an ``ipopt`` executable: PyROS's subsolvers (:func:`tpm_models.checks.semi_infinite.solve_22_pyros`).

    A ``Solve_Succeeded`` point (a KKT point) is ``SolutionStatus.optimal`` (``objective_bound`` the objective) only
    when :func:`convexity` certifies the model a convex QCQP, else ``feasible`` (no bound; Pyomo's
    ``raise_exception_on_nonoptimal_result`` then raises ``NoOptimalSolutionError``). ``load_solutions`` loads a
    converged point only (else a warning). Integer variables raise ``IncompatibleModelError``. Ipopt starts from the
    current values (``warmstart``), gets the variables of the active objective and rows only, and, without a
    ``dual`` or ``rc`` import suffix, rows of one variable as bounds; rows stay translated between solves
    (:class:`RowCache`). PyROS cannot pass it its remaining time: set ``max_wall_time``.
    """

    CONFIG = CasadiIpoptConfig()

    def __init__(self, **kwds):
        super().__init__(**kwds)
        self.solves = 0
        """Number of :meth:`solve` calls so far."""
        self.last_results: Results | None = None
        """The :class:`pyomo.contrib.solver.common.results.Results` of the last solve."""
        self._cache = RowCache()

    def available(self) -> Availability:
        return Availability.FullLicense if importlib.util.find_spec("casadi") else Availability.NotFound

    def version(self) -> tuple[int, int, int, int]:
        return ipopt_version()

    def solve(self, model: Any, **kwds: Any) -> Results:
        config = self.config(value=kwds, preserve_implicit=True)
        started = datetime.datetime.now(datetime.UTC)
        integer = [v.name for v in model.component_data_objects(pyo.Var, descend_into=True)
                   if not v.fixed and not v.is_continuous()]
        if integer:
            raise IncompatibleModelError(f"{PLUGIN_NAME}: Ipopt takes no integer variables ({integer[:3]}...)")
        ipopt_options = dict(config.solver_options.value())
        if config.time_limit:
            ipopt_options["max_wall_time"] = float(config.time_limit)
        want_suffix = any(isinstance(s, pyo.Suffix) and s.import_enabled() and s.local_name in ("dual", "rc")
                          for s in model.component_objects(pyo.Suffix, active=True, descend_into=True))
        sol = solve_nlp(model, options=ipopt_options, tee=bool(config.tee), referenced_only=True,
                        check_convexity=config.certify_convex, cache=self._cache, rows_to_bounds=not want_suffix,
                        warm_start=config.warmstart)
        self.solves += 1
        tc, status = termination(sol.status, sol.convex)
        converged = status in (SolutionStatus.optimal, SolutionStatus.feasible)
        certified = {True: "certified convex QCQP", False: f"not certified convex: {sol.note}",
                     None: "convexity not checked"}[sol.convex]
        results = Results()
        results.solver_name = PLUGIN_NAME
        results.solver_version = self.version()
        results.solver_config = config
        results.termination_condition = tc
        results.solution_status = status
        results.solution_loader = NLPSolutionLoader(model, sol, converged)
        if converged:
            minimize = next(model.component_data_objects(pyo.Objective, active=True)).sense == pyo.minimize
            results.incumbent_objective = sol.objective
            results.objective_bound = sol.objective if status == SolutionStatus.optimal else (
                -math.inf if minimize else math.inf)
        results.extra_info.ipopt_status = sol.status
        results.extra_info.iteration_count = sol.iterations
        results.extra_info.certified_convex = sol.convex
        results.extra_info.message = f"Ipopt {sol.status} after {sol.iterations} iterations; {certified}"
        results.timing_info.start_timestamp = started
        results.timing_info.wall_time = sol.seconds
        self.last_results = results
        if config.raise_exception_on_nonoptimal_result and status != SolutionStatus.optimal:
            raise NoOptimalSolutionError(f"{PLUGIN_NAME}: {results.extra_info.message}")
        if config.load_solutions:
            if converged:
                results.solution_loader.load_vars()
            else:
                log.warning("%s: no solution loaded into %s (%s)", PLUGIN_NAME, model.name,
                            results.extra_info.message)
        return results


LEGACY_TERMINATION = {
    (TerminationCondition.convergenceCriteriaSatisfied, SolutionStatus.optimal): LegacyTC.globallyOptimal,
    (TerminationCondition.convergenceCriteriaSatisfied, SolutionStatus.feasible): LegacyTC.locallyOptimal,
    (TerminationCondition.locallyInfeasible, SolutionStatus.infeasible): LegacyTC.other,
}
"""Where this plugin's legacy termination condition is sharper than Pyomo's ``LegacySolverWrapper`` mapping (every
converged point ``optimal``, every infeasibility ``infeasible``): PyROS takes ``optimal`` from a global solver as a
proof, so an uncertified KKT point says ``locallyOptimal`` and an uncertified infeasibility ``other``."""


class LegacyCasadiIpopt(LegacySolverWrapper, CasadiIpopt):
    """:class:`CasadiIpopt` in ``pyo.SolverFactory("tpm_ipopt")`` (Pyomo's legacy interface: ``options``,
    ``solve(model, tee, load_solutions, timelimit, options)`` returning a ``SolverResults`` that
    ``model.solutions.load_from`` takes), with the termination conditions of :data:`LEGACY_TERMINATION` and
    Ipopt's status, iterations and certificate in ``results.solver.message``."""

    def solve(self, model, *args, **kwds):
        legacy = super().solve(model, *args, **kwds)
        results = cast(Results, self.last_results)  # set by the solve just above
        sharper = LEGACY_TERMINATION.get((results.termination_condition, results.solution_status))
        if sharper is not None:
            legacy.solver.termination_condition = sharper
            legacy.solver.status = LegacySolverStatus.ok if sharper != LegacyTC.other else LegacySolverStatus.warning
        legacy.solver.message = results.extra_info.message
        return legacy

    def warm_start_capable(self) -> bool:
        return True


ContribSolverFactory.register(
    PLUGIN_NAME, doc="Ipopt bundled with casadi, exact derivatives (tpm_models.solvers.ipopt)",
)(CasadiIpopt, LegacyCasadiIpopt)
