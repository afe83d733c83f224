"""The robust kernel model (23K) against independent truths: the radii against explicit feature maps and
attaining perturbations, the eps = 0 reduction to (19) with its omitted constant, the linear kernel against (28)
and (29), safety by sampling with an explicit feature map, the local search against scipy, the input-space
attack against the exact linear attack, and the experiments' fast path against the builder."""

import math

import numpy as np
import pyomo.environ as pyo
import pytest
from scipy.optimize import minimize
from sklearn.base import clone

from tpm_models import Kernel, build, solve, stratified_split
from tpm_models.checks.kernel_search import (
    decision_attack_search,
    perturbation_samples,
    project,
    safety_report,
    worst_case_search,
)
from tpm_models.checks.robust import check_robust_kernel, rel_gap
from tpm_models.learn.estimators import TPMSVMOneVsAll
from tpm_models.learn.robust_kernel import RobustKernelTPMSVMOneVsAll
from tpm_models.models.multiclass import recover_17
from tpm_models.models.registry import model_info
from tpm_models.models.robust_kernel import (
    feature_radius,
    l2_radius,
    recover_robust_kernel_23,
    span_basis,
    value_and_gradient,
)
from tpm_models.models.shapes import dual_constant
from tpm_models.solvers.compare import objective_scale
from tpm_models.solvers.structure import model_class

NU, ALPHA = 0.3, 1.0
GAUSS = Kernel("gaussian", sigma=0.5)
POLY = Kernel("inhom-poly", degree=2, gamma=1.0)


def _distance(kernel, a, b):
    """:math:`\\|\\varphi(a)-\\varphi(b)\\|` from kernel values alone."""
    k = kernel.gram(np.vstack([a, b]), np.vstack([a, b]))
    return math.sqrt(max(k[0, 0] - 2 * k[0, 1] + k[1, 1], 0.0))


# ---------------------------------------------------------------- radii


@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 3.0, math.inf])
def test_l2_radius_is_the_largest_2_norm_of_the_p_ball(p, rng):
    n, eps = 5, 0.3
    R = float(l2_radius(eps, p, n))
    attaining = np.eye(n)[0] * eps if p <= 2 else eps * n ** (-1 / p if math.isfinite(p) else 0) * np.ones(n)
    assert np.linalg.norm(attaining, ord=p) == pytest.approx(eps)
    assert np.linalg.norm(attaining) == pytest.approx(R)
    samples = perturbation_samples(n, p, np.array([eps]), 4000, rng)[0]
    assert np.all(np.linalg.norm(samples, ord=p, axis=1) <= eps * (1 + 1e-12))
    assert np.linalg.norm(samples, axis=1).max() <= R * (1 + 1e-12)


@pytest.mark.parametrize("kernel", [Kernel("linear"), Kernel("hom-poly", degree=3), POLY])
def test_polynomial_radius_bounds_the_explicit_feature_map(kernel, iris, rng):
    X = iris[0][::10]
    eps = 0.05
    rho = feature_radius(kernel, X, eps, 2.0)
    phi = kernel.feature_map
    delta = perturbation_samples(X.shape[1], 2.0, np.full(len(X), eps), 500, rng)
    moved = np.linalg.norm(phi((X[:, None] + delta).reshape(-1, X.shape[1])).reshape(len(X), 500, -1)
                           - phi(X)[:, None], axis=2).max(axis=1)
    assert np.all(moved <= rho * (1 + 1e-12))
    # delta along x attains it for the homogeneous kernels (and the linear one)
    along = phi(X + eps * X / np.linalg.norm(X, axis=1, keepdims=True)) - phi(X)
    if kernel.name == "inhom-poly":
        assert np.all(np.linalg.norm(along, axis=1) < rho)  # a bound, not attained (gamma > 0)
    else:
        np.testing.assert_allclose(np.linalg.norm(along, axis=1), rho, rtol=1e-10)


@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_gaussian_radius_is_attained(p, iris):
    x = iris[0][7]
    eps = 0.04
    rho = float(feature_radius(GAUSS, x[None], eps, p)[0])
    delta = eps * np.eye(4)[0] if p <= 2 else eps * np.ones(4)  # a point of the p-ball of largest 2-norm
    assert _distance(GAUSS, x + delta, x) == pytest.approx(rho, rel=1e-12)
    assert rho == pytest.approx(math.sqrt(2 - 2 * math.exp(-float(l2_radius(eps, p, 4)) ** 2 / (2 * 0.25))))


def test_kernels_without_a_radius_are_refused(iris):
    X, y = iris
    with pytest.raises(ValueError, match="not positive semidefinite"):
        build("23K", X, y, 0, NU, ALPHA, kernel=Kernel("sigmoid", a=1.0, b=0.0), p=2, eps=0.01)
    with pytest.raises(ValueError, match="needs a kernel"):
        build("23K", X, y, 0, NU, ALPHA, p=2, eps=0.01)
    with pytest.raises(ValueError, match="needs p"):
        build("23K", X, y, 0, NU, ALPHA, kernel=GAUSS, eps=0.01)


# ---------------------------------------------------------------- the basis and the model


def test_span_basis_is_orthonormal_and_reproduces_the_gram_matrix(iris):
    X = iris[0]
    b = span_basis(GAUSS, X)
    K = GAUSS.gram(X, X)
    np.testing.assert_allclose(b.coef.T @ K @ b.coef, np.eye(b.phi.shape[1]), atol=1e-5)
    assert np.abs(b.phi @ b.phi.T - K).max() <= 10 * b.dropped + 1e-12
    np.testing.assert_allclose(b.coordinates(X), b.phi, atol=1e-6)


def test_model_is_an_socp_with_the_documented_components(iris):
    X, y = iris
    m = build("23k", X, y, 1, NU, ALPHA, kernel=GAUSS, p="inf", eps=0.02)
    assert model_class(m) == "SOCP" and model_info("23K").model_class == "SOCP"
    for name in ("w", "theta", "xi", "t", "phi", "eps", "rho", "p", "cone_t", "margin", "obj"):
        assert hasattr(m, name), name
    assert len(m.margin) == 50 and len(m.xi) == 50
    assert m.rho[1].value == pytest.approx(float(feature_radius(GAUSS, X[:1], 0.02, math.inf)[0]))



def test_objective_and_rows_are_the_printed_sums_at_random_points(iris, rng):
    """The objective (its nu-term written from the other points' summed coordinates) and each margin row are the
    docstring's sums over the points, written here from the model's ``phi`` and ``rho`` parameters, at random
    values of every variable and of the mutable ``rho`` (changed after the build: the model must follow it).
    Tolerance 1e-12 relative: the same terms summed in another order (about 1e-16 a term)."""
    X, y = iris
    m = build("23K", X, y, 1, NU, ALPHA, kernel=GAUSS, p=2, eps=0.02)
    own, other = list(m.X_c), list(m.X_minus_c)
    for i in m.rho:
        m.rho[i] = float(rng.uniform(0.0, 0.1))
    for trial in range(3):
        for v in m.component_data_objects(pyo.Var):
            v.set_value(float(rng.uniform(0.0, 1.0)))
        w = np.array([m.w[k].value for k in m.J])
        phi = {i: np.array([m.phi[i, k] for k in m.J]) for i in own + other}
        t, theta = m.t.value, m.theta.value
        printed = (0.5 * t**2 + NU / len(other) * sum(phi[i] @ w + m.rho[i].value * t for i in other)
                   + NU * theta + ALPHA / len(own) * sum(m.xi[i].value for i in own))
        assert pyo.value(m.obj) == pytest.approx(printed, rel=1e-12, abs=1e-12), trial
        for i in own:
            row = phi[i] @ w + theta - m.rho[i].value * t + m.xi[i].value
            assert pyo.value(m.margin[i].body) == pytest.approx(row, rel=1e-12, abs=1e-12), (trial, i)
            assert m.margin[i].lower == 0 and m.margin[i].upper is None

def test_eps_zero_is_the_primal_of_19_with_its_constant(iris):
    X, y = iris
    c = 1
    kernel = Kernel("gaussian", sigma=1.0)
    m = build("23K", X, y, c, NU, ALPHA, kernel=kernel, p=2, eps=0.0)
    r = solve(m)
    r19 = solve(build(19, X, y, c, NU, ALPHA, kernel=kernel))
    opt19 = r19.objective + dual_constant(X[y != c], NU, kernel)
    assert abs(r.objective - r19.objective) > 10 * abs(opt19 - r.objective)  # the constant matters
    assert rel_gap(r.objective, opt19, objective_scale(m)) < 1e-7
    mine = recover_robust_kernel_23(X, y, c, NU, ALPHA, 2, 0.0, kernel, r.values["w"])
    theirs = recover_17(X, y, c, r19.values["lam"], NU, ALPHA, kernel)
    np.testing.assert_allclose(mine.distance(X), theirs.distance(X), atol=1e-6)


def test_linear_kernel_is_28_at_p2_and_more_conservative_than_29(iris):
    X, y = iris
    c, eps = 0, 0.03
    r28 = solve(build(28, X, y, c, NU, ALPHA, eps=eps))
    m = build("23K", X, y, c, NU, ALPHA, kernel=Kernel("linear"), p=2, eps=eps)
    r = solve(m)
    assert rel_gap(r.objective, r28.objective, objective_scale(m)) < 1e-7
    plane = recover_robust_kernel_23(X, y, c, NU, ALPHA, 2, eps, Kernel("linear"), r.values["w"])
    np.testing.assert_allclose(X.T @ plane.beta, r28.values["w"], atol=1e-5)
    # p = inf: the ball of radius eps sqrt(n) contains the box, and eps sqrt(n)|w|_2 >= eps |w|_1
    r29 = solve(build(29, X, y, c, NU, ALPHA, eps=eps))
    rinf = solve(build("23K", X, y, c, NU, ALPHA, kernel=Kernel("linear"), p="inf", eps=eps))
    assert rinf.objective > r29.objective + 1e-6


# ---------------------------------------------------------------- safety


def test_sampled_perturbations_never_violate_the_rows_explicit_feature_map(iris, rng):
    """Rows evaluated with the explicit polynomial feature map, not with kernel values."""
    X, y = iris
    c, eps, p = 2, 0.05, 2.0
    r = solve(build("23K", X, y, c, NU, ALPHA, kernel=POLY, p=p, eps=eps))
    plane = recover_robust_kernel_23(X, y, c, NU, ALPHA, p, eps, POLY, r.values["w"])
    w = POLY.feature_map(X).T @ plane.beta  # the explicit w of feature space
    assert np.linalg.norm(w) == pytest.approx(plane.norm_w, rel=1e-9)
    own = X[y == c]
    rho = feature_radius(POLY, own, eps, p)
    delta = perturbation_samples(4, p, np.full(len(own), eps), 1000, rng)
    values = (POLY.feature_map((own[:, None] + delta).reshape(-1, 4)) @ w).reshape(len(own), -1)
    rows = values + r.values["theta"] + r.values["xi"][:, None]
    assert rows.min() >= -1e-9
    drop = (own @ np.zeros(4) + POLY.feature_map(own) @ w)[:, None] - values
    assert np.all(drop.max(axis=1) <= rho * np.linalg.norm(w) * (1 + 1e-9))


@pytest.mark.parametrize("p", [2.0, math.inf])
def test_safety_report_on_gaussian_model(iris, p):
    X, y = iris
    r = solve(build("23K", X, y, 0, NU, ALPHA, kernel=GAUSS, p=p, eps=0.03))
    plane = recover_robust_kernel_23(X, y, 0, NU, ALPHA, p, 0.03, GAUSS, r.values["w"])
    rep = safety_report(X, y, 0, p, 0.03, plane, r.values["theta"], r.values["xi"], samples=40)
    assert rep.sampled_violation <= 1e-9 and rep.search_violation <= 1e-9
    assert rep.sampled_ratio <= 1.0 and rep.search_ratios.max() <= 1.0
    assert rep.search_ratios.max() > 0.5  # the bound is not vacuous: the search uses most of it
    assert np.all(rep.search_ratios >= 0.0)


def test_local_search_matches_scipy_and_respects_the_bound(iris):
    X, y = iris
    eps = 0.05
    r = solve(build("23K", X, y, 1, NU, ALPHA, kernel=GAUSS, p=2, eps=eps))
    plane = recover_robust_kernel_23(X, y, 1, NU, ALPHA, 2, eps, GAUSS, r.values["w"])
    points = X[y == 1][:4]
    bound = plane.w_phi(points) - feature_radius(GAUSS, points, eps, 2) * plane.norm_w
    for p, constraints, bounds in (
        (2.0, [{"type": "ineq", "fun": lambda d: eps**2 - d @ d, "jac": lambda d: -2 * d}], None),
        (math.inf, [], [(-eps, eps)] * 4),
    ):
        ours, deltas = worst_case_search(plane, points, p, eps, sense=-1)
        assert np.all(np.linalg.norm(deltas, ord=p, axis=1) <= eps * (1 + 1e-12))
        np.testing.assert_allclose(plane.w_phi(points + deltas), ours, rtol=1e-12)
        for x, value, lower in zip(points, ours, bound):
            best = math.inf
            for start in np.random.default_rng(3).normal(size=(5, 4)) * eps / 4:
                res = minimize(lambda d, x=x: plane.w_phi(x + d)[0], start,
                               jac=lambda d, x=x: plane.gradient(x + d)[0],
                               method="SLSQP" if p == 2 else "L-BFGS-B", constraints=constraints, bounds=bounds,
                               options={"ftol": 1e-14, "maxiter": 500})
                if np.linalg.norm(res.x, ord=p) <= eps * (1 + 1e-9):
                    best = min(best, res.fun)
            assert value <= best + 1e-10  # at least as deep as scipy from five starts
            assert value >= lower - 1e-12  # and never past the model's bound


def test_linear_kernel_search_attains_the_bound(iris):
    """With the linear kernel and p = 2 the worst case is -eps w/|w|, exactly the bound."""
    X, y = iris
    r = solve(build("23K", X, y, 0, NU, ALPHA, kernel=Kernel("linear"), p=2, eps=0.05))
    plane = recover_robust_kernel_23(X, y, 0, NU, ALPHA, 2, 0.05, Kernel("linear"), r.values["w"])
    rep = safety_report(X, y, 0, 2.0, 0.05, plane, r.values["theta"], r.values["xi"], samples=50)
    np.testing.assert_allclose(rep.search_ratios, 1.0, atol=1e-9)


@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_projection(p, rng):
    eps = np.array([0.5, 0.5, 2.0])
    D = rng.normal(size=(3, 6))
    Pd = project(D, p, eps)
    norms = np.linalg.norm(Pd, ord=p, axis=1)
    assert np.all(norms <= eps * (1 + 1e-12))
    outside = np.linalg.norm(D, ord=p, axis=1) > eps
    np.testing.assert_allclose(norms[outside], eps[outside], rtol=1e-12)
    np.testing.assert_array_equal(Pd[~outside], D[~outside])
    for d, e, q in zip(D, eps, Pd):  # no point of the ball is closer (samples of the ball)
        ball = perturbation_samples(6, p, np.array([e]), 3000, rng)[0]
        assert np.linalg.norm(ball - d, axis=1).min() >= np.linalg.norm(q - d) - 1e-12


@pytest.mark.parametrize("kernel", [Kernel("linear"), GAUSS, Kernel("hom-poly", degree=3), POLY])
def test_gradients_by_finite_differences(kernel, rng):
    P, B, Z = rng.random((7, 3)), rng.normal(size=(7, 2)), rng.random((4, 3))
    values, grads = value_and_gradient(kernel, P, B, Z)
    np.testing.assert_allclose(values, kernel.gram(Z, P) @ B, atol=1e-12)
    h = 1e-6
    fd = np.stack([(kernel.gram(Z + h * e, P) - kernel.gram(Z - h * e, P)) @ B / (2 * h) for e in np.eye(3)], -1)
    np.testing.assert_allclose(grads, fd, atol=1e-7)


# ---------------------------------------------------------------- classifier


def test_classifier_at_eps_zero_predicts_like_the_kernel_classifier(iris):
    X, y = iris
    train, test = stratified_split(y, 5)
    train = train[::2]  # 56 points: the tie needs no more, and the test stays fast
    ours = RobustKernelTPMSVMOneVsAll(nu=NU, sigma=0.5).fit(X[train], y[train])
    theirs = TPMSVMOneVsAll(nu=NU, kernel="gaussian", sigma=0.5).fit(X[train], y[train])
    d_ours, d_theirs = ours.distances(X[test]), theirs.distances(X[test])
    np.testing.assert_allclose(d_ours, d_theirs, atol=1e-6)
    gap = np.sort(d_theirs, axis=1)[:, 1] - np.sort(d_theirs, axis=1)[:, 0]
    assert np.array_equal(ours.predict(X[test])[gap > 1e-6], theirs.predict(X[test])[gap > 1e-6])
    # one radius for all points: theta' = theta - rho|w| makes (23K) the primal of (19) plus 2 nu rho |w|, and a
    # norm penalty can only shrink the optimal w
    robust = clone(ours).set_params(eps=0.02, p="inf").fit(X[train], y[train])
    assert all(h.norm_w < g.norm_w for h, g in zip(robust.planes_, ours.planes_))
    assert set(robust.predict(X[test])) <= set(robust.classes_)


def test_classifier_parameters_are_checked(iris):
    X, y = iris
    with pytest.raises(ValueError, match="not positive semidefinite"):
        RobustKernelTPMSVMOneVsAll(kernel="sigmoid", a=1.0, b=0.0).fit(X, y)
    with pytest.raises(ValueError, match="radii of \\(21\\)"):
        RobustKernelTPMSVMOneVsAll(sigma=0.5, eps=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="norm of the uncertainty set"):
        RobustKernelTPMSVMOneVsAll(sigma=0.5, p=0.5).fit(X, y)


def test_check_runs_and_passes_on_a_small_set(iris):
    X, y = iris
    keep = np.concatenate([np.flatnonzero(y == k)[:15] for k in range(3)])
    rows = check_robust_kernel(X[keep], y[keep], 1, NU, ALPHA, 0.02, "iris[45]", kernels=(GAUSS,), samples=50)
    assert len(rows) == 2 + 2 + 2 * 4 and all(r.passed for r in rows), [r for r in rows if not r.passed]


# ---------------------------------------------------------------- experiments


@pytest.fixture
def gurobi():
    return pytest.importorskip("gurobipy")


def test_experiments_fit_is_the_builders_model(gurobi, iris):
    """The table fits (23K) as (23) at p = 2 on the span coordinates with Gurobi: the builder's optimum."""
    from tpm_models.experiments.robust import fit_linear_23

    X, y = iris
    eps, p = 0.04, math.inf
    basis = span_basis(GAUSS, X)
    rho = float(feature_radius(GAUSS, X[:1], eps, p)[0])
    (W, T), = fit_linear_23(basis.phi, y, 3, [NU], 2.0, rho)
    for c in (2,):
        r = solve(build("23K", X, y, c, NU, ALPHA, kernel=GAUSS, p=p, eps=eps))
        np.testing.assert_allclose(W[c], r.values["w"], atol=1e-5)
        plane = recover_robust_kernel_23(X, y, c, NU, ALPHA, p, eps, GAUSS, r.values["w"], basis)
        assert T[c] == pytest.approx(plane.theta, abs=1e-5)


@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_attack_search_finds_the_exact_linear_attack(gurobi, wine, p):
    """With the linear kernel the exact attack of the linear table is known: the search moves the same points."""
    from tpm_models.experiments.robust import degenerate_planes, fit_linear_23, robust_correct

    X, y = wine
    train, test = stratified_split(y, 0)
    (W, T), = fit_linear_23(X[train], y[train], 3, [0.4], 2.0, 0.0)
    deg = degenerate_planes(W, 0.4, X[train])
    exact = robust_correct(W, T, X[test], y[test], p, 0.05, 0.4, X[train])
    beta = np.linalg.lstsq(X[train].T, W.T, rcond=None)[0]  # w_c = X' beta_c
    moved = decision_attack_search(Kernel("linear"), X[train], beta, T, deg, X[test], y[test], p, 0.05)
    assert 0 < exact.sum() < len(test)
    np.testing.assert_array_equal(~moved, exact)


def test_kernel_split_brackets_the_attacked_accuracy(gurobi):
    from tpm_models.experiments.robust import run_robust_kernel_split, summarize_robust_kernel

    rec = run_robust_kernel_split("iris", 3, [2.0], [0.05])
    for name, m in rec["models"].items():
        a = m["attacked"]["p=2,eps=0.05"]
        assert a["certified"] <= a["search"] <= m["test"][m["selected"]], name
        assert m["contradictions"] == 0
    row, = summarize_robust_kernel([rec])
    assert row["rho"] == pytest.approx(math.sqrt(2 - 2 * math.exp(-0.05**2 / 0.5)))


def test_kernel_section_is_kept_and_replaced():
    from tpm_models.experiments.robust_report import KERNEL_END, KERNEL_START, kernel_section, with_kernel_section

    page = "# T\n\n| table |\n\n## Discussion\n\ntext\n"
    section = f"{KERNEL_START}\n## Robust kernel model (23K)\nold\n{KERNEL_END}"
    added = with_kernel_section(page, section)
    assert added.index(KERNEL_START) < added.index("## Discussion") and kernel_section(added) == section
    newer = section.replace("old", "new")
    assert kernel_section(with_kernel_section(added, newer)) == newer
    assert with_kernel_section(page, None) == page
