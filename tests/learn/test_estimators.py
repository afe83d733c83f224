"""The scikit-learn classifiers of :mod:`tpm_models.learn.estimators` against independent truths.

* :class:`TPMSVM` trains on the duals (4)/(5) (or (12)/(13)) with the default solver; its
  :math:`w_\\pm, \\theta_\\pm` must equal the primals (2)/(3) (or (10)/(11) in the explicit
  feature space of a polynomial kernel) solved by HiGHS, and its predictions must equal
  (8)/(14) evaluated on those primal solutions.
* :class:`TPMSVMOneVsAll` trains on (16) per class; it must equal the primal (15) by HiGHS,
  and predict (18) of the primal hyperplanes.
* :class:`RobustTPMSVMOneVsAll` with ``eps=0`` predicts what :class:`TPMSVMOneVsAll` predicts.
* Labels of any type give the same classifier; model selection runs; scikit-learn's
  estimator checks pass; bad parameters fail in ``fit`` with a message saying what to do.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from tpm_models import Kernel, solve, stratified_split
from tpm_models.learn.estimators import TPMSVM, DegenerateHyperplaneWarning, RobustTPMSVMOneVsAll, TPMSVMOneVsAll
from tpm_models.learn.robust_kernel import RobustKernelTPMSVMOneVsAll
from tpm_models.models.binary import (
    build_primal_2,
    build_primal_3,
    build_primal_10,
    build_primal_11,
    decision_8,
    predict_8,
)
from tpm_models.models.multiclass import build_primal_15
from tpm_models.models.recovery import Hyperplane

REFERENCE_SOLVER = "highs"
"""Solves the primals; the classifiers solve the duals with the default solver (PIQP)."""

W_TOL = 1e-6
"""Largest difference between a classifier's w (or theta) and the primal's (both solvers
reach ~1e-8 on these min-max scaled data; docs/solvers.md)."""

IRIS_NAMES = np.array(["setosa", "versicolor", "virginica"])


def _plane(w: np.ndarray, theta: float) -> Hyperplane:
    """The hyperplane :math:`w^\\top x + \\theta = 0` of a primal solution, as the one-term
    expansion own = ``w``, :math:`\\lambda = 1` (so ``w_phi(X) = X @ w``, ``w_w = w'w``)."""
    w = np.asarray(w, dtype=float)
    return Hyperplane(Kernel("linear"), w[None, :], np.zeros((1, len(w))), np.array([1.0]), 0.0, 1,
                      float(theta), (float(theta), float(theta)), np.array([], int), "primal")


def _assert_theta(fitted: Hyperplane, primal_theta: float) -> None:
    """:math:`\\theta` is unique when a multiplier is free; otherwise the primal's lies in the KKT interval."""
    if fitted.theta_rule == "mean over N":
        assert fitted.theta == pytest.approx(primal_theta, abs=W_TOL)
    else:
        lo, hi = fitted.theta_interval
        assert lo - W_TOL <= primal_theta <= hi + W_TOL


@pytest.fixture(scope="module")
def iris_split(iris):
    X, y = iris
    train, test = stratified_split(y, 0)
    return X[train], y[train], X[test], y[test]


# --------------------------------------------------------------------------- binary (2)-(14)


def test_binary_linear_equals_primals_2_3_and_decision_8(iris_split):
    """(4)/(5) + (6)/(7) = (2)/(3); predict = (8) on the primal solutions. nu_+ != nu_-."""
    X, y, X_test, _ = iris_split
    labels = np.where(y == 2, "virginica", "other")  # classes_ = [other, virginica]: virginica is X_+
    y_pm = np.where(y == 2, 1, -1)
    clf = TPMSVM(nu_plus=0.3, nu_minus=0.2, alpha=1.0).fit(X, labels)
    p2 = solve(build_primal_2(X, y_pm, 0.3, 1.0), REFERENCE_SOLVER).values
    p3 = solve(build_primal_3(X, y_pm, 0.2, 1.0), REFERENCE_SOLVER).values

    assert clf.classes_.tolist() == ["other", "virginica"]
    np.testing.assert_allclose(clf.coef_, [p2["w"], p3["w"]], atol=W_TOL)
    _assert_theta(clf.planes_[0], p2["theta"])
    _assert_theta(clf.planes_[1], p3["theta"])

    plus, minus = _plane(p2["w"], p2["theta"]), _plane(p3["w"], p3["theta"])
    np.testing.assert_allclose(clf.decision_function(X_test), decision_8(plus, minus, X_test), atol=1e-5)
    expected = np.where(predict_8(plus, minus, X_test) == 1, "virginica", "other")
    np.testing.assert_array_equal(clf.predict(X_test), expected)


def test_binary_kernel_equals_feature_space_primals_10_11_and_decision_14(iris_split):
    """(12)/(13) with the homogeneous quadratic kernel = (10)/(11) in its exact feature space."""
    X, y, X_test, _ = iris_split
    kernel = Kernel("hom-poly", degree=2)
    y_pm = np.where(y == 1, 1, -1)
    clf = TPMSVM(nu=0.3, alpha=1.0, kernel="hom-poly", degree=2).fit(X, y_pm)
    p10 = solve(build_primal_10(X, y_pm, 0.3, 1.0, kernel=kernel), REFERENCE_SOLVER).values
    p11 = solve(build_primal_11(X, y_pm, 0.3, 1.0, kernel=kernel), REFERENCE_SOLVER).values
    phi = kernel.feature_map(X)

    for fitted, primal in zip(clf.planes_, (p10, p11)):
        np.testing.assert_allclose(fitted.w_phi(X), phi @ primal["w"], atol=W_TOL)  # w by its scores
        _assert_theta(fitted, primal["theta"])
    plus, minus = _plane(p10["w"], p10["theta"]), _plane(p11["w"], p11["theta"])
    phi_test = kernel.feature_map(X_test)
    np.testing.assert_allclose(clf.decision_function(X_test), decision_8(plus, minus, phi_test), atol=1e-5)
    np.testing.assert_array_equal(clf.predict(X_test), predict_8(plus, minus, phi_test))
    with pytest.raises(AttributeError, match="only for kernel='linear'"):
        _ = clf.coef_


def test_binary_labels_any_type_and_swapping_the_classes(iris):
    """Relabelling gives the same classifier; swapping which class is X_+ (sorted order)
    negates (8), because (3) is (2) for the other class under (w, theta) -> -(w, theta)."""
    X, y = iris
    y_pm = np.where(y == 2, 1, -1)
    base = TPMSVM(nu=0.3, alpha=1.0).fit(X, y_pm)
    names = TPMSVM(nu=0.3, alpha=1.0).fit(X, np.where(y_pm == 1, "pos", "neg"))
    swapped = TPMSVM(nu=0.3, alpha=1.0).fit(X, np.where(y_pm == 1, 10, 99))  # classes_[1] = 99 is now X_+

    assert names.classes_.tolist() == ["neg", "pos"] and swapped.classes_.tolist() == [10, 99]
    np.testing.assert_array_equal(names.decision_function(X), base.decision_function(X))
    np.testing.assert_allclose(swapped.decision_function(X), -base.decision_function(X), atol=1e-6)
    np.testing.assert_array_equal(names.predict(X), np.where(base.predict(X) == 1, "pos", "neg"))
    np.testing.assert_array_equal(swapped.predict(X), np.where(base.predict(X) == 1, 10, 99))


def test_binary_degenerate_hyperplane_is_left_out_of_8(iris):
    """Versicolor against the rest at nu/alpha = 1/4: the mean of versicolor lies in the
    reduced convex hull of the others, so w_- = 0; the decision is H+'s distance alone."""
    X, y = iris
    with pytest.warns(DegenerateHyperplaneWarning, match="H-"):
        clf = TPMSVM(nu=0.25, alpha=1.0).fit(X, y == 1)
    np.testing.assert_array_equal(clf.degenerate_, [False, True])
    np.testing.assert_allclose(clf.decision_function(X), clf.planes_[0].distance(X))
    np.testing.assert_array_equal(clf.predict(X), clf.planes_[0].distance(X) >= 0)


def test_binary_needs_exactly_two_classes(iris):
    X, y = iris
    with pytest.raises(ValueError, match="Only binary classification is supported.*TPMSVMOneVsAll"):
        TPMSVM().fit(X, y)
    with pytest.raises(ValueError, match="exactly two classes, y has 1 class"):
        TPMSVM().fit(X[:5], y[:5])


# --------------------------------------------------------------------------- one-versus-all (15)-(20)


def test_one_vs_all_equals_primal_15_and_decision_18(iris_split):
    """(16) + (17) per class = (15) by HiGHS; predict = (18) on the primal hyperplanes."""
    X, y, X_test, _ = iris_split
    clf = TPMSVMOneVsAll(nu=0.3, alpha=1.0).fit(X, IRIS_NAMES[y])
    primals = [solve(build_primal_15(X, y, c, 0.3, 1.0), REFERENCE_SOLVER).values for c in range(3)]

    np.testing.assert_allclose(clf.coef_, [p["w"] for p in primals], atol=W_TOL)
    for fitted, primal in zip(clf.planes_, primals):
        _assert_theta(fitted, primal["theta"])
    distances = np.column_stack([np.abs(_plane(p["w"], p["theta"]).distance(X_test)) for p in primals])
    np.testing.assert_allclose(clf.distances(X_test), distances, atol=1e-5)
    np.testing.assert_allclose(clf.decision_function(X_test), -distances, atol=1e-5)
    np.testing.assert_array_equal(clf.predict(X_test), IRIS_NAMES[np.argmin(distances, axis=1)])


def test_one_vs_all_labels_any_type(iris):
    """Non-contiguous integers in another sorted order, and strings: one classifier."""
    X, y = iris
    base = TPMSVMOneVsAll(nu=0.3, alpha=1.0).fit(X, y)
    ints = np.array([10, -3, 7])  # class 0 -> 10 sorts last
    relabelled = TPMSVMOneVsAll(nu=0.3, alpha=1.0).fit(X, ints[y])
    named = TPMSVMOneVsAll(nu=0.3, alpha=1.0).fit(X, IRIS_NAMES[y].astype(object))

    order = np.argsort(ints)  # column k of relabelled is original class order[k]
    np.testing.assert_array_equal(relabelled.classes_, ints[order])
    np.testing.assert_array_equal(relabelled.predict(X), ints[base.predict(X)])
    np.testing.assert_array_equal(relabelled.decision_function(X), base.decision_function(X)[:, order])
    np.testing.assert_array_equal(named.predict(X), IRIS_NAMES[base.predict(X)])


def test_one_vs_all_two_classes_decision_is_one_column(iris):
    """scikit-learn's binary convention: d_0 - d_1, positive for classes_[1]."""
    X, y = iris
    keep = y > 0
    clf = TPMSVMOneVsAll(nu=0.3, alpha=1.0).fit(X[keep], IRIS_NAMES[y[keep]])
    d = clf.distances(X)
    np.testing.assert_array_equal(clf.decision_function(X), d[:, 0] - d[:, 1])
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(clf.decision_function(X) > 0).astype(int)])


def test_one_vs_all_degenerate_class_is_never_nearest():
    """Class "a" sits on both sides of class "b": the mean of "b" is in the hull of "a", w_a = 0."""
    X = np.array([[0.0], [0.1], [1.9], [2.0], [1.4], [1.5], [1.6]])
    y = np.array(["a", "a", "a", "a", "b", "b", "b"])
    with pytest.warns(DegenerateHyperplaneWarning, match="'a'"):
        clf = TPMSVMOneVsAll(nu=0.5, alpha=1.0).fit(X, y)
    np.testing.assert_array_equal(clf.degenerate_, [True, False])
    assert np.isinf(clf.distances(X)[:, 0]).all()
    assert set(clf.predict(X)) == {"b"}


# --------------------------------------------------------------------------- robust (21)-(29)


@pytest.mark.parametrize("p", [1, 2, "inf"])
def test_robust_at_eps_zero_predicts_like_one_vs_all(iris, wine, p):
    """eps = 0: (27)/(28)/(29) are (15), whatever p; the predictions are TPMSVMOneVsAll's."""
    for X, y in (iris, wine) if p == 2 else (iris,):
        det = TPMSVMOneVsAll(nu=0.3, alpha=1.0).fit(X, y)
        rob = RobustTPMSVMOneVsAll(nu=0.3, alpha=1.0, p=p, eps=0.0).fit(X, y)
        np.testing.assert_array_equal(rob.predict(X), det.predict(X))
        np.testing.assert_allclose(rob.coef_, det.coef_, atol=1e-5)


def test_robust_per_point_radii(iris):
    X, y = iris
    radii = np.full(len(X), 0.02)
    a = RobustTPMSVMOneVsAll(nu=0.3, alpha=1.0, p="inf", eps=radii).fit(X, y)
    b = RobustTPMSVMOneVsAll(nu=0.3, alpha=1.0, p="inf", eps=0.02).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-8)
    assert a.coef_.shape == (3, 4) and len(a.theta_intervals_) == 3


# --------------------------------------------------------------------------- model selection


def test_grid_search_over_kernels_and_cross_val_score(iris):
    X, y = iris
    labels = IRIS_NAMES[y]
    grid = [{"nu": [0.25, 0.5]}, {"kernel": ["gaussian"], "sigma": [0.5]}]
    search = GridSearchCV(TPMSVMOneVsAll(alpha=1.0), grid, cv=3).fit(X, labels)
    assert search.best_score_ > 0.8
    assert set(search.predict(X)) <= set(labels)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()

    assert cross_val_score(TPMSVM(nu=0.1, alpha=1.0), X, labels == "virginica", cv=3).mean() > 0.9
    assert cross_val_score(RobustTPMSVMOneVsAll(nu=0.3, p="inf", eps=0.02), X, labels, cv=3).mean() > 0.8


def test_params_round_trip_and_init_stores_only():
    clf = TPMSVM(nu=-1, kernel="nonsense", solver=3)  # invalid, but __init__ does not check
    assert clf.get_params()["nu"] == -1 and clf.get_params()["kernel"] == "nonsense"
    assert clone(clf.set_params(nu=0.2, kernel="linear")).get_params()["nu"] == 0.2
    assert RobustTPMSVMOneVsAll(p="inf").get_params()["p"] == "inf"


# --------------------------------------------------------------------------- validation in fit

X_SMALL = np.array([[0.0, 0.1], [0.2, 0.0], [0.1, 0.3], [1.0, 0.9], [0.8, 1.0], [0.9, 0.7]])
Y_SMALL = np.array(["no", "no", "no", "yes", "yes", "yes"])
NAN_X = np.where(np.arange(12).reshape(6, 2) == 3, np.nan, X_SMALL)
INF_X = np.where(np.arange(12).reshape(6, 2) == 3, np.inf, X_SMALL)


@pytest.mark.parametrize(
    ("estimator", "X", "y", "match"),
    [
        (TPMSVM(), NAN_X, Y_SMALL, "NaN or infinite.*row 1, column 1.*impute"),
        (TPMSVMOneVsAll(), INF_X, Y_SMALL, "NaN or infinite"),
        (RobustTPMSVMOneVsAll(), X_SMALL, Y_SMALL[:5], "inconsistent numbers of samples"),
        (TPMSVM(), X_SMALL[:, 0], Y_SMALL, "Expected 2D array, got 1D array"),
        (TPMSVM(), X_SMALL, np.linspace(0, 1, 6), "Unknown label type"),
        (TPMSVM(nu=0.8, alpha=0.5), X_SMALL, Y_SMALL, "positive hyperplane.*choose nu <= alpha"),
        (TPMSVM(nu_minus=1.5), X_SMALL, Y_SMALL, "negative hyperplane.*nu = 1.5 > alpha = 1.0"),
        (TPMSVM(nu=0.0), X_SMALL, Y_SMALL, "nu must be a finite number > 0"),
        (TPMSVMOneVsAll(nu=2.0), X_SMALL, Y_SMALL, "choose nu <= alpha"),
        (RobustTPMSVMOneVsAll(alpha=np.nan), X_SMALL, Y_SMALL, "alpha must be a finite number"),
        (TPMSVM(kernel="rbf"), X_SMALL, Y_SMALL, "unknown kernel 'rbf'.*Table 1"),
        (TPMSVM(kernel="gaussian"), X_SMALL, Y_SMALL, "needs the parameter 'sigma'"),
        (TPMSVMOneVsAll(kernel="gaussian", sigma=-1.0), X_SMALL, Y_SMALL, "sigma must be > 0"),
        (TPMSVMOneVsAll(sigma=1.0), X_SMALL, Y_SMALL, "'linear' takes no parameter 'sigma'.*leave the others None"),
        (TPMSVM(kernel="hom-poly", degree=1.5), X_SMALL, Y_SMALL, "degree must be an integer"),
        (RobustTPMSVMOneVsAll(p=0.5), X_SMALL, Y_SMALL, "p must be >= 1"),
        (RobustTPMSVMOneVsAll(p="two"), X_SMALL, Y_SMALL, "p must be a number >= 1 or 'inf'"),
        (RobustTPMSVMOneVsAll(eps=-0.1), X_SMALL, Y_SMALL, "eps must be >= 0"),
        (RobustTPMSVMOneVsAll(eps=np.ones(3)), X_SMALL, Y_SMALL, "one radius per point"),
        (TPMSVM(solver="cvxopt"), X_SMALL, Y_SMALL, "unknown solver 'cvxopt': use 'default' or one of"),
        (RobustTPMSVMOneVsAll(solver="piqp"), X_SMALL, Y_SMALL, "'piqp' cannot take the SOCPs.*that can"),
        (RobustTPMSVMOneVsAll(p=3, solver="gurobi"), X_SMALL, Y_SMALL, "'gurobi' cannot take the NLPs"),
        (TPMSVM(free_tol=0.5), X_SMALL, Y_SMALL, "free_tol must be a number in"),
        (TPMSVMOneVsAll(), X_SMALL, ["no"] * 6, "at least two classes"),
    ],
    ids=lambda v: None,
)
def test_fit_rejects_bad_input_saying_what_to_do(estimator, X, y, match):
    with pytest.raises(ValueError, match=match):
        clone(estimator).fit(X, y)


def test_predict_checks_fitted_and_features():
    with pytest.raises(NotFittedError):
        TPMSVM().predict(X_SMALL)
    clf = TPMSVM(nu=0.3).fit(X_SMALL, Y_SMALL)
    assert clf.fit(X_SMALL, Y_SMALL) is clf and clf.n_features_in_ == 2
    with pytest.raises(ValueError, match="X has 3 features, but TPMSVM is expecting 2"):
        clf.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN or infinite"):
        clf.decision_function(NAN_X)


# --------------------------------------------------------------------------- scikit-learn's checks


def _expected_failed_checks(estimator) -> dict[str, str]:
    """Checks that do not apply, with the reason: none. Every check that scikit-learn yields
    for these classifiers passes (the sample-weight checks are not yielded: ``fit`` takes no
    ``sample_weight``, the paper's models have no per-point weight)."""
    return {}


@parametrize_with_checks(
    [
        TPMSVM(),
        TPMSVM(kernel="gaussian", sigma=1.0),
        TPMSVMOneVsAll(),
        RobustTPMSVMOneVsAll(p="inf", eps=0.01),
        RobustTPMSVMOneVsAll(),
        RobustKernelTPMSVMOneVsAll(),  # its defaults: the Gaussian kernel with sigma="scale"
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateHyperplaneWarning)  # noise labels in the checks' data
        check(estimator)


def test_robust_kernel_default_sigma_is_sklearns_gamma_scale():
    from sklearn.metrics.pairwise import rbf_kernel

    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3)) * [1.0, 2.0, 0.5]
    y = np.repeat([0, 1, 2], 10)
    clf = RobustKernelTPMSVMOneVsAll(eps=0.01).fit(X, y)
    gamma = 1.0 / (X.shape[1] * X.var())  # sklearn.svm.SVC(gamma="scale")
    assert np.allclose(clf.kernel_.gram(X, X), rbf_kernel(X, gamma=gamma), rtol=0, atol=1e-12)
    with warnings.catch_warnings():  # a kernel without sigma ignores the default
        warnings.simplefilter("ignore", DegenerateHyperplaneWarning)  # random classes: one w = 0 on this data
        assert RobustKernelTPMSVMOneVsAll(kernel="linear").fit(X, y).kernel_.sigma is None
