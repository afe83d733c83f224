"""robust_counterpart on models shaped as users write them: rows in a Block, mutable Params in the coefficients, a
maximised objective. Truths: closed forms worked out by hand, and the counterpart of the minimised negation
verified by the cutting planes (the semi-infinite model solved on its own)."""

import numpy as np
import pyomo.environ as pyo
import pytest

from tpm_models import robust_counterpart, solve
from tpm_models.checks.verify import verify
from tpm_models.models.uncertainty import Box, Ellipsoid, NormBall, UncertainRow, UncertainTerm

TOL = 1e-7
"""Relative agreement of optima: the solvers' default gaps are ~1e-8 on these few-variable LPs and SOCPs."""


def test_rows_inside_a_block_are_made_robust():
    """max x0 + x1 s.t. 0.5 <= (1 + d0) x0 + (2 + d1) x1 <= 4, |d| <= 0.5, x >= 0, the row in ``m.plant``: with
    x >= 0 the upper side's worst case is 1.5 x0 + 2.5 x1 <= 4, so x = (4/1.5, 0), optimum 8/3."""
    m = pyo.ConcreteModel()
    m.plant = pyo.Block()
    m.plant.x = pyo.Var([0, 1], domain=pyo.NonNegativeReals)
    m.plant.row = pyo.Constraint(expr=pyo.inequality(0.5, m.plant.x[0] + 2 * m.plant.x[1], 4))
    m.obj = pyo.Objective(expr=-m.plant.x[0] - m.plant.x[1])
    declared = [UncertainRow(m.plant.row, [m.plant.x[0], m.plant.x[1]], Box(-0.5, 0.5))]
    cp = robust_counterpart(m, declared)
    assert "box" in cp.plant.row.doc and cp.plant.component("row_upper") is not None
    r = solve(cp)
    assert r.objective == pytest.approx(-8 / 3, rel=TOL)


def test_the_counterpart_owns_its_data():
    """A coefficient s * x with s a mutable Param of the nominal model: changing nominal.s after deriving leaves the
    counterpart's optimum where it was. min -x s.t. (1 + s d) x <= 2, |d| <= 1, 0 <= x: x = 2 / (1 + s)."""
    m = pyo.ConcreteModel()
    m.s = pyo.Param(initialize=0.5, mutable=True)
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=-m.x)
    m.row = pyo.Constraint(expr=m.x <= 2)
    cp = robust_counterpart(m, [UncertainRow(m.row, [m.s * m.x], Box(-1.0, 1.0))])
    before = solve(cp).objective
    assert before == pytest.approx(-2 / 1.5, rel=TOL)
    m.s = 10.0
    assert solve(cp).objective == pytest.approx(before, rel=TOL)
    cp.s = 1.0  # the counterpart's own Param moves its own rows
    assert solve(cp).objective == pytest.approx(-1.0, rel=TOL)


def test_a_maximised_model_is_derived_and_keeps_its_sense():
    """The issue's case: max x1 + x2 s.t. (1 + d1) x1 + (2 + d2) x2 <= 4, |d| <= 0.5, x >= 0: 4 / 1.5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=m.x[1] + m.x[2], sense=pyo.maximize)
    m.row = pyo.Constraint(expr=m.x[1] + 2 * m.x[2] <= 4)
    cp = robust_counterpart(m, [UncertainRow(m.row, [m.x[1], m.x[2]], Box(-0.5, 0.5))])
    assert cp.obj.sense == pyo.maximize
    assert solve(cp).objective == pytest.approx(4 / 1.5, rel=TOL)


def test_a_maximised_objective_term_equals_the_minimised_negation():
    """max (c + d)'x - 0.1|x|^2 over |d|_2 <= r (worst case: the least), x in [0, 2]^3 with (a + e)'x <= 3, e in a
    box: its optimum is minus the optimum of min -(c + d)'x + 0.1|x|^2, derived and verified by the cutting planes."""
    c, a = np.array([1.0, 0.8, 0.6]), np.array([1.0, 1.0, 1.0])

    def model(sense):
        m = pyo.ConcreteModel()
        m.J = pyo.RangeSet(0, 2)
        m.x = pyo.Var(m.J, bounds=(0, 2))
        profit = sum(c[j] * m.x[j] for j in m.J) - 0.1 * sum(m.x[j] ** 2 for j in m.J)
        m.obj = pyo.Objective(expr=profit if sense == pyo.maximize else -profit, sense=sense)
        m.row = pyo.Constraint(expr=sum(a[j] * m.x[j] for j in m.J) <= 3)
        x = [m.x[j] for j in m.J]
        weight = 1.0 if sense == pyo.maximize else -1.0
        return m, [UncertainRow(m.row, x, Box(-0.2, 0.3)), UncertainTerm(x, NormBall(2, 0.25), weight)]

    high, high_declared = model(pyo.maximize)
    low, low_declared = model(pyo.minimize)
    check = verify(low, low_declared, robust_counterpart(low, low_declared))
    assert check.verified, check.table()
    derived = solve(robust_counterpart(high, high_declared))
    assert derived.objective == pytest.approx(-check.semi_infinite.objective, rel=TOL)
    assert derived.objective < solve(high).objective - 1e-3  # the worst case costs something


# --------------------------------------------------------------------------- cones on auxiliary variables


def affine_ball_model(n=6, rows=3, k=2, seed=3):
    """min c'x, a_i'x + max_{|u|_2 <= 0.5} (P_i u)'x <= 2, -1 <= x <= 1: one map P_i (n x k) a row."""
    rng = np.random.default_rng(seed)
    m = pyo.ConcreteModel()
    m.J = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.J, bounds=(-1, 1))
    c, A, P = -rng.random(n), rng.random((rows, n)), rng.normal(size=(rows, n, k))
    m.obj = pyo.Objective(expr=sum(c[j] * m.x[j] for j in m.J))
    m.row = pyo.Constraint(range(rows), rule=lambda m, i: sum(A[i, j] * m.x[j] for j in m.J) <= 2)
    return m, [UncertainRow(m.row[i], [sum(P[i, j, q] * m.x[j] for j in m.J) for q in range(k)], NormBall(2, 0.5))
               for i in range(rows)]


def test_an_affine_map_of_a_ball_is_a_cone_on_new_variables():
    """The cone is written on y = P_i'x (k + 1 entries), so the model is an SOCP Clarabel takes; its optimum is the
    semi-infinite model's (cutting planes)."""
    from tpm_models.solvers.structure import model_class

    m, declared = affine_ball_model()
    cp = robust_counterpart(m, declared)
    assert model_class(cp) == "SOCP"
    cone = cp.norm_a1_cone
    assert len(generate_quadratic(cone.body)) == 3  # y_0^2 + y_1^2 - norm^2: no product of two x
    r = solve(cp)
    assert r.solver == "clarabel" and r.certificate["level"] == "kkt"
    v = verify(m, declared, cp)
    assert v.verified, v.table()


def test_a_dense_ellipsoid_is_a_cone_on_new_variables():
    """Ellipsoid(S) with S not diagonal on plain variables: the cone on y = L'x; verified by the cutting planes."""
    m, _ = affine_ball_model(seed=4)
    S = np.array([[2.0, 0.5, 0.0, 0.0, 0.0, 0.3], [0.5, 1.0, 0.2, 0.0, 0.0, 0.0], [0.0, 0.2, 1.5, 0.1, 0.0, 0.0],
                  [0.0, 0.0, 0.1, 1.0, 0.4, 0.0], [0.0, 0.0, 0.0, 0.4, 1.0, 0.0], [0.3, 0.0, 0.0, 0.0, 0.0, 0.8]])
    x = [m.x[j] for j in m.J]
    declared = [UncertainRow(m.row[i], x, Ellipsoid(S.tolist(), 0.3)) for i in m.row]
    cp = robust_counterpart(m, declared)
    assert cp.component("ellipsoid_x_y") is not None
    assert all(len(generate_quadratic(c.body)) <= 7 for c in cp.component_data_objects(pyo.Constraint)
               if c.parent_component().local_name.startswith("ellipsoid_x_cone"))
    v = verify(m, declared, cp)
    assert v.verified, v.table()


def test_the_apex_of_the_cone_is_certified():
    """min -x0 s.t. x0 + max_{|u|_2 <= 1} u'(x1, x1 + x2) <= 1, x in [-1, 1]^3: x0 + |(x1, x1 + x2)|_2 <= 1, so the
    optimum -1 needs x1 = x2 = 0, where the cone on y = P'x ends at its apex."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), bounds=(-1, 1))
    m.obj = pyo.Objective(expr=-m.x[0])
    m.row = pyo.Constraint(expr=m.x[0] <= 1)
    cp = robust_counterpart(m, [UncertainRow(m.row, [1.0 * m.x[1], m.x[1] + m.x[2]], NormBall(2, 1.0))])
    r = solve(cp)
    assert r.solver == "clarabel" and r.certificate["level"] == "kkt", r.certificate
    assert r.objective == pytest.approx(-1.0, rel=TOL)
    assert max(abs(r.values["x"][1]), abs(r.values["x"][2])) <= 1e-6


def generate_quadratic(body) -> list:
    """The quadratic terms of a row body (pairs of variables)."""
    from pyomo.repn import generate_standard_repn

    return list(generate_standard_repn(body, quadratic=True).quadratic_vars)
