"""Fast path for the one-versus-all kernel dual (19) (the linear kernel gives (16)): numpy + a dense QP backend.

For class :math:`c`, with Gram blocks :math:`K_{cc} = K(X_c, X_c)` and :math:`K_{oc} = K(X_{-c}, X_c)`,
(19) is stored as the minimisation of its negated objective, exactly as
:func:`tpm_models.solvers.matrices.qp_matrices` reads ``build_dual_19(...)`` (``sense = -1``):

.. math::
    \\begin{aligned}
    &\\min_\\lambda\\ \\tfrac12\\lambda^\\top P\\lambda + q^\\top\\lambda
    \\quad\\text{s.t.}\\quad A\\lambda = b,\\ \\ x_l \\le \\lambda \\le x_u, \\\\
    &P = K_{cc},\\ \\ q = -\\frac{\\nu_c}{m_{-c}}K_{oc}^\\top e_{-c},\\ \\ A = e_c^\\top,\\ \\ b = \\nu_c,\\ \\
    x_l = 0,\\ \\ x_u = \\frac{\\alpha_c}{m_c}e_c .
    \\end{aligned}

Nothing is built in Pyomo: the blocks are slices of one Gram matrix, and the QP of each
(Gram matrix, class) (:class:`ClassDual`) goes to a backend that takes a QP in matrix form through
:func:`tpm_models.solvers.dense.solve_matrices`, with the settings of ``solve(..., solver)``, set up once
(a :class:`tpm_models.solvers.dense.WarmStart`) and re-solved for every :math:`(\\nu, \\alpha)` by updating
:math:`q`, :math:`b` and :math:`x_u` (DAQP, the default, keeps its factorisation and starts from the previous
working set; PIQP, ``solver="piqp"``, keeps its set-up).

Recovery and decision are those of (20)/(18) with precomputed Gram rows:
:math:`\\langle w_c,\\varphi(x)\\rangle = K(x, X_c)\\lambda_c - \\frac{\\nu_c}{m_{-c}}K(x, X_{-c})e_{-c}`,
:math:`\\langle w_c, w_c\\rangle` by the corrected display (errata 4), and :math:`\\theta_c` by
:func:`tpm_models.models.recovery.kkt_thetas` -- the rule :func:`tpm_models.models.recovery.recover`
(hence :func:`tpm_models.models.multiclass.recover_17`) uses through :func:`~tpm_models.models.recovery.kkt_theta`,
for all parameter columns at once (errata 5). Ties in (18) go to the lowest class.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from tpm_models.kernels import Kernel
from tpm_models.models.recovery import DEGENERATE_TOL, FREE_TOL, kkt_thetas
from tpm_models.qp import QPMatrices
from tpm_models.solvers.backends.registry import default_solver
from tpm_models.solvers.dense import WarmStart, matrix_solvers, solve_matrices
from tpm_models.validation import check_features, check_labels, check_nu_alpha

FAST_SOLVERS = tuple(matrix_solvers())
"""The backends the fast path can use: those of the registry that take a QP in matrix form."""


class FastQPError(RuntimeError):
    """The dense solver did not return a verified optimum of (19)."""


class ClassDual:
    """(19) for one class on a fixed Gram matrix: set up once, solved for any :math:`(\\nu, \\alpha)`.

    ``K_own`` :math:`= K(X_c, X_c)`, ``K_other_own`` :math:`= K(X_{-c}, X_c)`; ``solver``: one of
    :data:`FAST_SOLVERS`. The first :meth:`solve` sets the solver up; later ones update :math:`q = \\nu q_1`,
    :math:`b = \\nu`, :math:`x_u = \\alpha/m_c` and start from the previous solution (warm start, kept in a
    :class:`~tpm_models.solvers.dense.WarmStart`). ``qps`` counts the solves. A warm run that fails is run again
    cold; when that fails too the QP goes to the default QP backend (``default_solver("QP")``, PIQP) and
    ``fallbacks`` counts it (DAQP reaches its iteration limit on a few QPs with :math:`\\alpha \\ge 2^7`, never at
    the :math:`\\alpha = 1` of the experiments).
    """

    def __init__(self, K_own: np.ndarray, K_other_own: np.ndarray, solver: str = "daqp"):
        if solver not in FAST_SOLVERS:
            raise ValueError(f"unknown fast-path solver {solver!r}; choose one of {FAST_SOLVERS}")
        K_own = np.asarray(K_own, dtype=float)
        K_other_own = np.asarray(K_other_own, dtype=float)
        m = K_own.shape[0]
        if K_own.shape != (m, m) or K_other_own.ndim != 2 or K_other_own.shape[1] != m or m == 0:
            raise ValueError(f"Gram blocks of shapes {K_own.shape} and {K_other_own.shape} do not fit (19)")
        if not (np.isfinite(K_own).all() and np.isfinite(K_other_own).all()):
            raise ValueError("the Gram blocks contain NaN or infinite values (kernel overflow?)")
        self.solver = solver
        self.m_own, self.m_other = m, K_other_own.shape[0]
        self.P = np.ascontiguousarray(K_own)
        self.col_sums = K_other_own.sum(axis=0)
        self._A, self._G = np.ones((1, m)), np.zeros((0, m))  # the same arrays in every QP: the warm start's test
        self._warm, self._fallback = WarmStart(), WarmStart()
        self.qps = 0
        self.fallbacks = 0

    def matrices(self, nu: float, alpha: float) -> QPMatrices:
        """The QP solved by :meth:`solve` (equal to ``qp_matrices(build_dual_19(...))`` and to
        :func:`tpm_models.models.shapes.dual_matrices` of the two blocks)."""
        nu, alpha = check_nu_alpha(nu, alpha)
        m, none = self.m_own, np.zeros(0)
        return QPMatrices([], self.P, -(nu / self.m_other) * self.col_sums, 0.0, -1, self._A, np.array([nu]), [],
                          self._G, none, none, [], np.zeros(m), np.full(m, alpha / m))

    def solve(self, nu: float, alpha: float) -> np.ndarray:
        """:math:`\\lambda_c` of (19) at :math:`(\\nu, \\alpha)`, verified by
        :func:`~tpm_models.solvers.dense.solve_matrices` (optimal, feasible to ``FEASIBILITY_TOL``); raises
        :class:`FastQPError` when neither the solver nor the fallback returns one."""
        qp = self.matrices(nu, alpha)
        warm = self._warm.holds(qp)
        result = solve_matrices(qp, self.solver, raise_on_failure=False, warm=self._warm)
        if not result.optimal and warm:
            self._warm = WarmStart()
            result = solve_matrices(qp, self.solver, raise_on_failure=False, warm=self._warm)
        fallback = default_solver("QP")
        if not result.optimal and fallback != self.solver:
            result = solve_matrices(qp, fallback, raise_on_failure=False, warm=self._fallback)
            self.fallbacks += 1
        self.qps += 1
        if not result.optimal:
            raise FastQPError(f"{result.solver} did not solve (19): {result.termination.value} ({result.message})")
        return cast(np.ndarray, result.values["x"])  # the point of a QP in matrix form: an array


@dataclass(frozen=True)
class Planes:
    """``k`` recovered surfaces of one class (one per solved :math:`(\\nu, \\alpha)`), as in (20).

    ``own``/``other`` are column positions in the Gram rows given to :meth:`distance`.
    """

    own: np.ndarray
    other: np.ndarray
    lam: np.ndarray  # (m_own, k)
    nu_over_m_other: np.ndarray  # (k,)
    theta: np.ndarray  # (k,)
    theta_interval: list[tuple[float, float]]
    free: list[np.ndarray]
    theta_rule: list[str]
    w_w: np.ndarray  # (k,)
    degenerate: np.ndarray  # (k,) bool: w = 0 by DEGENERATE_TOL, at distance +inf
    fallbacks: int = 0  # QPs DAQP failed and PIQP solved (ClassDual)

    def w_phi(self, K_rows: np.ndarray) -> np.ndarray:
        """:math:`\\langle w,\\varphi(x)\\rangle` for Gram rows ``K_rows[r] = k(x^r, all points)``;
        shape ``(rows, k)``."""
        return K_rows[:, self.own] @ self.lam - np.outer(K_rows[:, self.other].sum(axis=1), self.nu_over_m_other)

    def distance(self, K_rows: np.ndarray) -> np.ndarray:
        """Signed distances :math:`(\\langle w,\\varphi(x)\\rangle+\\theta)/\\sqrt{\\langle w,w\\rangle}`;
        shape ``(rows, k)``.

        A degenerate column (``degenerate``, :data:`tpm_models.models.recovery.DEGENERATE_TOL`) is at
        :math:`+\\infty`: never the nearest, the rule of the estimators."""
        norm = np.sqrt(np.where(self.degenerate, 1.0, self.w_w))
        d = (self.w_phi(K_rows) + self.theta) / norm
        return np.where(self.degenerate, np.inf, d)


def recover_planes(
    K: np.ndarray, own: np.ndarray, other: np.ndarray, lam: np.ndarray, nu: Sequence[float] | np.ndarray,
    alpha: Sequence[float] | np.ndarray, free_tol: float = FREE_TOL, K_own: np.ndarray | None = None,
    fallbacks: int = 0,
) -> Planes:
    """(17)/(20) for the columns of ``lam`` (one per :math:`(\\nu_j, \\alpha_j)`), from the Gram matrix ``K``
    whose rows and columns are indexed like ``own``/``other``; :math:`\\theta` by
    :func:`tpm_models.models.recovery.kkt_thetas` (the rule of :func:`tpm_models.models.recovery.recover`).
    ``K_own``: ``K[np.ix_(own, own)]`` when the caller has it (the dual's ``P``); ``fallbacks``: the
    :attr:`Planes.fallbacks` to record."""
    lam = np.asarray(lam, dtype=float).reshape(len(own), -1)
    a = np.asarray(nu, dtype=float) / len(other)
    alphas = np.asarray(alpha, dtype=float)
    K_oo = K[np.ix_(own, own)] if K_own is None else K_own
    r_own = K[np.ix_(own, other)].sum(axis=1)
    K_other = K[np.ix_(other, other)]
    K_lam = K_oo @ lam
    minus_s = -(K_lam - np.outer(r_own, a))
    rules = kkt_thetas(minus_s, lam, alphas / len(own), 1, free_tol)
    total_other = K_other.sum()
    w_w = np.einsum("ij,ij->j", lam, K_lam) - 2.0 * a * (r_own @ lam) + a**2 * total_other
    # w = 0 (DEGENERATE_TOL): |w| <= tol * nu * max_i |phi(x^i)| over the training points
    phi_max = np.sqrt(np.abs(np.concatenate([np.diag(K_oo), np.diag(K_other)])).max())
    degenerate = np.sqrt(np.maximum(w_w, 0.0)) <= DEGENERATE_TOL * np.asarray(nu, dtype=float) * phi_max
    return Planes(own, other, lam, a, np.array([r[0] for r in rules]), [r[1] for r in rules],
                  [r[2] for r in rules], [r[3] for r in rules], w_w, degenerate, fallbacks)


def fit_classes(
    K: np.ndarray, train: np.ndarray, y_train: np.ndarray, n_classes: int, nu: Sequence[float] | np.ndarray,
    alpha: Sequence[float] | np.ndarray, solver: str = "daqp", free_tol: float = FREE_TOL,
) -> tuple[list[Planes], int]:
    """One-versus-all (19) for every class and every :math:`(\\nu_j, \\alpha_j)` on the points ``train``.

    ``K`` is a Gram matrix over a set of points (rows and columns), ``train`` the positions of the
    training points in it and ``y_train`` their class numbers ``0..n_classes-1``. Each class's QP is set up
    once and re-solved along the parameter list (warm starts). Returns the planes and the QPs solved.
    """
    planes, qps = [], 0
    for c in range(n_classes):
        own, other = train[y_train == c], train[y_train != c]
        if len(own) == 0 or len(other) == 0:
            raise ValueError(f"class {c} has {len(own)} training points and the rest {len(other)}; need both > 0")
        dual = ClassDual(K[np.ix_(own, own)], K[np.ix_(other, own)], solver)
        lam = np.column_stack([dual.solve(v, a) for v, a in zip(nu, alpha)])
        qps += dual.qps
        planes.append(recover_planes(K, own, other, lam, nu, alpha, free_tol, dual.P, dual.fallbacks))
    return planes, qps


def predict_rows(planes: Sequence[Planes], K_rows: np.ndarray) -> np.ndarray:
    """(18)/(20): nearest surface for each Gram row and each parameter column, shape ``(k, rows)``;
    ties go to the lowest class (``np.argmin``, as :func:`tpm_models.models.multiclass.predict_18`)."""
    dist = np.stack([np.abs(p.distance(K_rows)) for p in planes], axis=-1)  # (rows, k, C)
    return np.argmin(dist, axis=-1).T


class FastOneVsAll:
    """One-versus-all TPMSVM (19)/(20)/(18) on the fast path: ``fit(X, y)``, ``predict(X)``, ``distances(X)``.

    Same model, recovery and decision as :class:`tpm_models.learn.estimators.TPMSVMOneVsAll` (which builds
    Pyomo models); ``y`` must hold class numbers ``0..C-1``.
    """

    def __init__(self, nu: float = 0.5, alpha: float = 1.0, kernel: Kernel | None = None,
                 solver: str = "daqp", free_tol: float = FREE_TOL):
        self.nu, self.alpha = check_nu_alpha(nu, alpha)
        self.kernel = kernel or Kernel()
        self.solver = solver
        self.free_tol = free_tol

    def fit(self, X: np.ndarray, y: np.ndarray) -> FastOneVsAll:
        X = check_features(X)
        y = np.asarray(check_labels(X, y))
        if y.dtype.kind not in "iu" or y.min() < 0:
            raise ValueError("y must hold class numbers 0..C-1 (use np.unique(labels, return_inverse=True))")
        start = time.perf_counter()
        self.X_ = X
        self.n_classes_ = int(y.max()) + 1
        K = self.kernel.gram(X, X)
        self.planes_, self.qps_ = fit_classes(K, np.arange(len(X)), y, self.n_classes_, [self.nu], [self.alpha],
                                              self.solver, self.free_tol)
        self.fit_seconds_ = time.perf_counter() - start
        return self

    def distances(self, X: np.ndarray) -> np.ndarray:
        """:math:`|\\langle w_c,\\varphi(x)\\rangle+\\theta_c|/\\sqrt{\\langle w_c,w_c\\rangle}`;
        shape ``(len(X), C)``."""
        K_rows = self.kernel.gram(check_features(X), self.X_)
        return np.column_stack([np.abs(p.distance(K_rows))[:, 0] for p in self.planes_])

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(18)/(20): the class number of the nearest surface (ties: the lowest)."""
        return np.argmin(self.distances(X), axis=1)
