"""The conic mapping completed (issue 23): each shape that :mod:`tpm_models.solvers.conic` maps, solved by Clarabel
against a closed form worked by hand in its docstring (and listed in ``docs/solvers.md``)."""

import math

import pyomo.environ as pyo
import pytest

from tpm_models import solvers as S
from tpm_models.solvers.conic import conic_form
from tpm_models.solvers.conic_shapes import ShapeReader
from tpm_models.solvers.dispatch import solve
from tpm_models.solvers.program import Program

TOL = 1e-8
"""Relative error against the closed form: Clarabel is run at 1e-12 and its point polished."""

if not S.BACKENDS["clarabel"].installed():
    pytest.skip("clarabel is not installed (pip install clarabel)", allow_module_level=True)


def equal_bounds_cone():
    """min -x s.t. x^2 <= t^2, t in [2, 2] (bounds, not fixed): -2 (was PrimalInfeasible: s = -lb - x)."""
    m = pyo.ConcreteModel(name="equal bounds, cone")
    m.x = pyo.Var()
    m.t = pyo.Var(bounds=(2, 2))
    m.obj = pyo.Objective(expr=-m.x)
    m.c = pyo.Constraint(expr=m.x**2 <= m.t**2)
    return m, -2.0


def equal_bounds_lp():
    """min x s.t. x >= t, x >= 0, t in [2, 2]: 2 (was numerical_error)."""
    m = pyo.ConcreteModel(name="equal bounds, LP")
    m.x = pyo.Var(bounds=(0, None))
    m.t = pyo.Var(bounds=(2, 2))
    m.obj = pyo.Objective(expr=m.x)
    m.c = pyo.Constraint(expr=m.x >= m.t)
    return m, 2.0


def rotated():
    """min t + s s.t. x^2 <= t s, x = 2, t, s >= 0: t + s >= 2 sqrt(ts) >= 2|x| = 4 (t = s = 2)."""
    m = pyo.ConcreteModel(name="rotated cone")
    m.x = pyo.Var()
    m.t = pyo.Var(bounds=(0, None))
    m.s = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=m.t + m.s)
    m.c = pyo.Constraint(expr=m.x**2 <= m.t * m.s)
    m.fix_x = pyo.Constraint(expr=m.x == 2)
    return m, 4.0


def rotated_with_constant():
    """min t + s s.t. x1^2 + x2^2 + 1 <= t s, x1 = x2 = 1: ts >= 3, t + s >= 2 sqrt(3)."""
    m = pyo.ConcreteModel(name="rotated cone with a constant")
    m.x = pyo.Var([1, 2])
    m.t = pyo.Var(bounds=(0, None))
    m.s = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=m.t + m.s)
    m.c = pyo.Constraint(expr=m.x[1] ** 2 + m.x[2] ** 2 + 1 <= m.t * m.s)
    m.fix_x = pyo.Constraint([1, 2], rule=lambda m, k: m.x[k] == 1)
    return m, 2 * math.sqrt(3)


def hyperbolic():
    """min x + 4y s.t. x y >= 1, x, y >= 0: x + 4y >= 2 sqrt(4xy) >= 4 (x = 2, y = 1/2)."""
    m = pyo.ConcreteModel(name="x y >= 1")
    m.x = pyo.Var(bounds=(0, None))
    m.y = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=m.x + 4 * m.y)
    m.c = pyo.Constraint(expr=m.x * m.y >= 1)
    return m, 4.0


def abs_objective():
    """min |x - 3| + |2y + 1| s.t. x + y = 4: on the line, |x - 3| + |9 - 2x| falls (6 - x) on [3, 4.5] and rises
    after: 1.5 at x = 4.5."""
    m = pyo.ConcreteModel(name="abs in the objective")
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.obj = pyo.Objective(expr=abs(m.x - 3) + abs(2 * m.y + 1))
    m.line = pyo.Constraint(expr=m.x + m.y == 4)
    return m, 1.5


def abs_row():
    """max x + y s.t. |x - y| <= 1, x + 2y <= 4: both rows bind at x = 2, y = 1: 3."""
    m = pyo.ConcreteModel(name="abs in a row")
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.obj = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    m.c = pyo.Constraint(expr=abs(m.x - m.y) <= 1)
    m.d = pyo.Constraint(expr=m.x + 2 * m.y <= 4)
    return m, 3.0


def sqrt_row():
    """min t s.t. sqrt(x^2 + y^2 + 9) <= t + 1, x + y = 4: x = y = 2 minimises x^2 + y^2 = 8: sqrt(17) - 1."""
    m = pyo.ConcreteModel(name="sqrt(quadratic) <= affine")
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.t = pyo.Var()
    m.obj = pyo.Objective(expr=m.t)
    m.c = pyo.Constraint(expr=pyo.sqrt(m.x**2 + m.y**2 + 9) <= m.t + 1)
    m.line = pyo.Constraint(expr=m.x + m.y == 4)
    return m, math.sqrt(17) - 1


def cone_sign_as_a_row():
    """min -x s.t. x^2 <= t^2, t >= 0 and t <= 2 written as rows (no bounds): -2."""
    m = pyo.ConcreteModel(name="t >= 0 written as a row")
    m.x = pyo.Var()
    m.t = pyo.Var()
    m.obj = pyo.Objective(expr=-m.x)
    m.c = pyo.Constraint(expr=m.x**2 <= m.t**2)
    m.sign = pyo.Constraint(expr=m.t >= 0)
    m.top = pyo.Constraint(expr=m.t <= 2)
    return m, -2.0


def rotated_signs_as_rows():
    """min t + s s.t. x^2 <= t s, x = 2, with 2 t >= 0 and s >= 0 written as rows: 4."""
    m = pyo.ConcreteModel(name="rotated cone, signs as rows")
    m.x = pyo.Var()
    m.t = pyo.Var()
    m.s = pyo.Var()
    m.obj = pyo.Objective(expr=m.t + m.s)
    m.c = pyo.Constraint(expr=m.x**2 <= m.t * m.s)
    m.fix_x = pyo.Constraint(expr=m.x == 2)
    m.t_sign = pyo.Constraint(expr=2 * m.t >= 0)
    m.s_sign = pyo.Constraint(expr=m.s >= 0)
    return m, 4.0


SHAPES = [cone_sign_as_a_row, rotated_signs_as_rows, equal_bounds_cone, equal_bounds_lp, rotated,
          rotated_with_constant, hyperbolic, abs_objective, abs_row,
          sqrt_row]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda f: f.__name__)
def test_a_shape_is_mapped_and_solved_to_its_closed_form(shape):
    model, truth = shape()
    conic_form(model)  # mapped, not refused
    r = solve(model, "clarabel")
    assert abs(r.objective - truth) <= TOL * max(1.0, abs(truth)), (r.objective, truth)
    # certified where every row is differentiable at the point (abs at its kink is not: optimal, not certified)
    if shape is not abs_objective:
        assert r.certified, r.message


@pytest.mark.parametrize("shape", [rotated, hyperbolic, sqrt_row, abs_row], ids=lambda f: f.__name__)
def test_the_default_takes_the_shape(shape):
    """The default of these (NLP by their rows) is Clarabel, which now maps them instead of refusing."""
    model, truth = shape()
    r = solve(model)
    assert r.solver == "clarabel" and abs(r.objective - truth) <= TOL * max(1.0, abs(truth))


def test_a_sign_row_makes_the_cone_a_socp():
    assert S.model_class(cone_sign_as_a_row()[0]) == "SOCP"


def test_a_rotated_cone_needs_nonnegative_factors():
    """x^2 <= t s with s free is not convex (t = -1, s = -1 allows every |x| <= 1 and more): refused."""
    model, _ = rotated()
    model.s.setlb(None)
    with pytest.raises(S.SolverUnavailableError, match="not convex"):
        solve(model, "clarabel")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("name", sorted(S.BACKENDS))
def test_no_backend_reports_another_optimum(shape, name):
    """Every installed backend on every shape: the closed form, or a refusal, or not optimal (Xpress on the cone
    whose sign is a row returns a point the certificate rejects; CPLEX says the row is not convex)."""
    b = S.BACKENDS[name]
    if not b.available():
        pytest.skip(f"{name} is not installed or not ready")
    model, truth = shape()
    try:
        r = solve(model, name, raise_on_failure=False)
    except S.SolverUnavailableError:
        return
    if r.optimal:
        assert abs(r.objective - truth) <= 1e-6 * max(1.0, abs(truth)), (name, r.objective, truth)


def sqrt_over_abs():
    """max x s.t. sqrt(4 - y) >= abs(x), y >= 0 (its hypograph: x^2 <= 4 - y): x = 2 at y = 0."""
    m = pyo.ConcreteModel(name="sqrt(e) >= abs(x)")
    m.x = pyo.Var()
    m.y = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    m.c = pyo.Constraint(expr=pyo.sqrt(4 - m.y) >= abs(m.x))
    return m, 2.0


def sqrt_in_a_maximised_objective():
    """max sqrt(x) - x / 4: derivative 1/(2 sqrt x) = 1/4 at x = 4: 2 - 1 = 1."""
    m = pyo.ConcreteModel(name="max sqrt(x) - x/4")
    m.x = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=pyo.sqrt(m.x) - m.x / 4, sense=pyo.maximize)
    return m, 1.0


@pytest.mark.parametrize("shape", [sqrt_over_abs, sqrt_in_a_maximised_objective], ids=lambda f: f.__name__)
def test_a_concave_sqrt_on_its_concave_side(shape):
    model, truth = shape()
    r = solve(model, "clarabel")
    assert abs(r.objective - truth) <= TOL * max(1.0, abs(truth)), (r.objective, truth)


def test_a_concave_sqrt_on_its_convex_side_is_refused():
    """min sqrt(x): the hypograph is not exact there (and the model is not convex)."""
    m = pyo.ConcreteModel(name="min sqrt(x)")
    m.x = pyo.Var(bounds=(1, 4))
    m.obj = pyo.Objective(expr=pyo.sqrt(m.x))
    with pytest.raises(S.SolverUnavailableError, match="wrong sign"):
        solve(m, "clarabel")


def test_an_affine_square_is_read_as_pyomo_expands_it():
    """``(a'x + b)**2`` read from its base (:meth:`ShapeReader.affine_square`) against Pyomo's standard
    representation of the same node (:meth:`ShapeReader.quadratic`): the same pairs, a variable written twice
    summed, a zero coefficient left out, the constant's cross terms; 1e-15 relative (products of the same numbers,
    summed in one order or the other); a bare variable's square ((28)'s 1/2 ||w||^2 term by term) too, and a
    variable with no column of the program is not read (``None``: the standard representation's path says what it
    is). Solved: min (x + 2y - 3 + x)^2 + (y - 1)^2 + z^2 has its minimum 0 at (y = 1, x = 0.5, z = 0), squares the
    reader took."""
    m = pyo.ConcreteModel(name="affine squares")
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.z = pyo.Var()
    m.obj = pyo.Objective(expr=(m.x + 2 * m.y - 3 + m.x + 0.0 * m.z) ** 2 + (m.y - 1) ** 2 + m.z**2)
    reader = ShapeReader(Program(m))
    for node in m.obj.expr.args:
        read, expanded = reader.affine_square(node), reader.quadratic(node, "test")
        assert read is not None
        for got, want in zip(read[:2], expanded[:2]):
            assert {k for k, v in got.items() if v} == {k for k, v in want.items() if v}
            assert all(got.get(k, 0.0) == pytest.approx(v, rel=1e-15) for k, v in want.items())
        assert read[2] == pytest.approx(expanded[2], rel=1e-15)
    assert reader.affine_square(m.x**3) is None and reader.affine_square(pyo.sqrt(m.x + m.y)) is None
    other = pyo.ConcreteModel()
    other.v = pyo.Var()
    assert reader.affine_square(other.v**2) is None and reader.affine_square((other.v + m.x) ** 2) is None
    result = solve(m, "clarabel")
    assert result.objective == pytest.approx(0.0, abs=TOL)
    assert (m.x.value, m.y.value, m.z.value) == pytest.approx((0.5, 1.0, 0.0), abs=1e-6)
