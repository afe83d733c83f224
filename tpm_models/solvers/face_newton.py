"""Newton's method on the equations of one reading of the cone faces (:func:`newton_run`, for
:mod:`tpm_models.solvers.polish`). Clarabel's form: :math:`\\min \\tfrac12x^\\top Px + q^\\top x` s.t.
:math:`s = b - Ax \\in \\mathcal K`, dual :math:`z \\in \\mathcal K^*`; the unknowns :math:`(x, z, \\mu)`; the equations
:math:`Px + q + A^\\top z = 0` and, per block (``polish.faces`` reads the face off an interior point):

============================  =========================================================================
face                          equations
============================  =========================================================================
``zero`` block, apex          :math:`s = 0`
``nonneg`` row                :math:`s_i = 0` (active) or :math:`z_i = 0` (inactive)
cone, interior                :math:`z = 0`
power cone, edge              ``edge0``: :math:`s_0 = s_2 = 0,\\ z_1 = 0`; ``edge1``: :math:`s_1 = s_2 = 0,\\ z_0 = 0`
cone, boundary                :math:`h(s) = 0,\\ z = \\mu\\nabla h(s)` (:func:`boundary_function`), one more unknown
============================  =========================================================================

:math:`h` is positively homogeneous of degree 1, so on the boundary :math:`z \\in \\mathcal K^*` with
:math:`s^\\top z = 0` is a nonnegative multiple of :math:`\\nabla h(s)`. Each step is solved by
:func:`~tpm_models.solvers.newton_solve.newton_step` (regularised, refined: the step of least change where the
equations are singular). Why and measured: ``docs/solvers.md``, "The polish at scale".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from tpm_models.solvers.cones import Cone, ConeKind
from tpm_models.solvers.newton_solve import newton_step

POLISH_NEWTON = 20
"""Newton steps at most (quadratic convergence near the solution; damped steps farther away)."""
POLISH_FLOOR = 1e-15
"""Newton stops once :math:`\\|F\\|_2` is below 1e-15 times the largest of 1, :math:`|q|` and :math:`|b|`, or once a
step no longer halves it below 1e3 times that (rounding)."""
POLISH_MIN_STEP = 2.0**-20
"""The shortest damped step tried: a shorter one ends the run."""
POLISH_STALL = 0.9
"""A run stops once a step leaves :math:`\\|F\\|_2` above 0.9 times what it was (a misread face or a singular
system), above the rounding level of :data:`POLISH_FLOOR`."""
POLISH_STALL_LARGE = 0.2
""":data:`POLISH_STALL` from :data:`POLISH_LARGE` unknowns on."""
POLISH_LARGE = 5_000
"""From this many unknowns on, a run pins the active bounds (:meth:`_Faces.pin`), keeps its first factors
(``newton_solve.Factors``) and stops at :data:`POLISH_STALL_LARGE`; the polish makes no single-row retries."""


def boundary_function(cone: Cone, s: np.ndarray, solve_for: int = 0) -> tuple[float, np.ndarray, np.ndarray]:
    """:math:`h(s)`, :math:`\\nabla h(s)`, :math:`\\nabla^2 h(s)` of a cone block's boundary :math:`h(s) = 0`
    (:math:`h \\ge 0` inside, positively homogeneous of degree 1): :math:`h = s_0 - \\|s_{1:}\\|` for a second-order
    cone; for a power cone :math:`h = s_u - |s_2|^k s_v^{1-k}`, :math:`u` = ``solve_for`` (0: :math:`k = 1/\\alpha`;
    1: :math:`k = 1/(1-\\alpha)`), :math:`v` the other (derivatives of order 1 near the edge, where those of
    :math:`s_0^\\alpha s_1^{1-\\alpha} - |s_2|` reach 1e5). ``FloatingPointError`` off its domain."""
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


class _Faces:
    """The face equations of a reading: rows where ``s = 0`` (``s_rows``), where ``z = 0`` (``z_rows``), and the
    boundary blocks (first row, dimension, cone, the side :func:`boundary_function` solves for). ``z_unknown``: the
    rows whose :math:`z_i` is an unknown of the Newton system, ``position`` their place; ``x_kept``, ``x_map``: its
    columns when some are pinned (:meth:`pin`; else ``None``)."""

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
                side = 0 if cone.kind is not ConeKind.POW or s[start] <= s[start + 1] else 1
                self.boundary.append((start, cone.dim, cone, side))
            start += cone.dim
        self.m = start
        self.s_rows = np.concatenate(s_rows) if s_rows else np.zeros(0, dtype=int)
        self.z_rows = np.concatenate(z_rows) if z_rows else np.zeros(0, dtype=int)
        unknown = np.ones(start, dtype=bool)
        unknown[self.z_rows] = False
        self.z_unknown = np.flatnonzero(unknown)
        self.position = np.cumsum(unknown) - 1
        self.boundary_rows: np.ndarray = np.zeros(0, dtype=int)  # set with the two below by the first _jacobian
        self.boundary_block: np.ndarray = np.zeros(0, dtype=int)
        self.boundary_A: sp.csr_matrix | None = None
        self.pin_rows = self.pin_cols = np.zeros(0, dtype=np.int64)
        self.pin_coef = np.zeros(0)
        self.x_kept: np.ndarray | None = None
        self.x_map: np.ndarray | None = None

    def pin(self, A: sp.csr_matrix, nx: int) -> None:
        """Pin the column of each active row of one entry, :math:`s_i = b_i - a_i x_j = 0` (an active bound; the last
        such row of a column, not a column of a boundary block): :math:`x_j = b_i / a_i` is held, and the row, the
        column and its stationarity row leave the Newton system (:math:`\\Delta z_i` from :func:`_expand`)."""
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
        kept = new >= 0  # a mask and 32-bit columns: fewer and smaller new arrays
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


def _expand(f: _Faces, F: np.ndarray, step: np.ndarray, nx: int, P: sp.csr_matrix, A: sp.csr_matrix) -> np.ndarray:
    """The step of every unknown ``(x, z, mu)`` from the step of :func:`_reduce`'s system; with pinned columns
    (:meth:`_Faces.pin`) :math:`\\Delta x_j = 0` and :math:`\\Delta z_i` of the pinning row from the stationarity row
    :math:`j`: :math:`F_{x_j} + (P\\Delta x + A^\\top\\Delta z)_j = 0`."""
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
    stationarity = F[:nx][f.pin_cols] + (P @ dx)[f.pin_cols] + (A.T @ dz)[f.pin_cols]
    dz[f.pin_rows] = -stationarity / f.pin_coef  # the pinning row's a_i is the only entry of z_i in row j
    return np.concatenate([dx, dz, step[kx + k:]])


def _jacobian(A: sp.csr_matrix, f: _Faces, s: np.ndarray, mu: np.ndarray, fixed: sp.csr_matrix) -> sp.csr_matrix:
    """``fixed`` (:func:`_fixed_jacobian`) plus the boundary blocks' terms at ``s = b - Ax`` and ``mu`` in one sparse
    assembly: the rows :math:`\\mu_k H_k A_k`, the columns :math:`-g_k` and the rows :math:`-g_k^\\top A_k`."""
    if not f.boundary:
        return fixed
    n = fixed.shape[0]
    k_z, nb = len(f.z_unknown), len(mu)
    nx = n - k_z - nb
    if f.boundary_A is None:  # the boundary blocks' rows of A, and the block of each
        f.boundary_rows = np.concatenate([np.arange(start, start + d) for start, d, _, _ in f.boundary])
        f.boundary_block = np.repeat(np.arange(nb), [d for _, d, _, _ in f.boundary])
        f.boundary_A = f.columns(sp.csr_matrix(A[f.boundary_rows]))  # a pinned column is in no boundary block
    boundary_rows, boundary_block, boundary_A = f.boundary_rows, f.boundary_block, f.boundary_A
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
    unknowns ``(x, z of f.z_unknown, mu)`` (the rows :math:`z_i = 0` and the pinned columns eliminated exactly)."""
    s_mask = np.zeros(f.m)
    s_mask[f.s_rows] = 1.0
    s_mask = s_mask[f.z_unknown]
    k = len(f.z_unknown)
    A_k = f.columns(A[f.z_unknown])
    if f.x_kept is not None:  # the pinned columns and their stationarity rows leave too
        P = sp.csr_matrix(P)[f.x_kept][:, f.x_kept]
        nx = len(f.x_kept)
    below = A_k.copy()  # -diag(s_mask) A_k, its zero rows left out
    below.data *= -np.repeat(s_mask, np.diff(A_k.indptr))
    below.eliminate_zeros()
    # by rows of compressed blocks (no COO conversion of the whole matrix); the boundary rows z - mu g: identity on z
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


def newton_run(P: sp.csr_matrix, q: np.ndarray, A: sp.csr_matrix, b: np.ndarray, cones: Sequence[Cone], blocks: list,
               x0: np.ndarray, z0: np.ndarray, pin: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Damped Newton on the equations of the faces ``blocks`` from ``(x0, z0)`` (``P`` whole, ``A`` CSR): the last
    point reached (its bounds snapped), the first full step's change of ``z``, and whether the signs are to be read
    there (the equations hold to rounding, or at scale the run crawled); ``FloatingPointError`` if the start is off a
    boundary's domain. ``pin``: pin the active bounds from :data:`POLISH_LARGE` unknowns on."""
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
