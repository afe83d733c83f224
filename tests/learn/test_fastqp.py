"""The fast path (tpm_models.learn.fastqp) against the Pyomo builder of (19), two solvers and recover_17/decision_18."""

import numpy as np
import pytest

from tpm_models import Kernel, solve, stratified_split
from tpm_models.learn.fastqp import ClassDual, FastOneVsAll, FastQPError, fit_classes, predict_rows
from tpm_models.models.multiclass import build_dual_19, decision_18, recover_17
from tpm_models.solvers.matrices import qp_matrices

KERNELS = [
    Kernel("linear"),
    Kernel("hom-poly", degree=3),
    Kernel("inhom-poly", degree=2, gamma=2.0**-4),
    Kernel("inhom-poly", degree=3, gamma=16.0),
    Kernel("gaussian", sigma=2.0**-4),
    Kernel("gaussian", sigma=16.0),
]
# (nu/alpha, alpha): 0.5 * 38 is an integer (theta from the KKT-interval midpoint on Iris), alpha off 1
PARAMS = [(0.1, 2.0**-3), (0.5, 1.0), (0.9, 2.0**5)]
MATRIX_TOL = 1e-14  # relative to the largest entry of the matrix compared
LAM_TOL = 1e-5  # relative to the bound alpha/m_c. Measured: <= 3e-9 except sigma = 16, where K is nearly all
# ones and lambda is ill-determined: 1.3e-6 (DAQP via Pyomo vs fast path) and 7e-7 (PIQP vs DAQP), theta still 3e-12.
THETA_TOL = 1e-7  # relative; measured <= 6e-9
OBJ_TOL = 1e-9  # relative, DAQP (fast path) vs PIQP through Pyomo
DIST_TOL = 1e-6  # decision distances of (18)/(20), fast path vs recover_17 from PIQP's lambda


def _close(a, b, tol):
    scale = max(1.0, float(np.max(np.abs(a))) if np.size(a) else 1.0)
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) <= tol * scale if np.size(a) else True


@pytest.mark.parametrize("data", ["iris", "wine"])
def test_fast_path_equals_pyomo_19(request, data):
    """Same matrices as qp_matrices(build_dual_19(...)), same lambda as solve(..., "daqp"), same optimum as
    solve(..., "piqp"), same theta/interval/rule as recover_17 and same predictions as decision_18."""
    X, y = request.getfixturevalue(data)
    train, _ = stratified_split(y, 0)
    Xt, yt = X[train], y[train]
    instances = 0
    for kernel in KERNELS:
        K = kernel.gram(Xt, Xt)
        planes_fast, ref_planes = {}, {}
        for ratio, alpha in PARAMS:
            nu = ratio * alpha
            planes_fast[ratio], _ = fit_classes(K, np.arange(len(Xt)), yt, 3, [nu], [alpha])
            ref_planes[ratio] = []
        for c in range(3):
            model = build_dual_19(Xt, yt, c, PARAMS[0][0] * PARAMS[0][1], PARAMS[0][1], kernel=kernel)
            Xc, Xo = Xt[yt == c], Xt[yt != c]
            dual = ClassDual(kernel.gram(Xc, Xc), kernel.gram(Xo, Xc))  # the blocks build_dual_19 uses
            for ratio, alpha in PARAMS:
                nu = ratio * alpha
                model.nu.set_value(nu)
                model.alpha.set_value(alpha)
                qp, dm = qp_matrices(model), dual.matrices(nu, alpha)
                assert qp.sense == -1 and qp.q0 == 0 and qp.G.shape == (0, len(Xc))
                for name in ("P", "q", "A", "b", "x_l", "x_u"):
                    assert _close(getattr(qp, name), getattr(dm, name), MATRIX_TOL), (kernel, c, ratio, name)
                lam = dual.solve(nu, alpha)
                ref_daqp = solve(model, "daqp")
                upper = alpha / len(Xc)
                assert np.max(np.abs(lam - ref_daqp.values["lam"])) <= LAM_TOL * upper, (kernel, c, ratio)
                ref = solve(model, "piqp")
                assert abs(dm.objective(lam) - ref.objective) <= OBJ_TOL * max(1.0, abs(ref.objective))
                plane = recover_17(Xt, yt, c, ref.values["lam"], nu, alpha, kernel)
                fast = planes_fast[ratio][c]
                assert np.max(np.abs(fast.lam[:, 0] - lam)) <= LAM_TOL * upper
                assert fast.theta_rule[0] == plane.theta_rule, (kernel, c, ratio)
                assert abs(fast.theta[0] - plane.theta) <= THETA_TOL * max(1.0, abs(plane.theta))
                for got, want in zip(fast.theta_interval[0], plane.theta_interval):
                    assert got == want or abs(got - want) <= THETA_TOL * max(1.0, abs(want))
                assert abs(fast.w_w[0] - plane.w_w) <= 1e-8 * max(1.0, plane.w_w)
                ref_planes[ratio].append(plane)
                instances += 1
        for ratio, _ in PARAMS:
            dist_ref = decision_18(ref_planes[ratio], X)
            dist_fast = np.column_stack([np.abs(p.distance(kernel.gram(X, Xt)))[:, 0] for p in planes_fast[ratio]])
            assert _close(dist_fast, dist_ref, DIST_TOL), (kernel, ratio)
            pred_fast = predict_rows(planes_fast[ratio], kernel.gram(X, Xt))[0]
            gap = np.sort(dist_ref, axis=1)[:, 1] - np.sort(dist_ref, axis=1)[:, 0]
            clear = gap > 10 * DIST_TOL  # points whose nearest surface is not a numerical tie
            assert clear.mean() > 0.95
            assert np.array_equal(pred_fast[clear], dist_ref.argmin(axis=1)[clear]), (kernel, ratio)
    assert instances == len(KERNELS) * 3 * len(PARAMS)


def test_class_dual_matrices_are_the_pyomo_19(iris):
    X, y = iris
    k = Kernel("gaussian", sigma=0.5)
    Xc, Xo = X[y == 1], X[y != 1]
    dm = ClassDual(k.gram(Xc, Xc), k.gram(Xo, Xc)).matrices(0.3, 1.5)
    qp = qp_matrices(build_dual_19(X, y, 1, 0.3, 1.5, kernel=k))
    for name in ("P", "q", "A", "b", "G", "h_l", "h_u", "x_l", "x_u"):
        assert getattr(qp, name).shape == getattr(dm, name).shape, name
        assert _close(getattr(qp, name), getattr(dm, name), MATRIX_TOL), name
    assert (qp.sense, qp.q0) == (dm.sense, dm.q0)


def test_piqp_fast_path_agrees_with_daqp(wine):
    X, y = wine
    k = Kernel("inhom-poly", degree=2, gamma=1.0)
    K = k.gram(X, X)
    nus, alphas = [0.1, 0.45, 0.9], [1.0, 1.0, 1.0]
    a, _ = fit_classes(K, np.arange(len(X)), y, 3, nus, alphas, "daqp")
    b, _ = fit_classes(K, np.arange(len(X)), y, 3, nus, alphas, "piqp")
    for pa, pb in zip(a, b):
        assert np.max(np.abs(pa.lam - pb.lam)) <= 1e-7
        assert np.allclose(pa.theta, pb.theta, rtol=1e-6, atol=1e-8)
    assert np.array_equal(predict_rows(a, K), predict_rows(b, K))


def test_fast_estimator_matches_recover_17(iris):
    X, y = iris
    train, test = stratified_split(y, 1)
    k = Kernel("gaussian", sigma=0.5)
    clf = FastOneVsAll(0.3, 1.0, k).fit(X[train], y[train])
    planes = [recover_17(X[train], y[train], c, solve(build_dual_19(X[train], y[train], c, 0.3, 1.0, kernel=k), "piqp")
                         .values["lam"], 0.3, 1.0, k) for c in range(3)]
    np.testing.assert_allclose(clf.distances(X[test]), decision_18(planes, X[test]), rtol=1e-6, atol=1e-8)
    assert clf.qps_ == 3


def test_clear_errors(iris):
    X, y = iris
    K = Kernel().gram(X, X)
    with pytest.raises(ValueError, match="unknown fast-path solver"):
        ClassDual(K[:5, :5], K[5:, :5], "gurobi")
    with pytest.raises(ValueError, match="NaN"):
        ClassDual(np.full((3, 3), np.nan), np.ones((2, 3)))
    with pytest.raises(ValueError, match="do not fit"):
        ClassDual(K[:5, :5], K[5:, :4])
    with pytest.raises(ValueError, match="nu = 2"):
        ClassDual(K[:5, :5], K[5:, :5]).solve(2.0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        FastOneVsAll().fit(np.where(X == X[0, 0], np.nan, X), y)
    with pytest.raises(ValueError, match="class numbers"):
        FastOneVsAll().fit(X, y.astype(float))
    with pytest.raises(ValueError, match="sigma must be > 0"):
        FastOneVsAll(kernel=Kernel("gaussian", sigma=0.0))
    with pytest.raises(ValueError, match="need both > 0"):
        fit_classes(K, np.arange(50), y[:50], 2, [0.5], [1.0])
    assert issubclass(FastQPError, RuntimeError)


def test_degenerate_hyperplane_is_never_nearest_like_the_estimator(iris):
    """A class drawn at random from every class has w = 0 (its hull holds the others' mean):
    the fast path and TPMSVMOneVsAll flag the same hyperplane and predict the same."""
    import warnings

    from tpm_models.learn.estimators import TPMSVMOneVsAll
    from tpm_models.learn.fastqp import FastOneVsAll

    X, y = iris
    y2 = np.where(np.random.default_rng(1).random(len(y)) < 0.3, 3, y)
    for ratio in (0.1, 0.5):
        fast = FastOneVsAll(nu=ratio, alpha=1.0).fit(X, y2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            slow = TPMSVMOneVsAll(nu=ratio, alpha=1.0).fit(X, y2)
        flags = [bool(p.degenerate[0]) for p in fast.planes_]
        assert flags == [False, False, False, True] == list(map(bool, slow.degenerate_))
        assert np.isinf(fast.distances(X)[:, 3]).all()
        np.testing.assert_array_equal(fast.predict(X), slow.predict(X))


def _theta_rule_by_hand(minus_s, lam, upper, sign, free_tol):
    """Errata 5 written out point by point (the table of tpm_models.models.recovery's docstring)."""
    tol = free_tol * upper
    free = [i for i in range(len(lam)) if tol < lam[i] < upper - tol]
    below = [minus_s[i] for i in range(len(lam)) if (lam[i] < upper - tol if sign == 1 else lam[i] > tol)]
    above = [minus_s[i] for i in range(len(lam)) if (lam[i] > tol if sign == 1 else lam[i] < upper - tol)]
    lo, hi = (max(below) if below else -np.inf), (min(above) if above else np.inf)
    if free:
        return sum(minus_s[i] for i in free) / len(free), (lo, hi), free, "mean over N"
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi), (lo, hi), free, "midpoint of KKT interval"
    return (lo if np.isfinite(lo) else hi), (lo, hi), free, "finite end of KKT interval"


@pytest.mark.parametrize("sign", [1, -1])
def test_kkt_thetas_is_the_theta_rule_for_every_column(sign):
    """kkt_thetas (the fast path's recovery, all parameter columns at once) and kkt_theta (one column, the dense
    recovery's) against the rule written out point by point: every case of the table (free points, none, a
    bound set empty), multipliers on and within free_tol of the bounds. Intervals, free sets and rules are
    exact; theta is a mean, summed here in another order: to 1e-14."""
    from tpm_models.models.recovery import FREE_TOL, kkt_theta, kkt_thetas

    rng = np.random.default_rng(7)
    for m, k in [(1, 3), (5, 9), (40, 9), (200, 4)]:
        upper = rng.uniform(0.01, 1.0, k)
        lam = np.empty((m, k))
        for j in range(k):
            u = upper[j]
            choices = [0.0, u, 0.5 * u, 1e-3 * FREE_TOL * u, u * (1 - 1e-3 * FREE_TOL), 2.0 * FREE_TOL * u]
            lam[:, j] = rng.choice(choices, size=m) if j % 3 else rng.uniform(0.0, u, m)
        lam[:, 0] = 0.0  # no free point, and for sign = -1 no point bounded below
        lam[:, 1] = np.where(np.arange(m) % 2, upper[1], 0.0)  # no free point: the midpoint (m > 1)
        minus_s = rng.normal(size=(m, k))
        got = kkt_thetas(minus_s, lam, upper, sign, FREE_TOL)
        for j in range(k):
            want = _theta_rule_by_hand(minus_s[:, j], lam[:, j], upper[j], sign, FREE_TOL)
            one = kkt_theta(minus_s[:, j], lam[:, j], upper[j], sign)
            for theta, interval, free, rule in (got[j], one):
                assert interval == want[1] and list(free) == want[2] and rule == want[3]
                assert theta == pytest.approx(want[0], rel=1e-14, abs=1e-14)
            # kkt_theta works on the one column itself: the same comparisons and the same sum, so the same bits
            assert one[0] == got[j][0] and one[1] == got[j][1] and one[3] == got[j][3]
            np.testing.assert_array_equal(one[2], got[j][2])
