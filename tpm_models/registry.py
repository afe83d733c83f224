"""Equation number -> builder, with what each model takes and its class.

>>> from tpm_models import build, load_dataset, min_max_scale
>>> d = load_dataset("iris")
>>> model = build(16, min_max_scale(d.X), d.y, c=0, nu=0.5, alpha=1.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from tpm_models import binary, multiclass, robust, robust_duals, semi_infinite
from tpm_models.kernels import Kernel
from tpm_models.norms import check_p


@dataclass(frozen=True)
class ModelInfo:
    """One numbered model of the paper."""

    eq: int | str
    """The equation number; for the duals the paper does not print, the primal's number + ``"D"``."""
    builder: Callable[..., pyo.ConcreteModel]
    family: str
    """``"binary"`` (class ``c`` positive, the rest negative) or ``"multiclass"``."""
    model_class: str
    """``"QP"``, ``"SOCP"`` or ``"NLP"``."""
    kernel: str
    """``"none"`` (linear model), ``"feature map"`` (explicit finite map) or ``"gram"``."""
    role: str
    """``"primal"`` or ``"dual"``."""
    summary: str
    robust_p: tuple[float, ...] | None = None
    """For the robust models: the p it takes (``()`` = any p >= 1); ``None`` = not robust."""


MODELS: dict[int, ModelInfo] = {
    info.eq: info
    for info in (
        ModelInfo(22, semi_infinite.build_semi_infinite_22, "multiclass", "robust", "none", "primal",
                  "semi-infinite robust model (delta as PyROS uncertain parameters)", (1.0, 2.0, math.inf)),
        ModelInfo(23, robust.build_robust_23, "multiclass", "NLP", "none", "primal",
                  "robust counterpart (Theorem 1)", ()),
        ModelInfo(26, robust.build_robust_26, "multiclass", "NLP", "none", "primal",
                  "robust counterpart, conic epigraph of 1/2|w|^2", ()),
        ModelInfo(27, robust.build_socp_27, "multiclass", "SOCP", "none", "primal", "robust SOCP, p = 1", (1.0,)),
        ModelInfo(28, robust.build_socp_28, "multiclass", "SOCP", "none", "primal", "robust SOCP, p = 2", (2.0,)),
        ModelInfo(29, robust.build_socp_29, "multiclass", "SOCP", "none", "primal", "robust SOCP, p = inf",
                  (math.inf,)),
        ModelInfo(2, binary.build_primal_2, "binary", "QP", "none", "primal", "linear TPMSVM, H+"),
        ModelInfo(3, binary.build_primal_3, "binary", "QP", "none", "primal", "linear TPMSVM, H-"),
        ModelInfo(4, binary.build_dual_4, "binary", "QP", "none", "dual", "dual of (2)"),
        ModelInfo(5, binary.build_dual_5, "binary", "QP", "none", "dual", "dual of (3)"),
        ModelInfo(10, binary.build_primal_10, "binary", "QP", "feature map", "primal",
                  "TPMSVM in feature space, H+"),
        ModelInfo(11, binary.build_primal_11, "binary", "QP", "feature map", "primal",
                  "TPMSVM in feature space, H-"),
        ModelInfo(12, binary.build_dual_12, "binary", "QP", "gram", "dual", "kernel dual of (10)"),
        ModelInfo(13, binary.build_dual_13, "binary", "QP", "gram", "dual", "kernel dual of (11)"),
        ModelInfo(15, multiclass.build_primal_15, "multiclass", "QP", "none", "primal",
                  "linear one-vs-all TPMSVM"),
        ModelInfo(16, multiclass.build_dual_16, "multiclass", "QP", "none", "dual", "dual of (15)"),
        ModelInfo(19, multiclass.build_dual_19, "multiclass", "QP", "gram", "dual",
                  "kernel dual of the one-vs-all TPMSVM"),
    )
}


DUAL_MODELS: dict[str, ModelInfo] = {
    info.eq: info
    for info in (
        ModelInfo("23D", robust_duals.build_dual_23, "multiclass", "NLP", "none", "dual",
                  "dual of (23), any p: (16) + beta in a p-ball (QP at p = 1, inf; SOCP at p = 2); "
                  "opt(23) = opt + dual_constant", ()),
        ModelInfo("27D", robust_duals.build_dual_27, "multiclass", "SOCP", "none", "dual",
                  "conic dual of (27), p = 1; opt(27) = opt", (1.0,)),
        ModelInfo("28D", robust_duals.build_dual_28, "multiclass", "SOCP", "none", "dual",
                  "conic dual of (28), p = 2; opt(28) = opt", (2.0,)),
        ModelInfo("29D", robust_duals.build_dual_29, "multiclass", "SOCP", "none", "dual",
                  "conic dual of (29), p = inf; opt(29) = opt", (math.inf,)),
    )
}
"""The duals derived here (``tpm_models.robust_duals``, ``docs/robust_duals.md``), keyed
``"23D"``, ``"27D"``, ``"28D"``, ``"29D"`` (any case): ``build("28D", ...)``,
``tpm-models solve --model 28D``. ``MODELS`` keeps the paper's numbered models."""


def _build_robust_kernel_23(*args) -> pyo.ConcreteModel:
    """:func:`tpm_models.robust_kernel.build_robust_kernel_23`, imported when called: that module's
    classifier builds on :mod:`tpm_models.estimators`, which imports this module."""
    from tpm_models.robust_kernel import build_robust_kernel_23

    return build_robust_kernel_23(*args)


KERNEL_MODELS: dict[str, ModelInfo] = {
    "23K": ModelInfo("23K", _build_robust_kernel_23, "multiclass", "SOCP", "gram", "primal",
                     "robust kernel model: (23) with p = 2 in feature space, radii rho_i; a safe approximation", ()),
}
"""The robust counterpart of the kernel model (19) derived here (``tpm_models.robust_kernel``,
``docs/robust_kernel.md``): ``build("23K", ..., kernel=k, p=p, eps=eps)``."""


def model_info(eq: int | str) -> ModelInfo:
    """The :class:`ModelInfo` of equation ``eq`` (``ValueError`` if it is not a model): an
    equation number of the paper, or a key of :data:`DUAL_MODELS` such as ``"28D"``."""
    if isinstance(eq, str) and eq.strip().upper() in DUAL_MODELS:
        return DUAL_MODELS[eq.strip().upper()]
    if isinstance(eq, str) and eq.strip().upper() in KERNEL_MODELS:
        return KERNEL_MODELS[eq.strip().upper()]
    try:
        if isinstance(eq, bool) or int(eq) != eq:
            raise ValueError
        return MODELS[int(eq)]
    except (KeyError, ValueError, TypeError):
        raise ValueError(
            f"({eq}) is not a model of the paper that tpm-models builds; models: {sorted(MODELS)} "
            f"and the derived models {sorted(DUAL_MODELS)} {sorted(KERNEL_MODELS)}"
        ) from None


def build(
    eq: int | str,
    X: np.ndarray,
    y: np.ndarray,
    c: object,
    nu: float,
    alpha: float,
    kernel: Kernel | None = None,
    p: float | None = None,
    eps: float | np.ndarray | None = None,
) -> pyo.ConcreteModel:
    """Build model ``(eq)`` on points ``X`` (rows) with labels ``y``.

    ``c`` is the class that plays :math:`\\mathcal X_c` (multiclass) or the positive class
    (binary: :math:`\\mathcal X_+` = class ``c``, :math:`\\mathcal X_-` = the rest).
    ``kernel`` is required by the kernel models (10)-(13), (19) and refused by the others.
    ``p`` and ``eps`` (radii of (21)) are required by the robust models (22)-(29) and refused
    by the others; (27), (28), (29) take only p = 1, 2, inf. ``eq`` may also be a derived dual of
    :data:`DUAL_MODELS` (``"23D"``: any p; ``"27D"``, ``"28D"``, ``"29D"``: p = 1, 2, inf), or the robust
    kernel model ``"23K"`` of :data:`KERNEL_MODELS` (``kernel``, ``p`` and ``eps`` required).
    """
    info = model_info(eq)
    if info.robust_p is None:
        if p is not None or eps is not None:
            raise ValueError(f"({eq}) is not a robust model and takes no p or eps; robust models: 22-29")
    else:
        if eps is None:
            raise ValueError(f"({eq}) is a robust model: give eps (the radii of (21))")
        if info.robust_p:
            p = info.robust_p[0] if p is None and len(info.robust_p) == 1 else p
            if p is None or check_p(p) not in info.robust_p:
                raise ValueError(
                    f"({eq}) takes p in {[f'{q:g}' for q in info.robust_p]}, got p={p}; "
                    "(23) and (26) take any p >= 1"
                )
        elif p is None:
            raise ValueError(f"({eq}) needs p >= 1 (the norm of the uncertainty set (21))")
        if info.kernel == "gram":  # (23K): the robust kernel model
            if kernel is None:
                raise ValueError(f"({eq}) needs a kernel (tpm_models.Kernel)")
            return info.builder(X, y, c, nu, alpha, p, eps, kernel)
        if kernel is not None and kernel.name != "linear":
            raise ValueError(f"({eq}) is a linear robust model and takes no kernel")
        if info.eq in (27, 28, 29, "27D", "28D", "29D"):
            return info.builder(X, y, c, nu, alpha, eps, p)
        return info.builder(X, y, c, nu, alpha, p, eps)
    if info.kernel == "none" and kernel is not None and kernel.name != "linear":
        raise ValueError(f"({eq}) is a linear model and takes no kernel; use (12), (13) or (19)")
    if info.kernel != "none" and kernel is None:
        raise ValueError(f"({eq}) needs a kernel (tpm_models.Kernel)")
    args: tuple = (X, binary.one_vs_rest(y, c)) if info.family == "binary" else (X, y, c)
    args += (nu, alpha)
    if info.kernel != "none":
        args += (kernel,)
    return info.builder(*args)
