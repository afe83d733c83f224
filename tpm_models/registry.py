"""Equation number -> builder, with what each model takes and its class.

>>> from tpm_models import build, load_dataset, min_max_scale
>>> d = load_dataset("iris")
>>> model = build(16, min_max_scale(d.X), d.y, c=0, nu=0.5, alpha=1.0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from tpm_models import binary, multiclass
from tpm_models.kernels import Kernel


@dataclass(frozen=True)
class ModelInfo:
    """One numbered model of the paper."""

    eq: int
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


MODELS: dict[int, ModelInfo] = {
    info.eq: info
    for info in (
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


def model_info(eq: int) -> ModelInfo:
    """The :class:`ModelInfo` of equation ``eq`` (``ValueError`` if it is not a model)."""
    try:
        if isinstance(eq, bool) or int(eq) != eq:
            raise ValueError
        return MODELS[int(eq)]
    except (KeyError, ValueError, TypeError):
        raise ValueError(
            f"({eq}) is not a model of the paper that tpm-models builds; models: {sorted(MODELS)}"
        ) from None


def build(
    eq: int,
    X: np.ndarray,
    y: np.ndarray,
    c: object,
    nu: float,
    alpha: float,
    kernel: Kernel | None = None,
) -> pyo.ConcreteModel:
    """Build model ``(eq)`` on points ``X`` (rows) with labels ``y``.

    ``c`` is the class that plays :math:`\\mathcal X_c` (multiclass) or the positive class
    (binary: :math:`\\mathcal X_+` = class ``c``, :math:`\\mathcal X_-` = the rest).
    ``kernel`` is required by the kernel models (10)-(13), (19) and refused by the others.
    """
    info = model_info(eq)
    if info.kernel == "none" and kernel is not None and kernel.name != "linear":
        raise ValueError(f"({eq}) is a linear model and takes no kernel; use (12), (13) or (19)")
    if info.kernel != "none" and kernel is None:
        raise ValueError(f"({eq}) needs a kernel (tpm_models.Kernel)")
    args: tuple = (X, binary.one_vs_rest(y, c)) if info.family == "binary" else (X, y, c)
    args += (nu, alpha)
    if info.kernel != "none":
        args += (kernel,)
    return info.builder(*args)
