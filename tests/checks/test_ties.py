"""The ties between formulations, each against a truth computed here by another route.

* strong duality with the omitted constant written out from errata 1 in numpy;
* primal and dual solved by different solvers;
* theta's optimal set from the primal's one-dimensional subproblem (brute force over
  its breakpoints), not from the multipliers;
* (14)/(20) decision values from the explicit feature-space primal (10)/(11).
"""

import numpy as np
import pytest

from tpm_models import Kernel, build, solve
from tpm_models.checks.deterministic import PAIRS, check_kernel_trick, check_pair, run_checks
from tpm_models.data import one_vs_rest
from tpm_models.models.binary import decision_8, predict_8, recover_minus, recover_plus
from tpm_models.models.multiclass import decision_18, predict_18, recover_17
from tpm_models.models.robust_duals import shrunk_15
from tpm_models.solvers.compare import rel_gap

TOL = 1e-6  # relative; the solvers are asked for 1e-9 (piqp 1e-12)


def omitted_constant(X_other, nu, gram=lambda A, B: A @ B.T):
    """Errata 1: -1/2 (nu/m_o)^2 e'K(X_o, X_o)e, from the Lagrangian of (15)."""
    a = nu / len(X_other)
    return -0.5 * a**2 * np.ones(len(X_other)) @ gram(X_other, X_other) @ np.ones(len(X_other))


@pytest.mark.parametrize("dataset", ["iris", "wine"])
@pytest.mark.parametrize("c", [0, 1, 2])
def test_strong_duality_15_16_across_solvers(request, dataset, c):
    X, y = request.getfixturevalue(dataset)
    for nu, alpha in [(0.3, 1.0), (0.5, 1.0), (0.9 * 2.0**-4, 2.0**-4)]:
        p = solve(build(15, X, y, c, nu, alpha), "highs")
        d = solve(build(16, X, y, c, nu, alpha), "piqp")
        k = omitted_constant(X[y != c], nu)
        assert rel_gap(p.objective, d.objective + k, k) < TOL
        # the printed dual alone is NOT the primal optimum: the constant matters
        assert rel_gap(p.objective, d.objective, k) > 1e-3


@pytest.mark.parametrize("side", ["plus", "minus"])
def test_strong_duality_binary_2_4_and_3_5(iris, side):
    X, y = iris
    primal, dual = (2, 4) if side == "plus" else (3, 5)
    for c in (0, 1, 2):
        p = solve(build(primal, X, y, c, 0.4, 1.0), "highs")
        d = solve(build(dual, X, y, c, 0.4, 1.0), "piqp")
        other = X[y != c] if side == "plus" else X[y == c]  # (2)<->(4): X_-; (3)<->(5): X_+
        k = omitted_constant(other, 0.4)
        assert rel_gap(p.objective, d.objective + k, k) < TOL


@pytest.mark.parametrize(
    "kernel", [Kernel("hom-poly", degree=2), Kernel("hom-poly", degree=3), Kernel("inhom-poly", degree=2, gamma=0.5)]
)
@pytest.mark.parametrize("primal,dual", [(10, 12), (11, 13)])
def test_feature_space_primal_equals_kernel_dual(iris, kernel, primal, dual):
    """(10)<->(12), (11)<->(13): explicit polynomial feature map vs Gram matrix of Table 1."""
    X, y = iris
    c = 1
    p = solve(build(primal, X, y, c, 0.3, 1.0, kernel), "highs")
    d = solve(build(dual, X, y, c, 0.3, 1.0, kernel), "piqp")
    other = X[y != c] if primal == 10 else X[y == c]
    k = omitted_constant(other, 0.3, lambda A, B: (A @ B.T + (kernel.gamma or 0.0)) ** kernel.degree)
    assert rel_gap(p.objective, d.objective + k, k) < TOL


def theta_argmin_bruteforce(minus_s, nu, alpha, plus_side=True):
    """Optimal theta of the primal for fixed w, by brute force (independent of lambda).

    plus side (2)/(15): minimise nu*theta + alpha/m * sum max(0, -s_i - theta);
    minus side (3):     minimise -nu*theta + alpha/m * sum max(0, s_j + theta).
    The objective is piecewise linear; its minimisers form an interval between
    breakpoints r_i = -s_i. Returns (lo, hi) with -inf/inf for unbounded ends.
    """
    m = len(minus_s)

    def g(t):
        if plus_side:
            return nu * t + alpha / m * np.maximum(0.0, minus_s - t).sum()
        return -nu * t + alpha / m * np.maximum(0.0, t - minus_s).sum()

    r = np.sort(minus_s)
    values = np.array([g(t) for t in r])
    best = values.min()
    tol = 1e-9 * max(1.0, abs(best))
    at_best = r[values <= best + tol]
    lo, hi = at_best.min(), at_best.max()
    step = 1.0 + abs(r).max()
    if g(lo - step) <= best + tol:
        lo = -np.inf
    if g(hi + step) <= best + tol:
        hi = np.inf
    return lo, hi


@pytest.mark.parametrize("dataset", ["iris", "wine"])
@pytest.mark.parametrize("ratio", [0.1, 0.3, 0.5, 0.6, 1.0])
def test_theta_interval_matches_the_primal_subproblem(request, dataset, ratio):
    X, y = request.getfixturevalue(dataset)
    alpha = 1.0
    nu = ratio * alpha
    for c in np.unique(y):
        lam = solve(build(16, X, y, c, nu, alpha), "piqp").values["lam"]
        plane = recover_17(X, y, c, lam, nu, alpha)
        lo, hi = theta_argmin_bruteforce(-plane.w_phi(X[y == c]), nu, alpha)
        got_lo, got_hi = plane.theta_interval
        # the KKT interval equals the primal's optimal set (ends: 1e-7 absolute, data in [0,1])
        for a, b in ((got_lo, lo), (got_hi, hi)):
            assert (np.isinf(a) and np.isinf(b) and a == b) or abs(a - b) < 1e-7
        assert lo - 1e-7 <= plane.theta <= hi + 1e-7


def test_errata_5_no_free_support_vector_on_whole_iris_at_half(iris):
    """nu/alpha = 0.5 and m_c = 50: nu*m_c/alpha = 25 is an integer, every multiplier sits at a
    bound, N_c is empty and theta is not unique. Different solvers return different thetas,
    all inside our interval; the recovered theta is its midpoint."""
    X, y = iris
    for c in (0, 1, 2):
        plane = recover_17(X, y, c, solve(build(16, X, y, c, 0.5, 1.0), "piqp").values["lam"], 0.5, 1.0)
        assert plane.free.size == 0 and plane.theta_rule == "midpoint of KKT interval"
        lo, hi = plane.theta_interval
        assert hi - lo > 1e-5  # a real interval, far wider than the solver tolerance
        assert plane.theta == pytest.approx(0.5 * (lo + hi), abs=1e-15)
        for solver in ("highs", "piqp", "daqp"):  # HiGHS's primal is accurate to ~1e-7 here
            theta = solve(build(15, X, y, c, 0.5, 1.0), solver).values["theta"]
            assert lo - 1e-6 <= theta <= hi + 1e-6


def test_theta_at_nu_equal_alpha_is_unbounded_below(iris):
    X, y = iris
    plane = recover_17(X, y, 0, solve(build(16, X, y, 0, 1.0, 1.0), "piqp").values["lam"], 1.0, 1.0)
    assert plane.theta_interval[0] == -np.inf and np.isfinite(plane.theta_interval[1])
    assert plane.theta == plane.theta_interval[1] and plane.theta_rule == "finite end of KKT interval"


@pytest.mark.parametrize("key", sorted(PAIRS))
def test_check_pair_all_ties_pass(wine, key):
    """The library's own check battery on Wine, class 2 (one pair per parametrisation)."""
    X, y = wine
    pair = PAIRS[key]
    kernel = Kernel("inhom-poly", degree=2, gamma=1.0) if pair.primal in (10, 11) else None
    results = check_pair(pair, X, y, 2, 0.3, 1.0, kernel, solver="piqp", label="wine")
    assert len(results) == 5
    assert all(r.passed for r in results), [(r.tie, r.residual) for r in results if not r.passed]


def test_decision_14_from_kernel_equals_feature_space_primal(iris):
    """(14) via kernel expansions (12)/(13) vs sign((phi(x)'w+ + th+)/|w+| + (phi(x)'w- + th-)/|w-|)
    with w, theta from the feature-space primals (10)/(11)."""
    X, y = iris
    kernel = Kernel("hom-poly", degree=2)
    c, nu, alpha = 1, 0.3, 1.0
    yb = one_vs_rest(y, c)
    plus = recover_plus(X, yb, solve(build(12, X, y, c, nu, alpha, kernel)).values["lam"], nu, alpha, kernel)
    minus = recover_minus(X, yb, solve(build(13, X, y, c, nu, alpha, kernel)).values["lam"], nu, alpha, kernel)
    assert plus.free.size and minus.free.size  # theta unique here, so both routes must agree
    p10 = solve(build(10, X, y, c, nu, alpha, kernel), "highs").values
    p11 = solve(build(11, X, y, c, nu, alpha, kernel), "highs").values
    phi = kernel.feature_map(X)
    explicit = (phi @ p10["w"] + p10["theta"]) / np.linalg.norm(p10["w"]) + (
        phi @ p11["w"] + p11["theta"]
    ) / np.linalg.norm(p11["w"])
    np.testing.assert_allclose(decision_8(plus, minus, X), explicit, atol=1e-6)
    np.testing.assert_array_equal(predict_8(plus, minus, X), np.where(explicit >= 0, 1, -1))


def test_decision_18_from_primal_hyperplanes(wine):
    """(18) from dual recovery vs argmin |x'w_c + theta_c|/|w_c| with (w_c, theta_c) from (15)."""
    X, y = wine
    nu, alpha = 0.3, 1.0
    planes, explicit = [], []
    for c in (0, 1, 2):
        planes.append(recover_17(X, y, c, solve(build(16, X, y, c, nu, alpha)).values["lam"], nu, alpha))
        p = solve(build(15, X, y, c, nu, alpha), "highs").values
        explicit.append(np.abs(X @ p["w"] + p["theta"]) / np.linalg.norm(p["w"]))
    explicit = np.column_stack(explicit)
    assert all(pl.free.size for pl in planes)
    np.testing.assert_allclose(decision_18(planes, X), explicit, atol=1e-6)
    np.testing.assert_array_equal(predict_18(planes, X), explicit.argmin(axis=1))


def test_kernel_trick_19_linear_equals_16_and_20_equals_18(iris):
    X, y = iris
    for c in (0, 1, 2):
        assert all(r.passed for r in check_kernel_trick(X, y, c, 0.3, 1.0))


def test_inhomogeneous_linear_kernel_is_the_linear_model(iris):
    """Errata 10: with k = gamma + x'x', (19)'s objective is (16)'s plus the constant
    gamma*nu^2/2 (from e'lam = nu: -gamma nu^2/2 + gamma nu^2), so the solutions and the
    decision values equal the linear ones, for every gamma."""
    X, y = iris
    lin = recover_17(X, y, 1, solve(build(16, X, y, 1, 0.3, 1.0)).values["lam"], 0.3, 1.0)
    for gamma in (0.0625, 1.0, 16.0):
        k = Kernel("inhom-poly", degree=1, gamma=gamma)
        d = solve(build(19, X, y, 1, 0.3, 1.0, k))
        assert rel_gap(d.objective - 0.5 * gamma * 0.3**2, solve(build(16, X, y, 1, 0.3, 1.0)).objective) < TOL
        plane = recover_17(X, y, 1, d.values["lam"], 0.3, 1.0, k)
        np.testing.assert_allclose(plane.distance(X), lin.distance(X), atol=1e-6)


def test_run_checks_iris_one_parameter_point(iris):
    X, y = iris
    results = run_checks(X, y, "iris", parameters=[(0.5, 1.0)], kernels=[Kernel("hom-poly", degree=2)],
                         cross_solvers=["piqp", "highs"])
    assert len(results) > 50
    assert all(r.passed for r in results), [(r.tie, r.instance, r.residual) for r in results if not r.passed]


@pytest.mark.parametrize("c, eps", [(0, 0.02), (1, 0.02), (2, 0.05), (1, 1.0)])
def test_23_at_p_2_with_one_eps_is_15_shrunk(wine, c, eps):
    """docs/derivations.md, "One eps": (23) at p = 2 (Clarabel on the norm) has (15)'s multipliers and
    w = (1 - 2 nu eps / |w15|)_+ w15 (PIQP on (15)); eps = 1 makes the robust plane degenerate (w = 0). Two solvers
    on two models: agreement to 1e-7 (both accurate to about 1e-9)."""
    X, y = wine
    nu, alpha = 0.3, 1.0
    r15 = solve(build(15, X, y, c, nu, alpha), "piqp")
    r23 = solve(build(23, X, y, c, nu, alpha, p=2, eps=eps), "clarabel")
    w15 = r15.values["w"]
    expected = shrunk_15(w15, nu, eps)
    assert np.linalg.norm(r23.values["w"] - expected) <= 1e-7 * max(1.0, np.linalg.norm(expected))
    if np.linalg.norm(w15) > 2 * nu * eps:
        assert np.abs(r23.duals["margin"] - r15.duals["margin"]).max() <= 1e-7
    else:
        assert np.linalg.norm(expected) == 0.0
