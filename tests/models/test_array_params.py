"""The mutable parameters made in one pass (``tpm_models.models.array_params``): the same ``Param`` as Pyomo's own
``Param(index, initialize=..., mutable=True, within=Any)``, item for item, through assignment, ``clone()``,
``pickle`` and the ``.lp`` writer."""

import pickle

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.core.base.param import ParamData

from tpm_models import build, solve
from tpm_models.models.array_params import ArrayParam

VALUES = [0.1, 0.25, 0.0, 3.0, 7.5]


def _pair():
    """A model with the same parameters made both ways, and a row and an objective reading each."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(len(VALUES))
    m.ours = ArrayParam(m.I, VALUES, doc="ours")
    m.pyomos = pyo.Param(m.I, initialize=dict(zip(range(1, len(VALUES) + 1), VALUES)), mutable=True,
                         within=pyo.Any, doc="Pyomo's")
    m.x = pyo.Var(m.I, bounds=(0, 10))
    m.row_ours = pyo.Constraint(expr=sum(m.ours[i] * m.x[i] for i in m.I) >= 1)
    m.row_pyomos = pyo.Constraint(expr=sum(m.pyomos[i] * m.x[i] for i in m.I) >= 1)
    m.obj = pyo.Objective(expr=sum(m.x[i] for i in m.I))
    return m


def _items(param):
    return [(index, type(data), data.index(), data.parent_component() is param, data.value)
            for index, data in param.items()]


def test_an_array_param_is_pyomos_mutable_param_item_for_item():
    m = _pair()
    assert isinstance(m.ours, pyo.Param) and m.ours.ctype is pyo.Param
    assert m.ours.mutable and m.ours.domain is m.pyomos.domain and m.ours.is_constructed()
    mine = _items(m.ours)
    assert mine == _items(m.pyomos)
    assert all(row[1] is ParamData and row[3] for row in mine)
    m.ours[3] = 2.0  # mutable: a row holding it reads the new value
    m.pyomos[3] = 2.0
    for i in m.I:
        m.x[i].set_value(float(i))
    assert pyo.value(m.row_ours.body) == pytest.approx(pyo.value(m.row_pyomos.body), rel=0, abs=0)
    assert m.ours.values_given is None  # the list given is let go once the data are made


def test_an_array_param_is_copied_and_written_as_pyomos(tmp_path):
    m = _pair()
    for copy in (m.clone(), pickle.loads(pickle.dumps(m))):
        assert _items(copy.ours) == _items(copy.pyomos)
        assert copy.ours[2] is not m.ours[2] and copy.ours[2].parent_component() is copy.ours
    out = {}
    for name in ("ours", "pyomos"):
        other = "pyomos" if name == "ours" else "ours"
        getattr(m, f"row_{other}").deactivate()
        getattr(m, f"row_{name}").activate()
        path = tmp_path / f"{name}.lp"
        m.write(str(path), io_options={"symbolic_solver_labels": False})
        out[name] = path.read_text()
    assert out["ours"] == out["pyomos"]


def test_equal_values_share_one_float_as_a_number_initialiser_gives():
    """10^6 equal radii held as one float object, as ``initialize=0.02`` gives (24 MB less at 10^6 points); unequal
    ones each their own, the values given."""
    m = pyo.ConcreteModel()
    m.same = ArrayParam(pyo.RangeSet(4), np.full(4, 0.02))
    m.pyomos = pyo.Param(pyo.RangeSet(4), initialize=0.02, mutable=True, within=pyo.Any)
    m.other = ArrayParam(pyo.RangeSet(3), np.array([0.0, 0.5, 2.0]))
    assert len({id(d.value) for d in m.same.values()}) == len({id(d.value) for d in m.pyomos.values()}) == 1
    assert [d.value for d in m.other.values()] == [0.0, 0.5, 2.0]
    assert all(type(d.value) is float for d in m.other.values())


def test_an_array_param_needs_one_value_an_index():
    m = pyo.ConcreteModel()
    with pytest.raises(ValueError, match="2 values for 3 indices"):
        m.p = ArrayParam(pyo.RangeSet(3), [1.0, 2.0])


def test_radii_changed_after_the_build_solve_as_a_build_with_them(rng):
    """(28) on 60 random points: the radii set one by one after the build (``eps[i] = r_i``) give the optimum of the
    model built with those radii (the same model: its rows and objective hold eps[i]), to the solver's 1e-9."""
    X, y = rng.random((60, 4)), np.arange(60) % 3
    radii = rng.uniform(0.0, 0.1, 60)
    changed = build(28, X, y, 1, 0.3, 1.0, eps=0.02)
    for i in changed.eps:
        changed.eps[i] = float(radii[i - 1])
    fresh = build(28, X, y, 1, 0.3, 1.0, eps=radii)
    a, b = solve(changed, "clarabel"), solve(fresh, "clarabel")
    assert a.certified and b.certified
    assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-12)
