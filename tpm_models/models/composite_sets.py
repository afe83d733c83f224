"""The uncertainty sets of PyROS that are not a norm ball, box, ellipsoid, cardinality (budget) set or polyhedron:
:class:`Scenarios` (PyROS ``DiscreteScenarioSet``), :class:`FactorModel` (``FactorModelSet``), :class:`Intersection`
(``IntersectionSet``) and :class:`CartesianProduct` (``CartesianProductSet``).

Like the sets of :mod:`tpm_models.models.uncertainty` they are sets of perturbations :math:`\\delta` of the nominal
data (PyROS's ``origin`` is the nominal data: 0 here), validated at construction, each with its support function
(the verifier's separation oracle) and its PyROS set. Their counterparts are written by
:class:`tpm_models.models.counterpart_composite.CompositeBuilder`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from tpm_models.lazy import LazyModule
from tpm_models.models.set_programs import CONIC_SUPPORT_TOL, Program, describe, support_program
from tpm_models.models.uncertainty import (
    SUPPORT_LP_TOL,
    Box,
    Budget,
    Ellipsoid,
    NormBall,
    Polyhedron,
    SymmetricBudget,
    UncertaintySet,
    finite_array,
)

optimize = LazyModule("scipy.optimize")
"""``scipy.optimize``, imported on the first support LP."""


def support_lp(g: np.ndarray, A: np.ndarray, b: np.ndarray, bounds: Sequence[tuple[float | None, float | None]],
               what: str) -> np.ndarray:
    """A maximiser of :math:`g^\\top z` s.t. :math:`Az \\le b` and ``bounds`` (HiGHS's dual simplex, a vertex
    feasible to :data:`~tpm_models.models.uncertainty.SUPPORT_LP_TOL`); ``ValueError`` naming ``what`` when the set
    is empty or unbounded."""
    res = optimize.linprog(-np.asarray(g, float), A_ub=A, b_ub=b, bounds=bounds, method="highs-ds",
                           options={"primal_feasibility_tolerance": SUPPORT_LP_TOL,
                                    "dual_feasibility_tolerance": SUPPORT_LP_TOL})
    if res.status == 2:
        raise ValueError(f"{what} is empty: its sets have no point in common")
    if res.status == 3:
        raise ValueError(f"{what} is unbounded: bound every coordinate")
    if res.status != 0:
        raise RuntimeError(f"the support LP of {what} failed: {res.message}")
    return np.asarray(res.x, float)


def dimension(uset: UncertaintySet) -> int | None:
    """The dimension a set fixes by its data (a shape matrix, a polyhedron's columns, a vector of bounds, the
    scenarios), None for a set of any dimension (a norm ball, a scalar box)."""
    if isinstance(uset, Ellipsoid):
        return len(uset.shape)
    if isinstance(uset, Polyhedron):
        return uset.arrays()[0].shape[1]
    if isinstance(uset, (Scenarios, FactorModel)):
        return uset.arrays()[0].shape[0 if isinstance(uset, FactorModel) else 1]
    if isinstance(uset, CartesianProduct):
        return sum(uset.sizes)
    if isinstance(uset, Intersection):
        dims = {dim for s in uset.sets if (dim := dimension(s)) is not None}
        return dims.pop() if dims else None
    if isinstance(uset, Box):
        lo, up = np.asarray(uset.lower, float), np.asarray(uset.upper, float)
        return len(lo) if lo.ndim else (len(up) if up.ndim else None)
    if isinstance(uset, (Budget, SymmetricBudget)):
        d = np.asarray(uset.deviation, float)
        return len(d) if d.ndim else None
    return None


def halfspaces(uset: UncertaintySet, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """:math:`(A, b)` with the set :math:`= \\{\\delta\\in\\mathbb R^n : A\\delta\\le b\\}`, or None for a set that
    is not such a polyhedron in :math:`\\delta` alone (an ellipsoid, a 2-norm ball, scenarios, a factor model)."""
    eye = np.eye(n)
    if isinstance(uset, Polyhedron):
        return uset.arrays()
    if isinstance(uset, NormBall) and np.isinf(uset.p):
        return np.vstack([eye, -eye]), np.full(2 * n, uset.radius)
    if isinstance(uset, Box):
        lo, up = uset.bounds(n)
        return np.vstack([eye, -eye]), np.concatenate([up, -lo])
    if isinstance(uset, Budget):
        d = np.broadcast_to(np.asarray(uset.deviation, float), (n,))
        inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
        return np.vstack([eye, -eye, inv[None, :]]), np.concatenate([d, np.zeros(n), [uset.gamma]])
    if isinstance(uset, Intersection):
        parts = []
        for member in uset.sets:
            part = halfspaces(member, n)
            if part is None:
                return None
            parts.append(part)
        return np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    return None


@dataclass(frozen=True)
class Scenarios(UncertaintySet):
    """Finitely many perturbations :math:`\\{\\delta^1,\\ldots,\\delta^K\\}` (``points``, :math:`K\\times n`):
    PyROS ``DiscreteScenarioSet``. Not convex, but a row linear in :math:`\\delta` holds on it iff it holds on its
    convex hull: support :math:`\\max_k g^\\top\\delta^k`, the counterpart one row a scenario (exact)."""

    points: Sequence[Sequence[float]]

    def __post_init__(self):
        P = finite_array(self.points, "the scenarios")
        if P.ndim != 2 or P.shape[0] == 0 or P.shape[1] == 0:
            raise ValueError(f"the scenarios must be a nonempty K x n table (one perturbation a row), got shape "
                             f"{P.shape}")

    def arrays(self) -> tuple[np.ndarray]:
        return (np.asarray(self.points, float),)

    def support(self, g):
        P = self.arrays()[0]
        values = P @ np.asarray(g, float)
        k = int(np.argmax(values))
        return float(values[k]), P[k].copy()

    def start(self, n):
        return self.arrays()[0][0].copy()

    def program_rows(self, prog: Program, first: int, n: int) -> None:
        """The hull in :func:`~tpm_models.models.set_programs.support_program`: :math:`\\delta = P^\\top\\lambda`,
        :math:`\\lambda\\ge0`, :math:`\\sum\\lambda = 1`."""
        P = self.arrays()[0]
        if P.shape[1] != n:
            raise ValueError(f"scenarios in R^{P.shape[1]} cannot perturb {n} coefficients")
        lam = prog.new(P.shape[0])
        prog.rows([(first, np.eye(n)), (lam, -P.T)], np.zeros(n), "zero")
        prog.rows([(lam, np.ones((1, P.shape[0])))], [1.0], "zero")
        prog.rows([(lam, -np.eye(P.shape[0]))], np.zeros(P.shape[0]), "nonneg")

    def is_point(self):
        P = self.arrays()[0]
        return bool(np.all(P == P[0]))

    def pyros_set(self, n):
        from pyomo.contrib import pyros

        return pyros.DiscreteScenarioSet(scenarios=[tuple(map(float, p)) for p in self.arrays()[0]])


@dataclass(frozen=True)
class FactorModel(UncertaintySet):
    """PyROS's factor model set :math:`\\{\\Psi\\xi : \\xi\\in[-1,1]^F,\\ |\\sum_f\\xi_f|\\le\\beta F\\}`
    (``psi`` :math:`\\Psi`, :math:`n\\times F`; ``beta`` in [0, 1]). Support by LP duality:
    :math:`\\sigma(g) = \\min_t \\sum_f |(\\Psi^\\top g)_f - t| + \\beta F\\,|t|`; PyROS ``FactorModelSet``."""

    psi: Sequence[Sequence[float]]
    beta: float

    def __post_init__(self):
        psi = finite_array(self.psi, "a factor model's psi")
        if psi.ndim != 2 or psi.size == 0:
            raise ValueError(f"a factor model's psi must be an n x F matrix (one column a factor), got shape "
                             f"{psi.shape}")
        beta = finite_array(self.beta, "a factor model's beta")
        if beta.ndim or not 0 <= float(beta) <= 1:
            raise ValueError(f"a factor model's beta must be a number in [0, 1] (the fraction of the factors at "
                             f"their extremes together), got {self.beta!r}")

    def arrays(self) -> tuple[np.ndarray, float]:
        return np.asarray(self.psi, float), float(self.beta)

    def support(self, g):
        psi, beta = self.arrays()
        g = np.asarray(g, float)
        if psi.shape[0] != len(g):
            raise ValueError(f"a factor model in R^{psi.shape[0]} cannot perturb {len(g)} coefficients")
        F = psi.shape[1]
        ones = np.ones((1, F))
        xi = support_lp(psi.T @ g, np.vstack([ones, -ones]), np.full(2, beta * F), [(-1.0, 1.0)] * F,
                        "a factor model set")
        delta = psi @ xi
        return float(g @ delta), delta

    def is_point(self):
        return not np.any(self.arrays()[0])

    def program_rows(self, prog: Program, first: int, n: int) -> None:
        """:math:`\\delta = \\Psi\\xi`, :math:`-1\\le\\xi\\le1`, :math:`|\\sum\\xi|\\le\\beta F`."""
        psi, beta = self.arrays()
        if psi.shape[0] != n:
            raise ValueError(f"a factor model in R^{psi.shape[0]} cannot perturb {n} coefficients")
        F = psi.shape[1]
        xi = prog.new(F)
        prog.rows([(first, np.eye(n)), (xi, -psi)], np.zeros(n), "zero")
        ones = np.ones((1, F))
        prog.rows([(xi, np.vstack([np.eye(F), -np.eye(F), ones, -ones]))], np.r_[np.ones(2 * F), beta * F, beta * F],
                  "nonneg")

    def pyros_set(self, n):
        from pyomo.contrib import pyros

        psi, beta = self.arrays()
        return pyros.FactorModelSet(origin=[0.0] * psi.shape[0], number_of_factors=psi.shape[1],
                                    psi_mat=psi.tolist(), beta=beta)


def box_ball_maximiser(g: np.ndarray, sets: Sequence[Box | NormBall]) -> np.ndarray:
    """The maximiser of :math:`g^\\top\\delta` over boxes (:class:`Box`, :math:`\\ell_\\infty` balls) and
    :math:`\\ell_2` balls: :math:`l\\le\\delta\\le u`, :math:`\\|\\delta\\|_2\\le r` (the boxes' and the balls'
    intersections). The box's vertex if it is in the ball; else, by the KKT conditions,
    :math:`\\delta(\\lambda) = \\mathrm{clip}(g/\\lambda, l, u)` with :math:`\\lambda>0` the root of
    :math:`\\|\\delta(\\lambda)\\|_2 = r` (decreasing in :math:`\\lambda`; Brent's method to machine precision)."""
    n = len(g)
    lo, up, r = np.full(n, -np.inf), np.full(n, np.inf), np.inf
    for s in sets:
        if isinstance(s, Box):
            a, b = s.bounds(n)
        elif np.isinf(s.p):
            a, b = np.full(n, -s.radius), np.full(n, s.radius)
        else:
            r = min(r, s.radius)
            continue
        lo, up = np.maximum(lo, a), np.minimum(up, b)
    if (lo > up).any() or np.linalg.norm(np.clip(np.zeros(n), lo, up)) > r:
        raise ValueError("the intersection is empty: its boxes and balls have no point in common")
    vertex = np.where(g > 0, up, np.where(g < 0, lo, np.clip(np.zeros(n), lo, up)))
    if np.all(np.isfinite(vertex)) and np.linalg.norm(vertex) <= r:
        return vertex

    def excess(lam: float) -> float:
        return float(np.linalg.norm(np.clip(g / lam, lo, up))) - r

    hi = max(float(np.linalg.norm(g)) / max(r, 1e-300), 1e-300)
    low = hi
    while excess(low) < 0:
        low /= 2
    lam = optimize.brentq(excess, low, 2 * hi, xtol=1e-15 * hi, rtol=4 * np.finfo(float).eps)
    return np.clip(g / lam, lo, up)


def check_members(sets: Iterable[object], what: str) -> tuple[UncertaintySet, ...]:
    members: list[UncertaintySet] = []
    for k, s in enumerate(sets):
        if not isinstance(s, UncertaintySet):
            raise ValueError(f"{what}: member {k} is a {type(s).__name__}, not an uncertainty set")
        if isinstance(s, NormBall) and s.p == 1.0:
            raise ValueError(f"{what}: give an l_1 ball as a Polyhedron (PyROS has no l_1 ball to combine)")
        members.append(s)
    return tuple(members)


@dataclass(frozen=True)
class Intersection(UncertaintySet):
    """:math:`\\mathcal U_1\\cap\\cdots\\cap\\mathcal U_m` (``sets``, at least two, of one dimension, with a point
    in common): PyROS ``IntersectionSet``. Support by the conjugate of the intersection,
    :math:`\\sigma(g) = \\min\\{\\sum_i\\sigma_i(g_i) : \\sum_i g_i = g\\}` (exact when the sets are polyhedral or
    their relative interiors meet). A :class:`Scenarios` member counts as its convex hull (as a row linear in
    :math:`\\delta` sees it): the intersection is :math:`\\mathrm{conv}\\{\\delta^k\\}\\cap\\ldots`, not the scenarios
    inside the other sets (PyROS's reading; give those as ``Scenarios`` of the points kept). The separation oracle
    is exact: an LP when every member is polyhedral, the KKT
    root for boxes and 2-norm balls, and otherwise the convex program of
    :func:`tpm_models.models.set_programs.support_program` (an ellipsoid, scenarios (their hull), a factor model, a
    symmetric budget among the members: an LP by HiGHS, or with a cone by Clarabel to
    :data:`~tpm_models.models.set_programs.CONIC_SUPPORT_TOL`). Checked when made, once its dimension is known: the
    intersection is nonempty and bounded."""

    sets: Sequence[UncertaintySet]

    def __post_init__(self):
        sets = check_members(self.sets, "an intersection")
        if len(sets) < 2:
            raise ValueError(f"an intersection needs at least two sets, got {len(sets)}")
        dims = {d for s in sets if (d := dimension(s)) is not None}
        if len(dims) > 1:
            raise ValueError(f"the sets of an intersection differ in dimension ({sorted(dims)})")
        if dims:
            n = dims.pop()
            if halfspaces(self, n) is not None:  # nonempty and bounded (ValueError saying which otherwise)
                for g in np.vstack([np.eye(n), -np.eye(n)]):
                    self.support(g)
            else:  # a bounded member bounds it; nonempty: a point in common
                self.support(np.zeros(n))

    def support(self, g):
        g = np.asarray(g, float)
        parts = halfspaces(self, len(g))
        if parts is not None:
            delta = support_lp(g, parts[0], parts[1], [(None, None)] * len(g), "the intersection")
        elif self.box_and_balls():
            delta = box_ball_maximiser(g, [s for s in self.sets if isinstance(s, Box | NormBall)])  # all of them
        else:
            return support_program(g, self, "the intersection")
        return float(g @ delta), delta

    def box_and_balls(self) -> bool:
        return all(isinstance(s, Box) or isinstance(s, NormBall) and s.p in (2.0, np.inf) for s in self.sets)

    @property
    def support_accuracy(self) -> float:
        """0 for the LP and the KKT root; :data:`~tpm_models.models.set_programs.CONIC_SUPPORT_TOL` when the support
        program has a cone (an ellipsoid or a 2-norm ball beside a set that is not a box)."""
        if self.box_and_balls() or not any(isinstance(s, Ellipsoid) or isinstance(s, NormBall) and s.p == 2.0
                                           or s.support_accuracy > 0 for s in self.sets):
            return 0.0
        return CONIC_SUPPORT_TOL

    def start(self, n):
        """A common point: the support program's at 0 (the support LP's for polyhedral members), or for boxes and
        balls a member's point or 0."""
        if not self.box_and_balls():
            return self.support(np.zeros(n))[1]
        points = [s for s in self.sets if s.is_point()]
        return points[0].start(n) if points else np.zeros(n)

    def is_point(self):
        return any(s.is_point() for s in self.sets)

    def program_rows(self, prog: Program, first: int, n: int) -> None:
        """Every member's rows on the same :math:`\\delta`."""
        for member in self.sets:
            describe(prog, member, first, n)

    def pyros_set(self, n):
        from pyomo.contrib import pyros

        if any(isinstance(s, Scenarios) for s in self.sets):
            raise ValueError("PyROS intersects the scenarios themselves (those inside the other sets), this "
                             "Intersection their hull: no PyROS set is the same; verify by cutting planes")
        parts = halfspaces(self, n)
        if parts is not None:  # one polyhedron: PyROS bounds an IntersectionSet's members one by one (a slab fails)
            return pyros.PolyhedralSet(lhs_coefficients_mat=parts[0].tolist(), rhs_vec=parts[1].tolist())
        return pyros.IntersectionSet(**{f"set{k}": s.pyros_set(n) for k, s in enumerate(self.sets)})


@dataclass(frozen=True)
class CartesianProduct(UncertaintySet):
    """:math:`\\mathcal U_1\\times\\cdots\\times\\mathcal U_m`, set :math:`i` over the next ``sizes[i]``
    coordinates: PyROS ``CartesianProductSet``. Support :math:`\\sum_i\\sigma_i(g_{(i)})` on the slices."""

    sets: Sequence[UncertaintySet]
    sizes: Sequence[int]

    def __post_init__(self):
        sets = check_members(self.sets, "a Cartesian product")
        sizes = tuple(self.sizes)
        if len(sizes) != len(sets) or not sets:
            raise ValueError(f"a Cartesian product needs one size a set: {len(sets)} sets, {len(sizes)} sizes")
        for k, (s, size) in enumerate(zip(sets, sizes)):
            if not isinstance(size, (int, np.integer)) or size < 1:
                raise ValueError(f"a Cartesian product's size {k} must be a whole number >= 1, got {size!r}")
            if dimension(s) not in (None, size):
                raise ValueError(f"a Cartesian product's set {k} is in R^{dimension(s)}, its size is {size}")

    def slices(self, n: int) -> list[slice]:
        if sum(self.sizes) != n:
            raise ValueError(f"a Cartesian product in R^{sum(self.sizes)} cannot perturb {n} coefficients")
        ends = np.cumsum([0, *self.sizes])
        return [slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:])]

    def support(self, g):
        g = np.asarray(g, float)
        out = [s.support(g[sl]) for s, sl in zip(self.sets, self.slices(len(g)))]
        return float(sum(v for v, _ in out)), np.concatenate([d for _, d in out])

    def start(self, n):
        return np.concatenate([s.start(sl.stop - sl.start) for s, sl in zip(self.sets, self.slices(n))])

    def is_point(self):
        return all(s.is_point() for s in self.sets)

    @property
    def support_accuracy(self) -> float:
        return max(s.support_accuracy for s in self.sets)

    def program_rows(self, prog: Program, first: int, n: int) -> None:
        """Each member's rows on its slice of :math:`\\delta`."""
        for member, sl in zip(self.sets, self.slices(n)):
            describe(prog, member, first + sl.start, sl.stop - sl.start)

    def pyros_set(self, n):
        from pyomo.contrib import pyros

        return pyros.CartesianProductSet([s.pyros_set(sl.stop - sl.start)
                                          for s, sl in zip(self.sets, self.slices(n))])
