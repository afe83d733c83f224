"""Perspective rows at their cone's apex, for the certificate (:mod:`tpm_models.certify.certificate`).

The library writes :math:`\\|a\\|_q \\le r` (:func:`tpm_models.models.norms.add_pnorm_epigraph`, used by (23) and
(26) at :math:`p \\notin \\{1, 2, \\infty\\}`) as the rows

.. math::
    c\\,a_j^q\\,r^{1-q} - d\\,z_j \\le 0 \\quad (c, d > 0,\\ q > 1), \\qquad \\sum_j z_j \\le r,

each the power cone :math:`K_j = \\{(a, r, z) : (\\kappa z)^\\alpha r^{1-\\alpha} \\ge |a|\\}` with
:math:`\\alpha = 1/q`, :math:`\\kappa = d/c` (for :math:`r > 0`; :math:`a \\ge 0` is :math:`a`'s own bound). When the
optimum is :math:`w = 0` ((23) at p = 3 on 10^5 points of the scale benchmark), :math:`a = r = z = 0`: the cone's
apex, where the row has no gradient (:math:`r^{1-q}` at :math:`r = 0`) and no scalar multiplier need exist. Its
normal cone there is the polar :math:`K_j^\\circ = -K_j^*`:

.. math::
    v = -(w,\\ v',\\ \\kappa u) \\ \\text{on}\\ (a, r, z), \\qquad
    (u, v', w) \\in P_\\alpha^* = \\{(u/\\alpha)^\\alpha\\,(v'/(1-\\alpha))^{1-\\alpha} \\ge |w|,\\ u, v' \\ge 0\\},

(:math:`P_\\alpha^*` the dual of the power cone :math:`x^\\alpha y^{1-\\alpha} \\ge |z|`, with :math:`(x, y, z) =
(\\kappa z, r, a)`). The rows share :math:`r`, so their multipliers are found together
(:meth:`PowerApexes.multiplier`): each row's :math:`w` and :math:`u` cancel the stationarity residual on its own
:math:`a_j` and :math:`z_j`, the least :math:`v'_j` that keeps it in :math:`P_\\alpha^*`,

.. math::
    v'_j = (1-\\alpha)\\,\\big(|w_j| / (u_j/\\alpha)^\\alpha\\big)^{1/(1-\\alpha)},

is drawn from the residual on :math:`r`, and what is left on :math:`r` (or on :math:`a_j`, :math:`z_j`) is measured
as any other residual (a positive one on a variable at its lower bound 0 is that bound's multiplier). When
:math:`\\sum_j v'_j` exceeds the residual on :math:`r`, the :math:`w_j` are scaled down until it does not, and the part
of the residual on the :math:`a_j` they leave is a stationarity error: a point at the apex that is not optimal
fails. Only rows of exactly this shape, at the apex to :data:`~tpm_models.certify.tolerances.APEX_TOL`, with their
:math:`a_j` and :math:`z_j` in no other such row, are read; any other row not differentiable at the point keeps the
certificate at "optimal, not certified".

Before polishing, :func:`tpm_models.solvers.backends.clarabel.apex_point` says where the polish would put the power
cones that read at their apex: there a perspective row has no value, so the backend does not polish such a point,
and the certificate reads the rows as above at the solver's own point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.core.expr as ex
from pyomo.core.base.var import VarData

from tpm_models.certify.tolerances import APEX_TOL


@dataclass(frozen=True)
class PowerApexRow:
    """One row :math:`c\\,a^q r^{1-q} - d\\,z \\le 0` at its apex: the columns of :math:`a`, :math:`r`, :math:`z`,
    :math:`\\alpha = 1/q` and :math:`\\kappa = d/c` (module docstring)."""

    a: int
    r: int
    z: int
    alpha: float
    kappa: float


def least_v(w: np.ndarray, u: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The least :math:`v'` with :math:`(u, v', w) \\in P_\\alpha^*`, elementwise (``inf`` where
    :math:`u = 0 \\ne w`)."""
    w = np.abs(w)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = (1 - alpha) * (w / (u / alpha) ** alpha) ** (1 / (1 - alpha))
    return np.where(w == 0, 0.0, np.where(u > 0, out, np.inf))


def _variable(node: Any, col: dict) -> int | None:
    if isinstance(node, VarData) and not node.fixed and id(node) in col:
        return col[id(node)]
    return None


def _power(node: Any, col: dict) -> tuple[int, float] | None:
    """``(column, exponent)`` of ``var ** number``."""
    if type(node) is not ex.PowExpression:
        return None
    base, exponent = node.args
    k = _variable(base, col)
    if k is None or not isinstance(exponent, (int, float)):
        return None
    return k, float(exponent)


def _product(node: Any, col: dict) -> tuple[float, int, int, float] | None:
    """``(c, a, r, q)`` of ``c * a**q * r**(1-q)`` with ``c > 0``, ``q > 1`` (``c`` a number in front, or 1)."""
    c = 1.0
    if type(node) is ex.ProductExpression and isinstance(node.args[0], (int, float)):
        c, node = float(node.args[0]), node.args[1]
    if type(node) is not ex.ProductExpression:
        return None
    first, second = (_power(arg, col) for arg in node.args)
    if first is None or second is None or c <= 0:
        return None
    (a, q), (r, one_minus_q) = first, second
    if q <= 1 or abs(q + one_minus_q - 1) > 1e-12 or a == r:
        return None
    return c, a, r, q


def power_apex_row(con: Any, x: np.ndarray, col: dict) -> PowerApexRow | None:
    """``con`` read as :math:`c\\,a^q r^{1-q} - d\\,z \\le 0` at its apex (:math:`|a|, |r|, |z| \\le`
    :data:`~tpm_models.certify.tolerances.APEX_TOL`), else ``None``."""
    if con.lb is not None or con.ub is None or float(con.ub) != 0.0:
        return None
    body = con.body
    if type(body) is not ex.SumExpression or len(body.args) != 2:
        return None
    first, second = body.args
    if type(first) is ex.MonomialTermExpression:
        first, second = second, first
    if type(second) is not ex.MonomialTermExpression:
        return None
    d, z_var = second.args
    read = _product(first, col)
    z = _variable(z_var, col)
    if read is None or z is None or not isinstance(d, (int, float)) or d >= 0:
        return None
    c, a, r, q = read
    if len({a, r, z}) != 3 or max(abs(x[a]), abs(x[r]), abs(x[z])) > APEX_TOL:
        return None
    return PowerApexRow(a, r, z, 1.0 / q, -float(d) / c)


@dataclass
class PowerApexes:
    """The rows of :func:`power_apexes`, grouped by their :math:`r`."""

    groups: dict[int, list[PowerApexRow]]

    def multiplier(self, residual: np.ndarray, x: np.ndarray, at_lower_zero: np.ndarray) -> tuple[np.ndarray, float]:
        """The rows' multipliers :math:`\\sum_j v_j` (each :math:`v_j \\in K_j^\\circ`, module docstring) that cancel
        ``residual`` (the stationarity residual :math:`\\sigma(\\nabla f - J^\\top y)`, by column) as far as they can,
        and their complementarity :math:`\\sum_j |v_j^\\top x|` (0 at the apex itself). ``at_lower_zero``: the columns
        at an active lower bound 0, where a positive residual is that bound's multiplier."""
        v = np.zeros_like(residual)
        gap = 0.0
        for r, rows in self.groups.items():
            a = np.array([row.a for row in rows])
            z = np.array([row.z for row in rows])
            kappa = np.array([row.kappa for row in rows])
            alpha = np.array([row.alpha for row in rows])
            w = residual[a].copy()
            w[at_lower_zero[a]] = np.minimum(w[at_lower_zero[a]], 0.0)  # a >= 0 takes a positive residual
            u = np.maximum(residual[z], 0.0) / kappa
            budget = float(residual[r])
            least = least_v(w, u, alpha)
            if not least.sum() <= budget:  # too little on r (or u = 0 where w != 0): scale w down until it fits
                w = np.where(np.isfinite(least), w, 0.0)
                lo, hi = 0.0, 1.0 if budget > 0 else 0.0
                for _ in range(100 if budget > 0 else 0):
                    mid = (lo + hi) / 2
                    lo, hi = (mid, hi) if least_v(mid * w, u, alpha).sum() <= budget else (lo, mid)
                w = lo * w
                least = least_v(w, u, alpha)
            spare = budget - float(least.sum())
            if spare > 0 and not at_lower_zero[r]:  # r not at a bound: the rows take all of its residual
                least[0] += spare
            v[a] -= w
            v[z] -= kappa * u
            v[r] -= float(least.sum())
            gap += float(np.abs(w * x[a] + least * x[r] + kappa * u * x[z]).sum())
        return v, gap


def power_apexes(cons: list, x: np.ndarray, col: dict) -> PowerApexes | None:
    """Every row of ``cons`` read by :func:`power_apex_row`, grouped by :math:`r`; ``None`` when one is not such a
    row, or when an :math:`a_j` or :math:`z_j` is in two of them or is another group's :math:`r`."""
    groups: dict[int, list[PowerApexRow]] = {}
    private: set[int] = set()
    for con in cons:
        row = power_apex_row(con, x, col)
        if row is None or row.a in private or row.z in private:
            return None
        private.update((row.a, row.z))
        groups.setdefault(row.r, []).append(row)
    if private & set(groups):
        return None
    return PowerApexes(groups)
