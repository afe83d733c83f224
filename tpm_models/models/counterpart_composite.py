"""The counterparts of the sets of :mod:`tpm_models.models.composite_sets`: :class:`CompositeBuilder`, the
:class:`~tpm_models.models.counterpart_builder.CounterpartBuilder` that also writes, for :math:`\\sigma(\\pm a)`
(:math:`\\mathrm{sgn} = \\pm1`):

* ``Scenarios(P)``: a free ``scenarios_<a>`` :math:`t` with one row a scenario,
  :math:`t \\ge \\mathrm{sgn}\\,(\\delta^k)^\\top a` (exact: a linear row holds on the scenarios iff on their hull);
* ``FactorModel(Psi, beta)``: by LP duality :math:`\\sum_f e_f + \\beta F\\,w` with :math:`e_f\\ge|h_f - t|`,
  :math:`w\\ge|t|`, :math:`h = \\mathrm{sgn}\\,\\Psi^\\top a` (``factor_<a>_t``, ``_e[f]``, ``_w``);
* ``Intersection(U_1, ..., U_m)``: the conjugate of the intersection, :math:`\\sum_i\\sigma_i(g_i)` over new free
  shares ``intersection_<a>_g[i, j]`` with :math:`\\sum_i g_i = \\mathrm{sgn}\\,a` (the last share is the rest), each
  member's epigraph on its share (a polyhedral member may be unbounded alone: a slab of a box);
* ``CartesianProduct``: :math:`\\sum_i\\sigma_i(\\mathrm{sgn}\\,a_{(i)})`, each member's epigraph on its slice;
* ``SymmetricBudget(d, Gamma)`` (:mod:`tpm_models.models.uncertainty`): the one-sided budget's LP dual on the
  coefficients :math:`(a, -a)` (:meth:`~tpm_models.models.uncertainty.SymmetricBudget.one_sided`).

The members of an intersection or a product are written by :meth:`CompositeBuilder.support` itself, so they may
be any set the builders know, composite ones included.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pyomo.core as pyo

from tpm_models.models.composite_sets import CartesianProduct, FactorModel, Intersection, Scenarios
from tpm_models.models.counterpart_builder import (
    Coefficients,
    CounterpartBuilder,
    Node,
    Where,
    combination,
    is_zero,
)
from tpm_models.models.uncertainty import Polyhedron, SymmetricBudget, UncertaintySet


class CompositeBuilder(CounterpartBuilder):
    """A :class:`CounterpartBuilder` that also knows the sets of :mod:`tpm_models.models.composite_sets`."""

    def support(self, vec: Coefficients, uset: UncertaintySet, s: float, why: Where) -> tuple[float, Node, str]:
        """As :meth:`CounterpartBuilder.support`, for the composite sets too."""
        writers: dict[type, tuple[Callable[[Coefficients, Any, float, str], Node], str]] = {
            Scenarios: (self.scenarios, "scenarios: one row a scenario"),
            FactorModel: (self.factor_model, "factor model: LP dual"),
            Intersection: (self.intersection, "intersection: the sum of the members' supports"),
            CartesianProduct: (self.product, "Cartesian product: the sum over the slices"),
            SymmetricBudget: (self.symmetric_budget, "symmetric budget: the LP dual on (a, -a)")}
        if type(uset) not in writers:
            return super().support(vec, uset, s, why)
        if s == 0 or uset.is_point() and not np.any(uset.start(len(vec.exprs))):
            return 0.0, None, "a point: unchanged"
        write, how = writers[type(uset)]
        sign = math.copysign(1.0, s)
        key = (type(uset).__name__, sign, id(uset))
        if key not in vec.groups:
            vec.groups[key] = write(vec, uset, sign, f"first used by {why()}")
        node = vec.groups[key]
        return (0.0, None, "zero") if node is None else (abs(s), node, how)

    def symmetric_budget(self, vec: Coefficients, uset: SymmetricBudget, sign: float, why: str) -> object:
        """:math:`\\sigma(\\mathrm{sgn}\\,a)` of the symmetric budget: the one-sided budget's on :math:`(a, -a)`."""
        key = ("plus_minus", id(vec))
        if key not in vec.groups:
            vec.groups[key] = self.derived([*vec.exprs, *(-e for e in vec.exprs)], f"{vec.base}_pm")
        return self.budget(vec.groups[key], uset.one_sided(len(vec.exprs)), sign, why)

    def derived(self, exprs: list, base: str) -> Coefficients:
        """A coefficient vector of new expressions (``exprs``) named ``base``, indexed 0..n-1."""
        index = self.add(f"{base}_index", pyo.RangeSet(0, len(exprs) - 1))
        return Coefficients(list(exprs), base, index, list(range(len(exprs))))

    def scenarios(self, vec: Coefficients, uset: Scenarios, sign: float, why: str) -> Node:
        P = uset.arrays()[0]
        if P.shape[1] != len(vec.exprs):
            raise ValueError(f"{why}: scenarios in R^{P.shape[1]} cannot perturb {len(vec.exprs)} coefficients")
        b = vec.base + ("" if sign > 0 else "_minus")
        t = self.add(f"scenarios_{b}", pyo.Var(doc=f"scenarios_{b} >= max_k (delta^k)'({'' if sign > 0 else '-'}"
                                                   f"{vec.base}) ({why})"))
        rows = self.add(f"scenarios_{b}_rows", pyo.RangeSet(0, P.shape[0] - 1))
        self.add(f"scenarios_{b}_ge", pyo.Constraint(
            rows, rule=lambda _, k: t - sign * combination(P[k], vec.exprs) >= 0,
            doc=f"scenarios_{b} >= (delta^k)'{vec.base}, one row a scenario"))
        return t

    def factor_model(self, vec: Coefficients, uset: FactorModel, sign: float, why: str) -> Node:
        psi, beta = uset.arrays()
        if psi.shape[0] != len(vec.exprs):
            raise ValueError(f"{why}: a factor model in R^{psi.shape[0]} cannot perturb {len(vec.exprs)} "
                             "coefficients")
        F = psi.shape[1]
        b = vec.base + ("" if sign > 0 else "_minus")
        h = [sign * combination(psi[:, f], vec.exprs) for f in range(F)]
        factors = self.add(f"factor_{b}_index", pyo.RangeSet(0, F - 1))
        t = self.add(f"factor_{b}_t", pyo.Var(doc=f"t, dual of |sum_f xi_f| <= beta F ({why})"))
        e = self.add(f"factor_{b}_e", pyo.Var(factors, domain=pyo.NonNegativeReals, doc="e_f >= |(Psi'a)_f - t|"))
        w = self.add(f"factor_{b}_w", pyo.Var(domain=pyo.NonNegativeReals, doc="w >= |t|"))
        self.add(f"factor_{b}_e_ge", pyo.Constraint(factors, rule=lambda _, f: e[f] - h[f] + t >= 0,
                                                    doc="e_f >= (Psi'a)_f - t"))
        self.add(f"factor_{b}_e_ge_minus", pyo.Constraint(factors, rule=lambda _, f: e[f] + h[f] - t >= 0,
                                                          doc="e_f >= t - (Psi'a)_f"))
        self.add(f"factor_{b}_w_ge", pyo.Constraint([1, -1], rule=lambda _, k: w - k * t >= 0, doc="w >= +-t"))
        return self.add(f"factor_{b}", pyo.Expression(
            expr=sum(e[f] for f in factors) + beta * F * w,
            doc=f"sum_f e_f + beta F w >= max over the factor model of {'' if sign > 0 else '-'}{vec.base}'delta"))

    def intersection(self, vec: Coefficients, uset: Intersection, sign: float, why: str) -> Node:
        m, n = len(uset.sets), len(vec.exprs)
        b = vec.base + ("" if sign > 0 else "_minus")
        parts = self.add(f"intersection_{b}_parts", pyo.RangeSet(0, m - 2))
        coords = self.add(f"intersection_{b}_coords", pyo.RangeSet(0, n - 1))
        g = self.add(f"intersection_{b}_g", pyo.Var(parts, coords, doc=f"g_i, the share of set i in sgn*{vec.base} "
                                                    f"(the last set's share: the rest) ({why})"))
        shares = [[g[i, j] for j in coords] for i in parts]
        shares.append([sign * a - sum(g[i, j] for i in parts) for j, a in enumerate(vec.exprs)])
        total = 0.0
        for i, (member, share) in enumerate(zip(uset.sets, shares)):
            part = self.derived(share, f"{b}_share{i}")
            if isinstance(member, Polyhedron):  # may be unbounded alone: a slab of a box
                coef, node = 1.0, self.polyhedron(part, member, 1.0, why, bounded=False)
            else:
                coef, node, _ = self.support(part, member, 1.0, lambda: why)
            if node is not None:
                total = total + (node if coef == 1.0 else coef * node)
        return self.add(f"intersection_{b}", pyo.Expression(
            expr=total, doc=f"sum_i sigma_i(g_i) >= max over the intersection of {'' if sign > 0 else '-'}"
                            f"{vec.base}'delta"))

    def product(self, vec: Coefficients, uset: CartesianProduct, sign: float, why: str) -> Node:
        total = 0.0
        for i, (member, sl) in enumerate(zip(uset.sets, uset.slices(len(vec.exprs)))):
            key = ("slice", id(uset), i)
            if key not in vec.groups:
                vec.groups[key] = self.derived(vec.exprs[sl], f"{vec.base}_part{i}")
            coef, node, _ = self.support(vec.groups[key], member, sign, lambda: why)
            if node is not None:
                total = total + (node if coef == 1.0 else coef * node)
        if is_zero(total):
            return None
        b = vec.base + ("" if sign > 0 else "_minus")
        return self.add(f"product_{b}", pyo.Expression(
            expr=total, doc=f"the sum over the slices of the members' supports ({why})"))
