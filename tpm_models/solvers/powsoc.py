"""Power cones of a rational exponent written as second-order cones, exactly (as cvxpy's ``pnorm`` writes a rational
power), and the reductions on power cones of the Clarabel backend's runs, :class:`PowAsSoc` and
:class:`DropImpliedBounds` (why and when: ``docs/solvers.md``, "Power cones as second-order cones").

A block :math:`|s_2| \\le s_0^{\\alpha} s_1^{1-\\alpha}`, :math:`\\alpha = a/d` with :math:`d \\le`
:data:`POW_MAX_DENOMINATOR`, becomes :math:`s_0, s_1 \\ge 0` (``nonneg``) and :math:`s_2 - \\sigma = 0` (``zero``) in
the block's three rows (so every row index of the form keeps its place), :math:`\\rho \\ge |\\sigma|`, and
:math:`\\rho \\le (s_0^{a} s_1^{d-a} \\rho^{2^L-d})^{1/2^L}` as a binary tree of rotated cones :math:`g^2 \\le y z`
(the tree: "The tree of rotated cones" there). The new columns come after the form's own, the new rows after its
rows.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, cast

import numpy as np
import scipy.sparse as sp

from tpm_models.solvers.cones import Cone, ConeKind
from tpm_models.solvers.reductions import ConicProgram, ConicSolution, padded

POW_MAX_DENOMINATOR = 16
"""Largest denominator of an exponent :math:`\\alpha` written with second-order cones (p = 1.5, 3: 3; p = 1.2: 6)."""


def rational(alpha: float) -> Fraction | None:
    """``alpha`` as ``a/d`` with ``d <=`` :data:`POW_MAX_DENOMINATOR` when it is one to 1e-14, else ``None``."""
    frac = Fraction(alpha).limit_denominator(POW_MAX_DENOMINATOR)
    return frac if abs(float(frac) - alpha) <= 1e-14 and 0 < frac < 1 else None


def pow_as_soc_map(form: Any) -> tuple[ConicProgram, sp.csr_matrix | None]:
    """``form`` (a :class:`~tpm_models.solvers.reductions.ConicProgram` or anything with its fields) with every power
    cone of a rational exponent written as second-order cones (module docstring), and the map ``B`` back to
    ``form``'s rows: each new row, on ``form``'s own columns, is ``B`` times ``form``'s rows, so a dual ``z`` of the
    new form gives ``form`` the dual ``z[:m] + B.T @ z[m:]`` (:func:`dual_of_power_form`); ``form``'s program and
    ``None`` when it has no power cone to write."""
    starts = np.cumsum([0] + [c.dim for c in form.cones])
    # a pow cone has its alpha (Cone's check)
    powers = [(k, int(starts[k]), rational(cast(float, c.alpha))) for k, c in enumerate(form.cones)
              if c.kind is ConeKind.POW]
    targets = [(k, start, frac) for k, start, frac in powers if frac is not None]
    if not targets:
        return ConicProgram.of(form), None
    A = sp.csr_matrix(form.A)
    m0, n0 = A.shape
    cols: list[str] = []  # the new columns, named for the reader of this function
    extra: list[tuple[dict, float, dict]] = []  # rows appended: (A entries by column, b, rows of form)
    extra_cones: list[Cone] = []
    fixes: list[tuple[int, int]] = []  # (row, column): +1 entries added to the form's own rows

    def new_col(name: str) -> int:
        cols.append(name)
        return n0 + len(cols) - 1

    def row_handle(r: int) -> tuple[dict, float, dict]:
        lo, hi = A.indptr[r], A.indptr[r + 1]
        return dict(zip(A.indices[lo:hi].tolist(), A.data[lo:hi].tolist())), float(form.b[r]), {r: 1.0}

    def var_handle(c: int) -> tuple[dict, float, dict]:  # s = x_c: b = 0, A = -e_c
        return {c: -1.0}, 0.0, {}

    def combine(y: Any, z: Any, sign: float) -> tuple[dict, float, dict]:
        out, of = dict(y[0]), dict(y[2])
        for c, a in z[0].items():
            out[c] = out.get(c, 0.0) + sign * a
        for r, a in z[2].items():
            of[r] = of.get(r, 0.0) + sign * a
        return out, y[1] + sign * z[1], of

    def rotated(g: int, y: Any, z: Any) -> None:  # g^2 <= y z  <=>  (y + z, y - z, 2 g) in SOC(3)
        extra.extend([combine(y, z, 1.0), combine(y, z, -1.0), ({g: -2.0}, 0.0, {})])
        extra_cones.append(Cone(ConeKind.SOC, 3))

    cones = list(form.cones)
    for k, start, frac in targets:
        a, d = frac.numerator, frac.denominator
        sigma, rho = new_col(f"power cone {k}: sigma"), new_col(f"power cone {k}: rho")
        fixes.append((start + 2, sigma))  # s_2 - sigma = 0
        cones[k] = (Cone(ConeKind.NONNEG, 2), Cone(ConeKind.ZERO, 1))
        extra.extend([({rho: -1.0, sigma: 1.0}, 0.0, {}), ({rho: -1.0, sigma: -1.0}, 0.0, {})])  # rho >= |sigma|
        extra_cones.append(Cone(ConeKind.NONNEG, 2))
        size = 1 << max(1, math.ceil(math.log2(d)))
        # the leaves as (handle, how many): s_0 a times, s_1 d - a times, rho 2^L - d times
        level = [(row_handle(start), a), (row_handle(start + 1), d - a), (var_handle(rho), size - d)]
        while sum(count for _, count in level) > 2:
            nxt, single = [], []
            for handle, count in level:
                if count >= 2:  # sqrt(y y) = y: equal leaves pair into themselves, no cone
                    nxt.append((handle, count // 2))
                if count % 2:
                    single.append(handle)
            for y, z in zip(single[0::2], single[1::2]):  # an even number: the level's total is a power of 2
                g = new_col(f"power cone {k}: mean node")
                rotated(g, y, z)
                nxt.append((var_handle(g), 1))
            level = nxt
        y, z = [handle for handle, count in level for _ in range(count)]
        rotated(rho, y, z)

    flat: list[Cone] = []
    for c in cones:
        flat.extend(c if isinstance(c, tuple) else (c,))
    P, A_new, b, back = _assemble(form, A, len(cols), fixes, extra)
    return ConicProgram(P, np.concatenate([form.q, np.zeros(len(cols))]), A_new, b, flat + extra_cones), back


def _assemble(form: Any, A: sp.csr_matrix, new: int, fixes: list, extra: list
              ) -> tuple[sp.csc_matrix, sp.csc_matrix, np.ndarray, sp.csr_matrix]:
    """:func:`pow_as_soc_map`'s ``P``, ``A``, ``b`` and map back: ``new`` columns after ``form``'s, the ``+1``
    entries ``fixes`` (row, column) in its rows, and the rows ``extra`` (entries, b, rows of ``form``) after them."""
    m0, n0 = A.shape
    n = n0 + new
    fix_r, fix_c = (np.array(v, dtype=np.int64) for v in zip(*fixes))  # +1 at (row, sigma): s_2 - sigma = 0
    fixed = sp.csr_matrix((np.ones(len(fixes)), (fix_r, fix_c - n0)), shape=(m0, new))
    new_r, new_c, new_d = [], [], []
    back_r, back_c, back_d = [], [], []
    for i, (row, _, of) in enumerate(extra):
        for c, a in row.items():
            new_r.append(i)
            new_c.append(c)
            new_d.append(a)
        for r, a in of.items():
            back_r.append(i)
            back_c.append(r)
            back_d.append(a)
    below = sp.csr_matrix((new_d, (new_r, new_c)), shape=(len(extra), n))
    A_new = sp.vstack([sp.hstack([A, fixed], format="csr"), below], format="csc")
    A_new.eliminate_zeros()
    b = np.concatenate([np.asarray(form.b, dtype=float), np.array([rhs for _, rhs, _ in extra], dtype=float)])
    return padded(form.P, new), A_new, b, sp.csr_matrix((back_d, (back_r, back_c)), shape=(len(extra), m0))


def dual_of_power_form(form: Any, back: sp.csr_matrix, x: np.ndarray, z: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """A primal-dual point ``(x, z)`` of :func:`pow_as_soc_map`'s form as one of ``form`` (its power cones'):
    ``x`` on ``form``'s columns, and ``z[:m] + back.T @ z[m:]``, which keeps :math:`Px + q + A^\\top z` on those
    columns unchanged."""
    m0, n0 = form.A.shape
    return np.asarray(x[:n0], dtype=float), np.asarray(z[:m0] + back.T @ z[m0:], dtype=float)


def implied_bounds(A: sp.spmatrix, b: np.ndarray, cones: list[Cone]) -> np.ndarray:
    """The bound rows :math:`x_c \\ge 0` of ``cones``' ``nonneg`` blocks (one nonzero, negative, and :math:`b = 0`)
    that the other rows imply, in increasing order: :math:`x_c` a power cone's :math:`s_0` or :math:`s_1` on its own;
    or a row :math:`\\alpha x_c - \\beta y \\ge 0` (:math:`\\alpha, \\beta > 0`, :math:`b = 0`) with such a :math:`y`
    ((23)'s :math:`z_j \\ge \\tau_j`); or two rows :math:`\\alpha x_c \\mp \\beta w \\ge 0` (:math:`x_c \\ge |w|` up to
    scale). Each implication uses rows of two or more nonzeros and cones only, never another bound, so every row
    returned can be dropped at once (:func:`without_rows`) and the feasible set stays the same. The bounds a
    second-order cone implies are kept (why: ``docs/solvers.md``, "The implied bounds left out of Clarabel's run")."""
    A = sp.csr_matrix(A)
    nnz = np.diff(A.indptr)
    starts = np.cumsum([0] + [c.dim for c in cones])
    first = A.indices[np.minimum(A.indptr[:-1], max(A.nnz - 1, 0))] if A.nnz else np.zeros(len(b), dtype=int)
    lead = A.data[np.minimum(A.indptr[:-1], max(A.nnz - 1, 0))] if A.nnz else np.zeros(len(b))
    alone = (nnz == 1) & (b == 0) & (lead < 0)  # s_r = |a| x_c
    in_cone = np.zeros(A.shape[1], dtype=bool)
    nonneg = np.zeros(len(b), dtype=bool)
    for k, cone in enumerate(cones):
        if cone.kind is ConeKind.NONNEG:
            nonneg[starts[k]:starts[k + 1]] = True
        elif cone.kind is ConeKind.POW:
            for r in (starts[k], starts[k] + 1):
                if alone[r]:
                    in_cone[first[r]] = True
    implied = in_cone.copy()
    pairs = np.flatnonzero(nonneg & (nnz == 2) & (b == 0))
    if pairs.size:
        at = A.indptr[pairs]
        c0, c1, a0, a1 = A.indices[at], A.indices[at + 1], A.data[at], A.data[at + 1]
        n = A.shape[1]
        above, below = [], []  # the pairs (c, w) of rows x_c >= k w and of rows x_c >= -k w (k > 0), as c n + w
        for c, w, ac, aw in ((c0, c1, a0, a1), (c1, c0, a1, a0)):
            over = ac < 0  # s = |ac| x_c - aw w >= 0
            implied[c[over & (aw > 0) & in_cone[w]]] = True
            above.append(c[over & (aw > 0)].astype(np.int64) * n + w[over & (aw > 0)])
            below.append(c[over & (aw < 0)].astype(np.int64) * n + w[over & (aw < 0)])
        both = np.intersect1d(np.concatenate(above), np.concatenate(below))  # x_c >= |w| up to scale: one w
        implied[both // n] = True
    return np.flatnonzero(alone & nonneg & implied[first])


def without_rows(A: sp.spmatrix, b: np.ndarray, cones: list[Cone], rows: np.ndarray
                 ) -> tuple[sp.csc_matrix, np.ndarray, list[Cone], np.ndarray]:
    """``A``, ``b`` and ``cones`` without ``rows`` (rows of ``nonneg`` blocks), and the rows kept."""
    keep = np.ones(len(b), dtype=bool)
    keep[rows] = False
    out: list[Cone] = []
    start = 0
    for cone in cones:
        dim = int(keep[start:start + cone.dim].sum()) if cone.kind is ConeKind.NONNEG else cone.dim
        if dim:
            out.append(Cone(ConeKind.NONNEG, dim) if cone.kind is ConeKind.NONNEG else cone)
        start += cone.dim
    kept = np.flatnonzero(keep)
    return sp.csc_matrix(sp.csr_matrix(A)[kept]), np.asarray(b, dtype=float)[kept], out, kept


class DropImpliedBounds:
    """Leave out the bound rows :math:`x_c \\ge 0` that a power cone and the rows beside it imply
    (:func:`implied_bounds`). Back: :math:`z = 0` on those rows, :math:`s = b - Ax` on the
    whole program. Where such a bound and the rows implying it are active together (near :math:`w_j = 0`) their
    multipliers are not unique, and the polish's readings give them the wrong signs
    (``docs/notes/bench-scale-history.md``, "Clarabel, the polish and the certificate")."""

    def __init__(self) -> None:
        self.program: ConicProgram | None = None
        self.kept: np.ndarray | None = None
        self.dropped = 0

    def forward(self, program: ConicProgram) -> ConicProgram:
        rows = implied_bounds(program.A, program.b, program.cones)
        if not rows.size:
            return program
        self.program, self.dropped = program, int(rows.size)
        A, b, cones, self.kept = without_rows(program.A, program.b, program.cones, rows)
        return ConicProgram(program.P, program.q, A, b, cones)

    def back(self, solution: ConicSolution) -> ConicSolution:
        if self.kept is None or self.program is None:  # set together by forward
            return solution
        z = np.zeros(self.program.shape[0])
        z[self.kept] = solution.z
        return ConicSolution(solution.x, self.program.slack(solution.x), z)

    @property
    def note(self) -> str:
        return f"; {self.dropped} implied bounds left out of Clarabel's run" if self.dropped else ""


class PowAsSoc:
    """Write the power cones of a rational exponent as second-order cones (:func:`pow_as_soc_map`): new columns and
    rows after the program's own. Back: the first columns, :math:`s = b - Ax`, and :math:`z_{1..m} + B^\\top z_{m+1..}`
    (:func:`dual_of_power_form`), which keeps the stationarity on the program's columns."""

    def __init__(self) -> None:
        self.program: ConicProgram | None = None
        self.map: sp.csr_matrix | None = None
        self.columns = 0

    def forward(self, program: ConicProgram) -> ConicProgram:
        soc, self.map = pow_as_soc_map(program)
        if self.map is None:
            return program
        self.program, self.columns = program, program.shape[1]
        return soc

    def back(self, solution: ConicSolution) -> ConicSolution:
        if self.map is None or self.program is None:  # set together by forward
            return solution
        x, z = dual_of_power_form(self.program, self.map, solution.x, solution.z)
        return ConicSolution(x, self.program.slack(x), z)

    @property
    def note(self) -> str:
        return f"; power cones written as second-order cones ({self.columns:,} columns)" if self.map is not None else ""
