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

import numpy as np
import pyomo.environ as pyo

from tpm_models.kernels import Kernel


def skeleton(
    title: str,
    points: np.ndarray,
    own: tuple[str, list[int], str],
    other: tuple[str, list[int], str],
    nu: float,
    alpha: float,
    data_name: str = "x",
) -> pyo.ConcreteModel:
    """A model with the index sets, the data ``x[i, j]`` (or ``phi``) and the parameters."""
    m = pyo.ConcreteModel(name=title)
    m.J = pyo.RangeSet(points.shape[1], doc="features j = 1..n")
    for set_name, members, doc in (own, other):
        m.add_component(set_name, pyo.Set(initialize=members, ordered=True, doc=doc))
    used = sorted(own[1] + other[1])
    data = {(i, j + 1): float(points[i - 1, j]) for i in used for j in range(points.shape[1])}
    m.add_component(
        data_name,
        pyo.Param(used, m.J, initialize=data, doc=f"{data_name}[i, j]: feature j of point i"),
    )
    m.nu = pyo.Param(initialize=nu, mutable=True, doc="nu > 0")
    m.alpha = pyo.Param(initialize=alpha, mutable=True, doc="alpha >= nu")
    return m


def primal_plus(m: pyo.ConcreteModel, own: str, other: str, data_name: str = "x") -> None:
    """min 1/2|w|^2 + nu/m_o e'(X_o'w + e theta) + alpha/m e'xi  s.t.  X'w + e theta >= -xi, xi >= 0."""
    X_own, X_other, x = m.component(own), m.component(other), m.component(data_name)
    m.w = pyo.Var(m.J, doc="w: normal of the hyperplane")
    m.theta = pyo.Var(doc="theta: intercept")
    m.xi = pyo.Var(X_own, domain=pyo.NonNegativeReals, doc=f"xi[i] >= 0, i in {own}")

    def score(i: int) -> pyo.Expression:
        return sum(x[i, j] * m.w[j] for j in m.J) + m.theta

    m.obj = pyo.Objective(
        expr=0.5 * sum(m.w[j] ** 2 for j in m.J)
        + m.nu / len(X_other) * sum(score(i) for i in X_other)
        + m.alpha / len(X_own) * sum(m.xi[i] for i in X_own),
        sense=pyo.minimize,
    )
    m.margin = pyo.Constraint(
        X_own,
        rule=lambda m, i: score(i) + m.xi[i] >= 0,
        doc=f"x_i'w + theta >= -xi_i for i in {own}, stored as x_i'w + theta + xi_i >= 0",
    )


def primal_minus(m: pyo.ConcreteModel, own: str, other: str, data_name: str = "x") -> None:
    """min 1/2|w|^2 - nu/m_o e'(X_o'w + e theta) + alpha/m e'xi  s.t.  X'w + e theta <= xi, xi >= 0."""
    X_own, X_other, x = m.component(own), m.component(other), m.component(data_name)
    m.w = pyo.Var(m.J, doc="w: normal of the hyperplane")
    m.theta = pyo.Var(doc="theta: intercept")
    m.xi = pyo.Var(X_own, domain=pyo.NonNegativeReals, doc=f"xi[j] >= 0, j in {own}")

    def score(i: int) -> pyo.Expression:
        return sum(x[i, j] * m.w[j] for j in m.J) + m.theta

    m.obj = pyo.Objective(
        expr=0.5 * sum(m.w[j] ** 2 for j in m.J)
        - m.nu / len(X_other) * sum(score(i) for i in X_other)
        + m.alpha / len(X_own) * sum(m.xi[i] for i in X_own),
        sense=pyo.minimize,
    )
    m.margin = pyo.Constraint(
        X_own,
        rule=lambda m, i: score(i) - m.xi[i] <= 0,
        doc=f"x_j'w + theta <= xi_j for j in {own}, stored as x_j'w + theta - xi_j <= 0",
    )


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
    ``gram_other_own[a, b] = k(x^{other_a}, x^{own_b})``.
    """
    m = pyo.ConcreteModel(name=title)
    own_name, own_idx, own_doc = own
    other_name, other_idx, other_doc = other
    m.add_component(own_name, pyo.Set(initialize=own_idx, ordered=True, doc=own_doc))
    m.add_component(other_name, pyo.Set(initialize=other_idx, ordered=True, doc=other_doc))
    X_own, X_other = m.component(own_name), m.component(other_name)
    m.nu = pyo.Param(initialize=nu, mutable=True, doc="nu > 0")
    m.alpha = pyo.Param(initialize=alpha, mutable=True, doc="alpha >= nu")
    K = {(i, k): float(gram_own[a, b]) for a, i in enumerate(own_idx) for b, k in enumerate(own_idx)}
    K.update(
        {(j, i): float(gram_other_own[a, b]) for a, j in enumerate(other_idx) for b, i in enumerate(own_idx)}
    )
    m.K = pyo.Param(list(K), initialize=K, doc="K[i, k] = k(x^i, x^k)")
    m_own, m_other = len(own_idx), len(other_idx)
    m.lam = pyo.Var(X_own, bounds=(0, m.alpha / m_own), doc="lam[i] in [0, alpha/m]")
    m.obj = pyo.Objective(
        expr=-0.5 * sum(m.K[i, k] * m.lam[i] * m.lam[k] for i in X_own for k in X_own)
        + m.nu / m_other * sum(m.K[j, i] * m.lam[i] for j in X_other for i in X_own),
        sense=pyo.maximize,
    )
    m.sum_lam = pyo.Constraint(expr=sum(m.lam[i] for i in X_own) == m.nu, doc="e'lam = nu")
    return m


def dual_constant(other: np.ndarray, nu: float, kernel: Kernel | None = None) -> float:
    """The constant the paper's duals omit (errata 1): :math:`-\\tfrac12(\\nu/m_o)^2 e^\\top K(X_o,X_o) e`.

    opt(primal) = opt(dual as printed) + ``dual_constant(X_other, nu)``, with
    ``X_other`` = :math:`X_{-c}` for (15)/(16), :math:`X_-` for (2)/(4), :math:`X_+` for (3)/(5).
    """
    kernel = kernel or Kernel()
    a = nu / len(other)
    return float(-0.5 * a**2 * kernel.gram(other, other).sum())
