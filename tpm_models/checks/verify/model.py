"""The semi-infinite model of a nominal model and its uncertain data, and the exact evaluation of a point on it.

:class:`SemiInfinite` clones the nominal model and holds each uncertain row and term as a typed record
(:class:`RowOnClone`, :class:`TermOnClone`) on the clone. :meth:`SemiInfinite.evaluate` measures a point over the
uncertainty sets exactly, by the sets' support functions: for a row
:math:`\\mathrm{body}(x)+a(x)^\\top\\delta\\ge l` the least body is :math:`\\mathrm{body}-\\sigma_{\\mathcal U}(-a)`;
for a norm ball that is (25), :math:`-\\varepsilon\\|a\\|_{p'}`. Both routes of the verifier
(:mod:`tpm_models.checks.verify.cutting_planes`, :mod:`tpm_models.checks.verify.pyros`) build on it and report a
:class:`SemiInfiniteSolution`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pyomo.environ as pyo
from pyomo.core.base.constraint import ConstraintData
from pyomo.core.base.var import VarData
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression
from pyomo.core.expr.visitor import identify_variables, replace_expressions

from tpm_models.models.uncertainty import Uncertain, UncertainRow, UncertainTerm, UncertaintySet, nominal_objective
from tpm_models.solvers import NoOptimalSolutionError
from tpm_models.solvers.compare import objective_scale


class RowOnClone(NamedTuple):
    """An :class:`~tpm_models.models.uncertainty.UncertainRow` on the clone: the row whose body gets
    :math:`a(x)^\\top\\delta`, :math:`a(x)` (one expression per entry of :math:`\\delta`), the set and a label."""

    row: ConstraintData
    coefficients: list
    uncertainty: UncertaintySet
    label: str


class TermOnClone(NamedTuple):
    """An :class:`~tpm_models.models.uncertainty.UncertainTerm` on the clone: the objective gets
    :math:`\\max_{\\delta\\in\\mathcal U}\\omega\\,a(x)^\\top\\delta` (``weight`` is :math:`\\omega`)."""

    coefficients: list
    uncertainty: UncertaintySet
    weight: float
    label: str


class SemiInfinite:
    """The semi-infinite model: a clone of the nominal model and its uncertain rows and terms, with
    the exact evaluation of a point over the uncertainty sets (:meth:`evaluate`)."""

    def __init__(self, nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain]):
        # Pyomo's clone fills ``memo`` (copy.deepcopy's) with id(original) -> copy for everything it copies, so a
        # component of the nominal model is found on the clone by one lookup: a ComponentUID per coefficient
        # (800,000 of them at 2 x 10^4 points) took 15 s of (22)'s cutting planes. The memo is dropped at the end.
        memo: dict = {}
        self.model = nominal.clone(memo)
        self._copies = memo
        self._translated: dict[int, tuple[Any, Any]] = {}
        self.objective = self._on_clone(nominal_objective(nominal, maximise=True))
        self.nominal_objective = self.objective.expr
        self.sense = 1.0 if self.objective.sense == pyo.minimize else -1.0
        """+1 minimised, -1 maximised: a term's worst case is ``sense * sigma(sense * weight * a)`` (its largest
        value when minimised, its least when maximised)."""
        self.rows: list[RowOnClone] = []
        self.terms: list[TermOnClone] = []
        seen = set()
        shared: dict[tuple[int, ...], list] = {}
        lists: dict[int, tuple[object, list]] = {}
        for k, spec in enumerate(uncertain):
            done = lists.get(id(spec.coefficients))
            if done is not None:  # the same list object (every row and term of uncertain_22): the same translation
                coefs = done[1]
            else:
                coefs = [self._translate(a) for a in spec.coefficients]
                if not any(isinstance(a, float) for a in coefs):  # the same components: one list (support_at)
                    coefs = shared.setdefault(tuple(id(a) for a in coefs), coefs)
                lists[id(spec.coefficients)] = (spec.coefficients, coefs)
            if not coefs:
                raise ValueError(f"uncertain item {k} has no coefficients")
            if isinstance(spec, UncertainRow):
                row = self._on_clone(spec.row)
                if row is None or not isinstance(row, pyo.Constraint._ComponentDataClass):
                    raise ValueError(f"uncertain row {k}: {spec.row!r} is not a constraint of the nominal model")
                if row.equality:
                    raise ValueError(f"uncertain row {row.name} is an equality: no robust counterpart unless "
                                     "its perturbation vanishes")
                if id(row) in seen:
                    raise ValueError(f"row {row.name} is named twice; give its perturbations as one vector")
                seen.add(id(row))
                self.rows.append(RowOnClone(row, coefs, spec.uncertainty, spec.label or row.name))
            elif isinstance(spec, UncertainTerm):
                self.terms.append(TermOnClone(coefs, spec.uncertainty, float(spec.weight), spec.label or f"term {k}"))
            else:
                raise TypeError(f"uncertain item {k} is a {type(spec).__name__}, not an UncertainRow or UncertainTerm")
        self.variables = [v for v in self.model.component_objects(pyo.Var, descend_into=True)]
        del self._copies, self._translated

    def _on_clone(self, component):
        """The clone's copy of a component (or component data) of the nominal model; None if it is not one (a
        component of another model, even one of the same name, is not)."""
        mine = self._copies.get(id(component))
        return None if mine is None or mine is component else mine

    def _translate(self, expr):
        """The user's expression (on the nominal model) on the clone (each distinct expression translated once:
        the paper's (22) gives every point the same coefficients, the variables ``w``)."""
        if isinstance(expr, (int, float, np.floating, np.integer)):
            return float(expr)
        done = self._translated.get(id(expr))
        if done is not None:
            return done[1]
        if getattr(expr, "is_variable_type", lambda: False)():
            mine = self._on_clone(expr)
            if mine is None:
                raise ValueError(f"coefficient variable {expr.name} is not in the nominal model")
        else:
            subs = {}
            for v in identify_variables(expr, include_fixed=True):
                found = self._on_clone(v)
                if found is None:
                    raise ValueError(f"coefficient variable {v.name} is not in the nominal model")
                subs[id(v)] = found
            mine = replace_expressions(expr, substitution_map=subs, remove_named_expressions=True)
        self._translated[id(expr)] = (expr, mine)  # the expression kept: its id stays its own while translating
        return mine

    @staticmethod
    def coefficient_values(coefs: Sequence) -> np.ndarray:
        """:math:`a(x)` at the current point (a variable's value read directly: (22)'s coefficients are ``w``)."""
        return np.array([a.value if a.__class__ is VarData and a.value is not None else pyo.value(a) for a in coefs],
                        float)

    def load(self, values: Mapping[str, float | np.ndarray]) -> None:
        """Set the clone's variables from ``values`` (by full component name, ``plant.x`` for a variable in a
        block; index order)."""
        for var in self.variables:
            if var.name not in values:
                raise ValueError(f"no value for variable {var.name!r}")
            value = np.atleast_1d(np.asarray(values[var.name], float))
            data = list(var.values()) if var.is_indexed() else [var]
            if len(value) != len(data):
                raise ValueError(f"{var.name}: {len(value)} values for {len(data)} variables")
            for v, x in zip(data, value):
                v.set_value(float(x), skip_validation=True)

    def values(self) -> dict[str, float | np.ndarray]:
        out: dict[str, float | np.ndarray] = {}
        for var in self.variables:
            if var.is_indexed():
                out[var.name] = np.array([np.nan if v.value is None else v.value for v in var.values()], float)
            else:
                out[var.name] = np.nan if var.value is None else float(var.value)
        return out

    def row_worst(self, item: RowOnClone, at_point: dict | None = None) -> tuple[float, np.ndarray]:
        """Worst violation of an uncertain row at the current point, and its :math:`\\delta`: for
        :math:`\\mathrm{body}+a^\\top\\delta\\ge l` the least body is :math:`\\mathrm{body} - \\sigma_{\\mathcal U}(-a)`
        (:math:`\\sigma` the support function; (25): :math:`-\\varepsilon\\|a\\|_{p'}` for a ball).

        ``at_point``: a dict shared by the calls made at one point (:meth:`support_at`)."""
        row, uset = item.row, item.uncertainty
        body = body_value(row.body)
        g = self.values_at(item.coefficients, at_point)
        worst, delta = -math.inf, np.zeros(len(g))  # an inequality row: one of its sides sets both
        if row.lower is not None:
            s, d = self.support_at(uset, item.coefficients, -1.0, at_point)
            v = float(pyo.value(row.lower)) - (body + g @ d)
            worst, delta = v, d
        if row.upper is not None:
            s, d = self.support_at(uset, item.coefficients, 1.0, at_point)
            v = body + g @ d - float(pyo.value(row.upper))
            if v > worst:
                worst, delta = v, d
        return worst, delta

    def term_worst(self, term: TermOnClone, at_point: dict | None = None) -> tuple[float, np.ndarray]:
        """The worst case :math:`\\max_{\\delta\\in\\mathcal U}\\omega\\,a(x)^\\top\\delta` of an uncertain term at the
        current point (the support function of its set; of a maximised objective the least value,
        :math:`-\\sigma(-\\omega a)`), and the :math:`\\delta` that attains it. ``at_point`` as in :meth:`row_worst`."""
        value, delta = self.support_at(term.uncertainty, term.coefficients, self.sense * term.weight, at_point)
        return self.sense * value, delta

    def values_at(self, coefs: list, at_point: dict | None) -> np.ndarray:
        """:meth:`coefficient_values` of ``coefs``, computed once per point when ``at_point`` is given."""
        if at_point is None:
            return self.coefficient_values(coefs)
        key = ("a", id(coefs))
        if key not in at_point:
            at_point[key] = self.coefficient_values(coefs)
        return at_point[key]

    def support_at(self, uset: UncertaintySet, coefs: list, weight: float,
                   at_point: dict | None) -> tuple[float, np.ndarray]:
        """:math:`\\sigma_{\\mathcal U}(\\omega a(x))` and its :math:`\\delta` at the current point. With ``at_point``
        (a dict the caller keeps for one point and drops when the point changes) each (set, coefficients, weight)
        is computed once: the paper's (22) has one set and one coefficient list (``w``) for all its :math:`m` rows
        and terms (the lists are shared by :meth:`__init__`)."""
        if at_point is None:
            return uset.support(weight * self.coefficient_values(coefs))
        key = ("s", id(uset), id(coefs), weight)
        if key not in at_point:
            at_point[key] = uset.support(weight * self.values_at(coefs, at_point))
        return at_point[key]

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
        uncertain = {id(item.row) for item in self.rows}
        for con in self.model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
            if id(con) in uncertain:
                continue
            body = body_value(con.body)
            gaps = (([pyo.value(con.lower) - body] if con.lower is not None else [])
                    + ([body - pyo.value(con.upper)] if con.upper is not None else []))
            if gaps and max(gaps) > worst:
                worst, where, delta = max(gaps), con.name, None
        at_point: dict = {}
        for item in self.rows:
            v, d = self.row_worst(item, at_point)
            if v > worst:
                worst, where, delta = v, item.label, d
        objective = float(pyo.value(self.nominal_objective))
        robust_terms = [self.term_worst(term, at_point)[0] for term in self.terms]
        return Evaluation(objective + sum(robust_terms), worst, where, delta, objective,
                          sum(abs(t) for t in robust_terms))

    def scale(self) -> float:
        """:func:`objective_scale` of the nominal objective plus the absolute worst cases of the terms, at
        the current point."""
        terms = sum(abs(self.term_worst(term)[0]) for term in self.terms)
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


class Round(NamedTuple):
    """One cutting-plane round: its number, the master's optimum (a lower bound) and the worst violation found."""

    round: int
    master_objective: float
    violation: float


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
    history: list[Round] = field(default_factory=list)
    """The rounds of the cutting planes (empty for PyROS)."""
    licence_limited: bool = False
    """The route ended on a backend's licence refusing a subproblem's size
    (:func:`~tpm_models.solvers.backends.registry.is_licence_refusal`), not on a failure of its own."""

    @property
    def ok(self) -> bool:
        return self.termination in ("optimal", "robust_optimal")


def body_value(expr: Any) -> float:
    """``float(pyo.value(expr))``, read directly when ``expr`` is a ``LinearExpression`` of variables, monomials and
    numbers (the rows of the paper's models): each term's value as Pyomo computes it, summed in Pyomo's order
    (``LinearExpression._apply_operation``), so the same float without the expression walker, a third of the
    separation's time at :math:`10^4` points. Anything else, or a variable without a value, goes to ``pyo.value``."""
    if expr.__class__ is not LinearExpression:
        return float(pyo.value(expr))
    values = []
    for a in expr.args:
        cls = a.__class__
        if cls is MonomialTermExpression:
            coef, var = a.args
            x = var.value
            if x is None:
                return float(pyo.value(expr))
            values.append((coef if coef.__class__ is float else pyo.value(coef)) * x)
        elif cls is float or cls is int:
            values.append(a)
        elif a.is_variable_type():
            if a.value is None:
                return float(pyo.value(expr))
            values.append(a.value)
        else:
            return float(pyo.value(expr))
    if not values:
        return 0.0
    terms = iter(values)
    return float(sum(terms, start=next(terms)))


def scenario_sum(coefs: Sequence, delta: np.ndarray, weight: float = 1.0) -> Any:
    """:math:`\\omega\\,a(x)^\\top\\delta` for a fixed :math:`\\delta` (zero entries left out).

    When every coefficient is a variable (the paper's (22): ``w``) the expression is built as the one
    ``LinearExpression`` Pyomo's ``sum()`` of the products makes (a coefficient 1 is the variable itself; a single
    term is that term), without 20 additions' dispatch per cut: a fifth of the cutting planes' own time at
    :math:`3 \\cdot 10^4` points."""
    terms = [(weight * float(d), a) for a, d in zip(coefs, delta) if d != 0]
    if not terms or any(c == 0 or not getattr(a, "is_variable_type", lambda: False)() for c, a in terms):
        return sum(c * a for c, a in terms)
    args = [a if c == 1 else MonomialTermExpression((c, a)) for c, a in terms]
    return args[0] if len(args) == 1 else LinearExpression(args)


def row_with(row: ConstraintData, extra: Any) -> tuple:
    """The row with ``extra`` added to its body, same bounds."""
    lower = None if row.lower is None else pyo.value(row.lower)
    upper = None if row.upper is None else pyo.value(row.upper)
    return (lower, row.body + extra, upper)

def evaluate_point(nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain],
                   values: Mapping[str, float | np.ndarray]) -> Evaluation:
    """:meth:`SemiInfinite.evaluate` of ``values`` (by the nominal model's variable names): the worst
    violation over the uncertainty sets, its row and :math:`\\delta`, and the semi-infinite objective."""
    si = SemiInfinite(nominal, uncertain)
    si.load(values)
    return si.evaluate()


def failure_summary(exc: BaseException) -> str:
    """A solve's failure in one line: a solver's result, or the exception's type and first line."""
    if isinstance(exc, NoOptimalSolutionError):
        r = exc.result
        why = f" ({r.message.splitlines()[0][:120]})" if r.message else ""
        return f"{r.solver} ended {r.termination.value}{why}"
    text = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
    return f"{type(exc).__name__}" + (f": {text}" if text else "")


