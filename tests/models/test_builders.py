"""Each builder is its equation: objective and rows evaluated at random points equal the
paper's formula written here with numpy, in the paper's notation (points as columns)."""

import math

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.core.expr.compare import compare_expressions
from pyomo.core.expr.numeric_expr import NPV_SumExpression

from tpm_models import Kernel, build
from tpm_models.models.shapes import linear_row
from tpm_models.solvers.matrices import qp_matrices

NU, ALPHA = 0.3, 1.7
TOL = 1e-12  # both sides are the same arithmetic in a different order


def _data(rng, m=14, n=3, classes=3):
    X = rng.random((m, n))
    y = np.arange(m) % classes
    return X, y


def _set(var, values):
    for k, v in zip(var.index_set(), values):
        var[k].set_value(float(v))


def _margin_bodies(model):
    return np.array([pyo.value(model.margin[i].body) for i in model.margin.index_set()])


def _primal_case(rng, eq, X, y, c, phi):
    """Set random (w, theta, xi) and return (model, w, theta, xi, Phi_own, Phi_other)."""
    kernel = Kernel("hom-poly", degree=2) if phi else None
    model = build(eq, X, y, c, NU, ALPHA, kernel)
    F = kernel.feature_map(X) if phi else X
    minus_side = eq in (3, 11)
    own = (y != c) if minus_side else (y == c)
    w = rng.normal(size=F.shape[1])
    theta = rng.normal()
    xi = rng.random(own.sum())
    _set(model.w, w)
    model.theta.set_value(theta)
    _set(model.xi, xi)
    return model, w, theta, xi, F[own].T, F[~own].T  # paper: points as columns


@pytest.mark.parametrize("eq,phi", [(2, False), (15, False), (10, True)])
def test_plus_primals_2_10_15(rng, eq, phi):
    X, y = _data(rng)
    model, w, theta, xi, Xo, Xm = _primal_case(rng, eq, X, y, 1, phi)
    m_own, m_other = Xo.shape[1], Xm.shape[1]
    e_other = np.ones(m_other)
    # (2): 1/2|w|^2 + nu/m_- e'(X_-'w + e theta) + alpha/m_+ e'xi
    expected = 0.5 * w @ w + NU / m_other * e_other @ (Xm.T @ w + e_other * theta) + ALPHA / m_own * xi.sum()
    assert abs(pyo.value(model.obj) - expected) <= TOL * max(1, abs(expected))
    assert model.obj.sense == pyo.minimize
    # row: X_+'w + e theta >= -xi, stored as X_+'w + e theta + xi >= 0
    np.testing.assert_allclose(_margin_bodies(model), Xo.T @ w + theta + xi, rtol=TOL, atol=TOL)
    assert all(model.margin[i].lower == 0 and model.margin[i].upper is None for i in model.margin)
    assert all(model.xi[i].lb == 0 and model.xi[i].ub is None for i in model.xi)


@pytest.mark.parametrize("eq,phi", [(3, False), (11, True)])
def test_minus_primals_3_11(rng, eq, phi):
    X, y = _data(rng)
    model, w, theta, xi, Xo, Xp = _primal_case(rng, eq, X, y, 1, phi)
    m_minus, m_plus = Xo.shape[1], Xp.shape[1]
    e_plus = np.ones(m_plus)
    # (3): 1/2|w|^2 - nu/m_+ e'(X_+'w + e theta) + alpha/m_- e'xi  (errata 2: minus in (11) too)
    expected = 0.5 * w @ w - NU / m_plus * e_plus @ (Xp.T @ w + e_plus * theta) + ALPHA / m_minus * xi.sum()
    assert abs(pyo.value(model.obj) - expected) <= TOL * max(1, abs(expected))
    # row: X_-'w + e theta <= xi, stored as X_-'w + e theta - xi <= 0
    np.testing.assert_allclose(_margin_bodies(model), Xo.T @ w + theta - xi, rtol=TOL, atol=TOL)
    assert all(model.margin[i].upper == 0 and model.margin[i].lower is None for i in model.margin)


def _gaussian(A, B, sigma=0.7):
    return np.array([[np.exp(-np.sum((a - b) ** 2) / (2 * sigma**2)) for b in B.T] for a in A.T])


@pytest.mark.parametrize(
    "eq,kernel",
    [(4, None), (16, None), (12, "gaussian"), (19, "gaussian"), (5, None), (13, "gaussian")],
)
def test_duals_4_5_12_13_16_19(rng, eq, kernel):
    X, y = _data(rng)
    c = 2
    k = Kernel("gaussian", sigma=0.7) if kernel else None
    model = build(eq, X, y, c, NU, ALPHA, k)
    minus_side = eq in (5, 13)
    own = (y != c) if minus_side else (y == c)
    Xo, Xt = X[own].T, X[~own].T  # paper: points as columns
    gram = _gaussian if kernel else (lambda A, B: A.T @ B)
    lam = rng.random(own.sum()) * ALPHA / own.sum()
    _set(model.lam, lam)
    m_own, m_other = Xo.shape[1], Xt.shape[1]
    e_other = np.ones(m_other)
    # (16)/(19): -1/2 lam'K(X_c,X_c)lam + nu/m_-c e'K(X_-c,X_c) lam ; (5): own = X_-, other = X_+
    expected = -0.5 * lam @ gram(Xo, Xo) @ lam + NU / m_other * e_other @ gram(Xt, Xo) @ lam
    assert abs(pyo.value(model.obj) - expected) <= 1e-12 * max(1, abs(expected))
    assert model.obj.sense == pyo.maximize
    assert abs(pyo.value(model.sum_lam.body) - lam.sum()) < 1e-15
    assert pyo.value(model.sum_lam.lower) == pyo.value(model.sum_lam.upper) == NU
    assert all(model.lam[i].lb == 0 and abs(pyo.value(model.lam[i].ub) - ALPHA / m_own) < 1e-15 for i in model.lam)


def test_component_names_and_index_sets(iris):
    X, y = iris
    m = build(15, X, y, 1, NU, ALPHA)
    names = {c.local_name for c in m.component_objects()}
    assert {"w", "theta", "xi", "margin", "X_c", "X_minus_c", "J", "nu", "alpha", "obj"} <= names
    assert "x" not in names  # the data are the rows' coefficients, not a Param of m*n entries (_forms.linear_row)
    # points are numbered 1..m by row: X_c holds the rows of class 1 (versicolor: rows 51..100)
    assert list(m.X_c) == list(range(51, 101))
    assert list(m.w.index_set()) == [1, 2, 3, 4]
    d = build(4, X, y, 1, NU, ALPHA)  # the registry makes class 1 positive, the rest negative
    assert list(d.X_plus) == list(range(51, 101))


def test_parameters_are_mutable(rng):
    """nu and alpha are Pyomo parameters: changing them re-parametrises the same model."""
    X, y = _data(rng)
    model = build(16, X, y, 0, NU, ALPHA)
    model.nu = 0.5
    fresh = build(16, X, y, 0, 0.5, ALPHA)
    a, b = qp_matrices(model), qp_matrices(fresh)
    for field in ("P", "q", "A", "b", "x_l", "x_u"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_qp_matrices_reproduce_the_objective(rng, iris):
    """Two routes to the objective: Pyomo's expression and 1/2 x'Px + q'x + q0 from the matrices."""
    X, y = iris
    for eq in (15, 16, 3):
        model = build(eq, X, y, 2, NU, ALPHA)
        qp = qp_matrices(model)
        x = rng.normal(size=len(qp.variables))
        for var, value in zip(qp.variables, x):
            var.set_value(float(value), skip_validation=True)
        assert abs(qp.objective(x) - pyo.value(model.obj)) <= 1e-12 * max(1, abs(pyo.value(model.obj)))


ROW_CASES = [(2, None), (3, None), (10, None), (11, None), (15, None), (23, 1.0), (23, 1.5), (23, 2.0), (23, 3.0),
             (23, math.inf), (26, 1.0), (26, 1.5), (26, 2.0), (26, math.inf), (27, 1.0), (28, 2.0), (29, math.inf)]
"""Every builder whose rows are written from the data without Pyomo's operators (the row makers of
``tpm_models.models.lazy_rows``), and each way
its norm is written: (23)'s four (a variable for p = 1 and 1 < p < inf, a named sqrt for p = 2, a named sum for
p = inf), (26)'s r for every p, (27)'s s, (28)'s t, (29)'s sum of s[j]."""


def _operators_model(model, eq, F, own, other):
    """The margin rows and the objective of ``model`` as Pyomo's operators write them from the paper, on the model's own
    variables and parameters: row i is sum_j x_ij w_j + theta (+ or -) xi_i, minus eps_i * |w|_p' for the robust
    models; (3), (11) are <= 0, the others >= 0."""
    w = [model.w[j] for j in model.J]
    xi = [model.xi[i] for i in model.margin]
    sign = -1 if eq in (3, 11) else 1
    if eq in (2, 3, 10, 11, 15):
        norm = None
    elif eq == 23:
        norm = model.norm_w
    elif eq == 29:
        norm = sum(model.s[j] for j in model.J)
    else:
        norm = model.component({26: "r", 27: "s", 28: "t"}[eq])
    rows = []
    for i, x in zip(model.margin, xi):
        body = sum(float(a) * w_j for a, w_j in zip(F[i - 1], w)) + model.theta
        if norm is not None:
            body = body - model.eps[i] * norm
        rows.append(body + x >= 0 if sign == 1 else body - x <= 0)
    m_o = len(other)
    nu_term = model.nu / m_o * sum(float(a) * w_j for a, w_j in zip(F[np.asarray(other) - 1].sum(axis=0), w))
    if norm is not None:  # sum_i eps_i over X_-c is built as one flat sum (Python's sum() makes a chain of m_-c sums)
        nu_term = model.nu / m_o * (sum(float(a) * w_j for a, w_j in zip(F[np.asarray(other) - 1].sum(axis=0), w))
                                    + NPV_SumExpression([model.eps[i] for i in other]) * norm)
    if eq in (26, 27, 28, 29):
        quadratic = 0.5 * (model.u - model.v)
    else:
        quadratic = 0.5 * sum(model.w[j] ** 2 for j in model.J)
    xi_term = model.alpha / len(xi) * sum(xi[1:], xi[0])
    if norm is None:  # (2), (3), (10), (11), (15): quadratic +- (nu-term + nu theta) + xi-term
        nu_part = nu_term + model.nu * model.theta
        return rows, quadratic + (nu_part if sign == 1 else -nu_part) + xi_term
    objective = quadratic + nu_term + model.nu * model.theta + xi_term
    return rows, objective


@pytest.mark.parametrize("radii", ["one", "per point"])
@pytest.mark.parametrize("eq, p", ROW_CASES)
def test_rows_written_directly_are_the_operators_expressions(rng, eq, p, radii):
    """The rows the builders write directly (made on demand by ``shapes.PrimalMarginRow``, ``robust.RobustMarginRow``)
    are, node for node, what Pyomo's operators make of the paper's rows written from the numbers: a data coefficient of
    exactly 1 the bare variable, one of exactly 0 a monomial kept (the operators keep ``0.0 * w_j``); the objective
    too. Their values at a random point are the equation's
    (``F w + theta +- xi - eps |w|``, to 1e-12 relative: the same sums in another order). The radii are a mutable
    Param ``eps[i]`` for every point 1..m (domain Any, the implicit one made explicit) whose value a row reads now."""
    X, y = _data(rng, m=17, n=3)
    X[0, 1], X[3, 2], X[4, 0] = 1.0, 0.0, 1.0  # points 1, 4 and 5 are in class 0 (and 2, 3 are not)
    X[1, 0] = 0.0
    robust = p is not None
    kernel = Kernel("hom-poly", degree=2) if eq in (10, 11) else None
    eps = (0.05 if radii == "one" else np.linspace(0.0, 0.1, len(y))) if robust else None
    if radii == "per point" and not robust:
        pytest.skip("no radii")
    model = build(eq, X, y, 0, NU, ALPHA, kernel, p=p, eps=eps)
    F = kernel.feature_map(X) if kernel else X
    own = list(model.margin)
    other = [i for i in range(1, len(y) + 1) if i not in set(own)]
    assert own == [i for i in range(1, len(y) + 1) if (y[i - 1] != 0) == (eq in (3, 11))]
    rows, objective = _operators_model(model, eq, F, own, other)
    for i, row in zip(own, rows):
        assert compare_expressions(model.margin[i].expr, row), i
    assert compare_expressions(model.obj.expr, objective)
    # the values at a random point: the equation, whatever the nodes
    for v in model.component_data_objects(pyo.Var):
        v.set_value(float(rng.random() + 0.1), skip_validation=True)
    w = np.array([model.w[j].value for j in model.J])
    xi = np.array([model.xi[i].value for i in own])
    lin = F[np.asarray(own) - 1] @ w + model.theta.value
    expected = lin + xi if eq not in (3, 11) else lin - xi
    if robust:
        radius = np.broadcast_to(np.asarray(eps, dtype=float), (len(y),))[np.asarray(own) - 1]
        expected = expected - radius * _norm_value(model, eq)
        assert model.eps.mutable and model.eps.domain is pyo.Any
        assert list(model.eps.index_set()) == list(range(1, len(y) + 1))
        assert [model.eps[i].value for i in model.eps] == np.broadcast_to(eps, (len(y),)).tolist()
    bodies = np.array([pyo.value(model.margin[i].body) for i in own])
    np.testing.assert_allclose(bodies, expected, rtol=1e-12, atol=1e-15)
    if robust:  # a row reads eps_i as it is now
        model.eps[own[0]] = 0.5
        assert pyo.value(model.margin[own[0]].body) == pytest.approx(
            expected[0] + (radius[0] - 0.5) * _norm_value(model, eq), rel=1e-12)


def _norm_value(model, eq):
    """|w|_p' as the model's rows hold it at the current point: the norm variable, or the named expression's value."""
    if eq == 29:
        return sum(model.s[j].value for j in model.J)
    return pyo.value(model.component({23: "norm_w", 26: "r", 27: "s", 28: "t"}[eq]))


@pytest.mark.parametrize("eq", [16, 4, 5])
def test_dense_dual_objective_built_directly_is_the_operators_expression(rng, eq):
    """The dense duals' quadratic term (``shapes.quadratic_sum``, built without Pyomo's operators) is, node for node,
    what the operators make of the paper's -1/2 sum_a sum_b K_ab lam_a lam_b + nu/m_o e'K(other, own) lam, with
    Gram entries of exactly 1 (the variable itself) and 0 (a monomial kept): two unit vectors of disjoint support
    in each class."""
    X, y = _data(rng, m=12, n=3, classes=2)
    X[[0, 1]], X[[2, 3]] = [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]  # points 0, 2 of class 0 and 1, 3 of class 1
    model = build(eq, X, y, 0, NU, ALPHA)
    own = [i - 1 for i in model.lam]
    other = [i for i in range(len(y)) if i not in own]
    K = X[own] @ X[own].T
    lam = [model.lam[i + 1] for i in own]
    expected = (-0.5 * sum(K[a, b] * lam[a] * lam[b] for a in range(len(own)) for b in range(len(own)))
                + model.nu / len(other) * linear_row((X[other] @ X[own].T).sum(axis=0), lam))
    assert compare_expressions(model.obj.expr, expected)


@pytest.mark.parametrize("eq", [23, 26, 27, 28, 29])
def test_a_robust_models_name_says_its_p_once(eq):
    """The model's name (its title in messages and in written files) names the class and p once each."""
    X, y = np.random.default_rng(0).random((12, 2)), np.repeat([0, 1, 2], 4)
    kw = {"p": 2.0} if eq in (23, 26) else {}
    name = build(eq, X, y, 1, 0.3, 1.0, eps=0.02, **kw).name.strip("'")
    assert name.startswith(f"({eq}) ") and name.count("p=") == 1 and name.count("class 1") == 1, name
