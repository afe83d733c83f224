"""What the shape readers share: tests of a Pyomo node, a short text of it for messages, the sum of squares of a
quadratic, the :class:`Piece` of rows they return, and the reader's interface a canonicaliser reads through."""

from __future__ import annotations

import math
import numbers
from typing import Any, NamedTuple, Protocol

import numpy as np

from tpm_models.certify.tolerances import PSD_TOL
from tpm_models.solvers.cones import ConeKind, NotConicError


class Piece(NamedTuple):
    """Rows a reader hands to the conic form, each ``(dict column -> coefficient, constant)``: the row
    :math:`s = c + a^\\top x` (:mod:`tpm_models.solvers.conic`). ``zero`` and ``nonneg`` rows join the form's rows of
    their kind; a ``soc`` or ``pow`` piece (``alpha`` for ``pow``) is one cone block. ``dual``: how the piece's
    constraint reads its dual off it (``None``: no constraint's, as an atom's epigraph): the factor of each linear row,
    or a quadratic row's ``(orient, quad, lin)`` (:class:`~tpm_models.solvers.cones.DualMap`)."""

    kind: ConeKind
    rows: list
    alpha: float | None = None
    dual: Any = None


def is_constant(e: Any) -> bool:
    """A number, or an expression without an unfixed variable."""
    return isinstance(e, numbers.Number) or not e.is_potentially_variable() or e.is_fixed()


def is_variable(e: Any) -> bool:
    """An unfixed variable."""
    return not isinstance(e, numbers.Number) and e.is_variable_type() and not e.fixed


def short(expr: Any) -> str:
    """``expr`` as text, cut at 80 characters."""
    text = str(expr)
    return text if len(text) <= 80 else text[:77] + "..."


def squares(quad: dict, lin: dict, const: float, where: str) -> tuple[list[dict], list[float], float]:
    """:math:`x^\\top Qx + l^\\top x + c = \\|Fx+g_0\\|^2 + c_0` with :math:`c_0 \\ge 0`: rows of
    :math:`F` (dicts), :math:`g_0`, :math:`c_0`. Diagonal :math:`Q` without :math:`l`: :math:`F =
    \\mathrm{diag}(\\sqrt{Q_{kk}})` exactly."""
    cols = sorted({c for k in quad for c in k} | set(lin))
    if all(i == j for i, j in quad) and not lin:
        if any(a < 0 for a in quad.values()) or const < 0:
            raise NotConicError(f"{where}: the quadratic is not a sum of squares plus a constant >= 0")
        return [{i: math.sqrt(a)} for (i, _), a in sorted(quad.items()) if a > 0], \
            [0.0] * sum(a > 0 for a in quad.values()), const
    index = {c: k for k, c in enumerate(cols)}
    Q = np.zeros((len(cols), len(cols)))
    for (i, j), a in quad.items():
        if i == j:
            Q[index[i], index[i]] += a
        else:
            Q[index[i], index[j]] += a / 2
            Q[index[j], index[i]] += a / 2
    l_vec = np.array([lin.get(c, 0.0) for c in cols])
    lam, V = np.linalg.eigh(Q)
    top = max(float(np.abs(lam).max(initial=0.0)), 1.0)
    if lam.size and lam.min() < -PSD_TOL * top:
        raise NotConicError(f"{where}: the quadratic form is not convex (eigenvalue {lam.min():.3g})")
    keep = lam > PSD_TOL * top
    Vk, root = V[:, keep], np.sqrt(lam[keep])
    F = root[:, None] * Vk.T
    g0 = 0.5 * (Vk.T @ l_vec) / root
    if np.linalg.norm(l_vec - 2 * F.T @ g0) > 1e-9 * (1 + np.linalg.norm(l_vec)):
        raise NotConicError(f"{where}: a linear term outside the quadratic's range: not a sum of squares")
    c0 = const - float(g0 @ g0)
    if c0 < -1e-9 * (1 + abs(const)):
        raise NotConicError(f"{where}: the quadratic can be negative: not a norm")
    rows = [{cols[k]: float(a) for k, a in enumerate(row) if a != 0} for row in F]
    return rows, [float(g) for g in g0], max(c0, 0.0)


class Reader(Protocol):
    """What a canonicaliser uses of :class:`~tpm_models.solvers.conic_shapes.ShapeReader`: the atoms met (key ->
    epigraph column; it adds its own), the hypograph columns (it adds a concave atom's), new columns, and the reader's
    readings of columns and quadratics."""

    atoms: dict[tuple, int]
    concave: set[int]

    def new_col(self, name: str) -> int: ...
    def column(self, v: Any) -> int: ...
    def nonnegative(self, v: Any) -> bool: ...
    def quadratic(self, expr: Any, where: str) -> tuple[dict, dict, float]: ...
