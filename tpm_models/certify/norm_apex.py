"""A Euclidean norm at zero, for the certificate (:mod:`tpm_models.certify.certificate`).

(23) at :math:`p = 2` holds :math:`\\|w\\|_2` as the named expression ``norm_w = sqrt(sum_j w[j]**2)``: in the
objective, :math:`\\frac{\\nu}{m_{-c}}\\big(\\sum_{i\\in\\mathcal X_{-c}}\\varepsilon_i\\big)\\|w\\|_2`, and in
every margin row, :math:`-\\varepsilon_i\\|w\\|_2`. When the optimum is :math:`w = 0` (a large
:math:`\\varepsilon`; seeds 1 and 2 of the scale benchmark's data at :math:`10^5` points) the square root has no
derivative there, and the certificate stopped at "optimal, not certified: a row is not differentiable at the point".

Such a node :math:`h(x) = \\sqrt{\\sum_k a_k x_k^2}` (:math:`a_k > 0`, distinct variables) is convex and positively
homogeneous, and its subdifferential at :math:`x_V = 0` is the ellipsoid

.. math::
    \\partial h(0) = \\{g : \\textstyle\\sum_k g_k^2 / a_k \\le 1\\}.

The rows and the objective that hold it are read as linear in it
(:func:`~tpm_models.certify.gradients.objective_terms`):
:math:`f = f_s + c_f h`, :math:`g_i = g_{s,i} + C_i h`. On a model classified convex, with duals of the right
signs, the Lagrangian holds :math:`K h` with :math:`K = \\sigma(c_f - \\sum_i y_i C_i) \\ge 0`, and stationarity
asks :math:`0 \\in r + K\\,\\partial h(0)` on the node's columns (:math:`r` the residual of the smooth parts). The
certificate takes :math:`g = -r_V / K`, scaled back onto the ellipsoid when it is outside (:meth:`NormApex.multiplier`),
and measures what is left as any other residual: a point that is not optimal leaves a residual no subgradient
cancels. A point near zero but not at it (the node read as a kink to the backend's accuracy) is optimal up to
:math:`K\\,(h(x) - g^\\top x_V) \\ge 0`, counted in the duality gap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyomo.core.base.var import VarData
from pyomo.core.expr import numeric_expr as ne
from pyomo.repn import generate_standard_repn


@dataclass(frozen=True)
class NormApex:
    """A node :math:`h(x) = \\sqrt{\\sum_k a_k x_k^2}` where the gradient reader found it without a derivative
    (:math:`x_V = 0`, or near it to the backend's accuracy): its columns ``cols``, weights ``a`` and value ``value``
    at the point (module docstring)."""

    node: object
    cols: np.ndarray
    a: np.ndarray
    value: float

    def multiplier(self, residual: np.ndarray, K: float, x: np.ndarray) -> tuple[np.ndarray, float]:
        """The term :math:`K g` (:math:`g \\in \\partial h(0)`) that cancels ``residual`` on :attr:`cols` as far as
        it can, and its gap :math:`K (h(x) - g^\\top x_V)`; nothing when :math:`K \\le 0` (a node the Lagrangian
        does not hold convexly: the residual stays)."""
        if not K > 0:
            return np.zeros(len(self.cols)), 0.0
        g = -residual[self.cols] / K
        size = math.sqrt(float(np.sum(g * g / self.a)))
        if size > 1.0:
            g = g / size
        return K * g, K * max(self.value - float(g @ x[self.cols]), 0.0)


@dataclass(frozen=True)
class AbsApex:
    r"""A node :math:`h(x) = |a^\top x_V + b|` at its kink (:math:`|a^\top x_V + b|` within the backend's accuracy
    of 0): its columns ``cols``, coefficients ``a``, value ``value`` and inner value ``inner`` at the point. Its
    subdifferential there is :math:`\{s\,a : |s| \le 1\}`, read as :class:`NormApex` reads the ellipsoid."""

    node: object
    cols: np.ndarray
    a: np.ndarray
    value: float
    inner: float

    def multiplier(self, residual: np.ndarray, K: float, x: np.ndarray) -> tuple[np.ndarray, float]:
        r"""The term :math:`K s a` (:math:`|s| \le 1`) that cancels ``residual`` on :attr:`cols` as far as it can
        (least squares, then clipped), and its gap :math:`K (|u| - s u)`, :math:`u` the inner value; nothing when
        :math:`K \le 0`."""
        if not K > 0 or not self.a.any():
            return np.zeros(len(self.cols)), 0.0
        s = -float(self.a @ residual[self.cols]) / (K * float(self.a @ self.a))
        s = min(1.0, max(-1.0, s))
        return K * s * self.a, K * max(self.value - s * self.inner, 0.0)


def abs_apex(node: Any, col: dict, x: np.ndarray) -> AbsApex | None:
    """``node`` (a named expression is read through) as :math:`|a^\top x + b|` with ``a`` over the model's
    columns, else ``None``."""
    expr = node
    while getattr(expr, "is_named_expression_type", lambda: False)():
        expr = expr.expr
    if not isinstance(expr, ne.AbsExpression):
        return None
    repn = generate_standard_repn(expr.args[0], quadratic=False)
    if repn.nonlinear_expr is not None or not repn.linear_vars or any(id(v) not in col for v in repn.linear_vars):
        return None
    weights: dict[int, float] = {}
    for v, c in zip(repn.linear_vars, repn.linear_coefs):
        weights[col[id(v)]] = weights.get(col[id(v)], 0.0) + float(c)
    cols = np.fromiter(weights, dtype=np.int64, count=len(weights))
    a = np.fromiter(weights.values(), dtype=float, count=len(weights))
    inner = float(a @ x[cols]) + float(repn.constant)
    return AbsApex(node, cols, a, abs(inner), inner)


def _squares(expr: Any, col: dict, weight: float, out: dict) -> bool:
    """Add ``weight * expr`` to ``out`` (column -> :math:`a_k`) when ``expr`` is a sum of ``c * v**2`` terms with
    ``c > 0`` (``v * v`` too); ``False`` otherwise."""
    if isinstance(expr, ne.SumExpression):  # LinearExpression too (a subclass)
        return all(_squares(arg, col, weight, out) for arg in expr.args)
    if expr.__class__ in (ne.ProductExpression, ne.MonomialTermExpression) and isinstance(expr.args[0], (int, float)):
        c = float(expr.args[0])
        return c > 0 and _squares(expr.args[1], col, weight * c, out)
    if expr.__class__ is ne.PowExpression:
        base, exponent = expr.args
        if not isinstance(exponent, (int, float)) or exponent != 2:
            return False
    elif expr.__class__ is ne.ProductExpression and expr.args[0] is expr.args[1]:
        base = expr.args[0]
    else:
        return False
    if not isinstance(base, VarData) or base.fixed or id(base) not in col:
        return False
    k = col[id(base)]
    out[k] = out.get(k, 0.0) + weight
    return True


def norm_apex(node: Any, col: dict, x: np.ndarray) -> NormApex | AbsApex | None:
    """``node`` (a named expression is read through) as :math:`\\sqrt{\\sum_k a_k x_k^2}` (``sqrt(...)`` or
    ``(...)**0.5``, :math:`a_k > 0`), or as :math:`|a^\\top x + b|` (:func:`abs_apex`), else ``None``. Asked only
    of a node the gradient reader found at a kink; how far the point is from :math:`x_V = 0` is counted in the gap
    (:meth:`NormApex.multiplier`)."""
    expr = node
    while getattr(expr, "is_named_expression_type", lambda: False)():
        expr = expr.expr
    if isinstance(expr, ne.UnaryFunctionExpression) and expr.getname() == "sqrt":
        inner = expr.args[0]
    elif expr.__class__ is ne.PowExpression and isinstance(expr.args[1], (int, float)) and expr.args[1] == 0.5:
        inner = expr.args[0]
    else:
        return abs_apex(node, col, x)
    weights: dict[int, float] = {}
    if not _squares(inner, col, 1.0, weights) or not weights:
        return None
    cols = np.fromiter(weights, dtype=np.int64, count=len(weights))
    a = np.fromiter(weights.values(), dtype=float, count=len(weights))
    return NormApex(node, cols, a, math.sqrt(float(np.sum(a * x[cols] ** 2))))
