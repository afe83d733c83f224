"""Small Pyomo models written in the idioms users write and Pyomo's documentation shows, each with its truth.

Every factory in :data:`CASES` builds a fresh ``ConcreteModel`` and returns ``(model, truth)``. The truth is computed
without ``tpm_models``: a closed form (the math is in the factory's docstring or a comment beside it), or Pyomo's own
native solver interface (``appsi_highs``, ``gurobi_direct``, ``scip_direct``) run on a *clone* of the model after the
proper transformation (``gdp.bigm``, ``core.logical_to_linear``, ...). A native truth is a zero-argument callable, so
the battery computes it once per case (it caches it) and never on the model it hands to ``solve()``.

Truth kinds: ``"optimal"`` (with ``value`` and optionally the unique ``point``), ``"infeasible"``, ``"unbounded"``,
``"infeasible_or_unbounded"`` and ``"must_refuse"`` (no answer is right: a solver must raise or return no optimum).

``may_refuse``: the model holds a component a backend may legitimately refuse (an untransformed Disjunction,
LogicalConstraint, SOSConstraint, Piecewise, Expr_if, Complementarity). The decision for those, used throughout:
the right answer is the optimum of the model *with* the disjunction / logic / SOS condition honoured (it is part of
the model as written), so a backend either refuses (``SolverUnavailableError`` / ``ModelError``, or no optimum) or
returns that optimum; solving the model with the component ignored is a wrong answer.

``nonconvex``: the model is a non-convex NLP; the truth is the *global* optimum, so a local optimum reported
``optimal`` is wrong (the library has no ``locally optimal`` status yet).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pyomo.environ as pyo
from pyomo.core.expr.logical_expr import atleast, atmost, equivalent, exactly, implies, lor
from pyomo.gdp import Disjunct, Disjunction


@dataclass
class Truth:
    kind: str  # optimal | infeasible | unbounded | infeasible_or_unbounded | must_refuse
    value: float | None = None
    point: dict | None = None  # {var name: value} where the optimum is unique
    may_refuse: bool = False
    nonconvex: bool = False
    source: str = "closed form"
    again: tuple | None = None  # (mutate(model), Truth): change the model after the first solve and solve again


def opt(value, point=None, **kw):
    return Truth("optimal", float(value), point, **kw)


INFEASIBLE = "infeasible"
UNBOUNDED = "unbounded"


def bad(kind, **kw):
    return Truth(kind, **kw)


CASES: dict[str, Callable] = {}


def case(name):
    def register(factory):
        assert name not in CASES, name
        CASES[name] = factory
        return factory

    return register


# ---------------------------------------------------------------------------------------------------------------
# Native truth: Pyomo's own solver interfaces on a clone, after a transformation.


def native(model, transformations=(), solver="appsi_highs", options=None, may_refuse=True, nonconvex=False):
    """A zero-argument callable giving the truth of ``model`` (cloned now) from Pyomo's native interface."""
    copy = model.clone()

    def truth():
        if not pyo.SolverFactory(solver).available(exception_flag=False):
            import pytest

            pytest.skip(f"the truth needs Pyomo's {solver}, not installed here")
        for t in transformations:
            pyo.TransformationFactory(t).apply_to(copy)
        opt_ = pyo.SolverFactory(solver)
        for k, v in (options or {}).items():
            opt_.options[k] = v
        res = opt_.solve(copy, load_solutions=False)
        tc = res.solver.termination_condition
        tcs = pyo.TerminationCondition
        src = f"native {solver} after {list(transformations)}"
        if tc == tcs.optimal:
            copy.solutions.load_from(res)
            obj = next(copy.component_data_objects(pyo.Objective, active=True))
            return Truth("optimal", float(pyo.value(obj)), may_refuse=may_refuse, nonconvex=nonconvex, source=src)
        kinds = {tcs.infeasible: "infeasible", tcs.unbounded: "unbounded",
                 tcs.infeasibleOrUnbounded: "infeasible_or_unbounded"}
        if tc in kinds:
            return Truth(kinds[tc], may_refuse=may_refuse, nonconvex=nonconvex, source=src)
        raise RuntimeError(f"native truth failed: {solver} said {tc}")

    return truth


# ---------------------------------------------------------------------------------------------------------------
# Plain LPs in many spellings


@case("lp_basic")
def lp_basic():
    """min x + y, x + 2y >= 4, 3x + y >= 6, x, y >= 0: vertex x = 8/5, y = 6/5, value 14/5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.c1 = pyo.Constraint(expr=m.x + 2 * m.y >= 4)
    m.c2 = pyo.Constraint(expr=3 * m.x + m.y >= 6)
    m.obj = pyo.Objective(expr=m.x + m.y)
    return m, opt(2.8, {"x": 1.6, "y": 1.2})


def _add_box_lp(label, index, cost, lo, hi):
    @case(f"lp_box_{label}")
    def factory():
        """min sum_i c_i x_i on a box: x_i = lo_i where c_i > 0, hi_i where c_i < 0."""
        m = pyo.ConcreteModel()
        m.I = pyo.Set(initialize=index, dimen=None)
        m.c = pyo.Param(m.I, initialize=cost)
        m.x = pyo.Var(m.I, bounds=lambda m, *i: (lo, hi))
        m.obj = pyo.Objective(expr=sum(m.c[i] * m.x[i] for i in m.I))
        value = sum(c * (lo if c > 0 else hi) for c in cost.values())
        return m, opt(value)

    return factory


_add_box_lp("strings", ["a", "b", "c"], {"a": 1.0, "b": -2.0, "c": 3.0}, -1, 2)
_add_box_lp("tuples", [(1, "u"), (2, "v")], {(1, "u"): -1.5, (2, "v"): 0.5}, 0, 4)
_add_box_lp("ints", [1, 2, 3, 4, 5], {i: (-1) ** i * i for i in range(1, 6)}, -2, 3)


@case("lp_max")
def lp_max():
    """max 3x + 2y, x + y <= 4, x + 3y <= 6, x <= 3, x, y >= 0: vertex (3, 1), value 11."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 3))
    m.y = pyo.Var(bounds=(0, None))
    m.c1 = pyo.Constraint(expr=m.x + m.y <= 4)
    m.c2 = pyo.Constraint(expr=m.x + 3 * m.y <= 6)
    m.obj = pyo.Objective(expr=3 * m.x + 2 * m.y, sense=pyo.maximize)
    return m, opt(11, {"x": 3, "y": 1})


@case("lp_max_sense_keyword")
def lp_max_kw():
    """maximize written as sense=-1: max x - y, x <= 2, y >= 1: 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(None, 2))
    m.y = pyo.Var(bounds=(1, None))
    m.obj = pyo.Objective(expr=m.x - m.y, sense=-1)
    return m, opt(1, {"x": 2, "y": 1})


@case("lp_max_negated_min")
def lp_max_negated():
    """min -(x + y), x + y <= 5, x, y >= 0: -5 (point not unique)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.x + m.y <= 5)
    m.obj = pyo.Objective(expr=-(m.x + m.y))
    return m, opt(-5)


for _k, (_lo, _hi) in enumerate([(1, 3), (-2, 2), (0, 0.5), (-5, -1)]):

    def _ranged(lo=_lo, hi=_hi):
        """min x - 2y with lo <= x + y <= hi (ranged row), 0 <= y <= 1, x free: x = lo - y, value lo - 3."""
        m = pyo.ConcreteModel()
        m.x = pyo.Var()
        m.y = pyo.Var(bounds=(0, 1))
        m.r = pyo.Constraint(expr=pyo.inequality(lo, m.x + m.y, hi))
        m.obj = pyo.Objective(expr=m.x - 2 * m.y)
        return m, opt(lo - 3, {"x": lo - 1, "y": 1})

    case(f"ranged_row_{_k}")(_ranged)


@case("ranged_row_tuple")
def ranged_tuple():
    """Constraint(expr=(1, x + y, 3)), min 2x + y, x, y >= 0: x = 0, y = 1, value 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.r = pyo.Constraint(expr=(1, m.x + m.y, 3))
    m.obj = pyo.Objective(expr=2 * m.x + m.y)
    return m, opt(1, {"x": 0, "y": 1})


@case("ranged_row_mutable_bounds")
def ranged_mutable():
    """A ranged row with mutable Param bounds lo = 2, hi = 4, lo set to 3 after construction: min x: 3."""
    m = pyo.ConcreteModel()
    m.lo = pyo.Param(initialize=2, mutable=True)
    m.hi = pyo.Param(initialize=4, mutable=True)
    m.x = pyo.Var()
    m.r = pyo.Constraint(expr=pyo.inequality(m.lo, m.x, m.hi))
    m.obj = pyo.Objective(expr=m.x)
    m.lo = 3
    return m, opt(3, {"x": 3})


for _k, _rhs in enumerate([0, 2.5, -4]):

    def _eq(rhs=_rhs):
        """min x + 2y with x - y == rhs, x, y >= 0: x = max(rhs, 0), y = max(-rhs, 0)."""
        m = pyo.ConcreteModel()
        m.x = pyo.Var(within=pyo.NonNegativeReals)
        m.y = pyo.Var(within=pyo.NonNegativeReals)
        m.e = pyo.Constraint(expr=m.x - m.y == rhs)
        m.obj = pyo.Objective(expr=m.x + 2 * m.y)
        return m, opt(max(rhs, 0) + 2 * max(-rhs, 0), {"x": max(rhs, 0), "y": max(-rhs, 0)})

    case(f"equality_row_{_k}")(_eq)


@case("equality_rows_indexed")
def eq_indexed():
    """x_i == i for i in 1..4 (indexed equality rows), min sum x: 10."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(4)
    m.x = pyo.Var(m.I)
    m.e = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] == i)
    m.obj = pyo.Objective(expr=pyo.summation(m.x))
    return m, opt(10)


@case("constant_objective")
def const_obj():
    """Objective(expr=0): a feasibility problem, x + y >= 1, x, y in [0, 1]: value 0."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x + m.y >= 1)
    m.obj = pyo.Objective(expr=0)
    return m, opt(0)


@case("constant_objective_param")
def const_obj_param():
    """The objective is a mutable Param (value 7): value 7 at any feasible point."""
    m = pyo.ConcreteModel()
    m.p = pyo.Param(initialize=7, mutable=True)
    m.x = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x >= 0.5)
    m.obj = pyo.Objective(expr=m.p)
    return m, opt(7)


@case("constant_objective_fixed_var")
def const_obj_fixed():
    """min 3 z with z fixed at 2 and a free row x <= 1: value 6."""
    m = pyo.ConcreteModel()
    m.z = pyo.Var()
    m.z.fix(2)
    m.x = pyo.Var()
    m.c = pyo.Constraint(expr=m.x <= 1)
    m.obj = pyo.Objective(expr=3 * m.z)
    return m, opt(6)


@case("constant_objective_max")
def const_obj_max():
    """maximize a constant 4.5 over x in [0, 1], x >= 0.2: 4.5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x >= 0.2)
    m.obj = pyo.Objective(expr=4.5, sense=pyo.maximize)
    return m, opt(4.5)


@case("objective_with_constant")
def obj_const():
    """min x + 10, x >= 1: 11 (the objective as built, constant included)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1, None))
    m.obj = pyo.Objective(expr=m.x + 10)
    return m, opt(11, {"x": 1})


@case("two_objectives_active")
def two_objectives():
    """Two active objectives: the model does not say what to optimise: no answer is right."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.o1 = pyo.Objective(expr=m.x)
    m.o2 = pyo.Objective(expr=-m.x)
    return m, Truth("must_refuse")


@case("two_objectives_one_deactivated")
def two_objectives_deact():
    """Two objectives, the first deactivated: min -x on [0, 1]: -1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.o1 = pyo.Objective(expr=m.x)
    m.o2 = pyo.Objective(expr=-m.x)
    m.o1.deactivate()
    return m, opt(-1, {"x": 1})


@case("indexed_objective_one_active")
def indexed_objective():
    """Objective indexed by k in {1, 2, 3}, (k - 2.5) x, all but k = 2 deactivated: min -0.5 x on [-1, 4]: -2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 4))
    m.o = pyo.Objective([1, 2, 3], rule=lambda m, k: (k - 2.5) * m.x)  # k = 2: -0.5 x, min at x = 4: -2
    m.o[1].deactivate()
    m.o[3].deactivate()
    return m, opt(-2, {"x": 4})


# ---------------------------------------------------------------------------------------------------------------
# Blocks


@case("block_simple")
def block_simple():
    """Rows and vars in a sub-block: min b.x + y, b.x >= 2, y >= b.x - 1, y >= 0: x = 2, y = 1, value 3."""
    m = pyo.ConcreteModel()
    m.b = pyo.Block()
    m.b.x = pyo.Var()
    m.b.c = pyo.Constraint(expr=m.b.x >= 2)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.y >= m.b.x - 1)
    m.obj = pyo.Objective(expr=m.b.x + m.y)
    return m, opt(3)


@case("block_nested")
def block_nested():
    """Three levels: a.b.c.x >= 1, a.b.y >= a.b.c.x + 1, a.z == 2 a.b.y: min a.z = 4."""
    m = pyo.ConcreteModel()
    m.a = pyo.Block()
    m.a.b = pyo.Block()
    m.a.b.c = pyo.Block()
    m.a.b.c.x = pyo.Var(bounds=(1, None))
    m.a.b.y = pyo.Var()
    m.a.b.row = pyo.Constraint(expr=m.a.b.y >= m.a.b.c.x + 1)
    m.a.z = pyo.Var()
    m.a.link = pyo.Constraint(expr=m.a.z == 2 * m.a.b.y)
    m.obj = pyo.Objective(expr=m.a.z)
    return m, opt(4)


@case("block_indexed_rule")
def block_indexed():
    """Block(I, rule) with b[i].x >= i, objective min sum_i i * b[i].x over I = {1, 2, 3}: 1 + 4 + 9 = 14."""
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=[1, 2, 3])

    def rule(b, i):
        b.x = pyo.Var()
        b.c = pyo.Constraint(expr=b.x >= i)

    m.b = pyo.Block(m.I, rule=rule)
    m.obj = pyo.Objective(expr=sum(i * m.b[i].x for i in m.I))
    return m, opt(14)


@case("block_deactivated_infeasible_inside")
def block_deactivated():
    """A deactivated block holds an infeasible row (x >= 5 with x <= 1): ignored; min -x, x <= 1: -1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.off = pyo.Block()
    m.off.c = pyo.Constraint(expr=m.x >= 5)
    m.off.deactivate()
    m.obj = pyo.Objective(expr=-m.x)
    return m, opt(-1, {"x": 1})


@case("block_deactivated_objective_inside")
def block_deactivated_obj():
    """A deactivated block holds a second objective: only the top objective counts: min x, x in [2, 3]: 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(2, 3))
    m.off = pyo.Block()
    m.off.obj = pyo.Objective(expr=-m.x)
    m.off.deactivate()
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(2, {"x": 2})


@case("block_objective_in_subblock")
def block_obj_sub():
    """The only objective lives in a sub-block: min b.x, b.x >= 3: 3."""
    m = pyo.ConcreteModel()
    m.b = pyo.Block()
    m.b.x = pyo.Var(bounds=(3, 10))
    m.b.obj = pyo.Objective(expr=m.b.x)
    return m, opt(3)


@case("block_indexed_one_deactivated")
def block_idx_deact():
    """b[i].c: x >= i for i in 1..3, b[3] deactivated: min x = 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()

    def rule(b, i):
        b.c = pyo.Constraint(expr=b.model().x >= i)

    m.b = pyo.Block([1, 2, 3], rule=rule)
    m.b[3].deactivate()
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(2, {"x": 2})


@case("block_row_deactivated_in_block")
def block_row_deact():
    """In an active block one row is deactivated: b.c1: x >= 1 active, b.c2: x >= 4 off: min x = 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.b = pyo.Block()
    m.b.c1 = pyo.Constraint(expr=m.x >= 1)
    m.b.c2 = pyo.Constraint(expr=m.x >= 4)
    m.b.c2.deactivate()
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(1, {"x": 1})


@case("block_qp_in_block")
def block_qp():
    """min (b.x - 1)^2 + (b.y + 2)^2 with the rows and vars in a block, b.x + b.y >= 1: projection.

    Unconstrained optimum (1, -2) violates x + y >= 1 (sum -1); project onto x + y = 1: shift (1, 1) * 1 =>
    (2, -1), value 1 + 1 = 2."""
    m = pyo.ConcreteModel()
    m.b = pyo.Block()
    m.b.x = pyo.Var()
    m.b.y = pyo.Var()
    m.b.c = pyo.Constraint(expr=m.b.x + m.b.y >= 1)
    m.obj = pyo.Objective(expr=(m.b.x - 1) ** 2 + (m.b.y + 2) ** 2)
    return m, opt(2, {"b.x": 2, "b.y": -1})


# ---------------------------------------------------------------------------------------------------------------
# Named Expressions


@case("expression_linear")
def expr_linear():
    """e = 2x + 3y, min e, x + y >= 2, x, y >= 0: x = 2, value 4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.e = pyo.Expression(expr=2 * m.x + 3 * m.y)
    m.c = pyo.Constraint(expr=m.x + m.y >= 2)
    m.obj = pyo.Objective(expr=m.e)
    return m, opt(4, {"x": 2, "y": 0})


@case("expression_in_row")
def expr_in_row():
    """e = x - y used in a row e >= 3, min x + y, x, y >= 0: x = 3, value 3."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.e = pyo.Expression(expr=m.x - m.y)
    m.c = pyo.Constraint(expr=m.e >= 3)
    m.obj = pyo.Objective(expr=m.x + m.y)
    return m, opt(3, {"x": 3, "y": 0})


@case("expression_nested")
def expr_nested():
    """e1 = x + 1, e2 = 2 e1, e3 = e2 - y; min e3, x in [0, 2], y in [0, 1]: 2 - 1 = 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2))
    m.y = pyo.Var(bounds=(0, 1))
    m.e1 = pyo.Expression(expr=m.x + 1)
    m.e2 = pyo.Expression(expr=2 * m.e1)
    m.e3 = pyo.Expression(expr=m.e2 - m.y)
    m.obj = pyo.Objective(expr=m.e3)
    return m, opt(1, {"x": 0, "y": 1})


@case("expression_indexed")
def expr_indexed():
    """cost[i] = c_i x_i as an indexed Expression, sum x = 1, x >= 0: min c = 1 (c = 3, 1, 2)."""
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=["a", "b", "c"])
    m.c = pyo.Param(m.I, initialize={"a": 3, "b": 1, "c": 2})
    m.x = pyo.Var(m.I, within=pyo.NonNegativeReals)
    m.cost = pyo.Expression(m.I, rule=lambda m, i: m.c[i] * m.x[i])
    m.one = pyo.Constraint(expr=sum(m.x[i] for i in m.I) == 1)
    m.obj = pyo.Objective(expr=sum(m.cost[i] for i in m.I))
    return m, opt(1, {"x[a]": 0, "x[b]": 1, "x[c]": 0})


@case("expression_set_value_after")
def expr_set_value():
    """An Expression whose expression is replaced after construction: e = x, then e.set_value(-x); x in [0, 2]: -2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2))
    m.e = pyo.Expression(expr=m.x)
    m.obj = pyo.Objective(expr=m.e)
    m.e.set_value(-m.x)
    return m, opt(-2, {"x": 2})


for _k, _a in enumerate([2.0, -1.0, 0.5]):

    def _abs(a=_a):
        """e = abs(x - a), min e + 0.5 x on x in [-3, 3]: slope -1 + .5 left of a, 1.5 right: x = a, value 0.5 a."""
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(-3, 3))
        m.e = pyo.Expression(expr=abs(m.x - a))
        m.obj = pyo.Objective(expr=m.e + 0.5 * m.x)
        return m, opt(0.5 * a, {"x": a})

    case(f"expression_abs_{_k}")(_abs)


@case("expression_abs_in_row")
def expr_abs_row():
    """abs(x) <= 1 as a row through a named Expression; max x + 0.5y, y <= 1: x = 1, y = 1: 1.5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var(bounds=(0, 1))
    m.a = pyo.Expression(expr=abs(m.x))
    m.c = pyo.Constraint(expr=m.a <= 1)
    m.obj = pyo.Objective(expr=m.x + 0.5 * m.y, sense=pyo.maximize)
    return m, opt(1.5, {"x": 1, "y": 1})


@case("expression_abs_sum")
def expr_abs_sum():
    """min |x - 1| + |x - 2| + |x - 4| (a median): x = 2, value 1 + 0 + 2 = 3."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-10, 10))
    m.d = pyo.Expression([1, 2, 4], rule=lambda m, a: abs(m.x - a))
    m.obj = pyo.Objective(expr=sum(m.d.values()))
    return m, opt(3, {"x": 2})


@case("expression_max_like_epigraph")
def expr_max_epi():
    """max-like written as an epigraph: t >= x, t >= 2 - x (t = max(x, 2 - x)), min t: x = 1, t = 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-5, 5))
    m.t = pyo.Var()
    m.m1 = pyo.Constraint(expr=m.t >= m.x)
    m.m2 = pyo.Constraint(expr=m.t >= 2 - m.x)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(1, {"x": 1, "t": 1})


@case("expression_max_like_abs_formula")
def expr_max_abs():
    """max(a, b) = (a + b + |a - b|) / 2 as an Expression with a = x, b = 2 - x: min at x = 1, value 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-5, 5))
    m.mx = pyo.Expression(expr=(m.x + (2 - m.x) + abs(m.x - (2 - m.x))) / 2)
    m.obj = pyo.Objective(expr=m.mx)
    return m, opt(1, {"x": 1})


@case("expression_max_like_expr_if")
def expr_max_if():
    """max written with Expr_if(x >= 1, x, 2 - x), min it: 1 at x = 1 (a backend may refuse Expr_if)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-5, 5))
    m.mx = pyo.Expression(expr=pyo.Expr_if(IF=m.x >= 1, THEN=m.x, ELSE=2 - m.x))
    m.obj = pyo.Objective(expr=m.mx)
    return m, opt(1, {"x": 1}, may_refuse=True)


@case("expression_sqrt_objective")
def expr_sqrt():
    """e = sqrt(x**2 + y**2 + 1) (convex), min e + x s.t. y == 1, x in [-1, 5]: sqrt(x^2 + 2) + x has derivative
    x / sqrt(x^2 + 2) + 1 > 0, so x = -1: sqrt(3) - 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 5))
    m.y = pyo.Var()
    m.e = pyo.Expression(expr=pyo.sqrt(m.x ** 2 + m.y ** 2 + 1))
    m.c = pyo.Constraint(expr=m.y == 1)
    m.obj = pyo.Objective(expr=m.e + m.x)
    return m, opt(math.sqrt(3) - 1, {"x": -1, "y": 1})


@case("expression_sqrt_concave_max")
def expr_sqrt_max():
    """max sqrt(x) - x / 4 on [0, 9]: derivative 1 / (2 sqrt x) = 1/4 at x = 4: 2 - 1 = 1 (concave max: convex)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 9))
    m.e = pyo.Expression(expr=pyo.sqrt(m.x))
    m.obj = pyo.Objective(expr=m.e - m.x / 4, sense=pyo.maximize)
    return m, opt(1, {"x": 4})


@case("expression_quadratic_nested")
def expr_quad():
    """r = x - 3, s = r**2 + (y + 1)**2 (nested Expressions), min s on x <= 1: (1 - 3)^2 + 0 = 4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(None, 1))
    m.y = pyo.Var()
    m.r = pyo.Expression(expr=m.x - 3)
    m.s = pyo.Expression(expr=m.r ** 2 + (m.y + 1) ** 2)
    m.obj = pyo.Objective(expr=m.s)
    return m, opt(4, {"x": 1, "y": -1})


# ---------------------------------------------------------------------------------------------------------------
# Mutable Params and Param defaults


for _k, (_p0, _p1) in enumerate([(1, 3), (2, -1), (0.5, 0.5)]):

    def _mutable(p0=_p0, p1=_p1):
        """min x s.t. x >= p with p mutable: built with p0, changed to p1 after construction: p1; then p = p1 + 2."""
        m = pyo.ConcreteModel()
        m.p = pyo.Param(initialize=p0, mutable=True)
        m.x = pyo.Var()
        m.c = pyo.Constraint(expr=m.x >= m.p)
        m.obj = pyo.Objective(expr=m.x)
        m.p = p1

        def change(model, p=p1 + 2):
            model.p = p

        return m, opt(p1, {"x": p1}, again=(change, opt(p1 + 2, {"x": p1 + 2})))

    case(f"mutable_param_rhs_{_k}")(_mutable)


@case("mutable_param_coefficient")
def mutable_coef():
    """min c x with x in [-1, 2]; c = 1 at construction then set to -1: value -2; again with c = 3: -3."""
    m = pyo.ConcreteModel()
    m.c = pyo.Param(initialize=1, mutable=True)
    m.x = pyo.Var(bounds=(-1, 2))
    m.obj = pyo.Objective(expr=m.c * m.x)
    m.c = -1

    def change(model):
        model.c = 3

    return m, opt(-2, {"x": 2}, again=(change, opt(-3, {"x": -1})))


@case("mutable_param_indexed")
def mutable_idx():
    """Indexed mutable demand d[i]; x_i >= d_i, min sum x: d = (1, 2, 3) then d[2] = 10: 14; again d[1] = 0: 13."""
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=[1, 2, 3])
    m.d = pyo.Param(m.I, initialize={1: 1, 2: 2, 3: 3}, mutable=True)
    m.x = pyo.Var(m.I)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] >= m.d[i])
    m.obj = pyo.Objective(expr=sum(m.x[i] for i in m.I))
    m.d[2] = 10

    def change(model):
        model.d[1] = 0

    return m, opt(14, again=(change, opt(13)))


@case("mutable_param_qp_target")
def mutable_qp():
    """min (x - t)^2 with t mutable, x <= 1: t = 0 -> 0; then t = 3 -> (1 - 3)^2 = 4."""
    m = pyo.ConcreteModel()
    m.t = pyo.Param(initialize=0, mutable=True)
    m.x = pyo.Var(bounds=(None, 1))
    m.obj = pyo.Objective(expr=(m.x - m.t) ** 2)

    def change(model):
        model.t = 3

    return m, opt(0, {"x": 0}, again=(change, opt(4, {"x": 1})))


@case("mutable_param_in_bound")
def mutable_bound():
    """Var(bounds=(lo, None)) with lo a mutable Param, changed after construction from 1 to 5: min x = 5."""
    m = pyo.ConcreteModel()
    m.lo = pyo.Param(initialize=1, mutable=True)
    m.x = pyo.Var(bounds=(m.lo, None))
    m.obj = pyo.Objective(expr=m.x)
    m.lo = 5

    def change(model):
        model.lo = -2

    return m, opt(5, {"x": 5}, again=(change, opt(-2, {"x": -2})))


@case("var_bound_changed_after")
def var_bound_changed():
    """x.setub(2) after construction, then solved again after x.setlb(1) with the objective max x - ... : min -x: -2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.obj = pyo.Objective(expr=-m.x)
    m.x.setub(2)

    def change(model):
        model.x.setub(7)

    return m, opt(-2, {"x": 2}, again=(change, opt(-7, {"x": 7})))


@case("row_added_after_solve")
def row_added_after():
    """min x, x >= 1; after the first solve a row x >= 4 is added and the model solved again: 1 then 4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1, None))
    m.obj = pyo.Objective(expr=m.x)

    def change(model):
        model.extra = pyo.Constraint(expr=model.x >= 4)

    return m, opt(1, again=(change, opt(4)))


@case("row_deactivated_after_solve")
def row_deact_after():
    """min x, c: x >= 3, x >= 0; after the first solve c is deactivated: 3 then 0."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x >= 3)
    m.obj = pyo.Objective(expr=m.x)

    def change(model):
        model.c.deactivate()

    return m, opt(3, again=(change, opt(0)))


@case("param_default")
def param_default():
    """Param(I, default=2) with one value given (c[b] = -1): min sum c_i x_i, x in [0, 1]: -1."""
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=["a", "b", "c"])
    m.c = pyo.Param(m.I, initialize={"b": -1}, default=2)
    m.x = pyo.Var(m.I, bounds=(0, 1))
    m.obj = pyo.Objective(expr=sum(m.c[i] * m.x[i] for i in m.I))
    return m, opt(-1)


@case("param_default_mutable")
def param_default_mut():
    """Mutable Param with default 1, one entry set after construction to 4: x_i >= p_i, min sum x: 1 + 4 + 1 = 6."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(3)
    m.p = pyo.Param(m.I, default=1, mutable=True)
    m.x = pyo.Var(m.I)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] >= m.p[i])
    m.obj = pyo.Objective(expr=pyo.summation(m.x))
    m.p[2] = 4
    return m, opt(6)


@case("param_2d_default_sparse")
def param_2d():
    """A sparse cost matrix with default 0 over {1,2} x {1,2}: assignment LP, cost c[1,2] = -3, c[2,1] = -1.

    x_ij in [0, 1], each row and column sums to 1: the two permutations cost 0 (identity) and -4: -4."""
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=[1, 2])
    m.c = pyo.Param(m.I, m.I, initialize={(1, 2): -3, (2, 1): -1}, default=0)
    m.x = pyo.Var(m.I, m.I, bounds=(0, 1))
    m.row = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.I) == 1)
    m.col = pyo.Constraint(m.I, rule=lambda m, j: sum(m.x[i, j] for i in m.I) == 1)
    m.obj = pyo.Objective(expr=sum(m.c[i, j] * m.x[i, j] for i in m.I for j in m.I))
    return m, opt(-4)


# ---------------------------------------------------------------------------------------------------------------
# Constraint.Skip, ConstraintList, VarList, sparse Vars, References


@case("skip_1d")
def skip_1d():
    """c[i]: x[i] >= i for odd i, Skip for even i in 1..4; min sum x with x >= 0: 1 + 3 = 4."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(4)
    m.x = pyo.Var(m.I, within=pyo.NonNegativeReals)

    def rule(m, i):
        if i % 2 == 0:
            return pyo.Constraint.Skip
        return m.x[i] >= i

    m.c = pyo.Constraint(m.I, rule=rule)
    m.obj = pyo.Objective(expr=sum(m.x[i] for i in m.I))
    return m, opt(4)


@case("skip_2d")
def skip_2d():
    """c[i, j]: x[i] + x[j] >= 1 for i < j, Skip otherwise, over {1, 2, 3}^2, min sum x, x >= 0: value 1.5."""
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=[1, 2, 3])
    m.x = pyo.Var(m.I, within=pyo.NonNegativeReals)

    def rule(m, i, j):
        if i >= j:
            return pyo.Constraint.Skip
        return m.x[i] + m.x[j] >= 1

    m.c = pyo.Constraint(m.I, m.I, rule=rule)
    m.obj = pyo.Objective(expr=sum(m.x[i] for i in m.I))
    return m, opt(1.5, {"x[1]": 0.5, "x[2]": 0.5, "x[3]": 0.5})


@case("skip_next_prev")
def skip_next():
    """A ramp over an ordered set: x[t] <= x[t.prev] + 1, Skip at the first element; x[first] == 0; max x[last].

    T = {1..5}: x[5] <= 4: 4."""
    m = pyo.ConcreteModel()
    m.T = pyo.Set(initialize=[1, 2, 3, 4, 5], ordered=True)
    m.x = pyo.Var(m.T, bounds=(0, 100))

    def ramp(m, t):
        if t == m.T.first():
            return pyo.Constraint.Skip
        return m.x[t] <= m.x[m.T.prev(t)] + 1

    m.ramp = pyo.Constraint(m.T, rule=ramp)
    m.start = pyo.Constraint(expr=m.x[m.T.first()] == 0)
    m.obj = pyo.Objective(expr=m.x[m.T.last()], sense=pyo.maximize)
    return m, opt(4)


@case("skip_next_last")
def skip_next_last():
    """Storage balance with Set.next: s[next(t)] == s[t] + u[t] - 2, Skip at the last t; s[1] = 3, s >= 0, u in [0, 1].

    T = {1..4}: three transitions each use 2 - u; min sum u keeps s >= 0: s4 = 3 - 6 + U >= 0 => U >= 3... plus
    intermediate s2 = 1 + u1 >= 0 fine, s3 = s2 - 2 + u2 >= 0 => u1 + u2 >= 1, s4 = u1 + u2 + u3 - 3 >= 0 => U = 3."""
    m = pyo.ConcreteModel()
    m.T = pyo.Set(initialize=[1, 2, 3, 4], ordered=True)
    m.s = pyo.Var(m.T, within=pyo.NonNegativeReals)
    m.u = pyo.Var(m.T, bounds=(0, 1))

    def bal(m, t):
        if t == m.T.last():
            return pyo.Constraint.Skip
        return m.s[m.T.next(t)] == m.s[t] + m.u[t] - 2

    m.bal = pyo.Constraint(m.T, rule=bal)
    m.init = pyo.Constraint(expr=m.s[1] == 3)
    m.obj = pyo.Objective(expr=sum(m.u[t] for t in m.T))
    return m, opt(3)


@case("skip_all_but_one")
def skip_most():
    """An indexed Constraint with every member but one skipped: c[3]: x >= 3, min x: 3."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.c = pyo.Constraint([1, 2, 3, 4], rule=lambda m, i: m.x >= i if i == 3 else pyo.Constraint.Skip)
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(3)


@case("skip_qp")
def skip_qp():
    """QP with skipped rows: min sum (x_i - i)^2, c[i]: x_i <= 1 for i > 1 (Skip at 1), i in 1..3: 0 + 1 + 4 = 5."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(3)
    m.x = pyo.Var(m.I)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: pyo.Constraint.Skip if i == 1 else m.x[i] <= 1)
    m.obj = pyo.Objective(expr=sum((m.x[i] - i) ** 2 for i in m.I))
    return m, opt(5)


@case("constraint_list")
def con_list():
    """ConstraintList with three cuts x + y >= 2, x - y <= 1, y <= 3; min 2x + y, x, y >= 0: x = 0, y = 2: 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.cuts = pyo.ConstraintList()
    m.cuts.add(m.x + m.y >= 2)
    m.cuts.add(m.x - m.y <= 1)
    m.cuts.add(m.y <= 3)
    m.obj = pyo.Objective(expr=2 * m.x + m.y)
    return m, opt(2, {"x": 0, "y": 2})


@case("constraint_list_one_deactivated")
def con_list_deact():
    """ConstraintList x >= 1, x >= 5 with the second member deactivated: min x = 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.cuts = pyo.ConstraintList()
    m.cuts.add(m.x >= 1)
    m.cuts.add(m.x >= 5)
    m.cuts[2].deactivate()
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(1)


@case("constraint_list_deleted_member")
def con_list_del():
    """ConstraintList x >= 1, x >= 5, x >= 2 with member 2 deleted: min x = 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.cuts = pyo.ConstraintList()
    for k in (1, 5, 2):
        m.cuts.add(m.x >= k)
    del m.cuts[2]
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(2)


@case("var_list")
def var_list():
    """VarList with three members added one by one, each >= its index, min their sum: 1 + 2 + 3 = 6."""
    m = pyo.ConcreteModel()
    m.v = pyo.VarList()
    m.c = pyo.ConstraintList()
    for k in (1, 2, 3):
        v = m.v.add()
        m.c.add(v >= k)
    m.obj = pyo.Objective(expr=sum(m.v.values()))
    return m, opt(6)


@case("var_list_qp")
def var_list_qp():
    """VarList of two members, min (v1 - 1)^2 + (v2 - 2)^2 with v1 + v2 <= 1: project (1, 2) on x + y = 1: (0, 1): 2."""
    m = pyo.ConcreteModel()
    m.v = pyo.VarList()
    a, b = m.v.add(), m.v.add()
    m.c = pyo.Constraint(expr=a + b <= 1)
    m.obj = pyo.Objective(expr=(a - 1) ** 2 + (b - 2) ** 2)
    return m, opt(2)


@case("var_dense_false")
def var_sparse():
    """Var(I, dense=False) over I = 1..5 with only members 1 and 3 used: x[1] + x[3] >= 2, min x[1] + 2 x[3]: 2."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(5)
    m.x = pyo.Var(m.I, dense=False, within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.x[1] + m.x[3] >= 2)
    m.obj = pyo.Objective(expr=m.x[1] + 2 * m.x[3])
    return m, opt(2, {"x[1]": 2, "x[3]": 0})


@case("var_dense_false_skip")
def var_sparse_skip():
    """dense=False Var with Skip rows: c[i]: x[i] >= i only for i in {2, 4}; min x[2] + x[4]: 6."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(5)
    m.x = pyo.Var(m.I, dense=False)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] >= i if i in (2, 4) else pyo.Constraint.Skip)
    m.obj = pyo.Objective(expr=m.x[2] + m.x[4])
    return m, opt(6)


@case("var_dense_false_qp")
def var_sparse_qp():
    """dense=False Var over a 2-D set, two members used: min (x[1,1] - 1)^2 + (x[2,2] + 1)^2, x[1,1] <= 0: 1."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(2)
    m.x = pyo.Var(m.I, m.I, dense=False)
    m.c = pyo.Constraint(expr=m.x[1, 1] <= 0)
    m.obj = pyo.Objective(expr=(m.x[1, 1] - 1) ** 2 + (m.x[2, 2] + 1) ** 2)
    return m, opt(1)


@case("var_over_tuples")
def var_tuples():
    """Flows on arcs (a tuple set): ship 3 units s -> t over s-a-t (cost 1 + 1) or s-t (cost 3), caps 2: 2*2 + 3 = 7."""
    m = pyo.ConcreteModel()
    m.A = pyo.Set(initialize=[("s", "a"), ("a", "t"), ("s", "t")], dimen=2)
    m.N = pyo.Set(initialize=["s", "a", "t"])
    cost = {("s", "a"): 1, ("a", "t"): 1, ("s", "t"): 3}
    m.f = pyo.Var(m.A, bounds=(0, 2))
    supply = {"s": 3, "a": 0, "t": -3}

    def bal(m, n):
        return sum(m.f[i, j] for (i, j) in m.A if i == n) - sum(m.f[i, j] for (i, j) in m.A if j == n) == supply[n]

    m.bal = pyo.Constraint(m.N, rule=bal)
    m.obj = pyo.Objective(expr=sum(cost[a] * m.f[a] for a in m.A))
    return m, opt(7)


@case("var_over_strings_max")
def var_strings():
    """A diet-like LP over string sets: max 3 x[bread] + 2 x[milk], x[bread] + x[milk] <= 4, x[bread] <= 1: 9."""
    m = pyo.ConcreteModel()
    m.F = pyo.Set(initialize=["bread", "milk"])
    m.x = pyo.Var(m.F, within=pyo.NonNegativeReals)
    m.cap = pyo.Constraint(expr=sum(m.x[f] for f in m.F) <= 4)
    m.b = pyo.Constraint(expr=m.x["bread"] <= 1)
    m.obj = pyo.Objective(expr=3 * m.x["bread"] + 2 * m.x["milk"], sense=pyo.maximize)
    return m, opt(9)


@case("var_over_set_product")
def var_product():
    """Var(I * J) built from a set product; transportation: supplies (2, 3), demands (4, 1), cost i + 2j: see code."""
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=[1, 2])
    m.J = pyo.Set(initialize=[1, 2])
    m.x = pyo.Var(m.I * m.J, within=pyo.NonNegativeReals)
    sup, dem = {1: 2, 2: 3}, {1: 4, 2: 1}
    m.s = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.J) == sup[i])
    m.d = pyo.Constraint(m.J, rule=lambda m, j: sum(m.x[i, j] for i in m.I) == dem[j])
    # cost i + 2j is separable: every feasible plan costs sum_i i*sup_i + sum_j 2j*dem_j = 8 + 12 = 20.
    m.obj = pyo.Objective(expr=sum((i + 2 * j) * m.x[i, j] for i in m.I for j in m.J))
    return m, opt(20)


@case("reference_slice")
def reference_slice():
    """Reference(b[:].x) over indexed blocks used in a sum: b[i].x >= i, min sum_i r[i] = 1 + 2 + 3 = 6."""
    m = pyo.ConcreteModel()
    m.b = pyo.Block([1, 2, 3])
    for i in m.b:
        m.b[i].x = pyo.Var(bounds=(i, None))
    m.r = pyo.Reference(m.b[:].x)
    m.obj = pyo.Objective(expr=sum(m.r[i] for i in m.r))
    return m, opt(6)


@case("reference_var_subset")
def reference_subset():
    """Reference(x[:, 1]) of a 2-D Var: rows on the reference, r[i] >= i; min sum x: 1 + 2 = 3 (x[:, 2] >= 0)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], [1, 2], within=pyo.NonNegativeReals)
    m.r = pyo.Reference(m.x[:, 1])
    m.c = pyo.Constraint([1, 2], rule=lambda m, i: m.r[i] >= i)
    m.obj = pyo.Objective(expr=pyo.summation(m.x))
    return m, opt(3)


@case("reference_constraint")
def reference_con():
    """Reference to constraints in sub-blocks (the rows appear twice in the tree): b[i].c: x >= i: min x = 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.b = pyo.Block([1, 2])
    for i in m.b:
        m.b[i].c = pyo.Constraint(expr=m.x >= i)
    m.rc = pyo.Reference(m.b[:].c)
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(2)


# ---------------------------------------------------------------------------------------------------------------
# Fixed, unused, and hidden variables


@case("fixed_var_in_row")
def fixed_in_row():
    """y fixed at 3: x + y >= 5, min x + 10 y: x = 2: 32."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var()
    m.y.fix(3)
    m.c = pyo.Constraint(expr=m.x + m.y >= 5)
    m.obj = pyo.Objective(expr=m.x + 10 * m.y)
    return m, opt(32, {"x": 2})


@case("fixed_var_outside_bounds")
def fixed_outside():
    """A variable fixed at 5 outside its declared bounds [0, 1]: the fix wins in Pyomo's writers; min x + z: 5."""
    m = pyo.ConcreteModel()
    m.z = pyo.Var(bounds=(0, 1))
    m.z.fix(5)
    m.x = pyo.Var(bounds=(0, 1))
    m.obj = pyo.Objective(expr=m.x + m.z)
    return m, opt(5, {"x": 0})


@case("fixed_var_quadratic")
def fixed_quad():
    """min (x - y)^2 + x with y fixed at 2: x = 2 - 1/2, value 1/4 + 3/2 = 1.75."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var(initialize=2)
    m.y.fixed = True
    m.obj = pyo.Objective(expr=(m.x - m.y) ** 2 + m.x)
    return m, opt(1.75, {"x": 1.5})


@case("fixed_var_nonlinear")
def fixed_nl():
    """exp(z) * x with z fixed at 0: min x * exp(z), x >= 2: 2."""
    m = pyo.ConcreteModel()
    m.z = pyo.Var()
    m.z.fix(0)
    m.x = pyo.Var(bounds=(2, 4))
    m.obj = pyo.Objective(expr=m.x * pyo.exp(m.z))
    return m, opt(2, {"x": 2})


@case("fixed_all_vars")
def fixed_all():
    """Every variable fixed (x = 1, y = 2), row x + y <= 4 satisfied: the objective 3x + y = 5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.x.fix(1)
    m.y.fix(2)
    m.c = pyo.Constraint(expr=m.x + m.y <= 4)
    m.obj = pyo.Objective(expr=3 * m.x + m.y)
    return m, opt(5)


@case("fixed_all_vars_infeasible")
def fixed_all_inf():
    """Every variable fixed (x = 1, y = 2) and a violated row x + y >= 4: infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.x.fix(1)
    m.y.fix(2)
    m.c = pyo.Constraint(expr=m.x + m.y >= 4)
    m.obj = pyo.Objective(expr=m.x)
    return m, bad(INFEASIBLE)


@case("unused_var")
def unused():
    """An unused variable u (bounds [3, 4]) next to min x, x >= 1: 1."""
    m = pyo.ConcreteModel()
    m.u = pyo.Var(bounds=(3, 4))
    m.x = pyo.Var(bounds=(1, None))
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(1, {"x": 1})


@case("unused_var_free_qp")
def unused_qp():
    """An unused free variable beside a QP: min (x - 2)^2 on x <= 1: 1."""
    m = pyo.ConcreteModel()
    m.u = pyo.Var()
    m.x = pyo.Var(bounds=(None, 1))
    m.obj = pyo.Objective(expr=(m.x - 2) ** 2)
    return m, opt(1, {"x": 1})


@case("unused_indexed_var")
def unused_idx():
    """An indexed Var of which only w[2] is used: min w[2] with w[i] in [i, 10]: 2."""
    m = pyo.ConcreteModel()
    m.w = pyo.Var([1, 2, 3], bounds=lambda m, i: (i, 10))
    m.obj = pyo.Objective(expr=m.w[2])
    return m, opt(2)


@case("var_only_in_deactivated_row")
def var_deact_row():
    """v appears only in a deactivated row; min x, x in [1, 2]: 1."""
    m = pyo.ConcreteModel()
    m.v = pyo.Var(bounds=(0, 1))
    m.x = pyo.Var(bounds=(1, 2))
    m.c = pyo.Constraint(expr=m.v + m.x >= 10)
    m.c.deactivate()
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(1, {"x": 1})


@case("var_only_in_deactivated_block")
def var_deact_block():
    """A block's own variable appears only in the block's rows; the block is deactivated: min x on [0, 3]: 0."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 3))
    m.b = pyo.Block()
    m.b.v = pyo.Var(bounds=(0, 1))
    m.b.c = pyo.Constraint(expr=m.b.v + m.x >= 2)
    m.b.deactivate()
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(0, {"x": 0})


@case("var_only_in_deactivated_objective")
def var_deact_obj():
    """v appears only in a deactivated objective; min x on [1, 2]: 1."""
    m = pyo.ConcreteModel()
    m.v = pyo.Var()
    m.x = pyo.Var(bounds=(1, 2))
    m.o_old = pyo.Objective(expr=m.v)
    m.o_old.deactivate()
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(1)


# ---------------------------------------------------------------------------------------------------------------
# Units


u = pyo.units


def _need(module):
    """Pyomo's units need pint, its logical_to_linear sympy; where not installed the case skips (else Pyomo raises
    DeferredImportError)."""
    import pytest

    pytest.importorskip(module)


def _need_pint():
    _need("pint")


@case("units_lp")
def units_lp():
    """Vars with units kg and m; a row in kg (2 kg/m * L <= M), min -M with M <= 10 kg, L <= 3 m: M = 6 kg: -6."""
    _need_pint()
    m = pyo.ConcreteModel()
    m.M = pyo.Var(units=u.kg, bounds=(0, 10))
    m.L = pyo.Var(units=u.m, bounds=(0, 3))
    m.c = pyo.Constraint(expr=m.M <= 2 * u.kg / u.m * m.L)
    m.obj = pyo.Objective(expr=-m.M / u.kg)
    return m, opt(-6)


@case("units_param")
def units_param():
    """A Param with units (a cost of 3 J/kg) in the objective: min cost * M, M >= 2 kg: 6 (J)."""
    _need_pint()
    m = pyo.ConcreteModel()
    m.price = pyo.Param(initialize=3, units=u.J / u.kg, mutable=True)
    m.M = pyo.Var(units=u.kg, bounds=(2, None))
    m.obj = pyo.Objective(expr=m.price * m.M)
    return m, opt(6)


@case("units_qp")
def units_qp():
    """min (x - 2 m)^2 / m^2 with x in metres and x <= 1 m: 1."""
    _need_pint()
    m = pyo.ConcreteModel()
    m.x = pyo.Var(units=u.m, bounds=(None, 1))
    m.obj = pyo.Objective(expr=(m.x - 2 * u.m) ** 2 / u.m ** 2)
    return m, opt(1)


@case("units_convert")
def units_convert():
    """units.convert in a row: L (km) >= convert(500 m): L >= 0.5 km, min L: 0.5."""
    _need_pint()
    m = pyo.ConcreteModel()
    m.L = pyo.Var(units=u.km)
    m.c = pyo.Constraint(expr=m.L >= u.convert(500 * u.m, to_units=u.km))
    m.obj = pyo.Objective(expr=m.L)
    return m, opt(0.5)


# ---------------------------------------------------------------------------------------------------------------
# Integers and binaries


@case("milp_knapsack")
def knapsack():
    """0-1 knapsack: values (10, 13, 7, 8), weights (5, 6, 3, 4), capacity 10. The feasible sets of two: {1, 3} 17,
    {1, 4} 18, {2, 3} 20, {2, 4} 21, {3, 4} 15; no three fit (lightest three weigh 12): 21."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(4)
    v, w = {1: 10, 2: 13, 3: 7, 4: 8}, {1: 5, 2: 6, 3: 3, 4: 4}
    m.x = pyo.Var(m.I, within=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(w[i] * m.x[i] for i in m.I) <= 10)
    m.obj = pyo.Objective(expr=sum(v[i] * m.x[i] for i in m.I), sense=pyo.maximize)
    return m, opt(21)


@case("milp_integer_rounding")
def int_round():
    """Integer x: 2x >= 3, min x: 2 (LP relaxation 1.5)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.Integers, bounds=(-10, 10))
    m.c = pyo.Constraint(expr=2 * m.x >= 3)
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(2, {"x": 2})


@case("milp_nonneg_integers")
def int_nonneg():
    """max x + y, 2x + 2y <= 5 (x, y NonNegativeIntegers): 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeIntegers)
    m.y = pyo.Var(within=pyo.NonNegativeIntegers)
    m.c = pyo.Constraint(expr=2 * m.x + 2 * m.y <= 5)
    m.obj = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    return m, opt(2)


@case("milp_facility")
def facility():
    """Fixed-charge: open y (cost 5) to ship x <= 4 y at unit profit 3, or not: max 3x - 5y: 12 - 5 = 7."""
    m = pyo.ConcreteModel()
    m.y = pyo.Var(within=pyo.Binary)
    m.x = pyo.Var(bounds=(0, None))
    m.link = pyo.Constraint(expr=m.x <= 4 * m.y)
    m.obj = pyo.Objective(expr=3 * m.x - 5 * m.y, sense=pyo.maximize)
    return m, opt(7, {"x": 4, "y": 1})


@case("milp_assignment_binary_2d")
def assignment():
    """3x3 assignment with binaries, cost c[i, j] = (i - j)^2 + j: identity costs 1 + 2 + 3 = 6; minimal (each column
    once, the j-part is constant 6, (i - j)^2 >= 0): 6."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(3)
    m.x = pyo.Var(m.I, m.I, within=pyo.Binary)
    m.r = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.I) == 1)
    m.c = pyo.Constraint(m.I, rule=lambda m, j: sum(m.x[i, j] for i in m.I) == 1)
    m.obj = pyo.Objective(expr=sum(((i - j) ** 2 + j) * m.x[i, j] for i in m.I for j in m.I))
    return m, opt(6)


@case("milp_binary_with_fixed")
def bin_fixed():
    """Binaries b1, b2, b3 with b1 fixed at 1; b1 + b2 + b3 <= 2, max b1 + 2 b2 + 3 b3: 1 + 3 = 4."""
    m = pyo.ConcreteModel()
    m.b = pyo.Var([1, 2, 3], within=pyo.Binary)
    m.b[1].fix(1)
    m.c = pyo.Constraint(expr=sum(m.b.values()) <= 2)
    m.obj = pyo.Objective(expr=m.b[1] + 2 * m.b[2] + 3 * m.b[3], sense=pyo.maximize)
    return m, opt(4)


@case("milp_domain_set_after")
def domain_after():
    """x declared Reals, domain changed to Integers after construction: min x, x >= 0.3: 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0.3, 5))
    m.x.domain = pyo.Integers
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(1, {"x": 1})


@case("milp_integer_in_block")
def int_block():
    """Integer variable in a sub-block: 3 b.n >= 7, min b.n: 3."""
    m = pyo.ConcreteModel()
    m.b = pyo.Block()
    m.b.n = pyo.Var(within=pyo.Integers, bounds=(0, 10))
    m.b.c = pyo.Constraint(expr=3 * m.b.n >= 7)
    m.obj = pyo.Objective(expr=m.b.n)
    return m, opt(3)


@case("miqp_rounding")
def miqp_round():
    """min (x - 2.6)^2 over integers x in [0, 5]: x = 3, 0.16."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.Integers, bounds=(0, 5))
    m.obj = pyo.Objective(expr=(m.x - 2.6) ** 2)
    return m, opt(0.16, {"x": 3})


@case("miqp_two_ints")
def miqp_two():
    """min (x - 0.4)^2 + (y - 1.7)^2, x + y >= 3, x, y integer: the continuous optimum (0.85, 2.15) on x + y = 3;
    integer points there: (1, 2): 0.36 + 0.09 = 0.45, (0, 3): 1.85, (2, 1): 2.05; off the line costs more: 0.45."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.Integers, bounds=(-5, 5))
    m.y = pyo.Var(within=pyo.Integers, bounds=(-5, 5))
    m.c = pyo.Constraint(expr=m.x + m.y >= 3)
    m.obj = pyo.Objective(expr=(m.x - 0.4) ** 2 + (m.y - 1.7) ** 2)
    return m, opt(0.45, {"x": 1, "y": 2})


@case("miqp_binary_continuous")
def miqp_mixed():
    """min (z - 3)^2 + 2 b, z <= 1 + 5 b, b binary: b = 0: (1 - 3)^2 = 4; b = 1: 0 + 2 = 2: 2."""
    m = pyo.ConcreteModel()
    m.b = pyo.Var(within=pyo.Binary)
    m.z = pyo.Var()
    m.c = pyo.Constraint(expr=m.z <= 1 + 5 * m.b)
    m.obj = pyo.Objective(expr=(m.z - 3) ** 2 + 2 * m.b)
    return m, opt(2, {"b": 1, "z": 3})


@case("miqp_portfolio_cardinality")
def miqp_card():
    """min sum x_i^2 with sum x = 1, x_i <= b_i, at most 2 of 3 b's: best two equal halves: 0.5."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(3)
    m.x = pyo.Var(m.I, within=pyo.NonNegativeReals)
    m.b = pyo.Var(m.I, within=pyo.Binary)
    m.budget = pyo.Constraint(expr=sum(m.x[i] for i in m.I) == 1)
    m.link = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] <= m.b[i])
    m.card = pyo.Constraint(expr=sum(m.b[i] for i in m.I) <= 2)
    m.obj = pyo.Objective(expr=sum(m.x[i] ** 2 for i in m.I))
    return m, opt(0.5)


@case("miqp_max_concave")
def miqp_max():
    """max -(x - 1.2)^2 - (y + 0.6)^2 over integers: (1, -1): -(0.04 + 0.16) = -0.2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.Integers, bounds=(-3, 3))
    m.y = pyo.Var(within=pyo.Integers, bounds=(-3, 3))
    m.obj = pyo.Objective(expr=-(m.x - 1.2) ** 2 - (m.y + 0.6) ** 2, sense=pyo.maximize)
    return m, opt(-0.2, {"x": 1, "y": -1})


# ---------------------------------------------------------------------------------------------------------------
# GDP: Disjunct / Disjunction, untransformed (the backend must honour or refuse) and after gdp.bigm / gdp.hull.
# Truth: Pyomo's gdp.bigm on a clone, solved by appsi_highs (linear) or gurobi_direct (quadratic objective).


def _gdp_two_lower_bounds(m):
    """x in [0, 10], [x >= 2] v [x >= 5], min x: 2 (ignoring the disjunction: 0)."""
    m.x = pyo.Var(bounds=(0, 10))
    m.d1 = Disjunct()
    m.d1.c = pyo.Constraint(expr=m.x >= 2)
    m.d2 = Disjunct()
    m.d2.c = pyo.Constraint(expr=m.x >= 5)
    m.dj = Disjunction(expr=[m.d1, m.d2])
    m.obj = pyo.Objective(expr=m.x)
    return "appsi_highs"


def _gdp_expr_lists(m):
    """Disjunction(expr=[[x <= -1], [x >= 1]]) on x in [-3, 3], min x**2: 1 (ignoring it: 0)."""
    m.x = pyo.Var(bounds=(-3, 3))
    m.dj = Disjunction(expr=[[m.x <= -1], [m.x >= 1]])
    m.obj = pyo.Objective(expr=m.x ** 2)
    return "gurobi_direct"


def _gdp_complementarity(m):
    """Pyomo's simple1 idea: x, y in [0, 1], [x == 0] v [y == 0], x + y <= 1.5, max 2x + 3y: 3 (ignoring it: 4)."""
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(bounds=(0, 1))

    def d(disjunct, flag):
        model = disjunct.model()
        disjunct.c = pyo.Constraint(expr=(model.x if flag else model.y) == 0)

    m.d = Disjunct([0, 1], rule=d)
    m.dj = Disjunction(rule=lambda m: [m.d[0], m.d[1]])
    m.c = pyo.Constraint(expr=m.x + m.y <= 1.5)
    m.obj = pyo.Objective(expr=2 * m.x + 3 * m.y, sense=pyo.maximize)
    return "appsi_highs"


def _gdp_jobshop(m):
    """Two jobs (3 and 2 long) on one machine: s1 + 3 <= s2 or s2 + 2 <= s1, makespan t: 5 (ignoring it: 3)."""
    m.J = pyo.Set(initialize=[1, 2])
    dur = {1: 3, 2: 2}
    m.s = pyo.Var(m.J, bounds=(0, 10))
    m.t = pyo.Var(bounds=(0, 20))
    m.end = pyo.Constraint(m.J, rule=lambda m, j: m.t >= m.s[j] + dur[j])
    m.order = Disjunction(expr=[[m.s[1] + dur[1] <= m.s[2]], [m.s[2] + dur[2] <= m.s[1]]])
    m.obj = pyo.Objective(expr=m.t)
    return "appsi_highs"


def _gdp_three_terms(m):
    """Three disjuncts [x <= 1, y >= 3], [x >= 4, y >= 1], [x >= 8]; x, y in [0, 10]; min 2x + y: 3."""
    m.x = pyo.Var(bounds=(0, 10))
    m.y = pyo.Var(bounds=(0, 10))
    m.dj = Disjunction(expr=[[m.x <= 1, m.y >= 3], [m.x >= 4, m.y >= 1], [m.x >= 8]])
    m.obj = pyo.Objective(expr=2 * m.x + m.y)
    return "appsi_highs"


def _gdp_not_xor(m):
    """Disjunction(xor=False): at least one of [x >= 3], [y >= 3]; x, y in [0, 5]; min x + 2y: 3."""
    m.x = pyo.Var(bounds=(0, 5))
    m.y = pyo.Var(bounds=(0, 5))
    m.dj = Disjunction(expr=[[m.x >= 3], [m.y >= 3]], xor=False)
    m.obj = pyo.Objective(expr=m.x + 2 * m.y)
    return "appsi_highs"


def _gdp_indexed(m):
    """Disjunction indexed over i in {1, 2}: x[i] <= 1 or x[i] >= 4; x in [0, 10], x1 + x2 >= 3, min sum x: 4."""
    m.I = pyo.Set(initialize=[1, 2])
    m.x = pyo.Var(m.I, bounds=(0, 10))
    m.dj = Disjunction(m.I, rule=lambda m, i: [[m.x[i] <= 1], [m.x[i] >= 4]])
    m.c = pyo.Constraint(expr=m.x[1] + m.x[2] >= 3)
    m.obj = pyo.Objective(expr=m.x[1] + m.x[2])
    return "appsi_highs"


def _gdp_indicator_fixed(m):
    """[x >= 2] v [x >= 5] with d2's indicator_var fixed True by the user: min x: 5."""
    _gdp_two_lower_bounds(m)
    m.d2.indicator_var.fix(True)
    return "appsi_highs"


def _gdp_disjunct_in_block(m):
    """A Disjunction inside a sub-block: b.x in [0, 4], [b.x <= 1] v [b.x >= 3], b.x <= 2.5, max b.x: 1
    (ignoring the disjunction: 2.5)."""
    m.b = pyo.Block()
    m.b.x = pyo.Var(bounds=(0, 4))
    m.b.dj = Disjunction(expr=[[m.b.x <= 1], [m.b.x >= 3]])
    m.b.c = pyo.Constraint(expr=m.b.x <= 2.5)
    m.obj = pyo.Objective(expr=m.b.x, sense=pyo.maximize)
    return "appsi_highs"


GDP_MODELS = {
    "two_lower_bounds": _gdp_two_lower_bounds,
    "expr_lists_qp": _gdp_expr_lists,
    "complementarity": _gdp_complementarity,
    "jobshop": _gdp_jobshop,
    "three_terms": _gdp_three_terms,
    "not_xor": _gdp_not_xor,
    "indexed": _gdp_indexed,
    "indicator_fixed": _gdp_indicator_fixed,
    "in_block": _gdp_disjunct_in_block,
}

for _label, _build in GDP_MODELS.items():
    for _form in ("untransformed", "bigm", "hull"):
        if _form == "hull" and _label == "not_xor":
            continue  # gdp.hull takes only XOR disjunctions

        def _gdp(build=_build, form=_form):
            m = pyo.ConcreteModel()
            solver = build(m)
            if form == "untransformed":
                return m, native(m, ["gdp.bigm"], solver, may_refuse=True)
            pyo.TransformationFactory(f"gdp.{form}").apply_to(m)
            return m, native(m, [], solver, may_refuse=False)

        _gdp.__doc__ = _build.__doc__
        case(f"gdp_{_label}_{_form}")(_gdp)


# ---------------------------------------------------------------------------------------------------------------
# SOSConstraint (sos=1, sos=2). Truth: gurobi_direct, which passes SOS natively.


def _sos(build):
    def factory():
        m = pyo.ConcreteModel()
        build(m)
        return m, native(m, [], "gurobi_direct", may_refuse=True)

    factory.__doc__ = build.__doc__
    return factory


def _sos1_basic(m):
    """SOSConstraint(var=x, sos=1) on x in [0, 1]^3, min -x1 - 2x2 - 3x3: -3 (ignoring it: -6)."""
    m.I = pyo.RangeSet(3)
    m.x = pyo.Var(m.I, bounds=(0, 1))
    m.s = pyo.SOSConstraint(var=m.x, sos=1)
    m.obj = pyo.Objective(expr=-sum(i * m.x[i] for i in m.I))


def _sos1_weights(m):
    """sos=1 with weights, max 2x1 + x2 + x3 on [0, 2]^3 with x1 + x2 + x3 <= 3: 4 (ignoring it: 5)."""
    m.I = pyo.RangeSet(3)
    m.x = pyo.Var(m.I, bounds=(0, 2))
    m.s = pyo.SOSConstraint(var=m.x, sos=1, weights={1: 10, 2: 20, 3: 30})
    m.c = pyo.Constraint(expr=sum(m.x.values()) <= 3)
    m.obj = pyo.Objective(expr=2 * m.x[1] + m.x[2] + m.x[3], sense=pyo.maximize)


def _sos2_basic(m):
    """SOSConstraint(var=x, sos=2) on x in [0, 1]^4, max sum x: 2 (ignoring it: 4)."""
    m.I = pyo.RangeSet(4)
    m.x = pyo.Var(m.I, bounds=(0, 1))
    m.s = pyo.SOSConstraint(var=m.x, sos=2)
    m.obj = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)


def _sos2_nonadjacent(m):
    """sos=2 on x in [0, 1]^4, max x1 + x3 + 0.5 x2: x1 and x3 not adjacent: max 1.5 (ignoring it: 2.5)."""
    m.I = pyo.RangeSet(4)
    m.x = pyo.Var(m.I, bounds=(0, 1))
    m.s = pyo.SOSConstraint(var=m.x, sos=2)
    m.obj = pyo.Objective(expr=m.x[1] + m.x[3] + 0.5 * m.x[2], sense=pyo.maximize)


def _sos1_indexed(m):
    """An indexed SOSConstraint (one sos=1 set per row of a 2x2 Var), max sum x on [0, 1]: 2 (ignoring: 4)."""
    m.I = pyo.RangeSet(2)
    m.x = pyo.Var(m.I, m.I, bounds=(0, 1))
    m.s = pyo.SOSConstraint(m.I, rule=lambda m, i: ([m.x[i, j] for j in m.I], [1, 2]), sos=1)
    m.obj = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)


def _sos1_subset(m):
    """sos=1 over a subset of x (index=[1, 2]), x in [0, 1]^3, max sum x: 2 (ignoring: 3)."""
    m.I = pyo.RangeSet(3)
    m.x = pyo.Var(m.I, bounds=(0, 1))
    m.s = pyo.SOSConstraint(var=m.x, index=[1, 2], sos=1)
    m.obj = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)


def _sos1_with_qp(m):
    """sos=1 on (x, y) in [0, 2]^2, min (x - 1)^2 + (y - 1)^2: 1 (ignoring it: 0)."""
    m.x = pyo.Var([1, 2], bounds=(0, 2))
    m.s = pyo.SOSConstraint(var=m.x, sos=1)
    m.obj = pyo.Objective(expr=(m.x[1] - 1) ** 2 + (m.x[2] - 1) ** 2)


def _sos2_deactivated(m):
    """A deactivated SOSConstraint: ignored; max sum x on [0, 1]^3: 3."""
    m.x = pyo.Var([1, 2, 3], bounds=(0, 1))
    m.s = pyo.SOSConstraint(var=m.x, sos=2)
    m.s.deactivate()
    m.obj = pyo.Objective(expr=sum(m.x.values()), sense=pyo.maximize)


for _label, _build in {"sos1_basic": _sos1_basic, "sos1_weights": _sos1_weights, "sos2_basic": _sos2_basic,
                       "sos2_nonadjacent": _sos2_nonadjacent, "sos1_indexed": _sos1_indexed,
                       "sos1_subset": _sos1_subset, "sos1_qp": _sos1_with_qp,
                       "sos2_deactivated": _sos2_deactivated}.items():
    case(_label)(_sos(_build))


# ---------------------------------------------------------------------------------------------------------------
# Piecewise in its representations. Truths in closed form (the minimum of a piecewise-linear function lies at a
# breakpoint or the end of the domain), confirmed by gurobi_direct on a clone where it takes the form.


def _pw_nonconvex(m, repn):
    """Piecewise(y, x, pw_pts=[0, 1, 2, 3], f_rule=[0, 3, 1, 4], EQ), x >= 0.5, min y: f(0.5) = 1.5, f(2) = 1,
    f(3) = 4: 1 at x = 2 (the SOS2 rows ignored: 0.25 at x = 0.5)."""
    m.x = pyo.Var(bounds=(0, 3))
    m.y = pyo.Var()
    m.pw = pyo.Piecewise(m.y, m.x, pw_pts=[0, 1, 2, 3], f_rule=[0, 3, 1, 4], pw_constr_type="EQ", pw_repn=repn)
    m.c = pyo.Constraint(expr=m.x >= 0.5)
    m.obj = pyo.Objective(expr=m.y)
    return 1.0, {"x": 2.0, "y": 1.0}


def _pw_convex_lb(m, repn):
    """y >= the interpolation of x^2 at -2..2 (LB), min y - 1.5x: on [0, 1] slope 1, [1, 2] slope 3: x = 1, -0.5."""
    m.x = pyo.Var(bounds=(-2, 2))
    m.y = pyo.Var(bounds=(0, 10))
    m.pw = pyo.Piecewise(m.y, m.x, pw_pts=[-2, -1, 0, 1, 2], f_rule=lambda m, x: x ** 2, pw_constr_type="LB",
                         pw_repn=repn)
    m.obj = pyo.Objective(expr=m.y - 1.5 * m.x)
    return -0.5, {"x": 1.0, "y": 1.0}


def _pw_indexed_max(m, repn):
    """Indexed Piecewise (Pyomo's indexed example, simplified): z[i] == f(x[i]) with f through (0, 0), (1, 2),
    (2, 1), (3, 3); x[i] <= b_i (b = 1.5, 2.5): max z[1] + z[2]: f(1) = 2 (z[1]), f on [0, 2.5]: max(2, 1 + 2*0.5
    = 2) = 2: 4."""
    m.I = pyo.Set(initialize=[1, 2])
    b = {1: 1.5, 2: 2.5}
    m.x = pyo.Var(m.I, bounds=lambda m, i: (0, 3))
    m.z = pyo.Var(m.I, bounds=(-10, 10))
    m.pw = pyo.Piecewise(m.I, m.z, m.x, pw_pts={i: [0, 1, 2, 3] for i in m.I},
                         f_rule=lambda m, i, x: {0: 0, 1: 2, 2: 1, 3: 3}[x], pw_constr_type="EQ", pw_repn=repn)
    m.cap = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] <= b[i])
    m.obj = pyo.Objective(expr=m.z[1] + m.z[2], sense=pyo.maximize)
    return 4.0, None


PW_REPNS = ["SOS2", "DCC", "DLOG", "CC", "LOG", "MC", "INC", "BIGM_BIN", "BIGM_SOS1"]
PW_MODELS = {"nonconvex": _pw_nonconvex, "convex_lb": _pw_convex_lb, "indexed": _pw_indexed_max}

for _label, _build in PW_MODELS.items():
    for _repn in PW_REPNS:
        if _repn.startswith("BIGM") and _label != "convex_lb":
            continue  # Pyomo's BIGM forms take only LB / UB bounds, not EQ
        if _repn in ("LOG", "DLOG") and _label != "convex_lb":
            continue  # LOG / DLOG need 2^n + 1 points: only convex_lb has 5 = 2^2 + 1

        def _pw(build=_build, repn=_repn):
            m = pyo.ConcreteModel()
            value, point = build(m, repn)
            return m, opt(value, point, may_refuse=True, source=f"closed form; Piecewise {repn}")

        _pw.__doc__ = _build.__doc__
        case(f"piecewise_{_label}_{_repn}")(_pw)


# ---------------------------------------------------------------------------------------------------------------
# LogicalConstraint over BooleanVars tied to binaries, untransformed and after core.logical_to_linear.
# Truth: core.logical_to_linear on a clone, solved by appsi_highs.


def _logic_base(m, values=(5, 4, 3)):
    m.I = pyo.RangeSet(len(values))
    m.v = pyo.Param(m.I, initialize=dict(zip(range(1, len(values) + 1), values)))
    m.Y = pyo.BooleanVar(m.I)
    m.y = pyo.Var(m.I, within=pyo.Binary)
    for i in m.I:
        m.Y[i].associate_binary_var(m.y[i])


def _logic_atmost(m):
    """atmost(1, Y) over three binaries of value 5, 4, 3, max sum v y: 5 (ignoring it: 12)."""
    _logic_base(m)
    m.lc = pyo.LogicalConstraint(expr=atmost(1, m.Y))
    m.obj = pyo.Objective(expr=sum(m.v[i] * m.y[i] for i in m.I), sense=pyo.maximize)


def _logic_exactly(m):
    """exactly(2, Y), min sum v y with values 5, 4, 3: 7 (ignoring it: 0)."""
    _logic_base(m)
    m.lc = pyo.LogicalConstraint(expr=exactly(2, m.Y))
    m.obj = pyo.Objective(expr=sum(m.v[i] * m.y[i] for i in m.I))


def _logic_atleast(m):
    """atleast(2, Y), min sum v y: 7 (ignoring it: 0)."""
    _logic_base(m)
    m.lc = pyo.LogicalConstraint(expr=atleast(2, m.Y))
    m.obj = pyo.Objective(expr=sum(m.v[i] * m.y[i] for i in m.I))


def _logic_implies(m):
    """Y1 implies Y2 (Y2.implies written as implies(Y[1], Y[2])), max 5 y1 - 2 y2: 3 (ignoring it: 5)."""
    _logic_base(m, (5, -2))
    m.lc = pyo.LogicalConstraint(expr=implies(m.Y[1], m.Y[2]))
    m.obj = pyo.Objective(expr=sum(m.v[i] * m.y[i] for i in m.I), sense=pyo.maximize)


def _logic_implies_method(m):
    """Y[1].implies(Y[2] | Y[3]), max 5 y1 - 2 y2 - 1 y3: 4 (ignoring it: 5)."""
    _logic_base(m, (5, -2, -1))
    m.lc = pyo.LogicalConstraint(expr=m.Y[1].implies(m.Y[2] | m.Y[3]))
    m.obj = pyo.Objective(expr=sum(m.v[i] * m.y[i] for i in m.I), sense=pyo.maximize)


def _logic_equivalent(m):
    """equivalent(Y1, Y2), max 5 y1 - 3 y2: 2 (ignoring it: 5)."""
    _logic_base(m, (5, -3))
    m.lc = pyo.LogicalConstraint(expr=equivalent(m.Y[1], m.Y[2]))
    m.obj = pyo.Objective(expr=sum(m.v[i] * m.y[i] for i in m.I), sense=pyo.maximize)


def _logic_lor(m):
    """lor(Y1, Y2) (at least one), min 5 y1 + 4 y2: 4 (ignoring it: 0)."""
    _logic_base(m, (5, 4))
    m.lc = pyo.LogicalConstraint(expr=lor(m.Y[1], m.Y[2]))
    m.obj = pyo.Objective(expr=sum(m.v[i] * m.y[i] for i in m.I))


def _logic_with_continuous(m):
    """atmost(1, Y) and x <= 2 y1 + 3 y2, x continuous: max x: 3 (ignoring it: 5)."""
    _logic_base(m, (0, 0))
    m.x = pyo.Var(bounds=(0, 10))
    m.link = pyo.Constraint(expr=m.x <= 2 * m.y[1] + 3 * m.y[2])
    m.lc = pyo.LogicalConstraint(expr=atmost(1, m.Y))
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)


LOGIC_NEEDS_SYMPY = {"implies": 3, "implies_method": 4, "equivalent": 2, "lor": 4}

for _label, _build in {"atmost": _logic_atmost, "exactly": _logic_exactly, "atleast": _logic_atleast,
                       "implies": _logic_implies, "implies_method": _logic_implies_method,
                       "equivalent": _logic_equivalent, "lor": _logic_lor,
                       "with_continuous": _logic_with_continuous}.items():
    for _form in ("untransformed", "logical_to_linear"):

        def _logic(build=_build, form=_form, label=_label):
            m = pyo.ConcreteModel()
            build(m)
            if label in LOGIC_NEEDS_SYMPY:  # logical_to_linear needs sympy for all but the cardinality operators
                if form == "untransformed":
                    return m, opt(LOGIC_NEEDS_SYMPY[label], may_refuse=True)  # the docstring's closed form
                _need("sympy")
            if form == "untransformed":
                return m, native(m, ["core.logical_to_linear"], may_refuse=True)
            pyo.TransformationFactory("core.logical_to_linear").apply_to(m)
            return m, native(m, [], may_refuse=False)

        _logic.__doc__ = _build.__doc__
        case(f"logical_{_label}_{_form}")(_logic)


# ---------------------------------------------------------------------------------------------------------------
# Non-convex NLPs: the truth is the global optimum (closed form); a local one reported optimal is wrong.


def nonconvex(value, point=None):
    return opt(value, point, nonconvex=True)


@case("nonconvex_max_exp_on_segment")
def nc_max_exp():
    """max exp(x) + exp(y), x + y == 1 on [0, 1]^2: convex function maximised: at a vertex, e + 1 (the KKT point
    (0.5, 0.5) is the minimum on the segment, 2 sqrt(e))."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1), initialize=0.5)
    m.y = pyo.Var(bounds=(0, 1), initialize=0.5)
    m.c = pyo.Constraint(expr=m.x + m.y == 1)
    m.obj = pyo.Objective(expr=pyo.exp(m.x) + pyo.exp(m.y), sense=pyo.maximize)
    return m, nonconvex(math.e + 1)


@case("nonconvex_bilinear_objective")
def nc_bilinear():
    """min x y on [-1, 2]^2: at (-1, 2) or (2, -1): -2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 2), initialize=0.5)
    m.y = pyo.Var(bounds=(-1, 2), initialize=0.5)
    m.obj = pyo.Objective(expr=m.x * m.y)
    return m, nonconvex(-2)


@case("nonconvex_max_norm_box")
def nc_max_norm():
    """max x^2 + y^2 on [-1, 2]^2: at (2, 2): 8."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 2), initialize=0)
    m.y = pyo.Var(bounds=(-1, 2), initialize=0)
    m.obj = pyo.Objective(expr=m.x ** 2 + m.y ** 2, sense=pyo.maximize)
    return m, nonconvex(8, {"x": 2, "y": 2})


@case("nonconvex_concave_min")
def nc_concave_min():
    """min -(x - 1)^2 on [0, 3]: at x = 3: -4 (x = 0 gives the local -1)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 3), initialize=0.9)
    m.obj = pyo.Objective(expr=-((m.x - 1) ** 2))
    return m, nonconvex(-4, {"x": 3})


@case("nonconvex_bilinear_row")
def nc_bilinear_row():
    """min x + y with x y >= 4 on [1, 10]^2 (a convex set written as a bilinear row): (2, 2): 4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1, 10), initialize=5)
    m.y = pyo.Var(bounds=(1, 10), initialize=5)
    m.c = pyo.Constraint(expr=m.x * m.y >= 4)
    m.obj = pyo.Objective(expr=m.x + m.y)
    return m, nonconvex(4, {"x": 2, "y": 2})


@case("nonconvex_bilinear_equality")
def nc_bilinear_eq():
    """x y == 1 on [0.1, 10]^2, min x + 4y: AM-GM at x = 2, y = 1/2: 4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0.1, 10), initialize=1)
    m.y = pyo.Var(bounds=(0.1, 10), initialize=1)
    m.c = pyo.Constraint(expr=m.x * m.y == 1)
    m.obj = pyo.Objective(expr=m.x + 4 * m.y)
    return m, nonconvex(4, {"x": 2, "y": 0.5})


@case("nonconvex_product_on_line")
def nc_product_line():
    """min x y with x + y == 3 on [0, 3]^2: x(3 - x) is concave, min at an end: 0 (the KKT point x = 1.5 is the max)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 3), initialize=1.5)
    m.y = pyo.Var(bounds=(0, 3), initialize=1.5)
    m.c = pyo.Constraint(expr=m.x + m.y == 3)
    m.obj = pyo.Objective(expr=m.x * m.y)
    return m, nonconvex(0)


@case("nonconvex_max_product")
def nc_max_product():
    """max x y, x + y <= 4, x, y >= 0: (2, 2): 4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals, initialize=1)
    m.y = pyo.Var(within=pyo.NonNegativeReals, initialize=1)
    m.c = pyo.Constraint(expr=m.x + m.y <= 4)
    m.obj = pyo.Objective(expr=m.x * m.y, sense=pyo.maximize)
    return m, nonconvex(4, {"x": 2, "y": 2})


@case("nonconvex_sine")
def nc_sine():
    """min sin(x) on [0, 7], started at 0.5: -1 at 3 pi / 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 7), initialize=0.5)
    m.obj = pyo.Objective(expr=pyo.sin(m.x))
    return m, nonconvex(-1, {"x": 1.5 * math.pi})


def _quartic_global():
    """x^4 - 3x^2 + x on [-3, 3]: stationary points are the roots of 4x^3 - 6x + 1 (numpy.roots), and the ends."""
    import numpy as np

    cands = [r.real for r in np.roots([4, 0, -6, 1]) if abs(r.imag) < 1e-12] + [-3.0, 3.0]
    return min(x ** 4 - 3 * x ** 2 + x for x in cands)


@case("nonconvex_quartic")
def nc_quartic():
    """min x^4 - 3x^2 + x on [-3, 3] from x = 1 (near the local minimum ~1.13): the global one ~ -1.30 (-3.51)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-3, 3), initialize=1)
    m.obj = pyo.Objective(expr=m.x ** 4 - 3 * m.x ** 2 + m.x)
    return m, nonconvex(_quartic_global())


@case("nonconvex_max_square_shifted")
def nc_max_sq():
    """max (x - 0.3)^2 on [0, 1] from 0.3: at x = 1: 0.49."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1), initialize=0.3)
    m.obj = pyo.Objective(expr=(m.x - 0.3) ** 2, sense=pyo.maximize)
    return m, nonconvex(0.49, {"x": 1})


@case("nonconvex_concave_on_simplex")
def nc_simplex():
    """min -x^2 - y^2 on x + y <= 1, x, y >= 0: at a vertex (1, 0) or (0, 1): -1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals, initialize=0.3)
    m.y = pyo.Var(within=pyo.NonNegativeReals, initialize=0.3)
    m.c = pyo.Constraint(expr=m.x + m.y <= 1)
    m.obj = pyo.Objective(expr=-m.x ** 2 - m.y ** 2)
    return m, nonconvex(-1)


@case("nonconvex_reverse_cone_row")
def nc_reverse_cone():
    """x^2 + y^2 >= 1 (outside the disc), min x + y on [0, 2]^2 from (1, 1): at (1, 0) or (0, 1): 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2), initialize=1)
    m.y = pyo.Var(bounds=(0, 2), initialize=1)
    m.c = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 >= 1)
    m.obj = pyo.Objective(expr=m.x + m.y)
    return m, nonconvex(1)


# ---------------------------------------------------------------------------------------------------------------
# Convex NLPs


@case("convex_exp")
def cvx_exp():
    """min exp(x) - 2x: x = ln 2: 2 - 2 ln 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-5, 5))
    m.obj = pyo.Objective(expr=pyo.exp(m.x) - 2 * m.x)
    return m, opt(2 - 2 * math.log(2), {"x": math.log(2)})


@case("convex_log_max")
def cvx_log():
    """max log(x) - x / 3 on [0.1, 10]: x = 3: ln 3 - 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0.1, 10), initialize=1)
    m.obj = pyo.Objective(expr=pyo.log(m.x) - m.x / 3, sense=pyo.maximize)
    return m, opt(math.log(3) - 1, {"x": 3})


@case("convex_exp_sum_with_row")
def cvx_exp2():
    """min exp(x) + exp(-y), x + y >= 0, y <= 1: y = 1, x = -1: 2 / e."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-5, 5))
    m.y = pyo.Var(bounds=(-5, 1))
    m.c = pyo.Constraint(expr=m.x + m.y >= 0)
    m.obj = pyo.Objective(expr=pyo.exp(m.x) + pyo.exp(-m.y))
    return m, opt(2 / math.e, {"x": -1, "y": 1})


@case("convex_pnorm3_abs")
def cvx_pnorm3():
    """(|x - 1|^3 + |2y|^3)^(1/3) <= t, x + y >= 3, min t. With u = x - 1, v = 2y: min ||(u, v)||_3 on u + v/2 = 2,
    which by Hoelder is 2 / ||(1, 1/2)||_{3/2} = 2 / (1 + 0.5^1.5)^(2/3)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-10, 10))
    m.y = pyo.Var(bounds=(-10, 10))
    m.t = pyo.Var(bounds=(0, 100))
    m.c = pyo.Constraint(expr=m.x + m.y >= 3)
    m.cone = pyo.Constraint(expr=(abs(m.x - 1) ** 3 + abs(2 * m.y) ** 3) ** (1 / 3) <= m.t)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(2 / (1 + 0.5 ** 1.5) ** (2 / 3))


@case("convex_pnorm2_abs")
def cvx_pnorm2():
    """(|x|^2 + |y|^2)^(1/2) <= t, x + y >= 2, min t: sqrt 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-10, 10))
    m.y = pyo.Var(bounds=(-10, 10))
    m.t = pyo.Var(bounds=(0, 100))
    m.c = pyo.Constraint(expr=m.x + m.y >= 2)
    m.cone = pyo.Constraint(expr=(abs(m.x) ** 2 + abs(m.y) ** 2) ** 0.5 <= m.t)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(math.sqrt(2), {"x": 1, "y": 1})


@case("convex_pnorm_objective")
def cvx_pnorm_obj():
    """min (|x - 1|^4 + |y + 1|^4)^(1/4) with x + y == 2: u = x - 1, w = y + 1 with u + w = 2; by symmetry and
    convexity u = w = 1: 2^(1/4)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-10, 10))
    m.y = pyo.Var(bounds=(-10, 10))
    m.c = pyo.Constraint(expr=m.x + m.y == 2)
    m.obj = pyo.Objective(expr=(abs(m.x - 1) ** 4 + abs(m.y + 1) ** 4) ** 0.25)
    return m, opt(2 ** 0.25, {"x": 2, "y": 0})


@case("convex_log_sum_exp")
def cvx_lse():
    """min log(exp(x) + exp(y)), x + y == 0: x = y = 0: ln 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-5, 5))
    m.y = pyo.Var(bounds=(-5, 5))
    m.c = pyo.Constraint(expr=m.x + m.y == 0)
    m.obj = pyo.Objective(expr=pyo.log(pyo.exp(m.x) + pyo.exp(m.y)))
    return m, opt(math.log(2), {"x": 0, "y": 0})


@case("convex_entropy")
def cvx_entropy():
    """min x log x on [0.01, 1]: x = 1/e: -1/e."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0.01, 1), initialize=0.5)
    m.obj = pyo.Objective(expr=m.x * pyo.log(m.x))
    return m, opt(-1 / math.e, {"x": 1 / math.e})


@case("convex_reciprocal")
def cvx_recip():
    """min 1/x + x on [0.1, 10]: x = 1: 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0.1, 10), initialize=3)
    m.obj = pyo.Objective(expr=1 / m.x + m.x)
    return m, opt(2, {"x": 1})


@case("convex_quartic")
def cvx_quartic():
    """min x^4 - x: 4x^3 = 1, x = 4^(-1/3): x (x^3 - 1) = -0.75 * 4^(-1/3)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-3, 3))
    m.obj = pyo.Objective(expr=m.x ** 4 - m.x)
    return m, opt(-0.75 * 4 ** (-1 / 3), {"x": 4 ** (-1 / 3)})


@case("convex_exp_row")
def cvx_exp_row():
    """exp(x) <= 2, max x: ln 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-5, 5))
    m.c = pyo.Constraint(expr=pyo.exp(m.x) <= 2)
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    return m, opt(math.log(2), {"x": math.log(2)})


@case("convex_log_row")
def cvx_log_row():
    """log(x) >= 1 (a concave function above a constant: convex set), min x: e."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0.1, 10), initialize=1)
    m.c = pyo.Constraint(expr=pyo.log(m.x) >= 1)
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(math.e, {"x": math.e})


# ---------------------------------------------------------------------------------------------------------------
# Second-order cones in their spellings, and convex quadratic rows


@case("soc_squares_le_t_squared")
def soc_sq():
    """x^2 + y^2 <= t^2 with t >= 0, x + y >= 2, min t: (1, 1), sqrt 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.t = pyo.Var(within=pyo.NonNegativeReals)
    m.cone = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= m.t ** 2)
    m.c = pyo.Constraint(expr=m.x + m.y >= 2)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(math.sqrt(2), {"x": 1, "y": 1})


@case("soc_sqrt_le_t")
def soc_sqrt():
    """sqrt(x^2 + y^2) <= t, x + y >= 2, min t: sqrt 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.t = pyo.Var()
    m.cone = pyo.Constraint(expr=pyo.sqrt(m.x ** 2 + m.y ** 2) <= m.t)
    m.c = pyo.Constraint(expr=m.x + m.y >= 2)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(math.sqrt(2), {"x": 1, "y": 1})


@case("soc_shifted")
def soc_shift():
    """x^2 + y^2 <= (t + 1)^2 with t >= 0, x + y >= 2, min t: sqrt 2 - 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.t = pyo.Var(within=pyo.NonNegativeReals)
    m.cone = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= (m.t + 1) ** 2)
    m.c = pyo.Constraint(expr=m.x + m.y >= 2)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(math.sqrt(2) - 1, {"x": 1, "y": 1})


@case("soc_rotated")
def soc_rotated():
    """Rotated cone x^2 <= t s with t, s >= 0, s == 1, x >= 2, min t: 4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(2, None))
    m.t = pyo.Var(within=pyo.NonNegativeReals)
    m.s = pyo.Var(within=pyo.NonNegativeReals)
    m.cone = pyo.Constraint(expr=m.x ** 2 <= m.t * m.s)
    m.one = pyo.Constraint(expr=m.s == 1)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(4, {"x": 2, "t": 4})


@case("soc_indexed_sum")
def soc_indexed():
    """sum_i x_i^2 <= t^2 over i in 1..3, sum x = 3, t >= 0, min t: x = 1: sqrt 3."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(3)
    m.x = pyo.Var(m.I)
    m.t = pyo.Var(within=pyo.NonNegativeReals)
    m.cone = pyo.Constraint(expr=sum(m.x[i] ** 2 for i in m.I) <= m.t ** 2)
    m.c = pyo.Constraint(expr=pyo.summation(m.x) == 3)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(math.sqrt(3))


@case("soc_scaled_terms")
def soc_scaled():
    """(2x)^2 + (3y)^2 <= t^2, t >= 0, 2x + 3y >= 6, min t: u = 2x, v = 3y, u + v >= 6: 6 / sqrt 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.t = pyo.Var(within=pyo.NonNegativeReals)
    m.cone = pyo.Constraint(expr=(2 * m.x) ** 2 + (3 * m.y) ** 2 <= m.t ** 2)
    m.c = pyo.Constraint(expr=2 * m.x + 3 * m.y >= 6)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(6 / math.sqrt(2), {"x": 1.5, "y": 1})


@case("soc_via_expression")
def soc_expr():
    """A named Expression e = x^2 + y^2 in the cone row e <= t^2, t >= 0, x - y >= 2, min t: sqrt 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.t = pyo.Var(within=pyo.NonNegativeReals)
    m.e = pyo.Expression(expr=m.x ** 2 + m.y ** 2)
    m.cone = pyo.Constraint(expr=m.e <= m.t ** 2)
    m.c = pyo.Constraint(expr=m.x - m.y >= 2)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(math.sqrt(2), {"x": 1, "y": -1})


@case("soc_max_in_disc")
def soc_disc_max():
    """Convex quadratic row x^2 + y^2 <= 1, max x + y: sqrt 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= 1)
    m.obj = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    return m, opt(math.sqrt(2), {"x": math.sqrt(0.5), "y": math.sqrt(0.5)})


@case("quadratic_row_ellipse")
def qrow_ellipse():
    """x^2 + 2y^2 <= 3, min -x - y: by Cauchy-Schwarz max x + y = sqrt(1 + 1/2) sqrt 3 = sqrt 4.5: -sqrt 4.5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=m.x ** 2 + 2 * m.y ** 2 <= 3)
    m.obj = pyo.Objective(expr=-m.x - m.y)
    return m, opt(-math.sqrt(4.5))


@case("quadratic_row_cross_term")
def qrow_cross():
    """x^2 + x y + y^2 <= 3, max x + y: x^2 + xy + y^2 >= 3 s^2 / 4 with s = x + y: s <= 2 at x = y = 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=m.x ** 2 + m.x * m.y + m.y ** 2 <= 3)
    m.obj = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    return m, opt(2, {"x": 1, "y": 1})


@case("quadratic_row_shifted_ball")
def qrow_ball():
    """(x - 1)^2 + (y - 2)^2 <= 4, min y: 0 at (1, 0)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=(m.x - 1) ** 2 + (m.y - 2) ** 2 <= 4)
    m.obj = pyo.Objective(expr=m.y)
    return m, opt(0, {"x": 1, "y": 0})


@case("quadratic_row_and_objective")
def qrow_qobj():
    """min (x - 2)^2 + (y - 2)^2 with x^2 + y^2 <= 2: the projection of (2, 2) on the disc is (1, 1): 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= 2)
    m.obj = pyo.Objective(expr=(m.x - 2) ** 2 + (m.y - 2) ** 2)
    return m, opt(2, {"x": 1, "y": 1})


@case("quadratic_row_ge_concave")
def qrow_ge():
    """-x^2 - y^2 >= -1 (the disc written as >=), min x - y: -sqrt 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=-m.x ** 2 - m.y ** 2 >= -1)
    m.obj = pyo.Objective(expr=m.x - m.y)
    return m, opt(-math.sqrt(2))


@case("qp_cross_terms")
def qp_cross():
    """min x^2 + y^2 - xy - 3x: 2x - y = 3, 2y = x: (2, 1): -3."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.obj = pyo.Objective(expr=m.x ** 2 + m.y ** 2 - m.x * m.y - 3 * m.x)
    return m, opt(-3, {"x": 2, "y": 1})


@case("qp_max_concave")
def qp_max():
    """max -(x - 1)^2 - (y - 2)^2 + 5 with x + y <= 1: projection of (1, 2) on x + y = 1: (0, 1): 5 - 2 = 3."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=m.x + m.y <= 1)
    m.obj = pyo.Objective(expr=-((m.x - 1) ** 2) - (m.y - 2) ** 2 + 5, sense=pyo.maximize)
    return m, opt(3, {"x": 0, "y": 1})


@case("qp_product_of_sums")
def qp_product():
    """min (x + y)(x + y) - 2x - 2y written as a product of sums: s^2 - 2s, s = 1: -1 (point not unique)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-5, 5))
    m.y = pyo.Var(bounds=(-5, 5))
    m.obj = pyo.Objective(expr=(m.x + m.y) * (m.x + m.y) - 2 * m.x - 2 * m.y)
    return m, opt(-1)


# ---------------------------------------------------------------------------------------------------------------
# Infeasible and unbounded models in many forms


def _inf(kind):
    return bad(kind)


@case("infeasible_lp_rows")
def inf_rows():
    """x >= 2 and x <= 1 as rows: infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.a = pyo.Constraint(expr=m.x >= 2)
    m.b = pyo.Constraint(expr=m.x <= 1)
    m.obj = pyo.Objective(expr=m.x)
    return m, _inf(INFEASIBLE)


@case("infeasible_lp_bounds")
def inf_bounds():
    """Var(bounds=(3, 1)): infeasible bounds."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(3, 1))
    m.obj = pyo.Objective(expr=m.x)
    return m, _inf(INFEASIBLE)


@case("infeasible_lp_bounds_vs_row")
def inf_bounds_row():
    """x, y >= 0 and x + y <= -1: infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.x + m.y <= -1)
    m.obj = pyo.Objective(expr=m.x - m.y)
    return m, _inf(INFEASIBLE)


@case("infeasible_lp_equalities")
def inf_eqs():
    """x + y == 1 and x + y == 2: infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.a = pyo.Constraint(expr=m.x + m.y == 1)
    m.b = pyo.Constraint(expr=m.x + m.y == 2)
    m.obj = pyo.Objective(expr=m.x)
    return m, _inf(INFEASIBLE)


@case("infeasible_lp_primal_and_dual")
def inf_both():
    """min -x1 - x2, x1 - x2 >= 1, x2 - x1 >= 1, x >= 0: primal infeasible (sum: 0 >= 2), dual infeasible too."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], within=pyo.NonNegativeReals)
    m.a = pyo.Constraint(expr=m.x[1] - m.x[2] >= 1)
    m.b = pyo.Constraint(expr=m.x[2] - m.x[1] >= 1)
    m.obj = pyo.Objective(expr=-m.x[1] - m.x[2])
    return m, _inf(INFEASIBLE)


@case("infeasible_ranged_row")
def inf_ranged():
    """A ranged row inequality(3, x + y, 5) with x, y in [0, 1]: infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(bounds=(0, 1))
    m.r = pyo.Constraint(expr=pyo.inequality(3, m.x + m.y, 5))
    m.obj = pyo.Objective(expr=m.x)
    return m, _inf(INFEASIBLE)


@case("infeasible_in_block")
def inf_block():
    """The contradiction sits in an active sub-block: b.c: x >= 3 with x <= 2: infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 2))
    m.b = pyo.Block()
    m.b.c = pyo.Constraint(expr=m.x >= 3)
    m.obj = pyo.Objective(expr=m.x)
    return m, _inf(INFEASIBLE)


@case("infeasible_mutable_param")
def inf_param():
    """x >= p with x <= 1; p = 0 at construction, set to 5 after: infeasible; again with p = 0.5: 0.5."""
    m = pyo.ConcreteModel()
    m.p = pyo.Param(initialize=0, mutable=True)
    m.x = pyo.Var(bounds=(None, 1))
    m.c = pyo.Constraint(expr=m.x >= m.p)
    m.obj = pyo.Objective(expr=m.x)
    m.p = 5

    def change(model):
        model.p = 0.5

    return m, Truth(INFEASIBLE, again=(change, opt(0.5)))


@case("infeasible_milp_parity")
def inf_milp():
    """2x == 1 with x integer: infeasible (LP relaxation feasible)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.Integers, bounds=(-5, 5))
    m.c = pyo.Constraint(expr=2 * m.x == 1)
    m.obj = pyo.Objective(expr=m.x)
    return m, _inf(INFEASIBLE)


@case("infeasible_milp_binaries")
def inf_bin():
    """Two binaries with b1 + b2 >= 3: infeasible."""
    m = pyo.ConcreteModel()
    m.b = pyo.Var([1, 2], within=pyo.Binary)
    m.c = pyo.Constraint(expr=m.b[1] + m.b[2] >= 3)
    m.obj = pyo.Objective(expr=m.b[1])
    return m, _inf(INFEASIBLE)


@case("infeasible_milp_relaxation_feasible")
def inf_milp2():
    """Integers x, y with x + y == 1 and x - y == 0 (relaxation: 0.5, 0.5): infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.Integers, bounds=(-5, 5))
    m.y = pyo.Var(within=pyo.Integers, bounds=(-5, 5))
    m.a = pyo.Constraint(expr=m.x + m.y == 1)
    m.b = pyo.Constraint(expr=m.x - m.y == 0)
    m.obj = pyo.Objective(expr=m.x + 2 * m.y)
    return m, _inf(INFEASIBLE)


@case("infeasible_qp")
def inf_qp():
    """min x^2 with x >= 2 and x <= 1 (rows): infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.a = pyo.Constraint(expr=m.x >= 2)
    m.b = pyo.Constraint(expr=m.x <= 1)
    m.obj = pyo.Objective(expr=m.x ** 2)
    return m, _inf(INFEASIBLE)


@case("infeasible_socp")
def inf_socp():
    """x^2 + y^2 <= t^2, 0 <= t <= 1, x >= 2: infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(2, None))
    m.y = pyo.Var()
    m.t = pyo.Var(bounds=(0, 1))
    m.cone = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= m.t ** 2)
    m.obj = pyo.Objective(expr=m.t)
    return m, _inf(INFEASIBLE)


@case("infeasible_quadratic_row")
def inf_qrow():
    """x^2 + y^2 <= 1 and x + y >= 2: infeasible (max of x + y on the disc is sqrt 2)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.d = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= 1)
    m.c = pyo.Constraint(expr=m.x + m.y >= 2)
    m.obj = pyo.Objective(expr=m.x)
    return m, _inf(INFEASIBLE)


@case("infeasible_nlp_exp")
def inf_nlp():
    """exp(x) <= 0.5 with x >= 0: infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.c = pyo.Constraint(expr=pyo.exp(m.x) <= 0.5)
    m.obj = pyo.Objective(expr=m.x)
    return m, _inf(INFEASIBLE)


@case("infeasible_nlp_log")
def inf_nlp_log():
    """log(x) >= 3 with x in [1, 10] (e^3 ~ 20): infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1, 10))
    m.c = pyo.Constraint(expr=pyo.log(m.x) >= 3)
    m.obj = pyo.Objective(expr=m.x)
    return m, _inf(INFEASIBLE)


@case("infeasible_gdp_bigm")
def inf_gdp():
    """[x <= 1] v [x >= 4] with x in [2, 3], after gdp.bigm: infeasible."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(2, 3))
    m.dj = Disjunction(expr=[[m.x <= 1], [m.x >= 4]])
    m.obj = pyo.Objective(expr=m.x)
    pyo.TransformationFactory("gdp.bigm").apply_to(m)
    return m, _inf(INFEASIBLE)


@case("infeasible_gdp_untransformed")
def inf_gdp_raw():
    """[x <= 1] v [x >= 4] with x in [2, 3], untransformed: infeasible (ignoring it: 2)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(2, 3))
    m.dj = Disjunction(expr=[[m.x <= 1], [m.x >= 4]])
    m.obj = pyo.Objective(expr=m.x)
    return m, Truth(INFEASIBLE, may_refuse=True)


@case("unbounded_lp_free")
def unb_free():
    """min x, x free: unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.c = pyo.Constraint(expr=m.x <= 3)
    m.obj = pyo.Objective(expr=m.x)
    return m, _inf(UNBOUNDED)


@case("unbounded_lp_ray")
def unb_ray():
    """min -x - y, x - y <= 1, x, y >= 0: the ray (1, 1): unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.x - m.y <= 1)
    m.obj = pyo.Objective(expr=-m.x - m.y)
    return m, _inf(UNBOUNDED)


@case("unbounded_lp_max")
def unb_max():
    """max x + y with x + y >= 1, x, y >= 0: unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.x + m.y >= 1)
    m.obj = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    return m, _inf(UNBOUNDED)


@case("unbounded_lp_equality_line")
def unb_line():
    """min x - 2y with x - y == 0: along (1, 1) the objective falls: unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=m.x - m.y == 0)
    m.obj = pyo.Objective(expr=m.x - 2 * m.y)
    return m, _inf(UNBOUNDED)


@case("unbounded_lp_in_block")
def unb_block():
    """min b.x with b.x <= 0 in a sub-block, b.x free: unbounded."""
    m = pyo.ConcreteModel()
    m.b = pyo.Block()
    m.b.x = pyo.Var()
    m.b.c = pyo.Constraint(expr=m.b.x <= 0)
    m.obj = pyo.Objective(expr=m.b.x)
    return m, _inf(UNBOUNDED)


@case("unbounded_milp")
def unb_milp():
    """min -n, n a nonnegative integer with n >= 1: unbounded."""
    m = pyo.ConcreteModel()
    m.n = pyo.Var(within=pyo.NonNegativeIntegers)
    m.c = pyo.Constraint(expr=m.n >= 1)
    m.obj = pyo.Objective(expr=-m.n)
    return m, _inf(UNBOUNDED)


@case("unbounded_milp_mixed")
def unb_milp_mixed():
    """max x + b, x continuous >= 0, b binary, x - 3 b >= 0: unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.b = pyo.Var(within=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x - 3 * m.b >= 0)
    m.obj = pyo.Objective(expr=m.x + m.b, sense=pyo.maximize)
    return m, _inf(UNBOUNDED)


@case("unbounded_qp_linear_direction")
def unb_qp():
    """min x^2 - y, y free: unbounded along y (a convex QP with a linear ray)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.c = pyo.Constraint(expr=m.x + m.y >= 0)
    m.obj = pyo.Objective(expr=m.x ** 2 - m.y)
    return m, _inf(UNBOUNDED)


@case("unbounded_qp_semidefinite")
def unb_qp_psd():
    """min (x - y)^2 - x - y (a PSD, singular Hessian): along (1, 1) the square stays 0 and -2t falls: unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.obj = pyo.Objective(expr=(m.x - m.y) ** 2 - m.x - m.y)
    return m, _inf(UNBOUNDED)


@case("unbounded_socp")
def unb_socp():
    """max t with x^2 + y^2 <= t^2, t >= 0: (0, 0, t) is feasible for every t: unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.t = pyo.Var(within=pyo.NonNegativeReals)
    m.cone = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= m.t ** 2)
    m.obj = pyo.Objective(expr=m.t, sense=pyo.maximize)
    return m, _inf(UNBOUNDED)


@case("unbounded_socp_sqrt")
def unb_socp_sqrt():
    """min -x with sqrt(x^2 + y^2) <= t: x = t -> inf: unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.t = pyo.Var()
    m.cone = pyo.Constraint(expr=pyo.sqrt(m.x ** 2 + m.y ** 2) <= m.t)
    m.obj = pyo.Objective(expr=-m.x)
    return m, _inf(UNBOUNDED)


@case("unbounded_nlp_log")
def unb_nlp_log():
    """max log(x), x >= 1: unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(1, None), initialize=2)
    m.obj = pyo.Objective(expr=pyo.log(m.x), sense=pyo.maximize)
    return m, _inf(UNBOUNDED)


@case("unbounded_nlp_exp")
def unb_nlp_exp():
    """min -x + exp(-x), x >= 0: exp(-x) <= 1 and -x falls without bound: unbounded."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=-m.x + pyo.exp(-m.x))
    return m, _inf(UNBOUNDED)


@case("unbounded_nonconvex")
def unb_nonconvex():
    """min -x^2, x free: unbounded (non-convex)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=0.1)
    m.obj = pyo.Objective(expr=-m.x ** 2)
    return m, Truth(UNBOUNDED, nonconvex=True)


@case("bounded_diverging_start")
def bounded_pnorm():
    """A bounded p-norm model started far away: min t, (|x - 1|^3 + |2y|^3)^(1/3) <= t, t free, x, y free:
    t >= 0 with equality at (1, 0): 0 (Ipopt has said Diverging_Iterates on such models)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=100)
    m.y = pyo.Var(initialize=-100)
    m.t = pyo.Var()
    m.cone = pyo.Constraint(expr=(abs(m.x - 1) ** 3 + abs(2 * m.y) ** 3) ** (1 / 3) <= m.t)
    m.obj = pyo.Objective(expr=m.t)
    return m, opt(0, {"x": 1, "y": 0})


# ---------------------------------------------------------------------------------------------------------------
# Badly scaled rows (coefficients 1e-8 .. 1e8)


@case("scaled_tiny_row")
def sc_tiny():
    """1e-8 x >= 3e-8 on x in [0, 10], min x: 3."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 10))
    m.c = pyo.Constraint(expr=1e-8 * m.x >= 3e-8)
    m.obj = pyo.Objective(expr=m.x)
    return m, opt(3, {"x": 3})


@case("scaled_huge_row")
def sc_huge():
    """1e8 x + y >= 1e8, x, y >= 0, min x + y: x = 1 (y would cost 1e8): 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=1e8 * m.x + m.y >= 1e8)
    m.obj = pyo.Objective(expr=m.x + m.y)
    return m, opt(1, {"x": 1, "y": 0})


@case("scaled_mixed_row")
def sc_mixed():
    """1e-4 x + 1e4 y >= 1, x, y >= 0, min x + y: y = 1e-4: 1e-4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=1e-4 * m.x + 1e4 * m.y >= 1)
    m.obj = pyo.Objective(expr=m.x + m.y)
    return m, opt(1e-4)


@case("scaled_objective_huge")
def sc_obj():
    """min 1e8 x with x >= 2: 2e8."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(2, 5))
    m.obj = pyo.Objective(expr=1e8 * m.x)
    return m, opt(2e8, {"x": 2})


@case("scaled_bound_huge")
def sc_bound():
    """max x with x <= 1e8 as a row: 1e8."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.x <= 1e8)
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    return m, opt(1e8)


@case("scaled_rows_span")
def sc_span():
    """Rows 1e-8 x <= 1e-8, 1e8 y <= 2e8, 1e-3 z <= 3e-3 (i.e. x <= 1, y <= 2, z <= 3), max x + y + z: 6."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.z = pyo.Var(within=pyo.NonNegativeReals)
    m.a = pyo.Constraint(expr=1e-8 * m.x <= 1e-8)
    m.b = pyo.Constraint(expr=1e8 * m.y <= 2e8)
    m.c = pyo.Constraint(expr=1e-3 * m.z <= 3e-3)
    m.obj = pyo.Objective(expr=m.x + m.y + m.z, sense=pyo.maximize)
    return m, opt(6, {"x": 1, "y": 2, "z": 3})


@case("scaled_qp")
def sc_qp():
    """min 1e6 (x - 1)^2 + 1e-6 (y - 1)^2 with y <= 0: x = 1, y = 0: 1e-6."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var(bounds=(None, 0))
    m.obj = pyo.Objective(expr=1e6 * (m.x - 1) ** 2 + 1e-6 * (m.y - 1) ** 2)
    return m, opt(1e-6)


@case("scaled_equality")
def sc_eq():
    """1e8 x == 3e8 and 1e-8 y == 2e-8: min x + y = 5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.a = pyo.Constraint(expr=1e8 * m.x == 3e8)
    m.b = pyo.Constraint(expr=1e-8 * m.y == 2e-8)
    m.obj = pyo.Objective(expr=m.x + m.y)
    return m, opt(5, {"x": 3, "y": 2})


# ---------------------------------------------------------------------------------------------------------------
# Foreign variables, user names that collide with solver internals, user Suffixes, complementarity


@case("foreign_var_in_row")
def foreign():
    """A row uses a Var of another model (z in [0, 1]): Pyomo's writers treat it as a variable: x + z >= 3,
    min x, x >= 0: x = 2. A clear refusal is fine too."""
    other = pyo.ConcreteModel()
    other.z = pyo.Var(bounds=(0, 1))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.x + other.z >= 3)
    m.obj = pyo.Objective(expr=m.x)
    m._keep = other  # a plain attribute (not a component), so the other model stays alive
    return m, opt(2, {"x": 2}, may_refuse=True)


@case("foreign_var_fixed")
def foreign_fixed():
    """A row uses a fixed Var of another model (z = 2): a constant: x + z >= 3, min x: 1."""
    other = pyo.ConcreteModel()
    other.z = pyo.Var()
    other.z.fix(2)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.x + other.z >= 3)
    m.obj = pyo.Objective(expr=m.x)
    m._keep = other
    return m, opt(1, {"x": 1}, may_refuse=True)


for _name in ("dual", "rc", "slack", "ipopt_zL_out", "ipopt_zU_out", "urc", "lrc"):

    def _named(name=_name):
        """A user variable named like a solver suffix: min v, v >= 2 (as a row), v <= 5: 2."""
        m = pyo.ConcreteModel()
        m.add_component(name, pyo.Var(bounds=(None, 5)))
        v = m.component(name)
        m.c = pyo.Constraint(expr=v >= 2)
        m.obj = pyo.Objective(expr=v)
        return m, opt(2, {name: 2})

    case(f"user_var_named_{_name}")(_named)


@case("user_constraint_named_dual")
def con_named_dual():
    """A constraint named dual and an objective named rc: min x, dual: x >= 1: 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.dual = pyo.Constraint(expr=m.x >= 1)
    m.rc = pyo.Objective(expr=m.x)
    return m, opt(1)


@case("user_indexed_var_named_dual")
def var_named_dual_idx():
    """An indexed Var named dual in a QP: min sum (dual[i] - i)^2 with dual[1] + dual[2] <= 1: (0, 1): 2."""
    m = pyo.ConcreteModel()
    m.dual = pyo.Var([1, 2])
    m.c = pyo.Constraint(expr=m.dual[1] + m.dual[2] <= 1)
    m.obj = pyo.Objective(expr=(m.dual[1] - 1) ** 2 + (m.dual[2] - 2) ** 2)
    return m, opt(2)


@case("user_suffix_dual_import")
def suffix_dual():
    """The documented idiom model.dual = Suffix(direction=IMPORT): min x + y, x + y >= 1: 1 (filling it is fine)."""
    m = pyo.ConcreteModel()
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.x = pyo.Var(within=pyo.NonNegativeReals)
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.c = pyo.Constraint(expr=m.x + m.y >= 1)
    m.obj = pyo.Objective(expr=m.x + m.y)
    return m, opt(1)


@case("user_suffix_export_scaling")
def suffix_scaling():
    """A user's scaling_factor Suffix (EXPORT) with entries: it must stay as it was; min x, 1e3 x >= 2e3: 2."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.c = pyo.Constraint(expr=1e3 * m.x >= 2e3)
    m.obj = pyo.Objective(expr=m.x)
    m.scaling_factor = pyo.Suffix(direction=pyo.Suffix.EXPORT)
    m.scaling_factor[m.c] = 1e-3
    m.scaling_factor[m.x] = 1.0
    return m, opt(2)


@case("user_suffix_local")
def suffix_local():
    """A LOCAL Suffix with the user's own data and a rc IMPORT suffix: max x on [0, 4]: 4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.tag = pyo.Suffix(direction=pyo.Suffix.LOCAL)
    m.tag[m.x] = 7
    m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    return m, opt(4)


@case("user_suffix_ipopt_bounds")
def suffix_ipopt():
    """The Ipopt warm-start suffixes declared by the user (ipopt_zL_out IMPORT, ipopt_zL_in EXPORT): min (x - 3)^2
    on x <= 1: 4."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(None, 1))
    m.ipopt_zL_out = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.ipopt_zL_in = pyo.Suffix(direction=pyo.Suffix.EXPORT)
    m.obj = pyo.Objective(expr=(m.x - 3) ** 2)
    return m, opt(4, {"x": 1})


@case("complementarity_untransformed")
def compl():
    """pyomo.mpec complements(x >= 0, y >= 0), min (x - 0.5)^2 + (y - 0.5)^2 on [0, 1]^2: x = 0 or y = 0:
    0.25 (ignoring it: 0). A backend must honour or refuse it."""
    from pyomo.mpec import Complementarity, complements

    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.y = pyo.Var(bounds=(0, 1))
    m.cc = Complementarity(expr=complements(m.x >= 0, m.y >= 0))
    m.obj = pyo.Objective(expr=(m.x - 0.5) ** 2 + (m.y - 0.5) ** 2)
    return m, opt(0.25, may_refuse=True)
