"""What a Pyomo model holds and where its values stand: its class, its values, its violations.

Nothing here solves; :func:`tpm_models.solvers.dispatch.solve` and the checks use these readings.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.core as pyo
from pyomo.repn import generate_standard_repn

from tpm_models.certify.tolerances import PSD_TOL
from tpm_models.solvers.components import UnsupportedComponentError, read_components, unread_domains
from tpm_models.solvers.program import Program, title
from tpm_models.solvers.variables import integer_mask
from tpm_models.solvers.violation import row_violation

_VALUE = operator.attrgetter("value")


def _structure(expr):
    """The standard representation of ``expr`` with parameters kept as symbols (``compute_values=False``):
    what the expression *holds*, whatever the current values of its mutable ``Param`` s."""
    return generate_standard_repn(expr, quadratic=True, compute_values=False)


@dataclass(frozen=True)
class ModelTraits:
    """What :func:`model_traits` read from a model: its class and what decides which backends may take it."""

    kind: str
    """``"LP"``, ``"QP"``, ``"SOCP"`` or ``"NLP"`` (:func:`model_class`)."""
    integers: tuple[str, ...] = ()
    """Names of the variables (at most 5) whose domain is integer or binary; empty for a continuous model."""
    nonconvex: str | None = None
    """Why the model is proved not convex (a quadratic part fails the PSD test, :data:`PSD_TOL`), or ``None``."""
    convex: bool = False
    """Proved convex from what it holds (``False`` also when unknown: an NLP with rows of other functions)."""
    sos: bool = False
    """The model holds active ``SOSConstraint`` s (only a backend that declares them takes it)."""


def model_class(model: pyo.ConcreteModel) -> str:
    """``"LP"``, ``"QP"`` (quadratic objective, linear rows), ``"SOCP"`` (linear or quadratic objective; every
    nonlinear row a second-order cone ``sum a_k x_k^2 <= b y^2``, ``a, b > 0``, ``y >= 0``, or a convex quadratic row)
    or ``"NLP"``, read from what the model *holds*, not its parameters' values ((23) at p = 2 is an NLP at
    ``eps = 0`` too); only the cone test reads the signs of the quadratic coefficients."""
    return model_traits(model).kind


def model_traits(model: pyo.ConcreteModel, kind: str | None = None, program: Program | None = None) -> ModelTraits:
    """The model's class (:func:`model_class`), its integer variables, and whether it is proved convex or not, in
    one walk through its rows: the objective's quadratic part PSD (NSD for a maximisation), each quadratic row
    ``g(x) <= u`` (``>= l``) PSD (NSD), a (shifted or rotated) cone, not an equality. A row with another function
    leaves convexity unknown and stops the walk (a non-convex quadratic row after it is not named). ``kind``: the
    class, when the caller has it (the rows are then not walked). ``program``: the solve's reading of ``model``.
    Raises :class:`UnsupportedComponentError` for a component or a domain no solve reads."""
    sos = read_components(model)  # every active component read or refused by name, before anything else
    program = Program(model) if program is None else program
    objective = program.objective
    variables = program.free
    odd = unread_domains(variables)
    if odd:
        raise UnsupportedComponentError(
            f"{title(model)}: the domain of {', '.join(odd)} is not an interval of the reals or the integers (a "
            "finite set of values?); no backend here reads it: write the choice with binary variables instead")
    integers = tuple(variables[k].name for k in np.flatnonzero(integer_mask(variables))[:5])
    sense = 1.0 if objective.sense == pyo.minimize else -1.0
    # the objective's degree read from its terms, without the (slower) standard representation
    degree: int | None
    if isinstance(objective.expr, (int, float)) or program.linear_objective is not None:
        degree = 1  # a linear objective ((26)-(29)), read fast: Pyomo's degree walk reads its 10^5 terms slowly
    elif program.quadratic_objective is not None:
        degree = 2  # every node a product of two free columns (product_terms): each node's degree walk not needed
    else:
        degree = _degree(objective, program.objective_terms)
    quadratic, psd = False, True
    if degree is not None and degree >= 2:
        read = program.quadratic_objective  # its products, else its standard representation
        if read is not None:
            quadratic = bool(len(read[0]))
            psd = not quadratic or _psd_terms(read[0], read[1], read[2], sense)
        else:
            obj = _structure(objective.expr)
            quadratic = bool(obj.quadratic_vars)
            if obj.nonlinear_expr is not None:
                degree = None
            else:
                psd = not quadratic or _psd(obj, sense)
    nonconvex = None if psd else "the objective's quadratic part is not " + ("convex" if sense > 0 else "concave")
    if kind is not None:
        return ModelTraits(kind, integers, nonconvex, nonconvex is None and kind != "NLP", sos)
    kind = "NLP" if degree is None else None
    conic, general = False, degree is None
    signs: set[int] | None = None
    for con in program.rows.others:  # the linear rows: read fast
        repn = _structure(con.body)
        if repn.nonlinear_expr is not None:  # convexity unknown from here: the walk stops (a large NLP is long)
            kind, general = "NLP", True
            break
        if not repn.quadratic_vars:
            continue
        if signs is None:
            signs = program.signs
        if _is_cone(con, repn, signs) or _convex_quadratic_row(con, repn, signs):
            conic = True  # a cone, or a convex quadratic row (a cone once factored): what SOCP backends take
            continue
        kind = "NLP"
        if nonconvex is None:
            nonconvex = f"constraint {con.name} is a quadratic row that is not convex"
    if kind is None:
        kind = "SOCP" if conic else ("QP" if quadratic else "LP")
    return ModelTraits(kind, integers, nonconvex, nonconvex is None and not general, sos)


def _degree(objective: Any, read: tuple | None) -> int | None:
    """``objective.expr.polynomial_degree()``, read from its terms ``read``
    (:attr:`~tpm_models.solvers.program.Program.objective_terms`), each distinct node's degree taken once."""
    if read is None:
        return objective.expr.polynomial_degree()
    degree, seen = (1 if read[0] else 0), set()
    for _, node in read[3]:
        if id(node) in seen:
            continue
        seen.add(id(node))
        d = node.polynomial_degree() if not isinstance(node, (int, float)) else 0
        if d is None:
            return None
        degree = max(degree, d)
    return degree


def _psd_terms(qi: np.ndarray, qj: np.ndarray, qa: np.ndarray, sign: float) -> bool:
    """:func:`_psd` of ``sum_k qa_k x_{qi_k} x_{qj_k}`` (:func:`tpm_models.solvers.expression_terms.product_terms`)."""
    index, inverse = np.unique(np.concatenate([qi, qj]), return_inverse=True)
    a, b = inverse[:len(qi)], inverse[len(qi):]
    if (a == b).all():
        diagonal = np.zeros(len(index))
        np.add.at(diagonal, a, sign * qa)
        return bool((diagonal >= 0).all())
    Q = np.zeros((len(index), len(index)))
    np.add.at(Q, (a, b), sign * qa / 2)
    np.add.at(Q, (b, a), sign * qa / 2)
    lam = np.linalg.eigvalsh(Q)
    return bool(lam.min() >= -PSD_TOL * max(1.0, float(np.abs(lam).max())))


def _psd(repn: Any, sign: float) -> bool:
    """Whether ``sign`` times the quadratic part of ``repn`` is a positive semidefinite form (:data:`PSD_TOL`):
    :func:`_psd_terms` of its products, the variables numbered in order of appearance."""
    index: dict[int, int] = {}
    ends = np.array([(index.setdefault(id(u), len(index)), index.setdefault(id(v), len(index)))
                     for u, v in repn.quadratic_vars], dtype=np.int64).reshape(-1, 2)
    coefs = np.array([float(pyo.value(c)) for c in repn.quadratic_coefs], dtype=float)
    return _psd_terms(ends[:, 0], ends[:, 1], coefs, sign)


def _nonnegative(v: Any, rows: AbstractSet[int] = frozenset()) -> bool:
    """``v >= 0`` by its bound or by a row of its own (:func:`tpm_models.solvers.rows.sign_rows`)."""
    return (v.lb is not None and pyo.value(v.lb) >= 0) or id(v) in rows


def _convex_quadratic_row(con: Any, repn: Any, signs: set[int]) -> bool:
    """A quadratic row (not a plain cone) whose feasible set is convex: a PSD form on its ``<=`` side (NSD on its
    ``>=`` side), or a rotated cone ``sum a_k x_k^2 - b t s <= 0`` / ``b t s >= c`` (``t, s >= 0``, ``c >= 0``)."""
    if con.equality or (con.lower is not None and con.upper is not None):
        return False
    sign = 1.0 if con.upper is not None else -1.0
    if _psd(repn, sign) or _is_shifted_cone(con, repn, sign, signs):
        return True
    quad = [(u, v, sign * float(pyo.value(c))) for (u, v), c in zip(repn.quadratic_vars, repn.quadratic_coefs)]
    cross = [term for term in quad if term[0] is not term[1]]
    if len(cross) != 1 or cross[0][2] >= 0 or repn.linear_vars:
        return False
    t, s_, _ = cross[0]
    squares = [(u, a) for u, v, a in quad if u is v]
    c0 = sign * (pyo.value(repn.constant) - pyo.value(con.upper if sign > 0 else con.lower))
    return (_nonnegative(t, signs) and _nonnegative(s_, signs) and c0 >= 0
            and all(a > 0 and u is not t and u is not s_ for u, a in squares))


def _is_shifted_cone(con: Any, repn: Any, sign: float, signs: set[int]) -> bool:
    r"""``g = ||F x + g0||^2 + c0 - b (y - h)^2 <= 0`` with ``c0 >= 0``, ``b > 0`` and ``y >= h`` implied (by ``y``'s
    bound, or ``h <= 0`` and ``y >= 0``), ``y`` in no product with another variable: the second-order cone
    :math:`\sqrt{\|Fx + g_0\|^2 + c_0} \le \sqrt b\,(y - h)`, shifted (``sum_k (x_k - a_k)^2 <= y^2``,
    ``x^2 + z^2 <= (t + 1)^2`` with ``t >= 0``). ``h`` is read off ``y``'s linear term by completing the square."""
    quad = [(u, v, sign * float(pyo.value(c))) for (u, v), c in zip(repn.quadratic_vars, repn.quadratic_coefs)]
    negative = [(u, c) for u, v, c in quad if u is v and c < 0]
    if len(negative) != 1:
        return False
    y, minus_b = negative[0]
    if any((u is y) != (v is y) for u, v, _ in quad):
        return False
    l_y = sum(sign * float(pyo.value(c)) for v, c in zip(repn.linear_vars, repn.linear_coefs) if v is y)
    h = -l_y / (2 * minus_b)  # -b y^2 + l_y y = -b (y - h)^2 + b h^2, with minus_b = -b and h = l_y / (2 b)
    lower = pyo.value(y.lb) if y.lb is not None else None
    if not ((lower is not None and lower >= h) or (h <= 0 and _nonnegative(y, signs))):
        return False
    shift = minus_b * h * h  # -b h^2: completing the square adds b h^2 to the cone's constant (c0 below)
    index: dict[int, int] = {}
    for u, v, _ in quad:
        if u is not y:
            index.setdefault(id(u), len(index))
            index.setdefault(id(v), len(index))
    for v in repn.linear_vars:
        if v is not y:
            index.setdefault(id(v), len(index))
    Q, lin = np.zeros((len(index), len(index))), np.zeros(len(index))
    for u, v, c in quad:
        if u is not y:
            Q[index[id(u)], index[id(v)]] += c / 2
            Q[index[id(v)], index[id(u)]] += c / 2
    for v, c in zip(repn.linear_vars, repn.linear_coefs):
        if v is not y:
            lin[index[id(v)]] += sign * float(pyo.value(c))
    lam, V = np.linalg.eigh(Q) if len(index) else (np.zeros(0), np.zeros((0, 0)))
    top = max(1.0, float(np.abs(lam).max(initial=0.0)))
    if lam.size and lam.min() < -PSD_TOL * top:
        return False
    keep = lam > PSD_TOL * top
    projected = V.T @ lin
    if np.abs(projected[~keep]).max(initial=0.0) > 1e-9 * (1.0 + np.abs(lin).max(initial=0.0)):
        return False  # a linear term outside the range of Q: the quadratic is unbounded below
    bound = pyo.value(con.upper if sign > 0 else con.lower)
    c0 = sign * (pyo.value(repn.constant) - bound) - float((projected[keep] ** 2 / (4 * lam[keep])).sum()) - shift
    return c0 >= -1e-9 * (1.0 + abs(bound))


def _is_cone(con: Any, repn: Any, signs: AbstractSet[int] = frozenset()) -> bool:
    """``sum a_k x_k^2 - b y^2 <= 0`` (or its negation >= 0) with a, b > 0 and y >= 0."""
    if repn.linear_vars or pyo.value(repn.constant) != 0:
        return False
    if con.upper is not None and con.lower is None and pyo.value(con.upper) == 0:
        sign = 1.0
    elif con.lower is not None and con.upper is None and pyo.value(con.lower) == 0:
        sign = -1.0
    else:
        return False
    negative = []
    for (u, v), coef in zip(repn.quadratic_vars, repn.quadratic_coefs):
        if u is not v:
            return False
        if sign * pyo.value(coef) < 0:
            negative.append(u)
    return len(negative) == 1 and _nonnegative(negative[0], signs)


def component_values(model: pyo.ConcreteModel, get: Callable, ctype: Any) -> dict[str, float | np.ndarray]:
    """``get(data)`` of every component of type ``ctype`` by name: a float for a scalar component,
    an array in index order otherwise (the layout of :class:`tpm_models.solvers.common.SolveResult`); NaN where
    ``get`` returns ``None``."""
    out: dict[str, float | np.ndarray] = {}
    for comp in model.component_objects(ctype, active=None if ctype is pyo.Var else True, descend_into=True):
        if comp.is_indexed():
            # a dense component's values() are its data in index order; a sparse one's (Var(dense=False),
            # Constraint.Skip) read by index, NaN where it has no member (comp[k] would add one to a Var)
            index = comp.index_set()
            if not index.isfinite() or len(comp) == len(index):  # a Reference over Any: its members, in order
                data: Iterable = map(get, comp.values())
            else:
                data = (get(comp[k]) if k in comp else None for k in comp.index_set())
            out[comp.local_name] = np.array(list(data), dtype=float)  # None (unset) -> NaN
        else:
            value = get(comp)
            out[comp.local_name] = np.nan if value is None else float(value)
    return out


def values_of(model: pyo.ConcreteModel) -> dict[str, float | np.ndarray]:
    """Current variable values by component name (NaN where unset)."""
    return component_values(model, _VALUE, pyo.Var)


def solution_values(model: pyo.ConcreteModel, duals: dict | None) -> tuple[dict, dict | None]:
    """:func:`values_of` the model and its rows' ``duals`` (by constraint data) by component name, NaN where a row
    has none; ``None`` for no duals."""
    return values_of(model), None if duals is None else component_values(model, duals.get, pyo.Constraint)


def max_violation(model: pyo.ConcreteModel) -> float:
    """Largest violation of a constraint or variable bound at the model's current values."""
    worst = 0.0
    for v in model.component_data_objects(pyo.Var, descend_into=True):
        if v.value is None:
            return math.inf
        if v.lb is not None:
            worst = max(worst, v.lb - v.value)
        if v.ub is not None:
            worst = max(worst, v.value - v.ub)
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        worst = max(worst, row_violation(con))
    return float(worst)
