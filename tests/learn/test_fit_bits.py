"""The dense fit's shortcuts (issue 25, the last tenth of a Wine fit) give the same bits as the arithmetic they
replaced.

The truth is the plane computed the way the dense path computed it before, written out here from public
functions: the Gram blocks, a copy of :math:`K(X_{own},X_{own})` as ``P`` (``dual_matrices`` copied it), the dual
solved by the checked generic route ``solve_matrices(qp, "piqp")``, the scores
:math:`\\sigma(P\\lambda - a K(X_{own},X_{other})e)`, :math:`\\theta` by ``kkt_thetas`` on one column (the 2-D rule
``kkt_theta`` used to call) and :math:`\\langle w,w\\rangle` by ``expansion_w_w`` on the three blocks. The
shortcuts are exact rewritings (the scores are :math:`\\sigma(P\\lambda + q)`, and :math:`q` is :math:`-a` times
the same column sums; ``kkt_theta`` makes the same comparisons and the same sum on one column; the
feasibility check evaluates the same expressions without the empty rows :math:`G`), so every number is compared
with no tolerance: :math:`\\lambda`, :math:`\\theta`, its interval, the free set, the rule, :math:`\\langle
w,w\\rangle` and the distances, on four shipped sets, three kernels and three :math:`(\\nu,\\alpha)` (one with
:math:`\\nu=\\alpha`, where :math:`\\theta` is the finite end of its interval). One exception: the linear
kernel's :math:`\\langle w,w\\rangle` is :math:`\\|w\\|^2` of (17)'s explicit :math:`w` (no
:math:`K(X_{other},X_{other})`), equal in exact arithmetic, so it and the distances are compared to 1e-12
relative (:func:`assert_same_plane` says why)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tpm_models import Kernel
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.learn.binary import TPMSVM
from tpm_models.learn.one_vs_all import TPMSVMOneVsAll
from tpm_models.models.recovery import FREE_TOL, Hyperplane, expansion_w_w, kkt_thetas
from tpm_models.models.shapes import dual_matrices, gram_blocks
from tpm_models.solvers import solve_matrices
from tpm_models.solvers.dense import matrix_violation

KERNELS = {"linear": {"kernel": "linear"}, "gaussian": {"kernel": "gaussian", "sigma": 0.5},
           "inhom-poly": {"kernel": "inhom-poly", "degree": 2, "gamma": 1.0}}


def reference_plane(kernel: Kernel, own: np.ndarray, other: np.ndarray, nu: float, alpha: float,
                    sign: int = 1) -> Hyperplane:
    """The dense plane by the arithmetic of the path before the shortcuts (module docstring)."""
    gram_own, gram_other_own = gram_blocks(kernel, own, other)
    qp = dual_matrices(gram_own.copy(), gram_other_own, nu, alpha)
    lam = solve_matrices(qp, "piqp").values["x"]
    a = nu / len(other)
    s = sign * (qp.P @ lam - a * gram_other_own.T.sum(axis=1))
    theta, interval, free, rule = kkt_thetas(-s[:, None], lam[:, None], np.array([alpha / len(own)]), sign,
                                             FREE_TOL)[0]
    w_w = expansion_w_w(lam, a, qp.P, gram_other_own.T, kernel.gram(other, other))
    return Hyperplane(kernel, own, other, lam, a, sign, theta, interval, free, rule, w_w)


def assert_same_plane(plane: Hyperplane, truth: Hyperplane, Z: np.ndarray) -> None:
    np.testing.assert_array_equal(plane.lam, truth.lam)
    assert plane.sign == truth.sign and plane.nu_over_m_other == truth.nu_over_m_other
    assert plane.theta == truth.theta and plane.theta_interval == truth.theta_interval
    np.testing.assert_array_equal(plane.free, truth.free)
    assert plane.theta_rule == truth.theta_rule
    if plane.kernel.name != "linear":
        assert plane.w_w == truth.w_w
        np.testing.assert_array_equal(plane.distance(Z), truth.distance(Z))
        return
    # the linear kernel's <w,w> is |w|^2 of (17)'s explicit w, not the expansion's three blocks: the same number in
    # exact arithmetic, rounded otherwise. The expansion's terms are of order (sum lam |x|)^2 <= 1 on scaled data,
    # so its rounding is ~m eps there (1e-13 absolute here); an independent third reading: |w|^2 of Hyperplane.w
    assert plane.w_w == pytest.approx(truth.w_w, rel=1e-12, abs=1e-13)
    assert plane.w_w == pytest.approx(float(truth.w @ truth.w), rel=1e-12, abs=1e-13)
    np.testing.assert_allclose(plane.distance(Z), truth.distance(Z), rtol=1e-11, atol=1e-12)


def shipped(name: str) -> tuple[np.ndarray, np.ndarray]:
    d = load_dataset(name)
    X, y = min_max_scale(d.X), d.y
    return (X[::3], y[::3]) if name == "vehicle" else (X, y)  # vehicle: 282 points, 4 classes of about 70


@pytest.mark.parametrize("dataset", ["iris", "wine", "penguins", "vehicle"])
@pytest.mark.parametrize("kernel", KERNELS, ids=str)
@pytest.mark.parametrize("nu,alpha", [(0.5, 1.0), (0.2, 0.4), (0.3, 0.3)])
def test_the_one_vs_all_fit_has_the_bits_of_the_replaced_arithmetic(dataset, kernel, nu, alpha):
    X, y = shipped(dataset)
    clf = TPMSVMOneVsAll(nu=nu, alpha=alpha, backend="dense", **KERNELS[kernel]).fit(X, y)
    Z = X[::5]
    for c, plane in enumerate(clf.planes_):
        assert_same_plane(plane, reference_plane(clf.kernel_, X[y == c], X[y != c], nu, alpha), Z)


@pytest.mark.parametrize("dataset", ["iris", "wine"])
@pytest.mark.parametrize("kernel", KERNELS, ids=str)
def test_the_binary_fit_has_the_bits_of_the_replaced_arithmetic(dataset, kernel):
    """TPMSVM's two planes ((4)/(12) with sign +1, (5)/(13) with sign -1, other parameters on each side)."""
    X, y = shipped(dataset)
    y2 = np.where(y == 1, 1, -1)
    clf = TPMSVM(nu_plus=0.3, alpha_plus=1.0, nu_minus=0.2, alpha_minus=0.5, backend="dense",
                 **KERNELS[kernel]).fit(X, y2)
    X_p, X_m = X[y2 == 1], X[y2 == -1]
    truths = (reference_plane(clf.kernel_, X_p, X_m, 0.3, 1.0, 1), reference_plane(clf.kernel_, X_m, X_p, 0.2, 0.5, -1))
    for plane, truth in zip(clf.planes_, truths):
        assert_same_plane(plane, truth, X[::4])


def violation_by_hand(qp, x) -> float:
    """The largest violation of qp's rows and bounds at x, entry by entry in Python (the truth)."""
    if not all(math.isfinite(v) for v in x):
        return math.inf
    worst = 0.0
    for i, v in enumerate(x):
        worst = max(worst, qp.x_l[i] - v, v - qp.x_u[i])
    for row, b in zip(qp.A, qp.b):
        worst = max(worst, abs(sum(a * v for a, v in zip(row, x)) - b))
    for row, lo, hi in zip(qp.G, qp.h_l, qp.h_u):
        gx = sum(a * v for a, v in zip(row, x))
        worst = max(worst, lo - gx, gx - hi)
    return worst


def test_matrix_violation_is_the_largest_violation():
    """solve_matrices' feasibility number against the violation computed entry by entry, on feasible, infeasible
    and bound-breaking points of a dual and of a QP with rows G (sums in another order: 1e-15 absolute, the rows'
    entries being of order one), and inf for a point that is not finite."""
    rng = np.random.default_rng(3)
    own, other = rng.normal(size=(30, 4)), rng.normal(size=(50, 4))
    qp = dual_matrices(*gram_blocks(Kernel(), own, other), 0.4, 1.0)
    upper = 1.0 / 30
    points = [np.full(30, 0.4 / 30), rng.uniform(0, upper, 30), rng.uniform(-upper, 2 * upper, 30),
              np.zeros(30), np.full(30, upper), np.r_[np.full(29, 0.0), 0.4]]
    for lam in points:
        assert matrix_violation(qp, lam) == pytest.approx(violation_by_hand(qp, lam), abs=1e-15)
    assert matrix_violation(qp, points[0]) < 1e-15 and matrix_violation(qp, points[5]) > 0.3
    for bad in (np.nan, np.inf, -np.inf):  # never feasible
        assert matrix_violation(qp, np.r_[points[0][:-1], bad]) == np.inf
    qp.G, qp.h_l, qp.h_u = np.ones((1, 30)), np.array([1.0]), np.array([2.0])
    for lam in points:
        assert matrix_violation(qp, lam) == pytest.approx(violation_by_hand(qp, lam), abs=1e-15)
    assert matrix_violation(qp, points[0]) == pytest.approx(0.6)


def test_matrix_violation_with_infinite_bounds():
    """Free variables (both bounds infinite) and half-bounded ones: a finite point violates nothing there, and a
    point that is not finite is still inf (at an infinite bound its excess is inf - inf). Truth: the entry-by-entry
    reading (:func:`violation_by_hand`)."""
    rng = np.random.default_rng(5)
    qp = dual_matrices(*gram_blocks(Kernel(), rng.normal(size=(20, 3)), rng.normal(size=(40, 3))), 0.4, 1.0)
    qp.x_l, qp.x_u = np.full(20, -np.inf), np.full(20, np.inf)
    qp.x_l[:5] = 0.0  # five bounded below only
    for x in (rng.normal(size=20), np.full(20, 0.02), np.r_[np.full(5, -1.0), np.zeros(15)]):
        assert matrix_violation(qp, x) == pytest.approx(violation_by_hand(qp, x), abs=1e-15)
    for where in (0, 10):  # bounded below, free
        for bad in (np.nan, np.inf, -np.inf):
            x = np.full(20, 0.02)
            x[where] = bad
            assert matrix_violation(qp, x) == np.inf
    qp.A, qp.b = np.zeros((0, 20)), np.zeros(0)
    qp.x_l[:] = -np.inf  # every variable free, no rows: nothing to violate
    assert matrix_violation(qp, rng.normal(size=20)) == 0.0
