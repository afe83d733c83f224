"""What the small-set fit no longer does (issue 25), checked against the path it replaced.

The dense path's plane (:func:`tpm_models.learn.one_vs_all.fit_dense_plane`), which computes every Gram block
once, against the path it replaced: the same dual solution handed to
:func:`tpm_models.models.recovery.recover` (which recomputes the blocks for the scores and for
:math:`\\langle w,w\\rangle`). For the linear kernel :math:`\\langle w,w\\rangle` is also checked against
:math:`\\|w\\|^2` of the explicit :math:`w` of (17).

Tolerances: the two paths do the same floating-point operations on the same blocks, so they agree to rounding
(1e-12 relative, far below any solver tolerance); theta's free set must be the same set.

Labels of the dtype kinds :data:`tpm_models.learn.base.LABEL_KINDS` skip ``check_classification_targets``: the
truth is scikit-learn's ``type_of_target``, which calls them binary or multiclass."""

from __future__ import annotations

import dataclasses

import numpy as np
import piqp
import pytest
from sklearn.utils.multiclass import type_of_target

from tpm_models import Kernel
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.learn.base import LABEL_KINDS, plain_fit_arrays
from tpm_models.learn.binary import TPMSVM
from tpm_models.learn.one_vs_all import TPMSVMOneVsAll, fit_dense_plane
from tpm_models.models.binary import recover_minus, recover_plus
from tpm_models.models.recovery import expansion_w_w, recover
from tpm_models.models.shapes import kernel_dual_matrices
from tpm_models.solvers import WarmStart, solve_matrices
from tpm_models.solvers.backends.piqp import piqp_settings

KERNELS = [Kernel("linear"), Kernel("gaussian", sigma=0.5), Kernel("inhom-poly", degree=2, gamma=1.0)]


@pytest.mark.parametrize("dataset", ["iris", "wine"])
@pytest.mark.parametrize("kernel", KERNELS, ids=str)
@pytest.mark.parametrize("nu,alpha", [(0.5, 1.0), (0.2, 0.4)])
def test_the_dense_plane_is_the_recovered_plane(dataset, kernel, nu, alpha):
    d = load_dataset(dataset)
    X, y = min_max_scale(d.X), d.y
    for c in np.unique(y):
        own, other = X[y == c], X[y != c]
        plane = fit_dense_plane(kernel, own, other, nu, alpha, "default")
        lam = solve_matrices(kernel_dual_matrices(kernel, own, other, nu, alpha)).values["x"]
        np.testing.assert_array_equal(plane.lam, lam)  # the same QP, the same solver: the same solution
        truth = recover(own, other, lam, nu, alpha, kernel)
        assert truth.w_w_value is None  # recover leaves <w,w> to the plane, from its own three blocks
        np.testing.assert_allclose(plane.theta, truth.theta, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(plane.theta_interval, truth.theta_interval, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(plane.free, truth.free)
        assert plane.theta_rule == truth.theta_rule
        np.testing.assert_allclose(plane.w_w, truth.w_w, rtol=1e-12)
        if kernel.name == "linear":
            np.testing.assert_allclose(plane.w_w, truth.w @ truth.w, rtol=1e-10)
        Z = X[::7]
        np.testing.assert_allclose(plane.distance(Z), truth.distance(Z), rtol=1e-10, atol=1e-12)


def test_w_w_is_computed_once_and_the_given_value_is_used():
    d = load_dataset("iris")
    X, y = min_max_scale(d.X), d.y
    kernel = Kernel("gaussian", sigma=0.5)
    clf = TPMSVMOneVsAll(kernel="gaussian", sigma=0.5, backend="dense").fit(X, y)
    for c, h in enumerate(clf.planes_):
        own, other = X[y == c], X[y != c]
        blocks = kernel.gram(own, own), kernel.gram(own, other), kernel.gram(other, other)
        np.testing.assert_allclose(h.w_w, expansion_w_w(h.lam, h.nu_over_m_other, *blocks), rtol=1e-12)
        assert h.w_w_value == h.w_w  # stored by the fit: predict does not recompute it
    plane = recover(X[y == 0], X[y != 0], clf.planes_[0].lam, 0.5, 1.0, kernel)
    first = plane.w_w
    assert "w_w" in plane.__dict__ and plane.w_w is first  # cached on the (frozen) plane after the first call


@pytest.mark.parametrize("y", [np.array([3, 3, 7]), np.array([0, 1]), np.array([5, 5]), np.array([True, False, True]),
                               np.array([2, 9, 4], dtype=np.uint8), np.array(["a", "b", "c"]), np.array(["x", "x"]),
                               np.array([-1, 1, -1], dtype=np.int8)])
def test_the_label_kinds_that_skip_the_target_check_are_always_classes(y):
    assert y.dtype.kind in LABEL_KINDS
    assert type_of_target(y) in ("binary", "multiclass")


def test_continuous_and_byte_labels_are_still_refused():
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="Unknown label type"):
        TPMSVMOneVsAll().fit(X, [0.5, 1.5, 2.25, 0.125])
    with pytest.raises(TypeError, match="bytes"):
        TPMSVMOneVsAll().fit(X, np.array([b"a", b"b", b"a", b"b"]))


def piqp_by_hand(qp) -> np.ndarray:
    """PIQP's DenseSolver on the dual ``qp`` with the settings of solve(model, "piqp"), set up here from the arrays
    (no rows G, finite bounds): the truth the backend's adapter must add nothing to."""
    solver = piqp.DenseSolver()
    for key, value in piqp_settings().items():
        setattr(solver.settings, key, value)
    solver.setup(np.asfortranarray(qp.P), qp.q, np.asfortranarray(qp.A), qp.b, None, None, None, qp.x_l, qp.x_u)
    assert solver.solve() == piqp.PIQP_SOLVED
    return np.array(solver.result.x, dtype=float)


@pytest.mark.parametrize("dataset", ["iris", "wine"])
@pytest.mark.parametrize("kernel", KERNELS, ids=str)
@pytest.mark.parametrize("nu,alpha", [(0.5, 1.0), (0.2, 0.4), (0.3, 0.3)])
def test_the_dense_route_is_piqp_itself(dataset, kernel, nu, alpha):
    """The estimators' dense route, solve_matrices(qp) (the registry's PIQP backend, its matrix_run, and the checks),
    against PIQP run by hand on the same arrays with the same settings: the same iterates, so lambda is equal to the
    last bit (no tolerance), for every own set of one-versus-all and both of the binary duals (classes 0 and 1 of
    the set)."""
    d = load_dataset(dataset)
    X, y = min_max_scale(d.X), d.y
    pairs = [(X[y == c], X[y != c]) for c in np.unique(y)] + [(X[y == 0], X[y == 1]), (X[y == 1], X[y == 0])]
    for own, other in pairs:
        qp = kernel_dual_matrices(kernel, own, other, nu, alpha)
        lam = piqp_by_hand(qp)
        np.testing.assert_array_equal(solve_matrices(qp).values["x"], lam)
        np.testing.assert_array_equal(solve_matrices(qp, "piqp").values["x"], lam)
        np.testing.assert_array_equal(fit_dense_plane(kernel, own, other, nu, alpha, "default").lam, lam)


WARM_OBJ_RTOL = 1e-10  # both runs stop at DENSE_QP_TOL (1e-12) residuals and gap; measured <= 1.4e-12
WARM_LAM_TOL = 1e-6  # of the bound alpha/m: the linear kernel's duals are not strictly convex (lambda not unique);
# measured <= 6.4e-8 (DAQP, linear kernel), the objective being the number that is unique


@pytest.mark.parametrize("solver", ["piqp", "daqp"])
@pytest.mark.parametrize("kernel", KERNELS, ids=str)
def test_a_warm_run_reaches_the_cold_optimum(wine, solver, kernel):
    """A WarmStart set up on one dual (nu' = 0.9 nu) and updated to another (the same P, A and G arrays) against a
    cold run of that other dual: the same optimum (tolerances above), and the set-up is kept, not rebuilt."""
    X, y = wine
    for c in np.unique(y):
        own, other = X[y == c], X[y != c]
        qp = kernel_dual_matrices(kernel, own, other, 0.3, 1.0)
        first = kernel_dual_matrices(kernel, own, other, 0.27, 1.0)
        warm = WarmStart()
        solve_matrices(dataclasses.replace(qp, q=first.q, b=first.b), solver, warm=warm)
        kept = warm.solver
        assert warm.holds(qp) and not warm.holds(first)  # first's P is another array
        hot, cold = solve_matrices(qp, solver, warm=warm), solve_matrices(qp, solver)
        assert warm.solver is kept
        assert abs(hot.objective - cold.objective) <= WARM_OBJ_RTOL * max(1.0, abs(cold.objective))
        np.testing.assert_allclose(hot.values["x"], cold.values["x"], rtol=0, atol=WARM_LAM_TOL / len(own))


@pytest.mark.parametrize("kernel", KERNELS, ids=str)
def test_the_binary_dense_planes_are_the_recovered_planes(wine, kernel):
    """TPMSVM's dense path (fit_dense_plane with sign -1 for (5)/(13)) against recover_plus/recover_minus on the
    same lambda, which recompute every block (tolerances of the module docstring), and its predictions against the
    Pyomo route's (the duals built by build_dual_4/5 or 12/13, solved by PIQP through solve()): identical."""
    X, y = wine
    y2 = np.where(y == 1, 1, -1)
    params = {"kernel": kernel.name, **{k: v for k, v in vars(kernel).items() if k != "name" and v is not None}}
    dense = TPMSVM(nu=0.3, **params).fit(X, y2)
    pyomo = TPMSVM(nu=0.3, backend="pyomo", **params).fit(X, y2)
    truths = (recover_plus(X, y2, dense.planes_[0].lam, 0.3, 1.0, kernel),
              recover_minus(X, y2, dense.planes_[1].lam, 0.3, 1.0, kernel))
    for plane, truth in zip(dense.planes_, truths):
        assert plane.sign == truth.sign
        np.testing.assert_allclose(plane.theta, truth.theta, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(plane.free, truth.free)
        np.testing.assert_allclose(plane.w_w, truth.w_w, rtol=1e-12)
        np.testing.assert_allclose(plane.distance(X), truth.distance(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(dense.predict(X), pyomo.predict(X))


X6 = np.array([[0.0, 0.0, 0.2], [0.1, 0.0, 0.1], [1.0, 1.0, 0.0], [0.9, 1.0, 0.1], [0.0, 1.0, 1.0], [0.1, 0.9, 1.0]])
PLAIN = [
    (X6, np.array([0, 0, 1, 1, 2, 2])),
    (np.asfortranarray(X6), np.array(["b", "b", "a", "a", "c", "c"])),
    (np.hstack([X6, X6])[:, ::2], np.array([True, True, False, False, False, False])),  # a strided view
    (X6, np.array([9, 9, 3, 3, 3, 3], dtype=np.uint8)),
]
NOT_PLAIN = [
    (np.arange(12.0).reshape(6, 2).tolist(), [0, 1, 0, 1, 2, 2]),  # lists
    (np.arange(12, dtype=np.float32).reshape(6, 2), np.array([0, 1, 0, 1, 2, 2])),  # converted to float64
    (np.arange(12.0).reshape(6, 2), np.array([0.0, 1.0, 0.0, 1.0, 2.0, 2.0])),  # float labels: the target check
    (np.arange(12.0).reshape(6, 2), np.array([[0], [1], [0], [1], [2], [2]])),  # a column: raveled with a warning
    (np.arange(12.0).reshape(6, 2), np.array([0, 1, 0, 1, 2])),  # lengths differ: scikit-learn's message
    (np.arange(2.0).reshape(1, 2), np.array([0])),  # one sample: scikit-learn's message
]


@pytest.mark.parametrize("X, y", PLAIN)
def test_plain_arrays_skip_validate_data_with_its_outcome(X, y):
    """The truth is scikit-learn's validate_data on the same arrays: the same X (the very array), the same
    labels and n_features_in_, no feature_names_in_, also after a fit on a data frame with column names."""
    import pandas as pd
    from sklearn.utils.validation import validate_data

    assert plain_fit_arrays(X, y)
    est = TPMSVMOneVsAll()
    est.fit(pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]), y)
    assert hasattr(est, "feature_names_in_")
    Xv, classes, y_idx = est._validate_fit_data(X, y)
    truth = TPMSVMOneVsAll()
    Xt, yt = validate_data(truth, X, y, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=2)
    assert Xv is X and Xt is X
    np.testing.assert_array_equal(classes[y_idx], yt)
    assert est.n_features_in_ == truth.n_features_in_ == X.shape[1]
    assert not hasattr(est, "feature_names_in_") and not hasattr(truth, "feature_names_in_")


@pytest.mark.parametrize("X, y", NOT_PLAIN)
def test_other_inputs_still_go_through_validate_data(X, y):
    assert not plain_fit_arrays(X, y)
