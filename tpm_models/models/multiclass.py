"""One-versus-all TPMSVM, Section 3: builders (15), (16), (19); (17), (18), (20).

``X`` has one point per row and ``y`` any labels; class ``c`` plays
:math:`\\mathcal X_c` (Pyomo set ``X_c``) and every other point
:math:`\\mathcal X_{-c}` (``X_minus_c``). Points are numbered ``i = 1..m`` by row.
Components: ``w[j]``, ``theta``, ``xi[i]`` (bound ``>= 0``), ``lam[i]``
(bounds ``[0, alpha/m_c]``), parameters ``nu``, ``alpha``; constraints ``margin[i]``
(row 1 of (15)) and ``sum_lam`` (:math:`e_c^\\top\\lambda_c = \\nu_c`). The data :math:`x_{ij}` and the
Gram entries :math:`k(x^i, x^k)` are the rows' and the objective's coefficients (no per-entry ``Param``:
``tpm_models.models.shapes.linear_row``; the duals' matrices are :func:`tpm_models.models.shapes.dual_matrices`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyomo.core as pyo

from tpm_models.kernels import Kernel
from tpm_models.models import shapes
from tpm_models.models.recovery import FREE_TOL, Hyperplane, recover
from tpm_models.models.registry import register_model
from tpm_models.models.shapes import dual_constant, dual_matrices, gram_blocks
from tpm_models.qp import QPMatrices
from tpm_models.validation import check_class, check_features, check_labels, check_nu_alpha


def class_sets(X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float) -> tuple:
    X = check_features(X)
    y = check_labels(X, y)
    check_class(y, c)
    nu, alpha = check_nu_alpha(nu, alpha)
    own = (np.flatnonzero(y == c) + 1).tolist()  # points numbered 1..m, as Python ints
    other = (np.flatnonzero(y != c) + 1).tolist()
    return (
        X,
        ("X_c", own, f"points of class c = {c}"),
        ("X_minus_c", other, f"points not in class c = {c}"),
        nu,
        alpha,
    )


@register_model(15, family="multiclass", model_class="QP", summary="linear one-vs-all TPMSVM", group="paper")
@shapes.paused_gc
def build_primal_15(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float
) -> pyo.ConcreteModel:
    """(15) Linear one-versus-all TPMSVM for class ``c``.

    .. math::
        \\min_{w_c,\\theta_c,\\xi_c}\\ \\tfrac12\\|w_c\\|_2^2
        + \\frac{\\nu_c}{m_{-c}}e_{-c}^\\top(X_{-c}^\\top w_c + e_{-c}\\theta_c)
        + \\frac{\\alpha_c}{m_c}e_c^\\top\\xi_c
        \\quad\\text{s.t.}\\quad X_c^\\top w_c + e_c\\theta_c \\ge -\\xi_c,\\ \\ \\xi_c\\ge0

    The :math:`\\nu`-term is written from :math:`X_{-c}e_{-c}`, the sum of the points of
    :math:`\\mathcal X_{-c}` (:math:`n+1` terms, not :math:`m_{-c}(n+1)`), the same term for every
    :math:`w_c, \\theta_c`:

    .. math::
        \\frac{\\nu_c}{m_{-c}}e_{-c}^\\top(X_{-c}^\\top w_c + e_{-c}\\theta_c)
        = \\frac{\\nu_c}{m_{-c}}(X_{-c}e_{-c})^\\top w_c + \\nu_c\\theta_c

    (here :math:`X_{-c}` has the points as columns, as in the paper); each row ``margin[i]`` is one
    ``LinearExpression`` of the data row (no ``Param`` of the data: ``tpm_models.models.shapes.linear_row``).
    """
    X, own, other, nu, alpha = class_sets(X, y, c, nu, alpha)
    title = f"(15) linear multiclass TPMSVM primal, class {c}"
    m = shapes.skeleton(title, X, own, other, nu, alpha, data_name=None)
    shapes.primal_plus(m, "X_c", "X_minus_c", X)
    return m


def constant_of_others(X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float,
                       kernel: Kernel | None = None) -> float:
    """The constant (16) and (19) omit (errata 1): ``dual_constant(X_{-c}, nu)``, so opt(15) = opt(16) + it."""
    return dual_constant(np.asarray(X, float)[np.asarray(y) != c], nu, kernel)


@register_model(19, family="multiclass", model_class="QP", kernel="gram", role="dual",
                summary="kernel dual of the one-vs-all TPMSVM", omitted_constant=constant_of_others, group="paper")
@shapes.paused_gc
def build_dual_19(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *, kernel: Kernel
) -> pyo.ConcreteModel:
    """(19) Kernel dual of the one-versus-all TPMSVM for class ``c``.

    .. math::
        \\max_{\\lambda_c}\\ -\\tfrac12\\lambda_c^\\top K(X_c,X_c)\\lambda_c
        + \\frac{\\nu_c}{m_{-c}}e_{-c}^\\top K(X_{-c},X_c)\\lambda_c
        \\quad\\text{s.t.}\\quad e_c^\\top\\lambda_c = \\nu_c,\\ \\ 0\\le\\lambda_c\\le\\frac{\\alpha_c}{m_c}

    As printed, without the constant
    :math:`-\\tfrac12(\\nu_c/m_{-c})^2 e_{-c}^\\top K(X_{-c},X_{-c})e_{-c}` (errata 1).
    """
    X, own, other, nu, alpha = class_sets(X, y, c, nu, alpha)
    title = f"(19) multiclass TPMSVM kernel dual, {kernel}, class {c}"
    return shapes.dual(title, *_gram_blocks(X, own, other, kernel), own, other, nu, alpha)


def _gram_blocks(X: np.ndarray, own: tuple, other: tuple, kernel: Kernel) -> tuple[np.ndarray, np.ndarray]:
    return gram_blocks(kernel, X[np.asarray(own[1]) - 1], X[np.asarray(other[1]) - 1])


def dual_19_qp(X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, kernel: Kernel) -> QPMatrices:
    """The matrices of (19) (of (16) for the linear kernel) for class ``c``, without a Pyomo model:
    :func:`tpm_models.models.shapes.dual_matrices` of the Gram blocks :math:`K(X_c,X_c)`, :math:`K(X_{-c},X_c)`
    that :func:`build_dual_19` writes, so ``qp_matrices(build_dual_19(...))`` equals it."""
    X, own, other, nu, alpha = class_sets(X, y, c, nu, alpha)
    return dual_matrices(*_gram_blocks(X, own, other, kernel), nu, alpha)


@register_model(16, family="multiclass", model_class="QP", role="dual", summary="dual of (15)", primal=15,
                omitted_constant=constant_of_others, group="paper")
@shapes.paused_gc
def build_dual_16(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float
) -> pyo.ConcreteModel:
    """(16) Dual of (15): (19) with the linear kernel.

    .. math::
        \\max_{\\lambda_c}\\ -\\tfrac12\\lambda_c^\\top X_c^\\top X_c\\lambda_c
        + \\frac{\\nu_c}{m_{-c}}e_{-c}^\\top X_{-c}^\\top X_c\\lambda_c
        \\quad\\text{s.t.}\\quad e_c^\\top\\lambda_c = \\nu_c,\\ \\ 0\\le\\lambda_c\\le\\frac{\\alpha_c}{m_c}

    opt(15) = opt(16) :math:`-\\tfrac12(\\nu_c/m_{-c})^2 e_{-c}^\\top X_{-c}^\\top X_{-c}e_{-c}` (errata 1).
    """
    model = build_dual_19(X, y, c, nu, alpha, kernel=Kernel("linear"))
    model.name = f"(16) linear multiclass TPMSVM dual of (15), class {c}"
    return model


def recover_17(
    X: np.ndarray, y: np.ndarray, c: object, lam: np.ndarray, nu: float, alpha: float,
    kernel: Kernel | None = None, free_tol: float = FREE_TOL,
) -> Hyperplane:
    """(17) :math:`w_c = X_c\\lambda_c - \\frac{\\nu_c}{m_{-c}}X_{-c}e_{-c}`,
    :math:`\\theta_c = -\\frac{1}{|\\mathcal N_c|}\\sum_{i\\in\\mathcal N_c}{x^i}^\\top w_c`;
    with a kernel, the expressions of (20). The rule when :math:`\\mathcal N_c=\\emptyset`
    is in :mod:`tpm_models.models.recovery`."""
    X = check_features(X)
    y = check_labels(X, y)
    check_class(y, c)
    nu, alpha = check_nu_alpha(nu, alpha)
    return recover(X[y == c], X[y != c], lam, nu, alpha, kernel, sign=1, free_tol=free_tol)


def decision_18(planes: Sequence[Hyperplane], X: np.ndarray) -> np.ndarray:
    """Distances :math:`|w_c^\\top x+\\theta_c|/\\|w_c\\|_2` of (18), or
    :math:`|\\langle w_c,\\varphi(x)\\rangle+\\theta_c|/\\sqrt{\\langle w_c,w_c\\rangle}` of (20);
    shape ``(len(X), C)``."""
    return np.column_stack([np.abs(p.distance(X)) for p in planes])


def predict_18(planes: Sequence[Hyperplane], X: np.ndarray) -> np.ndarray:
    """(18)/(20): the position ``c`` of the nearest hyperplane (ties: the lowest ``c``)."""
    return np.argmin(decision_18(planes, X), axis=1)
