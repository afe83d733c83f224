"""robust_counterpart on models shaped as users write them: rows in a Block, mutable Params in the coefficients, a
maximised objective. Truths: closed forms worked out by hand, and the counterpart of the minimised negation
verified by the cutting planes (the semi-infinite model solved on its own)."""

import numpy as np
import pyomo.environ as pyo
import pytest

from tpm_models import robust_counterpart, solve
from tpm_models.checks.verify import verify
from tpm_models.models.uncertainty import Box, NormBall, UncertainRow, UncertainTerm

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
