"""The builders' recorded rows read in bulk (``tpm_models.models.row_blocks``, ``rows.read_rows``), issue 24.

Truths: the walk over each row's expression (``read_rows(model, column, n, bulk=False)``, itself checked against
Pyomo's ``generate_standard_repn`` in ``test_sparse.py``) and, after a change of a mutable parameter, Pyomo's own
``generate_standard_repn`` of every row. The bulk reading must give *exactly* the walk's reading (the same rows, in
the same order, the same matrix to the bit: it does the same float operations, ``-1.0 * eps_i`` and the data's floats,
so the tolerance is 0), on every registered builder and after each kind of change a user can make to a built model;
a record is used only while it holds. Also the other one-pass readers a solve uses: variables' bounds and domains
(against Pyomo's ``v.lb``, ``v.ub``, ``v.is_continuous()``), parameters' values and values by component (against
each component's own).
"""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.repn import generate_standard_repn
from user_edits import (
    CHANGES,
    add_row,
    change_eps,
    clone,
    deactivate,
    delete_one_row,
    eps_none,
    fix,
    fix_row_variable,
    rebuild_rows,
    set_value,
)

from tpm_models import Kernel, build
from tpm_models.models.registry import all_models
from tpm_models.models.row_blocks import discard_replaced, row_blocks
from tpm_models.solvers import rows as rows_module
from tpm_models.solvers.rows import read_rows

NU, ALPHA, EPS = 0.3, 1.0, 0.02


def cases() -> list:
    """Every registered builder, with each p it takes (the any-p ones at 1, 1.5, 2, inf)."""
    out = []
    for key, info in all_models().items():
        kw = {}
        if info.kernel == "feature map":
            kw["kernel"] = Kernel("hom-poly", degree=2)
        elif info.kernel == "gram":
            kw["kernel"] = Kernel("gaussian", sigma=0.7)
        if info.robust_p is None:
            out.append((key, kw))
        else:
            for p in info.robust_p or (1.0, 1.5, 2.0, math.inf):
                out.append((key, {**kw, "p": p, "eps": EPS}))
    return out


CASES = cases()
RECORDED = [(15, {}), (28, {"p": 2.0, "eps": EPS}), (29, {"p": math.inf, "eps": EPS}),
            (23, {"p": math.inf, "eps": EPS}), (23, {"p": 2.0, "eps": EPS})]


def small(iris):
    X, y = iris
    keep = np.r_[0:12, 50:62, 100:112]  # 36 points of the three classes
    return X[keep], y[keep]


def columns(model) -> tuple[dict, int]:
    free = [v for v in model.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
    return {id(v): k for k, v in enumerate(free)}, len(free)


def walked(model, monkeypatch):
    return read_rows(model, *columns(model), bulk=False)


def bulk_blocks_read(model, monkeypatch) -> int:
    """How many recorded blocks :func:`read_rows` took in one pass."""
    taken = []
    original = rows_module.block_terms

    def counting(block, rows, column):
        out = original(block, rows, column)
        taken.append(out is not None)
        return out

    with monkeypatch.context() as mp:
        mp.setattr(rows_module, "block_terms", counting)
        read_rows(model, *columns(model))
    return sum(taken)


def assert_same(a, b) -> None:
    """The same reading: rows, order, sides, and the CSR arrays bit for bit."""
    assert [id(c) for c in a.constraints] == [id(c) for c in b.constraints]
    assert [id(c) for c in a.others] == [id(c) for c in b.others]
    assert np.array_equal(a.position, b.position) and np.array_equal(a.other_position, b.other_position)
    assert a.M.shape == b.M.shape
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(a.M, name), getattr(b.M, name)), name
    assert np.array_equal(a.lower, b.lower) and np.array_equal(a.upper, b.upper)
    assert np.array_equal(a.equality, b.equality)
    assert list(a.atom_rows) == list(b.atom_rows)
    for key, read in a.atom_rows.items():  # the rows linear in nodes: terms, constant, (coefficient, the same node)
        other = b.atom_rows[key]
        assert (read is None) == (other is None)
        if read is not None:
            assert list(read[0]) == list(other[0]) and list(read[1]) == list(other[1]) and read[2] == other[2]
            assert [(c, id(node)) for c, node in read[3]] == [(c, id(node)) for c, node in other[3]]


@pytest.mark.parametrize("eq,kw", CASES, ids=[f"{k}-{kw.get('p', '')}" for k, kw in CASES])
def test_every_builder_reads_the_same_rows_in_bulk(iris, monkeypatch, eq, kw):
    X, y = small(iris)
    model = build(eq, X, y, 1, NU, ALPHA, **kw)
    # every record holds on the model as built; the derived counterparts (robustify) set every margin row anew
    # after (15)'s, (2)'s or (3)'s builder recorded it: those records are dropped, the rows walked
    if all_models()[eq].group == "derived":
        assert row_blocks(model) == []
    assert bulk_blocks_read(model, monkeypatch) == len(row_blocks(model))
    assert_same(read_rows(model, *columns(model)), walked(model, monkeypatch))


def test_the_margin_rows_are_recorded(iris):
    X, y = small(iris)
    for eq, kw in [*RECORDED, (2, {}), (3, {}), (27, {"eps": EPS}), (26, {"p": 1.5, "eps": EPS})]:
        blocks = row_blocks(build(eq, X, y, 1, NU, ALPHA, **kw))
        assert len(blocks) == 1 and blocks[0].rows[0].parent_component().local_name == "margin", eq
        # (23) at p = 2: eps_i * sqrt(...) read as one node beside the linear terms, the others linear
        assert (blocks[0].atom is not None) == (eq == 23 and kw["p"] == 2.0), eq


def repn_rows(model) -> dict:
    """Pyomo's own reading of every active row: ``name -> ({variable name: coefficient}, lower, upper)``."""
    out = {}
    for con in model.component_data_objects(pyo.Constraint, active=True):
        repn = generate_standard_repn(con.body, quadratic=False, compute_values=True)
        if not repn.is_linear():
            continue
        coefs: dict = {}
        for v, c in zip(repn.linear_vars, repn.linear_coefs):
            coefs[v.name] = coefs.get(v.name, 0.0) + c
        const = repn.constant
        lo = -math.inf if con.lower is None else pyo.value(con.lower) - const
        up = math.inf if con.upper is None else pyo.value(con.upper) - const
        out[con.name] = ({k: c for k, c in coefs.items() if c != 0}, lo, up)
    return out


def as_named(model, read) -> dict:
    free = [v for v in model.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
    out = {}
    for k, con in enumerate(read.constraints):
        a, b = read.M.indptr[k], read.M.indptr[k + 1]
        out[con.name] = ({free[j].name: c for j, c in zip(read.M.indices[a:b], read.M.data[a:b])},
                         read.lower[k], read.upper[k])
    return out



@pytest.mark.parametrize("change", CHANGES, ids=[c.__name__ for c in CHANGES])
@pytest.mark.parametrize("eq,kw", RECORDED, ids=[f"{k}-{kw.get('p', '')}" for k, kw in RECORDED])
def test_a_changed_model_reads_as_the_walk_reads_it(iris, monkeypatch, change, eq, kw):
    X, y = small(iris)
    model = build(eq, X, y, 1, NU, ALPHA, **kw)
    if change in (change_eps, eps_none) and not hasattr(model, "eps"):
        pytest.skip("no eps")
    model = change(model) or model
    bulk = read_rows(model, *columns(model))
    assert_same(bulk, walked(model, monkeypatch))
    if change is change_eps and eq == 23 and kw["p"] == 2.0:  # rows linear in norm_w: its coefficient is -eps_i
        for i, con in zip(list(model.margin)[:10], list(model.margin.values())[:10]):
            assert bulk.atom_rows[id(con)][3][0][0] == -pyo.value(model.eps[i])
    elif change is change_eps:  # the new values are read, not the recorded ones: against Pyomo's own reading
        truth = repn_rows(model)
        mine = as_named(model, bulk)
        assert mine.keys() == truth.keys()
        for name, (coefs, lo, up) in truth.items():
            got = mine[name]
            assert got[0].keys() == coefs.keys() and got[1] == lo and got[2] == up, name
            for v, c in coefs.items():
                assert abs(got[0][v] - c) <= 1e-15 * abs(c), (name, v)


@pytest.mark.parametrize("change,taken", [(change_eps, 1), (clone, 1), (rebuild_rows, 1),
                                          (add_row, 1), (set_value, 0), (deactivate, 0), (fix, 0),
                                          (fix_row_variable, 0), (delete_one_row, 0), (eps_none, 0)])
def test_a_record_is_kept_only_while_it_holds(iris, monkeypatch, change, taken):
    """Kept after a change that leaves the rows as recorded (their values re-read), refused after any other."""
    X, y = small(iris)
    model = build(28, X, y, 1, NU, ALPHA, eps=EPS)
    model = change(model) or model
    assert bulk_blocks_read(model, monkeypatch) == taken


@pytest.mark.parametrize("p", [math.inf, 2.0])
def test_a_named_expression_changed_after_the_build_is_walked(iris, monkeypatch, p):
    """(23) at p = inf and 2 reads its rows through the named expression norm_w: set anew, the rows change."""
    X, y = small(iris)
    model = build(23, X, y, 1, NU, ALPHA, p=p, eps=EPS)
    model.norm_w.set_value(2 * model.w[1] + model.w[2] if p == 2.0 else 2 * model.abs_w[1] + model.abs_w[2])
    assert bulk_blocks_read(model, monkeypatch) == 0
    assert_same(read_rows(model, *columns(model)), walked(model, monkeypatch))


def test_only_the_records_that_can_never_hold_again_are_discarded(iris):
    X, y = small(iris)
    for change, dropped in ((None, 0), (deactivate, 0), (change_eps, 0), (set_value, 1), (delete_one_row, 1)):
        model = build(28, X, y, 1, NU, ALPHA, eps=EPS)
        if change is not None:
            change(model)
        assert discard_replaced(model) == dropped and len(row_blocks(model)) == 1 - dropped, change


def test_a_record_that_does_not_match_its_rows_is_not_used(iris, monkeypatch):
    """A builder's wrong record (a coefficient off in the last row) is caught by the check of its first and last
    rows against the walk; the rows are then walked."""
    X, y = small(iris)
    model = build(28, X, y, 1, NU, ALPHA, eps=EPS)
    block = row_blocks(model)[0]
    block.coefs[-3] += 1.0  # theta of the last row
    assert bulk_blocks_read(model, monkeypatch) == 0
    assert_same(read_rows(model, *columns(model)), walked(model, monkeypatch))


def test_a_users_builder_records_its_rows_as_the_docs_show(monkeypatch, rng):
    """docs/architecture.md, "How a solver reads your rows": a user's block recorded with ``record_rows`` is read in
    one pass, the same as walked; a row added beside it without a record is walked."""
    from tpm_models.models.row_blocks import record_rows
    from tpm_models.models.shapes import linear_row

    k, n = 40, 6
    A, b = rng.normal(size=(k, n)), rng.normal(size=k)
    A[3, 2], A[5, 1] = 1.0, 0.0  # a coefficient 1 is written as the variable itself, a 0 kept as a term
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n))
    x = [m.x[j] for j in range(n)]
    m.rows = pyo.Constraint(range(k), rule=lambda m, i: linear_row(A[i].tolist(), x) >= b[i])
    record_rows(m.rows, x, indptr=np.arange(k + 1) * n, slots=np.tile(np.arange(n), k), coefs=A.ravel(), lower=b,
                upper=np.inf)
    m.other = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] <= 4)
    m.obj = pyo.Objective(expr=m.x[0])
    assert bulk_blocks_read(m, monkeypatch) == 1
    read = read_rows(m, *columns(m))
    assert_same(read, walked(m, monkeypatch))
    assert np.array_equal(read.M[:k].toarray(), np.where(A == 0, 0.0, A)) and np.array_equal(read.lower[:k], b)


def test_variables_bounds_and_domains_read_once_are_pyomos(monkeypatch):
    """``rows.variable_bounds`` (one ``v.bounds`` a variable) and ``rows.integer_mask`` (one test a domain) against
    Pyomo's ``v.lb``, ``v.ub`` and ``v.is_continuous()`` of each variable: a domain tighter than a bound, a bound that
    is a mutable parameter, infinite bounds given as numbers, integer and binary domains, a fixed variable."""
    from pyomo.core.base.var import VarData

    from tpm_models.solvers.program import Program
    from tpm_models.solvers.variables import integer_mask, variable_bounds

    m = pyo.ConcreteModel()
    m.p = pyo.Param(initialize=2.5, mutable=True)
    m.a = pyo.Var(range(3), within=pyo.NonNegativeReals, bounds=(-1, 4))
    m.b = pyo.Var(bounds=(-math.inf, math.inf))
    m.c = pyo.Var(within=pyo.Binary)
    m.d = pyo.Var(range(2), within=pyo.Integers, bounds=(-3, m.p))
    m.e = pyo.Var(bounds=(m.p, None))
    m.f = pyo.Var(within=pyo.NonPositiveReals)
    m.g = pyo.Var()
    m.g.fix(1.0)
    m.p = 3.5  # the bounds read now, not as built
    program = Program(m)
    variables, column = program.columns
    assert [v.name for v in variables] == [v.name for v in m.component_data_objects(pyo.Var) if not v.fixed]
    assert column == {id(v): k for k, v in enumerate(variables)}
    lb, ub = program.bounds
    assert program.bounds[0] is lb  # read once a solve
    assert lb.tolist() == [-math.inf if v.lb is None else v.lb for v in variables]
    assert ub.tolist() == [math.inf if v.ub is None else v.ub for v in variables]
    assert integer_mask(variables).tolist() == [not v.is_continuous() for v in variables]

    # indexed variables only, numeric bounds: read from what each VarData stores, not by v.bounds
    n = pyo.ConcreteModel()
    n.a = pyo.Var(range(3), within=pyo.NonNegativeReals, bounds=(-1, 4))
    n.b = pyo.Var(range(2), bounds=(-math.inf, math.inf))
    n.c = pyo.Var(range(2), within=pyo.Binary, bounds=(0.5, None))
    n.d = pyo.Var(range(2), within=pyo.RangeSet(-2, 5), bounds=(None, 7))
    n.f = pyo.Var(range(2), within=pyo.NonPositiveReals, bounds=(-3, 2))
    n.g = pyo.Var(range(2), bounds=(1, 1))
    n.b[1].setub(2.5)
    n.h = pyo.Var(within=pyo.NonNegativeReals)  # a scalar variable
    free = list(n.component_data_objects(pyo.Var))
    truth = ([-math.inf if v.lb is None else v.lb for v in free], [math.inf if v.ub is None else v.ub for v in free])
    with monkeypatch.context() as mp:
        mp.setattr(VarData, "bounds", property(lambda v: 1 / 0))  # not asked
        stored = variable_bounds(free)
    assert stored[0].tolist() == truth[0] and stored[1].tolist() == truth[1]
    n.a[0].setlb(m.p)  # a Param bound: Pyomo's own reading (v.bounds)
    free = list(n.component_data_objects(pyo.Var))
    assert variable_bounds(free)[0].tolist() == [-math.inf if v.lb is None else v.lb for v in free]


def test_parameters_read_in_one_pass_are_their_values():
    """``row_blocks.param_values`` and the sum of parameters (``coefficient``) against ``p.value`` and
    Pyomo's evaluation: numbers, an int, a value set after the build, an unset value (refused by the caller), and a
    list that is not all ``ParamData``; the sum in the walk's order (last term first), so bit for bit."""
    from functools import reduce

    from tpm_models.models.row_blocks import param_values
    from tpm_models.solvers.expression_terms import coefficient

    m = pyo.ConcreteModel()
    m.eps = pyo.Param(range(50), initialize=lambda m, i: 0.1 * i + 1e-3, mutable=True)
    m.s = pyo.Param(initialize=0.25, mutable=True)
    m.eps[3] = 7
    params = list(m.eps.values())
    assert param_values(params) == [p.value for p in params]
    assert param_values([m.s, *params]) == [m.s.value, *[p.value for p in params]]
    total = sum(m.eps[i] for i in range(50))
    assert coefficient(total) == reduce(lambda a, b: a + b, [p.value for p in reversed(params)], 0.0)
    assert coefficient(total) == pytest.approx(pyo.value(total), rel=1e-15)
    m.u = pyo.Param(range(20), mutable=True)
    unset = sum(m.u[i] for i in range(20))
    assert len(m.u) == 20 and not set(map(type, param_values(list(m.u.values())))) & {float, int}  # the caller refuses
    with pytest.raises(ValueError):
        coefficient(unset)


def test_values_by_component_are_in_index_order():
    """``values_of`` and ``component_values`` (a dense component read through ``values()``) against each component's
    data read index by index: an index set not in sorted order, unset values (NaN), a scalar, a dual dictionary
    without some rows (NaN)."""
    from tpm_models.solvers.structure import component_values, values_of

    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=[3, 1, 2], ordered=True)
    m.x = pyo.Var(m.I)
    m.y = pyo.Var()
    m.z = pyo.Var(range(4), initialize=lambda m, i: 0.5 * i)
    m.x[1] = 2.0
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] >= i)
    got = values_of(m)
    assert list(got) == ["x", "y", "z"] and math.isnan(got["y"])
    assert np.array_equal(got["x"], [np.nan if m.x[k].value is None else m.x[k].value for k in m.I], equal_nan=True)
    assert np.array_equal(got["z"], [0.0, 0.5, 1.0, 1.5])
    duals = {m.c[3]: -1.5, m.c[2]: 0.25}
    assert np.array_equal(component_values(m, duals.get, pyo.Constraint)["c"], [-1.5, np.nan, 0.25], equal_nan=True)
