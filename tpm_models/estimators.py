"""scikit-learn classifiers on top of the builders: one-versus-all TPMSVM (15)-(20) and its
robust version (23)/(26)-(29) with the decision function (18).

>>> from tpm_models.estimators import TPMSVMOneVsAll, RobustTPMSVMOneVsAll
>>> clf = RobustTPMSVMOneVsAll(nu=0.3, alpha=1.0, p=2, eps=0.02).fit(X_train, y_train)  # doctest: +SKIP
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from tpm_models.kernels import Kernel
from tpm_models.multiclass import build_dual_19, recover_17
from tpm_models.norms import check_p, check_radii, dual_norm
from tpm_models.recovery import FREE_TOL, choose_theta, theta_interval_primal
from tpm_models.registry import build
from tpm_models.solvers import solve
from tpm_models.validation import check_features, check_labels, check_nu_alpha


def _check_Xy(X, y):
    X = check_features(X)
    y = check_labels(X, y)
    classes, y_idx = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"need at least two classes, got {classes.tolist()}")
    return X, classes, y_idx


class _OneVsAllBase(ClassifierMixin, BaseEstimator):
    def distances(self, X: np.ndarray) -> np.ndarray:
        """:math:`|w_c^\\top x + \\theta_c| / \\|w_c\\|` for every class, shape ``(len(X), C)``."""
        check_is_fitted(self, "classes_")
        X = check_features(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the classifier was fitted on {self.n_features_in_}")
        return self._distances(X)

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Minus the distances of (18)/(20): the largest value is the predicted class."""
        return -self.distances(X)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(18)/(20): the class of the nearest hyperplane (ties: the first class)."""
        return self.classes_[np.argmin(self.distances(X), axis=1)]


class TPMSVMOneVsAll(_OneVsAllBase):
    """One-versus-all TPMSVM: the dual (19) per class, recovery (20), decision (18)/(20).

    Parameters
    ----------
    nu, alpha : float, default=0.5, 1.0
        :math:`\\nu_c = \\nu`, :math:`\\alpha_c = \\alpha` for every class; :math:`0 < \\nu \\le \\alpha`.
    kernel : {"linear", "hom-poly", "inhom-poly", "gaussian", "sigmoid"}, default="linear"
    degree, gamma, sigma, a, b : kernel parameters (Table 1), default=None
    solver : str, default="default"
    free_tol : float, default=FREE_TOL
        Relative tolerance for a free multiplier (:mod:`tpm_models.recovery`).
    """

    def __init__(self, *, nu=0.5, alpha=1.0, kernel="linear", degree=None, gamma=None, sigma=None,
                 a=None, b=None, solver="default", free_tol=FREE_TOL):
        self.nu = nu
        self.alpha = alpha
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.sigma = sigma
        self.a = a
        self.b = b
        self.solver = solver
        self.free_tol = free_tol

    def fit(self, X: np.ndarray, y: np.ndarray) -> TPMSVMOneVsAll:
        X, self.classes_, y_idx = _check_Xy(X, y)
        check_nu_alpha(self.nu, self.alpha)
        kernel = Kernel(self.kernel, degree=self.degree, gamma=self.gamma, sigma=self.sigma, a=self.a, b=self.b)
        self.kernel_ = kernel
        self.planes_ = []
        for c in range(len(self.classes_)):
            lam = solve(build_dual_19(X, y_idx, c, self.nu, self.alpha, kernel), self.solver).values["lam"]
            self.planes_.append(recover_17(X, y_idx, c, lam, self.nu, self.alpha, kernel, self.free_tol))
        self.n_features_in_ = X.shape[1]
        return self

    def _distances(self, X):
        return np.column_stack([np.abs(p.distance(X)) for p in self.planes_])


class RobustTPMSVMOneVsAll(_OneVsAllBase):
    """Robust one-versus-all TPMSVM: per class (27)/(28)/(29) for :math:`p=1,2,\\infty`, (26)
    otherwise; decision (18). With ``eps=0`` it predicts what :class:`TPMSVMOneVsAll` predicts.

    :math:`\\theta_c` is not read from the solver (it may be any point of an interval,
    errata 5): it is chosen by :mod:`tpm_models.recovery`'s rule on the interval of optimal
    :math:`\\theta` for the solved :math:`w` (:func:`tpm_models.recovery.theta_interval_primal`
    with scores :math:`{x^i}^\\top w - \\varepsilon_i\\|w\\|_{p'}`), the same rule as the
    deterministic classifier.

    Parameters
    ----------
    nu, alpha : float, default=0.5, 1.0
    p : float or "inf", default=2
        Norm of the uncertainty set (21), :math:`p \\ge 1`.
    eps : float or array of shape (n_samples,), default=0.0
        Radii :math:`\\varepsilon_i \\ge 0` of (21), one per training point or one for all.
    solver : str, default="default"
    """

    def __init__(self, *, nu=0.5, alpha=1.0, p=2, eps=0.0, solver="default"):
        self.nu = nu
        self.alpha = alpha
        self.p = p
        self.eps = eps
        self.solver = solver

    def fit(self, X: np.ndarray, y: np.ndarray) -> RobustTPMSVMOneVsAll:
        X, self.classes_, y_idx = _check_Xy(X, y)
        nu, alpha = check_nu_alpha(self.nu, self.alpha)
        p = check_p(self.p)
        radii = check_radii(self.eps, len(X))
        eq = {1.0: 27, 2.0: 28, math.inf: 29}.get(p, 26)
        self.coef_, self.intercept_, self.theta_intervals_ = [], [], []
        for c in range(len(self.classes_)):
            w = solve(build(eq, X, y_idx, c, nu, alpha, p=p, eps=radii), self.solver).values["w"]
            own = y_idx == c
            scores = X[own] @ w - radii[own] * dual_norm(w, p)
            interval = theta_interval_primal(-scores, nu, alpha)
            self.coef_.append(w)
            self.intercept_.append(choose_theta(interval))
            self.theta_intervals_.append(interval)
        self.coef_ = np.array(self.coef_)
        self.intercept_ = np.array(self.intercept_)
        self.n_features_in_ = X.shape[1]
        return self

    def _distances(self, X):
        return np.abs(X @ self.coef_.T + self.intercept_) / np.linalg.norm(self.coef_, axis=1)
