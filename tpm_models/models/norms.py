"""Uncertainty sets (21) and the dual-norm bound (25).

(21): :math:`\\mathcal U_p(x^i) = \\{x^i+\\delta^i : \\|\\delta^i\\|_p \\le \\varepsilon_i\\}`,
:math:`p\\in[1,\\infty]`, :math:`\\varepsilon_i \\ge 0`.

(25): :math:`\\max_{\\|\\delta\\|_p\\le\\varepsilon}\\delta^\\top w = \\varepsilon\\|w\\|_{p'}` with
:math:`1/p + 1/p' = 1`, attained by :func:`worst_case_delta` (closed form):

==============  ==================================================================
:math:`p`        :math:`\\delta^\\star`
==============  ==================================================================
1               :math:`\\varepsilon\\,\\mathrm{sign}(w_k)\\,e_k`, :math:`k` the first index of :math:`\\max_j |w_j|`
:math:`(1,\\infty)`  :math:`\\varepsilon\\,\\mathrm{sign}(w)\\,|w|^{p'-1} / \\|w\\|_{p'}^{p'-1}`
:math:`\\infty`   :math:`\\varepsilon\\,\\mathrm{sign}(w)` (with :math:`\\mathrm{sign}(0) = +1`)
==============  ==================================================================

For :math:`w = 0` every :math:`\\delta` attains 0; we return :math:`\\varepsilon e_1`, which has
:math:`\\|\\delta\\|_p = \\varepsilon`. The minimiser of (24) is :math:`-\\delta^\\star`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyomo.core as pyo


def check_p(p: float | str) -> float:
    """Check :math:`p \\in [1, \\infty]` (``float("inf")`` or ``"inf"`` accepted)."""
    if isinstance(p, str):
        if p.strip().lower() not in ("inf", "infinity", "+inf"):
            try:
                p = float(p)
            except ValueError:
                raise ValueError(f"p must be a number >= 1 or 'inf', got {p!r}") from None
        else:
            p = math.inf
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) or math.isnan(p):
        raise ValueError(f"p must be a number >= 1 or inf, got {p!r}")
    if p < 1:
        raise ValueError(f"p must be >= 1 (a norm), got {p}")
    return float(p)


def conjugate(p: float) -> float:
    """Hölder conjugate :math:`p'` with :math:`1/p + 1/p' = 1` (1 <-> inf)."""
    p = check_p(p)
    if p == 1.0:
        return math.inf
    if math.isinf(p):
        return 1.0
    return p / (p - 1.0)


def norm(w: np.ndarray, q: float) -> float:
    """:math:`\\|w\\|_q` for :math:`q \\in [1, \\infty]`."""
    return float(np.linalg.norm(np.asarray(w, dtype=float), ord=check_p(q)))


def dual_norm(w: np.ndarray, p: float) -> float:
    """:math:`\\|w\\|_{p'}`, the dual norm of :math:`\\|\\cdot\\|_p`."""
    return norm(w, conjugate(p))


def check_radii(eps: float | np.ndarray, m: int) -> np.ndarray:
    """Per-point radii :math:`\\varepsilon_i \\ge 0` from a scalar or a length-``m`` vector."""
    arr = np.asarray(eps, dtype=float)
    if arr.ndim == 0:
        arr = np.full(m, float(arr))
    if arr.shape != (m,):
        raise ValueError(f"eps must be a scalar or have one radius per point ({m}), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("eps must be finite")
    if (arr < 0).any():
        raise ValueError(f"eps must be >= 0 (radii of (21)), got min {arr.min()}")
    return arr


def worst_case_delta(w: np.ndarray, p: float, eps: float) -> np.ndarray:
    """:math:`\\delta^\\star = \\arg\\max_{\\|\\delta\\|_p\\le\\varepsilon}\\delta^\\top w` (module table)."""
    p = check_p(p)
    w = np.asarray(w, dtype=float)
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    delta = np.zeros_like(w)
    if not np.any(w):
        delta[0] = eps
        return delta
    sign = np.where(w >= 0, 1.0, -1.0)
    if p == 1.0:
        k = int(np.argmax(np.abs(w)))
        delta[k] = eps * sign[k]
        return delta
    if math.isinf(p):
        return eps * sign
    q = conjugate(p)
    scale = np.abs(w) / np.max(np.abs(w))  # scaled first: |w|^(q-1) cannot overflow
    return eps * sign * scale ** (q - 1.0) / np.linalg.norm(scale, ord=q) ** (q - 1.0)


def add_pnorm_epigraph(
    m: pyo.Block, a: Any, r: Any, q: float, index: Sequence | pyo.Set,
    z_name: str = "z", rows_name: str = "perspective", doc: str = "",
) -> pyo.Constraint:
    """:math:`r \\ge \\|a\\|_q` for :math:`a \\ge 0` (``a[j]``, ``j`` in ``index``) and finite :math:`q > 1`, as
    convex rows added to ``m``: variables ``z_name[j] >= 0`` and rows ``rows_name[j]``:
    :math:`a_j^q\\,r^{1-q} \\le z_j` (the perspective of :math:`a^q`, jointly convex for :math:`r > 0`, and the
    power cone :func:`tpm_models.solvers.conic` recognises when ``a[j]`` and ``r`` are variables with bounds
    :math:`\\ge 0`). Returns the row :math:`\\sum_j z_j \\le r` (the caller names it); together
    :math:`\\sum_j a_j^q \\le r^q`. Every row is a convex function :math:`\\le 0`, so a local NLP solver's KKT
    point is the optimum (:func:`tpm_models.models.robust.pnorm_epigraph` says what the other ways of writing it
    cost). The rows are undefined at :math:`r = 0`: Ipopt starts at 0.01."""
    q = check_p(q)
    if q == 1.0 or math.isinf(q):
        raise ValueError(f"the perspective rows are for 1 < q < inf, got q = {q:g} (q = 1, inf are linear rows)")
    z = pyo.Var(index, domain=pyo.NonNegativeReals, doc="z_j >= a_j^q r^(1-q)" + (f" ({doc})" if doc else ""))
    m.add_component(z_name, z)
    m.add_component(rows_name, pyo.Constraint(index, rule=lambda _, j: a[j] ** q * r ** (1.0 - q) - z[j] <= 0,
                                              doc=f"a_j^{q:g} r^{1 - q:g} <= z_j" + (f" ({doc})" if doc else "")))
    return pyo.Constraint(expr=sum(z[j] for j in z.index_set()) - r <= 0,
                          doc=f"sum_j z_j <= r: |a|_{q:g} <= r" + (f" ({doc})" if doc else ""))
