"""The polish of an interior point's solution of a conic program (Clarabel's form, :mod:`tpm_models.solvers.conic`):
the face each cone block is on read off the point (:func:`faces`), Newton's method on those faces' equations
(:func:`~tpm_models.solvers.face_newton.newton_run`), and the polished point accepted only when better
(:func:`polish`): its KKT residual (:func:`kkt_residual`) below the interior point's and at most
:data:`POLISH_ACCEPT` (a KKT point of the convex program: optimal), :math:`x` moved by at most
:data:`POLISH_MAX_MOVE`; else the faces are read again, or the interior point is kept and :attr:`Polished.reason`
says why. Why and measured: ``docs/solvers.md``, "How the targets were met: the polish" and "The polish at scale".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tpm_models.solvers.cones import Cone, ConeKind
from tpm_models.solvers.face_newton import POLISH_LARGE, newton_run

POLISH_RETRIES = 3
"""Readings tried after the first with one doubtful active row released (:func:`polish`), below :data:`POLISH_LARGE`
unknowns only."""
POLISH_ATTEMPTS = 8
"""Newton runs at most per polish: the readings above, and readings with signs corrected."""
POLISH_HUGE = 50_000
"""From this many unknowns on, :data:`POLISH_ATTEMPTS_HUGE` Newton runs at most."""
POLISH_ATTEMPTS_HUGE = 3
"""Newton runs at most from :data:`POLISH_HUGE` unknowns on."""
POLISH_AMBIGUOUS = 10.0
"""An active ``nonneg`` row (:math:`s_i < z_i`) whose :math:`s_i` is within this factor of :math:`z_i` is
*ambiguous*: when the first reading fails, one reading has them all read inactive (:func:`_ambiguous_released`)."""
POLISH_ACCEPT = 1e-11
"""The largest KKT residual (:func:`kkt_residual`) of an accepted polished point."""
POLISH_MAX_MOVE = 1e-2
"""The largest relative move :math:`\\|x_{\\text{polished}} - x\\|_\\infty / \\max(1, \\|x\\|_\\infty)` accepted."""
FACE_ORTHOGONAL = 1e-6
"""A cone block is on its boundary face when :math:`|s^\\top z| \\le` 1e-6 :math:`\\|s\\|\\|z\\|` and ..."""
FACE_RATIO = 1e6
"""... :math:`\\|s\\| / \\|z\\|` is within a factor 1e6 of 1; else ``interior`` (:math:`z = 0`) when :math:`\\|s\\| \\ge
\\|z\\|`, ``apex`` (:math:`s = 0`) otherwise (measured: ``docs/solvers.md``, "How the targets were met: the polish")."""


@dataclass
class Polished:
    """The result of :func:`polish`: the point to use (polished if ``accepted``, else the one given)."""

    x: np.ndarray
    z: np.ndarray
    accepted: bool
    residual_before: float
    residual_after: float
    reason: str


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
    assert alpha is not None  # a power cone has its alpha (Cone's check)
    a, c = (v[0] / alpha, v[1] / (1 - alpha)) if dual else (v[0], v[1])
    return max(0.0, -float(a**alpha * c ** (1 - alpha) - abs(v[2])))


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
    cone's :math:`s_1`, is :math:`y`) read on its boundary or inside: (23)'s bound :math:`z_j \\ge 0` beside
    :math:`z_j \\ge \\tau_j`, whose three multipliers are not unique near :math:`w_j = 0` (``docs/solvers.md``, "The
    polish at scale"). A released bound is still checked: the polished point's KKT residual covers every row."""
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


def _doubtful_rows(cones: Sequence[Cone], blocks: list, z: np.ndarray, dz: np.ndarray) -> list[tuple[int, int]]:
    """The active ``nonneg`` rows, as ``(block, row in block)``, by decreasing :math:`|\\Delta z_i| / z_i` of a
    failed first Newton step: the rows whose multipliers that step wanted to change the most."""
    out, start = [], 0
    for k, (cone, face) in enumerate(zip(cones, blocks)):
        if cone.kind is ConeKind.NONNEG:
            for i in np.where(face)[0]:
                zi = z[start + i]
                out.append((abs(dz[start + i]) / zi if zi > 0 else math.inf, k, int(i)))
        start += cone.dim
    return [(k, i) for _, k, i in sorted(out, reverse=True)]


def _ambiguous_released(cones: Sequence[Cone], blocks: list, s: np.ndarray, z: np.ndarray) -> tuple[list, int]:
    """``blocks`` with every ambiguous active ``nonneg`` row (:data:`POLISH_AMBIGUOUS`: :math:`s_i \\ge z_i /`
    ``POLISH_AMBIGUOUS``, at the interior point ``(s, z)``) read inactive, and how many there were."""
    out, start, count = list(blocks), 0, 0
    for k, cone in enumerate(cones):
        if cone.kind is ConeKind.NONNEG:
            sk, zk = s[start:start + cone.dim], z[start:start + cone.dim]
            ambiguous = blocks[k] & (sk * POLISH_AMBIGUOUS >= zk)
            if ambiguous.any():
                out[k] = blocks[k] & ~ambiguous
                count += int(ambiguous.sum())
        start += cone.dim
    return out, count


def _sign_corrections(cones: Sequence[Cone], blocks: list, s: np.ndarray, z: np.ndarray) -> list | None:
    """``blocks`` with the ``nonneg`` rows whose sign is wrong at a solution of its equations moved to the other
    side (an inactive row with :math:`s_i < 0` made active, an active row with :math:`z_i < 0` inactive: one step of
    an active-set method), and a cone read at its apex whose :math:`z` is outside the dual cone read inside
    (:math:`z = 0`); ``None`` when every sign is right."""
    out, start, changed = list(blocks), 0, False
    for k, cone in enumerate(cones):
        sk, zk = s[start:start + cone.dim], z[start:start + cone.dim]
        if cone.kind is ConeKind.NONNEG:
            face = blocks[k]
            wrong = (~face & (sk < -POLISH_ACCEPT)) | (face & (zk < -POLISH_ACCEPT))
            if wrong.any():
                out[k] = face ^ wrong
                changed = True
        elif blocks[k] == "apex" and outside_dual(cone, zk) > POLISH_ACCEPT:
            out[k] = "interior"
            changed = True
        start += cone.dim
    return out if changed else None


def polish(P: sp.spmatrix, q: np.ndarray, A: sp.spmatrix, b: np.ndarray, cones: Sequence[Cone],
           x: np.ndarray, s: np.ndarray, z: np.ndarray, attempts: int | None = None,
           accept: float = POLISH_ACCEPT, pin: bool = True) -> Polished:
    """Polish the interior point ``(x, s, z)`` of :math:`\\min \\tfrac12x^\\top Px+q^\\top x` s.t.
    :math:`b - Ax = s \\in \\mathcal K` (``P`` its upper triangle, as Clarabel takes it; module docstring).

    When Newton's method on the faces read off ``(s, z)`` fails, the faces are read again: every ambiguous active
    row inactive (:data:`POLISH_AMBIGUOUS`: next from :data:`POLISH_LARGE` unknowns on, last below), one doubtful
    active row inactive at a time (:func:`_doubtful_rows`, below :data:`POLISH_LARGE`), the rows of wrong sign moved
    (:func:`_sign_corrections`); which cases need each: ``docs/solvers.md``, "The polish at scale". At most
    ``attempts`` runs (default :data:`POLISH_ATTEMPTS`, :data:`POLISH_ATTEMPTS_HUGE` from :data:`POLISH_HUGE`
    unknowns on). ``accept``: the largest KKT residual of an accepted point. ``pin``: pin the active bounds from
    :data:`POLISH_LARGE` unknowns on (``face_newton._Faces.pin``)."""
    P = sp.csc_matrix(P)
    P_full = (P + P.T - sp.diags(P.diagonal())).tocsr()
    A = sp.csr_matrix(A)
    x0, z0, s0 = np.asarray(x, dtype=float), np.asarray(z, dtype=float), np.asarray(s, dtype=float)
    before = kkt_residual(P_full, q, A, b, cones, x0, z0)
    keep = Polished(x0, z0, False, before, before, "")
    if not (np.isfinite(x0).all() and np.isfinite(z0).all() and np.isfinite(s0).all()):
        keep.reason = "the point is not finite"
        return keep
    first = release_implied_bounds(A, b, cones, faces(cones, s0, z0))
    readings: list[tuple[list, str]] = [(first, "")]
    reasons = []
    if attempts is None:
        attempts = POLISH_ATTEMPTS if len(x0) + len(z0) < POLISH_HUGE else POLISH_ATTEMPTS_HUGE
    for attempt in range(attempts):
        if not readings:
            break
        blocks, how = readings.pop(0)
        try:
            xk, zk, dz, converged = newton_run(P_full, q, A, b, cones, blocks, x0, z0, pin)
        except FloatingPointError:
            reasons.append("a boundary face at the edge of its cone")
            continue
        after = kkt_residual(P_full, q, A, b, cones, xk, zk)
        move = float(np.max(np.abs(xk - x0), initial=0.0)) / max(1.0, float(np.max(np.abs(x0), initial=0.0)))
        keep.residual_after = min(keep.residual_after, after)
        if after <= accept and after < before and move <= POLISH_MAX_MOVE:
            retried = f" ({how})" if how else ""
            return Polished(xk, zk, True, before, after, f"KKT residual {before:.1e} -> {after:.1e}{retried}")
        if not attempt and attempts > 1 and len(x0) + len(z0) < POLISH_LARGE:  # the first reading failed: retries
            for k, i in _doubtful_rows(cones, first, z0, dz)[:POLISH_RETRIES]:
                released = list(first)
                released[k] = first[k].copy()
                released[k][i] = False
                readings.append((released, f"active row {i} of block {k} read as inactive"))
        if move > POLISH_MAX_MOVE:
            reasons.append(f"the polished point moved {move:.1e} (a face misread)")
        else:
            reasons.append(f"KKT residual {after:.1e} after polishing" + (
                f", above {accept:g}" if after > accept else f", not below {before:.1e}"))
        corrected = _sign_corrections(cones, blocks, b - A @ xk, zk) if converged else None
        if corrected is not None:
            readings.insert(0, (corrected, (how + "; " if how else "") + "signs corrected"))
        if not attempt and attempts > 1:  # the first reading failed: also one with every ambiguous row released
            released, count = _ambiguous_released(cones, first, s0, z0)
            if count:  # tried next at scale, after the other retries below it (POLISH_AMBIGUOUS)
                readings.insert(0 if len(x0) + len(z0) >= POLISH_LARGE else len(readings),
                                (released, f"{count} ambiguous active rows read as inactive"))
    keep.reason = reasons[0] + (f"; {len(reasons) - 1} other readings failed" if len(reasons) > 1 else "")
    return keep
