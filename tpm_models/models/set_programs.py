"""The support of any set the library knows as one convex program: the exact separation oracle of the intersections
that no closed form, polyhedron or KKT root covers (an ellipsoid, scenarios, a factor model, a symmetric budget
among the members).

:func:`support_program` writes :math:`\\max g^\\top\\delta` s.t. :math:`\\delta\\in\\mathcal U` with the set's own
description in :math:`\\delta` and auxiliary variables (each member of an intersection on the same :math:`\\delta`,
each factor of a product on its slice):

=========================  ===========================================================================================
set                        rows
=========================  ===========================================================================================
``Box(l, u)``              :math:`l\\le\\delta\\le u`
``NormBall(p, r)``         :math:`p=\\infty`: :math:`|\\delta_j|\\le r`; :math:`p=1`: :math:`|\\delta_j|\\le t_j`,
                           :math:`\\sum t_j\\le r`; :math:`p=2`: the cone :math:`(r,\\delta)`
``Ellipsoid(S, r)``        :math:`\\delta = Lu`, the cone :math:`(r, u)`, :math:`S = LL^\\top` (eigenvectors scaled,
                           a singular :math:`S` keeps only its range)
``Budget(d, G)``           :math:`\\delta = d\\odot z`, :math:`0\\le z\\le1`, :math:`\\sum z\\le\\Gamma`
``SymmetricBudget(d, G)``  :math:`|\\delta_j|\\le t_j\\le d_j`, :math:`\\sum_j t_j/d_j\\le\\Gamma`
``Polyhedron(A, b)``       :math:`A\\delta\\le b`
``Scenarios(P)``           :math:`\\delta = P^\\top\\lambda`, :math:`\\lambda\\ge0`, :math:`\\sum\\lambda = 1`
                           (the hull: a row linear in :math:`\\delta` holds on the scenarios iff on their hull)
``FactorModel(Psi, beta)`` :math:`\\delta=\\Psi\\xi`, :math:`-1\\le\\xi\\le1`, :math:`|\\sum\\xi|\\le\\beta F`
=========================  ===========================================================================================

Without a cone the program is an LP, solved by HiGHS's dual simplex (a vertex, exact to
:data:`~tpm_models.models.uncertainty.SUPPORT_LP_TOL`); with one, by Clarabel at the tolerances of
:data:`CONIC_SETTINGS`, whose accuracy :data:`CONIC_SUPPORT_TOL` the cutting planes then accept as the separation's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tpm_models.models.uncertainty import (
    SUPPORT_LP_TOL,
    Box,
    Budget,
    Ellipsoid,
    NormBall,
    Polyhedron,
    SymmetricBudget,
    UncertaintySet,
)

CONIC_SETTINGS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "tol_ktratio": 1e-10,
                  "max_iter": 400}
"""Clarabel's settings for a support program with a cone (its defaults are 1e-8)."""

CONIC_SUPPORT_TOL = 1e-9
"""The absolute accuracy claimed for a support computed by Clarabel (unit-sized data): measured against the KKT root
of a diagonal ellipsoid cut by a box on 200 random directions of norm 0.1 to 10 (``tests/models/test_set_programs.py``
holds four), the worst error was 8.9e-13 relative to :math:`1+|\\sigma|`; the margin of three orders covers an end
``AlmostSolved``. The cutting planes stop at this violation for such a set (``CUT_TOL`` is 1e-11); the verdict's
tolerances are 1e-6."""


@dataclass
class Program:
    """Rows :math:`A z + s = b`, :math:`s` in a product of cones (Clarabel's form), over columns :math:`z`, the
    first :math:`n` of which are :math:`\\delta`."""

    n: int
    columns: int = 0
    blocks: list = field(default_factory=list)
    """(list of (first column, matrix), b, cone): cone ``"zero"``, ``"nonneg"`` or ``"soc"``."""

    def __post_init__(self):
        self.columns = self.n

    def new(self, k: int) -> int:
        """``k`` new columns; their first index."""
        first, self.columns = self.columns, self.columns + k
        return first

    def rows(self, terms: list[tuple[int, np.ndarray]], b: ArrayLike, cone: str) -> None:
        self.blocks.append(([(c, np.atleast_2d(np.asarray(M, float))) for c, M in terms], np.atleast_1d(
            np.asarray(b, float)), cone))

    @property
    def conic(self) -> bool:
        return any(cone == "soc" for _, _, cone in self.blocks)

    def matrix(self, blocks: list) -> tuple[Any, np.ndarray]:
        """The stacked rows of ``blocks`` (a CSC matrix with :attr:`columns` columns) and their right-hand side."""
        from scipy import sparse

        mats, rhs = [], []
        for terms, b, _ in blocks:
            M = np.zeros((len(b), self.columns))
            for c, sub in terms:
                M[:, c:c + sub.shape[1]] += sub
            mats.append(M)
            rhs.append(b)
        if not mats:
            return sparse.csc_matrix((0, self.columns)), np.zeros(0)
        return sparse.csc_matrix(np.vstack(mats)), np.concatenate(rhs)


def describe(prog: Program, uset: UncertaintySet, first: int, n: int) -> None:
    """Add the rows that say :math:`\\delta\\in` ``uset``, :math:`\\delta` the columns ``first .. first + n - 1``: the
    sets of :mod:`tpm_models.models.uncertainty` here, any other by its own ``program_rows(prog, first, n)`` (the
    composite sets of :mod:`tpm_models.models.composite_sets`, which import this module)."""
    eye = np.eye(n)
    if isinstance(uset, Box) or isinstance(uset, NormBall) and np.isinf(uset.p):
        lo, up = uset.bounds(n) if isinstance(uset, Box) else (np.full(n, -uset.radius), np.full(n, uset.radius))
        prog.rows([(first, np.vstack([eye, -eye]))], np.r_[up, -lo], "nonneg")
    elif isinstance(uset, NormBall) and uset.p == 2.0:
        prog.rows([(first, np.vstack([np.zeros((1, n)), -eye]))], np.r_[uset.radius, np.zeros(n)], "soc")
    elif isinstance(uset, NormBall) and uset.p == 1.0:
        t = prog.new(n)
        prog.rows([(first, np.vstack([eye, -eye])), (t, np.vstack([-eye, -eye]))], np.zeros(2 * n), "nonneg")
        prog.rows([(t, np.ones((1, n)))], [uset.radius], "nonneg")
    elif isinstance(uset, NormBall):
        raise ValueError(f"no exact support program for an l_{uset.p:g} ball among other sets (p = 1, 2 or inf)")
    elif isinstance(uset, Ellipsoid):
        values, vectors = np.linalg.eigh(np.asarray(uset.shape, float))
        keep = values > 1e-14 * max(1.0, float(values.max(initial=0.0)))
        L = vectors[:, keep] * np.sqrt(values[keep])
        k = L.shape[1]
        if k == 0:
            prog.rows([(first, eye)], np.zeros(n), "zero")
            return
        u = prog.new(k)
        prog.rows([(first, eye), (u, -L)], np.zeros(n), "zero")
        prog.rows([(u, np.vstack([np.zeros((1, k)), -np.eye(k)]))], np.r_[uset.radius, np.zeros(k)], "soc")
    elif isinstance(uset, Budget):
        d = np.broadcast_to(np.asarray(uset.deviation, float), (n,))
        z = prog.new(n)
        prog.rows([(first, eye), (z, -np.diag(d))], np.zeros(n), "zero")
        prog.rows([(z, np.vstack([eye, -eye, np.ones((1, n))]))], np.r_[np.ones(n), np.zeros(n), uset.gamma],
                  "nonneg")
    elif isinstance(uset, SymmetricBudget):
        d = np.broadcast_to(np.asarray(uset.deviation, float), (n,))
        inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
        t = prog.new(n)
        prog.rows([(first, np.vstack([eye, -eye])), (t, np.vstack([-eye, -eye]))], np.zeros(2 * n), "nonneg")
        prog.rows([(t, np.vstack([eye, inv[None, :]]))], np.r_[d, uset.gamma], "nonneg")
    elif isinstance(uset, Polyhedron):
        A, b = uset.arrays()
        if A.shape[1] != n:
            raise ValueError(f"a polyhedron in R^{A.shape[1]} cannot perturb {n} coefficients")
        prog.rows([(first, A)], b, "nonneg")
    elif hasattr(uset, "program_rows"):  # the composite sets (composite_sets.py) write their own
        uset.program_rows(prog, first, n)
    else:
        raise ValueError(f"no support program for the set {type(uset).__name__}")


def support_program(g: ArrayLike, uset: UncertaintySet, what: str = "the set") -> tuple[float, np.ndarray]:
    """:math:`\\max_{\\delta\\in\\mathcal U} g^\\top\\delta` and a maximiser, by the program of the module docstring:
    HiGHS for an LP, Clarabel with a cone. ``ValueError`` naming ``what`` when the set is empty (or unbounded)."""
    from scipy import optimize

    g = np.asarray(g, float)
    n = len(g)
    prog = Program(n)
    describe(prog, uset, 0, n)
    c = np.zeros(prog.columns)
    c[:n] = -g
    if not prog.conic:
        eq = [blk for blk in prog.blocks if blk[2] == "zero"]
        ub = [blk for blk in prog.blocks if blk[2] == "nonneg"]
        A_eq, b_eq = prog.matrix(eq) if eq else (None, None)
        A_ub, b_ub = prog.matrix(ub) if ub else (None, None)
        res = optimize.linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=[(None, None)] * prog.columns,
                               method="highs-ds", options={"primal_feasibility_tolerance": SUPPORT_LP_TOL,
                                                           "dual_feasibility_tolerance": SUPPORT_LP_TOL})
        if res.status == 2:
            raise ValueError(f"{what} is empty: its sets have no point in common")
        if res.status == 3:
            raise ValueError(f"{what} is unbounded: bound every coordinate")
        if res.status != 0:
            raise RuntimeError(f"the support LP of {what} failed: {res.message}")
        delta = np.asarray(res.x[:n], float)
        return float(g @ delta), delta
    return _conic(prog, c, g, what)


def _conic(prog: Program, c: np.ndarray, g: np.ndarray, what: str) -> tuple[float, np.ndarray]:
    import clarabel
    from scipy import sparse

    order = {"zero": 0, "nonneg": 1, "soc": 2}
    blocks = sorted(prog.blocks, key=lambda blk: order[blk[2]])  # stable: each cone's rows stay together
    A, b = prog.matrix(blocks)
    cones = []
    for _, rhs, cone in blocks:
        if cone == "zero":
            cones.append(clarabel.ZeroConeT(len(rhs)))
        elif cone == "nonneg":
            cones.append(clarabel.NonnegativeConeT(len(rhs)))
        else:
            cones.append(clarabel.SecondOrderConeT(len(rhs)))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    for key, value in CONIC_SETTINGS.items():
        setattr(settings, key, value)
    P = sparse.csc_matrix((prog.columns, prog.columns))
    solution = clarabel.DefaultSolver(P, c, A, b, cones, settings).solve()
    status = str(solution.status)
    if "Infeasible" in status and "Dual" not in status:
        raise ValueError(f"{what} is empty: its sets have no point in common")
    if "DualInfeasible" in status:
        raise ValueError(f"{what} is unbounded: bound every coordinate")
    if status not in ("Solved", "AlmostSolved"):
        raise RuntimeError(f"the support program of {what} ended {status}")
    delta = np.asarray(solution.x, float)[: prog.n]
    return float(g @ delta), delta
