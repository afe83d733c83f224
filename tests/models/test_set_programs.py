"""The exact support of every set as one convex program (``models/set_programs.py``), and the intersections it
serves (an ellipsoid, scenarios, a factor model, a symmetric budget among the members), against independent truths:
each set's closed form, the KKT root of a diagonal ellipsoid cut by a box (one-dimensional, by Brent's method), and
vertex enumeration of polytopes given by their points (the hull's facets by Qhull, every n of them solved)."""

import itertools

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.spatial import ConvexHull

from tpm_models.models.composite_sets import CartesianProduct, FactorModel, Intersection, Scenarios
from tpm_models.models.set_programs import CONIC_SUPPORT_TOL, support_program
from tpm_models.models.uncertainty import Box, Budget, Ellipsoid, NormBall, Polyhedron, SymmetricBudget

LP_TOL = 1e-9
"""An LP's vertex (HiGHS, feasibility 1e-10) against a closed form, data of unit size: rounding and the LP's
tolerance, with a margin."""

DIRECTIONS = [np.array(g) for g in ([1.0, 2.0, -0.5], [-0.3, 0.0, 1.0], [0.5, -2.0, -1.0], [0.0, 0.0, 0.0])]

CLOSED = {
    "box": Box((-0.1, -0.2, 0.0), (0.3, 0.1, 0.2)),
    "ball 1": NormBall(1, 0.3), "ball 2": NormBall(2, 0.3), "ball inf": NormBall(np.inf, 0.3),
    "ellipsoid": Ellipsoid([[0.04, 0.01, 0.0], [0.01, 0.09, 0.0], [0.0, 0.0, 0.01]], 1.5),
    "flat ellipsoid": Ellipsoid([[0.04, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.01]], 1.0),
    "budget": Budget((0.1, 0.2, 0.3), 1.5), "symmetric budget": SymmetricBudget((0.1, 0.2, 0.3), 1.5),
    "polyhedron": Polyhedron(np.vstack([np.eye(3), -np.eye(3), np.ones((1, 3))]).tolist(), [0.2] * 6 + [0.3]),
    "scenarios": Scenarios([[0.3, -0.1, 0.2], [-0.2, 0.4, 0.1], [0.1, 0.1, -0.3]]),
    "factor": FactorModel([[0.3, 0.0], [0.1, 0.2], [0.0, 0.4]], 0.5),
    "product": CartesianProduct([Box((-0.1, 0.0), (0.2, 0.3)), Ellipsoid([[0.04]], 1.0)], [2, 1]),
}
CONIC = {"ball 2", "ellipsoid", "flat ellipsoid", "product"}


@pytest.mark.parametrize("name", list(CLOSED))
def test_the_program_of_each_set_has_its_closed_form_support(name):
    uset = CLOSED[name]
    tol = CONIC_SUPPORT_TOL if name in CONIC else LP_TOL
    for g in DIRECTIONS:
        truth = uset.support(g)[0]
        value, delta = support_program(g, uset)
        assert value == pytest.approx(truth, abs=tol), (g, value, truth)
        assert value == pytest.approx(g @ delta, abs=1e-12)
        assert uset.support(delta)[0] >= -1e-12  # sanity: delta is a point the set's support can see


def test_the_symmetric_budget_is_the_worst_of_its_signed_subsets():
    """Integer Gamma: sigma(g) = the largest sum over Gamma coordinates of d_j |g_j|; enumerated over every subset and
    sign. Fractional Gamma = 1.5: the largest d_j|g_j| plus half the next."""
    d = np.array([0.1, 0.2, 0.3, 0.05])
    g = np.array([2.0, -1.0, 0.5, -4.0])
    for gamma in (1, 2, 3):
        best = max(sum(s * d[j] * g[j] for s, j in zip(signs, subset))
                   for subset in itertools.combinations(range(4), gamma)
                   for signs in itertools.product((-1, 1), repeat=gamma))
        assert SymmetricBudget(tuple(d), gamma).support(g)[0] == pytest.approx(best, rel=1e-15)
    gains = np.sort(d * np.abs(g))[::-1]
    assert SymmetricBudget(tuple(d), 1.5).support(g)[0] == pytest.approx(gains[0] + 0.5 * gains[1], rel=1e-15)
    value, delta = SymmetricBudget(tuple(d), 1.5).support(g)
    assert np.all(np.abs(delta) <= d + 1e-15) and np.sum(np.abs(delta) / d) <= 1.5 + 1e-12


def ellipsoid_box_support(s, r, lo, up, g) -> float:
    """max g'delta s.t. sum delta_j^2 / s_j <= r^2, lo <= delta <= up (diagonal ellipsoid, 0 inside the box): the
    box's vertex if it is in the ellipsoid, else delta_j = clip(s_j g_j / lam, lo_j, up_j), lam > 0 the root of
    the ellipsoid's row (decreasing in lam): the KKT conditions."""
    def excess(lam):
        d = np.clip(s * g / lam, lo, up)
        return np.sum(d**2 / s) - r**2

    vertex = np.where(g > 0, up, lo)
    if np.sum(vertex**2 / s) <= r**2:
        return float(g @ vertex)
    lam = brentq(excess, 1e-12, 1e6, xtol=1e-15, rtol=1e-15)
    return float(g @ np.clip(s * g / lam, lo, up))


@pytest.mark.parametrize("g", [[1.0, 2.0, -0.5], [-0.3, 0.1, 1.0], [0.5, -2.0, -1.0], [1.0, 1.0, 1.0]])
def test_an_ellipsoid_cut_by_a_box_has_the_kkt_support(g):
    """The ellipsoid's half-axes 0.2, 0.3, 0.1 times 1.2 against a box of 0.15: both bind in some directions."""
    g = np.asarray(g)
    s, lo, up = np.array([0.04, 0.09, 0.01]), np.array([-0.15, -0.1, -0.2]), np.array([0.15, 0.2, 0.05])
    cut = Intersection([Ellipsoid(np.diag(s).tolist(), 1.2), Box(tuple(lo), tuple(up))])
    assert cut.support_accuracy == CONIC_SUPPORT_TOL
    value, delta = cut.support(g)
    assert value == pytest.approx(ellipsoid_box_support(s, 1.2, lo, up, g), abs=CONIC_SUPPORT_TOL)
    assert np.all(delta >= lo - 1e-9) and np.all(delta <= up + 1e-9) and np.sum(delta**2 / s) <= 1.44 + 1e-8
    # the same ball as an ellipsoid and as a NormBall: the program and the KKT root of box_ball_maximiser agree
    ball = Intersection([Ellipsoid(np.eye(3).tolist(), 0.2), Box(tuple(lo), tuple(up))])
    kkt = Intersection([NormBall(2, 0.2), Box(tuple(lo), tuple(up))])
    assert ball.support(g)[0] == pytest.approx(kkt.support(g)[0], abs=CONIC_SUPPORT_TOL)


def vertices_support(A, b, g) -> float:
    """max g'delta over {A delta <= b} by enumerating its vertices (every n active rows)."""
    n = A.shape[1]
    best = -np.inf
    for rows in itertools.combinations(range(len(b)), n):
        M = A[list(rows)]
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        v = np.linalg.solve(M, b[list(rows)])
        if np.all(A @ v <= b + 1e-10):
            best = max(best, float(g @ v))
    return best


def hull_and_box(points, lo, up):
    """The halfspaces of conv(points) (Qhull's facets) and of the box [lo, up]."""
    hull = ConvexHull(points)
    A, b = hull.equations[:, :-1], -hull.equations[:, -1]
    n = len(lo)
    return np.vstack([A, np.eye(n), -np.eye(n)]), np.r_[b, up, -lo]


@pytest.mark.parametrize("g", [[1.0, 0.3], [-0.5, 1.0], [-1.0, -1.0], [0.2, -1.0]])
def test_scenarios_cut_by_a_box_have_the_support_of_their_hull_cut_by_it(g):
    g = np.asarray(g)
    points = np.array([[0.4, 0.0], [0.0, 0.5], [-0.3, 0.1], [-0.1, -0.4], [0.3, -0.3]])
    lo, up = np.array([-0.2, -0.25]), np.array([0.25, 0.3])
    cut = Intersection([Scenarios(points.tolist()), Box(tuple(lo), tuple(up))])
    assert cut.support_accuracy == 0.0  # an LP: exact
    A, b = hull_and_box(points, lo, up)
    assert cut.support(g)[0] == pytest.approx(vertices_support(A, b, g), abs=LP_TOL)
    # scenarios inside the box: the best scenario (enumeration)
    wide = Intersection([Scenarios(points.tolist()), Box.symmetric(1.0)])
    assert wide.support(g)[0] == pytest.approx(max(points @ g), abs=LP_TOL)


@pytest.mark.parametrize("g", [[1.0, 0.3], [-0.5, 1.0], [0.2, -1.0]])
def test_a_factor_model_cut_by_a_box_has_the_support_of_its_vertices(g):
    """The factor set's vertices: Psi times the vertices of {xi in [-1, 1]^3, |sum xi| <= 1.5} (enumerated)."""
    g = np.asarray(g)
    psi = np.array([[0.3, 0.0, 0.1], [0.1, 0.2, -0.2]])
    F, beta = 3, 0.5
    A_xi = np.vstack([np.eye(F), -np.eye(F), np.ones((1, F)), -np.ones((1, F))])
    b_xi = np.r_[np.ones(2 * F), beta * F, beta * F]
    corners = []
    for rows in itertools.combinations(range(len(b_xi)), F):
        M = A_xi[list(rows)]
        if abs(np.linalg.det(M)) > 1e-12:
            v = np.linalg.solve(M, b_xi[list(rows)])
            if np.all(A_xi @ v <= b_xi + 1e-12):
                corners.append(psi @ v)
    lo, up = np.array([-0.2, -0.15]), np.array([0.1, 0.3])
    cut = Intersection([FactorModel(psi.tolist(), beta), Box(tuple(lo), tuple(up))])
    A, b = hull_and_box(np.array(corners), lo, up)
    assert cut.support(g)[0] == pytest.approx(vertices_support(A, b, g), abs=LP_TOL)
    # and the factor model alone: its closed form (the LP dual of composite_sets) against its vertices
    assert FactorModel(psi.tolist(), beta).support(g)[0] == pytest.approx(max(np.array(corners) @ g), abs=LP_TOL)


def test_a_factor_model_and_a_symmetric_budget_cut_by_a_ball_are_inside_both():
    """No closed form: the support lies below each member's and its maximiser is in every member."""
    for members in ([FactorModel([[0.3, 0.0], [0.1, 0.2], [0.0, 0.4]], 0.5), NormBall(2, 0.2)],
                    [SymmetricBudget((0.3, 0.2, 0.4), 1.5), Ellipsoid(np.diag([0.04, 0.09, 0.01]).tolist(), 1.0)]):
        cut = Intersection(members)
        for g in DIRECTIONS[:3]:
            value, delta = cut.support(g)
            assert all(value <= m.support(g)[0] + CONIC_SUPPORT_TOL for m in members)
            for m in members:  # delta in m: no direction separates it (the coordinate axes and g)
                for h in [*np.eye(3), *-np.eye(3), g]:
                    assert h @ delta <= m.support(h)[0] + 1e-7


@pytest.mark.parametrize("members", [
    [Scenarios([[0.5, 0.5], [0.6, 0.4]]), Box.symmetric(0.3)],
    [Ellipsoid(np.eye(2).tolist(), 0.1), Box((0.5, 0.5), (1.0, 1.0))],
    [FactorModel([[0.1, 0.0], [0.0, 0.1]], 0.5), Box((0.5, 0.5), (1.0, 1.0))],
    [SymmetricBudget((0.1, 0.1), 1.0), Polyhedron([[-1.0, 0.0]], [-0.5], bounded=False)],
])
def test_an_empty_intersection_is_refused_when_made(members):
    with pytest.raises(ValueError, match="empty"):
        Intersection(members)
