"""Active-set Newton polish of an interior point's solution of a conic program.

An interior point stops at a small duality gap :math:`\\mu`, not at the optimum: on a model whose
objective is strongly convex in :math:`w` only through a cone (the epigraph
:math:`u \\ge \\sqrt{t^2+v^2}` of :math:`\\tfrac12\\|w\\|^2` in (26)-(29)), :math:`w` is then off by
about :math:`\\sqrt\\mu` (1e-6 at a gap of 1e-12). The polish reads off the interior point which cone
face each block is on and solves the optimality conditions *on those faces* by Newton's method,
the way OSQP polishes a QP, here for every cone of :mod:`tpm_models.solvers.conic`.

Problem (Clarabel's form, :mod:`tpm_models.solvers.conic`):
:math:`\\min \\tfrac12x^\\top Px + q^\\top x` s.t. :math:`s = b - Ax \\in \\mathcal K`; dual
:math:`z \\in \\mathcal K^*`. The equations solved, in the unknowns :math:`(x, z, \\mu)`:

.. math::
    Px + q + A^\\top z = 0

and, per block (:func:`faces`, from the interior point's :math:`s` and :math:`z`):

============================  =========================================================================
face                          equations
============================  =========================================================================
``zero`` block                :math:`s = 0`
``nonneg`` row, active        :math:`s_i = 0` (when :math:`s_i < z_i`)
``nonneg`` row, inactive      :math:`z_i = 0`
cone, interior                :math:`z = 0` (:math:`s` inside the cone)
cone, apex                    :math:`s = 0` (:math:`z` inside the dual cone)
cone, boundary                :math:`h(s) = 0,\\ z = \\mu\\nabla h(s)`, one more unknown :math:`\\mu \\ge 0`
============================  =========================================================================

with :math:`h(s) = s_0 - \\|s_{1:}\\|` (second-order cone) or :math:`s_0^\\alpha s_1^{1-\\alpha} - |s_2|`
(power cone): on the boundary, :math:`z \\in \\mathcal K^*` with :math:`s^\\top z = 0` is a nonnegative
multiple of the inward normal :math:`\\nabla h(s)` (:math:`h` is positively homogeneous of degree 1, so
:math:`\\nabla h(s)^\\top s = h(s) = 0`). A model whose optimum is not unique (an interval of optimal
:math:`\\theta`) makes these equations singular; each Newton step is solved with a small proximal
regularisation (``newton_solve.POLISH_REG``) and iterative refinement, so it is the step of least change there.

**Accepted only when better** (:func:`polish`): its KKT residual (:func:`kkt_residual`: stationarity, cone
distances, complementarity) below the interior point's and at most :data:`POLISH_ACCEPT` (a KKT point of the convex
program: optimal), :math:`x` moved by at most :data:`POLISH_MAX_MOVE`; else the interior point is kept and
:attr:`Polished.reason` says why (``docs/solvers.md``, "The polish at scale").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import scipy.sparse as sp

from tpm_models.solvers.cone_faces import (
    boundary_function,
    faces,
    kkt_residual,
    outside_dual,
    release_implied_bounds,
    solve_for,
)
from tpm_models.solvers.cones import Cone, ConeKind
from tpm_models.solvers.newton_solve import newton_step

POLISH_NEWTON = 20
"""Newton steps at most (quadratic convergence near the solution; damped steps farther away)."""
POLISH_FLOOR = 1e-15
"""Newton stops once :math:`\\|F\\|_2` is below 1e-15 times the largest of 1, :math:`|q|` and :math:`|b|`
(rounding), or once a step no longer halves it below 1e3 times that (rounding too)."""
POLISH_RETRIES = 3
"""Readings of the faces tried after the first, each with one doubtful active row released (:func:`polish`), below
:data:`POLISH_LARGE` unknowns only (``docs/solvers.md``, "The polish at scale")."""
POLISH_ATTEMPTS = 8
"""Newton runs at most per polish: the readings above, and readings with signs corrected."""
POLISH_HUGE = 50_000
"""From this many unknowns on, :data:`POLISH_ATTEMPTS_HUGE` Newton runs at most."""
POLISH_ATTEMPTS_HUGE = 3
"""Newton runs at most from :data:`POLISH_HUGE` unknowns on (the first reading, ambiguous rows released, signs)."""
POLISH_AMBIGUOUS = 10.0
"""An active ``nonneg`` row (:math:`s_i < z_i`) whose :math:`s_i` is within this factor of :math:`z_i` is
*ambiguous*: at a strictly complementary optimum one of :math:`s_i, z_i` is clearly larger, while a row active with a
zero multiplier has both near :math:`\\sqrt\\mu`. When the first reading fails, one reading has every ambiguous row
read inactive (:func:`_ambiguous_released`): the next from :data:`POLISH_LARGE` unknowns on, the last below."""
POLISH_MIN_STEP = 2.0**-20
"""The shortest damped step tried: a shorter one ends the polish."""
POLISH_STALL = 0.9
"""A Newton run stops once a step leaves :math:`\\|F\\|_2` above 0.9 times what it was (above the rounding level of
:data:`POLISH_FLOOR`): a crawl means a misread face or a singular system."""
POLISH_STALL_LARGE = 0.2
""":data:`POLISH_STALL` from :data:`POLISH_LARGE` unknowns on: a run must converge faster than linearly at ratio
1/4 (Newton at a singular root crawls at 1/2 or 1/4)."""
POLISH_ACCEPT = 1e-11
"""The largest KKT residual (:func:`kkt_residual`) of an accepted polished point."""
POLISH_LARGE = 5_000
"""From this many unknowns on, a Newton step is factorised with its dense rows and columns apart
(``newton_solve.Factors``; below it, SuperLU's own ordering), no retries are made (:data:`POLISH_RETRIES`) and a run
stops at :data:`POLISH_STALL_LARGE`."""

POLISH_MAX_MOVE = 1e-2
"""The largest relative move :math:`\\|x_{\\text{polished}} - x\\|_\\infty / \\max(1, \\|x\\|_\\infty)` accepted."""


@dataclass
class Polished:
    """The result of :func:`polish`: the point to use (polished if ``accepted``, else the one given)."""

    x: np.ndarray
    z: np.ndarray
    accepted: bool
    residual_before: float
    residual_after: float
    reason: str


class _Faces:
    """The face equations of :func:`faces`, vectorised: rows where ``s = 0``, rows where ``z = 0``, and the
    boundary blocks (first row, dimension, cone, side solved for at ``s``)."""

    def __init__(self, cones: Sequence[Cone], blocks: list, s: np.ndarray):
        s_rows, z_rows, self.boundary = [], [], []
        start = 0
        for cone, face in zip(cones, blocks):
            rows = np.arange(start, start + cone.dim)
            if cone.kind is ConeKind.NONNEG:
                s_rows.append(rows[face])
                z_rows.append(rows[~face])
            elif cone.kind is ConeKind.ZERO or face == "apex":
                s_rows.append(rows)
            elif face == "interior":
                z_rows.append(rows)
            elif face in ("edge0", "edge1"):  # s_0 = s_2 = 0, z_1 = 0 (or s_1 = s_2 = 0, z_0 = 0)
                free = 1 if face == "edge0" else 0
                s_rows.append(rows[[1 - free, 2]])
                z_rows.append(rows[[free]])
            else:
                self.boundary.append((start, cone.dim, cone, solve_for(cone, s[start:start + cone.dim])))
            start += cone.dim
        self.m = start
        self.s_rows = np.concatenate(s_rows) if s_rows else np.zeros(0, dtype=int)
        self.z_rows = np.concatenate(z_rows) if z_rows else np.zeros(0, dtype=int)
        unknown = np.ones(start, dtype=bool)
        unknown[self.z_rows] = False
        self.z_unknown = np.flatnonzero(unknown)
        """The rows whose :math:`z_i` is an unknown of the Newton system (:func:`_reduce`): every row but the
        ``z_i = 0`` rows, whose step is :math:`-z_i`."""
        self.boundary_rows: np.ndarray | None = None
        """The rows of the boundary blocks, their block (``boundary_block``) and their rows of :math:`A`
        (``boundary_A``): read by the first :func:`_jacobian`."""
        self.boundary_block: np.ndarray | None = None
        self.boundary_A: sp.csr_matrix | None = None
        self.position = np.cumsum(unknown) - 1
        """For a row ``i`` of :attr:`z_unknown`, ``position[i]`` is its place among the face rows of the Newton
        system."""
        self.pin_rows = self.pin_cols = np.zeros(0, dtype=np.int64)
        self.pin_coef = np.zeros(0)
        self.x_kept: np.ndarray | None = None
        """The columns whose :math:`x_j` is an unknown of the Newton system (``None``: every column)."""
        self.x_map: np.ndarray | None = None
        """For a column ``j``, its place among :attr:`x_kept` (-1 for a pinned column)."""

    def pin(self, A: sp.csr_matrix, nx: int) -> None:
        """Pin the columns of the active rows of one entry, :math:`s_i = b_i - a_i x_j = 0` (an active bound):
        :math:`x_j = b_i / a_i` is held, and the row, the column and its stationarity row leave the Newton system
        (:func:`_fixed_jacobian`; :math:`\\Delta z_i` from :func:`_expand`). One row per column (the last, as
        :func:`_snap_bounds`); not a column of a boundary block, whose step the line search damps."""
        rows = self.s_rows[np.diff(A.indptr)[self.s_rows] == 1]
        cols, coef = A.indices[A.indptr[rows]].astype(np.int64), A.data[A.indptr[rows]]
        keep = coef != 0
        if self.boundary:
            block_rows = np.concatenate([np.arange(start, start + d) for start, d, _, _ in self.boundary])
            keep &= ~np.isin(cols, A[block_rows].indices)
        rows, cols, coef = rows[keep], cols[keep], coef[keep]
        _, last = np.unique(cols[::-1], return_index=True)
        chosen = np.sort(len(cols) - 1 - last)
        if not len(chosen):
            return
        self.pin_rows, self.pin_cols, self.pin_coef = rows[chosen], cols[chosen], coef[chosen]
        x_map = np.zeros(nx, dtype=np.int32)
        x_map[self.pin_cols] = -1
        self.x_kept = np.flatnonzero(x_map == 0)
        x_map[self.x_kept] = np.arange(len(self.x_kept))
        self.x_map = x_map
        free = np.zeros(self.m, dtype=bool)
        free[self.z_unknown] = True
        free[self.pin_rows] = False
        self.z_unknown = np.flatnonzero(free)
        self.position = np.cumsum(free) - 1

    def columns(self, M: sp.csr_matrix) -> sp.csr_matrix:
        """``M`` without the pinned columns (columns renumbered as :attr:`x_kept`)."""
        if self.x_map is None or self.x_kept is None:  # both set by pin, or neither
            return M
        M = sp.csr_matrix(M)
        new = self.x_map[M.indices]
        kept = new >= 0  # a mask and 32-bit columns: fewer and smaller new arrays (1M entries of A at 10^5 points)
        starts = np.concatenate([[0], np.cumsum(kept, dtype=np.int64)])[M.indptr]
        return sp.csr_matrix((M.data[kept], new[kept], starts), shape=(M.shape[0], len(self.x_kept)))


def _residual(P: sp.csr_matrix, q: np.ndarray, A: sp.csr_matrix, b: np.ndarray, f: _Faces, x: np.ndarray, z: np.ndarray,
              mu: np.ndarray) -> np.ndarray:
    """The equations of the module docstring at ``(x, z, mu)`` (``FloatingPointError`` off a boundary's domain)."""
    nx, m, nb = len(x), len(z), len(mu)
    s = b - A @ x
    F = np.zeros(nx + m + nb)
    F[:nx] = P @ x + q + A.T @ z
    F[nx + f.s_rows] = s[f.s_rows]
    F[nx + f.z_rows] = z[f.z_rows]
    for k, (start, d, cone, side) in enumerate(f.boundary):
        block = slice(start, start + d)
        h, g, _ = boundary_function(cone, s[block], side)
        F[nx + start:nx + start + d] = z[block] - mu[k] * g
        F[nx + m + k] = h
    return F


def _reduce(A: sp.csr_matrix, f: _Faces, F: np.ndarray, nx: int) -> np.ndarray:
    """The right-hand side of the Newton system without the rows :math:`z_i = 0` (:func:`_fixed_jacobian`): their
    step is :math:`\\Delta z_i = -z_i = -F_i`, so their columns :math:`A_i^\\top \\Delta z_i` of the stationarity rows
    move to the right: :math:`(F_x - A_Z^\\top F_Z,\\ F_{\\text{other face rows}},\\ F_h)`."""
    m = f.m
    F_z = np.zeros(m)
    F_z[f.z_rows] = F[nx + f.z_rows]
    F_x = F[:nx] - A.T @ F_z
    return np.concatenate([F_x if f.x_kept is None else F_x[f.x_kept], F[nx + f.z_unknown], F[nx + m:]])


def _expand(f: _Faces, F: np.ndarray, step: np.ndarray, nx: int, P: sp.csr_matrix | None = None,
            A: sp.csr_matrix | None = None) -> np.ndarray:
    """The step of every unknown ``(x, z, mu)`` from the step of :func:`_reduce`'s system; with pinned columns
    (:meth:`_Faces.pin`, then ``P`` and ``A`` are needed) :math:`\\Delta x_j = 0` and :math:`\\Delta z_i` of the
    pinning row from the stationarity row :math:`j`: :math:`F_{x_j} + (P\\Delta x + A^\\top\\Delta z)_j = 0`."""
    k = len(f.z_unknown)
    kx = nx if f.x_kept is None else len(f.x_kept)
    dz = np.empty(f.m)
    dz[f.z_unknown] = step[kx:kx + k]
    dz[f.z_rows] = -F[nx + f.z_rows]
    if f.x_kept is None:
        return np.concatenate([step[:nx], dz, step[nx + k:]])
    dx = np.zeros(nx)
    dx[f.x_kept] = step[:kx]
    dz[f.pin_rows] = 0.0
    P, A = cast(sp.csr_matrix, P), cast(sp.csr_matrix, A)  # given with pinned columns (docstring)
    stationarity = F[:nx][f.pin_cols] + (P @ dx)[f.pin_cols] + (A.T @ dz)[f.pin_cols]
    dz[f.pin_rows] = -stationarity / f.pin_coef  # the pinning row's a_i is the only entry of z_i in row j
    return np.concatenate([dx, dz, step[kx + k:]])


def _jacobian(A: sp.csr_matrix, f: _Faces, s: np.ndarray, mu: np.ndarray, fixed: sp.csr_matrix) -> sp.csr_matrix:
    """``fixed`` (:func:`_fixed_jacobian`) plus the boundary blocks' terms at ``s = b - Ax`` and ``mu``, in one sparse
    assembly: on the boundary rows :math:`A_B` (read once per reading of the faces), the rows
    :math:`\\mu_k H_k A_k` of every block (one product of block-diagonal :math:`H` and :math:`A_B`), the columns
    :math:`-g_k` and the rows :math:`-g_k^\\top A_k` (one product :math:`A_B^\\top G`)."""
    if not f.boundary:
        return fixed
    n = fixed.shape[0]
    k_z, nb = len(f.z_unknown), len(mu)
    nx = n - k_z - nb
    if f.boundary_rows is None:  # the boundary blocks' rows of A, and the block of each
        f.boundary_rows = np.concatenate([np.arange(start, start + d) for start, d, _, _ in f.boundary])
        f.boundary_block = np.repeat(np.arange(nb), [d for _, d, _, _ in f.boundary])
        f.boundary_A = f.columns(sp.csr_matrix(A[f.boundary_rows]))  # a pinned column is in no boundary block
    # all three read just above, once per reading of the faces
    boundary_rows, boundary_block = f.boundary_rows, cast(np.ndarray, f.boundary_block)
    boundary_A = cast(sp.csr_matrix, f.boundary_A)
    gs, Hs = [], []
    for start, d, cone, side in f.boundary:
        _, g, H = boundary_function(cone, s[start:start + d], side)
        gs.append(g)
        Hs.append(H)
    g = np.concatenate(gs)
    HA = sp.coo_matrix(sp.block_diag(Hs, format="csr") @ boundary_A)  # d/dx (z - mu g(s)) = mu H A_k
    HA.data *= mu[boundary_block[HA.row]]
    G = sp.csr_matrix((g, (np.arange(len(g)), boundary_block)), shape=(len(g), nb))
    gA = sp.coo_matrix(-(boundary_A.T @ G).T)  # d/dx h(s) = -g'A_k
    gA.eliminate_zeros()
    rows = nx + f.position[boundary_rows]  # a boundary block's rows are consecutive unknowns
    var = sp.csr_matrix((np.concatenate([HA.data, -g, gA.data]),
                         (np.concatenate([rows[HA.row], rows, nx + k_z + gA.row]),
                          np.concatenate([HA.col, nx + k_z + boundary_block, gA.col]))), shape=(n, n))
    return fixed + var


def _fixed_jacobian(P: sp.csr_matrix, A: sp.csr_matrix, f: _Faces, nx: int, nb: int
                    ) -> tuple[sp.csr_matrix, np.ndarray]:
    """The Jacobian's terms that do not depend on the point, and the sign pattern of its regularisation, in the
    unknowns ``(x, z_i of the rows of f.z_unknown, mu)``: the rows :math:`z_i = 0` (every inactive row: half of
    (28)'s at 10^5 points) are an identity block, eliminated exactly (:func:`_reduce`, :func:`_expand`), so the
    matrix factorised is smaller by their rows and columns and by :math:`A_i^\\top` of each."""
    s_mask = np.zeros(f.m)
    s_mask[f.s_rows] = 1.0
    s_mask = s_mask[f.z_unknown]
    k = len(f.z_unknown)
    A_k = f.columns(A[f.z_unknown])
    if f.x_kept is not None:  # the pinned columns and their stationarity rows leave too (_Faces.pin)
        P = sp.csr_matrix(P)[f.x_kept][:, f.x_kept]
        nx = len(f.x_kept)
    below = A_k.copy()  # -diag(s_mask) A_k, its zero rows left out
    below.data *= -np.repeat(s_mask, np.diff(A_k.indptr))
    below.eliminate_zeros()
    # by rows of compressed blocks (no COO conversion of the whole matrix: 0.09 -> 0.05 s on (29) at 10^5 points);
    # the boundary blocks' rows z - mu g: identity on z
    fixed = sp.vstack([sp.hstack([sp.csr_matrix(P), A_k.T.tocsr(), sp.csr_matrix((nx, nb))], format="csr"),
                       sp.hstack([below, sp.diags(1.0 - s_mask, format="csr"), sp.csr_matrix((k, nb))], format="csr"),
                       sp.csr_matrix((nb, nx + k + nb))], format="csr")
    reg = np.concatenate([np.ones(nx), -s_mask, -np.ones(nb)])
    return fixed, reg


def _norm(v: np.ndarray) -> float:
    """:math:`\\|v\\|_2` by numpy's own loop, not BLAS, whose threads cost ms a product on a loaded machine."""
    return math.sqrt(float(np.einsum("i,i->", v, v)))


def _mu_start(f: _Faces, s: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Each boundary block's least-squares :math:`\\mu` in :math:`z \\approx \\mu \\nabla h(s)`."""
    out = []
    for start, d, cone, side in f.boundary:
        _, g, _ = boundary_function(cone, s[start:start + d], side)
        out.append(float(z[start:start + d] @ g) / float(g @ g))
    return np.array(out)


def _newton(P: sp.csr_matrix, q: np.ndarray, A: sp.csr_matrix, b: np.ndarray, cones: Sequence[Cone], blocks: list,
            x0: np.ndarray, z0: np.ndarray, pin: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Damped Newton on the equations of the faces ``blocks`` from ``(x0, z0)``: the last point reached (its
    bounds snapped, :func:`_snap_bounds`), the first full step's change of ``z``, and whether the signs are to be
    read there (the equations hold to rounding, or at scale the run stopped crawling: :data:`POLISH_STALL_LARGE`);
    ``FloatingPointError`` if the start is off a boundary's domain. ``pin``: :func:`polish`'s."""
    f = _Faces(cones, blocks, b - A @ x0)
    xk, zk, mu = x0.copy(), z0.copy(), _mu_start(f, b - A @ x0, z0)
    nx, m = len(xk), len(zk)
    large = nx + m + len(mu) >= POLISH_LARGE
    if large and pin:
        f.pin(A, nx)
        xk[f.pin_cols] = b[f.pin_rows] / f.pin_coef
    fixed, reg = _fixed_jacobian(P, A, f, nx, len(mu))
    F = _residual(P, q, A, b, f, xk, zk, mu)
    first_dz = np.zeros(m)
    kept: list | None = [] if large else None  # this run's first factors, reused by the next steps (POLISH_REUSE)
    floor = POLISH_FLOOR * max(1.0, float(np.max(np.abs(q), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
    stall = POLISH_STALL_LARGE if large else POLISH_STALL
    crawled = False
    for _ in range(POLISH_NEWTON):
        size = _norm(F)
        if size <= floor:
            break
        reduced = newton_step(_jacobian(A, f, b - A @ xk, mu, fixed), _reduce(A, f, F, nx), reg, kept)
        if reduced is None:
            break
        step = _expand(f, F, reduced, nx, P, A)
        if not first_dz.any():
            first_dz = step[nx:nx + m]
        t = 1.0
        while t >= POLISH_MIN_STEP:  # backtracking on ||F||: a boundary point must stay in the domain of h
            x_new, z_new, mu_new = xk + t * step[:nx], zk + t * step[nx:nx + m], mu + t * step[nx + m:]
            try:
                F_new = _residual(P, q, A, b, f, x_new, z_new, mu_new)
            except FloatingPointError:
                F_new = None
            if F_new is not None and _norm(F_new) < (1 - 1e-4 * t) * size:
                break
            t /= 2
        else:
            break
        xk, zk, mu, F = x_new, z_new, mu_new, F_new
        if _norm(F) > 0.5 * size and size <= 1e3 * floor:  # no longer converging: rounding
            break
        if _norm(F) > stall * size and size > 1e3 * floor:  # a crawl: misread faces or a singular system
            crawled = stall == POLISH_STALL_LARGE  # at scale: a row of the wrong sign crawls so (polish)
            break
    return _snap_bounds(A, b, f, xk), zk, first_dz, crawled or bool(_norm(F) <= 1e3 * floor)


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


def _snap_bounds(A: sp.csr_matrix, b: np.ndarray, f: _Faces, x: np.ndarray) -> np.ndarray:
    """``x`` with every variable of an active bound row (``s = 0`` on a row of one nonzero) set exactly to its bound:
    Newton leaves it at the bound up to rounding, possibly outside (a ``-1e-19`` under ``a**1.5`` is complex)."""
    x = x.copy()
    rows = f.s_rows[np.diff(A.indptr)[f.s_rows] == 1]
    cols = A.indices[A.indptr[rows]]
    _, last = np.unique(cols[::-1], return_index=True)  # a column of several such rows: the last one's bound
    rows = rows[len(rows) - 1 - last]
    x[A.indices[A.indptr[rows]]] = b[rows] / A.data[A.indptr[rows]]
    return x


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
    :math:`b - Ax = s \\in \\mathcal K` (``P`` its upper triangle, as Clarabel takes it); see the module docstring.

    The faces are read off ``(s, z)`` (:func:`faces`). When Newton's method on them does not reach an accepted
    point, the reading is retried with every ambiguous active row read inactive (:data:`POLISH_AMBIGUOUS`: next from
    :data:`POLISH_LARGE` unknowns on, last below), below :data:`POLISH_LARGE` unknowns with one doubtful active row
    read inactive at a time (:func:`_doubtful_rows`, :data:`POLISH_RETRIES` times), and after a run that solves its
    equations but leaves a row with the wrong sign, with those rows moved (:func:`_sign_corrections`); the cases
    that need each: ``docs/solvers.md``, "The polish at scale". At most ``attempts`` runs (default
    :data:`POLISH_ATTEMPTS`, :data:`POLISH_ATTEMPTS_HUGE` from :data:`POLISH_HUGE` unknowns on).
    ``accept``: the largest KKT residual of an accepted point (:data:`POLISH_ACCEPT`; a caller whose own point is worse
    may ask less). ``pin``: from :data:`POLISH_LARGE` unknowns on, the columns of active bounds are pinned at their
    bounds and leave the Newton system (:meth:`_Faces.pin`; ``ClarabelSettings.pin``)."""
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
            xk, zk, dz, converged = _newton(P_full, q, A, b, cones, blocks, x0, z0, pin)
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
