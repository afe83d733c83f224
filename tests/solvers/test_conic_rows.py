"""The conic form's rows read in bulk (:mod:`tpm_models.solvers.conic_rows`) against the same rows added one at a
time.

Truth: :func:`conic_form` with the bulk readers switched off (``BATCH_LINEAR_ROWS``, ``BATCH_ATOM_ROWS``: every row
through :meth:`ShapeReader.constraint`, one dictionary and one :class:`DualMap` per row) and the variables' bounds
added by the loop below (the bounds as they were read before the bulk reader). Only the bookkeeping changed, so the
two forms must be *bit-identical*: the same cones, the same :math:`A` (pattern and every number), :math:`b`,
:math:`P`, :math:`q`, the same dual map of every constraint and the same dual values at a random point.
"""

import math

import numpy as np
import pyomo.environ as pyo
import pytest

from tpm_models import build
from tpm_models.experiments.bench_scale import scale_data
from tpm_models.solvers import conic, conic_shapes
from tpm_models.solvers.conic import conic_form

NU, ALPHA, EPS = 0.3, 1.0, 0.02
CASES = [(15, {}), (27, {"eps": EPS}), (28, {"eps": EPS}), (29, {"eps": EPS}), (26, {"p": 1.5, "eps": EPS})] + [
    (23, {"p": p, "eps": EPS}) for p in (1.0, 1.5, 2.0, 3.0, math.inf)]


def bounds_one_by_one(self) -> None:
    """The variables' bounds added column by column, as :meth:`ShapeReader.bounds` did before it read them as arrays."""
    for k, v in enumerate(self.variables):
        lb = None if v.lb is None else float(pyo.value(v.lb))
        ub = None if v.ub is None else float(pyo.value(v.ub))
        if lb is not None and ub is not None and lb == ub:
            self.zero.append(({k: -1.0}, lb))
            continue
        if lb is not None and math.isfinite(lb):
            self.nonneg.append(({k: 1.0}, -lb))
        if ub is not None and math.isfinite(ub):
            self.nonneg.append(({k: -1.0}, ub))


def row_by_row_form(model, monkeypatch):
    with monkeypatch.context() as mp:
        mp.setattr(conic, "BATCH_LINEAR_ROWS", False)
        mp.setattr(conic_shapes, "BATCH_ATOM_ROWS", False)
        mp.setattr(conic_shapes.ShapeReader, "bounds", bounds_one_by_one)
        return conic_form(model)


def assert_identical(bulk, single, rng) -> None:
    assert bulk.cones == single.cones and bulk.variables == single.variables and bulk.n_aux == single.n_aux
    for name in ("indptr", "indices", "data"):
        a, b = getattr(bulk.A, name), getattr(single.A, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert (bulk.P != single.P).nnz == 0 and np.array_equal(bulk.q, single.q) and bulk.q0 == single.q0
    assert np.array_equal(bulk.b, single.b)
    maps = {id(d.constraint): (d.rows, d.cone_start, d.cone_dim) for d in single.dual_maps()}
    assert {id(d.constraint): (d.rows, d.cone_start, d.cone_dim) for d in bulk.dual_maps()} == maps
    x, z = rng.normal(size=bulk.A.shape[1]), rng.normal(size=bulk.A.shape[0])
    got, want = bulk.dual_values(x, z), single.dual_values(x, z)
    assert got.keys() == want.keys()
    assert all(got[c] == want[c] or (math.isnan(got[c]) and math.isnan(want[c])) for c in want)


@pytest.fixture(scope="module")
def points():
    return scale_data(300)


@pytest.mark.parametrize("eq,kw", CASES)
def test_bulk_rows_are_the_rows_read_one_by_one(points, monkeypatch, rng, eq, kw):
    X, y = points
    model = build(eq, X, y, 1, NU, ALPHA, **kw)
    bulk, single = conic_form(model), row_by_row_form(model, monkeypatch)
    if eq != 15:
        assert len(bulk.duals) < len(single.duals)  # the bulk readers took rows
    assert_identical(bulk, single, rng)


def test_bulk_rows_of_every_kind(monkeypatch, rng):
    """Equalities, ranged rows, rows with equal sides, a fixed-by-bounds variable, upper bounds, a second-order cone
    and rows linear in a shared norm on either side, in an interleaved order."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), bounds=(-2, 3))
    m.y = pyo.Var(bounds=(1.5, 1.5))
    m.t = pyo.Var(within=pyo.NonNegativeReals)
    m.u = pyo.Var(bounds=(None, 4))
    m.norm = pyo.Expression(expr=pyo.sqrt(sum(m.x[j] ** 2 for j in range(4)) + 1))
    m.eq = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] == 1)
    m.ranged = pyo.Constraint(expr=pyo.inequality(-1, m.x[2] - m.x[3] + 0.5, 2))
    m.same = pyo.Constraint(expr=pyo.inequality(0.25, m.x[1] + m.u, 0.25))
    m.a1 = pyo.Constraint(expr=m.x[0] + 0.5 * m.norm <= 4)
    m.a2 = pyo.Constraint(expr=m.t - 2 * m.norm + m.x[1] >= -1)
    m.mid = pyo.Constraint(expr=m.x[3] - m.u <= 1)
    m.a3 = pyo.Constraint(expr=3 - m.norm * 0.25 + m.x[2] >= 0)
    m.a4 = pyo.Constraint(expr=m.norm + m.x[0] + m.x[0] <= 6)
    m.cone = pyo.Constraint(expr=m.x[0] ** 2 + m.x[1] ** 2 <= m.t**2)
    m.last = pyo.Constraint(expr=m.y + m.t >= 0)
    m.obj = pyo.Objective(expr=m.t + m.norm - m.u)
    bulk, single = conic_form(model := m), row_by_row_form(model, monkeypatch)
    assert len(bulk.duals) < len(single.duals)
    assert_identical(bulk, single, rng)
