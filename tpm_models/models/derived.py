"""The paper's robust models derived, not written: :func:`~tpm_models.models.counterpart.robust_counterpart` of
the nominal (15), (2), (3) under the set (21), registered beside the hand-written ones.

=======  ==============================================================  ====================================
key      what                                                            hand-written twin
=======  ==============================================================  ====================================
``15R``  (15) with :func:`~tpm_models.models.semi_infinite.uncertain_22`  (23), (26); (27)/(28)/(29) at p = 1/2/inf
``2R``   (2) with :func:`uncertain_2`                                    ``docs/verify.md``'s robust (2)
``3R``   (3) with :func:`uncertain_3`                                    its mirror for the negative hyperplane
=======  ==============================================================  ====================================

Each takes ``p`` (any :math:`p\\ge1`) and ``eps`` (a scalar or one radius per point) like (23), names its nominal
model and its uncertain data (``tpm-models verify --model 15R``), and keeps the nominal variables' names.
``docs/robustify.md`` compares their rows with (23)'s and (27)-(29)'s.
"""

from __future__ import annotations

import numpy as np
import pyomo.core as pyo

from tpm_models.models import shapes
from tpm_models.models.counterpart import register_robustified
from tpm_models.models.norms import check_radii
from tpm_models.models.semi_infinite import uncertain_22
from tpm_models.models.uncertainty import NormBall, Uncertain, UncertainRow, UncertainTerm


@shapes.paused_gc
def _uncertain_binary(model: pyo.ConcreteModel, p: float, eps: float | np.ndarray, own: str, other: str,
                      sign: float) -> list[Uncertain]:
    points = sorted(set(getattr(model, own)) | set(getattr(model, other)))
    radii = check_radii(eps, len(points))
    w = [model.w[j] for j in model.J]
    weight = sign * pyo.value(model.nu) / len(getattr(model, other))
    balls = {r: NormBall(p, r) for r in set(radii.tolist())}
    out: list[Uncertain] = [UncertainRow(model.margin[i], w, balls[radii[i - 1]], f"margin[{i}]")
                            for i in getattr(model, own)]
    out += [UncertainTerm(w, balls[radii[i - 1]], weight, f"objective, point {i}") for i in getattr(model, other)]
    return out


def uncertain_2(model: pyo.ConcreteModel, p: float, eps: float | np.ndarray) -> list[Uncertain]:
    """The uncertain data of (2) under (21) on the nominal model (2): every point :math:`x^i \\to x^i+\\delta^i`,
    :math:`\\|\\delta^i\\|_p\\le\\varepsilon_i`. A row ``margin[i]`` per :math:`i\\in\\mathcal X_+`
    (:math:`(x^i+\\delta^i)^\\top w+\\theta+\\xi_i\\ge0`, coefficients :math:`w`) and an objective term per
    :math:`i\\in\\mathcal X_-` (weight :math:`\\nu/m_-`)."""
    return _uncertain_binary(model, p, eps, "X_plus", "X_minus", 1.0)


def uncertain_3(model: pyo.ConcreteModel, p: float, eps: float | np.ndarray) -> list[Uncertain]:
    """The uncertain data of (3) under (21) on the nominal model (3): a row ``margin[i]`` per
    :math:`i\\in\\mathcal X_-` (:math:`(x^i+\\delta^i)^\\top w+\\theta\\le\\xi_i`) and an objective term per
    :math:`i\\in\\mathcal X_+` with weight :math:`-\\nu/m_+` (the objective subtracts those scores)."""
    return _uncertain_binary(model, p, eps, "X_minus", "X_plus", -1.0)


build_robust_15R = register_robustified(
    "15R", nominal=15, uncertain=uncertain_22, compare=("w",), group="derived",
    summary="(15) under (21), counterpart derived by robust_counterpart: the optimum of (23)")
build_robust_2R = register_robustified(
    "2R", nominal=2, uncertain=uncertain_2, compare=("w",), group="derived",
    summary="(2) under (21), counterpart derived by robust_counterpart")
build_robust_3R = register_robustified(
    "3R", nominal=3, uncertain=uncertain_3, compare=("w",), group="derived",
    summary="(3) under (21), counterpart derived by robust_counterpart")
