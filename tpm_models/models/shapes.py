"""The three shapes shared by the paper's QPs, written once.

(2), (10) and (15) are one shape ("parametric-margin primal"): (15) is (2) with
:math:`X_+ \\to X_c`, and (10) is (2) with :math:`x \\to \\varphi(x)`. (3) and (11)
are the mirrored shape. (4), (5), (12), (13), (16) and (19) are one dual shape
with different Gram blocks. The public builders in :mod:`tpm_models.models.binary` and
:mod:`tpm_models.models.multiclass` name the equation, validate the data and call these.

Conventions: points are numbered ``i = 1..m`` by their row in the data (the
paper's :math:`\\{x^i\\}_{i=1}^m`); features ``j = 1..n``. Sign constraints
(:math:`\\xi \\ge 0`, :math:`0 \\le \\lambda \\le \\alpha/m`) are variable bounds. Rows keep
every variable on the left and a constant on the right (``x'w + theta + xi >= 0`` for
``x'w + theta >= -xi``), as the ``.lp`` format and the solvers' dual conventions expect:
the duals of ``margin`` are then :math:`\\lambda` for (2), (10), (15) and
:math:`-\\lambda` for the :math:`\\le` rows of (3), (11).
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Sequence

import numpy as np
import pyomo.core as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression, ProductExpression, SumExpression
from pyomo.core.expr.relational_expr import InequalityExpression

from tpm_models.collector import to_oldest_generation
from tpm_models.kernels import GRAM_ARRAYS, Kernel, check_dense_memory
from tpm_models.models.lazy_rows import LazyRows, RowTerms, position
from tpm_models.models.row_blocks import RowBlock, record_rows
from tpm_models.qp import QPMatrices
from tpm_models.validation import check_nu_alpha


def paused_gc(builder):
    """Run ``builder`` with Python's cyclic garbage collector paused (Pyomo's ``PauseGC``, as its writers do), then
    move a large model's objects to the collector's oldest generation
    (:func:`tpm_models.collector.to_oldest_generation`).

    A model of :math:`10^5` rows is millions of small objects that are all alive; every collection
    pass would walk all of them again, which made building grow faster than the number of rows.
    """

    @functools.wraps(builder)
    def run(*args, **kwargs):
        outermost = gc.isenabled()  # a builder called by another one leaves the move to the outer one
        with PauseGC():
            try:
                return builder(*args, **kwargs)
            finally:
                if outermost:
                    to_oldest_generation()

    return run


def skeleton(
    title: str,
    points: np.ndarray,
    own: tuple[str, list[int], str],
    other: tuple[str, list[int], str],
    nu: float,
    alpha: float,
    data_name: str | None = "x",
) -> pyo.ConcreteModel:
    """A model with the index sets, the parameters and (``data_name`` not None) the data ``x[i, j]`` (or ``phi``).

    The builders whose rows are written with numeric coefficients (:func:`linear_row`) pass
    ``data_name=None``: at :math:`m = 10^5` points a ``Param`` holding every :math:`x_{ij}` costs more
    time and memory than the whole rest of the model. The models that refer to the data
    symbolically ((22) by scenarios and semi-infinite) keep it.
    """
    m = pyo.ConcreteModel(name=title)
    m.J = pyo.RangeSet(points.shape[1], doc="features j = 1..n")
    for set_name, members, doc in (own, other):
        m.add_component(set_name, pyo.Set(initialize=members, ordered=True, doc=doc))
    if data_name is not None:
        used = sorted(own[1] + other[1])
        data = {(i, j + 1): float(points[i - 1, j]) for i in used for j in range(points.shape[1])}
        m.add_component(
            data_name,
            pyo.Param(used, m.J, initialize=data, doc=f"{data_name}[i, j]: feature j of point i"),
        )
    m.nu = pyo.Param(initialize=nu, mutable=True, doc="nu > 0")
    m.alpha = pyo.Param(initialize=alpha, mutable=True, doc="alpha >= nu")
    return m


def linear_row(coefs: Sequence[float] | np.ndarray, variables: Sequence, constant: float = 0.0) -> LinearExpression:
    """:math:`\\sum_k a_k v_k` (+ ``constant``) as one ``LinearExpression``, the way Pyomo stores a linear row.

    Built directly from the coefficients and variables, without the generic expression system.
    The terms are those Pyomo's operators would make: a coefficient 1 is the variable itself,
    any other one a monomial -- a data coefficient 0.0 too, so the written model keeps its terms in
    every format (``.gms`` writes them; ``.lp``, ``.mps`` and ``.nl`` leave zero coefficients out).
    """
    args = [constant] if constant else []
    return LinearExpression(args + linear_terms(coefs, variables))


def linear_terms(coefs: Sequence[float] | np.ndarray, variables: Sequence) -> list:
    """The terms of :func:`linear_row` (without a constant): for a builder that appends terms of its own to a row
    and makes it one ``LinearExpression`` the way Pyomo's operators would have made it."""
    if isinstance(coefs, np.ndarray):
        coefs = coefs.tolist()  # Python floats: numpy scalars are slow to compare and would leak into the model
    return [v if a == 1 else MonomialTermExpression((a, v)) for a, v in zip(coefs, variables)]


class PrimalMarginRow:
    """The row maker (:class:`tpm_models.models.lazy_rows.LazyRows`) of the margin rows of (2), (10), (15)
    (``sign = +1``) and (3), (11) (``sign = -1``): row ``i`` (``numbers[k]``, the point's number) is

    .. math::
        \\sum_j p_{kj} w_j + \\theta + \\xi_i \\ge 0 \\qquad (\\textstyle\\sum_j p_{kj} w_j + \\theta - \\xi_i \\le 0),

    ``p_k`` = ``points[k]``, written as the one ``LinearExpression`` and the inequality Pyomo's operators make of
    ``linear_row([*x_i, 1, sign], [*w, theta, xi_i]) >= 0`` (``<= 0``): a coefficient 1 is the variable itself, any
    other one -- 0.0 too -- a monomial. ``points`` is the model's own (:func:`margin_coefficients`' first columns)."""

    def __init__(self, numbers: np.ndarray, points: np.ndarray, w: list, theta: pyo.Var, xi: list, sign: int) -> None:
        self.numbers, self.points, self.w, self.theta, self.xi, self.sign = numbers, points, w, theta, xi, sign

    def terms(self, i: int) -> RowTerms:
        """Row ``i``'s terms as :meth:`__call__` writes them (:class:`tpm_models.models.lazy_rows.RowTerms`): the int
        1 of a bare variable (a data coefficient equal to 1, :math:`\\theta`, :math:`\\xi_i`), -1 of
        :math:`-\\xi_i`, the points' floats elsewhere; the sides 0 and ``None``."""
        k = position(self.numbers, i)
        coefs = [1 if a == 1 else a for a in self.points[k].tolist()]
        variables = [*self.w, self.theta, self.xi[k]]
        if self.sign == 1:
            return RowTerms(0, coefs + [1, 1], variables, 0, None)
        return RowTerms(None, coefs + [1, -1], variables, 0, 0)

    def __call__(self, i: int) -> InequalityExpression:
        k = position(self.numbers, i)
        terms = linear_terms(self.points[k], self.w)
        if self.sign == 1:
            return InequalityExpression((0, LinearExpression(terms + [self.theta, self.xi[k]])), False)
        return InequalityExpression(
            (LinearExpression(terms + [self.theta, MonomialTermExpression((-1, self.xi[k]))]), 0), False)


def margin_coefficients(points: np.ndarray, rows: np.ndarray, n_norm: int, sign: float) -> np.ndarray:
    """The coefficients of the margin rows of the points ``rows`` (``points[rows[k]]`` is row ``k``'s :math:`x^i`) as
    :func:`record_margin` records them, one row of ``n + 2 + n_norm`` a point: :math:`x^i`, 1 (:math:`\\theta`), 0
    for each norm term (its :math:`-\\varepsilon_i` is read from the parameter), ``sign`` (:math:`\\xi_i`). A copy,
    the model's own: the row makers read their points from its first ``n`` columns (one copy of the data for both)."""
    k, n = len(rows), points.shape[1]
    coefs = np.empty((k, n + 2 + n_norm))
    for start in range(0, k, 1 << 16):  # the points copied by blocks: no second copy of X_c at once
        coefs[start:start + (1 << 16), :n] = points[rows[start:start + (1 << 16)]]
    coefs[:, n] = 1.0
    coefs[:, n + 1:n + 1 + n_norm] = 0.0
    coefs[:, -1] = float(sign)
    return coefs


def record_margin(component: pyo.Constraint, coefs: np.ndarray, w: list, theta: pyo.Var, xi: list, sign: float, *,
                  norm: Sequence = (), eps: Sequence = (), named: Sequence = (), atom: object = None) -> RowBlock:
    """Record the margin rows ``component`` (:mod:`tpm_models.models.row_blocks`) as written: row ``k`` is

    .. math::
        \\sum_j p_{kj} w_j + \\theta - \\varepsilon_k \\sum_l \\text{norm}_l + \\text{sign}\\,\\xi_k \\ge 0

    (:math:`\\le 0` for ``sign = -1``), ``coefs`` from :func:`margin_coefficients` (:math:`p_{kj}` its first
    columns; kept as the record's, not copied), ``eps[k]`` the mutable parameter of row ``k`` (no such term when
    ``norm`` is empty), the terms in this order; ``named``: the named expressions the rows read ``norm`` through;
    ``atom``: a named expression (in ``named``) each row holds as ``- eps[k] * atom`` instead of ``norm`` ((23) at
    p = 2: ``norm_w``, a square root)."""
    k, n, t = len(xi), len(w), len(norm)
    width = n + 2 + t
    if coefs.shape != (k, width):
        raise ValueError(f"margin coefficients of shape {coefs.shape} for {k} rows of {width} terms")
    slots = np.empty((k, width), dtype=np.int32 if k + width < 2**31 else np.int64)
    slots[:, :n] = np.arange(n)
    slots[:, n] = n
    slots[:, n + 1:n + 1 + t] = n + 1 + np.arange(t)
    slots[:, -1] = n + 1 + t + np.arange(k)
    param_at = (np.arange(k)[:, None] * width + n + 1 + np.arange(t)).ravel()
    return record_rows(component, [*w, theta, *norm, *xi], np.arange(k + 1) * width, slots.ravel(), coefs.ravel(),
                       0.0 if sign > 0 else -np.inf, np.inf if sign > 0 else 0.0,
                       params=list(eps) if t or atom is not None else [], param_at=param_at,
                       param_of=np.repeat(np.arange(k), t), param_factor=np.full(len(param_at), -1.0), named=named,
                       atom=atom, atom_param_of=np.arange(k), atom_factor=-1.0)


def _primal(m: pyo.ConcreteModel, own: str, other: str, points: np.ndarray, sign: int) -> None:
    """(2)/(15) (``sign = +1``) and (3) (``sign = -1``), rows written directly from ``points`` (row ``i - 1``
    is :math:`x^i`).

    The :math:`\\nu`-term is written from the column sums of :math:`X_{other}`: for any :math:`w, \\theta`,

    .. math::
        \\frac{\\nu}{m_o}e^\\top(X_o^\\top w + e\\theta) = \\frac{\\nu}{m_o}(X_o e)^\\top w + \\nu\\theta ,

    the same term with :math:`n + 1` coefficients instead of :math:`m_o(n + 1)` products.
    """
    X_own, X_other = m.component(own), m.component(other)
    m.w = pyo.Var(m.J, doc="w: normal of the hyperplane")
    m.theta = pyo.Var(doc="theta: intercept")
    m.xi = pyo.Var(X_own, domain=pyo.NonNegativeReals, doc=f"xi[i] >= 0, i in {own}")
    w, theta, xi = [m.w[j] for j in m.J], m.theta, list(m.xi.values())  # xi indexed by X_own, in its order
    other_sum = points[np.asarray(list(X_other), dtype=int) - 1].sum(axis=0)  # X_o e
    nu_term = m.nu / len(X_other) * linear_row(other_sum, w) + m.nu * theta
    m.obj = pyo.Objective(
        expr=0.5 * sum(m.w[j] ** 2 for j in m.J)
        + (nu_term if sign == 1 else -nu_term)
        + m.alpha / len(X_own) * linear_row([1] * len(X_own), xi),
        sense=pyo.minimize,
    )
    # row i: linear_row([*x_i, 1, sign], [*w, theta, xi_i]) >= 0 (<= 0 for sign = -1), made when first read
    # (tests/models/test_builders.py compares it with the operators' row); the solve reads the record
    rows = np.asarray(list(X_own), dtype=int) - 1
    doc = (f"x_i'w + theta >= -xi_i for i in {own}, stored as x_i'w + theta + xi_i >= 0" if sign == 1 else
           f"x_j'w + theta <= xi_j for j in {own}, stored as x_j'w + theta - xi_j <= 0")
    coefs = margin_coefficients(points, rows, 0, sign)
    maker = PrimalMarginRow(rows + 1, coefs[:, :len(w)], w, theta, xi, sign)
    m.add_component("margin", LazyRows(X_own, maker, doc=doc))
    record_margin(m.margin, coefs, w, theta, xi, sign)


def primal_plus(m: pyo.ConcreteModel, own: str, other: str, points: np.ndarray) -> None:
    """min 1/2|w|^2 + nu/m_o e'(X_o'w + e theta) + alpha/m e'xi  s.t.  X'w + e theta >= -xi, xi >= 0.

    ``points[i - 1]`` is point ``i`` (:math:`x^i`, or :math:`\\varphi(x^i)` for (10)); the nu-term is
    written as :math:`\\frac{\\nu}{m_o}(X_o e)^\\top w + \\nu\\theta` (:func:`_primal`).
    """
    _primal(m, own, other, points, 1)


def primal_minus(m: pyo.ConcreteModel, own: str, other: str, points: np.ndarray) -> None:
    """min 1/2|w|^2 - nu/m_o e'(X_o'w + e theta) + alpha/m e'xi  s.t.  X'w + e theta <= xi, xi >= 0.

    ``points`` as in :func:`primal_plus`; the nu-term is :math:`-\\frac{\\nu}{m_o}(X_o e)^\\top w - \\nu\\theta`.
    """
    _primal(m, own, other, points, -1)


def dual(
    title: str,
    gram_own: np.ndarray,
    gram_other_own: np.ndarray,
    own: tuple[str, list[int], str],
    other: tuple[str, list[int], str],
    nu: float,
    alpha: float,
) -> pyo.ConcreteModel:
    """max -1/2 lam'K(own,own)lam + nu/m_o e'K(other,own)lam  s.t.  e'lam = nu, 0 <= lam <= alpha/m.

    ``gram_own[a, b] = k(x^{own_a}, x^{own_b})``,
    ``gram_other_own[a, b] = k(x^{other_a}, x^{own_b})``. The objective is written from the numbers of
    :func:`tpm_models.models.shapes.dual_matrices`: :math:`P = K(own,own)` and
    :math:`q = -\\frac{\\nu}{m_o}K(other,own)^\\top e` (with ``nu`` kept as the mutable parameter), so
    ``qp_matrices`` of the model equals ``dual_matrices(gram_own, gram_other_own, nu, alpha)``: the matrices
    the estimators solve without a model (tested in ``tests/learn/test_fastfit.py``).
    """
    qp = dual_matrices(gram_own, gram_other_own, nu, alpha)
    m = pyo.ConcreteModel(name=title)
    own_name, own_idx, own_doc = own
    other_name, other_idx, other_doc = other
    m.add_component(own_name, pyo.Set(initialize=own_idx, ordered=True, doc=own_doc))
    m.add_component(other_name, pyo.Set(initialize=other_idx, ordered=True, doc=other_doc))
    X_own = m.component(own_name)
    m.nu = pyo.Param(initialize=nu, mutable=True, doc="nu > 0")
    m.alpha = pyo.Param(initialize=alpha, mutable=True, doc="alpha >= nu")
    m_own = len(own_idx)
    m.lam = pyo.Var(X_own, bounds=(0, m.alpha / m_own), doc="lam[i] in [0, alpha/m]")
    lam = [m.lam[i] for i in X_own]
    col_sums = np.asarray(gram_other_own, dtype=float).sum(axis=0)  # K(other,own)'e: q = -(nu/m_o) col_sums
    m.obj = pyo.Objective(
        expr=-0.5 * quadratic_sum(qp.P, lam) + m.nu / len(other_idx) * linear_row(col_sums, lam),
        sense=pyo.maximize,
    )
    m.sum_lam = pyo.Constraint(expr=linear_row([1] * m_own, lam) == m.nu, doc="e'lam = nu")
    return m


def quadratic_sum(P: np.ndarray, variables: list) -> pyo.Expression:
    """:math:`\\sum_a\\sum_b P_{ab}v_av_b` (row by row) as the one ``SumExpression`` Pyomo's operators make of
    ``sum(P[a, b] * v[a] * v[b] for a ... for b ...)``, built directly: each term the ``ProductExpression`` of
    ``P[a, b] * v[a]`` (the variable itself for a coefficient 1, else a monomial -- 0.0 too, as
    :func:`linear_terms`) and ``v[b]``. The operators' dispatch was most of the build of a dense dual ((16) at
    :math:`10^4` points: :math:`m_c^2` = 6.25 million terms)."""
    rows = np.asarray(P, dtype=float).tolist()
    terms = [ProductExpression((v_a if p == 1 else MonomialTermExpression((p, v_a)), v_b))
             for row, v_a in zip(rows, variables) for p, v_b in zip(row, variables)]
    return terms[0] if len(terms) == 1 else SumExpression(terms)


def dual_constant(other: np.ndarray, nu: float, kernel: Kernel | None = None) -> float:
    """The constant the paper's duals omit (errata 1): :math:`-\\tfrac12(\\nu/m_o)^2 e^\\top K(X_o,X_o) e`.

    opt(primal) = opt(dual as printed) + ``dual_constant(X_other, nu)``, with
    ``X_other`` = :math:`X_{-c}` for (15)/(16), :math:`X_-` for (2)/(4), :math:`X_+` for (3)/(5).
    """
    kernel = kernel or Kernel()
    a = nu / len(other)
    return float(-0.5 * a**2 * kernel.gram_sum(other, other))  # no m_o x m_o matrix (Kernel.gram_sum)


def dual_matrices(gram_own: np.ndarray, gram_other_own: np.ndarray, nu: float, alpha: float) -> QPMatrices:
    """The dual QP (4)/(5)/(12)/(13)/(16)/(19) in matrix form, from its two Gram blocks: the one source of truth.

    All six duals are one shape (:func:`dual`):

    .. math::
        \\max_\\lambda\\ -\\tfrac12\\lambda^\\top K_{oo}\\lambda + \\frac{\\nu}{m_o}e^\\top K_{\\bar oo}\\lambda
        \\quad\\text{s.t.}\\quad e^\\top\\lambda = \\nu,\\ \\ 0\\le\\lambda\\le\\frac{\\alpha}{m}

    with ``gram_own`` :math:`K_{oo} = K(X_{own}, X_{own})` and ``gram_other_own``
    :math:`K_{\\bar oo} = K(X_{other}, X_{own})`. Stored as :func:`qp_matrices` stores a maximisation
    (``sense = -1``, the minimisation of the negated objective):

    .. math::
        P = K_{oo},\\quad q = -\\frac{\\nu}{m_o}K_{\\bar oo}^\\top e,\\quad q_0 = 0,\\quad
        A = e^\\top,\\ b = \\nu,\\quad x_l = 0,\\ x_u = \\frac{\\alpha}{m}e,\\quad\\text{no rows } G.

    The Pyomo builders write their objective from these very numbers, and the estimators solve
    them directly (no Pyomo model): ``qp_matrices(build_dual_19(...))`` equals
    ``dual_matrices(...)``. ``variables`` and the constraint lists are empty (no Pyomo components).
    ``P`` is ``gram_own`` itself when that is a float array (no copy: the blocks are made for the dual; do not
    change them while the matrices are in use).
    """
    nu, alpha = check_nu_alpha(nu, alpha)
    P = np.asarray(gram_own, dtype=float)
    G_oo = np.asarray(gram_other_own, dtype=float)
    m_own = P.shape[0]
    if P.shape != (m_own, m_own) or G_oo.ndim != 2 or G_oo.shape[1] != m_own or m_own == 0 or G_oo.shape[0] == 0:
        raise ValueError(f"Gram blocks of shapes {P.shape} and {G_oo.shape} do not fit the dual")
    return QPMatrices(
        variables=[],
        P=P,
        q=-(nu / G_oo.shape[0]) * G_oo.sum(axis=0),
        q0=0.0,
        sense=-1,
        A=np.ones((1, m_own)),
        b=np.array([nu]),
        eq_constraints=[],
        G=np.zeros((0, m_own)),
        h_l=np.zeros(0),
        h_u=np.zeros(0),
        ineq_constraints=[],
        x_l=np.zeros(m_own),
        x_u=np.full(m_own, alpha / m_own),
    )


def gram_blocks(kernel: Kernel, X_own: np.ndarray, X_other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two Gram blocks of the duals, :math:`K(X_{own}, X_{own})` and :math:`K(X_{other}, X_{own})`
    (points as rows), computed as every dual builder and the estimators compute them. Both are refused before
    any allocation when together they cannot fit (:func:`tpm_models.kernels.check_dense_memory`: the
    :math:`(m_{own}+m_{other}) \\times m_{own}` of them, :data:`tpm_models.kernels.GRAM_ARRAYS` arrays at once)."""
    m_own, m_other = len(X_own), len(X_other)
    check_dense_memory(m_own + m_other, m_own, f"the Gram blocks of a kernel dual ({m_own:,} points against "
                       f"{m_other:,})", GRAM_ARRAYS,
                       "use fewer points (a subsample), or a kernel with a finite feature map (linear, hom-poly, "
                       "inhom-poly) in a primal model, whose size grows with the points, not their square")
    return kernel.gram(X_own, X_own), kernel.gram(X_other, X_own)


def kernel_dual_matrices(kernel: Kernel, X_own: np.ndarray, X_other: np.ndarray, nu: float, alpha: float) -> QPMatrices:
    """:func:`dual_matrices` of :func:`gram_blocks`: the dual QP of the points ``X_own`` against ``X_other``
    ((16)/(19) with :math:`X_c, X_{-c}`; (4)/(12) with :math:`X_+, X_-`; (5)/(13) with :math:`X_-, X_+`)."""
    return dual_matrices(*gram_blocks(kernel, X_own, X_other), nu, alpha)
