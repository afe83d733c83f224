"""Derive the robust counterpart of a nominal Pyomo model: :func:`robust_counterpart`.

The input is what the verifier takes (:mod:`tpm_models.models.uncertainty`): a nominal model (one active
objective, minimised) and its uncertain data, rows :math:`l \\le \\mathrm{body}(x) + a(x)^\\top\\delta \\le u`
for all :math:`\\delta\\in\\mathcal U` (:class:`~tpm_models.models.uncertainty.UncertainRow`) and objective terms
:math:`\\max_{\\delta\\in\\mathcal U}\\omega\\,a(x)^\\top\\delta`
(:class:`~tpm_models.models.uncertainty.UncertainTerm`),
:math:`a(x)` affine. The output is a **new** model (the nominal one is not touched) in which every such row and
term is replaced by its worst case, written by conic duality with the support function
:math:`\\sigma_{\\mathcal U}(g) = \\max_{\\delta\\in\\mathcal U} g^\\top\\delta`:

.. math::
    \\mathrm{body}(x) - \\sigma_{\\mathcal U}(-a(x)) \\ge l, \\qquad
    \\mathrm{body}(x) + \\sigma_{\\mathcal U}(a(x)) \\le u, \\qquad
    \\text{objective} + \\textstyle\\sum_k \\sigma_{\\mathcal U_k}(\\omega_k a_k(x)).

Each :math:`\\sigma` is an expression of new variables that is :math:`\\ge\\sigma` for every feasible value of
them and equal to it at the best (an epigraph): minimising, or a row that wants it small, drives it down to
:math:`\\sigma`. By set (:math:`s` the sign and size of the multiplier of :math:`a`: :math:`-1`, :math:`+1` or
:math:`\\omega`):

==========================  =============================================  ==================================
set                         :math:`\\sigma_{\\mathcal U}(s\\,a)`             new components (``a`` = ``w``)
==========================  =============================================  ==================================
``NormBall(p, r)``          :math:`|s|\\,r\\,\\|a\\|_{p'}` (25)                ``norm_w`` :math:`\\ge\\|w\\|_{p'}`
``Box(l, u)``               :math:`s\\,c^\\top a + |s|\\,h^\\top|a|`,            ``abs_w[j]`` :math:`\\ge|w_j|`
                            :math:`c=\\frac{l+u}2`, :math:`h=\\frac{u-l}2`
``Ellipsoid(Sigma, r)``     :math:`|s|\\,r\\,\\|L^\\top a\\|_2`,                 ``ellipsoid_w``, a cone
                            :math:`\\Sigma = LL^\\top`
``Budget(d, Gamma)``        :math:`|s|\\min\\{\\Gamma\\lambda+e^\\top\\mu :`      ``budget_w_lam``, ``budget_w_mu[j]``
                            :math:`\\lambda+\\mu_j\\ge d_j\\,\\mathrm{sgn}(s)a_j,\\ \\lambda,\\mu\\ge0\\}`
``Polyhedron(A, b)``        :math:`|s|\\min\\{b^\\top y : A^\\top y =`          ``polyhedron_w_y[k]``
                            :math:`\\mathrm{sgn}(s)\\,a,\\ y\\ge0\\}` (LP duality)
==========================  =============================================  ==================================

The norm :math:`\\|a\\|_{p'}` is written as in the paper's builders: :math:`p'=\\infty` (:math:`p=1`) by
``norm_w >= +-a_j`` (as (27)'s ``s``); :math:`p'=1` (:math:`p=\\infty`) by ``abs_w[j] >= +-a_j`` and the sum
(as (29)'s ``s[j]``); :math:`p'=2` by the cone ``sum_j a_j^2 <= norm_w^2`` (as (28)'s ``t``); any other
:math:`p'` by ``abs_w`` and the power-cone rows of :func:`tpm_models.models.norms.add_pnorm_epigraph` (as (23)
and (26)).

**Shared, not repeated.** Support functions are positively homogeneous, :math:`\\sigma(|s|g) = |s|\\sigma(g)`, so
the rows and terms with the same coefficients :math:`a` and the same set up to its size share one epigraph:
(22) under (21) gets a single ``norm_w`` for its :math:`m` rows and :math:`m_{-c}` terms (the rows read
:math:`\\ldots - \\varepsilon_i\\,\\mathrm{norm\\_w} \\ge 0`), and the objective one term
:math:`\\frac{\\nu}{m_{-c}}\\big(\\sum_i\\varepsilon_i\\big)\\mathrm{norm\\_w}`, as (23) writes it. One epigraph
serves every row at once because each row only needs :math:`\\sigma` small, and the epigraph's least value is
:math:`\\sigma` for all of them together. The work is one pass over the declarations, linear in their number.

**Names.** A robustified row keeps its name (``margin[i]``) and gets its new body; its component's ``doc``
says which set and which epigraph. A coefficient vector that is a whole indexed variable in index order
(``[m.w[j] for j in m.J]``) names the new components after it (``norm_w``, ``abs_w``) and indexes them by its
index set; otherwise ``a1``, ``a2``, ... A ranged row (both bounds) keeps its lower side in place and gets its
upper side in a new ``<component>_upper``.

One concern, one module (about 520 lines, a third of them this docstring): the derivation and the registration of
what it derives; the declarations it reads are :mod:`tpm_models.models.uncertainty` and
:mod:`tpm_models.models.declare`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression
from pyomo.core.expr.visitor import identify_mutable_parameters, identify_variables, replace_expressions

from tpm_models.models import shapes
from tpm_models.models.norms import add_pnorm_epigraph, conjugate
from tpm_models.models.registry import model_info, register_model
from tpm_models.models.row_blocks import discard_replaced
from tpm_models.models.shapes import linear_row
from tpm_models.models.uncertainty import (
    Box,
    Budget,
    Ellipsoid,
    NormBall,
    Polyhedron,
    Uncertain,
    UncertainRow,
    UncertainTerm,
    UncertaintySet,
    nominal_objective,
)


@dataclass
class _Coefficients:
    """One coefficient vector :math:`a(x)` on the counterpart, with the name and index its epigraphs take."""

    exprs: list
    base: str
    index: object
    """The index set of the new components (the variable's own set, or a ``RangeSet``)."""
    keys: list
    """The indices of ``index``, in the order of ``exprs``."""
    groups: dict = field(default_factory=dict)
    """Epigraph expressions already written for this vector, by the set's key."""


class _Builder:
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
        self.vectors: dict[tuple, _Coefficients] = {}
        self.by_list: dict[int, _Coefficients] = {}
        self.balls: dict[tuple, tuple] = {}
        self.translated: dict[int, object] = {}
        self.unnamed = 0
        self.totals: dict[int, list] = {}
        """The objective's worst cases, ``[coefficient, node]`` by node."""
        self.notes: dict[int, tuple[object, list[str]]] = {}
        """What was done to each component (its ``doc`` gets it), by the component's id."""

    # ------------------------------------------------------------------ coefficients

    def mine(self, obj):
        """``obj`` (a component of the nominal model) on the counterpart; None if it is not the nominal model's."""
        if not self.inplace:
            return self.memo.get(id(obj))
        return obj if getattr(obj, "model", lambda: None)() is self.nominal else None

    def translate(self, expr, where):
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

    def rebind(self, expr, where):
        """``expr`` with the nominal model's variables and mutable Params replaced by the clone's (a Param of no
        model, or of another, by its value): the counterpart references only its own data."""
        subs = {}
        for v in identify_variables(expr, include_fixed=True):
            subs[id(v)] = self.mine(v)
            if subs[id(v)] is None:
                raise ValueError(f"{where()}: coefficient variable {v.name} is not in the nominal model")
        for q in identify_mutable_parameters(expr):
            mine = self.mine(q)
            subs[id(q)] = mine if mine is not None else float(pyo.value(q))
        return replace_expressions(expr, substitution_map=subs, remove_named_expressions=True)

    def vector(self, coefficients: Sequence, where) -> _Coefficients:
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
        if whole:
            base, index, keys = parent.local_name, parent.index_set(), list(parent.keys())
        elif (len(exprs) == 1 and getattr(exprs[0], "is_variable_type", lambda: False)()
              and not exprs[0].parent_component().is_indexed()):
            base, index, keys = exprs[0].local_name, None, [None]
        else:
            self.unnamed += 1
            base, index, keys = f"a{self.unnamed}", None, None
        if index is None:
            index = pyo.RangeSet(0, len(exprs) - 1)
            self.model.add_component(self.unique(f"{base}_index"), index)
            keys = list(range(len(exprs)))
        vec = _Coefficients(exprs, base, index, keys)
        self.vectors[key] = vec
        self.by_list[id(coefficients)] = vec
        return vec

    def unique(self, name: str) -> str:
        out, k = name, 1
        while self.model.component(out) is not None:
            k += 1
            out = f"{name}_{k}"
        return out

    def add(self, name: str, component) -> object:
        name = self.unique(name)
        self.model.add_component(name, component)
        return self.model.component(name)

    # ------------------------------------------------------------------ epigraphs of the norms

    def abs_values(self, vec: _Coefficients):
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

    def dual_norm(self, vec: _Coefficients, q: float, why: str):
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
        if _all_variables(exprs):
            return exprs
        keys = pyo.RangeSet(0, len(exprs) - 1)
        self.add(f"{base}_y_index", keys)
        y = self.add(f"{base}_y", pyo.Var(keys, doc=f"{base}_y[k] = ({what})_k, the entries of its cone"))
        self.add(f"{base}_y_def", pyo.Constraint(keys, rule=lambda _, k: y[k] - exprs[k] == 0,
                                                 doc=f"{base}_y[k] = ({what})_k"))
        return [y[k] for k in keys]

    def ellipsoid_norm(self, vec: _Coefficients, shape: np.ndarray, why: str):
        """A variable :math:`\\ge\\|L^\\top a\\|_2`, :math:`\\Sigma = LL^\\top` (Cholesky; else a square root)."""
        key = ("ellipsoid", shape.tobytes(), shape.shape)
        if key in vec.groups:
            return vec.groups[key]
        try:
            L = np.linalg.cholesky(shape)
        except np.linalg.LinAlgError:
            vals, vecs = np.linalg.eigh(shape)
            if vals.min() < -1e-12 * max(1.0, abs(vals).max()):
                raise ValueError("an ellipsoid's shape matrix must be positive semidefinite") from None
            L = vecs * np.sqrt(np.clip(vals, 0, None))
        b = vec.base
        r = self.add(f"ellipsoid_{b}", pyo.Var(domain=pyo.NonNegativeReals,
                                               doc=f"ellipsoid_{b} >= |L'{b}|_2, Sigma = LL' ({why})"))
        if _all_variables(vec.exprs) and not np.any(L - np.diag(np.diag(L))):
            cols = [float(L[j, j]) * e for j, e in enumerate(vec.exprs) if L[j, j] != 0]  # a square each
        else:
            cols = self.on_variables([_combination(L[:, k], vec.exprs) for k in range(L.shape[1])],
                                     r.local_name, f"L'{b}")
        self.add(f"ellipsoid_{b}_cone", pyo.Constraint(expr=sum(e**2 for e in cols) <= r**2,
                                                       doc=f"|L'{b}|_2 <= ellipsoid_{b} (a second-order cone)"))
        vec.groups[key] = r
        return r

    def budget(self, vec: _Coefficients, uset: Budget, sign: float, why: str):
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
        self.add(f"budget_{b}_dual", pyo.Constraint(
            vec.index, rule=lambda _, j: lam + mu[j] - sign * dev[j] * a[j] >= 0,
            doc=f"lambda + mu_j >= d_j * {sgn}{vec.base}_j (dual rows)"))
        expr = self.add(f"budget_{b}", pyo.Expression(expr=float(uset.gamma) * lam + sum(mu[j] for j in vec.keys),
                                                      doc=f"Gamma*lambda + sum_j mu_j >= max over the budget set of "
                                                          f"{sgn}{vec.base}'delta"))
        vec.groups[key] = expr
        return expr

    def polyhedron(self, vec: _Coefficients, uset: Polyhedron, sign: float, why: str):
        """:math:`b^\\top y \\ge \\sigma(\\pm a)` for :math:`A^\\top y = \\pm a,\\ y\\ge0` (LP duality)."""
        A, rhs = uset.arrays()
        if A.shape[1] != len(vec.exprs):
            raise ValueError(f"{why}: a polyhedron in R^{A.shape[1]} cannot perturb {len(vec.exprs)} coefficients")
        key = ("polyhedron", sign, A.tobytes(), A.shape, rhs.tobytes())
        if key in vec.groups:
            return vec.groups[key]
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

    def support(self, vec: _Coefficients, uset: UncertaintySet, s: float, why) -> tuple[float, object, str]:
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
            return (1.0, None if _is_zero(expr) else expr, f"box: center + half-widths * abs_{vec.base}")
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

    def note(self, component, text: str) -> None:
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


@shapes.paused_gc
def robust_counterpart(
    nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain], *, name: str | None = None, inplace: bool = False,
) -> pyo.ConcreteModel:
    """The robust counterpart of ``nominal`` under ``uncertain``, derived by conic duality (module docstring).

    Parameters
    ----------
    nominal : pyomo.environ.ConcreteModel
        One active objective, minimised or maximised; not modified.
    uncertain : sequence of UncertainRow and UncertainTerm
        On ``nominal``'s components (:mod:`tpm_models.models.uncertainty`): each row at most once, inequality rows
        only (an equality row holds for every perturbation only if it vanishes); coefficients affine.
    name : str, optional
        The new model's name (default ``"robust counterpart of <nominal's name>"``).
    inplace : bool, default False
        Transform ``nominal`` itself instead of a clone (for a nominal model built only to be robustified, as the
        registered ``15R`` does: Pyomo's clone costs more than the transformation, 3 s of 4 at :math:`10^4` rows).

    Returns
    -------
    pyomo.environ.ConcreteModel
        A clone of ``nominal`` with every uncertain row replaced (same name, new body) and the worst case of
        every uncertain term added to the objective (its largest value when minimised, its least when maximised:
        :math:`-\\sigma(-\\omega a)`), through the epigraph components of the module table; the objective keeps
        its sense. Its variables keep the nominal names, so :func:`tpm_models.checks.verify.verify` maps them by
        default. It owns its data: its rows and new components reference only its own variables and Params, so
        changing the nominal model afterwards does not change it.

    Examples
    --------
    >>> from tpm_models import build, load_dataset, min_max_scale, robust_counterpart
    >>> from tpm_models.models.semi_infinite import uncertain_22
    >>> d = load_dataset("iris")
    >>> nominal = build(15, min_max_scale(d.X), d.y, c=0, nu=0.5, alpha=1.0)
    >>> cp = robust_counterpart(nominal, uncertain_22(nominal, p=2, eps=0.02))  # (23) at p = 2, derived
    >>> cp.norm_w.doc
    'norm_w >= |w|_2 (the dual norm of the l_2 balls)'
    """
    build = _Builder(nominal, name, inplace)
    seen: set[int] = set()
    for k, spec in enumerate(uncertain):
        if isinstance(spec, UncertainRow):
            _declared_row(build, k, spec, seen)
        elif isinstance(spec, UncertainTerm):
            _declared_term(build, k, spec)
        else:
            raise TypeError(f"uncertain item {k} is a {type(spec).__name__}, not an UncertainRow or UncertainTerm")
    build.finish()
    return build.model


def _declared_row(build: _Builder, k: int, spec: UncertainRow, seen: set[int]) -> None:
    """Make the declared row robust (``ValueError`` for a row not the nominal model's, named twice, or an equality
    with a perturbation that does not vanish)."""
    row = build.mine(spec.row)
    if row is None or not isinstance(row, pyo.Constraint._ComponentDataClass):
        raise ValueError(f"uncertain row {k}: {spec.row!r} is not a constraint of the nominal model")
    if id(row) in seen:
        raise ValueError(f"row {row.name} is named twice; give its perturbations as one vector")
    seen.add(id(row))

    def where():
        return spec.label or row.name

    vec = build.vector(spec.coefficients, where)
    if row.equality:
        if spec.uncertainty.is_point() and not np.any(spec.uncertainty.start(len(vec.exprs))):
            return
        raise ValueError(f"uncertain row {row.name} is an equality: no robust counterpart unless its "
                         "perturbation vanishes")
    _robust_row(build, row, vec, spec.uncertainty, where)


def _declared_term(build: _Builder, k: int, spec: UncertainTerm) -> None:
    """Add the worst case of the declared objective term: :math:`\\sigma(\\omega a)` to a minimised objective,
    :math:`-\\sigma(-\\omega a)` to a maximised one (``build.sense``)."""
    def where():
        return spec.label or f"objective term {k}"

    vec = build.vector(spec.coefficients, where)
    coef, node, how = build.support(vec, spec.uncertainty, build.sense * float(spec.weight), where)
    if node is None:
        return
    build.note(build.objective.parent_component(), how)
    if id(node) in build.totals:
        build.totals[id(node)][0] += coef
    else:
        build.totals[id(node)] = [coef, node]


def _all_variables(exprs: Sequence) -> bool:
    return all(getattr(e, "is_variable_type", lambda: False)() for e in exprs)


def _combination(weights: np.ndarray, exprs: Sequence):
    """:math:`\\sum_j w_j e_j` over the nonzero weights: one ``LinearExpression`` on variables, else a sum."""
    if _all_variables(exprs):
        return linear_row(weights, exprs)
    return sum(float(w) * e for w, e in zip(weights, exprs) if w != 0)


def _is_zero(expr) -> bool:
    return isinstance(expr, (int, float)) and expr == 0


def _robust_row(build: _Builder, row, vec: _Coefficients, uset: UncertaintySet, where) -> None:
    """Replace ``row`` (on the counterpart) by its counterpart: the lower side in place, the upper side in place or,
    for a ranged row, in ``<component>_upper``."""
    lower, upper = row.lower, row.upper
    lower = None if lower is None else pyo.value(lower)
    upper = None if upper is None else pyo.value(upper)
    body = row.body
    component = row.parent_component()
    low = build.support(vec, uset, -1.0, where) if lower is not None else (0.0, None, "")
    up = build.support(vec, uset, 1.0, where) if upper is not None else (0.0, None, "")
    if low[1] is None and up[1] is None:
        return
    if lower is not None:
        build.note(component, f"{low[2]} (lower side: body - sigma_U(-a) >= lower)")
        row.set_value((lower, _plus(body, -low[0], low[1]), None))
    if upper is not None:
        build.note(component, f"{up[2]} (upper side: body + sigma_U(a) <= upper)")
        new = _plus(body, up[0], up[1])
        if lower is None:
            row.set_value((None, new, upper))
        else:
            block, name = row.parent_block(), f"{component.local_name}_upper"
            rows = block.component(name)
            if rows is None:
                block.add_component(name, pyo.ConstraintList(
                    doc=f"the upper sides of the ranged rows of {component.local_name}, robust "
                        "(body + sigma_U(a) <= upper)"))
                rows = block.component(name)
            rows.add((None, new, upper))


def _plus(body, coef: float, node):
    """``body + coef * node``; a linear body and a variable node stay one ``LinearExpression`` (the row's shape in
    the paper's builders, and the fast path of the writers)."""
    if node is None:
        return body
    if type(body) is LinearExpression and isinstance(node, pyo.Var._ComponentDataClass):
        return LinearExpression([*body.args, node if coef == 1 else MonomialTermExpression((coef, node))])
    return body + (node if coef == 1 else coef * node)


# --------------------------------------------------------------------------- registration


def register_robustified(
    eq: int | str, *, nominal: int | str, uncertain: Callable[..., list], summary: str,
    model_class: str = "NLP", robust_p: tuple[float, ...] = (), compare: tuple[str, ...] = (), group: str = "user",
) -> Callable[..., pyo.ConcreteModel]:
    """Register under ``eq`` the counterpart that :func:`robust_counterpart` derives from the registered nominal
    model ``nominal`` and its uncertain data ``uncertain(nominal_model, p, eps)``: the front door
    (:func:`tpm_models.models.registry.register_model` with ``nominal=`` and ``uncertain=``), so ``build``, ``solve``,
    ``tpm-models verify/solve/export --model eq`` take it. ``model_class`` is what it is declared (``"NLP"``: any
    p; the solvers read the class from the model itself). Returns the builder."""
    base = model_info(nominal)
    if base.robust_p is not None:
        raise ValueError(f"({nominal}) is robust already; robustify a nominal model")

    def builder(*data, p: float, eps, **options):
        nominal_model = base.builder(*data, **options)
        return robust_counterpart(nominal_model, uncertain(nominal_model, p, eps), inplace=True,
                                  name=f"({eq}) robust counterpart of ({base.key}) derived, p={float(p):g}")

    builder.__name__ = builder.__qualname__ = f"robust_counterpart_of_{base.key}"
    builder.__doc__ = f"({eq}): :func:`robust_counterpart` of ({base.key}) under ``{uncertain.__name__}``. {summary}"
    register_model(eq, family=base.family, model_class=model_class, kernel=base.kernel, summary=summary,
                   robust_p=robust_p, nominal=base.key, uncertain=uncertain, compare=compare, group=group)(builder)
    return builder
