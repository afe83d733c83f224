"""The hyperplanes of the scalable path: (6)/(7)/(17)/(20) from the decomposition's solution, as expansions
:math:`\\langle w,\\varphi(x)\\rangle = K(x, X_{train})\\beta` (:class:`ExpansionPlane`), and their distances.

:func:`fit_planes` solves every plane's dual by :func:`tpm_models.learn.decomposition.solve_decomposition`
from one pass of :func:`tpm_models.learn.kernel_sums.group_kernel_sums`, recovers :math:`\\theta` by the
rule of errata 5 (:func:`tpm_models.models.recovery.kkt_theta`, the dense path's) and
:math:`\\langle w,w\\rangle` from the gradient, so nothing of size :math:`m\\times m` is formed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from tpm_models.kernels import Kernel
from tpm_models.learn import blas_threads
from tpm_models.learn.blas_threads import cheap_blas_limit
from tpm_models.learn.class_jobs import map_classes
from tpm_models.learn.decomposition import DecompositionResult, solve_decomposition
from tpm_models.learn.kernel_sums import expansion_values, group_kernel_sums
from tpm_models.models.recovery import FREE_TOL, PlaneDistance, kkt_theta

ONE_THREAD_MIN_POINTS = 2000
"""When the BLAS threads can only be limited through ``threadpoolctl`` (numpy's BLAS is not OpenBLAS,
:func:`tpm_models.learn.blas_threads.cheap_blas_limit`), :func:`fit_planes` and :func:`plane_distances` run
BLAS on one thread from this many points on and leave it alone below: ``threadpoolctl``'s search of the
loaded libraries costs 25-40 ms once per process, as much as a whole Gaussian fit at 1,000 points. With
OpenBLAS the limit costs two C calls and applies at every size."""


def one_blas_thread(m: int) -> contextlib.AbstractContextManager:
    """A context in which BLAS runs on one thread (:func:`fit_planes`, :func:`plane_distances`): always when the
    limit is cheap (:func:`tpm_models.learn.blas_threads.cheap_blas_limit`), else from
    :data:`ONE_THREAD_MIN_POINTS` points on. Their products are a working set's rows or one kernel block, too
    small for BLAS threads to pay (multithreaded OpenBLAS is several times slower on them when the cores are
    shared; the git log of ``docs/notes/bench-estimators.md``)."""
    if m < ONE_THREAD_MIN_POINTS and not cheap_blas_limit():
        return contextlib.nullcontext()
    return blas_threads.one_blas_thread()


@dataclass(frozen=True)
class ExpansionPlane(PlaneDistance):
    """A hyperplane of the scalable path: :math:`\\langle w,\\varphi(x)\\rangle = K(x, X_{train})\\,\\beta` with
    expansion coefficients :math:`\\beta` over the training points (:math:`\\sigma\\lambda_i` on the own set,
    :math:`-\\sigma\\nu/m_{\\bar o}` on the other: (6), (7), (17), (20)). Same fields and rule for
    :math:`\\theta` (errata 5, :func:`tpm_models.models.recovery.kkt_theta`) as
    :class:`tpm_models.models.recovery.Hyperplane`; :math:`\\langle w,w\\rangle` is computed once at fit
    from the gradient, so nothing of size :math:`m\\times m` is ever formed."""

    kernel: Kernel
    X_train: np.ndarray
    beta: np.ndarray  # (m_train,)
    lam: np.ndarray
    nu_over_m_other: float
    sign: int
    theta: float
    theta_interval: tuple[float, float]
    free: np.ndarray
    theta_rule: str
    w_w: float
    result: DecompositionResult

    @property
    def norm_w(self) -> float:
        """:math:`\\sqrt{\\langle w,w\\rangle}`."""
        return float(np.sqrt(max(self.w_w, 0.0)))

    @property
    def w(self) -> np.ndarray:
        """:math:`w` in input space (linear kernel only)."""
        if self.kernel.name != "linear":
            raise ValueError(f"w is explicit only for the linear kernel, not {self.kernel}")
        return self.X_train.T @ self.beta

    def w_phi(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\langle w,\\varphi(x)\\rangle` for each row of ``X`` (blocks of rows)."""
        return expansion_values(self.kernel, self.X_train, self.beta[:, None], X)[:, 0]


def fit_plane(
    kernel: Kernel, X: np.ndarray, sums: np.ndarray, groups: np.ndarray, own_group: int, nu: float, alpha: float,
    sign: int = 1, free_tol: float = FREE_TOL, **solver_options: Any,
) -> ExpansionPlane:
    """Solve the dual of the group ``own_group`` of ``X`` against all other points and recover (6)/(7)/(17)/(20).

    ``sums`` are :func:`group_kernel_sums` of ``X`` by ``groups``; ``sign=+1`` for (4), (12), (16), (19)
    (recovery (6), (17), (20)), ``-1`` for (5), (13) (recovery (7)); the QP is the same.
    """
    own = groups == own_group
    m_own, m_other = int(own.sum()), int((~own).sum())
    if m_own == 0 or m_other == 0:
        raise ValueError(f"group {own_group} has {m_own} points and the rest {m_other}; need both > 0")
    a = nu / m_other
    own_sums = sums[own, own_group]
    r = sums[own].sum(axis=1) - own_sums  # K(X_o, X_other) e
    total_other = float(sums[~own].sum() - sums[~own, own_group].sum())  # e'K(X_other, X_other)e
    res = solve_decomposition(kernel, X[own], own_sums, -a * r, nu, alpha, w_offset=a * a * total_other,
                              **solver_options)
    lam, G = res.lam, res.gradient  # G_i = <w, phi(x^i)> for sign = +1
    theta, interval, free, rule = kkt_theta(-sign * G, lam, alpha / m_own, sign, free_tol)
    w_w = float(lam @ G - a * (r @ lam) + a * a * total_other)
    beta = np.where(own, 0.0, -a)
    beta[own] = lam
    return ExpansionPlane(kernel, X, sign * beta, lam, a, sign, theta, interval, free, rule, w_w, res)


NO_POINTS = np.zeros((0, 0))
"""The ``X_train`` of a plane on its way back from :func:`plane_task` (:func:`fit_planes` puts its own ``X`` back)."""


def plane_task(kernel: Kernel, X: np.ndarray, sums: np.ndarray, groups: np.ndarray, own_group: int, nu: float,
               alpha: float, sign: int, free_tol: float, solver_options: dict[str, Any]) -> ExpansionPlane:
    """:func:`fit_plane` with BLAS on one thread (:func:`one_blas_thread`; nested in the caller's limit when it runs
    in this process), one task of :func:`fit_planes`; its ``X_train`` is :data:`NO_POINTS` (from a worker process,
    the plane would otherwise bring back a copy of all training points)."""
    with one_blas_thread(len(X)):
        plane = fit_plane(kernel, X, sums, groups, own_group, nu, alpha, sign, free_tol, **solver_options)
    return replace(plane, X_train=NO_POINTS)


def fit_planes(
    kernel: Kernel, X: np.ndarray, groups: np.ndarray, n_groups: int, specs: Sequence[tuple[int, float, float, int]],
    free_tol: float = FREE_TOL, *, n_jobs: int | None = 1, **solver_options: Any,
) -> list[ExpansionPlane]:
    """:func:`fit_plane` for each ``(own_group, nu, alpha, sign)`` of ``specs``, from one pass of
    :func:`group_kernel_sums`. BLAS runs on one thread here (:func:`one_blas_thread`): the products are
    small (a working set's rows), and multithreaded OpenBLAS on such products is several times slower on a
    shared machine.

    ``n_jobs`` (checked by the caller, :func:`tpm_models.validation.check_n_jobs`): the planes as joblib tasks
    (:func:`plane_task` by :func:`tpm_models.learn.class_jobs.map_classes`; 1: one after another here); every
    plane's ``X_train`` is this ``X`` (one array for all planes, as in this process)."""
    X = np.ascontiguousarray(X, dtype=float)
    groups = np.asarray(groups)
    with one_blas_thread(len(X)):
        sums = group_kernel_sums(kernel, X, groups, n_groups)
        planes = map_classes(plane_task, [(kernel, X, sums, groups, g, nu, alpha, sign, free_tol, solver_options)
                                          for g, nu, alpha, sign in specs], n_jobs)
    return [replace(plane, X_train=X) for plane in planes]


def plane_distances(planes: Sequence[ExpansionPlane], X: np.ndarray) -> np.ndarray:
    """Signed distances :math:`(\\langle w,\\varphi(x)\\rangle+\\theta)/\\sqrt{\\langle w,w\\rangle}` of every
    row of ``X`` to every plane (planes fitted on the same training points), shape ``(len(X), len(planes))``,
    in one pass over the kernel blocks; a plane with :math:`w = 0` gets ``nan`` (the estimators leave
    degenerate planes out before dividing)."""
    beta = np.column_stack([p.beta for p in planes])
    theta = np.array([p.theta for p in planes])
    norm = np.array([p.norm_w for p in planes])
    with one_blas_thread(len(planes[0].X_train) + len(X)):
        values = expansion_values(planes[0].kernel, planes[0].X_train, beta, X)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norm > 0.0, (values + theta) / np.where(norm > 0.0, norm, 1.0), np.nan)
