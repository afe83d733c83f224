"""Our ``.lp`` writer (:mod:`tpm_models.export.lp_text`) writes exactly what Pyomo's ``LPWriter`` writes.

Truth: Pyomo's own writer (:func:`~tpm_models.export.lp_text.pyomo_lp_text`, ``LPWriter().write`` with the
same options), run in the same process on the same model: the texts are compared character for character.
Models: every instance of the shipped library that ``.lp`` holds, written through the export (collected
objective), and small handmade models for the edge cases of the format, plus random linear models, plus the
models of Pyomo's own LP-writer tests (``pyomo/repn/tests``), written here again.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression

from tpm_models import build
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.export import writers
from tpm_models.export.library import LIBRARY_DATASETS, library_instances
from tpm_models.export.lp_text import lp_text, pyomo_lp_text
from tpm_models.models.shapes import linear_row


def same(model: pyo.ConcreteModel) -> str:
    ours, pyomos = lp_text(model), pyomo_lp_text(model)
    assert ours == pyomos
    return ours


def lin(*terms, constant=None) -> LinearExpression:
    """A ``LinearExpression`` with these arguments: ``(coef, var)`` monomials, bare variables, numbers."""
    args = [] if constant is None else [constant]
    args += [MonomialTermExpression(t) if isinstance(t, tuple) else t for t in terms]
    return LinearExpression(args)


@pytest.fixture
def checked_writer(monkeypatch):
    """The export writes its ``.lp`` with a writer that checks ours against Pyomo's on the prepared model."""
    seen = []

    def checked(model):
        seen.append(same(model))
        return seen[-1]

    monkeypatch.setattr(writers, "lp_text", checked)
    return seen


@pytest.mark.parametrize("dataset", LIBRARY_DATASETS)
def test_every_library_model_that_lp_holds(dataset, checked_writer):
    d = load_dataset(dataset)
    X, y = min_max_scale(d.X), d.y
    written = 0
    for inst in library_instances([dataset]):
        if inst.eq == 22:
            continue
        model = inst.build(X, y)
        if "lp" in writers.formats_for(model):
            writers.model_text(model, "lp")
            written += 1
    assert written == len(checked_writer) > 80


def edge_model() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel(name="edge cases")
    m.I = pyo.Set(initialize=[3, 1, 2], ordered=False)
    m.x = pyo.Var(m.I, bounds=(-2, 5.5))
    m.y = pyo.Var(within=pyo.NonNegativeReals)
    m.z = pyo.Var(bounds=(None, 4))  # only in the quadratic objective
    m.unused = pyo.Var()  # in no row
    m.f = pyo.Var(initialize=2.5)
    m.f.fix()
    m.g = pyo.Var([1, 2], initialize=-1.0)
    m.g[2].fix()
    m.k = pyo.Var(within=pyo.Integers, bounds=(0, 10))
    m.b = pyo.Var(within=pyo.Binary)
    m.s = pyo.Var([("a,b", 1), ("c d", 2), ("[e]", 3), ("1.5", 4)], bounds=(0.25, 1e30))
    m.p = pyo.Param(initialize=0.7, mutable=True)
    m.n = pyo.Var([-2, 0, 5, 1.5], bounds=(-1, 1))  # negative, zero and float indices
    x, s = m.x, m.s
    m.c = pyo.ConstraintList()
    m.c.add(lin((2.5, x[1]), (-1.0, x[2]), x[3]) >= 1)  # mixed signs
    m.c.add(lin((0.0, x[1]), (3, x[2]), (1e-20, m.y), constant=1.5) <= 7.25)  # zero, int, tiny; constant
    m.c.add(lin((1e16, x[1]), (123456789.123, x[2]), (2.0, m.y)) == 4)  # large numbers; equality
    m.c.add(pyo.inequality(-1, lin((0.1, x[1]), (0.2, x[3])), 1.5))  # ranged
    m.c.add(lin((1.0, x[3]), (1.0, x[1]), (2.0, m.k)) >= -3)  # out of column order
    m.c.add(lin((2.0, x[1]), (3.0, x[1]), (1.0, m.y)) <= 10)  # a variable twice
    m.c.add(lin((2.0, x[1]), (4.0, m.f), (1.0, m.g[2]), m.g[1]) >= 0)  # fixed variables
    m.c.add(lin((m.p, x[1]), (2.0, m.y)) >= 0)  # a parameter as coefficient
    m.c.add(lin((0.0, x[1]), (0.0, m.y), constant=-0.0) >= -1)  # only zero coefficients
    m.c.add(LinearExpression([2.5, 1]) <= 7)  # only constants
    m.c.add(LinearExpression([]) >= -1)  # nothing
    m.c.add(lin((np.float64(0.3), x[2]), (True, m.y)) <= 2)  # numpy and bool coefficients
    m.c.add(lin((1.0, s[("a,b", 1)]), (2.0, s[("c d", 2)]), (3.0, s[("[e]", 3)]), (4.0, s[("1.5", 4)])) <= 9)
    m.c.add(lin((-0.5, m.b), (-1.0, m.y), constant=2) >= -1.5)  # all negative
    m.c.add(lin((1.0, m.n[-2]), (2.0, m.n[0]), (3.0, m.n[5]), (4.0, m.n[1.5])) <= 1)
    m.c.add(2 * x[1] + x[2] * 3 - m.y + 4 <= 8)  # built with operators (a SumExpression)
    m.c.add(x[1] - x[2] == m.y)  # variables on both sides
    m.c.add(x[1] * x[2] + 0.5 * m.y**2 - 2 * x[3] <= 3)  # quadratic row
    m.c.add(lin((1.0, x[1]), (1.0, x[2])) <= float("inf"))  # no finite bound: not written
    m.c.add(pyo.inequality(-float("inf"), lin((1.0, x[1]), (1.0, x[2])), 5))  # ranged, one bound infinite
    m.off = pyo.Constraint(expr=lin((1.0, x[1]), (1.0, x[2])) >= 100)
    m.off.deactivate()
    m.sub = pyo.Block()
    m.sub.v = pyo.Var(["p", "q"], bounds=(-1, 1))
    m.sub.row = pyo.Constraint(["p", "q"], rule=lambda b, i: lin((1.5, b.v[i]), (-2.0, m.y)) <= 0.5)
    m.obj = pyo.Objective(
        expr=3.5 + 2 * x[1] - x[2] + 0.5 * m.z**2 + 1.5 * x[1] * x[3] - 2 * x[3] * x[1] + m.y * m.y + 4 * m.f * x[2],
        sense=pyo.maximize,
    )
    return m


def test_edge_cases_written_as_pyomo_writes_them():
    text = same(edge_model())
    assert "max" in text and "ONE_VAR_CONSTANT" in text and "] / 2" in text and "r_l_" in text
    assert "\ngeneral\n" in text and "\nbinary\n" in text


def test_objective_constant_alone_and_no_row():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.obj = pyo.Objective(expr=4.0)
    assert "c_e_ONE_VAR_CONSTANT" in same(m)
    m.obj.set_value(m.x * 0 + 0)
    same(m)


def test_linear_rows_of_the_builders_shape():
    """Rows as the builders make them (``linear_row``): data 0.0 and 1 coefficients, random magnitudes."""
    rng = np.random.default_rng(7)
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(1, 6))
    m.t = pyo.Var()
    m.xi = pyo.Var(range(40), domain=pyo.NonNegativeReals)
    data = rng.standard_normal((40, 5)) * 10.0 ** rng.integers(-8, 9, size=(40, 5))
    data[data < -5] = 0.0
    data[::7, 2] = 1
    m.row = pyo.Constraint(range(40), rule=lambda m, i: linear_row(list(data[i]) + [1, -1.0],
                                                                   [m.w[j] for j in range(1, 6)] + [m.t, m.xi[i]],
                                                                   constant=float(data[i, 0])) >= -1)
    m.obj = pyo.Objective(expr=sum(m.w[j] ** 2 for j in m.w) + sum(m.xi.values()) / 40)
    same(m)


@pytest.mark.parametrize("change", ["none", "fixed w", "deactivated row", "some made"])
@pytest.mark.parametrize("eq", [2, 3, 15])
def test_rows_made_on_demand_are_written_without_being_made(eq, change):
    """The margin rows of (2), (3), (15), made on demand (``tpm_models.models.lazy_rows``), are written from their
    maker's terms and stay unmade, and the text is Pyomo's, which makes every row to write it (data with 1.0 and 0.0:
    bare variables and monomials); also with a weight fixed (those rows go through Pyomo's visitor), a row
    deactivated, and some rows made before the write."""
    rng = np.random.default_rng(3)
    X = rng.random((30, 4))
    X[::4, 0], X[1::5, 1] = 1.0, 0.0
    model = build(eq, X, np.arange(30) % 3, 1, 0.3, 1.0)
    rows = list(model.margin.values())
    if change == "fixed w":
        model.w[2].fix(0.25)
    elif change == "deactivated row":
        rows[3].deactivate()
    elif change == "some made":
        rows[0].body, rows[5].body  # noqa: B018 -- made by reading
    made_before = {id(con) for con in rows if con.made}
    ours = lp_text(model)
    assert {id(con) for con in rows if con.made} == made_before or change == "fixed w"
    assert ours == pyomo_lp_text(model)


def test_random_linear_models():
    rng = np.random.default_rng(11)
    values = [0.0, -0.0, 1, -1, 2, 0.5, -0.25, 1e-300, 3e300, math.pi, -math.e, 1e16, 1e-5, 7.0]
    coefficients = values + [math.nan, math.inf, -math.inf, 5e-324]
    for trial in range(150):
        m = pyo.ConcreteModel()
        m.v = pyo.Var(range(8), bounds=lambda m, i: (None if i % 3 == 0 else -i, None if i % 2 else 2 * i))
        for i in range(8):
            if rng.random() < 0.15:
                m.v[i].set_value(float(rng.choice(values)), skip_validation=True)
                m.v[i].fix()
        m.r = pyo.ConstraintList()
        for _ in range(12):
            k = int(rng.integers(1, 6))
            terms = [(float(rng.choice(coefficients)) if rng.random() < 0.8 else int(rng.integers(-3, 4)),
                      m.v[int(i)]) for i in rng.integers(0, 8, size=k)]
            body = lin(*terms, constant=float(rng.choice(values)) if rng.random() < 0.3 else None)
            kind = rng.integers(0, 4)
            bound = float(rng.choice(values))
            m.r.add(body >= bound if kind == 0 else body <= bound if kind == 1 else body == bound if kind == 2
                    else pyo.inequality(bound - 1, body, bound + 1))
        m.obj = pyo.Objective(expr=sum(m.v[i] * m.v[(i + 1) % 8] for i in range(8)) + m.v[0],
                              sense=pyo.minimize if trial % 2 else pyo.maximize)
        same(m)


def test_fallback_to_pyomo_for_sos_and_suffix():
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(0, 1))
    m.c = pyo.Constraint(expr=lin((1.0, m.x[1]), (1.0, m.x[2])) <= 1)
    m.obj = pyo.Objective(expr=m.x[1] + 2 * m.x[3])
    m.sos = pyo.SOSConstraint(var=m.x, sos=1)
    assert "SOS" in same(m)
    m.del_component(m.sos)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    same(m)


def test_what_pyomo_refuses_is_refused_the_same_way():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.c = pyo.Constraint(expr=pyo.exp(m.x) <= 1)
    m.obj = pyo.Objective(expr=m.x)
    with pytest.raises(Exception) as pyomos:
        pyomo_lp_text(m)
    with pytest.raises(type(pyomos.value)):
        lp_text(m)
    d = pyo.ConcreteModel()
    d.x = pyo.Var([1])
    d.c_u_c_ = pyo.Var()  # the label of row c
    d.c = pyo.Constraint(expr=lin((1.0, d.x[1]), (2.0, d.c_u_c_)) <= 1)
    d.obj = pyo.Objective(expr=d.x[1])
    with pytest.raises(RuntimeError):
        pyomo_lp_text(d)
    with pytest.raises(RuntimeError):
        lp_text(d)


def test_a_variable_of_another_model():
    """Pyomo's visitor gives a variable that is not in the model (and the rest of its component) the next
    columns; ours reads the rows after it with the model's own columns, as before."""
    other = pyo.ConcreteModel()
    other.z = pyo.Var([1, 2])
    m = pyo.ConcreteModel()
    m.r = pyo.Reference({1: other.z[2]})  # other.z[2] and (filled in by Pyomo) other.z[1] are columns of m
    m.x = pyo.Var([1, 2])
    m.a = pyo.Constraint(expr=lin((1.0, m.r[1]), (2.0, m.x[1])) <= 1)
    m.b = pyo.Constraint(expr=lin((3.0, other.z[1]), (1.0, m.x[2])) >= 0)
    m.c = pyo.Constraint(expr=lin((1.5, m.x[2]), (2.5, m.x[1])) <= 4)
    m.obj = pyo.Objective(expr=m.x[1] + m.x[2])
    same(m)
    foreign = pyo.ConcreteModel()
    foreign.u = pyo.Var([1, 2, 3])
    m.d = pyo.Constraint(expr=lin((1.0, foreign.u[2]), (2.0, m.x[1]), (4.0, foreign.u[1])) <= 1)
    m.e = pyo.Constraint(expr=lin((1.0, foreign.u[3]), (2.0, m.x[2])) <= 2)
    same(m)


# ------------------------------------------------------------------ Pyomo's own LP-writer test models
# The models of Pyomo's tests of its LP writer (pyomo/repn/tests/cpxlp/test_cpxlp.py, test_lpv2.py and the
# small*_testCase models of pyomo/repn/tests/ampl), written here again: our writer writes each as Pyomo's does.


def _shuffled(rng, terms):
    """A sum of ``terms`` (variables, or tuples multiplied together) built in a random order, as Pyomo's
    ordering tests build theirs: the file must not depend on the order an expression was written in."""
    terms = list(terms)
    rng.shuffle(terms)
    expr = 0.0
    for term in terms:
        if isinstance(term, tuple):
            factors = list(term)
            rng.shuffle(factors)
            product = 1.0
            for f in factors:
                product *= f
            expr += product
        else:
            expr += term
    return expr


@pytest.mark.parametrize("quadratic", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_pyomo_column_ordering_models(quadratic, seed):
    rng = random.Random(seed)
    m = pyo.ConcreteModel()
    m.a, m.b, m.c = pyo.Var(), pyo.Var(), pyo.Var()
    terms = [m.a, m.b, m.c]
    if quadratic:
        terms += [(m.a, m.a), (m.b, m.b), (m.c, m.c), (m.a, m.b), (m.a, m.c), (m.b, m.c)]
    m.obj = pyo.Objective(expr=_shuffled(rng, terms))
    m.con = pyo.Constraint(expr=_shuffled(rng, terms) <= 1)
    same(m)


@pytest.mark.parametrize("seed", range(5))
def test_pyomo_row_ordering_model(seed):
    """Rows added in a random order: >=, <=, ranged (0, a, 1) and an indexed equality."""
    m = pyo.ConcreteModel()
    m.a = pyo.Var()
    components = {
        "obj": pyo.Objective(expr=m.a),
        "con1": pyo.Constraint(expr=m.a >= 0),
        "con2": pyo.Constraint(expr=m.a <= 1),
        "con3": pyo.Constraint(expr=(0, m.a, 1)),
        "con4": pyo.Constraint([1, 2], rule=lambda _, i: m.a == i),
    }
    order = list(components)
    random.Random(seed).shuffle(order)
    for key in order:
        m.add_component(key, components[key])
    same(m)


def test_pyomo_var_on_deactivated_block():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.other = pyo.Block()
    m.other.a = pyo.Var()
    m.other.deactivate()
    m.c = pyo.Constraint(expr=m.other.a + 2 * m.x <= 0)
    m.obj = pyo.Objective(expr=m.x)
    same(m)


def test_pyomo_deterministic_unordered_sets():
    """An unordered set and an ``Any``-indexed variable give the same file (Pyomo's test_lpv2)."""
    names = ["a", "z", "ooo", "aaaaa"]
    m = pyo.ConcreteModel()
    m.I = pyo.Set(initialize=names, ordered=False)
    m.x = pyo.Var(m.I)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] >= len(i))
    m.o = pyo.Objective(expr=sum(m.x[i] for i in m.I))
    first = same(m)
    m = pyo.ConcreteModel()
    m.x = pyo.Var(pyo.Any, dense=False)
    m.c = pyo.Constraint(pyo.Any)
    for i in names:
        m.c[i] = m.x[i] >= len(i)
    m.o = pyo.Objective(expr=sum(m.x.values()))
    assert same(m) == first


def test_pyomo_suffixes_on_blocks_are_not_written():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.obj = pyo.Objective(expr=m.x)
    m.con = pyo.Constraint(expr=m.x >= 2)
    m.b = pyo.Block()
    m.ignored = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.duals = pyo.Suffix(direction=pyo.Suffix.IMPORT_EXPORT)
    m.b.scaling = pyo.Suffix(direction=pyo.Suffix.EXPORT)
    m.duals[m.con] = 5
    m.b.scaling[m.x] = 7
    same(m)


def test_pyomo_small5_parameters_in_denominators():
    """small5: a quadratic objective with parameters (fixed and mutable) in denominators; its bilinear-times-
    linear rows are not quadratic, so both writers refuse them the same way."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1.0, 1.0), initialize=1.0)
    m.y = pyo.Var(bounds=(-1.0, 1.0), initialize=2.0)
    m.v = pyo.Var(bounds=(-1.0, 1.0), initialize=3.0)
    m.p = pyo.Param(initialize=2.0)
    m.q = pyo.Param(initialize=2.0, mutable=True)
    m.OBJ = pyo.Objective(expr=m.x**2 / m.p + m.x**2 / m.q)
    m.CON1 = pyo.Constraint(expr=1.0 / m.p * m.v + (m.x - m.y) == 2.0)
    m.CON2 = pyo.Constraint(expr=m.v * (m.x - m.y) / m.q == 2.0 * m.q)
    same(m)
    m.CON3 = pyo.Constraint(expr=m.v * (m.x - m.y) * (1.0 / m.p) * m.x == 2.0)
    with pytest.raises(Exception) as pyomos:
        pyomo_lp_text(m)
    with pytest.raises(type(pyomos.value)):
        lp_text(m)
