"""Ipopt on a fresh machine: the Ipopt + MUMPS library bundled in CasADi's PyPI wheel,
driven from a Pyomo model.

Pyomo's own ``ipopt`` interface needs an ``ipopt`` executable and its ``cyipopt``
interface needs the PyNumero ASL library, neither of which pip provides. So
:func:`to_casadi` translates the model's objective and constraints into CasADi
expressions (exact first and second derivatives by CasADi's automatic
differentiation), Ipopt solves, and :func:`run` loads the solution and maps the
multipliers back onto the Pyomo constraints. When an ``ipopt`` executable is on the
``PATH`` (idaes-pse or conda installs), :mod:`tpm_models.solvers` uses it through
Pyomo instead.

:class:`CasadiIpopt` makes the same bridge a Pyomo solver, ``SolverFactory("tpm_ipopt")``
(registered on import of this module), for Pyomo code that takes solver objects: PyROS's
subsolvers (:func:`tpm_models.checks.semi_infinite.solve_22_pyros`).

Multipliers: CasADi's Lagrangian is :math:`f + \\lambda_g^\\top g + \\lambda_x^\\top x` for the
minimised :math:`f`, so :math:`\\partial f^\\star/\\partial(\\text{bound of } g) = -\\lambda_g`; the
model's dual (``tpm_models.solvers`` convention) is ``-sense * lam_g``.
"""

from __future__ import annotations

import glob
import importlib.util
import logging
import math
import os
import re
import time
from dataclasses import dataclass

import numpy as np
import pyomo.core as pyo
from pyomo.common.collections import Bunch
from pyomo.common.errors import ApplicationError
from pyomo.opt import SolverFactory

from tpm_models.solvers.nlp_reading import (  # noqa: F401  to_casadi, convexity: importable from here too
    CONVEXITY_MAX_DIM,
    CONVEXITY_TOL,
    NumericRepn,
    RowCache,
    UnsupportedExpression,
    convexity,
    objective_repn,
    row_repn,
    to_casadi,
)

log = logging.getLogger(__name__)

IPOPT_OPTIONS = {
    "tol": 1e-12,
    "constr_viol_tol": 1e-12,
    "compl_inf_tol": 1e-12,
    "dual_inf_tol": 1e-12,
    "bound_relax_factor": 0.0,
}
"""Ipopt's tolerances (its defaults: 1e-8, and 1e-4 on the constraint violation) and no relaxation of the bounds
(``bound_relax_factor = 0`` keeps ``xi >= 0`` exact): at these the paper's models on Iris are within 5e-8 of the
optimum relative to their terms (the measurements: ``docs/solvers.md``, "Ipopt's settings")."""

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
    model, time_limit: float | None = None, iteration_limit: int | None = None, options: dict | None = None,
    tee: bool = False, referenced_only: bool = False, check_convexity: bool = False,
    time_option: str = "max_cpu_time", cache: RowCache | None = None, rows_to_bounds: bool = False,
    warm_start: bool = True,
) -> NLPSolution:
    """Solve ``model`` (active objective and constraints) with CasADi's Ipopt without touching
    its values. ``options`` are Ipopt options on top of :data:`IPOPT_OPTIONS`;
    ``referenced_only`` hands Ipopt only the variables of the active objective and
    constraints (the others are left alone), else every unfixed variable of the model.
    ``cache`` reuses repns between solves (:class:`RowCache`). ``rows_to_bounds`` hands rows
    of one variable (``l <= a v <= u``) to Ipopt as bounds of ``v`` (their duals are then
    NaN: only when no dual is wanted). Ipopt starts from the variables' values
    (``warm_start``; :data:`COLD_START` where unset) or from :data:`COLD_START` everywhere,
    clipped to the bounds."""
    import casadi as ca

    start_time = time.perf_counter()
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    constraints = list(model.component_data_objects(pyo.Constraint, active=True, descend_into=True))
    obj_repn = objective_repn(objective) if cache is None else cache.objective(objective)
    rows = [row_repn(c) for c in constraints] if cache is None else [cache.row(c) for c in constraints]
    repns = [r[0] for r in rows]
    if referenced_only:
        seen: dict[int, object] = {}
        for repn in [obj_repn, *repns]:
            for v in (*repn.linear_vars, *(u for pair in repn.quadratic_vars for u in pair), *repn.nonlinear_vars):
                seen.setdefault(id(v), v)
        variables = list(seen.values())
    else:
        variables = [v for v in model.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
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

    kept = list(range(m))
    if rows_to_bounds:
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
    start = np.clip(np.array([COLD_START if v.value is None or not warm_start else float(v.value)
                              for v in variables]), lbx, ubx)

    x = ca.SX.sym("x", n)
    symbols: dict[int, object] = {}

    def polynomial(rows):
        """Constant + linear + quadratic parts of the repns as one vectorised CasADi column."""
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

    f = sense * polynomial([obj_repn])
    g = polynomial([repns[k] for k in kept]) if kept else ca.SX(0, 1)
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


def run(model: pyo.ConcreteModel, time_limit: float | None, iteration_limit: int, options: dict | None = None):
    """Solve ``model`` with CasADi's Ipopt (``options``: Ipopt options over :data:`IPOPT_OPTIONS`) and load the
    point; returns ``(status, duals by constraint, message)`` where ``status`` is Ipopt's return status string."""
    sol = solve_nlp(model, time_limit, iteration_limit, options)
    for v, value in zip(sol.variables, sol.x):
        v.set_value(float(value), skip_validation=True)
    duals = {c: float(d) for c, d in zip(sol.constraints, sol.duals)}
    return sol.status, duals, sol.status


# --------------------------------------------------------------------------- Pyomo plugin


def ipopt_version() -> tuple[int, int, int, int]:
    """Version of the Ipopt library bundled in the casadi wheel (from its file name)."""
    import casadi as ca

    for path in glob.glob(os.path.join(os.path.dirname(ca.__file__), "libipopt.so.*.*.*")) + glob.glob(
        os.path.join(os.path.dirname(ca.__file__), "libipopt.*.*.*.dylib")
    ):
        numbers = re.findall(r"\d+", os.path.basename(path))
        if len(numbers) >= 3:
            return (int(numbers[0]), int(numbers[1]), int(numbers[2]), 0)
    return (0, 0, 0, 0)


_PYOMO_STATUS = {
    # Ipopt status: (solver status, termination condition, solution status)
    "Maximum_Iterations_Exceeded": ("aborted", "maxIterations", "stoppedByLimit"),
    "Maximum_CpuTime_Exceeded": ("aborted", "maxTimeLimit", "stoppedByLimit"),
    "Maximum_WallTime_Exceeded": ("aborted", "maxTimeLimit", "stoppedByLimit"),
    "Diverging_Iterates": ("warning", "unbounded", "unbounded"),
    "User_Requested_Stop": ("aborted", "userInterrupt", "other"),
    "Invalid_Problem_Definition": ("error", "invalidProblem", "error"),
    "Invalid_Option": ("error", "error", "error"),
    "Invalid_Number_Detected": ("error", "solverFailure", "error"),
    "Not_Enough_Degrees_Of_Freedom": ("error", "invalidProblem", "error"),
}
"""How Ipopt statuses other than success and infeasibility map to Pyomo's (the rest:
``warning``/``other``). ``Solved_To_Acceptable_Level`` is ``other``, never optimal: it
relaxes every tolerance."""

PLUGIN_NAME = "tpm_ipopt"
_IGNORED_KWDS = {"symbolic_solver_labels", "keepfiles", "report_timing", "logfile", "solnfile", "solver_io",
                 "suffixes", "type", "executable", "validate"}


@SolverFactory.register(PLUGIN_NAME, doc="Ipopt bundled with casadi, exact derivatives (tpm_models.solvers.ipopt)")
class CasadiIpopt:
    """A Pyomo (``SolverFactory``) solver around :func:`solve_nlp`, for Pyomo code that wants
    an Ipopt solver object (PyROS's subsolvers) on a machine without an ``ipopt`` executable::

        opt = SolverFactory("tpm_ipopt")
        opt.options["max_wall_time"] = 60   # any Ipopt option
        results = opt.solve(model, tee=False, load_solutions=True)

    ``solve`` returns a :class:`pyomo.opt.SolverResults` whose solution carries the primal
    point (and duals / reduced costs if the model has an import ``dual`` / ``rc`` suffix),
    and loads it if ``load_solutions`` (only when optimal; otherwise the model is left as it
    was and a warning is logged). Ipopt starts from the model's current values
    (``warmstart=False``, to the constructor or to ``solve``: from :data:`COLD_START`). Only
    the variables of the active objective and rows are handed to Ipopt; without a ``dual``
    or ``rc`` suffix, rows of one variable become bounds; rows are kept translated between
    solves of the same model (:class:`RowCache`). The Ipopt options are
    :data:`IPOPT_OPTIONS` (tolerances 1e-12) updated by ``options``; PyROS cannot pass this
    plugin its remaining time (it only knows the options of the executables it ships for),
    so set ``max_wall_time``. ``symbolic_solver_labels``, ``keepfiles`` and such keywords
    are accepted and ignored.

    Ipopt finds KKT points, so ``Solve_Succeeded`` is reported ``locallyOptimal``, except when
    :func:`convexity` certifies the solved model a convex QCQP from its exact quadratic
    forms: then it is ``globallyOptimal`` (a KKT point of a convex problem is a global
    minimum) and ``Infeasible_Problem_Detected`` is ``infeasible`` (uncertified:
    ``other``). ``certify_convex=False`` turns the check off (always ``locallyOptimal``).
    """

    name = PLUGIN_NAME

    def __init__(self, certify_convex: bool = True, warmstart: bool = True, options: dict | None = None, **kwds):
        unknown = set(kwds) - _IGNORED_KWDS - {"solver"}
        if unknown:
            raise TypeError(f"{PLUGIN_NAME}: unknown keyword(s) {sorted(unknown)}")
        self.options = Bunch()
        self.options.update(options or {})
        self.certify_convex = certify_convex
        self.warmstart = warmstart
        self.solves = 0
        """Number of :meth:`solve` calls so far."""
        self._last = None
        self._cache = RowCache()

    def available(self, exception_flag: bool = True) -> bool:
        ok = importlib.util.find_spec("casadi") is not None
        if not ok and exception_flag:
            raise ApplicationError(f"{PLUGIN_NAME} needs casadi (pip install casadi)")
        return ok

    def license_is_valid(self) -> bool:
        return True

    def version(self) -> tuple[int, int, int, int]:
        return ipopt_version()

    def warm_start_capable(self) -> bool:
        return True

    def set_options(self, options) -> None:
        """``"key=value ..."`` strings or a dict, like Pyomo's solvers."""
        if isinstance(options, str):
            for item in options.split():
                key, _, value = item.partition("=")
                self.options[key] = value
        else:
            self.options.update(options)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def solve(self, model, tee: bool = False, load_solutions: bool = True, options: dict | None = None,
              timelimit: float | None = None, warmstart: bool | None = None, **kwds):
        from pyomo.core.base.label import NumericLabeler
        from pyomo.core.expr.symbol_map import SymbolMap
        from pyomo.opt import ProblemSense, Solution, SolutionStatus, SolverResults, SolverStatus
        from pyomo.opt import TerminationCondition as TC

        unknown = set(kwds) - _IGNORED_KWDS
        if unknown:
            raise TypeError(f"{PLUGIN_NAME}.solve: unknown keyword(s) {sorted(unknown)}")
        ipopt_options = {**self.options, **(options or {})}
        if timelimit:
            ipopt_options["max_wall_time"] = float(timelimit)
        results = SolverResults()
        results.solver.name = f"{PLUGIN_NAME} (Ipopt {'.'.join(map(str, self.version()[:3]))} via casadi)"
        integer = [v.name for v in model.component_data_objects(pyo.Var, descend_into=True)
                   if not v.fixed and not v.is_continuous()]
        if integer:
            results.solver.status = SolverStatus.error
            results.solver.termination_condition = TC.invalidProblem
            results.solver.message = f"Ipopt takes no integer variables ({integer[:3]}...)"
            return results
        want_dual, want_rc = _import_suffix(model, "dual"), _import_suffix(model, "rc")
        sol = solve_nlp(model, options=ipopt_options, tee=tee, referenced_only=True,
                        check_convexity=self.certify_convex, cache=self._cache,
                        rows_to_bounds=not (want_dual or want_rc),
                        warm_start=self.warmstart if warmstart is None else warmstart)
        self.solves += 1
        self._last = sol
        objective = next(model.component_data_objects(pyo.Objective, active=True))
        if sol.status == "Solve_Succeeded":
            status, tc, solution_status = (("ok", "globallyOptimal", "globallyOptimal") if sol.convex
                                           else ("ok", "locallyOptimal", "locallyOptimal"))
        elif sol.status == "Infeasible_Problem_Detected":
            status, tc, solution_status = ("ok", "infeasible", "infeasible") if sol.convex \
                else ("warning", "other", "other")
        else:
            status, tc, solution_status = _PYOMO_STATUS.get(sol.status, ("warning", "other", "other"))
        certified = {True: "certified convex QCQP", False: f"not certified convex: {sol.note}",
                     None: "convexity not checked"}[sol.convex]
        results.solver.status = getattr(SolverStatus, status)
        results.solver.termination_condition = getattr(TC, tc)
        results.solver.message = f"Ipopt {sol.status} after {sol.iterations} iterations; {certified}"
        results.solver.wallclock_time = sol.seconds
        results.problem.name = model.name
        results.problem.number_of_variables = len(sol.variables)
        results.problem.number_of_constraints = len(sol.constraints)
        results.problem.number_of_objectives = 1
        minimize = objective.sense == pyo.minimize
        results.problem.sense = ProblemSense.minimize if minimize else ProblemSense.maximize
        if tc in ("globallyOptimal", "locallyOptimal"):
            if minimize:
                results.problem.upper_bound = sol.objective
            else:
                results.problem.lower_bound = sol.objective
        if tc == "globallyOptimal":
            results.problem.lower_bound = results.problem.upper_bound = sol.objective

        symbol_map = SymbolMap()
        labeler = NumericLabeler("x")
        symbol_map.default_labeler = labeler
        soln = Solution()
        soln.status = getattr(SolutionStatus, solution_status)
        for v, value, rc in zip(sol.variables, sol.x, sol.reduced_costs):
            entry = {"Value": float(value), "Rc": float(rc)} if want_rc else {"Value": float(value)}
            soln.variable[symbol_map.getSymbol(v, labeler)] = entry
        soln.objective[symbol_map.getSymbol(objective, labeler)] = {"Value": sol.objective}
        if want_dual:
            for con, dual in zip(sol.constraints, sol.duals):
                soln.constraint[symbol_map.getSymbol(con, labeler)] = {"Dual": float(dual)}
        results.solution.insert(soln)
        results._smap_id = id(symbol_map)
        results._smap = symbol_map

        if load_solutions:
            if tc in ("globallyOptimal", "locallyOptimal"):
                if hasattr(model, "solutions"):
                    model.solutions.load_from(results)
                    results._smap_id = None
                    results.solution.clear()
                else:  # a sub-block: set the values directly
                    for v, value in zip(sol.variables, sol.x):
                        v.set_value(float(value), skip_validation=True)
            else:
                log.warning("%s: no solution loaded into %s (%s)", PLUGIN_NAME, model.name, results.solver.message)
        return results


def _import_suffix(model, name: str) -> bool:
    suffix = model.component(name)
    return isinstance(suffix, pyo.Suffix) and suffix.import_enabled()
