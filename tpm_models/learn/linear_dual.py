"""The linear kernel's planes: (4)/(5), (16) solved with :math:`w` explicit, then (6)/(7)/(17) and errata 5.

The QP and its working-set method are :mod:`tpm_models.solvers.linear_dual` (also the ``linear-decomposition``
backend of ``solve()``); this module makes the estimators' hyperplanes of its solutions (:class:`LinearPlane`,
:func:`fit_linear_planes`). Memory: the own set's rows once (:math:`m_c n` numbers) and :math:`O(m_c)` vectors;
nothing of size :math:`m_c\\times m_c`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tpm_models.kernels import Kernel
from tpm_models.learn.class_jobs import map_classes
from tpm_models.learn.expansion import one_blas_thread
from tpm_models.models.recovery import FREE_TOL, PlaneDistance, kkt_theta
from tpm_models.solvers.linear_dual import (  # noqa: F401  (re-exported: the linear path's names)
    INNER_GAP_FRACTION,
    OUTER_WORKING_SET,
    LinearDualResult,
    linear_dual_objective,
    solve_linear_dual,
)


@dataclass(frozen=True)
class LinearPlane(PlaneDistance):
    """A hyperplane of the linear path: :math:`w` explicit (``w``: (6)/(17), or (7) for ``sign=-1``), the same
    fields and rule for :math:`\\theta` (errata 5, :func:`tpm_models.models.recovery.kkt_theta`) as
    :class:`tpm_models.models.recovery.Hyperplane`, and the solve's :class:`LinearDualResult` (``result``: its gap,
    :attr:`~tpm_models.learn.decomposition.DecompositionResult.w_bound`, ...). Holds no training points."""

    kernel: Kernel
    w: np.ndarray
    lam: np.ndarray
    nu_over_m_other: float
    sign: int
    theta: float
    theta_interval: tuple[float, float]
    free: np.ndarray
    theta_rule: str
    result: LinearDualResult

    @property
    def w_w(self) -> float:
        """:math:`\\langle w,w\\rangle`."""
        return float(self.w @ self.w)

    @property
    def norm_w(self) -> float:
        """:math:`\\|w\\|`."""
        return float(np.sqrt(self.w_w))

    def w_phi(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\langle w, x\\rangle` for each row of ``X``."""
        return np.atleast_2d(np.asarray(X, dtype=float)) @ self.w


def fit_linear_plane(kernel: Kernel, X: np.ndarray, groups: np.ndarray, total: np.ndarray, own_group: int, nu: float,
                     alpha: float, sign: int = 1, free_tol: float = FREE_TOL, **solver_options: object) -> LinearPlane:
    """The dual of the group ``own_group`` of ``X`` against all other points by :func:`solve_linear_dual`, then
    (6)/(7)/(17) (:math:`w` = ``sign`` :math:`\\cdot\\,v`) and :math:`\\theta` by errata 5; ``total`` is the sum of
    all rows of ``X``. ``sign=+1`` for (4), (16), ``-1`` for (5) (the QP is the same)."""
    own = groups == own_group
    m_own, m_other = int(own.sum()), int((~own).sum())
    if m_own == 0 or m_other == 0:
        raise ValueError(f"group {own_group} has {m_own} points and the rest {m_other}; need both > 0")
    X_own = X[own]
    other_mean = (total - np.ones(m_own) @ X_own) / m_other
    res = solve_linear_dual(X_own, other_mean, nu, alpha, **solver_options)  # type: ignore[arg-type]
    theta, interval, free, rule = kkt_theta(-sign * res.gradient, res.lam, alpha / m_own, sign, free_tol)
    return LinearPlane(kernel, sign * res.v, res.lam, nu / m_other, sign, theta, interval, free, rule, res)


def linear_plane_task(kernel: Kernel, X: np.ndarray, groups: np.ndarray, total: np.ndarray, own_group: int,
                      nu: float, alpha: float, sign: int, free_tol: float,
                      solver_options: dict[str, object]) -> LinearPlane:
    """:func:`fit_linear_plane` with BLAS on one thread (:func:`tpm_models.learn.expansion.one_blas_thread`): one
    task of :func:`fit_linear_planes` (:func:`tpm_models.learn.class_jobs.map_classes`), wherever it runs. In this
    process the caller holds the limit already (nested, it restores one thread); in a worker process it sets it."""
    with one_blas_thread(len(X)):
        return fit_linear_plane(kernel, X, groups, total, own_group, nu, alpha, sign, free_tol, **solver_options)


def fit_linear_planes(
    kernel: Kernel, X: object, groups: object, specs: Sequence[tuple[int, float, float, int]],
    free_tol: float = FREE_TOL, *, n_jobs: int | None = 1, **solver_options: object,
) -> list[LinearPlane]:
    """:func:`fit_linear_plane` for each ``(own_group, nu, alpha, sign)`` of ``specs`` (the specs of
    :func:`tpm_models.learn.expansion.fit_planes`), BLAS on one thread
    (:func:`tpm_models.learn.expansion.one_blas_thread`: the products are matrix-vector ones,
    which threads slow down on a shared machine). The linear kernel only (``ValueError``
    otherwise, and for ``X`` not a finite 2-D array or ``groups`` not one label per row).

    ``n_jobs`` (checked by the caller, :func:`tpm_models.validation.check_n_jobs`): the planes as joblib tasks
    (:func:`linear_plane_task` by :func:`tpm_models.learn.class_jobs.map_classes`; 1: one after another here). Each
    task gets the whole ``X`` and ``groups`` (scattered once on Dask) and takes its group's rows there."""
    if kernel.name != "linear":
        raise ValueError(f"the linear working-set method (backend='linear-decomposition') solves (4)/(5)/(16), the "
                         f"linear kernel's duals, not those of {kernel}: use backend='decomposition' or 'dense'")
    X = np.ascontiguousarray(X, dtype=float)
    groups = np.asarray(groups)
    if X.ndim != 2 or groups.shape != (len(X),):
        raise ValueError(f"fit_linear_planes: X must be 2-D with one group label per row; got X of shape {X.shape} "
                         f"and groups of shape {groups.shape}")
    if not np.isfinite(X).all():
        raise ValueError("fit_linear_planes: X must be finite (NaN or inf found)")
    with one_blas_thread(len(X)):
        total = np.ones(len(X)) @ X
        return map_classes(linear_plane_task, [(kernel, X, groups, total, g, nu, alpha, sign, free_tol, solver_options)
                                               for g, nu, alpha, sign in specs], n_jobs)
