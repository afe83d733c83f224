"""Verify a robust counterpart against its semi-infinite model: Theorem 1, for any model.

Theorem 1 says that the semi-infinite model (22) and the finite model (23) have the same
optimum. This module checks such a claim numerically for a model it is *told about*, not one
it builds: the user gives

* a **nominal** Pyomo model (one active objective, minimised);
* its **uncertain data**, as a list of :class:`UncertainRow` and :class:`UncertainTerm`. Both
  say "this part of the model is affine in a data vector :math:`d` that is perturbed to
  :math:`d+\\delta`, :math:`\\delta\\in\\mathcal U`", and give the coefficient vector
  :math:`a(x)` of :math:`\\delta` (Pyomo variables or linear expressions of them). For the paper's
  rows :math:`(x^i+\\delta^i)^\\top w + \\theta + \\xi_i \\ge 0`, :math:`d = x^i` and :math:`a(x) = w`:

  - an :class:`UncertainRow` is an inequality row whose body becomes
    :math:`\\mathrm{body}(x) + a(x)^\\top\\delta` and must hold for every :math:`\\delta\\in\\mathcal U`
    (the rows of (22));
  - an :class:`UncertainTerm` adds :math:`\\max_{\\delta\\in\\mathcal U} \\omega\\,a(x)^\\top\\delta` to the
    objective (the inner maxima of (22): :math:`\\omega = \\nu_c/m_{-c}`);
* an **uncertainty set** per row or term: :class:`NormBall` (the set (21),
  :math:`\\|\\delta\\|_p\\le\\varepsilon_i`, any :math:`p\\ge1`), :class:`Box`, :class:`Ellipsoid`,
  :class:`Polyhedron`, :class:`Budget`;
* the **counterpart**: another Pyomo model, and the map of the first-stage variables between
  the two (by component name: ``{"w": "w", "theta": "theta", "xi": "xi"}``; by default every
  variable of the nominal model, by its own name).

:func:`verify` then solves the semi-infinite model itself, by one of two independent routes,

(a) **cutting planes** (:func:`solve_cutting_planes`): masters are the nominal model over
    finite scenario sets, solved by :func:`tpm_models.solvers.solve`; the separation is exact,
    by the support function of the set. For a norm ball it is the closed form (25)
    generalised: :math:`\\max_{\\|\\delta\\|_p\\le\\varepsilon} g^\\top\\delta = \\varepsilon\\|g\\|_{p'}`,
    :math:`1/p+1/p'=1`, attained at :func:`tpm_models.models.norms.worst_case_delta`; the worst
    :math:`\\delta` of a row :math:`a^\\top(x+\\delta)\\ge b` is the one that gives
    :math:`a^\\top x - \\varepsilon\\|a\\|_{p'}`;
(b) **PyROS** (:func:`solve_pyros`, ``pyomo.contrib.pyros``), with the matching PyROS set (box,
    axis-aligned ellipsoid for :math:`p=2`, the cross-polytope as a budget set for :math:`p=1`,
    ellipsoid, polyhedron, cardinality set); its verdict must be ``robust_optimal``,

and compares: both optimal values and their relative gap, the distance between the first-stage
solutions, the worst violation of the counterpart's solution over the uncertainty set with the
violating :math:`\\delta`, and the semi-infinite objective at the counterpart's solution against
the counterpart's own objective value. The verdict (:attr:`Verification.verified`) holds the
numbers to the named tolerances below. When the counterpart is too conservative (it excludes
robust points), no :math:`\\delta` violates its solution; the witness is then the semi-infinite
optimum, handed to the counterpart with the first-stage variables fixed
(:attr:`Verification.witness`).

Objective residuals are :math:`|a-b|/\\max(|a|,|b|,S)` (:func:`tpm_models.solvers.compare.rel_gap`), :math:`S`
the sum of the absolute values of the objective's terms (:func:`tpm_models.solvers.compare.objective_scale`).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.visitor import identify_variables, replace_expressions

from tpm_models.checks.deterministic import ABS_TOL, objective_gap
from tpm_models.models.norms import check_p
from tpm_models.models.registry import (
    ModelInfo,
    accepted,
    build,
    describe,
    extra_parameters,
    model_info,
    verifiable_keys,
)

# the uncertainty sets and declarations live in the models layer (tpm_models.models.uncertainty); imported from
# here too, so every earlier import of them still works
from tpm_models.models.uncertainty import Box as Box
from tpm_models.models.uncertainty import Budget as Budget
from tpm_models.models.uncertainty import Ellipsoid as Ellipsoid
from tpm_models.models.uncertainty import NormBall, Uncertain, UncertainRow, UncertainTerm, UncertaintySet
from tpm_models.models.uncertainty import Polyhedron as Polyhedron
from tpm_models.solvers import NoOptimalSolutionError, SolveResult, SolverUnavailableError, Termination, solve
from tpm_models.solvers import ipopt as casadi_ipopt
from tpm_models.solvers.compare import objective_scale, rel_gap

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- tolerances

CUT_TOL = 1e-11
"""Largest worst-case violation the cutting planes accept (absolute; the paper's data are scaled to
[0, 1]). At 1e-9, w of (22) for p=3 on Iris was 1e-6 (absolute) from Ipopt's and SCIP's (26); at 1e-11
it is 1e-7, for 10 rounds instead of 7 (the masters are PIQP QPs at 1e-12)."""

MAX_ROUNDS = 500
"""Most cutting-plane rounds before :func:`solve_cutting_planes` gives up."""

MASTER_FALLBACK = ("ipopt",)
"""Solvers :func:`solve_cutting_planes` tries, in order, on a master its ``"default"`` solver fails. Measured:
the robust binary (2) on Iris (class 2, p = 2, radii 0, 0.02 and 0.04 by point) met a round-4 master PIQP
stopped at its iteration limit (DAQP ran over 60 s); Ipopt and Gurobi solved it, optima 2e-11 apart."""

OBJECTIVE_TOL = 1e-6
"""Largest relative gap (:func:`rel_gap`) between the counterpart's optimum and the semi-infinite
one, and between the counterpart's objective and the semi-infinite objective at the counterpart's
point. The solvers are asked for 1e-9 (:data:`tpm_models.solvers.OPTIMALITY_TOL`); PyROS stops at
:data:`PYROS_FEASIBILITY_TOL`. Measured on the paper's counterparts and the robust binary (2), (3)
(docs/verify.md, 108 instances): at most 4.4e-9 (cutting planes; (26) at p = 3 by Ipopt) and 1.5e-8
(PyROS, p = 1). A wrong counterpart of the paper's shape moves the optimum by
:math:`\\nu\\varepsilon\\|w\\|` or more, 1e-3 relative at :math:`\\varepsilon = 0.02`."""

VIOLATION_TOL = 1e-6
"""Largest worst-case violation (absolute) of a row at the counterpart's solution: the feasibility
tolerance every solver's point is checked to (:data:`tpm_models.solvers.FEASIBILITY_TOL`). A true
counterpart solved by Ipopt or PIQP leaves 1e-9 or less; a radius halved leaves
:math:`\\varepsilon\\|w\\|_{p'}/2`, about 1e-3 on the paper's data."""

SOLUTION_TOL = 1e-4
"""A tolerance for the distance :math:`\\|x_a-x_b\\|_2/\\max(\\|x_b\\|_2,1)` between first-stage solutions,
for variables whose optimum is unique (``solution_tol``, ``compare`` of :func:`verify`). Only the strongly
convex part of an objective fixes its solution, to :math:`\\sqrt{\\text{gap}}`: an optimum within 1e-9
leaves it within ~3e-5; on w of the paper's models the counterparts were at most 9.2e-6 from the
cutting planes and 1.5e-5 from PyROS (at :data:`PYROS_FEASIBILITY_TOL`)."""

PYROS_FEASIBILITY_TOL = 1e-8
"""PyROS's ``robust_feasibility_tolerance`` (default 1e-4): a separation violation below it counts as
robust. At 1e-4 PyROS stopped 1e-7 to 1e-5 above the optimum of (23) on a 24-point Iris subset; see
docs/robust.md for the measured gaps."""

PYROS_SUBSOLVERS = {"local": ("gurobi_direct", "scip"), "global": ("gurobi_direct", "scip")}
"""PyROS subsolvers tried in order when none is named. ``"tpm_ipopt"`` (:class:`tpm_models.solvers.ipopt.CasadiIpopt`,
always installed) is accepted by name; it serves as a *global* solver only on models it certifies
convex (:func:`tpm_models.checks.semi_infinite.solve_22_pyros` explains when that is sound)."""

SCIP_PYROS_OPTIONS = {"numerics/feastol": 1e-7, "numerics/dualfeastol": 1e-7, "numerics/epsilon": 1e-11}
"""SCIP's tolerances as PyROS's subsolver: the tightest that cannot hang. SCIP re-solves an LP that failed with
1e-3 times its tolerances, and SoPlex (as the pyscipopt wheel builds it, without GMP) refuses tolerances below
1e-10 with a line on stderr (``Cannot set feasibility tolerance to small value 1e-12 without GMP``), written from
C++ while ``pyscipopt`` holds the GIL. Pyomo's ``scip_direct`` captures the process's stderr in a pipe drained by
a Python thread, which then never runs: after 64 KB of such lines the write blocks for ever. Measured (Iris,
class 0, (28), 5 points per class, p = 2): at ``numerics/feastol`` 1e-9 the process blocked in
``soplex::SoPlexBase::setRealParam`` writing to the pipe; at 1e-7 the fallback is 1e-10, which SoPlex takes
silently. SCIP's default is 1e-6; PyROS's :data:`PYROS_FEASIBILITY_TOL` is 1e-8, and the verifier evaluates
PyROS's point exactly (:func:`evaluate_point`) before any verdict."""

SCIP_PYROS_FEASIBILITY_TOL = 1e-6
"""PyROS's ``robust_feasibility_tolerance`` when a subsolver is SCIP (:data:`SCIP_PYROS_OPTIONS`): ten times SCIP's
feasibility tolerance. At :data:`PYROS_FEASIBILITY_TOL` (1e-8), below SCIP's 1e-7, PyROS cycles: measured (Iris,
class 0, (28), p = 2, 2 points per class) 97 iterations in 113 s at the same master objective, each separation
finding the same violation 4.9e-8 that the master, solved to 1e-7, cannot remove."""

SOPLEX_MIN_TOL = 1e-10
"""The smallest LP tolerance SoPlex takes without GMP (what it says when given less)."""

SCIP_LP_RETRY_FACTOR = 1e-3
"""SCIP's re-solve of a failed LP tightens its tolerances by this factor (``FEASTOLTIGHTFAC`` in SCIP's lp.c)."""

GUROBI_BACKUP_OPTIONS = {"NumericFocus": 3}
"""Gurobi's most careful numerics, for the Gurobi backup PyROS gets beside a Gurobi subsolver. PyROS's
masters are QCPs (the objective epigraph row is quadratic). Measured (Gurobi 13.0.3, Iris class 0, the
subsets of ``tpm-models check``): after a solve by Xpress (``xpress_direct``) in the same process,
Gurobi's default barrier ended a master of p = 1 (21 points, iteration 3) and of p = 2 (24 points,
iteration 2) with status 13, SUBOPTIMAL, about 7e-9 from the optimum, and PyROS stopped with
``subsolver_error``; NumericFocus = 3 solved both masters (status 2), and so did BarHomogeneous = 1.
Without the Xpress solve the same masters are solved by the defaults."""




class SemiInfinite:
    """The semi-infinite model: a clone of the nominal model and its uncertain rows and terms, with
    the exact evaluation of a point over the uncertainty sets (:meth:`evaluate`)."""

    def __init__(self, nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain]):
        objectives = list(nominal.component_data_objects(pyo.Objective, active=True))
        if len(objectives) != 1:
            raise ValueError(f"the nominal model needs exactly one active objective, has {len(objectives)}")
        if objectives[0].sense != pyo.minimize:
            raise ValueError("the nominal model must minimise (negate a maximised objective)")
        self.model = nominal.clone()
        self.objective = pyo.ComponentUID(objectives[0]).find_component_on(self.model)
        self.nominal_objective = self.objective.expr
        self.rows: list[tuple[object, list, UncertaintySet, str]] = []
        self.terms: list[tuple[list, UncertaintySet, float, str]] = []
        seen = set()
        for k, spec in enumerate(uncertain):
            coefs = [self._translate(a) for a in spec.coefficients]
            if not coefs:
                raise ValueError(f"uncertain item {k} has no coefficients")
            if isinstance(spec, UncertainRow):
                row = pyo.ComponentUID(spec.row).find_component_on(self.model)
                if row is None or not isinstance(row, pyo.Constraint._ComponentDataClass):
                    raise ValueError(f"uncertain row {k}: {spec.row!r} is not a constraint of the nominal model")
                if row.equality:
                    raise ValueError(f"uncertain row {row.name} is an equality: no robust counterpart unless "
                                     "its perturbation vanishes")
                if id(row) in seen:
                    raise ValueError(f"row {row.name} is named twice; give its perturbations as one vector")
                seen.add(id(row))
                self.rows.append((row, coefs, spec.uncertainty, spec.label or row.name))
            elif isinstance(spec, UncertainTerm):
                self.terms.append((coefs, spec.uncertainty, float(spec.weight), spec.label or f"term {k}"))
            else:
                raise TypeError(f"uncertain item {k} is a {type(spec).__name__}, not an UncertainRow or UncertainTerm")
        self.variables = [v for v in self.model.component_objects(pyo.Var, descend_into=True)]

    def _translate(self, expr):
        """The user's expression (on the nominal model) on the clone."""
        if isinstance(expr, (int, float, np.floating, np.integer)):
            return float(expr)
        subs = {}
        for v in identify_variables(expr, include_fixed=True):
            mine = pyo.ComponentUID(v).find_component_on(self.model)
            if mine is None:
                raise ValueError(f"coefficient variable {v.name} is not in the nominal model")
            subs[id(v)] = mine
        if getattr(expr, "is_variable_type", lambda: False)():
            return subs[id(expr)]
        return replace_expressions(expr, substitution_map=subs, remove_named_expressions=True)

    @staticmethod
    def coefficient_values(coefs) -> np.ndarray:
        return np.array([pyo.value(a) for a in coefs], float)

    def load(self, values: Mapping[str, float | np.ndarray]) -> None:
        """Set the clone's variables from ``values`` (by component name, index order)."""
        for var in self.variables:
            if var.local_name not in values:
                raise ValueError(f"no value for variable {var.local_name!r}")
            value = np.atleast_1d(np.asarray(values[var.local_name], float))
            data = list(var.values()) if var.is_indexed() else [var]
            if len(value) != len(data):
                raise ValueError(f"{var.local_name}: {len(value)} values for {len(data)} variables")
            for v, x in zip(data, value):
                v.set_value(float(x), skip_validation=True)

    def values(self) -> dict[str, float | np.ndarray]:
        out = {}
        for var in self.variables:
            if var.is_indexed():
                out[var.local_name] = np.array([np.nan if v.value is None else v.value for v in var.values()], float)
            else:
                out[var.local_name] = np.nan if var.value is None else float(var.value)
        return out

    def row_worst(self, row, coefs, uset) -> tuple[float, np.ndarray | None]:
        """Worst violation of an uncertain row at the current point, and its :math:`\\delta`: for
        :math:`\\mathrm{body}+a^\\top\\delta\\ge l` the least body is :math:`\\mathrm{body} - \\sigma_{\\mathcal U}(-a)`
        (:math:`\\sigma` the support function; (25): :math:`-\\varepsilon\\|a\\|_{p'}` for a ball)."""
        body = float(pyo.value(row.body))
        g = self.coefficient_values(coefs)
        worst, delta = -math.inf, None
        if row.lower is not None:
            s, d = uset.support(-g)
            v = float(pyo.value(row.lower)) - (body + g @ d)
            worst, delta = v, d
        if row.upper is not None:
            s, d = uset.support(g)
            v = body + g @ d - float(pyo.value(row.upper))
            if v > worst:
                worst, delta = v, d
        return worst, delta

    def evaluate(self) -> Evaluation:
        """The point now in the clone's variables, over the uncertainty sets: the worst violation of
        every row (uncertain rows by their support function, certain rows and variable bounds as they
        are), the violating row and :math:`\\delta`, and the semi-infinite objective (nominal objective
        plus the support of every uncertain term)."""
        worst, where, delta = 0.0, "", None
        for v in self.model.component_data_objects(pyo.Var, descend_into=True):
            if v.value is None:
                raise ValueError(f"variable {v.name} has no value")
            gaps = ([v.lb - v.value] if v.lb is not None else []) + ([v.value - v.ub] if v.ub is not None else [])
            if gaps and max(gaps) > worst:
                worst, where, delta = max(gaps), f"bound of {v.name}", None
        uncertain = {id(r) for r, *_ in self.rows}
        for con in self.model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
            if id(con) in uncertain:
                continue
            body = float(pyo.value(con.body))
            gaps = (([pyo.value(con.lower) - body] if con.lower is not None else [])
                    + ([body - pyo.value(con.upper)] if con.upper is not None else []))
            if gaps and max(gaps) > worst:
                worst, where, delta = max(gaps), con.name, None
        for row, coefs, uset, label in self.rows:
            v, d = self.row_worst(row, coefs, uset)
            if v > worst:
                worst, where, delta = v, label, d
        objective = float(pyo.value(self.nominal_objective))
        robust_terms = [uset.support(weight * self.coefficient_values(coefs))[0]
                        for coefs, uset, weight, _ in self.terms]
        return Evaluation(objective + sum(robust_terms), worst, where, delta, objective,
                          sum(abs(t) for t in robust_terms))

    def scale(self) -> float:
        """:func:`objective_scale` of the nominal objective plus the absolute worst cases of the terms, at
        the current point."""
        terms = sum(abs(uset.support(weight * self.coefficient_values(coefs))[0])
                    for coefs, uset, weight, _ in self.terms)
        return objective_scale(self.model) + terms


@dataclass
class Evaluation:
    """A point of the nominal variables over the uncertainty sets (:meth:`SemiInfinite.evaluate`)."""

    objective: float
    """Semi-infinite objective: the nominal objective plus the worst case of every uncertain term."""
    violation: float
    """Worst violation of a row over its uncertainty set (or of a certain row or bound); 0 if none."""
    row: str
    delta: np.ndarray | None
    nominal_objective: float
    robust_terms: float


@dataclass
class SemiInfiniteSolution:
    """A solve of a semi-infinite model by one route."""

    method: str
    objective: float
    """Semi-infinite objective at the point, by the exact evaluation (:meth:`SemiInfinite.evaluate`)."""
    values: dict[str, float | np.ndarray]
    max_violation: float
    """Worst violation of the point over the uncertainty sets (exact evaluation)."""
    lower_bound: float | None
    """The last master's objective (cutting planes: a lower bound) or PyROS's final objective value."""
    rounds: int
    seconds: float
    termination: str
    message: str = ""
    history: list[tuple[int, float, float]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.termination in ("optimal", "robust_optimal")


def _scenario_sum(coefs, delta, weight=1.0):
    return sum(weight * float(d) * a for a, d in zip(coefs, delta) if d != 0)


def _row_with(row, extra):
    """The row with ``extra`` added to its body, same bounds."""
    lower = None if row.lower is None else pyo.value(row.lower)
    upper = None if row.upper is None else pyo.value(row.upper)
    return (lower, row.body + extra, upper)


def solve_cutting_planes(
    nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain], solver: str | Sequence[str] = "default",
    tol: float = CUT_TOL, max_rounds: int = MAX_ROUNDS,
) -> SemiInfiniteSolution:
    """The semi-infinite model by cutting planes: route (a) of the module docstring.

    The master is the nominal model with every uncertain row replaced by its copies at finite
    scenario sets (first :meth:`UncertaintySet.start`) and every uncertain term by an epigraph
    variable :math:`\\eta_k \\ge \\omega_k a_k(x)^\\top\\delta` over its scenarios. Each round solves the
    master with :func:`tpm_models.solvers.solve` (``solver``: a name, or names tried in order on a master
    the first fails; ``"default"`` is followed by :data:`MASTER_FALLBACK`), separates every row and term exactly
    (support functions; (25) for norm balls) and adds the worst :math:`\\delta` where the violation
    exceeds ``tol``. ``lower_bound`` is the last master's objective; ``objective`` the semi-infinite
    objective at the final point.

    Raises :class:`tpm_models.solvers.NoOptimalSolutionError` if a master fails and ``RuntimeError``
    after ``max_rounds`` rounds with a violation above ``tol``.
    """
    start = time.perf_counter()
    si = SemiInfinite(nominal, uncertain)
    m = si.model
    m.verify_cuts = pyo.ConstraintList(doc="the uncertain rows at their scenarios")
    m.verify_eta_cuts = pyo.ConstraintList(doc="eta_k >= weight_k a_k(x)'delta at the scenarios")
    m.verify_eta = pyo.Var(range(len(si.terms)), doc="eta_k: worst case of uncertain term k over its scenarios")
    for row, coefs, uset, _ in si.rows:
        row.deactivate()
        m.verify_cuts.add(_row_with(row, _scenario_sum(coefs, uset.start(len(coefs)))))
    for k, (coefs, uset, weight, _) in enumerate(si.terms):
        m.verify_eta_cuts.add(m.verify_eta[k] - _scenario_sum(coefs, uset.start(len(coefs)), weight) >= 0)
    si.objective.set_value(si.nominal_objective + sum(m.verify_eta[k] for k in range(len(si.terms))))
    history = []
    solvers = [solver] if isinstance(solver, str) else list(solver)
    if solvers == ["default"]:
        solvers += [s for s in MASTER_FALLBACK if s != "default"]
    used = set()
    for rounds in range(1, max_rounds + 1):
        result = _solve_master(m, solvers)
        used.add(result.solver)
        cuts = []
        for row, coefs, uset, _ in si.rows:
            v, d = si.row_worst(row, coefs, uset)
            cuts.append((v, "row", row, coefs, d, 1.0))
        for k, (coefs, uset, weight, _) in enumerate(si.terms):
            s, d = uset.support(weight * si.coefficient_values(coefs))
            cuts.append((s - m.verify_eta[k].value, "term", k, coefs, d, weight))
        violation = max((c[0] for c in cuts), default=0.0)
        history.append((rounds, result.objective, violation))
        log.info("cutting plane round %d: master %.12g, worst violation %.3g", rounds, result.objective, violation)
        if violation <= tol:
            values = {k: v for k, v in si.values().items() if k != "verify_eta"}
            ev = evaluate_point(nominal, uncertain, values)
            return SemiInfiniteSolution(
                "cutting-plane", ev.objective, values, ev.violation, result.objective, rounds,
                time.perf_counter() - start, "optimal", f"{rounds} rounds, master solver {'/'.join(sorted(used))}",
                history,
            )
        for v, kind, what, coefs, d, weight in cuts:
            if v > tol:
                if kind == "row":
                    m.verify_cuts.add(_row_with(what, _scenario_sum(coefs, d)))
                else:
                    m.verify_eta_cuts.add(m.verify_eta[what] - _scenario_sum(coefs, d, weight) >= 0)
    raise RuntimeError(f"cutting planes did not reach a violation <= {tol:g} in {max_rounds} rounds "
                       f"(last {history[-1][2]:.3g}); raise max_rounds or tol")


def _solve_master(m: pyo.ConcreteModel, solvers: Sequence[str]) -> SolveResult:
    for k, name in enumerate(solvers):
        try:
            return solve(m, name)
        except NoOptimalSolutionError as exc:
            if k == len(solvers) - 1:
                raise
            log.warning("cutting-plane master: %s failed (%s); trying %s", name, exc.result.termination.value,
                        solvers[k + 1])
    raise ValueError("no master solver given")


def evaluate_point(nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain],
                   values: Mapping[str, float | np.ndarray]) -> Evaluation:
    """:meth:`SemiInfinite.evaluate` of ``values`` (by the nominal model's variable names): the worst
    violation over the uncertainty sets, its row and :math:`\\delta`, and the semi-infinite objective."""
    si = SemiInfinite(nominal, uncertain)
    si.load(values)
    return si.evaluate()


# --------------------------------------------------------------------------- PyROS


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


def pyros_subsolver(kind: str, prefer: str | None, time_limit: float | None = None,
                    gurobi_options: dict | None = None, **kwds):
    """A Pyomo solver object PyROS can call: Gurobi (QP; pip licence; ``gurobi_options`` on top of ours),
    SCIP, or our Ipopt (``kwds`` go to :class:`tpm_models.solvers.ipopt.CasadiIpopt`). ``prefer`` None: the first
    installed of :data:`PYROS_SUBSOLVERS`."""
    names = [prefer] if prefer else list(PYROS_SUBSOLVERS[kind])
    for name in names:
        if name == "tpm_ipopt":
            opt = pyo.SolverFactory(casadi_ipopt.PLUGIN_NAME, **kwds)
            if time_limit:
                opt.options["max_wall_time"] = float(time_limit)
            return opt
        if name == "scip":
            opt = pyo.SolverFactory("scip_direct")
            if opt.available(exception_flag=False):
                opt.options["display/verblevel"] = 0  # SCIP can block on the captured pipe
                opt.options["limits/gap"] = 0.0
                opt.options.update(SCIP_PYROS_OPTIONS)
                if time_limit:
                    opt.options["limits/time"] = float(time_limit)
                return opt
        else:
            opt = pyo.SolverFactory(name)
            if opt.available(exception_flag=False):
                if name.startswith("gurobi"):
                    opt.options.update({
                        "OutputFlag": 0, "FeasibilityTol": 1e-9, "OptimalityTol": 1e-9,
                        "BarConvTol": 1e-10, "BarQCPConvTol": 1e-10, "MIPGap": 0.0,
                        **(gurobi_options or {}),
                    })
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
                  subsolver=pyros_subsolver) -> tuple[dict, list]:
    """PyROS's keyword arguments (subsolvers, backups, tolerances, worst-case objective, masters solved
    globally) and the list of backup solvers (each with a ``solves`` count). A Gurobi subsolver gets a
    Gurobi backup with :data:`GUROBI_BACKUP_OPTIONS`; ``tpm_ipopt`` a cold-started Ipopt
    (:func:`tpm_models.checks.semi_infinite.solve_22_pyros` explains why)."""
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
    if any("scip" in str(getattr(opt, "name", "")) for opt in (local, global_)):
        options["robust_feasibility_tolerance"] = SCIP_PYROS_FEASIBILITY_TOL
    backups = []
    for kind, name, opt in (("local", local_solver, local), ("global", global_solver, global_)):
        if name == "tpm_ipopt":
            backups.append(subsolver(kind, name, time_limit, warmstart=False))
        elif opt.name.startswith("gurobi"):
            backups.append(counting(subsolver(kind, opt.name, time_limit, gurobi_options=GUROBI_BACKUP_OPTIONS)))
        else:
            continue
        options[f"backup_{kind}_solvers"] = [backups[-1]]
    if local_solver == global_solver == "tpm_ipopt":
        options["bypass_local_separation"] = True
    return options, backups


def solve_pyros(
    nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain], local_solver: str | None = None,
    global_solver: str | None = None, time_limit: float | None = None,
) -> SemiInfiniteSolution:
    """The semi-infinite model by PyROS: route (b) of the module docstring.

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
    from pyomo.contrib import pyros

    start = time.perf_counter()
    si = SemiInfinite(nominal, uncertain)
    m = si.model
    items = [(k, coefs, uset) for k, (_, coefs, uset, _) in enumerate(si.rows)]
    items += [(len(si.rows) + k, coefs, uset) for k, (coefs, uset, _, _) in enumerate(si.terms)]
    m.verify_delta = pyo.Param(pyo.Any, mutable=True, initialize={}, dense=False, doc="uncertain perturbations")
    sets, params, deltas = [], [], {}
    for k, coefs, uset in items:
        n = len(coefs)
        if uset.is_point():
            deltas[k] = [float(x) for x in uset.start(n)]
            continue
        split = isinstance(uset, NormBall) and uset.p == 1.0
        keys = [(k, j, s) for s in (("+", "-") if split else ("",)) for j in range(n)]
        for key in keys:
            m.verify_delta[key] = 0.0
        params += [m.verify_delta[key] for key in keys]
        deltas[k] = ([m.verify_delta[k, j, "+"] - m.verify_delta[k, j, "-"] for j in range(n)] if split
                     else [m.verify_delta[k, j, ""] for j in range(n)])
        sets.append(uset.pyros_set(n))
    m.verify_robust_rows = pyo.ConstraintList(doc="the uncertain rows with a(x)'delta added")
    for k, (row, coefs, _, _) in enumerate(si.rows):
        row.deactivate()
        extra = sum(a * d for a, d in zip(coefs, deltas[k]))
        m.verify_robust_rows.add(_row_with(row, extra))
    worst = si.nominal_objective + sum(
        weight * sum(a * d for a, d in zip(coefs, deltas[len(si.rows) + k]))
        for k, (coefs, _, weight, _) in enumerate(si.terms))
    si.objective.set_value(worst)
    first_stage = [v for v in m.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
    if not params:
        raise ValueError("no uncertain parameter: every uncertainty set is a point; solve the nominal model")
    options, backups = pyros_options(local_solver, global_solver, time_limit)
    with contextlib.redirect_stdout(io.StringIO()):
        res = pyo.SolverFactory("pyros").solve(
            m, first_stage_variables=first_stage, second_stage_variables=[], uncertain_params=params,
            uncertainty_set=pyros.CartesianProductSet(sets) if len(sets) > 1 else sets[0], **options,
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
    return SemiInfiniteSolution("pyros", ev.objective, values, ev.violation, float(res.final_objective_value),
                                int(res.iterations), seconds, termination, message)


# --------------------------------------------------------------------------- the verifier


VERIFIED = "verified"
"""Verdict: the counterpart's optimum is the semi-infinite one and its point is robust (exit 0)."""
NOT_A_COUNTERPART = "not a counterpart"
"""Verdict: a measured fact contradicts the claim: a perturbation of the set that breaks the counterpart's point,
its objective that is not the worst case at its point, or optima that differ (the witness says how) (exit 1)."""
UNDECIDED = "could not decide"
"""Verdict: nothing contradicts the claim, but a solve it needs did not end: a licence limit, a time-out, a solver
failure, an unbounded or infeasible counterpart (:attr:`Verification.undecided` says which) (exit 3)."""
VERDICTS = (VERIFIED, NOT_A_COUNTERPART, UNDECIDED)

OBJECTIVE_ATOL = ABS_TOL
"""The absolute floor of the objective comparisons (:func:`tpm_models.checks.deterministic.objective_gap`): the
optima and the consistency agree when :math:`|a-b| \\le` :data:`OBJECTIVE_TOL` :math:`\\max(|a|,|b|,S) +`
:data:`OBJECTIVE_ATOL`. 1e-9, the absolute gap the solvers are asked for; a counterpart whose optimum is 0 (an
l1-regularised (23), -6.6e-26 against 2.6e-13) is otherwise "1 apart"."""


@dataclass
class Verification:
    """What :func:`verify` measured, in the style of Theorem 1, and its verdict (:attr:`verdict`, one of
    :data:`VERDICTS`)."""

    method: str
    counterpart: str
    verified: bool
    reasons: list[str]
    """What contradicts the claim (empty when verified or undecided)."""
    counterpart_objective: float | None
    semi_infinite: SemiInfiniteSolution
    gap: float
    """:func:`objective_gap` of the two optimal values (relative, with the floor :data:`OBJECTIVE_ATOL`)."""
    distance: float
    """:math:`\\|x_c-x_s\\|_2/\\max(\\|x_s\\|_2,1)` over the mapped first-stage variables."""
    violation: float
    """Worst violation of the counterpart's solution over the uncertainty sets."""
    violating_row: str
    violating_delta: np.ndarray | None
    """The :math:`\\delta` that attains :attr:`violation` (None if no uncertain row is violated)."""
    objective_at_counterpart: float
    """The semi-infinite objective at the counterpart's solution."""
    consistency: float
    """:func:`objective_gap` of the counterpart's objective and :attr:`objective_at_counterpart`."""
    counterpart_seconds: float
    tolerances: dict[str, float | None]
    witness: str = ""
    """When the counterpart excludes robust points: what it does with the semi-infinite optimum."""
    counterpart_values: dict = field(default_factory=dict)
    compared: list[str] = field(default_factory=list)
    """The first-stage variables :attr:`distance` is measured on."""
    undecided: list[str] = field(default_factory=list)
    """Why no verdict could be reached (a solve that did not end); empty when one was."""

    @property
    def verdict(self) -> str:
        """:data:`VERIFIED`, :data:`NOT_A_COUNTERPART` (:attr:`reasons`) or :data:`UNDECIDED` (:attr:`undecided`)."""
        if self.reasons:
            return NOT_A_COUNTERPART
        return UNDECIDED if self.undecided or not self.verified else VERIFIED

    def table(self) -> str:
        """The report as a table (what ``tpm-models verify`` prints)."""
        tol = self.tolerances
        si = self.semi_infinite

        def flag(value, t):
            if t is None or not np.isfinite(value):
                return "info" if t is None else "-"
            return "pass" if value <= t else "FAIL"

        lines = [f"counterpart {self.counterpart} vs the semi-infinite model by {self.method} ({si.message})",
                 f"{'measure':<42} {'value':>16} {'tolerance':>10}  result"]
        cp = math.nan if self.counterpart_objective is None else self.counterpart_objective
        lines.append(f"{'counterpart optimum':<42} {cp:>16.10g}")
        lines.append(f"{'semi-infinite optimum (' + self.method + ')':<42} {si.objective:>16.10g}")
        rows = [("relative gap of the optima, floor " + format(tol.get("atol") or 0, ".0e"), self.gap,
                 tol["objective"]),
                ("distance of first stage " + ",".join(self.compared), self.distance, tol["solution"]),
                ("worst violation over U (counterpart point)", self.violation, tol["violation"]),
                ("objective at counterpart point vs its value", self.consistency, tol["objective"])]
        for name, value, t in rows:
            tt = "-" if t is None else f"{t:.0e}"
            lines.append(f"{name:<42} {value:>16.3e} {tt:>10}  {flag(value, t)}")
        lines.append(f"{'route':<42} {si.termination + ', ' + format(si.seconds, '.2f') + ' s':>16}")
        if self.violation > (tol["violation"] or 0) and self.violating_row:
            d = "" if self.violating_delta is None else np.array2string(
                np.asarray(self.violating_delta), precision=4, threshold=8, max_line_width=200)
            lines.append(f"violating point: row {self.violating_row}" + (f", delta = {d}" if d else ""))
        if self.witness:
            lines.append(f"witness: {self.witness}")
        verdict = self.verdict
        if verdict == VERIFIED:
            text = "VERIFIED: a robust counterpart on this instance"
        elif verdict == NOT_A_COUNTERPART:
            text = "NOT a counterpart: " + "; ".join(self.reasons)
        else:
            text = "COULD NOT DECIDE: " + "; ".join(self.undecided or ["no measure contradicts it, none confirms it"])
        lines.append("verdict: " + text)
        return "\n".join(lines)

    __str__ = table


def _first_stage(values: Mapping, names: Sequence[str]) -> np.ndarray:
    return np.concatenate([np.atleast_1d(np.asarray(values[n], float)) for n in names])


def _failure(exc: BaseException) -> str:
    """A solve's failure in one line: a solver's result, or the exception's type and first line."""
    if isinstance(exc, NoOptimalSolutionError):
        r = exc.result
        why = f" ({r.message.splitlines()[0][:120]})" if r.message else ""
        return f"{r.solver} ended {r.termination.value}{why}"
    text = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
    return f"{type(exc).__name__}" + (f": {text}" if text else "")


def is_licence_refusal(exc: BaseException) -> bool:
    """An exception of a size-limited licence refusing a model (Gurobi's ``Model too large for size-limited
    license``), not a numerical failure."""
    text = str(exc).lower()
    return any(w in text for w in ("size-limited", "too large for", "licen", "too many rows", "too many columns"))


FREE_PYROS_SUBSOLVERS = ("tpm_ipopt", "scip")
"""PyROS's subsolvers, tried in order, when the default one's licence refuses a subproblem (Gurobi's pip licence:
200 variables once a quadratic term is present, less than PyROS's separation problems on the whole Iris set):
our Ipopt (always installed; global on the models it certifies convex,
:func:`tpm_models.checks.semi_infinite.solve_22_pyros` explains when that is sound; ``tpm-models solve --model 22
--method pyros`` uses it on the whole Iris set), then SCIP
(free, global; at :data:`SCIP_PYROS_FEASIBILITY_TOL`) when installed. The first that ends ``robust_optimal`` is
kept; else the last one's result."""


def _pyros_with_fallback(nominal, uncertain, local_solver, global_solver, time_limit) -> SemiInfiniteSolution:
    """:func:`solve_pyros`; when no subsolver was named and the default one's licence refuses a subproblem, the
    same again with each of :data:`FREE_PYROS_SUBSOLVERS` until one ends ``robust_optimal`` (the message says
    which, and why)."""
    try:
        return solve_pyros(nominal, uncertain, local_solver, global_solver, time_limit)
    except Exception as exc:
        if local_solver is not None or global_solver is not None or not is_licence_refusal(exc):
            raise
        refused = _failure(exc)
    tried: list[str] = []
    si = None
    for free in FREE_PYROS_SUBSOLVERS:
        if free == "scip" and not pyo.SolverFactory("scip_direct").available(exception_flag=False):
            continue
        log.warning("PyROS: a subsolver's licence refused a subproblem (%s); again with %s", refused, free)
        try:
            si = solve_pyros(nominal, uncertain, free, free, time_limit)
        except Exception as exc:  # this one failed too: say so, try the next
            tried.append(f"{free}: {_failure(exc)}")
            continue
        si.message += f"; {free} subsolvers (the default's licence refused: {refused}" + (
            f"; before: {'; '.join(tried)}" if tried else "") + ")"
        if si.ok:
            return si
        tried.append(f"{free}: {si.termination}")
    if si is None:
        raise RuntimeError(f"the default subsolver's licence refused ({refused}) and no free one ended: "
                           + "; ".join(tried))
    return si


def verify_counterpart(
    nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain], counterpart: pyo.ConcreteModel,
    variables: Mapping[str, str] | Sequence[str] | None = None, method: str = "cutting-plane",
    solver: str = "default", counterpart_solver: str = "default", local_solver: str | None = None,
    global_solver: str | None = None, objective_tol: float = OBJECTIVE_TOL, violation_tol: float = VIOLATION_TOL,
    solution_tol: float | None = None, compare: Sequence[str] | None = None, time_limit: float | None = None,
    objective_atol: float = OBJECTIVE_ATOL,
) -> Verification:
    """Is ``counterpart`` a robust counterpart of ``nominal`` under ``uncertain`` (module docstring)?

    ``variables`` maps each variable of the nominal model (component name) to the counterpart's
    (``{"w": "w", "theta": "theta", "xi": "xi"}``; a list means the same names; ``None``: every
    variable of the nominal model, by its name). ``method``: ``"cutting-plane"`` (masters by
    ``solver``) or ``"pyros"`` (``local_solver``, ``global_solver``: :func:`pyros_subsolver`; none named: the
    default, and :data:`FREE_PYROS_SUBSOLVERS` if its licence refuses a subproblem). The counterpart is solved by
    ``counterpart_solver``. The result ends in one of three verdicts (:attr:`Verification.verdict`):

    * **verified** when the route ended optimal (PyROS: ``robust_optimal``) and

      - the optima agree: :math:`|a-b| \\le` ``objective_tol`` :math:`\\max(|a|,|b|,S)` + ``objective_atol``
        (:data:`OBJECTIVE_TOL`, :data:`OBJECTIVE_ATOL`; :func:`objective_gap`);
      - the counterpart's solution violates no row by more than ``violation_tol`` for any
        :math:`\\delta` of the sets (:data:`VIOLATION_TOL`; exact separation);
      - the semi-infinite objective at the counterpart's solution is its objective value, to the same tolerances;
      - if ``solution_tol`` is given (e.g. :data:`SOLUTION_TOL`), the first-stage variables ``compare``
        (nominal names; default all) are within it. It is not held by default: an optimum need not be
        unique (Iris, class 0, p = inf: (23)'s theta and xi are 1.8e-4 from the cutting planes' at optima
        equal to 1e-15; w, the strongly convex part, is unique);
    * **not a counterpart** when one of those fails on measured numbers (the violating :math:`\\delta`, or the
      witness: what the counterpart does at the semi-infinite optimum); a violation or an inconsistent objective
      is a fact even when the route did not end;
    * **could not decide** when a solve it needs did not end and nothing contradicts the claim: the counterpart's
      own solve (unbounded, infeasible, a licence limit, a time-out) or the route's (its termination, or the
      exception of a subsolver) (:attr:`Verification.undecided`).

    ``time_limit`` goes to PyROS. Errors in the inputs (a map naming no variable, a set PyROS has none for)
    raise ``ValueError`` before any solve.
    """
    if method not in ("cutting-plane", "pyros"):
        raise ValueError(f"method must be 'cutting-plane' or 'pyros', got {method!r}")
    probe = SemiInfinite(nominal, uncertain)
    names = [v.local_name for v in probe.variables]
    if variables is None:
        mapping = {n: n for n in names}
    elif isinstance(variables, Mapping):
        mapping = dict(variables)
    else:
        mapping = {n: n for n in variables}
    missing = [n for n in names if n not in mapping]
    if missing:
        raise ValueError(f"the variable map gives no counterpart variable for {missing}: every variable of the "
                         "nominal model is first stage")
    unknown = [c for c in mapping.values() if counterpart.component(c) is None]
    if unknown:
        raise ValueError(f"the counterpart has no variable {unknown}")
    if method == "pyros":  # refuse a set PyROS has no counterpart for before any solve
        for _, coefs, uset, _ in probe.rows:
            uset.is_point() or uset.pyros_set(len(coefs))
        for coefs, uset, _, _ in probe.terms:
            uset.is_point() or uset.pyros_set(len(coefs))
    tolerances = {"objective": objective_tol, "violation": violation_tol, "solution": solution_tol,
                  "atol": objective_atol}
    title = _title(counterpart)
    try:
        cres = solve(counterpart, counterpart_solver)
    except (SolverUnavailableError, ValueError):
        raise  # the user's choice of solver, or a model no solver can take: bad input
    except Exception as exc:  # its optimum cannot be computed: nothing to compare
        not_run = SemiInfiniteSolution(method, math.nan, {}, math.nan, None, 0, 0.0, "not run",
                                       "not run: the counterpart has no optimum to compare with")
        return Verification(method, title, False, [], None, not_run, math.nan, math.nan, math.nan, "", None,
                            math.nan, math.nan, 0.0, tolerances, compared=list(compare or names),
                            undecided=[f"the counterpart's optimum could not be computed: {_failure(exc)}"])
    cvalues = {n: cres.values[mapping[n]] for n in names}
    start = time.perf_counter()
    try:
        if method == "cutting-plane":
            si = solve_cutting_planes(nominal, uncertain, solver)
        else:
            si = _pyros_with_fallback(nominal, uncertain, local_solver, global_solver, time_limit)
    except (SolverUnavailableError, ValueError):
        raise
    except Exception as exc:  # a master or a subsolver that failed, a licence, the rounds' limit
        si = SemiInfiniteSolution(method, math.nan, {}, math.nan, None, 0, time.perf_counter() - start, "error",
                                  _failure(exc))
    probe.load(cvalues)
    ev = probe.evaluate()
    reasons, undecided = [], []
    compared = list(compare) if compare is not None else names
    if not si.ok:
        undecided.append(f"the {method} route ended {si.termination} ({si.message})")
        gap = distance = math.nan
    else:
        probe.load(si.values)
        scale = probe.scale()
        probe.load(cvalues)
        gap = objective_gap(cres.objective, si.objective, scale, objective_tol, objective_atol)
        distance = float(np.linalg.norm(_first_stage(cvalues, compared) - _first_stage(si.values, compared))
                         / max(np.linalg.norm(_first_stage(si.values, compared)), 1.0))
    scale_c = probe.scale()
    consistency = objective_gap(cres.objective, ev.objective, scale_c, objective_tol, objective_atol)
    if si.ok and gap > objective_tol:
        reasons.append(f"the optima differ by {gap:.2e} (relative, floor {objective_atol:g}) > {objective_tol:g}: "
                       f"counterpart {cres.objective:.10g}, semi-infinite {si.objective:.10g}")
    if ev.violation > violation_tol:
        reasons.append(f"its solution violates {ev.row} by {ev.violation:.2e} > {violation_tol:g}"
                       + (" at a delta of the set" if ev.delta is not None else ""))
    if consistency > objective_tol:
        reasons.append(f"its objective {cres.objective:.10g} is not the worst-case objective {ev.objective:.10g} at "
                       f"its solution ({consistency:.2e} relative)")
    if si.ok and solution_tol is not None and distance > solution_tol:
        apart = f"the first-stage solutions are {distance:.2e} apart > {solution_tol:g}"
        if reasons:
            reasons.append(apart)
        else:  # robust, of the same optimal value: a route's point less accurate than solution_tol, not a proof
            undecided.append(apart + " while the optima agree and the counterpart's point is robust: the route's "
                             f"point ({si.termination}) is not accurate enough to confirm the solution")
    witness = ""
    if si.ok and reasons and ev.violation <= violation_tol:
        witness = _witness(counterpart, counterpart_solver, mapping, si, scale_c)
    return Verification(method, title, not reasons and not undecided, reasons, cres.objective, si, gap, distance,
                        ev.violation, ev.row if ev.violation > 0 else "", ev.delta, ev.objective, consistency,
                        cres.seconds, tolerances, witness, cvalues, compared, [] if reasons else undecided)


def _title(model) -> str:
    return model.name.strip("'")


def _witness(counterpart, solver, mapping, si: SemiInfiniteSolution, scale: float) -> str:
    """The counterpart with its first-stage variables fixed at the semi-infinite optimum."""
    fixed = counterpart.clone()
    for n, c in mapping.items():
        var = fixed.component(c)
        value = np.atleast_1d(np.asarray(si.values[n], float))
        for v, x in zip(list(var.values()) if var.is_indexed() else [var], value):
            v.fix(float(x))
    try:
        r = solve(fixed, solver, raise_on_failure=False)
    except Exception as exc:  # a backend that cannot take a model with fixed variables
        return f"the counterpart at the semi-infinite optimum could not be solved ({type(exc).__name__}: {exc})"
    if r.termination is not Termination.OPTIMAL:
        return (f"the semi-infinite optimum (robust feasible) is excluded by the counterpart: with its first-stage "
                f"variables fixed there, {r.solver} ends {r.termination.value} (max row violation "
                f"{r.max_violation if r.max_violation is not None else math.nan:.2e})")
    return (f"at the semi-infinite optimum the counterpart's objective is {r.objective:.10g}, the semi-infinite "
            f"objective {si.objective:.10g} ({rel_gap(r.objective, si.objective, scale):.2e} relative)")


PYROS_SUBSOLVER_NAMES = {"default": None, "gurobi": "gurobi_direct", "scip": "scip", "ipopt": "tpm_ipopt"}
"""``--solver`` of ``tpm-models verify --method pyros``: PyROS's local and global subsolver (``default``: the
first installed of :data:`PYROS_SUBSOLVERS`, and :data:`FREE_PYROS_SUBSOLVERS` if its licence refuses)."""


def verify(nominal: pyo.ConcreteModel | int | str, *args, **kwargs) -> Verification:
    """The verifier's front door, in two forms:

    * ``verify(nominal_model, uncertain, counterpart_model, ...)``: models you built
      (:func:`verify_counterpart`, every keyword of it);
    * ``verify(KEY, X, y, c, nu, alpha, p, eps, method=..., solver=..., points_per_class=..., time_limit=...,
      **params)``: a registered counterpart built on the data (:func:`verify_model`).

    ``from tpm_models.checks import verify`` gives this function (the module is ``tpm_models.checks.verify``'s
    entry in ``sys.modules``: ``from tpm_models.checks.verify import NormBall`` works as before).
    """
    if isinstance(nominal, pyo.Block):
        return verify_counterpart(nominal, *args, **kwargs)
    return verify_model(nominal, *args, **kwargs)


def uncertain_data(info: ModelInfo, nominal: pyo.ConcreteModel, p: float, eps: float | np.ndarray,
                   params: Mapping[str, object]) -> list[Uncertain]:
    """``info.uncertain(nominal, p, eps, **params)`` (only the ``params`` its signature takes), checked: a list of
    :class:`UncertainRow` and :class:`UncertainTerm`. A function that raises, takes other arguments or returns
    anything else is a ``ValueError`` that names it, the model's key and what it returned."""
    function = info.uncertain
    who = f"uncertain= {describe(function)} of ({info.eq})"
    mine = accepted(extra_parameters(function, 3, skip=()), params)
    try:
        inspect.signature(function).bind(nominal, p, eps, **mine)
    except TypeError as exc:
        raise ValueError(f"{who} cannot be called as uncertain(nominal_model, p, eps"
                         f"{''.join(', ' + k + '=...' for k in mine)}): {exc}") from None
    except ValueError:
        pass  # no signature to read (a builtin): call it and see
    try:
        items = function(nominal, p, eps, **mine)
    except ValueError as exc:
        raise ValueError(f"{who}: {exc}") from exc
    except Exception as exc:
        raise ValueError(f"{who} failed: {type(exc).__name__}: {exc}") from exc
    if isinstance(items, (UncertainRow, UncertainTerm)):
        items = [items]
    if not isinstance(items, (list, tuple)) or not items:
        raise ValueError(f"{who} returned {type(items).__name__} {_short(items)}; it must return a non-empty list of "
                         "UncertainRow and UncertainTerm")
    bad = [(k, x) for k, x in enumerate(items) if not isinstance(x, (UncertainRow, UncertainTerm))]
    if bad:
        k, x = bad[0]
        raise ValueError(f"{who} returned a list whose item {k} is {type(x).__name__} {_short(x)}, not an "
                         "UncertainRow or UncertainTerm")
    return list(items)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def verify_model(
    eq: int | str, X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, p: float | None,
    eps: float | np.ndarray, method: str = "cutting-plane", solver: str = "default",
    points_per_class: int | None = None, time_limit: float | None = None, **params: object,
) -> Verification:
    """Theorem 1 (and Corollary 1) for one registered counterpart, through the generic verifier.

    The registry entry of ``eq`` says what to verify (:attr:`~tpm_models.models.registry.ModelInfo.verifiable`):
    its nominal model ``nominal`` is built on the same data (``build(nominal, X, y, c, nu, alpha)``; for the
    paper's counterparts (15)), its uncertain data are ``uncertain(nominal_model, p, eps, **params)`` (for the
    paper's, :func:`tpm_models.checks.semi_infinite.uncertain_22`), and the counterpart is
    ``build(eq, ..., p=p, eps=eps, **params)``. ``params`` are a researcher's own (an ellipsoid's matrix, radii per
    feature, a weight): each goes to every one of the three that takes it by name, and one none takes is a
    ``ValueError``. Every variable of the nominal model is first stage, matched by name in the counterpart, and
    :func:`verify_counterpart` compares them by ``method`` (``solver``: the masters' solver of the
    cutting planes, or a key of :data:`PYROS_SUBSOLVER_NAMES` for PyROS). The distance of the solutions is held
    on the entry's ``compare`` variables (the paper's: ``w``, the strongly convex part; ``theta`` and ``xi``
    need not be unique) to :data:`SOLUTION_TOL`. ``points_per_class``: the first points of every class only
    (PyROS on the whole sets takes minutes).
    """
    info = model_info(eq)
    if not info.verifiable:
        raise ValueError(f"({info.eq}) is not a registered robust counterpart (its registry entry names no nominal= "
                         f"model and uncertain= data); verify takes {verifiable_keys()}")
    if p is None:
        allowed = info.robust_p
        if len(allowed) != 1:
            which = f"p in {[f'{q:g}' for q in allowed]}" if allowed else "any p >= 1"
            raise ValueError(f"({info.eq}) takes {which}: give p (the norm of the uncertainty set (21))")
        p = allowed[0]
    p = check_p(p)
    if method not in ("cutting-plane", "pyros"):
        raise ValueError(f"method must be 'cutting-plane' or 'pyros', got {method!r}")
    if points_per_class is not None:
        if points_per_class < 1:
            raise ValueError(f"points per class must be >= 1, got {points_per_class}")
        keep = np.sort(np.concatenate([np.flatnonzero(y == k)[:points_per_class] for k in np.unique(y)]))
        X, y = X[keep], y[keep]
        eps = eps if np.ndim(eps) == 0 else np.asarray(eps)[keep]
    nominal_info = model_info(info.nominal)
    to_counterpart = accepted(info.parameters(), params)
    to_nominal = accepted(nominal_info.parameters(), params)
    to_uncertain = accepted(extra_parameters(info.uncertain, 3, skip=()), params)
    unused = [k for k in params if k not in to_counterpart and k not in to_nominal and k not in to_uncertain]
    if unused:
        raise ValueError(f"({info.eq}): no parameter {', '.join(unused)} in its builder {describe(info.builder)}, "
                         f"its nominal ({nominal_info.eq})'s or its uncertain= {describe(info.uncertain)}")
    counterpart = build(info.eq, X, y, c, nu, alpha, p=p, eps=eps, **to_counterpart)
    nominal = build(info.nominal, X, y, c, nu, alpha, **to_nominal)
    kwargs: dict = {}
    if method == "pyros":
        if solver not in PYROS_SUBSOLVER_NAMES:
            raise ValueError(f"--method pyros takes --solver {', '.join(PYROS_SUBSOLVER_NAMES)} (PyROS's local and "
                             f"global subsolver), got {solver!r}")
        kwargs = {"local_solver": PYROS_SUBSOLVER_NAMES[solver], "global_solver": PYROS_SUBSOLVER_NAMES[solver]}
    else:
        kwargs = {"solver": solver}
    compare = list(info.compare) or None
    uncertain = uncertain_data(info, nominal, p, eps, to_uncertain)
    return verify_counterpart(nominal, uncertain, counterpart, None, method=method, compare=compare,
                              solution_tol=SOLUTION_TOL if compare else None, time_limit=time_limit, **kwargs)
