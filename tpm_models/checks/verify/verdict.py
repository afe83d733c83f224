"""The verifier: :func:`verify_counterpart` (a counterpart and the semi-infinite model, compared by one route),
:func:`verify_model` (a registered counterpart built on data), and :func:`verify`, the front door to both.

The tolerances below are the verdict's: each is a contract (what it bounds); the measurements behind the values are
in ``docs/verify.md`` (section "Why the tolerances").
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyomo.environ as pyo

from tpm_models.checks.deterministic import ABS_TOL, objective_gap
from tpm_models.checks.verify.cutting_planes import solve_cutting_planes
from tpm_models.checks.verify.model import (
    RowOnClone,
    SemiInfinite,
    SemiInfiniteSolution,
    TermOnClone,
    failure_summary,
)
from tpm_models.checks.verify.pyros import PYROS_SUBSOLVER_NAMES, is_licence_refusal, pyros_with_fallback
from tpm_models.checks.verify.report import Verification
from tpm_models.models.norms import check_p
from tpm_models.models.registry import (
    ModelInfo,
    accepted,
    build,
    describe,
    extra_parameters,
    model_info,
    short_repr,
    verifiable_keys,
)
from tpm_models.models.uncertainty import Uncertain, UncertainRow, UncertainTerm
from tpm_models.solvers import SolveResult, SolverUnavailableError, Termination, solve
from tpm_models.solvers.compare import rel_gap
from tpm_models.solvers.program import title

OBJECTIVE_TOL = 1e-6
"""Largest relative gap (:func:`tpm_models.checks.deterministic.objective_gap`) between the counterpart's optimum
and the semi-infinite one, and between the counterpart's objective and the semi-infinite objective at the
counterpart's point. It lies between what the routes reach on true counterparts and what a wrong counterpart of
the paper's shape moves the optimum by (:math:`\\nu\\varepsilon\\|w\\|`, about 1e-3 relative at
:math:`\\varepsilon = 0.02`)."""

VIOLATION_TOL = 1e-6
"""Largest worst-case violation (absolute) of a row at the counterpart's solution: the feasibility tolerance every
solver's point is checked to (:data:`tpm_models.solvers.FEASIBILITY_TOL`)."""

SOLUTION_TOL = 1e-4
"""A tolerance for the distance :math:`\\|x_a-x_b\\|_2/\\max(\\|x_b\\|_2,1)` between first-stage solutions, for
variables whose optimum is unique (``solution_tol``, ``compare`` of :func:`verify_counterpart`). Only the strongly
convex part of an objective fixes its solution, to :math:`\\sqrt{\\text{gap}}`: an optimum within 1e-9 leaves it
within ~3e-5."""

OBJECTIVE_ATOL = ABS_TOL
"""The absolute floor of the objective comparisons (:func:`tpm_models.checks.deterministic.objective_gap`): the
optima and the consistency agree when :math:`|a-b| \\le` :data:`OBJECTIVE_TOL` :math:`\\max(|a|,|b|,S) +`
:data:`OBJECTIVE_ATOL`, the absolute gap the solvers are asked for; without it a counterpart whose optimum is 0 is
"1 apart" from a route that ends at 1e-13."""


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
    default, and :func:`free_pyros_subsolvers` if its licence refuses a subproblem). The counterpart is solved by
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
    names = [v.name for v in probe.variables]
    mapping = variable_map(names, variables, counterpart)
    if method == "pyros":  # refuse a set PyROS has no counterpart for before any solve
        items: list[RowOnClone | TermOnClone] = [*probe.rows, *probe.terms]
        for item in items:
            item.uncertainty.is_point() or item.uncertainty.pyros_set(len(item.coefficients))
    tolerances = {"objective": objective_tol, "violation": violation_tol, "solution": solution_tol,
                  "atol": objective_atol}
    compared = list(compare) if compare is not None else names
    try:
        cres = solve(counterpart, counterpart_solver)
    except (SolverUnavailableError, ValueError):
        raise  # the user's choice of solver, or a model no solver can take: bad input
    except Exception as exc:  # its optimum cannot be computed: nothing to compare
        not_run = SemiInfiniteSolution(method, math.nan, {}, math.nan, None, 0, 0.0, "not run",
                                       "not run: the counterpart has no optimum to compare with")
        why = unbounded_nominal(nominal) or failure_summary(exc)
        return Verification(method, title(counterpart), False, [], None, not_run, math.nan, math.nan, math.nan, "",
                            None, math.nan, math.nan, 0.0, tolerances, compared=compared,
                            undecided=[f"the counterpart's optimum could not be computed: {why}"])
    cvalues = counterpart_values(counterpart, mapping)
    si = semi_infinite_route(nominal, uncertain, method, solver, local_solver, global_solver, time_limit)
    return judge(probe, counterpart, counterpart_solver, cres, cvalues, si, mapping, compared, tolerances,
                 lambda: unbounded_nominal(nominal))


def variable_map(names: Sequence[str], variables: Mapping[str, str] | Sequence[str] | None,
                 counterpart: pyo.ConcreteModel) -> dict[str, str]:
    """The nominal variables (full names: ``plant.x`` in a block) to the counterpart's: ``variables`` as a map, a
    list of the same names, or None (every variable by its name); ``ValueError`` for a variable it leaves out or
    one the counterpart does not have."""
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
    unknown = [c for c in mapping.values() if not isinstance(counterpart.find_component(c), pyo.Var)]
    if unknown:
        raise ValueError(f"the counterpart has no variable {unknown} (give the full name of a variable in a "
                         "block: 'plant.x')")
    return mapping


def counterpart_values(counterpart: pyo.ConcreteModel, mapping: Mapping[str, str]) -> dict[str, np.ndarray]:
    """The counterpart's solution (its variables' values after the solve), by the nominal names."""
    out = {}
    for n, c in mapping.items():
        var = counterpart.find_component(c)
        data = list(var.values()) if var.is_indexed() else [var]
        out[n] = np.array([math.nan if v.value is None else v.value for v in data], float)
    return out


def semi_infinite_route(nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain], method: str, solver: str,
                        local_solver: str | None, global_solver: str | None,
                        time_limit: float | None) -> SemiInfiniteSolution:
    """The semi-infinite model by ``method``; a route that failed as a solution that says how."""
    start = time.perf_counter()
    try:
        if method == "cutting-plane":
            return solve_cutting_planes(nominal, uncertain, solver)
        return pyros_with_fallback(nominal, uncertain, local_solver, global_solver, time_limit)
    except (SolverUnavailableError, ValueError):
        raise
    except Exception as exc:  # a master or a subsolver that failed, a licence, the rounds' limit
        return SemiInfiniteSolution(method, math.nan, {}, math.nan, None, 0, time.perf_counter() - start, "error",
                                    failure_summary(exc), licence_limited=is_licence_refusal(exc))


def judge(probe: SemiInfinite, counterpart: pyo.ConcreteModel, counterpart_solver: str, cres: SolveResult,
          cvalues: dict, si: SemiInfiniteSolution, mapping: Mapping[str, str], compared: list, tolerances: dict,
          unbounded: Callable[[], str]) -> Verification:
    """The verdict on measured numbers (:func:`verify_counterpart`); ``unbounded()``: the words for a nominal
    model that is unbounded, or ``""``."""
    objective = cres.objective
    if objective is None:  # solve() returns only the results it verified optimal, which carry their objective
        raise RuntimeError(f"the counterpart's solve by {cres.solver} returned no objective")
    objective_tol, violation_tol = tolerances["objective"], tolerances["violation"]
    solution_tol, objective_atol = tolerances["solution"], tolerances["atol"]
    probe.load(cvalues)
    ev = probe.evaluate()
    reasons, undecided = [], []
    if not si.ok:
        undecided.append(f"the {si.method} route ended {si.termination} ({unbounded() or si.message})")
        gap = distance = math.nan
    else:
        probe.load(si.values)
        scale = probe.scale()
        probe.load(cvalues)
        gap = objective_gap(objective, si.objective, scale, objective_tol, objective_atol)
        distance = float(np.linalg.norm(first_stage(cvalues, compared) - first_stage(si.values, compared))
                         / max(float(np.linalg.norm(first_stage(si.values, compared))), 1.0))
    scale_c = probe.scale()
    consistency = objective_gap(objective, ev.objective, scale_c, objective_tol, objective_atol)
    if si.ok and gap > objective_tol:
        reasons.append(f"the optima differ by {gap:.2e} (relative, floor {objective_atol:g}) > {objective_tol:g}: "
                       f"counterpart {objective:.10g}, semi-infinite {si.objective:.10g}")
    if ev.violation > violation_tol:
        reasons.append(f"its solution violates {ev.row} by {ev.violation:.2e} > {violation_tol:g}"
                       + (" at a delta of the set" if ev.delta is not None else ""))
    if consistency > objective_tol:
        reasons.append(f"its objective {objective:.10g} is not the worst-case objective {ev.objective:.10g} at "
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
        witness = witness_at(counterpart, counterpart_solver, mapping, si, scale_c)
    return Verification(si.method, title(counterpart), not reasons and not undecided, reasons, objective, si,
                        gap, distance, ev.violation, ev.row if ev.violation > 0 else "", ev.delta, ev.objective,
                        consistency, cres.seconds, tolerances, witness, cvalues, compared,
                        [] if reasons else undecided)


UNBOUNDED_BOX = 1e6
"""The box :func:`unbounded_nominal` puts on every variable: an optimum that reaches it is taken as a ray."""


def unbounded_nominal(nominal: pyo.ConcreteModel) -> str:
    """Words for a nominal model with no finite optimum, or ``""``: the nominal model with every variable boxed
    at :data:`UNBOUNDED_BOX` has an optimal point on the box (a solver's own word, an iteration limit or a
    diverging point, says less)."""
    boxed = nominal.clone()
    for v in boxed.component_data_objects(pyo.Var, descend_into=True):
        if not v.fixed:
            v.setlb(max(v.lb, -UNBOUNDED_BOX) if v.lb is not None else -UNBOUNDED_BOX)
            v.setub(min(v.ub, UNBOUNDED_BOX) if v.ub is not None else UNBOUNDED_BOX)
    try:
        r = solve(boxed, raise_on_failure=False)
    except Exception:  # no solver takes it: nothing to say
        return ""
    if r.termination is not Termination.OPTIMAL:
        return ""
    at_box = [v.name for v in boxed.component_data_objects(pyo.Var, descend_into=True)
              if v.value is not None and abs(v.value) >= UNBOUNDED_BOX * (1 - 1e-6)]
    if not at_box:
        return ""
    return (f"the nominal model is unbounded: its objective improves without end (boxed at +-{UNBOUNDED_BOX:g}, its "
            f"optimum puts {', '.join(at_box[:3])} on the box); bound those variables or the objective")


def first_stage(values: Mapping, names: Sequence[str]) -> np.ndarray:
    """The values of the variables ``names`` as one vector (index order)."""
    return np.concatenate([np.atleast_1d(np.asarray(values[n], float)) for n in names])


def witness_at(counterpart: pyo.ConcreteModel, solver: str, mapping: Mapping[str, str],
               si: SemiInfiniteSolution, scale: float) -> str:
    """The counterpart with its first-stage variables fixed at the semi-infinite optimum."""
    fixed = counterpart.clone()
    for n, c in mapping.items():
        var = fixed.find_component(c)
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
    at = math.nan if r.objective is None else r.objective  # OPTIMAL: an objective
    return (f"at the semi-infinite optimum the counterpart's objective is {at:.10g}, the semi-infinite "
            f"objective {si.objective:.10g} ({rel_gap(at, si.objective, scale):.2e} relative)")


def verify(nominal: pyo.ConcreteModel | int | str, *args: Any, **kwargs: Any) -> Verification:
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
    if function is None:
        raise ValueError(f"({info.key}) names no uncertain= data")
    who = f"uncertain= {describe(function)} of ({info.key})"
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
        raise ValueError(f"{who} returned {type(items).__name__} {short_repr(items)}; it must return a non-empty "
                         "list of UncertainRow and UncertainTerm")
    bad = [(k, x) for k, x in enumerate(items) if not isinstance(x, (UncertainRow, UncertainTerm))]
    if bad:
        k, x = bad[0]
        raise ValueError(f"{who} returned a list whose item {k} is {type(x).__name__} {short_repr(x)}, not an "
                         "UncertainRow or UncertainTerm")
    return list(items)


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
    nominal_key, uncertain_of = info.nominal, info.uncertain
    if nominal_key is None or uncertain_of is None:  # not info.verifiable
        raise ValueError(f"({info.key}) is not a registered robust counterpart (its registry entry names no nominal= "
                         f"model and uncertain= data); verify takes {verifiable_keys()}")
    if p is None:
        allowed = info.robust_p or ()
        if len(allowed) != 1:
            which = f"p in {[f'{q:g}' for q in allowed]}" if allowed else "any p >= 1"
            raise ValueError(f"({info.key}) takes {which}: give p (the norm of the uncertainty set (21))")
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
    nominal_info = model_info(nominal_key)
    to_counterpart = accepted(info.parameters(), params)
    to_nominal = accepted(nominal_info.parameters(), params)
    to_uncertain = accepted(extra_parameters(uncertain_of, 3, skip=()), params)
    unused = [k for k in params if k not in to_counterpart and k not in to_nominal and k not in to_uncertain]
    if unused:
        raise ValueError(f"({info.key}): no parameter {', '.join(unused)} in its builder {describe(info.builder)}, "
                         f"its nominal ({nominal_info.key})'s or its uncertain= {describe(uncertain_of)}")
    counterpart = build(info.key, X, y, c, nu, alpha, p=p, eps=eps, **to_counterpart)
    nominal = build(nominal_key, X, y, c, nu, alpha, **to_nominal)
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
