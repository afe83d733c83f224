"""The binary classifier :class:`TPMSVM`: duals (4)/(5) or (12)/(13), recovery (6)/(7), decision (8)/(14)."""

from __future__ import annotations

from typing import cast

import numpy as np

from tpm_models.lazy import import_optional
from tpm_models.learn.base import TPMClassifierBase
from tpm_models.learn.decomposition import DecompositionError
from tpm_models.learn.expansion import ExpansionPlane, fit_planes, plane_distances
from tpm_models.learn.linear_dual import LinearPlane, fit_linear_planes
from tpm_models.learn.one_vs_all import fit_dense_plane
from tpm_models.learn.parameters import (
    check_backend,
    degenerate_planes,
    dense_fallback,
    resolve_backend,
    validate_kernel,
    validate_solver,
)
from tpm_models.models.binary import (
    build_dual_4,
    build_dual_5,
    build_dual_12,
    build_dual_13,
    decision_8,
    recover_minus,
    recover_plus,
)
from tpm_models.models.recovery import (
    FREE_TOL,
    Hyperplane,
)
from tpm_models.solvers.dispatch import solve
from tpm_models.validation import check_free_tol, check_nu_alpha

# scikit-learn is the "learn" extra's: without it, importing an estimator says which extra to install
sklearn_multiclass = import_optional("sklearn.utils.multiclass", "learn", "an estimator of tpm_models.learn")
type_of_target = sklearn_multiclass.type_of_target
sklearn_validation = import_optional("sklearn.utils.validation", "learn", "an estimator of tpm_models.learn")
check_is_fitted = sklearn_validation.check_is_fitted

# --------------------------------------------------------------------------- (2)-(14)


class TPMSVM(TPMClassifierBase):
    """Binary twin parametric-margin SVM, Sections 2.2-2.3: duals (4)/(5) or (12)/(13),
    recovery (6)/(7), decision (8)/(14).

    ``classes_[1]`` is the positive class :math:`\\mathcal X_+` and ``classes_[0]`` the negative
    class :math:`\\mathcal X_-`. ``fit`` solves, for the linear kernel,

    .. math::
        (4)\\quad \\max_{\\lambda_+}\\ -\\tfrac12\\lambda_+^\\top X_+^\\top X_+\\lambda_+
        + \\frac{\\nu_+}{m_-} e_-^\\top X_-^\\top X_+ \\lambda_+
        \\quad\\text{s.t.}\\quad e_+^\\top\\lambda_+ = \\nu_+,\\ \\ 0 \\le \\lambda_+ \\le \\frac{\\alpha_+}{m_+}

    and its mirror (5) for :math:`\\lambda_-` (with a kernel, (12)/(13): :math:`X^\\top X \\to K`);
    it recovers :math:`w_\\pm, \\theta_\\pm` by (6)/(7)
    (:math:`w_+ = X_+\\lambda_+ - \\frac{\\nu_+}{m_-}X_-e_-`, :math:`w_- = \\frac{\\nu_-}{m_+}X_+e_+ - X_-\\lambda_-`;
    :math:`\\theta_\\pm` by the rule of errata 5) and decides by (8)/(14):

    .. math::
        f(x) = \\operatorname{sign}\\Big(
        \\frac{\\langle w_+,\\varphi(x)\\rangle+\\theta_+}{\\sqrt{\\langle w_+,w_+\\rangle}}
        + \\frac{\\langle w_-,\\varphi(x)\\rangle+\\theta_-}{\\sqrt{\\langle w_-,w_-\\rangle}}\\Big).

    Parameters
    ----------
    nu : float, default=0.5
        :math:`\\nu_+ = \\nu_- = \\nu` unless ``nu_plus`` / ``nu_minus`` are given.
    alpha : float, default=1.0
        :math:`\\alpha_+ = \\alpha_- = \\alpha` unless ``alpha_plus`` / ``alpha_minus`` are given.
    nu_plus, alpha_plus : float or None, default=None
        :math:`\\nu_+, \\alpha_+` of (2)/(4) (the positive hyperplane); None: ``nu``, ``alpha``.
        :math:`0 < \\nu_+ \\le \\alpha_+` (errata 6).
    nu_minus, alpha_minus : float or None, default=None
        :math:`\\nu_-, \\alpha_-` of (3)/(5) (the negative hyperplane); None: ``nu``, ``alpha``.
        :math:`0 < \\nu_- \\le \\alpha_-`.
    kernel : {"linear", "hom-poly", "inhom-poly", "gaussian", "sigmoid"}, default="linear"
        Table 1; ``"linear"`` solves (4)/(5), the others (12)/(13).
    degree : int or None, default=None
        :math:`d \\ge 1` of the polynomial kernels.
    gamma : float or None, default=None
        :math:`\\gamma \\ge 0` of ``"inhom-poly"``.
    sigma : float or None, default=None
        :math:`\\sigma > 0` of ``"gaussian"``.
    a, b : float or None, default=None
        :math:`a, b` of ``"sigmoid"``.
    solver : str, default="default"
        A QP backend of :mod:`tpm_models.solvers` (``"piqp"``, ``"daqp"``, ``"highs"``, ...); with
        ``backend="dense"`` only ``"default"`` (PIQP) or a backend that takes a QP in matrix form
        (:func:`tpm_models.solvers.matrix_solvers`: ``"piqp"``, ``"daqp"``).
    backend : {"auto", "dense", "decomposition", "linear-decomposition", "pyomo"}, default="auto"
        ``"dense"``: the dual's matrices (:func:`tpm_models.models.shapes.dual_matrices`, the ones the
        builders write) go straight to the dense solver; ``"decomposition"``: the same QP by
        :mod:`tpm_models.learn.decomposition` (kernel rows on demand, for large sets); ``"linear-decomposition"``:
        (4)/(5) by :mod:`tpm_models.learn.linear_dual` (linear kernel only: :math:`w` kept explicitly, no kernel
        rows); ``"pyomo"``: the Pyomo model of (4)/(5) ((12)/(13)) is built and solved by
        :func:`tpm_models.solvers.dispatch.solve` (any QP backend); ``"auto"``: with the linear kernel
        ``"linear-decomposition"`` beyond :data:`LINEAR_DENSE_MAX_POINTS` points in the larger class, with the
        others ``"decomposition"`` beyond :data:`DENSE_MAX_POINTS`, else ``"dense"``. ``fit_backend_`` says which ran.
    free_tol : float, default=FREE_TOL
        Relative tolerance for a free multiplier in the recovery of :math:`\\theta_\\pm`
        (:mod:`tpm_models.models.recovery`).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``[negative label, positive label]``, sorted.
    n_features_in_ : int
    kernel_ : Kernel
    planes_ : tuple of Hyperplane
        :math:`(H_+, H_-)`, each with ``lam``, ``theta``, ``theta_interval``, ``theta_rule``.
    intercept_ : ndarray of shape (2,)
        :math:`(\\theta_+, \\theta_-)`.
    coef_ : ndarray of shape (2, n_features)
        :math:`(w_+, w_-)`; only for ``kernel="linear"`` (else ``AttributeError``).
    degenerate_ : ndarray of bool, shape (2,)
        Whether :math:`w_+` / :math:`w_-` is 0 (:data:`DEGENERATE_TOL`, with a
        :class:`DegenerateHyperplaneWarning`); such a hyperplane is left out of (8).

    See Also
    --------
    TPMSVMOneVsAll : the multiclass model (15)-(20).
    tpm_models.models.binary.build_primal_2, tpm_models.models.binary.build_primal_3 : the primals (2)/(3).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.1], [0.2, 0.0], [0.1, 0.3], [1.0, 0.9], [0.8, 1.0], [0.9, 0.7]])
    >>> clf = TPMSVM(nu=0.3, alpha=1.0).fit(X, ["no", "no", "no", "yes", "yes", "yes"])
    >>> clf.predict([[0.1, 0.1], [0.9, 0.9]]).tolist()
    ['no', 'yes']
    """

    def __init__(
        self, *, nu: float = 0.5, alpha: float = 1.0, nu_plus: float | None = None, nu_minus: float | None = None,
        alpha_plus: float | None = None, alpha_minus: float | None = None, kernel: str = "linear",
        degree: int | None = None, gamma: float | None = None, sigma: float | None = None,
        a: float | None = None, b: float | None = None, solver: str = "default", free_tol: float = FREE_TOL,
        backend: str = "auto",
    ) -> None:
        self.backend = backend
        self.nu = nu
        self.alpha = alpha
        self.nu_plus = nu_plus
        self.nu_minus = nu_minus
        self.alpha_plus = alpha_plus
        self.alpha_minus = alpha_minus
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.sigma = sigma
        self.a = a
        self.b = b
        self.solver = solver
        self.free_tol = free_tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _hyperplane_parameters(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """:math:`((\\nu_+, \\alpha_+), (\\nu_-, \\alpha_-))`, each pair checked (errata 6)."""
        def pick(own: float | None, shared: float) -> float:
            return shared if own is None else own

        nu_p, alpha_p = pick(self.nu_plus, self.nu), pick(self.alpha_plus, self.alpha)
        nu_m, alpha_m = pick(self.nu_minus, self.nu), pick(self.alpha_minus, self.alpha)
        return (
            check_nu_alpha(nu_p, alpha_p,
                f"positive hyperplane (nu_plus or nu = {nu_p!r}, alpha_plus or alpha = {alpha_p!r})"),
            check_nu_alpha(nu_m, alpha_m,
                f"negative hyperplane (nu_minus or nu = {nu_m!r}, alpha_minus or alpha = {alpha_m!r})"),
        )

    def fit(self, X: object, y: object) -> TPMSVM:
        """Solve (4)/(5) (or (12)/(13)), recover (6)/(7); return ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points as rows, finite.
        y : array-like of shape (n_samples,)
            Labels of exactly two classes, any type.
        """
        (nu_p, alpha_p), (nu_m, alpha_m) = self._hyperplane_parameters()
        kernel = validate_kernel(self)
        solver = validate_solver(self.solver, "QP")
        backend = check_backend(self.backend, solver, kernel.name)
        free_tol = check_free_tol(self.free_tol)
        X, classes, y_idx = self._validate_fit_data(X, y)
        if len(classes) == 1:
            raise ValueError(f"TPMSVM (2)-(8) needs exactly two classes, y has 1 class: {classes.tolist()}")
        if len(classes) > 2:
            raise ValueError(
                f"Only binary classification is supported. The type of the target is "
                f"{type_of_target(y, input_name='y')}: TPMSVM (2)-(8) needs exactly two classes, y has "
                f"{len(classes)}: {classes.tolist()}. Use TPMSVMOneVsAll for more than two classes"
            )
        y_pm = np.where(y_idx == 1, 1, -1)  # classes_[1] is X_+ (label +1 of Section 2)
        backend = resolve_backend(backend, solver, [int((y_idx == 1).sum()), int((y_idx == 0).sum())], kernel.name)
        planes: tuple[ExpansionPlane, ...] | tuple[LinearPlane, ...] | tuple[Hyperplane, Hyperplane]
        if backend == "linear-decomposition":  # (4) own = X_+, (5) own = X_-, w by (6)/(7) kept explicitly
            try:
                planes = tuple(fit_linear_planes(kernel, X, y_idx, [(1, nu_p, alpha_p, 1), (0, nu_m, alpha_m, -1)],
                                                 free_tol))
            except DecompositionError as exc:
                backend = dense_fallback(self.backend, exc)
        if backend == "decomposition":  # (4)/(12) own = X_+ (group 1), (5)/(13) own = X_- (group 0), recovery (7)
            try:
                planes = tuple(fit_planes(kernel, X, y_idx, 2, [(1, nu_p, alpha_p, 1), (0, nu_m, alpha_m, -1)],
                                          free_tol))
            except DecompositionError as exc:
                backend = dense_fallback(self.backend, exc)
        if backend == "dense":  # dual_qp and recover_plus/recover_minus without re-validating the data
            X_p, X_m = X[y_pm == 1], X[y_pm == -1]
            planes = (fit_dense_plane(kernel, X_p, X_m, nu_p, alpha_p, solver, free_tol, 1),
                      fit_dense_plane(kernel, X_m, X_p, nu_m, alpha_m, solver, free_tol, -1))
        elif backend == "pyomo":
            if kernel.name == "linear":
                duals = build_dual_4(X, y_pm, nu_p, alpha_p), build_dual_5(X, y_pm, nu_m, alpha_m)
            else:
                duals = (build_dual_12(X, y_pm, nu_p, alpha_p, kernel=kernel),
                         build_dual_13(X, y_pm, nu_m, alpha_m, kernel=kernel))
            lam_p, lam_m = (cast(np.ndarray, solve(model, solver).values["lam"]) for model in duals)  # arrays
            planes = (
                recover_plus(X, y_pm, lam_p, nu_p, alpha_p, kernel, free_tol),
                recover_minus(X, y_pm, lam_m, nu_m, alpha_m, kernel, free_tol),
            )
        self.degenerate_ = degenerate_planes(
            np.array([h.norm_w for h in planes]), np.array([nu_p, nu_m]), X, kernel, ["H+", "H-"]
        )
        self.kernel_ = kernel
        self.fit_backend_ = backend
        self.planes_ = planes
        self.intercept_ = np.array([h.theta for h in planes])
        self.classes_ = classes
        return self

    @property
    def coef_(self) -> np.ndarray:
        """:math:`(w_+, w_-)` of (6)/(7), shape ``(2, n_features)``; linear kernel only."""
        check_is_fitted(self, "planes_")
        if self.kernel_.name != "linear":
            raise AttributeError(f"coef_ exists only for kernel='linear', not {self.kernel_}; use planes_[k].w_phi")
        return np.array([h.w for h in self.planes_])

    def decision_function(self, X: object) -> np.ndarray:
        """(8)/(14) before the sign, shape ``(n_samples,)``; positive means ``classes_[1]``.

        .. math::
            \\frac{\\langle w_+,\\varphi(x)\\rangle+\\theta_+}{\\sqrt{\\langle w_+,w_+\\rangle}}
            + \\frac{\\langle w_-,\\varphi(x)\\rangle+\\theta_-}{\\sqrt{\\langle w_-,w_-\\rangle}}

        A degenerate hyperplane (``degenerate_``, :data:`DEGENERATE_TOL`) is left out of the
        sum, so the other one decides alone; if both are, the value is 0.
        """
        X = self._validate_predict_data(X)
        if isinstance(self.planes_[0], ExpansionPlane):
            d = plane_distances(self.planes_, X)
            return d[:, ~self.degenerate_].sum(axis=1)
        planes = cast(tuple[Hyperplane | LinearPlane, ...], self.planes_)  # the expansion planes were handled above
        if not self.degenerate_.any() and isinstance(planes[0], Hyperplane):
            return decision_8(planes[0], cast(Hyperplane, planes[1]), X)
        return sum((h.distance(X) for h, d in zip(planes, self.degenerate_) if not d), np.zeros(len(X)))

    def predict(self, X: object) -> np.ndarray:
        """(8)/(14): ``classes_[1]`` where the decision function is >= 0 (the tie rule of
        :func:`tpm_models.models.binary.predict_8`), else ``classes_[0]``."""
        positive = self.decision_function(X) >= 0.0
        return self.classes_[positive.astype(int)]
