"""The counterpart under construction (:class:`CounterpartBuilder`): the clone of the nominal model, its coefficient
vectors (:class:`Coefficients`) and the epigraphs of the support functions written on them, one method a set
(the table of :mod:`tpm_models.models.counterpart`, whose :func:`~tpm_models.models.counterpart.robust_counterpart`
drives it)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr.visitor import identify_mutable_parameters, identify_variables, replace_expressions

from tpm_models.models.norms import add_pnorm_epigraph, conjugate
from tpm_models.models.row_blocks import discard_replaced
from tpm_models.models.shapes import linear_row
from tpm_models.models.uncertainty import (
    Box,
    Budget,
    Ellipsoid,
    NormBall,
    Polyhedron,
    UncertaintySet,
    nominal_objective,
)

Where = Callable[[], str]
"""Names the declaration being derived, for messages (called only when a message is written)."""

Node = Any
"""A Pyomo variable or named expression (Pyomo ships no types): an epigraph of a support function."""


@dataclass
class Coefficients:
    """One coefficient vector :math:`a(x)` on the counterpart, with the name and index its epigraphs take."""

    exprs: list
    base: str
    index: object
    """The index set of the new components (the variable's own set, or a ``RangeSet``)."""
    keys: list
    """The indices of ``index``, in the order of ``exprs``."""
    groups: dict = field(default_factory=dict)
    """Epigraph expressions already written for this vector, by the set's key."""


class CounterpartBuilder:
    """The counterpart under construction: the clone, its coefficient vectors and the epigraphs written."""

    def __init__(self, nominal: pyo.ConcreteModel, name: str | None, inplace: bool):
        objective = nominal_objective(nominal, maximise=True)
        self.sense = 1.0 if objective.sense == pyo.minimize else -1.0
        """+1 minimised, -1 maximised: the objective's worst case is sense * sigma(sense * omega * a)."""
        self.nominal = nominal
        self.inplace = inplace
        self.memo: dict = {}
        self.model = nominal if inplace else nominal.clone(self.memo)
        self.model.name = name or f"robust counterpart of {nominal.name}"
        self.objective = self.mine(objective)
        self.vectors: dict[tuple, Coefficients] = {}
        self.by_list: dict[int, Coefficients] = {}
        self.balls: dict[tuple, tuple[Node, str]] = {}
        self.translated: dict[int, Any] = {}
        self.unnamed = 0
        self.suffix: dict[str, int] = {}
        """The last suffix each name took (:meth:`unique`)."""
        self.totals: dict[int, list] = {}
        """The objective's worst cases, ``[coefficient, node]`` by node."""
        self.notes: dict[int, tuple[Any, list[str]]] = {}
        """What was done to each component (its ``doc`` gets it), by the component's id."""

    # ------------------------------------------------------------------ coefficients

    def mine(self, obj: Any) -> Any:
        """``obj`` (a component of the nominal model) on the counterpart; None if it is not the nominal model's."""
        if not self.inplace:
            return self.memo.get(id(obj))
        return obj if getattr(obj, "model", lambda: None)() is self.nominal else None

    def translate(self, expr: Any, where: Where) -> Any:
        """The user's coefficient (on the nominal model) on the clone; a number stays a float."""
        if isinstance(expr, (int, float, np.floating, np.integer)):
            return float(expr)
        key = id(expr)
        if key in self.translated:
            return self.translated[key]
        if getattr(expr, "is_variable_type", lambda: False)():
            mine = self.mine(expr)
            if mine is None:
                raise ValueError(f"{where()}: coefficient variable {expr.name} is not in the nominal model")
        elif not getattr(expr, "is_potentially_variable", lambda: False)():
            mine = float(pyo.value(expr))  # a Param or a constant expression: its value now (the model's own data)
        else:
            degree = expr.polynomial_degree() if hasattr(expr, "polynomial_degree") else 0
            if degree is None or degree > 1:
                raise ValueError(f"{where()}: a coefficient of delta must be affine in the variables, got {expr}")
            mine = expr if self.inplace else self.rebind(expr, where)
        self.translated[key] = mine
        return mine

    def rebind(self, expr: Any, where: Where) -> Any:
        """``expr`` with the nominal model's variables and mutable Params replaced by the clone's (a Param of no
        model, or of another, by its value): the counterpart references only its own data."""
        subs: dict[int, Any] = {}
        for v in identify_variables(expr, include_fixed=True):
            subs[id(v)] = self.mine(v)
            if subs[id(v)] is None:
                raise ValueError(f"{where()}: coefficient variable {v.name} is not in the nominal model")
        for q in identify_mutable_parameters(expr):
            mine = self.mine(q)
            subs[id(q)] = mine if mine is not None else float(pyo.value(q))
        return replace_expressions(expr, substitution_map=subs, remove_named_expressions=True)

    def vector(self, coefficients: Sequence, where: Where) -> Coefficients:
        if id(coefficients) in self.by_list:  # the same list object: (22)'s w, shared by every row and term
            return self.by_list[id(coefficients)]
        if len(coefficients) == 0:
            raise ValueError(f"{where()}: no coefficients")
        key = tuple(id(a) for a in coefficients)
        if key in self.vectors:
            self.by_list[id(coefficients)] = self.vectors[key]
            return self.vectors[key]
        exprs = [self.translate(a, where) for a in coefficients]
        parent = getattr(exprs[0], "parent_component", lambda: None)()
        whole = (parent is not None and parent.is_indexed() and len(parent) == len(exprs)
                 and all(getattr(e, "is_variable_type", lambda: False)() for e in exprs)
                 and all(e is d for e, d in zip(exprs, parent.values())))
        index: Any = None
        keys: list = []
        if whole and parent is not None:
            base, index, keys = parent.local_name, parent.index_set(), list(parent.keys())
        elif (len(exprs) == 1 and getattr(exprs[0], "is_variable_type", lambda: False)()
              and not exprs[0].parent_component().is_indexed()):
            base = exprs[0].local_name
        else:
            self.unnamed += 1
            base = f"a{self.unnamed}"
        if index is None:
            index = pyo.RangeSet(0, len(exprs) - 1)
            self.model.add_component(self.unique(f"{base}_index"), index)
            keys = list(range(len(exprs)))
        vec = Coefficients(exprs, base, index, keys)
        self.vectors[key] = vec
        self.by_list[id(coefficients)] = vec
        return vec

    def unique(self, name: str) -> str:
        """``name``, or ``name_k`` with the least ``k >= 2`` free. The search starts at the last ``k`` this name
        took (components are only added while deriving, so the ones before are still taken): one lookup a new
        component, where starting at 2 each time was quadratic (a row's own ellipsoid: 10^6 lookups at 10^3 rows)."""
        k = self.suffix.get(name, 1)
        out = name if k == 1 else f"{name}_{k}"
        while self.model.component(out) is not None:
            k += 1
            out = f"{name}_{k}"
        self.suffix[name] = k
        return out

    def add(self, name: str, component: Any) -> Any:
        name = self.unique(name)
        self.model.add_component(name, component)
        return self.model.component(name)

    # ------------------------------------------------------------------ epigraphs of the norms

    def abs_values(self, vec: Coefficients) -> Node:
        """``abs_<a>[j] >= |a_j|``: rows ``abs_<a>_ge_<a>[j]``, ``abs_<a>_ge_minus_<a>[j]``."""
        if "abs" not in vec.groups:
            a = dict(zip(vec.keys, vec.exprs))
            b = vec.base
            var = self.add(f"abs_{b}", pyo.Var(vec.index, domain=pyo.NonNegativeReals,
                                               doc=f"abs_{b}[j] >= |{b}_j| (epigraph of the absolute values)"))
            self.add(f"abs_{b}_ge_{b}", pyo.Constraint(vec.index, rule=lambda _, j: var[j] - a[j] >= 0,
                                                       doc=f"abs_{b}[j] >= {b}_j"))
            self.add(f"abs_{b}_ge_minus_{b}", pyo.Constraint(vec.index, rule=lambda _, j: var[j] + a[j] >= 0,
                                                             doc=f"abs_{b}[j] >= -{b}_j"))
            vec.groups["abs"] = var
        return vec.groups["abs"]

    def dual_norm(self, vec: Coefficients, q: float, why: str) -> Node:
        """An expression :math:`\\ge \\|a\\|_q`, equal to it at the least feasible value (module docstring)."""
        key = ("norm", q)
        if key in vec.groups:
            return vec.groups[key]
        b = vec.base
        a = dict(zip(vec.keys, vec.exprs))
        label = "inf" if math.isinf(q) else f"{q:g}"
        if q == 1.0:
            abs_a = self.abs_values(vec)
            expr = self.add(f"norm_{b}", pyo.Expression(expr=sum(abs_a[j] for j in vec.keys),
                                                        doc=f"|{b}|_1 = sum_j abs_{b}[j] ({why})"))
        else:
            r = self.add(f"norm_{b}", pyo.Var(domain=pyo.NonNegativeReals, doc=f"norm_{b} >= |{b}|_{label} ({why})"))
            if math.isinf(q):
                self.add(f"norm_{b}_ge_{b}", pyo.Constraint(vec.index, rule=lambda _, j: r - a[j] >= 0,
                                                            doc=f"norm_{b} >= {b}_j"))
                self.add(f"norm_{b}_ge_minus_{b}", pyo.Constraint(vec.index, rule=lambda _, j: r + a[j] >= 0,
                                                                  doc=f"norm_{b} >= -{b}_j"))
            elif q == 2.0:
                y = self.on_variables(vec.exprs, r.local_name, b)
                self.add(f"norm_{b}_cone", pyo.Constraint(expr=sum(e**2 for e in y) <= r**2,
                                                          doc=f"sum_j {b}_j^2 <= norm_{b}^2 (a second-order cone)"))
            else:
                r.setlb(0.0)
                r.set_value(0.01)  # the perspective rows are undefined at 0 (add_pnorm_epigraph)
                abs_a = self.abs_values(vec)
                name = self.unique(f"norm_{b}_sum")
                row = add_pnorm_epigraph(self.model, abs_a, r, q, vec.index, z_name=self.unique(f"norm_{b}_z"),
                                         rows_name=self.unique(f"norm_{b}_perspective"),
                                         doc=f"|{b}|_{label} <= norm_{b}")
                self.model.add_component(name, row)
            expr = r
        vec.groups[key] = expr
        return expr

    def on_variables(self, exprs: list, base: str, what: str) -> list:
        """``exprs`` if each is a variable, else new free variables ``<base>_y[k]`` with rows ``<base>_y_def[k]``:
        ``y_k == exprs[k]``. A cone :math:`\\sum_k y_k^2 \\le r^2` on them is a second-order cone of
        ``len(exprs) + 1`` entries, where the squares of the affine expressions themselves would be one dense
        quadratic form in all their variables (:math:`P_i^\\top x`: :math:`n^2` terms a row)."""
        if all_variables(exprs):
            return exprs
        keys = pyo.RangeSet(0, len(exprs) - 1)
        self.add(f"{base}_y_index", keys)
        y = self.add(f"{base}_y", pyo.Var(keys, doc=f"{base}_y[k] = ({what})_k, the entries of its cone"))
        self.add(f"{base}_y_def", pyo.Constraint(keys, rule=lambda _, k: y[k] - exprs[k] == 0,
                                                 doc=f"{base}_y[k] = ({what})_k"))
        return [y[k] for k in keys]

    def ellipsoid_norm(self, vec: Coefficients, shape: np.ndarray, why: str) -> Node:
        """A variable :math:`\\ge\\|L^\\top a\\|_2`, :math:`\\Sigma = LL^\\top` (Cholesky; else a square root)."""
        key = ("ellipsoid", shape.tobytes(), shape.shape)
        if key in vec.groups:
            return vec.groups[key]
        diagonal = np.diag(shape)
        try:
            if not np.any(shape - np.diag(diagonal)) and (diagonal >= 0).all():
                L = np.diag(np.sqrt(diagonal))  # an axis-aligned ellipsoid: its Cholesky factor, also when singular
            else:
                L = np.linalg.cholesky(shape)
        except np.linalg.LinAlgError:
            vals, vecs = np.linalg.eigh(shape)
            if vals.min() < -1e-12 * max(1.0, abs(vals).max()):
                raise ValueError("an ellipsoid's shape matrix must be positive semidefinite") from None
            L = vecs * np.sqrt(np.clip(vals, 0, None))
        b = vec.base
        r = self.add(f"ellipsoid_{b}", pyo.Var(domain=pyo.NonNegativeReals,
                                               doc=f"ellipsoid_{b} >= |L'{b}|_2, Sigma = LL' ({why})"))
        if all_variables(vec.exprs) and not np.any(L - np.diag(np.diag(L))):
            cols = [float(L[j, j]) * e for j, e in enumerate(vec.exprs) if L[j, j] != 0]  # a square each
        else:
            cols = self.on_variables([combination(L[:, k], vec.exprs) for k in range(L.shape[1])],
                                     r.local_name, f"L'{b}")
        self.add(f"ellipsoid_{b}_cone", pyo.Constraint(expr=sum(e**2 for e in cols) <= r**2,
                                                       doc=f"|L'{b}|_2 <= ellipsoid_{b} (a second-order cone)"))
        vec.groups[key] = r
        return r

    def budget(self, vec: Coefficients, uset: Budget, sign: float, why: str) -> Node:
        """:math:`\\Gamma\\lambda + \\sum_j\\mu_j \\ge \\sigma(\\mathrm{sign}\\cdot a)` by LP duality."""
        d = np.broadcast_to(np.asarray(uset.deviation, float), (len(vec.exprs),))
        if (d < 0).any() or uset.gamma < 0:
            raise ValueError("a budget set needs deviations >= 0 and gamma >= 0")
        key = ("budget", sign, d.tobytes(), float(uset.gamma))
        if key in vec.groups:
            return vec.groups[key]
        b = vec.base + ("" if sign > 0 else "_minus")
        a = dict(zip(vec.keys, vec.exprs))
        dev = dict(zip(vec.keys, d.tolist()))
        lam = self.add(f"budget_{b}_lam", pyo.Var(domain=pyo.NonNegativeReals, doc=f"lambda >= 0, dual of sum z <= "
                                                  f"Gamma in the support of a budget set ({why})"))
        mu = self.add(f"budget_{b}_mu", pyo.Var(vec.index, domain=pyo.NonNegativeReals,
                                                doc="mu_j >= 0, dual of z_j <= 1"))
        sgn = "" if sign > 0 else "-"
        on_variables = all_variables(vec.exprs)

        def dual_row(_: Any, j: Any) -> Any:
            c = sign * dev[j]
            if not on_variables:
                return lam + mu[j] - c * a[j] >= 0
            # one LinearExpression, as the operators make it, without their dispatch: 10^5 rows at 10^3 budget sets
            return linear_row([1.0, 1.0, -c] if c else [1.0, 1.0], [lam, mu[j], a[j]] if c else [lam, mu[j]]) >= 0

        self.add(f"budget_{b}_dual", pyo.Constraint(
            vec.index, rule=dual_row, doc=f"lambda + mu_j >= d_j * {sgn}{vec.base}_j (dual rows)"))
        expr = self.add(f"budget_{b}", pyo.Expression(expr=float(uset.gamma) * lam + sum(mu[j] for j in vec.keys),
                                                      doc=f"Gamma*lambda + sum_j mu_j >= max over the budget set of "
                                                          f"{sgn}{vec.base}'delta"))
        vec.groups[key] = expr
        return expr

    def polyhedron(self, vec: Coefficients, uset: Polyhedron, sign: float, why: str,
                   bounded: bool = True) -> Node:
        """:math:`b^\\top y \\ge \\sigma(\\pm a)` for :math:`A^\\top y = \\pm a,\\ y\\ge0` (LP duality).
        ``bounded=False`` for a member of an intersection, which may be unbounded alone (a slab): its dual rows
        then restrict the member's share of ``a``, still exactly."""
        A, rhs = uset.arrays()
        if A.shape[1] != len(vec.exprs):
            raise ValueError(f"{why}: a polyhedron in R^{A.shape[1]} cannot perturb {len(vec.exprs)} coefficients")
        key = ("polyhedron", sign, A.tobytes(), A.shape, rhs.tobytes())
        if key in vec.groups:
            return vec.groups[key]
        if bounded:
            uset.check_bounded()
        b = vec.base + ("" if sign > 0 else "_minus")
        a = dict(zip(vec.keys, vec.exprs))
        col = dict(zip(vec.keys, range(len(vec.keys))))
        rows = pyo.RangeSet(0, A.shape[0] - 1)
        self.add(f"polyhedron_{b}_rows", rows)
        y = self.add(f"polyhedron_{b}_y", pyo.Var(rows, domain=pyo.NonNegativeReals,
                                                  doc=f"y_k >= 0, dual of row k of A delta <= b ({why})"))
        sgn = "" if sign > 0 else "-"
        self.add(f"polyhedron_{b}_dual", pyo.Constraint(
            vec.index, rule=lambda _, j: sum(float(A[k, col[j]]) * y[k] for k in rows if A[k, col[j]] != 0)
            - sign * a[j] == 0, doc=f"sum_k A_kj y_k = {sgn}{vec.base}_j (dual rows)"))
        expr = self.add(f"polyhedron_{b}", pyo.Expression(
            expr=sum(float(rhs[k]) * y[k] for k in rows if rhs[k] != 0),
            doc=f"b'y >= max over A delta <= b of {sgn}{vec.base}'delta"))
        vec.groups[key] = expr
        return expr

    # ------------------------------------------------------------------ the support function

    def support(self, vec: Coefficients, uset: UncertaintySet, s: float, why: Where) -> tuple[float, Node, str]:
        """``(c, node, how)``: :math:`c\\cdot\\mathrm{node} \\ge \\sigma_{\\mathcal U}(s\\,a)`, equal at its least value
        (``node`` None: :math:`\\sigma = 0`), and how it was written. ``node`` is a shared epigraph wherever the set
        allows (module docstring), so that callers can add up the coefficients of one node. ``why``: a callable
        naming the declaration, for messages."""
        if type(uset) is NormBall:  # the fast path: (22) has one ball per point
            if s == 0 or uset.radius == 0:
                return 0.0, None, "a point: unchanged"
            key = (id(vec), uset.p)
            if key not in self.balls:
                ball = f"the dual norm of the l_{uset.p:g} balls"
                self.balls[key] = (self.dual_norm(vec, conjugate(uset.p), ball),
                                   f"l_{uset.p:g} ball: radius * norm_{vec.base}")
            node, how = self.balls[key]
            return abs(s) * uset.radius, node, how
        if s == 0 or uset.is_point() and not isinstance(uset, Box):
            return 0.0, None, "a point: unchanged"
        if isinstance(uset, Box):
            lo, up = uset.bounds(len(vec.exprs))
            center, half = (lo + up) / 2, (up - lo) / 2
            expr = 0.0
            if np.any(center):
                expr = s * sum(float(c) * e for c, e in zip(center, vec.exprs) if c != 0)
            if np.any(half):
                abs_a = self.abs_values(vec)
                expr = expr + abs(s) * linear_row(half, [abs_a[j] for j in vec.keys])
            return (1.0, None if is_zero(expr) else expr, f"box: center + half-widths * abs_{vec.base}")
        if isinstance(uset, Ellipsoid):
            shape = np.asarray(uset.shape, float)
            if shape.shape != (len(vec.exprs), len(vec.exprs)):
                raise ValueError(f"{why()}: an ellipsoid of shape {shape.shape} for {len(vec.exprs)} coefficients")
            first = f"first used by {why()}"
            return abs(s) * uset.radius, self.ellipsoid_norm(vec, shape, first), f"ellipsoid: ellipsoid_{vec.base}"
        if isinstance(uset, Budget):
            first = f"first used by {why()}"
            return abs(s), self.budget(vec, uset, math.copysign(1.0, s), first), "budget set: LP dual"
        if isinstance(uset, Polyhedron):
            return (abs(s), self.polyhedron(vec, uset, math.copysign(1.0, s), f"first used by {why()}"),
                    "polyhedron: LP dual")
        raise TypeError(f"{why()}: no counterpart for the set {type(uset).__name__}")

    def note(self, component: Any, text: str) -> None:
        """Record ``text`` for ``component`` (a component of the counterpart, in any block)."""
        notes = self.notes.setdefault(id(component), (component, []))[1]
        if text not in notes:
            notes.append(text)

    def finish(self) -> None:
        """Add the objective's worst cases, write the notes into the ``doc`` of their components, and drop the row
        records that can never hold again."""
        if self.totals:
            worst = sum(node if coef == 1.0 else coef * node for coef, node in self.totals.values())
            self.objective.set_value(self.objective.expr + (worst if self.sense > 0 else -worst))
        for comp, notes in self.notes.values():
            comp.doc = ((comp.doc + "; ") if comp.doc else "") + "robust counterpart: " + "; ".join(notes)
        discard_replaced(self.model)  # the records of the rows made robust (set anew) can never hold again


def all_variables(exprs: Sequence) -> bool:
    return all(getattr(e, "is_variable_type", lambda: False)() for e in exprs)


def combination(weights: np.ndarray, exprs: Sequence) -> Any:
    """:math:`\\sum_j w_j e_j` over the nonzero weights: one ``LinearExpression`` on variables, else a sum."""
    if all_variables(exprs):
        return linear_row(weights, exprs)
    return sum(float(w) * e for w, e in zip(weights, exprs) if w != 0)


def is_zero(expr: object) -> bool:
    return isinstance(expr, (int, float)) and expr == 0
