"""Recovering :math:`(w, \\theta)` from a dual solution: (6), (7), (17), (20).

Every recovered hyperplane is a kernel expansion over the training points,

.. math::
    \\langle w, \\varphi(x)\\rangle = \\sigma\\Big(\\lambda^\\top K(X_{own}, x)
        - \\frac{\\nu}{m_{other}}\\, e^\\top K(X_{other}, x)\\Big),

with :math:`\\sigma = +1` for (6), (17), (20) (own = :math:`X_+` or :math:`X_c`) and
:math:`\\sigma = -1` for (7) (own = :math:`X_-`, other = :math:`X_+`). With the linear
kernel this is :math:`w = \\sigma(X_{own}\\lambda - \\tfrac{\\nu}{m_{other}} X_{other} e)`.

**Choosing** :math:`\\theta` **(errata 5).** The KKT conditions of the primal give, for
each own point with score :math:`s_i = \\langle w, \\varphi(x^i)\\rangle`:

=====================================  ==============================  ==============================
multiplier                              (2), (10), (15): :math:`\\ge`    (3), (11): :math:`\\le`
=====================================  ==============================  ==============================
:math:`\\lambda_i = 0`                   :math:`\\theta \\ge -s_i`          :math:`\\theta \\le -s_i`
:math:`0 < \\lambda_i < \\alpha/m`         :math:`\\theta = -s_i`           :math:`\\theta = -s_i`
:math:`\\lambda_i = \\alpha/m`             :math:`\\theta \\le -s_i`          :math:`\\theta \\ge -s_i`
=====================================  ==============================  ==============================

so the optimal :math:`\\theta` form the interval ``theta_interval``. A multiplier is
*free* (in :math:`\\mathcal N`) when it lies more than ``free_tol * alpha/m`` inside
both bounds. Rule: if :math:`\\mathcal N \\ne \\emptyset`, :math:`\\theta` is the paper's
mean :math:`-\\frac{1}{|\\mathcal N|}\\sum_{i\\in\\mathcal N} s_i`; otherwise
:math:`\\theta` is not unique and we take the midpoint of ``theta_interval`` (its finite
end when the other end is infinite, which happens only at :math:`\\nu = \\alpha`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

from tpm_models.kernels import Kernel

FREE_TOL = 1e-6
"""Default relative tolerance for a free multiplier: ``tol < lam_i < alpha/m - tol`` with
``tol = FREE_TOL * alpha/m``. Dense QP solvers here reach ~1e-9 relative accuracy, so 1e-6
separates bound multipliers from free ones with three orders of margin."""

DEGENERATE_TOL = 1e-6
"""A hyperplane is *degenerate* (:math:`w = 0`) when
:math:`\\|w\\| \\le` ``DEGENERATE_TOL`` :math:`\\cdot\\,\\nu\\max_i\\|\\varphi(x^i)\\|` over the training
points. By (6), (7), (17) :math:`w` is :math:`\\nu` times a difference of two weighted means of
the :math:`\\varphi(x^i)`, so :math:`\\|w\\| \\le 2\\nu\\max_i\\|\\varphi(x^i)\\|`; the solvers agree on
:math:`w` to about 1e-8 on min-max scaled data (:data:`tpm_models.solvers.common.DENSE_QP_TOL`), so below
1e-6 of that bound :math:`w` cannot be told from 0. The robust :math:`w` of (26)-(29) is tested the
same way, with :math:`\\varphi(x) = x`. This happens when the classes overlap so much that the mean of the other
class lies in the reduced convex hull :math:`\\{X\\lambda : e^\\top\\lambda=\\nu,\\ 0\\le\\lambda\\le\\alpha/m\\}`
of the own class (for example labels that are noise). Shared by the estimators and the fast
path (:mod:`tpm_models.learn.fastqp`): such a hyperplane is at distance :math:`+\\infty` in (18)/(20)."""


class PlaneParts(Protocol):
    """What :class:`PlaneDistance` reads of a plane (fields or properties alike)."""

    @property
    def theta(self) -> float: ...

    @property
    def norm_w(self) -> float: ...

    def w_phi(self, X: np.ndarray) -> np.ndarray: ...

    def score(self, X: np.ndarray) -> np.ndarray: ...


class PlaneDistance:
    """:meth:`score` and :meth:`distance` of a hyperplane :math:`\\langle w,\\varphi(x)\\rangle + \\theta = 0`, for a
    class that has ``w_phi(X)`` (:math:`\\langle w,\\varphi(x)\\rangle` for each row of ``X``), ``theta`` and ``norm_w``
    (:math:`\\|w\\|`, a field or a property; :class:`PlaneParts`): :class:`Hyperplane`, the estimators' planes, the
    robust kernel model's."""

    def score(self: PlaneParts, X: np.ndarray) -> np.ndarray:
        """:math:`\\langle w,\\varphi(x)\\rangle + \\theta` for each row of ``X``."""
        return self.w_phi(X) + self.theta

    def distance(self: PlaneParts, X: np.ndarray) -> np.ndarray:
        """Signed distance :math:`(\\langle w,\\varphi(x)\\rangle + \\theta)/\\|w\\|` ((14), (18), (20));
        ``ValueError`` for a degenerate plane (:math:`w = 0`)."""
        norm = self.norm_w
        if norm == 0.0:
            raise ValueError("w = 0: the hyperplane is degenerate and has no distance")
        return self.score(X) / norm


@dataclass(frozen=True)
class Hyperplane(PlaneDistance):
    """A recovered hyperplane :math:`\\langle w,\\varphi(x)\\rangle + \\theta = 0`.

    Attributes
    ----------
    kernel : Kernel
    own, other : ndarray of shape (m_own, n), (m_other, n)
        The points of :math:`X_c` (or :math:`X_\\pm`) and of the other set, as rows.
    lam : ndarray of shape (m_own,)
        The dual solution :math:`\\lambda`.
    nu_over_m_other : float
        :math:`\\nu / m_{other}`.
    sign : int
        +1 for (6), (17), (20); -1 for (7).
    theta : float
        The chosen intercept (module docstring).
    theta_interval : tuple of float
        The optimal intercepts allowed by the KKT conditions.
    free : ndarray of int
        Positions in ``own`` of the free multipliers :math:`\\mathcal N`.
    theta_rule : str
        ``"mean over N"`` or ``"midpoint of KKT interval"`` (or ``"finite end of KKT interval"``).
    w_w_value : float or None
        :math:`\\langle w,w\\rangle` when the fit computed it from the Gram blocks it had
        (:func:`expansion_w_w`); None: :attr:`w_w` computes it, once.
    """

    kernel: Kernel
    own: np.ndarray
    other: np.ndarray
    lam: np.ndarray
    nu_over_m_other: float
    sign: int
    theta: float
    theta_interval: tuple[float, float]
    free: np.ndarray
    theta_rule: str
    w_w_value: float | None = field(default=None, compare=False, repr=False)

    @property
    def coef(self) -> np.ndarray:
        """Expansion coefficients over ``vstack([own, other])``."""
        other = np.full(len(self.other), -self.nu_over_m_other)
        return self.sign * np.concatenate([self.lam, other])

    @property
    def w(self) -> np.ndarray:
        """:math:`w` in input space (linear kernel only): (6), (7), (17)."""
        if self.kernel.name != "linear":
            raise ValueError(f"w is explicit only for the linear kernel, not {self.kernel}")
        return np.vstack([self.own, self.other]).T @ self.coef

    def w_phi(self, X: np.ndarray) -> np.ndarray:
        """:math:`\\langle w,\\varphi(x)\\rangle` for each row of ``X`` (20)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return self.sign * (
            self.kernel.gram(X, self.own) @ self.lam
            - self.nu_over_m_other * self.kernel.gram(X, self.other).sum(axis=1)
        )

    @cached_property
    def w_w(self) -> float:
        """:math:`\\langle w,w\\rangle` by the corrected last display of Section 3.2 (errata 4)
        (:func:`expansion_w_w`); ``w_w_value`` if the fit gave it, else computed once from the Gram blocks."""
        if self.w_w_value is not None:
            return self.w_w_value
        k = self.kernel
        return expansion_w_w(self.lam, self.nu_over_m_other, k.gram(self.own, self.own),
                             k.gram(self.own, self.other), k.gram(self.other, self.other))

    @property
    def norm_w(self) -> float:
        """:math:`\\sqrt{\\langle w,w\\rangle}`."""
        return float(np.sqrt(max(self.w_w, 0.0)))


def expansion_w_w(lam: np.ndarray, nu_over_m_other: float, gram_own: np.ndarray, gram_own_other: np.ndarray,
                  gram_other: np.ndarray) -> float:
    """:math:`\\langle w,w\\rangle` of the expansion of the module docstring (errata 4, the corrected last
    display of Section 3.2), with :math:`a = \\nu/m_{other}`:

    .. math::
        \\lambda^\\top K(X_{own},X_{own})\\lambda - 2a\\,\\lambda^\\top K(X_{own},X_{other})e
        + a^2 e^\\top K(X_{other},X_{other})e.

    ``gram_own``, ``gram_own_other``, ``gram_other``: the three blocks as :meth:`Kernel.gram` computes them
    (points as rows). :attr:`Hyperplane.w_w` and the estimators, which have the first two from the fit,
    compute it here, with the same arithmetic."""
    e = np.ones(gram_other.shape[0])
    a = nu_over_m_other
    value = lam @ gram_own @ lam - 2.0 * a * lam @ gram_own_other @ e + a**2 * e @ gram_other @ e
    return float(value)


def recover(
    own: np.ndarray,
    other: np.ndarray,
    lam: np.ndarray,
    nu: float,
    alpha: float,
    kernel: Kernel | None = None,
    sign: int = 1,
    free_tol: float = FREE_TOL,
) -> Hyperplane:
    """Recover :math:`(w,\\theta)` from the dual solution ``lam`` (module docstring).

    ``sign=+1``: (6), (17), (20) with ``own`` = :math:`X_+`/:math:`X_c`;
    ``sign=-1``: (7) with ``own`` = :math:`X_-`, ``other`` = :math:`X_+`.
    """
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 or -1, got {sign}")
    if not 0.0 < free_tol < 0.5:
        raise ValueError(f"free_tol must lie in (0, 0.5), got {free_tol}")
    kernel = kernel or Kernel()
    own, other = np.atleast_2d(own), np.atleast_2d(other)
    lam = np.asarray(lam, dtype=float)
    if lam.shape != (len(own),):
        raise ValueError(f"lam has shape {lam.shape}; expected ({len(own)},), one per own point")
    upper = alpha / len(own)
    plane = Hyperplane(kernel, own, other, lam, nu / len(other), sign, 0.0, (0.0, 0.0), np.array([], int), "")
    theta, interval, free, rule = kkt_theta(-plane.w_phi(own), lam, upper, sign, free_tol)
    return Hyperplane(kernel, own, other, lam, nu / len(other), sign, theta, interval, free, rule)


def kkt_theta(
    minus_s: np.ndarray, lam: np.ndarray, upper: float, sign: int = 1, free_tol: float = FREE_TOL
) -> tuple[float, tuple[float, float], np.ndarray, str]:
    """The module's :math:`\\theta` rule from the own points' :math:`-s_i` and multipliers in ``[0, upper]``.

    Returns ``(theta, theta_interval, free, theta_rule)`` as stored in :class:`Hyperplane`;
    :func:`recover` and the fast path (:mod:`tpm_models.learn.fastqp`) both call it (the latter through
    :func:`kkt_thetas`, the same rule for several dual solutions at once).
    """
    minus_s, lam = np.asarray(minus_s, dtype=float), np.asarray(lam, dtype=float)
    # kkt_thetas' comparisons, maximum, minimum and mean on the one column, without its 2-D bookkeeping
    # (a third of a warm Wine fit's recovery)
    tol = free_tol * upper
    above_zero, below_upper = lam > tol, lam < upper - tol
    bounded_below, bounded_above = (below_upper, above_zero) if sign == 1 else (above_zero, below_upper)
    # the ufuncs' own reductions: what np.max, np.min and ndarray.sum call, without their Python wrappers
    lo = float(np.maximum.reduce(minus_s[bounded_below], initial=-np.inf))  # -inf: no such point
    hi = float(np.minimum.reduce(minus_s[bounded_above], initial=np.inf))
    free = (above_zero & below_upper).nonzero()[0]
    if free.size:  # the mean, as ndarray.mean computes it (the same sum, divided by the count)
        return float(np.add.reduce(minus_s[free]) / free.size), (lo, hi), free, "mean over N"
    if math.isfinite(lo) and math.isfinite(hi):
        return 0.5 * (lo + hi), (lo, hi), free, "midpoint of KKT interval"
    return (lo if math.isfinite(lo) else hi), (lo, hi), free, "finite end of KKT interval"


def kkt_thetas(
    minus_s: np.ndarray, lam: np.ndarray, upper: np.ndarray, sign: int = 1, free_tol: float = FREE_TOL
) -> list[tuple[float, tuple[float, float], np.ndarray, str]]:
    """:func:`kkt_theta` for each column ``j`` of ``minus_s`` and ``lam`` (shape ``(m, k)``), with bound
    ``upper[j]``: one ``(theta, theta_interval, free, theta_rule)`` per column, the numbers :func:`kkt_theta`
    gives column by column (the same comparisons, the maximum and minimum over the same entries, the mean over
    the same free entries in the same order), with the array work done once for all columns."""
    upper = np.asarray(upper, dtype=float)
    tol = free_tol * upper
    above_zero, below_upper = lam > tol, lam < upper - tol
    is_free = above_zero & below_upper
    # rows of the table in the module docstring
    bounded_below = below_upper if sign == 1 else above_zero
    bounded_above = above_zero if sign == 1 else below_upper
    lows = np.where(bounded_below, minus_s, -np.inf).max(axis=0, initial=-np.inf)  # -inf: no such point
    highs = np.where(bounded_above, minus_s, np.inf).min(axis=0, initial=np.inf)
    out = []
    for j in range(lam.shape[1]):
        lo, hi = float(lows[j]), float(highs[j])
        free = np.flatnonzero(is_free[:, j])
        if free.size:  # the mean, as ndarray.mean computes it (the same sum, divided by the count)
            theta, rule = float(minus_s[free, j].sum() / free.size), "mean over N"
        elif np.isfinite(lo) and np.isfinite(hi):
            theta, rule = 0.5 * (lo + hi), "midpoint of KKT interval"
        else:
            theta, rule = (lo if np.isfinite(lo) else hi), "finite end of KKT interval"
        out.append((theta, (lo, hi), free, rule))
    return out


def theta_interval_primal(minus_s: np.ndarray, nu: float, alpha: float) -> tuple[float, float]:
    """Optimal :math:`\\theta` for a fixed :math:`w`, from the primal alone (no multipliers).

    With :math:`r_i = -s_i` (for the robust models :math:`s_i = {x^i}^\\top w - \\varepsilon_i\\|w\\|_{p'}`),
    :math:`\\theta` minimises :math:`\\nu\\theta + \\frac{\\alpha}{m}\\sum_i \\max(0, r_i - \\theta)`, whose
    right slope is :math:`\\nu - \\frac{\\alpha}{m}\\#\\{r_i > \\theta\\}`. With :math:`k = \\nu m/\\alpha`
    and :math:`r_{(1)} \\ge r_{(2)} \\ge \\dots`: if :math:`k` is an integer the minimisers are
    :math:`[r_{(k+1)}, r_{(k)}]` (:math:`r_{(m+1)} = -\\infty`), else the single point
    :math:`r_{(\\lceil k\\rceil)}`. The same interval as the KKT one of :func:`recover`.
    """
    r = np.sort(np.asarray(minus_s, dtype=float))[::-1]
    m = len(r)
    k = nu * m / alpha
    nearest = round(k)
    if abs(k - nearest) <= 1e-9 * max(1.0, k):
        hi = float(r[nearest - 1])
        lo = float(r[nearest]) if nearest < m else -np.inf
        return lo, hi
    point = float(r[math.ceil(k) - 1])
    return point, point


def choose_theta(interval: tuple[float, float]) -> float:
    """The module's rule on an interval: its midpoint, or its finite end if the other is infinite."""
    lo, hi = interval
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    return lo if np.isfinite(lo) else hi
