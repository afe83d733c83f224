"""Ties that need the fast path or the experiments' protocol: they run above the checks layer and join
the report of ``tpm-models check`` through :func:`run_protocol_checks`."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from tpm_models.checks.deterministic import CheckResult
from tpm_models.experiments.table3 import (
    ALPHAS,
    KERNEL_PARAMS,
    RATIOS,
    Protocol,
    cv_folds,
    cv_seed,
    grid_counts,
    split_indices,
)
from tpm_models.kernels import Kernel
from tpm_models.learn.fastqp import fit_classes, predict_rows
from tpm_models.solvers.compare import rel_dist

KERNEL_SHIFT = 2.5
"""The constant added to a kernel by :func:`check_kernel_shift`."""


SHIFTED_KERNELS = (Kernel("linear"), Kernel("hom-poly", degree=2), Kernel("hom-poly", degree=3),
                   Kernel("gaussian", sigma=0.5))


def _class_numbers(y: np.ndarray) -> tuple[np.ndarray, int]:
    classes, numbers = np.unique(y, return_inverse=True)
    return numbers, len(classes)


def check_kernel_shift(
    X: np.ndarray, y: np.ndarray, label: str = "", shift: float = KERNEL_SHIFT,
    kernels: Iterable[Kernel] = SHIFTED_KERNELS, ratios: Iterable[float] = (0.1, 0.5, 0.9),
) -> list[CheckResult]:
    """Errata 10 in general: :math:`k + c` gives the distances (20) of :math:`k` for every class and
    :math:`\\nu/\\alpha` (fast path, whole data set), hence no prediction (18)/(20) changes: (19) fixes
    :math:`e^\\top\\lambda_c = \\nu_c`, so the constant cancels in (19), in :math:`\\langle w,\\varphi(x)\\rangle`
    and in :math:`\\langle w, w\\rangle`. Rows: the distances (relative, :data:`TOL`) and the number of
    changed predictions (tolerance 0)."""
    numbers, n_classes = _class_numbers(y)
    everything = np.arange(len(y))
    nu = np.asarray(tuple(ratios), float)
    alpha = np.ones_like(nu)
    out = []
    for kernel in kernels:
        K = kernel.gram(X, X)
        plain, _ = fit_classes(K, everything, numbers, n_classes, nu, alpha)
        shifted, _ = fit_classes(K + shift, everything, numbers, n_classes, nu, alpha)
        sigma = f" sigma={kernel.sigma:g}" if kernel.sigma else ""
        where = f"{label} {kernel.name}{kernel.degree or ''}{sigma}"
        d_plain = np.stack([p.distance(K) for p in plain])
        d_shift = np.stack([p.distance(K + shift) for p in shifted])
        same_inf = np.array_equal(np.isinf(d_plain), np.isinf(d_shift))
        finite = np.isfinite(d_plain) & np.isfinite(d_shift)
        out.append(CheckResult(f"kernel + {shift:g}: same distances (20)", where,
                               rel_dist(d_shift[finite], d_plain[finite]) if same_inf else np.inf))
        changed = int((predict_rows(plain, K) != predict_rows(shifted, K + shift)).sum())
        out.append(CheckResult(f"kernel + {shift:g}: same predictions", where, float(changed), tolerance=0.0))
    return out


def check_inhomogeneous_linear_protocols(X: np.ndarray, y: np.ndarray, label: str = "", split: int = 0,
                                         folds: int = 5) -> list[CheckResult]:
    """Errata 10 in Table 3: on split ``split`` of the experiments (every alpha solved, no shortcut), the
    counts of correct predictions of "inhom. linear" for every gamma equal those of "linear" exactly, on the
    training and test points (the paper's protocol) and on the held-out folds (the CV protocol). Residual: the
    number of grid counts that differ (tolerance 0)."""
    numbers, _ = _class_numbers(y)
    protocol = Protocol(cv_folds=folds)
    train, test = split_indices(numbers, split, protocol)
    held = cv_folds(numbers, train, folds, cv_seed(protocol.seed, split))
    linear = grid_counts(X, numbers, train, test, Kernel("linear"), ALPHAS, RATIOS, folds=held)
    paper = cv = 0
    for gamma in KERNEL_PARAMS:
        g = grid_counts(X, numbers, train, test, Kernel("inhom-poly", degree=1, gamma=gamma), ALPHAS, RATIOS,
                        folds=held)
        paper += int((g.train != linear.train).sum() + (g.test != linear.test).sum())
        cv += int((np.asarray(g.cv) != np.asarray(linear.cv)).sum())
    where = f"{label} split {split}, {len(ALPHAS)}x{len(RATIOS)} grid x {len(KERNEL_PARAMS)} gammas"
    return [CheckResult("inhom. linear column = linear, paper's protocol", where, float(paper), tolerance=0.0),
            CheckResult(f"inhom. linear column = linear, {folds}-fold CV", where, float(cv), tolerance=0.0)]


def run_protocol_checks(X: np.ndarray, y: np.ndarray, label: str = "",
                        progress: Callable[[str], None] | None = None) -> list[CheckResult]:
    """The ties of this module on one data set (part of ``tpm-models check``)."""
    if progress:
        progress(f"{label} kernel + constant; inhom. linear = linear in the experiments' protocols")
    return check_kernel_shift(X, y, label) + check_inhomogeneous_linear_protocols(X, y, label)
