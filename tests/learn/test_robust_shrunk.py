"""RobustTPMSVMOneVsAll at p = 2 with one radius: (15) shrunk (docs/derivations.md, "One eps") against (28) solved.

Truth: the same estimator with ``solver="clarabel"``, which solves the SOCP (28) per class (Clarabel, polished). The
shortcut stops at the linear working-set method's KKT gap 1e-9 (relative to nu kappa): w within 1e-6 of (28)'s
(measured 1e-9 to 1e-8), theta by the same rule on the same scores."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from tpm_models.learn import RobustTPMSVMOneVsAll
from tpm_models.learn.parameters import DegenerateHyperplaneWarning

W_TOL = 1e-6


def _pair(X, y, **params):
    fast = RobustTPMSVMOneVsAll(**params).fit(X, y)
    slow = RobustTPMSVMOneVsAll(**params, solver="clarabel").fit(X, y)
    return fast, slow


@pytest.mark.parametrize("eps", [0.0, 0.02, 0.1])
def test_shrunk_15_is_28_solved(wine, eps):
    X, y = wine
    fast, slow = _pair(X, y, nu=0.3, alpha=1.0, p=2, eps=eps)
    assert fast.fit_backend_ == "shrunk-15" and slow.fit_backend_ == "clarabel"
    assert np.abs(fast.coef_ - slow.coef_).max() <= W_TOL * max(1.0, np.abs(slow.coef_).max())
    assert np.abs(fast.intercept_ - slow.intercept_).max() <= 1e-5
    assert (fast.predict(X) == slow.predict(X)).all()


def test_a_radius_that_kills_a_plane_gives_the_degenerate_plane_28_gives(iris):
    """eps = 0.2 on Iris: some class has |w15| <= 2 nu eps, so (28)'s w is 0 there; both say degenerate."""
    X, y = iris
    with pytest.warns(DegenerateHyperplaneWarning):
        fast, slow = _pair(X, y, nu=0.3, alpha=1.0, p=2, eps=0.2)
    assert fast.degenerate_.any() and (fast.degenerate_ == slow.degenerate_).all()
    assert np.abs(fast.coef_ - slow.coef_).max() <= W_TOL


def test_one_radius_per_point_all_equal_takes_it_and_unequal_ones_solve_28(wine):
    X, y = wine
    same = RobustTPMSVMOneVsAll(nu=0.3, alpha=1.0, p=2, eps=np.full(len(X), 0.02)).fit(X, y)
    assert same.fit_backend_ == "shrunk-15"
    radii = np.linspace(0.0, 0.04, len(X))
    varied = RobustTPMSVMOneVsAll(nu=0.3, alpha=1.0, p=2, eps=radii).fit(X, y)
    assert varied.fit_backend_ == "default"
    other_p = RobustTPMSVMOneVsAll(nu=0.3, alpha=1.0, p=1, eps=0.02).fit(X, y)
    assert other_p.fit_backend_ == "default"


def test_at_scale_against_28():
    """6,000 points, 4 classes: the planes of (28) by Clarabel, the shortcut's within 1e-6."""
    X, y = make_classification(n_samples=6000, n_features=10, n_informative=6, n_classes=4, random_state=1)
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    fast, slow = _pair(X, y, nu=0.3, alpha=1.0, p=2, eps=0.005)  # |w15| 0.012-0.029 > 2 nu eps
    assert not slow.degenerate_.any()
    assert np.abs(fast.coef_ - slow.coef_).max() <= W_TOL * max(1.0, np.abs(slow.coef_).max())
    assert (fast.predict(X) == slow.predict(X)).mean() >= 0.999  # ties of distance within 1e-6 may flip a point
