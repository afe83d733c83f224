"""The verifier on models shaped as users write them: a maximised objective, variables and rows in a Block, an
unbounded nominal model. Truths: closed forms by hand, and wrong counterparts (the nominal model itself) that the
verifier must refuse, so that a verifier that always says yes fails these tests."""

import pyomo.environ as pyo
import pytest

from tpm_models import robust_counterpart, solve
from tpm_models.checks.verify import verify
from tpm_models.models.uncertainty import Box, NormBall, UncertainRow, UncertainTerm
from tpm_models.solvers.backends.registry import available_solvers

TOL = 1e-7
"""Relative agreement of optima: the solvers' default gaps are ~1e-8 on these two-variable LPs."""


def maximised():
    """max x1 + x2 - 0.5 max_{|d| <= 0.2} d'x s.t. (1 + d1) x1 + (2 + d2) x2 <= 4 for |d| <= 0.5, x >= 0.

    With x >= 0 the row's worst case is 1.5 x1 + 2.5 x2 <= 4 and the term's least value -0.5 * 0.2 (x1 + x2) (a box
    of half-width 0.2: the l_1 norm of x): maximise 0.9 (x1 + x2) on the row, x = (4/1.5, 0), optimum 0.9 * 8/3."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=m.x[1] + m.x[2], sense=pyo.maximize)
    m.row = pyo.Constraint(expr=m.x[1] + 2 * m.x[2] <= 4)
    x = [m.x[1], m.x[2]]
    return m, [UncertainRow(m.row, x, Box(-0.5, 0.5)), UncertainTerm(x, NormBall(float("inf"), 0.2), -0.5)]


def test_a_maximised_model_is_verified_by_cutting_planes():
    m, uncertain = maximised()
    cp = robust_counterpart(m, uncertain)
    v = verify(m, uncertain, cp)
    assert v.verified, v.table()
    assert v.semi_infinite.objective == pytest.approx(0.9 * 8 / 3, rel=TOL)
    assert v.counterpart_objective == pytest.approx(0.9 * 8 / 3, rel=TOL)


def test_a_wrong_counterpart_of_a_maximised_model_is_refused():
    m, uncertain = maximised()
    v = verify(m, uncertain, m.clone())  # the nominal model: optimum 4 > the robust 2.4
    assert v.verdict == "not a counterpart", v.table()
    assert any("violates row" in r for r in v.reasons), v.reasons


@pytest.mark.skipif("gurobi" not in available_solvers(), reason="PyROS's subsolvers here are Gurobi")
def test_a_maximised_model_is_verified_by_pyros():
    m, uncertain = maximised()
    v = verify(m, uncertain, robust_counterpart(m, uncertain), method="pyros", local_solver="gurobi_direct",
               global_solver="gurobi_direct")
    assert v.verified, v.table()
    assert v.semi_infinite.objective == pytest.approx(0.9 * 8 / 3, rel=TOL)


def in_a_block():
    """min -x0 - x1 s.t. (1 + d0) x0 + (2 + d1) x1 <= 4, |d| <= 0.5, x >= 0, all in ``m.plant``: -8/3 (see
    tests/models/test_counterpart_forms.py)."""
    m = pyo.ConcreteModel()
    m.plant = pyo.Block()
    m.plant.x = pyo.Var([0, 1], domain=pyo.NonNegativeReals)
    m.plant.row = pyo.Constraint(expr=m.plant.x[0] + 2 * m.plant.x[1] <= 4)
    m.obj = pyo.Objective(expr=-m.plant.x[0] - m.plant.x[1])
    return m, [UncertainRow(m.plant.row, [m.plant.x[0], m.plant.x[1]], Box(-0.5, 0.5))]


def test_variables_in_a_block_are_keyed_by_their_full_name():
    m, uncertain = in_a_block()
    v = verify(m, uncertain, robust_counterpart(m, uncertain))
    assert v.verified, v.table()
    assert v.counterpart_objective == pytest.approx(-8 / 3, rel=TOL)
    assert list(v.counterpart_values) == ["plant.x"]
    wrong = verify(m, uncertain, m.clone())
    assert wrong.verdict == "not a counterpart", wrong.table()
    with pytest.raises(ValueError, match=r"no variable \['x'\].*full name"):
        verify(m, uncertain, robust_counterpart(m, uncertain), variables={"plant.x": "x"})


def unbounded(upper=None):
    """min -x0 - x1 + 0.1 x0^2, x >= 0, x1 <= ``upper``, x0 <= 1 uncertain (|d| <= 0.1 on its coefficient)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], domain=pyo.NonNegativeReals)
    m.x[1].setub(upper)
    m.obj = pyo.Objective(expr=-m.x[0] - m.x[1] + 0.1 * m.x[0] ** 2)
    m.cap = pyo.Constraint(expr=m.x[0] <= 1)
    return m, [UncertainRow(m.cap, [m.x[0]], Box(-0.1, 0.1))]


def test_an_unbounded_nominal_model_is_said_in_words():
    """x1 runs to infinity in the nominal model and in its counterpart; bounded at 3, the worst row is 1.1 x0 <= 1,
    x0 = 1/1.1 (-x0 + 0.1 x0^2 falls until x0 = 5), and no such words."""
    m, uncertain = unbounded()
    v = verify(m, uncertain, robust_counterpart(m, uncertain))
    assert v.verdict == "could not decide"
    assert any("the nominal model is unbounded" in u and "x[1]" in u for u in v.undecided), v.undecided
    m, uncertain = unbounded(3.0)
    v = verify(m, uncertain, robust_counterpart(m, uncertain))
    assert v.verified, v.table()
    assert v.counterpart_objective == pytest.approx(-1 / 1.1 - 3 + 0.1 / 1.21, rel=TOL)
    assert solve(m).objective == pytest.approx(-1 - 3 + 0.1, rel=TOL)
