"""The one-versus-all classifier :class:`TPMSVMOneVsAll`: dual (16)/(19) per class, recovery (17)/(20),
decision (18)/(20)."""

from __future__ import annotations

from typing import cast

import numpy as np

from tpm_models.kernels import Kernel
from tpm_models.lazy import import_optional
from tpm_models.learn.base import OneVsAllBase
from tpm_models.learn.class_jobs import map_classes
from tpm_models.learn.decomposition import DecompositionError
from tpm_models.learn.expansion import ExpansionPlane, fit_planes, plane_distances
from tpm_models.learn.linear_dual import LinearPlane, fit_linear_planes
from tpm_models.learn.parameters import (
    check_backend,
    degenerate_planes,
    dense_fallback,
    resolve_backend,
    validate_kernel,
    validate_solver,
)
from tpm_models.models.multiclass import build_dual_16, build_dual_19, recover_17
from tpm_models.models.recovery import (
    FREE_TOL,
    Hyperplane,
    expansion_w_w,
    kkt_theta,
)
from tpm_models.models.shapes import dual_matrices, gram_blocks
from tpm_models.solvers.dense import solve_matrices
from tpm_models.solvers.dispatch import solve
from tpm_models.validation import check_free_tol, check_n_jobs, check_nu_alpha

# scikit-learn is the "learn" extra's: without it, importing an estimator says which extra to install
sklearn_validation = import_optional("sklearn.utils.validation", "learn", "an estimator of tpm_models.learn")
check_is_fitted = sklearn_validation.check_is_fitted

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
        A QP backend of :mod:`tpm_models.solvers`; with ``backend="dense"`` only ``"default"`` (PIQP) or a
        backend that takes a QP in matrix form (:func:`tpm_models.solvers.matrix_solvers`: ``"piqp"``, ``"daqp"``).
    backend : {"auto", "dense", "decomposition", "linear-decomposition", "pyomo"}, default="auto"
        ``"dense"``: the matrices of (16)/(19) (:func:`tpm_models.models.multiclass.dual_19_qp`, the ones
        :func:`tpm_models.models.multiclass.build_dual_19` writes) go straight to the dense solver;
        ``"decomposition"``: the same QP by :mod:`tpm_models.learn.decomposition` (kernel rows on demand, no
        :math:`m_c\times m_c` array, for large sets); ``"linear-decomposition"``: (16) by
        :mod:`tpm_models.learn.linear_dual` (linear kernel only: :math:`w` kept explicitly, no kernel rows);
        ``"pyomo"``: the Pyomo model is built and solved by :func:`tpm_models.solvers.dispatch.solve`; ``"auto"``:
        with the linear kernel ``"linear-decomposition"`` beyond :data:`LINEAR_DENSE_MAX_POINTS` points in the
        largest class, with the others ``"decomposition"`` beyond :data:`DENSE_MAX_POINTS`, else ``"dense"``.
        ``fit_backend_`` says which ran.
    free_tol : float, default=FREE_TOL
        Relative tolerance for a free multiplier (:mod:`tpm_models.models.recovery`).
    n_jobs : int or None, default=None
        The classes' planes as joblib tasks (scikit-learn's meaning): None, one after another in this process unless
        a ``joblib.parallel_config`` with more than one worker is active (e.g. ``backend="dask"``: the classes run
        on the cluster); 1, always in this process; -1, one worker per core; 0 is refused. The planes are the same
        bits whatever runs them (:mod:`tpm_models.learn.class_jobs`), but on the dense and Pyomo paths in a worker
        whose BLAS runs on another number of threads than this process's (rounding, about 1e-13).

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
        solver: str = "default", free_tol: float = FREE_TOL, backend: str = "auto", n_jobs: int | None = None,
    ) -> None:
        self.backend = backend
        self.n_jobs = n_jobs
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
        backend = check_backend(self.backend, solver, kernel.name)
        free_tol = check_free_tol(self.free_tol)
        n_jobs = check_n_jobs(self.n_jobs, "TPMSVMOneVsAll: n_jobs")
        X, classes, y_idx = self._validate_fit_data(X, y)
        self._check_classes(classes, "TPMSVMOneVsAll")
        backend = resolve_backend(backend, solver, np.bincount(y_idx).tolist(), kernel.name)
        planes: list[Hyperplane] | list[ExpansionPlane] | list[LinearPlane]
        specs = [(c, nu, alpha, 1) for c in range(len(classes))]
        try:
            if backend == "linear-decomposition":  # (16) with w of (17) kept explicitly
                planes = fit_linear_planes(kernel, X, y_idx, specs, free_tol, n_jobs=n_jobs)
            elif backend == "decomposition":
                planes = fit_planes(kernel, X, y_idx, len(classes), specs, free_tol, n_jobs=n_jobs)
        except DecompositionError as exc:
            backend = dense_fallback(self.backend, exc)
        if backend not in ("decomposition", "linear-decomposition"):
            planes = map_classes(fit_class_plane, [(X, y_idx, c, nu, alpha, kernel, solver, backend, free_tol)
                                                   for c in range(len(classes))], n_jobs)
        self.degenerate_ = degenerate_planes(
            np.array([h.norm_w for h in planes]), np.full(len(planes), nu), X, kernel, classes.tolist()
        )
        self.kernel_ = kernel
        self.fit_backend_ = backend
        self.planes_: list[Hyperplane] | list[ExpansionPlane] | list[LinearPlane] = planes
        self.intercept_ = np.array([h.theta for h in planes])
        self.classes_ = classes
        return self

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
        planes = cast(list[Hyperplane | LinearPlane], self.planes_)  # the expansion planes were handled above
        return np.column_stack([
            np.full(len(X), np.inf) if d else np.abs(h.distance(X)) for h, d in zip(planes, self.degenerate_)
        ])


def fit_class_plane(X: np.ndarray, y_idx: np.ndarray, c: int, nu: float, alpha: float, kernel: Kernel, solver: str,
                    backend: str, free_tol: float) -> Hyperplane:
    """(16)/(19) and (17)/(20) for class ``c`` on the dense (:func:`fit_dense_plane`) or the Pyomo path: one task of
    :meth:`TPMSVMOneVsAll.fit` (:func:`tpm_models.learn.class_jobs.map_classes`), on the whole ``X`` and ``y_idx``."""
    if backend == "dense":  # multiclass.dual_19_qp and recover_17 without re-validating the data
        own = y_idx == c
        return fit_dense_plane(kernel, X[own], X[~own], nu, alpha, solver, free_tol)
    if kernel.name == "linear":
        dual = build_dual_16(X, y_idx, c, nu, alpha)
    else:
        dual = build_dual_19(X, y_idx, c, nu, alpha, kernel=kernel)
    lam = cast(np.ndarray, solve(dual, solver).values["lam"])  # an indexed variable's values: an array
    return recover_17(X, y_idx, c, lam, nu, alpha, kernel, free_tol)


def fit_dense_plane(kernel: Kernel, X_own: np.ndarray, X_other: np.ndarray, nu: float, alpha: float, solver: str,
                    free_tol: float = FREE_TOL, sign: int = 1) -> Hyperplane:
    """The dense path for one hyperplane: the dual (16)/(19) of ``X_own`` (:math:`X_c`) against ``X_other``
    (:math:`X_{-c}`) (with ``sign=-1``, (5)/(13) of :math:`X_-` against :math:`X_+`) from
    :func:`tpm_models.models.shapes.gram_blocks` and :func:`tpm_models.models.shapes.dual_matrices` by
    :func:`tpm_models.solvers.dense.solve_matrices` (``solver``: ``"default"`` or a backend that takes a QP in
    matrix form), then (17)/(20) (or (7)) with :math:`\\theta` by errata 5.

    The numbers of :func:`tpm_models.models.recovery.recover` (the same :math:`\\lambda` to the last bit; the same
    :math:`\\theta`, ``free`` and :math:`\\langle w,w\\rangle` up to the order of one sum, 1e-15 relative), but every
    Gram block is computed once: :math:`K(X_c,X_c)` is the dual's ``P``, and with the transpose of the dual's
    :math:`K(X_{-c},X_c)` it gives the scores
    :math:`s_i = \\sigma(\\lambda^\\top K(X_c,x^i) - \\frac{\\nu}{m_{-c}}e^\\top K(X_{-c},x^i))` and
    :math:`\\langle w,w\\rangle` (:func:`tpm_models.models.recovery.expansion_w_w`; for the linear kernel
    :math:`\\|w\\|^2` of (17)'s :math:`w = X_c^\\top\\lambda - \\frac{\\nu}{m_{-c}}X_{-c}^\\top e`, which needs no
    :math:`K(X_{-c},X_{-c})`; stored in the plane, so neither ``fit`` nor ``predict`` computes it again)."""
    gram_own, gram_other_own = gram_blocks(kernel, X_own, X_other)
    qp = dual_matrices(gram_own, gram_other_own, nu, alpha)
    lam = cast(np.ndarray, solve_matrices(qp, solver).values["x"])  # a QP in matrix form: its point an array
    a = nu / len(X_other)
    gram_own_other = gram_other_own.T
    # Hyperplane.w_phi(X_own) = sign (K(X_own,X_own) lam - a K(X_own,X_other) e) = sign (P lam + q): qp.q is
    # -a K(X_other,X_own)'e, the same column sums times the same -a, so the same bits as writing it out
    minus_s = qp.P @ lam
    minus_s += qp.q  # in place: the same sums, two arrays fewer
    if sign == 1:
        np.negative(minus_s, out=minus_s)  # -s; for sign = -1, s = -(P lam + q) and -s is P lam + q itself
    theta, interval, free, rule = kkt_theta(minus_s, lam, alpha / len(X_own), sign, free_tol)
    if kernel.name == "linear":  # |w|^2 of (17)'s w = X_own' lam - a X_other' e: no K(X_other, X_other)
        w = X_own.T @ lam
        w -= a * X_other.sum(axis=0)
        w_w = float(w @ w)
    else:
        w_w = expansion_w_w(lam, a, qp.P, gram_own_other, kernel.gram(X_other, X_other))
    return Hyperplane(kernel, X_own, X_other, lam, a, sign, theta, interval, free, rule, w_w)
