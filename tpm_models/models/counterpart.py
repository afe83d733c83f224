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

This module: the derivation's pass over the declarations, the rows it rewrites, and the registration of what it
derives; the epigraphs of the support functions are written by
:class:`tpm_models.models.counterpart_builder.CounterpartBuilder`; the declarations it reads are
:mod:`tpm_models.models.uncertainty` and :mod:`tpm_models.models.declare`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression

from tpm_models.models import shapes
from tpm_models.models.counterpart_builder import Coefficients, CounterpartBuilder, Node, Where
from tpm_models.models.counterpart_composite import CompositeBuilder
from tpm_models.models.registry import model_info, register_model
from tpm_models.models.uncertainty import Uncertain, UncertainRow, UncertainTerm, UncertaintySet


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
    build = CompositeBuilder(nominal, name, inplace)
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


def _declared_row(build: CounterpartBuilder, k: int, spec: UncertainRow, seen: set[int]) -> None:
    """Make the declared row robust (``ValueError`` for a row not the nominal model's, named twice, or an equality
    with a perturbation that does not vanish)."""
    row = build.mine(spec.row)
    if row is None or not isinstance(row, pyo.Constraint._ComponentDataClass):
        raise ValueError(f"uncertain row {k}: {spec.row!r} is not a constraint of the nominal model")
    if id(row) in seen:
        raise ValueError(f"row {row.name} is named twice; give its perturbations as one vector")
    seen.add(id(row))

    def where() -> str:
        return spec.label or row.name

    vec = build.vector(spec.coefficients, where)
    if row.equality:
        if spec.uncertainty.is_point() and not np.any(spec.uncertainty.start(len(vec.exprs))):
            return
        raise ValueError(f"uncertain row {row.name} is an equality: no robust counterpart unless its "
                         "perturbation vanishes")
    _robust_row(build, row, vec, spec.uncertainty, where)


def _declared_term(build: CounterpartBuilder, k: int, spec: UncertainTerm) -> None:
    """Add the worst case of the declared objective term: :math:`\\sigma(\\omega a)` to a minimised objective,
    :math:`-\\sigma(-\\omega a)` to a maximised one (``build.sense``)."""
    def where() -> str:
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


def _robust_row(build: CounterpartBuilder, row: Any, vec: Coefficients, uset: UncertaintySet, where: Where) -> None:
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


def _plus(body: Any, coef: float, node: Node) -> Any:
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

    def builder(*data: Any, p: float, eps: float | np.ndarray, **options: Any) -> pyo.ConcreteModel:
        nominal_model = base.builder(*data, **options)
        return robust_counterpart(nominal_model, uncertain(nominal_model, p, eps), inplace=True,
                                  name=f"({eq}) robust counterpart of ({base.key}) derived, p={float(p):g}")

    builder.__name__ = builder.__qualname__ = f"robust_counterpart_of_{base.key}"
    builder.__doc__ = f"({eq}): :func:`robust_counterpart` of ({base.key}) under ``{uncertain.__name__}``. {summary}"
    register_model(eq, family=base.family, model_class=model_class, kernel=base.kernel, summary=summary,
                   robust_p=robust_p, nominal=base.key, uncertain=uncertain, compare=compare, group=group)(builder)
    return builder
