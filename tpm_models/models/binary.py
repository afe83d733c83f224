"""Binary TPMSVM, Sections 2.2 and 2.3: builders (2)-(5), (10)-(13); (6)-(8), (14).

Data in, model out: ``X`` has one point per row, ``y`` holds +1 / -1
(:func:`one_vs_rest` makes class ``k`` positive and the rest negative). Points
are numbered ``i = 1..m`` by row; :math:`\\mathcal X_+` and :math:`\\mathcal X_-` are
the Pyomo sets ``X_plus`` and ``X_minus``.

==========================  ===========================  ==================================
paper                        Pyomo component              note
==========================  ===========================  ==================================
:math:`w_\\pm`                ``w[j]``, j = 1..n           (10)/(11): j = 1..dim of phi
:math:`\\theta_\\pm`           ``theta``
:math:`\\xi_\\pm`              ``xi[i]``, i in own set       bound ``xi >= 0``
:math:`x^i`, :math:`\\varphi(x^i)`  coefficients of the rows      no ``Param`` (``shapes.linear_row``)
:math:`\\nu_\\pm, \\alpha_\\pm`  ``nu``, ``alpha``             mutable parameters
:math:`\\lambda_\\pm`          ``lam[i]``                   bounds ``0 <= lam <= alpha/m``
:math:`k(x^i, x^k)`          objective coefficients       ``matrices.dual_matrices``
row 1 of the constraints    ``margin[i]``
:math:`e^\\top\\lambda = \\nu`   ``sum_lam``
==========================  ===========================  ==================================
"""

from __future__ import annotations

import numpy as np
import pyomo.core as pyo

from tpm_models.kernels import Kernel
from tpm_models.models import shapes
from tpm_models.models.recovery import FREE_TOL, Hyperplane, recover
from tpm_models.models.registry import register_model
from tpm_models.models.shapes import dual_constant, dual_matrices, gram_blocks
from tpm_models.qp import QPMatrices
from tpm_models.validation import check_binary_labels, check_features, check_nu_alpha


def binary_sets(X: np.ndarray, y: np.ndarray, nu: float, alpha: float) -> tuple:
    X = check_features(X)
    y = check_binary_labels(X, y)
    nu, alpha = check_nu_alpha(nu, alpha)
    plus = (np.flatnonzero(y == 1) + 1).tolist()  # points numbered 1..m, as Python ints
    minus = (np.flatnonzero(y == -1) + 1).tolist()
    return (
        X,
        ("X_plus", plus, "positive points (y_i = +1)"),
        ("X_minus", minus, "negative points (y_i = -1)"),
        nu,
        alpha,
    )


@register_model(2, family="binary", model_class="QP", summary="linear TPMSVM, H+", group="paper")
@shapes.paused_gc
def build_primal_2(X: np.ndarray, y: np.ndarray, nu: float, alpha: float) -> pyo.ConcreteModel:
    """(2) Linear TPMSVM, positive hyperplane.

    .. math::
        \\min_{w_+,\\theta_+,\\xi_+}\\ \\tfrac12\\|w_+\\|_2^2
        + \\frac{\\nu_+}{m_-} e_-^\\top(X_-^\\top w_+ + e_-\\theta_+)
        + \\frac{\\alpha_+}{m_+} e_+^\\top \\xi_+
        \\quad\\text{s.t.}\\quad X_+^\\top w_+ + e_+\\theta_+ \\ge -\\xi_+,\\ \\ \\xi_+ \\ge 0
    """
    X, plus, minus, nu, alpha = binary_sets(X, y, nu, alpha)
    m = shapes.skeleton("(2) linear TPMSVM primal, H+", X, plus, minus, nu, alpha, data_name=None)
    shapes.primal_plus(m, "X_plus", "X_minus", X)
    return m


@register_model(3, family="binary", model_class="QP", summary="linear TPMSVM, H-", group="paper")
@shapes.paused_gc
def build_primal_3(X: np.ndarray, y: np.ndarray, nu: float, alpha: float) -> pyo.ConcreteModel:
    """(3) Linear TPMSVM, negative hyperplane.

    .. math::
        \\min_{w_-,\\theta_-,\\xi_-}\\ \\tfrac12\\|w_-\\|_2^2
        - \\frac{\\nu_-}{m_+} e_+^\\top(X_+^\\top w_- + e_+\\theta_-)
        + \\frac{\\alpha_-}{m_-} e_-^\\top \\xi_-
        \\quad\\text{s.t.}\\quad X_-^\\top w_- + e_-\\theta_- \\le \\xi_-,\\ \\ \\xi_- \\ge 0
    """
    X, plus, minus, nu, alpha = binary_sets(X, y, nu, alpha)
    m = shapes.skeleton("(3) linear TPMSVM primal, H-", X, minus, plus, nu, alpha, data_name=None)
    shapes.primal_minus(m, "X_minus", "X_plus", X)
    return m


@register_model(10, family="binary", model_class="QP", kernel="feature map", summary="TPMSVM in feature space, H+",
                group="paper")
@shapes.paused_gc
def build_primal_10(
    X: np.ndarray, y: np.ndarray, nu: float, alpha: float, *, kernel: Kernel
) -> pyo.ConcreteModel:
    """(10) Nonlinear TPMSVM, positive surface, with an explicit finite feature map.

    .. math::
        \\min\\ \\tfrac12\\langle w_+,w_+\\rangle
        + \\frac{\\nu_+}{m_-}\\sum_{j\\in\\mathcal X_-}\\big(\\langle w_+,\\varphi(x^j)\\rangle + \\theta_+\\big)
        + \\frac{\\alpha_+}{m_+}e_+^\\top\\xi_+
        \\quad\\text{s.t.}\\quad \\langle w_+,\\varphi(x^i)\\rangle + \\theta_+ \\ge -\\xi_{+,i}\\
        (i\\in\\mathcal X_+),\\ \\xi_+\\ge0

    :math:`\\varphi` is ``kernel.feature_map`` (linear and polynomial kernels); the paper's
    :math:`b_+` is read as :math:`\\theta_+` (errata 3).
    """
    X, plus, minus, nu, alpha = binary_sets(X, y, nu, alpha)
    phi = kernel.feature_map(X)
    m = shapes.skeleton(f"(10) TPMSVM primal in feature space of {kernel}, H+", phi, plus, minus, nu, alpha, None)
    shapes.primal_plus(m, "X_plus", "X_minus", phi)
    return m


@register_model(11, family="binary", model_class="QP", kernel="feature map", summary="TPMSVM in feature space, H-",
                group="paper")
@shapes.paused_gc
def build_primal_11(
    X: np.ndarray, y: np.ndarray, nu: float, alpha: float, *, kernel: Kernel
) -> pyo.ConcreteModel:
    """(11) Nonlinear TPMSVM, negative surface, with an explicit finite feature map.

    .. math::
        \\min\\ \\tfrac12\\langle w_-,w_-\\rangle
        - \\frac{\\nu_-}{m_+}\\sum_{i\\in\\mathcal X_+}\\big(\\langle w_-,\\varphi(x^i)\\rangle + \\theta_-\\big)
        + \\frac{\\alpha_-}{m_-}e_-^\\top\\xi_-
        \\quad\\text{s.t.}\\quad \\langle w_-,\\varphi(x^j)\\rangle + \\theta_- \\le \\xi_{-,j}\\
        (j\\in\\mathcal X_-),\\ \\xi_-\\ge0

    The paper prints :math:`+\\frac{\\nu_-}{m_+}`; (3), (13) and Peng (2011) have the minus,
    which is right (errata 2). :math:`b_-` is read as :math:`\\theta_-` (errata 3).
    """
    X, plus, minus, nu, alpha = binary_sets(X, y, nu, alpha)
    phi = kernel.feature_map(X)
    m = shapes.skeleton(f"(11) TPMSVM primal in feature space of {kernel}, H-", phi, minus, plus, nu, alpha, None)
    shapes.primal_minus(m, "X_minus", "X_plus", phi)
    return m


def _dual_blocks(X: np.ndarray, y: np.ndarray, nu: float, alpha: float, kernel: Kernel, sign: int) -> tuple:
    """Sets and Gram blocks of (4)/(12) (``sign = +1``: own = :math:`X_+`) or (5)/(13) (``-1``: own = :math:`X_-`)."""
    X, plus, minus, nu, alpha = binary_sets(X, y, nu, alpha)
    own, other = (plus, minus) if sign == 1 else (minus, plus)
    return *gram_blocks(kernel, X[np.asarray(own[1]) - 1], X[np.asarray(other[1]) - 1]), own, other, nu, alpha


def _dual_plus(title: str, X: np.ndarray, y: np.ndarray, nu: float, alpha: float, kernel: Kernel) -> pyo.ConcreteModel:
    return shapes.dual(title, *_dual_blocks(X, y, nu, alpha, kernel, 1))


def _dual_minus(title: str, X: np.ndarray, y: np.ndarray, nu: float, alpha: float, kernel: Kernel) -> pyo.ConcreteModel:
    return shapes.dual(title, *_dual_blocks(X, y, nu, alpha, kernel, -1))


def dual_qp(X: np.ndarray, y: np.ndarray, nu: float, alpha: float, kernel: Kernel, sign: int) -> QPMatrices:
    """The matrices of (4)/(12) (``sign = +1``) or (5)/(13) (``sign = -1``; (4)/(5) with the linear kernel),
    without a Pyomo model: :func:`tpm_models.models.shapes.dual_matrices` of the Gram blocks the builders write,
    so ``qp_matrices(build_dual_4(...))`` equals ``dual_qp(..., Kernel("linear"), 1)``."""
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 (H+: (4)/(12)) or -1 (H-: (5)/(13)), got {sign!r}")
    K_own, K_other_own, _, _, nu, alpha = _dual_blocks(X, y, nu, alpha, kernel, sign)
    return dual_matrices(K_own, K_other_own, nu, alpha)


def constant_of_negatives(X: np.ndarray, y: np.ndarray, nu: float, alpha: float, kernel: Kernel | None = None) -> float:
    """The constant (4) and (12) omit (errata 1): ``dual_constant(X_-, nu)``, so opt(2) = opt(4) + it."""
    return dual_constant(np.asarray(X, float)[np.asarray(y) == -1], nu, kernel)


def constant_of_positives(X: np.ndarray, y: np.ndarray, nu: float, alpha: float, kernel: Kernel | None = None) -> float:
    """The constant (5) and (13) omit (errata 1): ``dual_constant(X_+, nu)``, so opt(3) = opt(5) + it."""
    return dual_constant(np.asarray(X, float)[np.asarray(y) == 1], nu, kernel)


@register_model(4, family="binary", model_class="QP", role="dual", summary="dual of (2)", primal=2,
                omitted_constant=constant_of_negatives, group="paper")
@shapes.paused_gc
def build_dual_4(X: np.ndarray, y: np.ndarray, nu: float, alpha: float) -> pyo.ConcreteModel:
    """(4) Dual of (2).

    .. math::
        \\max_{\\lambda_+}\\ -\\tfrac12\\lambda_+^\\top X_+^\\top X_+\\lambda_+
        + \\frac{\\nu_+}{m_-} e_-^\\top X_-^\\top X_+ \\lambda_+
        \\quad\\text{s.t.}\\quad e_+^\\top\\lambda_+ = \\nu_+,\\ \\ 0 \\le \\lambda_+ \\le \\frac{\\alpha_+}{m_+}

    As printed, without the constant :math:`-\\tfrac12(\\nu_+/m_-)^2 e_-^\\top X_-^\\top X_- e_-`
    (errata 1): opt(2) = opt(4) + :func:`tpm_models.models.shapes.dual_constant`.
    """
    return _dual_plus("(4) linear TPMSVM dual of (2)", X, y, nu, alpha, Kernel("linear"))


@register_model(5, family="binary", model_class="QP", role="dual", summary="dual of (3)", primal=3,
                omitted_constant=constant_of_positives, group="paper")
@shapes.paused_gc
def build_dual_5(X: np.ndarray, y: np.ndarray, nu: float, alpha: float) -> pyo.ConcreteModel:
    """(5) Dual of (3).

    .. math::
        \\max_{\\lambda_-}\\ -\\tfrac12\\lambda_-^\\top X_-^\\top X_-\\lambda_-
        + \\frac{\\nu_-}{m_+} e_+^\\top X_+^\\top X_- \\lambda_-
        \\quad\\text{s.t.}\\quad e_-^\\top\\lambda_- = \\nu_-,\\ \\ 0 \\le \\lambda_- \\le \\frac{\\alpha_-}{m_-}

    As printed, without the constant :math:`-\\tfrac12(\\nu_-/m_+)^2 e_+^\\top X_+^\\top X_+ e_+`
    (errata 1).
    """
    return _dual_minus("(5) linear TPMSVM dual of (3)", X, y, nu, alpha, Kernel("linear"))


@register_model(12, family="binary", model_class="QP", kernel="gram", role="dual", summary="kernel dual of (10)",
                primal=10, omitted_constant=constant_of_negatives, group="paper")
@shapes.paused_gc
def build_dual_12(
    X: np.ndarray, y: np.ndarray, nu: float, alpha: float, *, kernel: Kernel
) -> pyo.ConcreteModel:
    """(12) Kernel dual of (10): (4) with :math:`X_+^\\top X_+ \\to K(X_+,X_+)`, :math:`X_-^\\top X_+ \\to K(X_-,X_+)`.

    .. math::
        \\max_{\\lambda_+}\\ -\\tfrac12\\lambda_+^\\top K(X_+,X_+)\\lambda_+
        + \\frac{\\nu_+}{m_-} e_-^\\top K(X_-,X_+) \\lambda_+
        \\quad\\text{s.t.}\\quad e_+^\\top\\lambda_+ = \\nu_+,\\ \\ 0 \\le \\lambda_+ \\le \\frac{\\alpha_+}{m_+}
    """
    return _dual_plus(f"(12) TPMSVM kernel dual, {kernel}, H+", X, y, nu, alpha, kernel)


@register_model(13, family="binary", model_class="QP", kernel="gram", role="dual", summary="kernel dual of (11)",
                primal=11, omitted_constant=constant_of_positives, group="paper")
@shapes.paused_gc
def build_dual_13(
    X: np.ndarray, y: np.ndarray, nu: float, alpha: float, *, kernel: Kernel
) -> pyo.ConcreteModel:
    """(13) Kernel dual of (11): (5) with :math:`X_-^\\top X_- \\to K(X_-,X_-)`, :math:`X_+^\\top X_- \\to K(X_+,X_-)`.

    .. math::
        \\max_{\\lambda_-}\\ -\\tfrac12\\lambda_-^\\top K(X_-,X_-)\\lambda_-
        + \\frac{\\nu_-}{m_+} e_+^\\top K(X_+,X_-) \\lambda_-
        \\quad\\text{s.t.}\\quad e_-^\\top\\lambda_- = \\nu_-,\\ \\ 0 \\le \\lambda_- \\le \\frac{\\alpha_-}{m_-}
    """
    return _dual_minus(f"(13) TPMSVM kernel dual, {kernel}, H-", X, y, nu, alpha, kernel)


def recover_plus(
    X: np.ndarray, y: np.ndarray, lam: np.ndarray, nu: float, alpha: float,
    kernel: Kernel | None = None, free_tol: float = FREE_TOL,
) -> Hyperplane:
    """(6) :math:`w_+ = X_+\\lambda_+ - \\frac{\\nu_+}{m_-}X_-e_-`,
    :math:`\\theta_+ = -\\frac{1}{|\\mathcal N_+|}\\sum_{i\\in\\mathcal N_+}{x^i}^\\top w_+` (kernel form for (12))."""
    X = check_features(X)
    y = check_binary_labels(X, y)
    nu, alpha = check_nu_alpha(nu, alpha)
    return recover(X[y == 1], X[y == -1], lam, nu, alpha, kernel, sign=1, free_tol=free_tol)


def recover_minus(
    X: np.ndarray, y: np.ndarray, lam: np.ndarray, nu: float, alpha: float,
    kernel: Kernel | None = None, free_tol: float = FREE_TOL,
) -> Hyperplane:
    """(7) :math:`w_- = \\frac{\\nu_-}{m_+}X_+e_+ - X_-\\lambda_-`,
    :math:`\\theta_- = -\\frac{1}{|\\mathcal N_-|}\\sum_{i\\in\\mathcal N_-}{x^i}^\\top w_-` (kernel form for (13))."""
    X = check_features(X)
    y = check_binary_labels(X, y)
    nu, alpha = check_nu_alpha(nu, alpha)
    return recover(X[y == -1], X[y == 1], lam, nu, alpha, kernel, sign=-1, free_tol=free_tol)


def decision_8(plus: Hyperplane, minus: Hyperplane, X: np.ndarray) -> np.ndarray:
    """(8)/(14) before the sign.

    .. math::
        \\frac{w_+^\\top x+\\theta_+}{\\|w_+\\|_2} + \\frac{w_-^\\top x+\\theta_-}{\\|w_-\\|_2}

    With a nonlinear kernel this is (14): inner products become kernel expansions
    and norms :math:`\\sqrt{\\langle w_\\pm,w_\\pm\\rangle}`.
    """
    return plus.distance(X) + minus.distance(X)


def predict_8(plus: Hyperplane, minus: Hyperplane, X: np.ndarray) -> np.ndarray:
    """(8)/(14): :math:`f(x) = \\operatorname{sign}(\\ldots)` as +1 / -1 (a tie, value 0, gives +1)."""
    return np.where(decision_8(plus, minus, X) >= 0.0, 1, -1)
