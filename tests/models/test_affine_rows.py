"""Rows and objectives written as the user thinks of them, affine in the uncertain parameters u
(``affine_row``, ``affine_term``). Truths: closed forms worked out by hand, and the verifier's cutting planes."""

import numpy as np
import pyomo.environ as pyo
import pytest

from tpm_models import robust_counterpart, solve
from tpm_models.checks.verify import verify
from tpm_models.models.declare import affine_row, affine_term
from tpm_models.models.uncertainty import Box, NormBall, UncertainRow

REL = 1e-8
"""The LP and SOCP solvers' relative gap (PIQP / Clarabel, 1e-8 or better) on optima of order 1."""


def one_product(sense=pyo.maximize):
    m = pyo.ConcreteModel("one product")
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=m.x, sense=sense)
    m.cap = pyo.Constraint(expr=m.x <= 2.0)
    return m


def test_a_row_moving_with_its_right_hand_side_has_its_closed_form():
    """(1 + u) x <= 2 + 0.5 u, |u| <= 0.5: x + u (x - 0.5) <= 2 for every u, so x + 0.5|x - 0.5| <= 2: x = 1.5."""
    m = one_product()
    rc = robust_counterpart(m, [affine_row(m.cap, [m.x], [[1.0]], Box.symmetric(0.5), beta=[0.5])])
    assert solve(rc).objective == pytest.approx(1.5, rel=REL)


def test_a_ge_row_and_an_uncertain_objective_under_a_ball_verified():
    """min (1 + u1) x0 + (2 + u2) x1 s.t. (1 + u1) x0 + (1 + u2) x1 >= 2 + 0.2 u1, ||u||_2 <= 0.3, x >= 0: the
    cutting planes agree, and the counterpart is worse than the nominal model (the set is felt)."""
    m = pyo.ConcreteModel("a covering LP")
    m.x = pyo.Var(range(2), domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=m.x[0] + 2 * m.x[1])
    m.need = pyo.Constraint(expr=m.x[0] + m.x[1] >= 2.0)
    x = [m.x[0], m.x[1]]
    ball = NormBall(2, 0.3)
    uncertain = [affine_row(m.need, x, np.eye(2), ball, beta=[0.2, 0.0]), affine_term(x, np.eye(2), ball)]
    rc = robust_counterpart(m, uncertain)
    v = verify(m, uncertain, rc)
    assert v.verified, v.table()
    assert solve(rc).objective > solve(m).objective + 0.1


def test_affine_row_is_the_coefficients_worked_out_by_hand():
    """docs/robustify.md section 8: (a0 + A u)'x <= b + beta'u on machine 2, ||u||_2 <= 1, maximised; the same
    optimum as the coefficients (A'x)_l - beta_l written by hand (95.298880 on the page)."""
    hours = np.array([[2.0, 3.0, 1.0], [4.0, 1.0, 2.0], [3.0, 4.0, 2.0]])
    A = np.array([[0.2, 0.0], [0.0, 0.3], [0.1, 0.1]])
    beta = np.array([2.0, 0.0])
    plan = pyo.ConcreteModel()
    plan.x = pyo.Var(range(3), domain=pyo.NonNegativeReals)
    plan.profit = pyo.Objective(expr=5 * plan.x[0] + 4 * plan.x[1] + 3 * plan.x[2], sense=pyo.maximize)
    plan.machine = pyo.Constraint(range(3), rule=lambda m, k: sum(hours[k, j] * m.x[j] for j in range(3))
                                  <= (50.0, 60.0, 70.0)[k])
    x = [plan.x[j] for j in range(3)]
    by_hand = [sum(A[j, k] * x[j] for j in range(3)) - beta[k] for k in range(2)]
    ours = solve(robust_counterpart(plan, [affine_row(plan.machine[2], x, A, NormBall(2, 1.0), beta)])).objective
    hand = solve(robust_counterpart(plan, [UncertainRow(plan.machine[2], by_hand, NormBall(2, 1.0))])).objective
    assert ours == pytest.approx(hand, rel=REL) and ours == pytest.approx(95.298880, abs=1e-6)


@pytest.mark.parametrize("A,beta,message", [
    ([[1.0], [0.0]], None, "n x L matrix"),
    ([[np.nan]], None, "finite"),
    ([[1.0]], [1.0, 2.0], "beta must be 1 finite numbers"),
])
def test_shapes_that_do_not_match_are_refused(A, beta, message):
    m = one_product()
    with pytest.raises(ValueError, match=message):
        affine_row(m.cap, [m.x], A, Box.symmetric(0.5), beta=beta)
