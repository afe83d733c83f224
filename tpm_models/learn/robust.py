"""The robust one-versus-all classifier :class:`RobustTPMSVMOneVsAll`: (27)/(28)/(29) for :math:`p=1,2,\\infty`,
(26) otherwise, per class; decision (18)."""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from tpm_models.kernels import Kernel
from tpm_models.learn.base import OneVsAllBase
from tpm_models.learn.class_jobs import map_classes
from tpm_models.learn.expansion import one_blas_thread
from tpm_models.learn.parameters import (
    degenerate_planes,
    validate_solver,
)
from tpm_models.models.norms import check_p, check_radii, dual_norm
from tpm_models.models.recovery import (
    choose_theta,
    theta_interval_primal,
)
from tpm_models.models.registry import build, model_info
from tpm_models.models.robust_duals import shrunk_15
from tpm_models.solvers.dispatch import solve
from tpm_models.solvers.linear_dual import solve_linear_dual
from tpm_models.validation import check_n_jobs, check_nu_alpha

ROBUST_EQUATION = {1.0: 27, 2.0: 28, math.inf: 29}
"""The SOCP solved by :class:`RobustTPMSVMOneVsAll` for :math:`p = 1, 2, \\infty`; (26) for any other p."""


# --------------------------------------------------------------------------- (21)-(29)


class RobustTPMSVMOneVsAll(OneVsAllBase):
    """Robust one-versus-all TPMSVM, Section 4: per class (27)/(28)/(29) for
    :math:`p=1,2,\\infty`, (26) otherwise; decision (18).

    Each training point :math:`x^i` may move in :math:`\\mathcal U_p(x^i) = \\{x^i+\\delta :
    \\|\\delta\\|_p\\le\\varepsilon_i\\}` (21); by Theorem 1, for every class ``fit`` solves the
    robust counterpart

    .. math::
        \\min_{w_c,\\theta_c,\\xi_c}\\ \\tfrac12\\|w_c\\|_2^2
        + \\frac{\\nu}{m_{-c}}\\sum_{i\\in\\mathcal X_{-c}}\\big({x^i}^\\top w_c + \\varepsilon_i\\|w_c\\|_{p'}\\big)
        + \\nu\\theta_c + \\frac{\\alpha}{m_c}\\sum_{i\\in\\mathcal X_c}\\xi_{c,i}
        \\quad\\text{s.t.}\\quad
        {x^i}^\\top w_c + \\theta_c - \\varepsilon_i\\|w_c\\|_{p'} \\ge -\\xi_{c,i},\\ \\xi_c \\ge 0

    in its conic form (26)-(29), keeps :math:`w_c` (``coef_``) and predicts by (18),
    :math:`\\arg\\min_c |w_c^\\top x + \\theta_c|/\\|w_c\\|_2`. With ``eps=0`` it predicts what
    :class:`TPMSVMOneVsAll` with the linear kernel predicts.

    :math:`\\theta_c` is not read from the solver (it may be any point of an interval,
    errata 5): it is chosen by :mod:`tpm_models.models.recovery`'s rule on the interval of optimal
    :math:`\\theta` for the solved :math:`w` (:func:`tpm_models.models.recovery.theta_interval_primal`
    with scores :math:`{x^i}^\\top w - \\varepsilon_i\\|w\\|_{p'}`), the same rule as the
    deterministic classifier.

    Parameters
    ----------
    nu : float, default=0.5
        :math:`\\nu_c = \\nu` for every class.
    alpha : float, default=1.0
        :math:`\\alpha_c = \\alpha`; :math:`0 < \\nu \\le \\alpha` (errata 6).
    p : float or "inf", default=2
        Norm of the uncertainty set (21), :math:`p \\ge 1`.
    eps : float or array-like of shape (n_samples,), default=0.0
        Radii :math:`\\varepsilon_i \\ge 0` of (21): one for all points, or one per training
        point (then only for ``fit`` on exactly those points, not for cross-validation).
    solver : str, default="default"
        An SOCP backend of :mod:`tpm_models.solvers` for :math:`p \\in \\{1, 2, \\infty\\}`
        (``"ipopt"``, ``"gurobi"``, ``"cplex"``, ``"xpress"``, ``"scip"``); an NLP backend
        (``"ipopt"``, ``"scip"``) otherwise. ``"default"`` at :math:`p = 2` with one radius for every point solves
        no SOCP: (23) at :math:`p = 2` is then (15) with :math:`w` shrunk by :math:`(1 - 2\\nu\\varepsilon/\\|w\\|)_+`
        (``docs/derivations.md``, "One :math:`\\varepsilon`"), and (15) is solved on its dual with :math:`w`
        explicit (:func:`tpm_models.solvers.linear_dual.solve_linear_dual`); ``fit_backend_`` says which ran.
    n_jobs : int or None, default=None
        The classes' models as joblib tasks, as in :class:`TPMSVMOneVsAll` (None: in this process unless a
        ``joblib.parallel_config`` with more than one worker is active; 1: in this process; -1: one per core).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    coef_ : ndarray of shape (n_classes, n_features)
        :math:`w_c`.
    intercept_ : ndarray of shape (n_classes,)
        :math:`\\theta_c`.
    fit_backend_ : str
        ``"shrunk-15"`` (the closed form above) or the SOCP/NLP backend asked for.
    theta_intervals_ : list of tuple of float
        The optimal :math:`\\theta_c` for :math:`w_c`.
    degenerate_ : ndarray of bool, shape (n_classes,)
        Whether :math:`w_c = 0` (:data:`DEGENERATE_TOL`; large radii can shrink :math:`w_c` to 0);
        such a class is never the nearest.

    See Also
    --------
    TPMSVMOneVsAll : the deterministic model (15)-(20).
    tpm_models.checks.semi_infinite.solve_22_cutting_plane : (22) by cutting planes.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.1], [1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> clf = RobustTPMSVMOneVsAll(nu=0.3, alpha=1.0, p="inf", eps=0.01).fit(X, ["a", "a", "b", "b", "c", "c"])
    >>> clf.predict([[0.95, 0.0]]).tolist()
    ['b']
    """

    def __init__(
        self, *, nu: float = 0.5, alpha: float = 1.0, p: float | str = 2, eps: float | np.ndarray = 0.0,
        solver: str = "default", n_jobs: int | None = None,
    ) -> None:
        self.n_jobs = n_jobs
        self.nu = nu
        self.alpha = alpha
        self.p = p
        self.eps = eps
        self.solver = solver

    def fit(self, X: object, y: object) -> RobustTPMSVMOneVsAll:
        """Solve (26)-(29) for every class, choose :math:`\\theta_c`; return ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points as rows, finite.
        y : array-like of shape (n_samples,)
            Labels of at least two classes, any type.
        """
        nu, alpha = check_nu_alpha(self.nu, self.alpha, "RobustTPMSVMOneVsAll")
        try:
            # check_p takes 'inf' too (tpm_models.models.norms annotates p as float only)
            p = check_p(cast(float, self.p))
        except ValueError as exc:
            raise ValueError(f"{exc}: p is the norm of the uncertainty set (21), a number >= 1 or 'inf'") from None
        eq = ROBUST_EQUATION.get(p, 26)
        solver = validate_solver(self.solver, model_info(eq).model_class)
        n_jobs = check_n_jobs(self.n_jobs, "RobustTPMSVMOneVsAll: n_jobs")
        X, classes, y_idx = self._validate_fit_data(X, y)
        self._check_classes(classes, "RobustTPMSVMOneVsAll")
        try:
            radii = check_radii(self.eps, len(X))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{exc}: eps holds the radii of (21), a number >= 0 for all points or one per training point"
            ) from None
        fits = map_classes(robust_class_plane, [(eq, X, y_idx, c, nu, alpha, p, radii, solver)
                                                for c in range(len(classes))], n_jobs)
        self.fit_backend_ = SHRUNK_15 if takes_shrunk_15(p, radii, solver) else solver
        coef = np.array([w for w, _, _ in fits])
        intercept = [theta for _, theta, _ in fits]
        intervals = [interval for _, _, interval in fits]
        self.degenerate_ = degenerate_planes(
            np.linalg.norm(coef, axis=1), np.full(len(coef), nu), X, Kernel("linear"), classes.tolist()
        )
        self.coef_ = coef
        self.intercept_ = np.array(intercept)
        self.theta_intervals_ = intervals
        self.classes_ = classes
        return self

    def _distances(self, X: np.ndarray) -> np.ndarray:
        live = ~self.degenerate_
        d = np.full((len(X), len(self.classes_)), np.inf)
        d[:, live] = np.abs(X @ self.coef_[live].T + self.intercept_[live]) / np.linalg.norm(self.coef_[live], axis=1)
        return d


SHRUNK_15 = "shrunk-15"
"""``fit_backend_`` of a fit by the closed form of (23) at :math:`p = 2` with one radius (:func:`takes_shrunk_15`)."""


def takes_shrunk_15(p: float, radii: np.ndarray, solver: str) -> bool:
    """Whether a class's plane is (15)'s shrunk (:func:`tpm_models.models.robust_duals.shrunk_15`) rather than a
    solve of (28): :math:`p = 2`, one radius for every point, and the default solver."""
    return p == 2.0 and solver == "default" and len(radii) > 0 and float(radii.min()) == float(radii.max())


def robust_class_plane(eq: int, X: np.ndarray, y_idx: np.ndarray, c: int, nu: float, alpha: float, p: float,
                       radii: np.ndarray, solver: str) -> tuple[np.ndarray, float, tuple[float, float]]:
    """``(w_c, theta_c, interval)`` of class ``c``: (26)-(29) (``eq``) solved by ``solver``, :math:`\\theta_c` by
    the rule of :mod:`tpm_models.models.recovery` on the interval of optimal :math:`\\theta` for that :math:`w_c`.
    At :func:`takes_shrunk_15`, (15)'s :math:`w` by :func:`~tpm_models.solvers.linear_dual.solve_linear_dual` (BLAS
    on one thread), shrunk. One task of :meth:`RobustTPMSVMOneVsAll.fit`
    (:func:`tpm_models.learn.class_jobs.map_classes`)."""
    own = y_idx == c
    if takes_shrunk_15(p, radii, solver):
        with one_blas_thread(len(X)):
            w15 = solve_linear_dual(X[own], X[~own].mean(axis=0), nu, alpha).v
        w = shrunk_15(w15, nu, float(radii[0]))
    else:
        w = cast(np.ndarray, solve(build(eq, X, y_idx, c, nu, alpha, p=p, eps=radii), solver).values["w"])
    scores = X[own] @ w - radii[own] * dual_norm(w, p)
    interval = theta_interval_primal(-scores, nu, alpha)
    return w, choose_theta(interval), interval
