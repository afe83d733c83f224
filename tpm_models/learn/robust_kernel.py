"""The robust kernel classifier: (23K) per class (:mod:`tpm_models.models.robust_kernel`), decision (20)."""

from __future__ import annotations

from typing import cast

import numpy as np

from tpm_models.kernels import Kernel
from tpm_models.learn.base import OneVsAllBase
from tpm_models.learn.class_jobs import map_classes
from tpm_models.learn.parameters import (
    degenerate_planes,
    validate_kernel,
    validate_solver,
)
from tpm_models.models.norms import check_p, check_radii
from tpm_models.models.robust_kernel import (
    RobustKernelHyperplane,
    SpanBasis,
    build_robust_kernel_23,
    check_kernel_23k,
    recover_robust_kernel_23,
    span_basis,
)
from tpm_models.solvers.dispatch import solve
from tpm_models.validation import check_n_jobs, check_nu_alpha


class RobustKernelTPMSVMOneVsAll(OneVsAllBase):
    """Robust kernel one-versus-all TPMSVM: (23K) per class, decision (20).

    Each training point may move in :math:`\\mathcal U_p(x^i)` (21); ``fit`` solves, for every class, the
    safe approximation (23K) (:func:`build_robust_kernel_23`): (23) with :math:`p = 2` in the feature space of
    the kernel, radii :math:`\\rho_i` of :func:`feature_radius`. It keeps :math:`w_c = \\sum_j\\beta_j\\varphi(x^j)`,
    chooses :math:`\\theta_c` by the rule of :mod:`tpm_models.models.recovery` (:func:`recover_robust_kernel_23`) and
    predicts by (20), :math:`\\arg\\min_c|\\langle w_c,\\varphi(x)\\rangle+\\theta_c|/\\|w_c\\|`. With ``eps=0`` it
    predicts what :class:`~tpm_models.learn.estimators.TPMSVMOneVsAll` with the same kernel predicts.

    Parameters
    ----------
    nu : float, default=0.5
        :math:`\\nu_c = \\nu` for every class.
    alpha : float, default=1.0
        :math:`\\alpha_c = \\alpha`; :math:`0 < \\nu \\le \\alpha` (errata 6).
    kernel : {"linear", "hom-poly", "inhom-poly", "gaussian"}, default="gaussian"
        Table 1 without the sigmoid kernel (not positive semidefinite).
    degree, gamma, a, b : float or None, default=None
        The kernel's parameters of Table 1; the others stay None.
    sigma : float, "scale" or None, default="scale"
        The Gaussian kernel's :math:`\\sigma`. ``"scale"``: scikit-learn's ``gamma="scale"`` for this kernel,
        :math:`\\sigma = \\sqrt{n\\,\\mathrm{Var}(X)/2}` over the training points
        (:func:`tpm_models.learn.parameters.scale_sigma`); ignored by the kernels without a :math:`\\sigma`.
    p : float or "inf", default=2
        Norm of the uncertainty set (21) in input space, :math:`p \\ge 1`.
    eps : float or array-like of shape (n_samples,), default=0.0
        Radii :math:`\\varepsilon_i \\ge 0` of (21): one for all points, or one per training point.
    solver : str, default="default"
        An SOCP backend of :mod:`tpm_models.solvers` (Clarabel by default, then Ipopt).
    n_jobs : int or None, default=None
        The classes' models as joblib tasks, as in :class:`~tpm_models.learn.estimators.TPMSVMOneVsAll` (None: in
        this process unless a ``joblib.parallel_config`` with more than one worker is active; 1: in this process).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    kernel_ : Kernel
    basis_ : SpanBasis
        The orthonormal basis of :math:`\\operatorname{span}\\{\\varphi(x^j)\\}` the models are written in.
    planes_ : list of RobustKernelHyperplane
        One per class, in the order of ``classes_``.
    intercept_ : ndarray of shape (n_classes,)
        :math:`\\theta_c`.
    degenerate_ : ndarray of bool, shape (n_classes,)
        Whether :math:`w_c = 0` (:data:`~tpm_models.models.recovery.DEGENERATE_TOL`); such a class is never the nearest.

    See Also
    --------
    tpm_models.learn.estimators.RobustTPMSVMOneVsAll : the linear robust model (23)-(29).
    tpm_models.learn.estimators.TPMSVMOneVsAll : the kernel model (19)-(20).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.1], [1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> clf = RobustKernelTPMSVMOneVsAll(nu=0.3, sigma=0.5, eps=0.01).fit(X, ["a", "a", "b", "b", "c", "c"])
    >>> clf.predict([[0.95, 0.0]]).tolist()
    ['b']
    """

    def __init__(
        self, *, nu: float = 0.5, alpha: float = 1.0, kernel: str = "gaussian", degree: int | None = None,
        gamma: float | None = None, sigma: float | str | None = "scale", a: float | None = None,
        b: float | None = None, p: float | str = 2, eps: float | np.ndarray = 0.0, solver: str = "default",
        n_jobs: int | None = None,
    ) -> None:
        self.n_jobs = n_jobs
        self.nu = nu
        self.alpha = alpha
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.sigma = sigma
        self.a = a
        self.b = b
        self.p = p
        self.eps = eps
        self.solver = solver

    def fit(self, X: object, y: object) -> RobustKernelTPMSVMOneVsAll:
        """Solve (23K) for every class, recover :math:`\\beta_c, \\theta_c`; return ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points as rows, finite.
        y : array-like of shape (n_samples,)
            Labels of at least two classes, any type.
        """
        nu, alpha = check_nu_alpha(self.nu, self.alpha, "RobustKernelTPMSVMOneVsAll")
        try:
            # check_p takes 'inf' too (tpm_models.models.norms annotates p as float only)
            p = check_p(cast(float, self.p))
        except ValueError as exc:
            raise ValueError(f"{exc}: p is the norm of the uncertainty set (21), a number >= 1 or 'inf'") from None
        solver = validate_solver(self.solver, "SOCP")
        n_jobs = check_n_jobs(self.n_jobs, "RobustKernelTPMSVMOneVsAll: n_jobs")
        X, classes, y_idx = self._validate_fit_data(X, y)
        kernel = check_kernel_23k(validate_kernel(self, X))
        self._check_classes(classes, "RobustKernelTPMSVMOneVsAll")
        try:
            radii = check_radii(self.eps, len(X))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{exc}: eps holds the radii of (21), a number >= 0 for all points or one per training point"
            ) from None
        basis = span_basis(kernel, X)
        planes = map_classes(robust_kernel_class_plane, [(X, y_idx, c, nu, alpha, kernel, p, radii, solver, basis)
                                                         for c in range(len(classes))], n_jobs)
        self.degenerate_ = degenerate_planes(
            np.array([h.norm_w for h in planes]), np.full(len(planes), nu), X, kernel, classes.tolist()
        )
        self.kernel_ = kernel
        self.basis_ = basis
        self.planes_ = planes
        self.intercept_ = np.array([h.theta for h in planes])
        self.classes_ = classes
        return self

    def _distances(self, X: np.ndarray) -> np.ndarray:
        return np.column_stack([
            np.full(len(X), np.inf) if d else np.abs(h.distance(X)) for h, d in zip(self.planes_, self.degenerate_)
        ])


def robust_kernel_class_plane(X: np.ndarray, y_idx: np.ndarray, c: int, nu: float, alpha: float, kernel: Kernel,
                              p: float, radii: np.ndarray, solver: str, basis: SpanBasis) -> RobustKernelHyperplane:
    """(23K) for class ``c`` solved by ``solver`` and recovered (:func:`recover_robust_kernel_23` in ``basis``): one
    task of :meth:`RobustKernelTPMSVMOneVsAll.fit` (:func:`tpm_models.learn.class_jobs.map_classes`)."""
    model = build_robust_kernel_23(X, y_idx, c, nu, alpha, kernel=kernel, p=p, eps=radii)
    w = cast(np.ndarray, solve(model, solver).values["w"])  # an indexed variable's values: an array
    return recover_robust_kernel_23(X, y_idx, c, nu, alpha, p, radii, kernel, w, basis)
