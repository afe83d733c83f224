"""The counterparts of PyROS's other sets (scenarios, a factor model, intersections, Cartesian products), each for a
``<=`` row, a ``>=`` row and an objective term, against independent truths: the LP written by hand, a closed form
of the support, PyROS on the semi-infinite model (Gurobi as its subsolvers), the verifier's cutting planes."""

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest

from tpm_models import robust_counterpart, solve
from tpm_models.checks.verify import verify
from tpm_models.models.composite_sets import CartesianProduct, FactorModel, Intersection, Scenarios
from tpm_models.models.uncertainty import Box, Budget, Ellipsoid, NormBall, Polyhedron, UncertainRow, UncertainTerm
from tpm_models.solvers.backends.registry import available_solvers

needs_gurobi = pytest.mark.skipif("gurobi" not in available_solvers(), reason="PyROS's subsolvers here are Gurobi")

OBJ_TOL = 1e-7
"""Relative agreement of two optima of one LP (HiGHS's and Clarabel's feasibility and optimality to 1e-8: the
optima agree to a few 1e-9 at these unit-sized data)."""
PYROS_TOL = 1e-8
"""PyROS's point, evaluated exactly, against the counterpart's optimum: the counterparts are solved by PIQP or
Clarabel to a relative gap of 1e-8 (the cone of box and ball); measured: 9.0e-10 for box and ball, <= 2.1e-13 for
the LPs."""

A_LE = np.array([1.0, 2.0, 1.5])
A_GE = np.array([2.0, 1.0, 1.0])
COST = np.array([-1.0, -1.2, -0.8])


def lp(upper=None, lower=None, term=None):
    """min c'x + term s.t. (a + delta)'x <= 3 under ``upper``, (a' + delta)'x >= 1 under ``lower``, 0 <= x <= 2."""
    m = pyo.ConcreteModel("an LP with uncertain rows")
    m.J = pyo.RangeSet(0, 2)
    m.x = pyo.Var(m.J, bounds=(0, 2))
    m.obj = pyo.Objective(expr=sum(COST[j] * m.x[j] for j in m.J))
    m.cap = pyo.Constraint(expr=sum(A_LE[j] * m.x[j] for j in m.J) <= 3.0)
    m.need = pyo.Constraint(expr=sum(A_GE[j] * m.x[j] for j in m.J) >= 1.0)
    x = [m.x[j] for j in m.J]
    uncertain = []
    if upper is not None:
        uncertain.append(UncertainRow(m.cap, x, upper))
    if lower is not None:
        uncertain.append(UncertainRow(m.need, x, lower))
    if term is not None:
        uncertain.append(UncertainTerm(x, term, 0.5))
    return m, uncertain


SCEN = Scenarios([[0.3, -0.1, 0.2], [-0.2, 0.4, 0.1], [0.1, 0.1, -0.3]])
FACTOR = FactorModel([[0.3, 0.0], [0.1, 0.2], [0.0, 0.4]], 0.5)
BOX_BUDGET = Intersection([Box.symmetric(0.3), Polyhedron([[1, 1, 1], [-1, -1, -1]], [0.4, 0.4], bounded=False)])
BOX_BALL = Intersection([Box.symmetric(0.2), NormBall(2, 0.25)])
PRODUCT = CartesianProduct([Box((-0.1, 0.0), (0.2, 0.3)), Ellipsoid([[0.04]], 1.0)], [2, 1])
PRODUCT_POLY = CartesianProduct([Budget(0.3, 1.0), Box(-0.1, 0.2)], [2, 1])

SETS = {"scenarios": SCEN, "factor": FACTOR, "box_and_budget": BOX_BUDGET, "box_and_ball": BOX_BALL,
        "product": PRODUCT, "product_polyhedral": PRODUCT_POLY}


def hand_scenarios():
    """The counterpart written by hand: one row a scenario for each side, the term by its epigraph rows."""
    m, _ = lp()
    P = np.asarray(SCEN.points)
    m.cap.deactivate()
    m.need.deactivate()
    m.cap_k = pyo.Constraint(range(3), rule=lambda m, k: sum((A_LE[j] + P[k, j]) * m.x[j] for j in m.J) <= 3)
    m.need_k = pyo.Constraint(range(3), rule=lambda m, k: sum((A_GE[j] + P[k, j]) * m.x[j] for j in m.J) >= 1)
    m.t = pyo.Var()
    m.t_k = pyo.Constraint(range(3), rule=lambda m, k: m.t >= 0.5 * sum(P[k, j] * m.x[j] for j in m.J))
    m.obj.set_value(m.obj.expr + m.t)
    return m


def test_scenarios_equal_the_lp_written_by_hand():
    nominal, uncertain = lp(SCEN, SCEN, SCEN)
    derived, hand = solve(robust_counterpart(nominal, uncertain)), solve(hand_scenarios())
    assert derived.termination == "optimal" and hand.termination == "optimal"
    assert derived.objective == pytest.approx(hand.objective, rel=OBJ_TOL)
    assert hand.objective > solve(nominal).objective + 0.05  # the scenarios cost something: the test can fail


def factor_support_closed_form(uset: FactorModel, g) -> float:
    """min_t sum_f |h_f - t| + beta F |t|, h = Psi'g: convex piecewise linear in t, least at a breakpoint."""
    psi, beta = uset.arrays()
    h = psi.T @ np.asarray(g, float)
    return min(np.abs(h - t).sum() + beta * len(h) * abs(t) for t in [0.0, *h])


def vertices_support(A, b, g) -> float:
    """max g'delta over {A delta <= b} in R^3 by enumerating the vertices (every 3 active rows)."""
    best = -np.inf
    for rows in itertools.combinations(range(len(b)), 3):
        M = A[list(rows)]
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        v = np.linalg.solve(M, b[list(rows)])
        if np.all(A @ v <= b + 1e-12):
            best = max(best, float(g @ v))
    return best


@pytest.mark.parametrize("g", [[1.0, 2.0, -0.5], [-0.3, 0.0, 1.0], [0.5, -2.0, -1.0]])
def test_supports_equal_their_closed_forms(g):
    g = np.asarray(g)
    assert FACTOR.support(g)[0] == pytest.approx(factor_support_closed_form(FACTOR, g), rel=1e-9)
    value, delta = FACTOR.support(g)
    assert value == pytest.approx(g @ delta, rel=1e-12)
    A = np.vstack([np.eye(3), -np.eye(3), [[1, 1, 1], [-1, -1, -1]]])
    b = np.array([0.3] * 6 + [0.4, 0.4])
    assert BOX_BUDGET.support(g)[0] == pytest.approx(vertices_support(A, b, g), rel=1e-9)
    box = np.where(g[:2] >= 0, [0.2, 0.3], [-0.1, 0.0]) @ g[:2]
    assert PRODUCT.support(g)[0] == pytest.approx(box + 0.2 * abs(g[2]), rel=1e-12)
    assert SCEN.support(g)[0] == max(np.asarray(SCEN.points) @ g)


def test_box_and_ball_support_equals_its_closed_forms():
    """Ball inactive: the box's vertex; box inactive: r|g|_2; both active, g = (1, 1, 0), box 0.2, ball 0.25: by
    symmetry (t, t, 0), t = 0.25/sqrt 2 < 0.2; g = (2, 1, 0): (0.2, 0.15, 0), the box binding its first."""
    g = np.array([1.0, -2.0, 0.5])
    assert Intersection([Box.symmetric(0.1), NormBall(2, 1.0)]).support(g)[0] == pytest.approx(0.35, rel=1e-14)
    assert Intersection([Box.symmetric(1.0), NormBall(2, 0.1)]).support(g)[0] == pytest.approx(
        0.1 * np.linalg.norm(g), rel=1e-12)
    value, delta = BOX_BALL.support([1.0, 1.0, 0.0])
    assert value == pytest.approx(2 * 0.25 / np.sqrt(2), rel=1e-12) and np.linalg.norm(delta) <= 0.25 * (1 + 1e-12)
    value, delta = BOX_BALL.support([2.0, 1.0, 0.0])  # delta_1 at the box (0.2), delta_2 = sqrt(0.25^2 - 0.2^2)
    assert value == pytest.approx(2 * 0.2 + 0.15, rel=1e-12)


@pytest.mark.parametrize("name", ["scenarios", "factor", "box_and_budget", "product_polyhedral"])
def test_polyhedral_counterparts_verified_by_cutting_planes(name):
    uset = SETS[name]
    nominal, uncertain = lp(uset, uset, uset)
    v = verify(nominal, uncertain, robust_counterpart(nominal, uncertain))
    assert v.verified, v.table()


@needs_gurobi
@pytest.mark.parametrize("name", list(SETS))
def test_counterparts_equal_pyros(name):
    uset = SETS[name]
    nominal, uncertain = lp(uset, uset, uset)
    cp = robust_counterpart(nominal, uncertain)
    r = solve(cp)
    v = verify(nominal, uncertain, cp, method="pyros", local_solver="gurobi_direct", global_solver="gurobi_direct")
    assert v.semi_infinite.termination == "robust_optimal", v.table()
    assert r.objective == pytest.approx(v.semi_infinite.objective, rel=PYROS_TOL), (r.objective, v.table())
    assert r.objective > solve(nominal).objective + 1e-3  # robust costs something: a set ignored would fail


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Scenarios([]), "nonempty K x n"),
    (lambda: Scenarios([[0.0, np.nan]]), "finite"),
    (lambda: FactorModel([[1.0, 0.0]], 1.5), r"in \[0, 1\]"),
    (lambda: FactorModel([1.0, 0.0], 0.5), "n x F"),
    (lambda: Intersection([Box.symmetric(1.0)]), "at least two"),
    (lambda: Intersection([Box.symmetric(1.0), "ball"]), "not an uncertainty set"),
    (lambda: Intersection([Box((0.0, 0.0), (1.0, 1.0)), Ellipsoid(np.eye(3).tolist())]), "differ in dimension"),
    (lambda: Intersection([Box((0.5, 0.5), (1.0, 1.0)), Box((-1.0, -1.0), (0.0, 0.0))]), "empty"),
    (lambda: Intersection([Box(0.0, 1.0), NormBall(1, 1.0)]), "l_1 ball as a Polyhedron"),
    (lambda: CartesianProduct([Box(0.0, 1.0)], [1, 2]), "one size a set"),
    (lambda: CartesianProduct([Ellipsoid(np.eye(2).tolist())], [3]), r"in R\^2, its size is 3"),
    (lambda: CartesianProduct([Box(0.0, 1.0)], [0]), "whole number >= 1"),
])
def test_a_composite_set_that_is_not_well_formed_is_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_product_of_the_wrong_size_says_so():
    nominal, uncertain = lp(CartesianProduct([Box(0.0, 0.1)], [2]))
    with pytest.raises(ValueError, match="in R\\^2 cannot perturb 3"):
        robust_counterpart(nominal, uncertain)
