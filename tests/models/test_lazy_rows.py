"""The margin rows written on demand (``tpm_models.models.lazy_rows``): made when first read, the model's own numbers,
the same rows through ``clone()``, ``pickle`` and the writers, and an ordinary row once given another expression.
That each made row is, node for node, the operators' row is ``tests/models/test_builders.py``."""

import io
import pickle

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.core.base.constraint import ConstraintData
from pyomo.core.expr.numeric_expr import MonomialTermExpression
from pyomo.core.expr.visitor import identify_variables

from tpm_models import Kernel, build, solve
from tpm_models.models.lazy_rows import LazyRowData, LazyRows, is_as_built, unmade_terms
from tpm_models.models.row_blocks import discard_replaced, row_blocks

NU, ALPHA, EPS = 0.3, 1.0, 0.05


def _data(rng, m=40, n=4):
    return rng.random((m, n)), np.arange(m) % 3


def _operators_row(model, i, x, eq):
    """Row ``i`` as Pyomo's operators write it from the paper, from the numbers ``x`` of point ``i``."""
    body = sum(float(a) * model.w[j] for a, j in zip(x, model.J)) + model.theta
    if eq == 28:
        body = body - model.eps[i] * model.t
    return body + model.xi[i] >= 0


def _random_point(model, rng):
    for v in model.component_data_objects(pyo.Var):
        v.set_value(float(rng.random() + 0.1), skip_validation=True)


@pytest.mark.parametrize("eq", [15, 28])
def test_rows_are_made_when_read_and_a_solve_reads_their_record(rng, eq):
    """No row is made by the build; Clarabel's solve reads the rows from their record and checks only the first and
    the last against their expressions (``solvers/rows.py``), so it makes those two. (A small QP's dense matrices,
    PIQP's default below ``PIQP_DENSE_MAX`` variables, are read row by row: they make every row.)"""
    X, y = _data(rng)
    model = build(eq, X, y, 1, NU, ALPHA, **({"eps": EPS} if eq == 28 else {}))
    assert isinstance(model.margin, LazyRows) and model.margin.ctype is pyo.Constraint
    assert not any(con.made for con in model.margin.values())
    result = solve(model, "clarabel")
    assert result.certified
    made = [i for i, con in model.margin.items() if con.made]
    assert made == [next(iter(model.margin)), list(model.margin)[-1]]


def test_the_model_owns_its_numbers(rng):
    """The user's array changed after the build changes no row: a row made afterwards is the row of the data the
    model was built from (its value at a point, against numpy on a copy)."""
    X, y = _data(rng)
    kept = X.copy()
    model = build(28, X, y, 1, NU, ALPHA, eps=EPS)
    X[:] = 7.0
    _random_point(model, rng)
    w = np.array([model.w[j].value for j in model.J])
    for i, con in model.margin.items():
        expected = kept[i - 1] @ w + model.theta.value - EPS * model.t.value + model.xi[i].value
        assert pyo.value(con.body) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("eq", [15, 28])
def test_a_clone_and_a_pickle_make_their_rows_from_their_own_variables(rng, eq):
    X, y = _data(rng)
    model = build(eq, X, y, 1, NU, ALPHA, **({"eps": EPS} if eq == 28 else {}))
    for copy in (model.clone(), pickle.loads(pickle.dumps(model))):
        own = {id(v) for v in copy.component_data_objects(pyo.Var)}
        for i, con in copy.margin.items():
            assert type(con) is LazyRowData and not con.made
            assert {id(v) for v in identify_variables(con.body)} <= own, i
        _random_point(copy, rng)
        _random_point(model, rng)
        for name in ("w", "theta", "xi", *(("t",) if eq == 28 else ())):
            for k, v in getattr(copy, name).items():
                getattr(model, name)[k].set_value(v.value)
        for i in model.margin:
            assert pyo.value(copy.margin[i].body) == pyo.value(model.margin[i].body)
        assert len(row_blocks(copy)) == 1 and row_blocks(copy)[0].as_built()


def test_the_lp_file_is_the_one_of_the_operators_rows(rng, tmp_path):
    """Written to .lp, the rows made on demand are the rows of the same model whose rows were set to the operators'
    expressions (ordinary rows, after ``set_value``): the same file."""
    X, y = _data(rng)
    lazy = build(28, X, y, 1, NU, ALPHA, eps=EPS)
    written = build(28, X, y, 1, NU, ALPHA, eps=EPS)
    for i, con in written.margin.items():
        con.set_value(_operators_row(written, i, X[i - 1], 28))
    assert not is_as_built(list(written.margin.values()))
    files = []
    for model, name in ((lazy, "lazy.lp"), (written, "written.lp")):
        model.write(str(tmp_path / name), io_options={"symbolic_solver_labels": True})
        files.append((tmp_path / name).read_text())
    assert files[0] == files[1]


def test_pprint_shows_every_row(rng):
    X, y = _data(rng)
    model = build(15, X, y, 1, NU, ALPHA)
    out = io.StringIO()
    model.margin.pprint(ostream=out)
    text = out.getvalue()
    assert f"Size={len(model.margin)}" in text
    assert all(f" + theta + xi[{i}] :" in text for i in model.margin)


def test_a_row_given_another_expression_is_an_ordinary_row(rng):
    """``set_value`` keeps the new expression and the row is no longer as built: its record is dropped, and the
    solve reads the rows by walking them, to the optimum of the model as changed (against the same change written
    on a model whose rows were all set to the operators' rows)."""
    X, y = _data(rng)
    model = build(15, X, y, 1, NU, ALPHA)
    first = next(iter(model.margin))
    row = model.margin[first]
    new = _operators_row(model, first, 2 * X[first - 1], 15)
    row.set_value(new)
    assert type(row) is ConstraintData and row.expr is new
    assert discard_replaced(model) == 1 and not row_blocks(model)
    reference = build(15, X, y, 1, NU, ALPHA)
    for i, con in reference.margin.items():
        con.set_value(_operators_row(reference, i, (2 if i == first else 1) * X[i - 1], 15))
    ours, theirs = solve(model), solve(reference, "ipopt") if pyo.SolverFactory("ipopt").available(False) else None
    theirs = theirs or solve(reference)
    assert ours.certified
    assert abs(ours.objective - theirs.objective) <= 1e-7 * max(1.0, abs(theirs.objective))


def test_a_refused_expression_leaves_the_row_as_built(rng):
    X, y = _data(rng)
    model = build(15, X, y, 1, NU, ALPHA)
    row = next(iter(model.margin.values()))
    with pytest.raises(ValueError):
        row.set_value(None)
    assert type(row) is LazyRowData and is_as_built(list(model.margin.values()))


class _AtLeastIndex:
    """A user's row maker, as ``docs/architecture.md`` shows: row ``i`` is ``x[i] >= i``."""

    def __init__(self, x):
        self.x = x

    def __call__(self, i):
        return self.x[i] >= i


def test_a_users_rows_on_a_list_index_are_made_when_read_and_solved():
    """``LazyRows`` on an index given as a list (an anonymous set, built first): the rows are made when read, and a
    solve (the rows walked: nobody recorded them) reaches the closed-form optimum min x_1 + x_3 = 1 + 3."""
    model = pyo.ConcreteModel()
    model.x = pyo.Var([1, 2, 3])
    model.c = LazyRows([1, 3], _AtLeastIndex(model.x), doc="x_i >= i")
    model.obj = pyo.Objective(expr=model.x[1] + model.x[3] + model.x[2] ** 2)
    assert list(model.c) == [1, 3] and not any(con.made for con in model.c.values())
    result = solve(model)
    assert result.certified
    assert result.objective == pytest.approx(4.0, abs=1e-7)
    assert [pyo.value(model.x[i]) for i in (1, 3)] == pytest.approx([1.0, 3.0], abs=1e-7)


def _data_with_ones_and_zeros(rng, m=30, n=4):
    """Points with exact 1.0 and 0.0 among their numbers: a coefficient 1 is the bare variable, 0.0 a monomial."""
    X = rng.random((m, n))
    X[::4, 0], X[1::5, 1] = 1.0, 0.0
    return X, np.arange(m) % 3


@pytest.mark.parametrize("eq", [2, 3, 10, 11, 15])
def test_a_row_makers_terms_are_the_terms_of_its_row(rng, eq):
    """``terms(i)`` of the primal margin rows' maker (what the ``.lp`` writer reads of a row not made) is, object for
    object and type for type, what the made row holds: its sides from ``to_bounded_expression(True)``, each
    term's coefficient (the int 1 of a bare variable) and variable. Truth: the made row itself."""
    X, y = _data_with_ones_and_zeros(rng)
    model = build(eq, X, y, 1, NU, ALPHA, kernel=Kernel("hom-poly", degree=2) if eq in (10, 11) else None)
    rows = [c for c in model.component_objects(pyo.Constraint) if isinstance(c, LazyRows)]
    assert rows, "the primal models' margin rows are made on demand"
    checked = 0
    for component in rows:
        for con in component.values():
            terms = unmade_terms(con)
            assert terms is not None and not con.made
            lb, body, ub = con.to_bounded_expression(True)
            assert con.made and unmade_terms(con) is None  # a made row is read as written
            assert (type(terms.lower), terms.lower, type(terms.upper), terms.upper) == (type(lb), lb, type(ub), ub)
            coefs, variables = [], []
            for arg in body.args:
                coef, var = arg.args if isinstance(arg, MonomialTermExpression) else (1, arg)
                coefs.append(coef)
                variables.append(var)
            assert [type(c) for c in terms.coefs] == [type(c) for c in coefs] and terms.coefs == coefs
            assert all(a is b for a, b in zip(terms.variables, variables)) and len(terms.variables) == len(variables)
            assert terms.constant == 0
            checked += 1
    assert checked >= 10
