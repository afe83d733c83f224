"""The names an ``.lp``/``.mps`` write checks for collisions (``tpm_models.export.names.data_names``), made one indexed
component at a time, against Pyomo's own ``ComponentData.getname(True)`` of every datum ``component_data_objects``
yields: the same names, in the same order, on the paper's models and on a model written to hold every naming case
(blocks, indexed blocks, tuple and string indices with blanks and punctuation, a deactivated row, a deactivated
block, a ``Reference``)."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

from tpm_models import build
from tpm_models.export.names import data_names, same_names


def pyomo_names(model: pyo.ConcreteModel, kind: type) -> list[str]:
    return [d.getname(True) for d in model.component_data_objects(kind, active=True, descend_into=True)]


def naming_cases() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, "a b", -1, 2.5, "p(3)"])
    m.pair = pyo.Var([("p", 3), ("q r", -2)])
    m.z = pyo.Var()
    m.c = pyo.Constraint([1, 2, 3], rule=lambda m, i: m.x[1] + m.z >= i)
    m.c[2].deactivate()
    m.s = pyo.Constraint(expr=m.z <= 4)
    m.b = pyo.Block()
    m.b.y = pyo.Var(["u-v", "w.x"])
    m.b.r = pyo.Constraint(expr=m.b.y["u-v"] >= 0)
    m.bb = pyo.Block([0, "k"])
    for blk in m.bb.values():
        blk.t = pyo.Var([("a", 1), ("b", 2)])
        blk.e = pyo.Constraint(expr=blk.t[("a", 1)] <= 1)
    m.off = pyo.Block()
    m.off.q = pyo.Var()
    m.off.g = pyo.Constraint(expr=m.off.q >= 0)
    m.off.deactivate()
    m.ref = pyo.Reference(m.x)  # data met before: skipped, as Pyomo skips them
    m.ref_off = pyo.Reference(m.off.q)  # data of a deactivated block, reached only through the reference
    m.o = pyo.Objective(expr=m.z)
    return m


@pytest.mark.parametrize("kind", [pyo.Var, pyo.Constraint])
def test_names_are_pyomos_on_every_naming_case(kind):
    m = naming_cases()
    assert list(data_names(m, kind)) == pyomo_names(m, kind)


@pytest.mark.parametrize("eq,kw", [(15, {}), (23, {"p": 2.0, "eps": 0.02}), (28, {"eps": 0.02})])
def test_names_are_pyomos_on_the_paper_models(eq, kw):
    rng = np.random.default_rng(0)
    X, y = rng.random((30, 3)), np.repeat([0, 1, 2], 10)
    model = build(eq, X, y, 1, 0.3, 1.0, **kw)
    for kind in (pyo.Var, pyo.Constraint):
        assert list(data_names(model, kind)) == pyomo_names(model, kind)


def test_colliding_names_are_found_in_both_formats():
    m = pyo.ConcreteModel()
    m.v = pyo.Var(["a b", "a_b", "ok"])
    m.o = pyo.Objective(expr=sum(m.v.values()))
    assert same_names(m, "lp") == [("v[a b]", "v[a_b]")]
    assert same_names(m, "mps") == [("v[a b]", "v[a_b]")]
    assert same_names(naming_cases(), "lp") == []
