"""The cones' geometry for the polish (:mod:`tpm_models.solvers.polish`): each cone's boundary function
:math:`h` and its derivatives (:func:`boundary_function`), the distance of a point to a cone or its dual, the KKT
residual of a conic program's point (:func:`kkt_residual`), and the face each block of an interior point is on
(:func:`faces`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from tpm_models.solvers.cones import Cone, ConeKind

FACE_ORTHOGONAL = 1e-6
"""A cone block is on its boundary face when :math:`|s^\\top z| \\le` 1e-6 :math:`\\|s\\|\\|z\\|` (complementary
but neither zero) and ..."""
FACE_RATIO = 1e6
"""... :math:`\\|s\\| / \\|z\\|` is within a factor 1e6 of 1; else it is ``interior`` (:math:`z = 0`) when
:math:`\\|s\\| \\ge \\|z\\|` and ``apex`` (:math:`s = 0`) otherwise. Measured on the 3,720 cone blocks of the 936
models of the conic survey at Clarabel's optimum: on the boundary, :math:`|s^\\top z|/\\|s\\|\\|z\\|` is 1e-16 .. 1e-8
and the ratio within 1e2; off it, the cosine is above 1e-4 or the ratio beyond 1e8."""


# --------------------------------------------------------------------------- cone functions


def _h(kind: ConeKind, s: np.ndarray, alpha: float | None) -> float:
    if kind is ConeKind.SOC:
        return float(s[0] - np.linalg.norm(s[1:]))
    assert alpha is not None  # a power cone has its alpha (Cone's check)
    return float(s[0] ** alpha * s[1] ** (1 - alpha) - abs(s[2]))


def _h_dual(kind: ConeKind, z: np.ndarray, alpha: float | None) -> float:
    if kind is ConeKind.SOC:
        return float(z[0] - np.linalg.norm(z[1:]))
    assert alpha is not None  # a power cone has its alpha (Cone's check)
    return float((z[0] / alpha) ** alpha * (z[1] / (1 - alpha)) ** (1 - alpha) - abs(z[2]))


def boundary_function(cone: Cone, s: np.ndarray, solve_for: int = 0) -> tuple[float, np.ndarray, np.ndarray]:
    """:math:`h(s)`, :math:`\\nabla h(s)`, :math:`\\nabla^2 h(s)` of a cone block's boundary :math:`h(s) = 0`
    (:math:`h \\ge 0` inside, positively homogeneous of degree 1, so :math:`z = \\mu\\nabla h(s)` is the dual).

    Second-order cone: :math:`h = s_0 - \\|s_{1:}\\|`. Power cone :math:`s_0^\\alpha s_1^{1-\\alpha} \\ge |s_2|`:
    written as :math:`h = s_u - |s_2|^k s_v^{1-k}` with :math:`u` = ``solve_for`` (0: :math:`k = 1/\\alpha`;
    1: :math:`k = 1/(1-\\alpha)`) and :math:`v` the other, so that the side near 0 is the one solved for: near
    the cone's edge (:math:`s_0 \\to 0`: a perspective :math:`\\tau = |w_j|^q r^{1-q}` of 4e-10) the form
    :math:`s_0^\\alpha s_1^{1-\\alpha} - |s_2|` has derivatives of 1e5 and second derivatives of 1e15 and
    Newton's method crawls; this one has derivatives of order 1. ``FloatingPointError`` off its domain."""
    if cone.kind is ConeKind.SOC:
        d = len(s)
        r = float(np.linalg.norm(s[1:]))
        if r == 0:
            raise FloatingPointError("a second-order cone's boundary point reached the apex")
        unit = s[1:] / r
        H = np.zeros((d, d))
        H[1:, 1:] = -(np.eye(d - 1) - np.outer(unit, unit)) / r
        return float(s[0]) - r, np.concatenate([[1.0], -unit]), H
    u, v = solve_for, 1 - solve_for
    alpha = cone.alpha
    assert alpha is not None  # a power cone has its alpha (Cone's check)
    k = 1.0 / alpha if solve_for == 0 else 1.0 / (1.0 - alpha)
    sv, s2 = float(s[v]), float(s[2])
    if sv <= 0 or (s2 == 0 and k < 2):
        raise FloatingPointError("a power cone's boundary point left the domain of h")
    a2, sign = abs(s2), math.copysign(1.0, s2)
    g, H = np.zeros(3), np.zeros((3, 3))
    g[u] = 1.0
    g[v] = (k - 1) * a2**k * sv ** (-k)
    g[2] = -k * sign * a2 ** (k - 1) * sv ** (1 - k)
    H[v, v] = -k * (k - 1) * a2**k * sv ** (-k - 1)
    H[v, 2] = H[2, v] = -(1 - k) * k * sign * a2 ** (k - 1) * sv ** (-k)
    H[2, 2] = -k * (k - 1) * a2 ** (k - 2) * sv ** (1 - k) if s2 != 0 else 0.0
    return float(s[u]) - a2**k * sv ** (1 - k), g, H


def solve_for(cone: Cone, s: np.ndarray) -> int:
    """The side of a power cone's boundary function (:func:`boundary_function`) to solve for: the smaller."""
    return 0 if cone.kind is not ConeKind.POW or s[0] <= s[1] else 1


def _in_cone_distance(kind: ConeKind, v: np.ndarray, alpha: float | None, dual: bool) -> float:
    """How far ``v`` is outside the cone (or its dual): 0 inside."""
    if kind is ConeKind.ZERO:
        return 0.0 if dual else float(np.max(np.abs(v), initial=0.0))
    if kind is ConeKind.NONNEG:
        return float(max(0.0, -float(np.min(v, initial=0.0))))
    if kind is ConeKind.SOC:
        return max(0.0, float(np.linalg.norm(v[1:]) - v[0]))
    if min(v[0], v[1]) < 0:
        return float(-min(v[0], v[1]))
    h = _h_dual(kind, v, alpha) if dual else _h(kind, v, alpha)
    return max(0.0, -h)


def outside_dual(cone: Cone, z: np.ndarray) -> float:
    """How far a block's dual ``z`` is outside the dual cone :math:`\\mathcal K^*` (0 inside)."""
    return _in_cone_distance(cone.kind, z, cone.alpha, True)


def kkt_residual(P: sp.spmatrix, q: np.ndarray, A: sp.spmatrix, b: np.ndarray, cones: Sequence[Cone],
                 x: np.ndarray, z: np.ndarray) -> float:
    """The largest of: :math:`\\|Px+q+A^\\top z\\|_\\infty`, the distance of :math:`s = b-Ax` outside
    :math:`\\mathcal K` and of :math:`z` outside :math:`\\mathcal K^*` (per block), and :math:`|s_k^\\top z_k|`
    per block; ``P`` the full symmetric matrix."""
    s = b - A @ x
    worst = float(np.max(np.abs(P @ x + q + A.T @ z), initial=0.0))
    start = 0
    for cone in cones:
        block = slice(start, start + cone.dim)
        start += cone.dim
        sk, zk = s[block], z[block]
        worst = max(worst, _in_cone_distance(cone.kind, sk, cone.alpha, False),
                    _in_cone_distance(cone.kind, zk, cone.alpha, True))
        if cone.kind is ConeKind.NONNEG:
            worst = max(worst, float(np.max(np.abs(sk * zk), initial=0.0)))
        elif cone.kind is not ConeKind.ZERO:
            worst = max(worst, abs(float(sk @ zk)))
    return worst


# --------------------------------------------------------------------------- faces


def faces(cones: Sequence[Cone], s: np.ndarray, z: np.ndarray) -> list:
    """Per block, the face read off the interior point: ``"zero"``; a boolean array (nonneg rows: active);
    ``"interior"``, ``"apex"`` or ``"boundary"`` (cones); and for a power cone the edges where :math:`h` is not
    smooth, ``"edge0"`` (:math:`s_0 = s_2 = 0 < s_1`, so :math:`z_1 = 0`: a perspective
    :math:`(\\tau_j, r, w_j)` at :math:`w_j = 0`, e.g. a feature that is 0 on every point) and ``"edge1"``
    (:math:`s_1 = s_2 = 0 < s_0`, :math:`z_0 = 0`)."""
    out: list = []
    start = 0
    for cone in cones:
        sk, zk = s[start:start + cone.dim], z[start:start + cone.dim]
        start += cone.dim
        if cone.kind is ConeKind.ZERO:
            out.append("zero")
        elif cone.kind is ConeKind.NONNEG:
            out.append(sk < zk)
        else:
            s_norm, z_norm = float(np.linalg.norm(sk)), float(np.linalg.norm(zk))
            product = s_norm * z_norm
            orthogonal = product > 0 and abs(float(sk @ zk)) <= FACE_ORTHOGONAL * product
            comparable = product > 0 and FACE_RATIO ** -1 <= s_norm / z_norm <= FACE_RATIO
            on_edge = cone.kind is ConeKind.POW and abs(sk[2]) <= FACE_ORTHOGONAL * s_norm  # h not smooth there
            if comparable and on_edge and min(sk[0], sk[1]) <= FACE_ORTHOGONAL * s_norm:
                out.append("edge0" if sk[0] <= sk[1] else "edge1")
            elif orthogonal and comparable and not on_edge:
                out.append("boundary")
            elif s_norm >= z_norm:
                out.append("interior")
            else:
                out.append("apex")
    return out


def release_implied_bounds(A: sp.csr_matrix, b: np.ndarray, cones: Sequence[Cone], blocks: list) -> list:
    """``blocks`` with every active bound :math:`x_c \\ge 0` read inactive when two active rows already imply it:
    a row :math:`x_c - y \\ge 0` read active, and :math:`y \\ge 0` from a cone block (its :math:`s_0`, or a power
    cone's :math:`s_1`, is :math:`y`) read on its boundary or inside. That is the bound :math:`z_j \\ge 0` of the
    perspective :math:`z_j \\ge \\tau_j` of (23)'s p-norm, :math:`(\\tau_j, r, a_j)` a power cone: with
    :math:`|w_j|` of 1e-6, :math:`\\tau_j` is 1e-14 and all three read active, their multipliers are not unique and
    the Newton system is singular (``docs/solvers.md``, "The polish at scale"). A released bound is still checked:
    the polished point's KKT residual covers every row."""
    starts = np.cumsum([0] + [c.dim for c in cones])
    nnz = np.diff(A.indptr)

    def single(r: int) -> int | None:  # the column c of a row s = x_c (b = 0, A = -e_c)
        return int(A.indices[A.indptr[r]]) if nnz[r] == 1 and b[r] == 0 and A.data[A.indptr[r]] < 0 else None

    in_cone = set()
    for k, cone in enumerate(cones):
        if cone.kind in (ConeKind.SOC, ConeKind.POW) and blocks[k] in ("boundary", "interior"):
            for j in (0, 1) if cone.kind is ConeKind.POW else (0,):
                c = single(int(starts[k]) + j)
                if c is not None:
                    in_cone.add(c)
    if not in_cone:
        return blocks
    above = set()  # x_c with an active row x_c - y >= 0, y >= 0 from a cone
    nonneg = [k for k, cone in enumerate(cones) if cone.kind is ConeKind.NONNEG]
    for k in nonneg:
        for r in int(starts[k]) + np.flatnonzero(blocks[k] & (nnz[starts[k]:starts[k + 1]] == 2)):
            if b[r] == 0:
                (c0, c1), (a0, a1) = A.indices[A.indptr[r]:A.indptr[r + 1]], A.data[A.indptr[r]:A.indptr[r + 1]]
                if a0 == -1.0 and a1 == 1.0 and int(c1) in in_cone:
                    above.add(int(c0))
                elif a1 == -1.0 and a0 == 1.0 and int(c0) in in_cone:
                    above.add(int(c1))
    out = list(blocks)
    if not above:
        return out
    targets = np.fromiter(above, dtype=np.int64, count=len(above))
    for k in nonneg:  # the active rows s = x_c (single(r), vectorised) of a column c in above
        active = np.flatnonzero(blocks[k])
        rows = int(starts[k]) + active
        one = nnz[rows] == 1
        active, rows = active[one], rows[one]
        first = A.indptr[rows]
        hit = active[(b[rows] == 0) & (A.data[first] < 0) & np.isin(A.indices[first], targets)]
        if hit.size:
            out[k] = blocks[k].copy()
            out[k][hit] = False
    return out
