"""The verifier on the composite sets: intersections with an ellipsoid, scenarios and a factor model cut by a box,
a symmetric budget, a Cartesian product with an ellipsoid, each on an LP with a ``<=`` row, a ``>=`` row and an
objective term. Truths: for the polytopes, the LP over the set's vertices (enumerated here: every n active facets
of the hull, Qhull's, and of the box) solved by scipy's HiGHS without the library; for the sets with a cone, the
derived counterpart against the semi-infinite model by cutting planes (two independent routes), and the optimum
strictly between those of the members alone (the intersection is felt). A counterpart of one member alone is not
a counterpart of the intersection, and the verifier says so."""

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest
from conftest import ran_in_fresh_process
from scipy.optimize import linprog
from scipy.spatial import ConvexHull

from tpm_models import robust_counterpart, solve
from tpm_models.checks.verify import verify
from tpm_models.models.composite_sets import CartesianProduct, FactorModel, Intersection, Scenarios
from tpm_models.models.uncertainty import Box, Ellipsoid, NormBall, SymmetricBudget, UncertainRow, UncertainTerm
from tpm_models.solvers.backends.registry import available_solvers

A_LE, A_GE, COST, WEIGHT = np.array([1.0, 2.0, -1.5]), np.array([2.0, 1.0, 1.0]), np.array([-1.0, -1.2, 0.8]), 0.5

OBJ_TOL = 1e-7
"""The library's optimum (PIQP / Clarabel, 1e-8 relative gap) against HiGHS's LP over the vertices (1e-9)."""

POINTS = np.array([[0.3, -0.1, 0.2], [-0.2, 0.4, 0.1], [0.1, 0.1, -0.3], [-0.1, -0.3, -0.1], [0.2, 0.2, 0.3]])
PSI = np.array([[0.3, 0.0, 0.1], [0.1, 0.2, -0.2], [0.0, 0.3, 0.2]])


def lp(uset):
    """min c'x + 0.5 max_delta delta'x s.t. (a + delta)'x <= 3, (a' + delta)'x >= 1, -2 <= x <= 2."""
    m = pyo.ConcreteModel("an LP with uncertain rows")
    m.x = pyo.Var(range(3), bounds=(-2, 2))
    m.obj = pyo.Objective(expr=sum(COST[j] * m.x[j] for j in range(3)))
    m.cap = pyo.Constraint(expr=sum(A_LE[j] * m.x[j] for j in range(3)) <= 3.0)
    m.need = pyo.Constraint(expr=sum(A_GE[j] * m.x[j] for j in range(3)) >= 1.0)
    x = [m.x[j] for j in range(3)]
    return m, [UncertainRow(m.cap, x, uset), UncertainRow(m.need, x, uset), UncertainTerm(x, uset, WEIGHT)]


def vertices(A, b):
    """The vertices of {A delta <= b} in R^3: every 3 active rows, solved, kept when feasible."""
    out = []
    for rows in itertools.combinations(range(len(b)), 3):
        M = A[list(rows)]
        if abs(np.linalg.det(M)) > 1e-12:
            v = np.linalg.solve(M, b[list(rows)])
            if np.all(A @ v <= b + 1e-10):
                out.append(v)
    return np.array(out)


def hull_cut_by_box(points, half):
    hull = ConvexHull(points)
    A = np.vstack([hull.equations[:, :-1], np.eye(3), -np.eye(3)])
    return vertices(A, np.r_[-hull.equations[:, -1], np.full(6, half)])


def lp_over_vertices(V) -> float:
    """The robust LP written over the vertices V of the set (exact for a polytope): variables (x, t)."""
    rows, rhs = [], []
    for v in V:
        rows.append(np.r_[A_LE + v, 0.0])
        rhs.append(3.0)
        rows.append(np.r_[-(A_GE + v), 0.0])
        rhs.append(-1.0)
        rows.append(np.r_[WEIGHT * v, -1.0])
        rhs.append(0.0)
    res = linprog(np.r_[COST, 1.0], A_ub=np.array(rows), b_ub=rhs, bounds=[(-2, 2)] * 3 + [(None, None)],
                  method="highs", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return float(res.fun)


def factor_vertices(psi, beta):
    F = psi.shape[1]
    A = np.vstack([np.eye(F), -np.eye(F), np.ones((1, F)), -np.ones((1, F))])
    return np.array([psi @ xi for xi in vertices(A, np.r_[np.ones(2 * F), beta * F, beta * F])])


POLYTOPES = {
    "scenarios cut by a box": (Intersection([Scenarios(POINTS.tolist()), Box.symmetric(0.2)]),
                               lambda: hull_cut_by_box(POINTS, 0.2)),
    "factor model cut by a box": (Intersection([FactorModel(PSI.tolist(), 0.5), Box.symmetric(0.25)]),
                                  lambda: hull_cut_by_box(factor_vertices(PSI, 0.5), 0.25)),
    "symmetric budget": (SymmetricBudget((0.3, 0.2, 0.4), 2.0),  # vertices: two coordinates at +-d, one at 0
                         lambda: np.array([s * np.eye(3)[i] * d[i] + t * np.eye(3)[j] * d[j]
                                           for d in [np.array([0.3, 0.2, 0.4])]
                                           for i, j in itertools.combinations(range(3), 2)
                                           for s in (-1, 1) for t in (-1, 1)])),
}


@pytest.mark.parametrize("name", list(POLYTOPES))
def test_polytopes_verified_and_equal_to_the_lp_over_their_vertices(name):
    uset, corners = POLYTOPES[name]
    nominal, uncertain = lp(uset)
    cp = robust_counterpart(nominal, uncertain)
    v = verify(nominal, uncertain, cp)
    assert v.verified, v.table()
    truth = lp_over_vertices(corners())
    assert v.semi_infinite.objective == pytest.approx(truth, rel=OBJ_TOL)
    assert solve(cp).objective == pytest.approx(truth, rel=OBJ_TOL)
    assert truth > solve(nominal).objective + 1e-3  # the set costs something: a set ignored would fail


CONES = {  # chosen so that each member's worst case at the optimum lies outside the other: both bind
    "ellipsoid cut by a box": [Ellipsoid(np.diag([0.09, 0.04, 0.04]).tolist(), 1.0), Box.symmetric(0.2)],
    "factor model cut by a ball": [FactorModel(PSI.tolist(), 0.2), NormBall(2, 0.3)],
    "scenarios cut by an ellipsoid": [Scenarios(POINTS.tolist()), Ellipsoid(np.diag([0.09, 0.09, 0.04]).tolist(), 1.0)],
}


@pytest.mark.parametrize("name", list(CONES))
def test_intersections_with_a_cone_verified_and_between_their_members(name):
    members = CONES[name]
    nominal, uncertain = lp(Intersection(members))
    cp = robust_counterpart(nominal, uncertain)
    v = verify(nominal, uncertain, cp)
    assert v.verified, v.table()
    assert v.semi_infinite.ok and v.semi_infinite.max_violation <= 1e-8
    alone = [solve(robust_counterpart(*lp(m))).objective for m in members]
    both = solve(cp).objective
    assert both < min(alone) - 1e-4, (both, alone)  # a smaller set than either: a better robust optimum
    # a member's counterpart is no counterpart of the intersection: too conservative, and the verifier says so
    wrong = robust_counterpart(*lp(members[0]))  # another nominal model: the variables are mapped by name
    assert not verify(nominal, uncertain, wrong).verified

def test_a_product_with_an_ellipsoid_is_its_members_on_their_slices():
    """Box on the first two coefficients, an interval (a 1-d ellipsoid) on the third: a polytope, whose vertices are
    the box's corners times the interval's ends."""
    uset = CartesianProduct([Box((-0.1, 0.0), (0.2, 0.3)), Ellipsoid([[0.04]], 1.0)], [2, 1])
    nominal, uncertain = lp(uset)
    cp = robust_counterpart(nominal, uncertain)
    v = verify(nominal, uncertain, cp)
    assert v.verified, v.table()
    corners = np.array([[a, b, c] for a in (-0.1, 0.2) for b in (0.0, 0.3) for c in (-0.2, 0.2)])
    assert v.semi_infinite.objective == pytest.approx(lp_over_vertices(corners), rel=OBJ_TOL)


PYROS_TOL = 1e-8
"""PyROS's point evaluated exactly against the counterpart's optimum (PIQP / Clarabel to 1e-8 relative); measured
4e-14 (symmetric budget, an LP) and 1.9e-9 (ellipsoid cut by a box, Clarabel's cone)."""


@pytest.mark.skipif("gurobi" not in available_solvers(), reason="PyROS's subsolvers here are Gurobi")
@pytest.mark.parametrize("uset", [POLYTOPES["symmetric budget"][0], Intersection(CONES["ellipsoid cut by a box"])],
                         ids=["symmetric budget", "ellipsoid cut by a box"])
def test_pyros_agrees_on_the_symmetric_budget_and_an_ellipsoid_cut_by_a_box(uset, request):
    """After an Xpress solve in the same process Gurobi's subsolves end PyROS's separation "other" (the Xpress ->
    Gurobi effect of ``conftest.ran_in_fresh_process``): run again in a fresh interpreter then."""
    if ran_in_fresh_process(request):
        return
    nominal, uncertain = lp(uset)
    cp = robust_counterpart(nominal, uncertain)
    v = verify(nominal, uncertain, cp, method="pyros", local_solver="gurobi_direct", global_solver="gurobi_direct")
    assert v.semi_infinite.termination == "robust_optimal" and v.verified, v.table()
    assert solve(cp).objective == pytest.approx(v.semi_infinite.objective, rel=PYROS_TOL)


def test_pyros_is_not_given_scenarios_intersected_with_another_set():
    """PyROS would intersect the points, this library intersects their hull: refused, saying why."""
    with pytest.raises(ValueError, match="their hull"):
        Intersection([Scenarios(POINTS.tolist()), Box.symmetric(0.2)]).pyros_set(3)
