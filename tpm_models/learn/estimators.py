"""scikit-learn classifiers on the paper's models.

=========================  ============================================  ==========================
classifier                  trains (per hyperplane, one solve each)       decides by
=========================  ============================================  ==========================
:class:`TPMSVM`             duals (4)/(5), or (12)/(13) with a kernel;    (8), or (14) with a kernel
                            recovery (6)/(7)
:class:`TPMSVMOneVsAll`     dual (16), or (19) with a kernel, per class;  (18), or (20) with a kernel
                            recovery (17)/(20)
:class:`RobustTPMSVMOneVsAll`  (27)/(28)/(29) for :math:`p=1,2,\\infty`,    (18)
                            (26) otherwise, per class
=========================  ============================================  ==========================

The scikit-learn estimator contract
-----------------------------------
* ``__init__`` takes keyword arguments only and stores them unchanged;
* ``fit(X, y)`` validates the data (2-D, finite, as many labels as rows, a classification
  target) and every parameter (:math:`0<\\nu\\le\\alpha`, errata 6; the kernel's parameters of
  Table 1; :math:`p\\ge1`; :math:`\\varepsilon_i\\ge0`; the solver), raising a ``ValueError``
  that says what to do, then solves and returns ``self``;
* fitted state ends in ``_``: ``classes_`` (the labels, sorted), ``n_features_in_`` and the
  hyperplanes;
* labels may be of any type (strings, non-contiguous integers...): class ``c`` of the paper
  is ``classes_[c]``; for :class:`TPMSVM` the positive class :math:`\\mathcal X_+` (label +1
  of Section 2) is ``classes_[1]`` and the negative class ``classes_[0]``, so labels
  :math:`\\{-1,+1\\}` keep their meaning;
* ``decision_function`` follows scikit-learn: for two classes one value per point, positive
  for ``classes_[1]``; for :math:`C>2` classes one column per class, the largest wins.

:class:`TPMSVM` and :class:`TPMSVMOneVsAll` choose how to solve their duals by size (``backend="auto"``,
:data:`DENSE_MAX_POINTS`): up to 100 points per class from the dense matrices (``backend="dense"``:
:func:`tpm_models.solvers.solve_matrices` on :func:`tpm_models.models.shapes.dual_matrices`, the very matrices
the builders write, no Pyomo model), beyond that by decomposition (``backend="decomposition"``:
:mod:`tpm_models.learn.decomposition`, kernel rows on demand, nothing of size :math:`m\\times m`; the same
QP, its KKT gap below :data:`tpm_models.learn.decomposition.GAP_TOL` :math:`\\cdot\\,\\nu\\kappa`);
``backend="pyomo"`` builds the Pyomo dual and solves it through :func:`tpm_models.solvers.dispatch.solve`
with ``solver=`` (``"default"`` picks the default backend of the model's class). The robust
classifier's models (26)-(29) are SOCPs/NLPs and always go through Pyomo. Either way a solve that is
not verified optimal raises :class:`tpm_models.solvers.common.NoOptimalSolutionError` (the decomposition:
:class:`tpm_models.learn.decomposition.DecompositionError`), never returns a classifier.

>>> from tpm_models import load_dataset, min_max_scale
>>> from tpm_models.learn import TPMSVMOneVsAll
>>> d = load_dataset("iris")
>>> clf = TPMSVMOneVsAll(nu=0.3, alpha=1.0).fit(min_max_scale(d.X), d.classes[d.y])
>>> clf.classes_.tolist()
['setosa', 'versicolor', 'virginica']
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from tpm_models.kernels import Kernel
from tpm_models.learn.decomposition import ExpansionPlane, fit_planes, plane_distances, self_kernel
from tpm_models.models.binary import (
    build_dual_4,
    build_dual_5,
    build_dual_12,
    build_dual_13,
    decision_8,
    recover_minus,
    recover_plus,
)
from tpm_models.models.multiclass import build_dual_16, build_dual_19, recover_17
from tpm_models.models.norms import check_p, check_radii, dual_norm
from tpm_models.models.recovery import (
    DEGENERATE_TOL,
    FREE_TOL,
    Hyperplane,
    choose_theta,
    recover,
    theta_interval_primal,
)
from tpm_models.models.registry import MODELS, build
from tpm_models.models.shapes import kernel_dual_matrices
from tpm_models.solvers import MATRIX_SOLVERS, solve_matrices
from tpm_models.solvers.backends.registry import BACKENDS, available_solvers
from tpm_models.solvers.common import SolverUnavailableError
from tpm_models.solvers.dispatch import solve
from tpm_models.validation import check_features, check_free_tol, check_nu_alpha

ROBUST_EQUATION = {1.0: 27, 2.0: 28, math.inf: 29}
"""The SOCP solved by :class:`RobustTPMSVMOneVsAll` for :math:`p = 1, 2, \\infty`; (26) for any other p."""

class DegenerateHyperplaneWarning(UserWarning):
    """A fitted hyperplane has :math:`w = 0` (:data:`DEGENERATE_TOL`) and is left out of the decision."""


# --------------------------------------------------------------------------- parameter checks


def validate_kernel(est: TPMSVM | TPMSVMOneVsAll) -> Kernel:
    """The :class:`~tpm_models.kernels.Kernel` of Table 1 named by the estimator's parameters."""
    try:
        return Kernel(est.kernel, degree=est.degree, gamma=est.gamma, sigma=est.sigma, a=est.a, b=est.b)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{type(est).__name__}: {exc}. Give the kernel the parameters of Table 1 it takes "
            "(hom-poly: degree; inhom-poly: degree, gamma; gaussian: sigma; sigmoid: a, b) and leave the others None"
        ) from None


def validate_solver(solver: object, model_class: str) -> str:
    """``"default"`` or a backend that takes ``model_class`` and is installed."""
    if not isinstance(solver, str) or (solver != "default" and solver not in BACKENDS):
        raise ValueError(
            f"unknown solver {solver!r}: use 'default' or one of {sorted(BACKENDS)}; "
            f"installed ones that take this classifier's {model_class}s: {available_solvers(model_class)}"
        )
    if solver == "default":
        return solver
    backend = BACKENDS[solver]
    if model_class not in backend.model_classes:
        raise ValueError(
            f"solver {solver!r} cannot take the {model_class}s this classifier solves; use 'default' or one "
            f"of the installed solvers that can: {available_solvers(model_class)}"
        )
    if not backend.available():
        why = backend.refuses(None) if backend.installed() and backend.refuses is not None else None
        raise SolverUnavailableError(
            f"solver {solver!r}" + (f": {why}" if why else f" is not installed (pip install {backend.package})")
            + f"; installed ones that take {model_class}s: {available_solvers(model_class)}"
        )
    return solver


FIT_BACKENDS = ("auto", "dense", "decomposition", "pyomo")
"""How :class:`TPMSVM` and :class:`TPMSVMOneVsAll` solve their duals: ``"dense"`` hands the matrices of
:func:`tpm_models.models.shapes.dual_matrices` straight to a dense QP solver; ``"decomposition"`` solves the
same QP by :mod:`tpm_models.learn.decomposition` (kernel rows on demand, nothing of size :math:`m\\times m`);
``"pyomo"`` builds the Pyomo model (:func:`tpm_models.models.multiclass.build_dual_19`, ...) and solves it
with :func:`tpm_models.solvers.dispatch.solve`; ``"auto"`` (the default) takes ``"dense"`` when every own set
has at most :data:`DENSE_MAX_POINTS` points and ``"decomposition"`` otherwise. All solve the same QP."""

DENSE_MAX_POINTS = 100
"""Largest own set (:math:`m_c`, :math:`m_\\pm`) that ``backend="auto"`` gives to the dense solver. Measured
(``docs/bench-estimators.md``): the dense interior point is cubic in :math:`m_c` and holds
:math:`K(X_c, X_c)`; the decomposition is faster from a few hundred points per class on."""


def _check_backend(backend: object, solver: str) -> str:
    """``backend`` in :data:`FIT_BACKENDS`; with ``"dense"`` the solver must take matrices, with
    ``"decomposition"`` it is the decomposition's own (``solver="default"``)."""
    if not isinstance(backend, str) or backend not in FIT_BACKENDS:
        raise ValueError(
            f"backend must be 'auto' (by size, the default), 'dense' (the dual's matrices to a dense QP solver), "
            f"'decomposition' (kernel rows on demand, for large sets) or 'pyomo' (build the Pyomo model and "
            f"solve it); got {backend!r}"
        )
    if backend in ("dense", "auto") and solver != "default" and solver not in MATRIX_SOLVERS:
        raise ValueError(
            f"solver {solver!r} solves Pyomo models: pass backend='pyomo' to use it, or keep backend={backend!r} "
            f"with solver 'default' or one of {sorted(MATRIX_SOLVERS)}"
        )
    if backend == "decomposition" and solver != "default":
        raise ValueError(
            f"backend='decomposition' solves the duals with its own method (tpm_models.learn.decomposition); "
            f"leave solver='default' or choose backend='dense' or 'pyomo' for solver {solver!r}"
        )
    return backend


def _resolve_backend(backend: str, solver: str, own_sizes: list[int]) -> str:
    """``"auto"`` by size (:data:`DENSE_MAX_POINTS`; a named dense solver keeps the dense path)."""
    if backend != "auto":
        return backend
    if solver != "default" or max(own_sizes) <= DENSE_MAX_POINTS:
        return "dense"
    return "decomposition"


def degenerate_planes(norms: np.ndarray, nus: np.ndarray, X: np.ndarray, kernel: Kernel,
                      names: list[str]) -> np.ndarray:
    """Which hyperplanes have :math:`w = 0` (:data:`DEGENERATE_TOL`); a warning names them.

    The decision functions (8), (14), (18), (20) divide by :math:`\\|w\\|`, so a degenerate
    hyperplane has no distance: the classifiers leave it out of the decision (each ``predict``
    says how) instead of dividing by a number that is solver noise.
    """
    sq_norms = self_kernel(kernel, X)  # k(x^i, x^i) = |phi(x^i)|^2
    scale = np.sqrt(np.abs(sq_norms).max())
    degenerate = np.asarray(norms) <= DEGENERATE_TOL * np.asarray(nus) * scale
    if degenerate.any():
        warnings.warn(
            f"hyperplane(s) {[n for n, d in zip(names, degenerate) if d]} have w = 0 (|w| <= {DEGENERATE_TOL:g} "
            "* nu * max |phi(x)|): the classes overlap too much for them, and they are left out of the decision. "
            "A smaller nu/alpha, another kernel or a smaller eps may separate them",
            DegenerateHyperplaneWarning,
            stacklevel=3,
        )
    return degenerate


# --------------------------------------------------------------------------- shared base


class _TPMClassifier(ClassifierMixin, BaseEstimator):
    """Data checks shared by the classifiers (parameter checks are each class's own)."""

    def _validate_fit_data(self, X: object, y: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``X`` as a finite float array, ``classes_`` (sorted) and the class index of every row."""
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=2)
        X = check_features(X)  # our message for NaN / inf: where, and what to do
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        return X, classes, y_idx

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "classes_")  # set last, by a fit that succeeded

    def _validate_predict_data(self, X: object) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=False)
        return check_features(X)


class OneVsAllBase(_TPMClassifier):
    """Decision (18)/(20) from per-class distances (:meth:`distances`)."""

    @staticmethod
    def _check_classes(classes: np.ndarray, name: str) -> None:
        if len(classes) < 2:
            raise ValueError(
                f"{name} needs at least two classes (one-versus-all needs points outside class c); "
                f"y has 1 class: {classes.tolist()}"
            )

    def distances(self, X: object) -> np.ndarray:
        """Distance to every class's hyperplane, shape ``(n_samples, n_classes)``.

        .. math::
            d_c(x) = \\frac{|\\langle w_c,\\varphi(x)\\rangle + \\theta_c|}{\\sqrt{\\langle w_c,w_c\\rangle}}

        (:math:`\\varphi(x) = x` for the linear models), column ``c`` for ``classes_[c]``;
        :math:`+\\infty` for a degenerate hyperplane (``degenerate_``, :data:`DEGENERATE_TOL`).
        """
        return self._distances(self._validate_predict_data(X))

    def decision_function(self, X: object) -> np.ndarray:
        """Scores of (18)/(20) in scikit-learn's convention.

        For :math:`C > 2` classes: :math:`-d_c(x)`, shape ``(n_samples, n_classes)``; the largest
        value is the predicted class. For two classes: :math:`d_0(x) - d_1(x)`, shape
        ``(n_samples,)``; positive means ``classes_[1]``.
        """
        d = self.distances(X)
        if d.shape[1] > 2:
            return -d
        tie = d[:, 0] == d[:, 1]  # both inf (both degenerate): a tie, 0, not inf - inf = nan
        return np.subtract(d[:, 0], d[:, 1], out=np.zeros(len(d)), where=~tie)

    def predict(self, X: object) -> np.ndarray:
        """(18)/(20): :math:`\\arg\\min_c d_c(x)`, the class of the nearest hyperplane (a tie: the
        first of ``classes_``). A degenerate hyperplane (``degenerate_``) is at distance
        :math:`+\\infty`: its class is never predicted unless every hyperplane is degenerate."""
        nearest = np.argmin(self.distances(X), axis=1)
        return self.classes_[nearest]

    def _distances(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError


# --------------------------------------------------------------------------- (2)-(14)


class TPMSVM(_TPMClassifier):
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
        ``backend="dense"`` only ``"default"`` (PIQP), ``"piqp"`` or ``"daqp"``.
    backend : {"auto", "dense", "decomposition", "pyomo"}, default="auto"
        ``"dense"``: the dual's matrices (:func:`tpm_models.models.shapes.dual_matrices`, the ones the
        builders write) go straight to the dense solver; ``"decomposition"``: the same QP by
        :mod:`tpm_models.learn.decomposition` (kernel rows on demand, for large sets); ``"pyomo"``: the Pyomo
        model of (4)/(5) ((12)/(13)) is built and solved by :func:`tpm_models.solvers.dispatch.solve` (any QP
        backend); ``"auto"``: ``"dense"`` up to :data:`DENSE_MAX_POINTS` points per class, else
        ``"decomposition"``. ``fit_backend_`` says which ran.
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
        def pick(own: object, shared: object) -> object:
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
        backend = _check_backend(self.backend, solver)
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
        backend = _resolve_backend(backend, solver, [int((y_idx == 1).sum()), int((y_idx == 0).sum())])
        if backend == "decomposition":  # (4)/(12) own = X_+ (group 1), (5)/(13) own = X_- (group 0), recovery (7)
            planes = tuple(fit_planes(kernel, X, y_idx, 2, [(1, nu_p, alpha_p, 1), (0, nu_m, alpha_m, -1)],
                                      free_tol))
        elif backend == "dense":  # dual_qp without re-validating the data
            X_p, X_m = X[y_pm == 1], X[y_pm == -1]
            lam_p, lam_m = (solve_matrices(kernel_dual_matrices(kernel, own, other, nu, alpha), solver).values["x"]
                            for own, other, nu, alpha in ((X_p, X_m, nu_p, alpha_p), (X_m, X_p, nu_m, alpha_m)))
        else:
            if kernel.name == "linear":
                duals = build_dual_4(X, y_pm, nu_p, alpha_p), build_dual_5(X, y_pm, nu_m, alpha_m)
            else:
                duals = (build_dual_12(X, y_pm, nu_p, alpha_p, kernel=kernel),
                         build_dual_13(X, y_pm, nu_m, alpha_m, kernel=kernel))
            lam_p, lam_m = (solve(model, solver).values["lam"] for model in duals)
        if backend != "decomposition":
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
        if not self.degenerate_.any():
            return decision_8(*self.planes_, X)
        return sum((h.distance(X) for h, d in zip(self.planes_, self.degenerate_) if not d), np.zeros(len(X)))

    def predict(self, X: object) -> np.ndarray:
        """(8)/(14): ``classes_[1]`` where the decision function is >= 0 (the tie rule of
        :func:`tpm_models.models.binary.predict_8`), else ``classes_[0]``."""
        positive = self.decision_function(X) >= 0.0
        return self.classes_[positive.astype(int)]


# --------------------------------------------------------------------------- (15)-(20)


class TPMSVMOneVsAll(OneVsAllBase):
    """One-versus-all TPMSVM, Section 3: the dual (16)/(19) per class, recovery (17)/(20),
    decision (18)/(20).

    For every class :math:`c` (``classes_[c]``; :math:`X_{-c}` are all other points) ``fit`` solves

    .. math::
        (19)\\quad \\max_{\\lambda_c}\\ -\\tfrac12\\lambda_c^\\top K(X_c,X_c)\\lambda_c
        + \\frac{\\nu}{m_{-c}}e_{-c}^\\top K(X_{-c},X_c)\\lambda_c
        \\quad\\text{s.t.}\\quad e_c^\\top\\lambda_c = \\nu,\\ \\ 0\\le\\lambda_c\\le\\frac{\\alpha}{m_c}

    ((16), the dual of the primal (15), for the linear kernel), recovers
    :math:`\\langle w_c,\\varphi(x)\\rangle = \\lambda_c^\\top K(X_c,x) - \\frac{\\nu}{m_{-c}}e_{-c}^\\top K(X_{-c},x)`
    and :math:`\\theta_c` by (17)/(20) (rule of errata 5), and predicts

    .. math::
        \\operatorname*{arg\\,min}_c\\
        \\frac{|\\langle w_c,\\varphi(x)\\rangle+\\theta_c|}{\\sqrt{\\langle w_c,w_c\\rangle}}.

    Parameters
    ----------
    nu : float, default=0.5
        :math:`\\nu_c = \\nu` for every class.
    alpha : float, default=1.0
        :math:`\\alpha_c = \\alpha` for every class; :math:`0 < \\nu \\le \\alpha` (errata 6).
    kernel : {"linear", "hom-poly", "inhom-poly", "gaussian", "sigmoid"}, default="linear"
        Table 1; ``"linear"`` solves (16), the others (19).
    degree, gamma, sigma, a, b : float or None, default=None
        The kernel's parameters of Table 1 (see :class:`TPMSVM`); the others stay None.
    solver : str, default="default"
        A QP backend of :mod:`tpm_models.solvers`; with ``backend="dense"`` only ``"default"`` (PIQP),
        ``"piqp"`` or ``"daqp"``.
    backend : {"auto", "dense", "decomposition", "pyomo"}, default="auto"
        ``"dense"``: the matrices of (16)/(19) (:func:`tpm_models.models.multiclass.dual_19_qp`, the ones
        :func:`tpm_models.models.multiclass.build_dual_19` writes) go straight to the dense solver;
        ``"decomposition"``: the same QP by :mod:`tpm_models.learn.decomposition` (kernel rows on demand, no
        :math:`m_c\times m_c` array, for large sets); ``"pyomo"``: the Pyomo model is built and solved by
        :func:`tpm_models.solvers.dispatch.solve`; ``"auto"``: ``"dense"`` up to :data:`DENSE_MAX_POINTS`
        points per class, else ``"decomposition"``. ``fit_backend_`` says which ran.
    free_tol : float, default=FREE_TOL
        Relative tolerance for a free multiplier (:mod:`tpm_models.models.recovery`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    kernel_ : Kernel
    planes_ : list of Hyperplane
        One per class, in the order of ``classes_``.
    intercept_ : ndarray of shape (n_classes,)
        :math:`\\theta_c`.
    coef_ : ndarray of shape (n_classes, n_features)
        :math:`w_c` of (17); only for ``kernel="linear"`` (else ``AttributeError``).
    degenerate_ : ndarray of bool, shape (n_classes,)
        Whether :math:`w_c = 0` (:data:`DEGENERATE_TOL`); such a class is never the nearest.

    See Also
    --------
    TPMSVM : the binary model (2)-(14).
    RobustTPMSVMOneVsAll : the robust version (21)-(29).
    tpm_models.models.multiclass.build_primal_15 : the primal (15).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.1], [1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> clf = TPMSVMOneVsAll(nu=0.3, alpha=1.0).fit(X, [7, 7, 3, 3, 12, 12])
    >>> clf.classes_.tolist(), clf.decision_function(X).shape
    ([3, 7, 12], (6, 3))
    """

    def __init__(
        self, *, nu: float = 0.5, alpha: float = 1.0, kernel: str = "linear", degree: int | None = None,
        gamma: float | None = None, sigma: float | None = None, a: float | None = None, b: float | None = None,
        solver: str = "default", free_tol: float = FREE_TOL, backend: str = "auto",
    ) -> None:
        self.backend = backend
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

    def fit(self, X: object, y: object) -> TPMSVMOneVsAll:
        """Solve (16)/(19) and recover (17)/(20) for every class; return ``self``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points as rows, finite.
        y : array-like of shape (n_samples,)
            Labels of at least two classes, any type.
        """
        nu, alpha = check_nu_alpha(self.nu, self.alpha, "TPMSVMOneVsAll")
        kernel = validate_kernel(self)
        solver = validate_solver(self.solver, "QP")
        backend = _check_backend(self.backend, solver)
        free_tol = check_free_tol(self.free_tol)
        X, classes, y_idx = self._validate_fit_data(X, y)
        self._check_classes(classes, "TPMSVMOneVsAll")
        backend = _resolve_backend(backend, solver, np.bincount(y_idx).tolist())
        if backend == "decomposition":
            planes = fit_planes(kernel, X, y_idx, len(classes), [(c, nu, alpha, 1) for c in range(len(classes))],
                                free_tol)
        else:
            planes = [self._fit_class(X, y_idx, c, nu, alpha, kernel, solver, backend, free_tol)
                      for c in range(len(classes))]
        self.degenerate_ = degenerate_planes(
            np.array([h.norm_w for h in planes]), np.full(len(planes), nu), X, kernel, classes.tolist()
        )
        self.kernel_ = kernel
        self.fit_backend_ = backend
        self.planes_: list[Hyperplane | ExpansionPlane] = planes
        self.intercept_ = np.array([h.theta for h in planes])
        self.classes_ = classes
        return self

    @staticmethod
    def _fit_class(X: np.ndarray, y_idx: np.ndarray, c: int, nu: float, alpha: float, kernel: Kernel, solver: str,
                   backend: str, free_tol: float) -> Hyperplane:
        """(16)/(19) and (17)/(20) for class ``c`` on the dense or the Pyomo path."""
        if backend == "dense":  # multiclass.dual_19_qp and recover_17 without re-validating the data
            own = y_idx == c
            X_c, X_minus_c = X[own], X[~own]
            lam = solve_matrices(kernel_dual_matrices(kernel, X_c, X_minus_c, nu, alpha), solver).values["x"]
            return recover(X_c, X_minus_c, lam, nu, alpha, kernel, sign=1, free_tol=free_tol)
        if kernel.name == "linear":
            dual = build_dual_16(X, y_idx, c, nu, alpha)
        else:
            dual = build_dual_19(X, y_idx, c, nu, alpha, kernel=kernel)
        lam = solve(dual, solver).values["lam"]
        return recover_17(X, y_idx, c, lam, nu, alpha, kernel, free_tol)

    @property
    def coef_(self) -> np.ndarray:
        """:math:`w_c` of (17), shape ``(n_classes, n_features)``; linear kernel only."""
        check_is_fitted(self, "planes_")
        if self.kernel_.name != "linear":
            raise AttributeError(f"coef_ exists only for kernel='linear', not {self.kernel_}; use planes_[c].w_phi")
        return np.array([h.w for h in self.planes_])

    def _distances(self, X: np.ndarray) -> np.ndarray:
        if isinstance(self.planes_[0], ExpansionPlane):
            return np.where(self.degenerate_, np.inf, np.abs(plane_distances(self.planes_, X)))
        return np.column_stack([
            np.full(len(X), np.inf) if d else np.abs(h.distance(X)) for h, d in zip(self.planes_, self.degenerate_)
        ])


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
        (``"ipopt"``, ``"scip"``) otherwise.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    coef_ : ndarray of shape (n_classes, n_features)
        :math:`w_c`.
    intercept_ : ndarray of shape (n_classes,)
        :math:`\\theta_c`.
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
        solver: str = "default",
    ) -> None:
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
            p = check_p(self.p)
        except ValueError as exc:
            raise ValueError(f"{exc}: p is the norm of the uncertainty set (21), a number >= 1 or 'inf'") from None
        eq = ROBUST_EQUATION.get(p, 26)
        solver = validate_solver(self.solver, MODELS[eq].model_class)
        X, classes, y_idx = self._validate_fit_data(X, y)
        self._check_classes(classes, "RobustTPMSVMOneVsAll")
        try:
            radii = check_radii(self.eps, len(X))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{exc}: eps holds the radii of (21), a number >= 0 for all points or one per training point"
            ) from None
        coef, intercept, intervals = [], [], []
        for c in range(len(classes)):
            w = solve(build(eq, X, y_idx, c, nu, alpha, p=p, eps=radii), solver).values["w"]
            own = y_idx == c
            scores = X[own] @ w - radii[own] * dual_norm(w, p)
            interval = theta_interval_primal(-scores, nu, alpha)
            coef.append(w)
            intercept.append(choose_theta(interval))
            intervals.append(interval)
        coef = np.array(coef)
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
