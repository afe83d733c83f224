"""The conic form's rows read in bulk (:class:`tpm_models.solvers.conic.FormRows`), and the certificate's rows linear in
shared nodes read in bulk (:func:`tpm_models.certify.gradients.atom_rows_gradient`), against the same rows read one at
a time.

Truth: :func:`conic_form` with the bulk readers switched off (``batched=False``: every row added by itself, through
:meth:`ShapeReader.constraint` or one dictionary of its linear row, one :class:`DualMap` per row; ``Program(model,
bulk=False)``: every row read by walking its expression, not from the builder's record) and the variables' bounds
added by the loop below (the bounds as they were read before the bulk reader). Only the bookkeeping changed, so the
two forms must be *bit-identical*: the same cones, the same :math:`A` (pattern and every number), :math:`b`,
:math:`P`, :math:`q`, the same dual map of every constraint and the same dual values at a random point.
"""

import math

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp
from user_edits import add_row, clone, deactivate, delete_one_row, fix, fix_row_variable, set_value

from benchmarks.bench_scale import scale_data
from tpm_models import build
from tpm_models.certify import reading as certificate_reading
from tpm_models.certify.certificate import certify
from tpm_models.certify.gradients import atom_gradient
from tpm_models.solvers import conic
from tpm_models.solvers.backends.clarabel import run_clarabel
from tpm_models.solvers.conic import conic_form
from tpm_models.solvers.program import Program

NU, ALPHA, EPS = 0.3, 1.0, 0.02
CASES = [(15, {}), (27, {"eps": EPS}), (28, {"eps": EPS}), (29, {"eps": EPS}), (26, {"p": 1.5, "eps": EPS})] + [
    (23, {"p": p, "eps": EPS}) for p in (1.0, 1.5, 2.0, 3.0, math.inf)]


def bounds_one_by_one(self) -> None:
    """The variables' bounds added column by column, as :meth:`FormRows.bounds` did before it read them as arrays."""
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
        mp.setattr(conic.FormRows, "bounds", bounds_one_by_one)
        # every row read by walking its expression (no record), and added to the form by itself
        return conic_form(model, Program(model, bulk=False), batched=False)


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


def atom_rows_one_by_one(reads, x, col, memo, n, apexes=None):
    """:func:`atom_rows_gradient` read row by row by :func:`atom_gradient` (how the certificate read them before; a
    norm at zero stays a kink: none of these points is at one)."""
    values, status, ri, ci, data = np.zeros(len(reads)), np.zeros(len(reads), dtype=np.int8), [], [], []
    for i, read in enumerate(reads):
        got = atom_gradient(read, x, col, memo)
        if got is False or got is None:
            status[i] = 1 if got is False else 2
            continue
        values[i] = got[0]
        ri += [i] * len(got[1])
        ci += got[1]
        data += got[2]
    return values, sp.csr_matrix((data, (ri, ci)), shape=(len(reads), n)), status


CERTIFIED = [(23, {"p": 2.0, "eps": EPS}), (23, {"p": 2.0, "eps": 0.0}), (26, {"p": 2.0, "eps": EPS}),
             (23, {"p": 1.5, "eps": EPS}), (23, {"p": 3.0, "eps": EPS}), (28, {"eps": EPS}), (29, {"eps": EPS})]


@pytest.mark.parametrize("eq,kw", CERTIFIED)
def test_certificate_reads_atom_rows_in_bulk_as_one_by_one(points, monkeypatch, eq, kw):
    """The certificate's rows linear in shared nodes read in bulk give the residuals and the verdict of the same rows
    read one at a time, at Clarabel's optimum and at a point moved off it (not optimal: the same failure). A row's
    value and gradient may be summed in another order (a few units in the last place of its terms), so the scaled
    residuals (already relative to the rows' and the objective's sizes) agree to 1e-14 absolute, far below the
    thresholds that judge them (``KKT_TOL``, ``FEASIBILITY_TOL``), and the objective to 1e-12 relative."""
    X, y = points
    model = build(eq, X, y, 1, NU, ALPHA, **kw)
    _, duals, _ = run_clarabel(model, None)  # the point loaded in the model, the duals by constraint
    for shift in (0.0, 1e-3):
        for v in model.w.values():
            v.set_value(v.value + shift)
        bulk = certify(model, duals, True)
        with monkeypatch.context() as mp:
            mp.setattr(certificate_reading, "row_blocks", lambda model: [])  # walked, not read from the record
            mp.setattr(certificate_reading, "atom_rows_gradient", atom_rows_one_by_one)
            single = certify(model, duals, True)
        assert (bulk.level, bulk.why) == (single.level, single.why)
        if single.primal > 1e-12:  # below, the worst row is a tie of rounding errors
            assert bulk.worst_row == single.worst_row
        for name in ("primal", "stationarity", "complementarity", "dual_sign", "absolute"):
            a, b = getattr(bulk, name), getattr(single, name)
            assert (a is None and b is None) or abs(a - b) <= 1e-14, name
        assert (bulk.objective is None and single.objective is None) or \
            bulk.objective == pytest.approx(single.objective, rel=1e-12)
    assert single.level == "failed"


def _eps(model):
    for k, i in enumerate(list(model.margin)[:7]):
        model.eps[i] = 0.05 * (k + 1)


ATOM_CHANGES = [None, _eps, set_value, deactivate, fix, fix_row_variable, delete_one_row, add_row, clone]


@pytest.mark.parametrize("change", ATOM_CHANGES, ids=[c.__name__ if c else "as-built" for c in ATOM_CHANGES])
def test_a_block_of_atom_rows_is_its_rows_walked(points, monkeypatch, rng, change):
    """(23) at p = 2: the margin rows ``x_i'w + theta - eps_i * norm_w + xi_i >= 0``, recorded by the builder, enter
    the conic form as one block of arrays (``FormRows.atom_block``) and the certificate as one Jacobian
    (``gradients.atom_block_gradient``), as built and after each kind of user change (then the record holds, or the
    rows are walked). Truths: the form of every row walked and added one at a time (bit-identical), and the
    certificate of every row walked and differentiated one at a time (residuals to 1e-14, as above)."""
    X, y = points
    model = build(23, X[:120], y[:120], 1, NU, ALPHA, p=2.0, eps=EPS)
    if change is not None:
        model = change(model) or model
    assert_identical(conic_form(model), row_by_row_form(model, monkeypatch), rng)
    _, duals, _ = run_clarabel(model, None)
    bulk = certify(model, duals, True)
    with monkeypatch.context() as mp:
        mp.setattr(certificate_reading, "row_blocks", lambda model: [])
        mp.setattr(certificate_reading, "atom_rows_gradient", atom_rows_one_by_one)
        single = certify(model, duals, True)
    assert (bulk.level, bulk.why) == (single.level, single.why) and bulk.level == "kkt"
    for name in ("primal", "stationarity", "complementarity", "dual_sign", "absolute"):
        assert abs(getattr(bulk, name) - getattr(single, name)) <= 1e-14, name
    assert bulk.objective == pytest.approx(single.objective, rel=1e-12)


def test_an_atom_block_is_read_in_one_pass(points, monkeypatch):
    """The block is taken as one (not row by row) on the model as built, and not after a change that breaks its
    record (then its rows are walked and added one at a time)."""
    X, y = points
    taken = []
    original = conic.FormRows.atom_block

    def counting(self, block):
        out = original(self, block)
        taken.append((len(block.constraints), out))
        return out

    monkeypatch.setattr(conic.FormRows, "atom_block", counting)
    model = build(23, X[:120], y[:120], 1, NU, ALPHA, p=2.0, eps=EPS)
    conic_form(model)
    assert taken == [(len(model.margin), True)]
    taken.clear()
    set_value(model)
    conic_form(model)
    assert taken == []


def test_a_cone_rows_dual_is_its_blocks_projection(points, rng):
    """``ConicForm.dual_values`` of a quadratic row (its cone block's contribution ``A_b'z_b`` projected on the row's
    gradient, ``cones.py``) against the block's rows sliced out of ``A`` (as it was read before), at a random point,
    on (29)'s cone rows."""
    X, y = points
    form = conic_form(build(29, X, y, 1, NU, ALPHA, eps=EPS))
    x, z = rng.normal(size=form.A.shape[1]), rng.normal(size=form.A.shape[0])
    got = form.dual_values(x, z)
    cones = [d for d in form.duals if d.cone_start is not None]
    assert cones
    for d in cones:
        block = slice(d.cone_start, d.cone_start + d.cone_dim)
        contribution = form.A[block, :].T @ z[block]
        grad = np.zeros(len(x))
        for (i, j), a in d.quad.items():
            grad[i] += a * x[j]
            grad[j] += a * x[i]
        for j, a in d.lin.items():
            grad[j] += a
        want = form.sense * -d.orient * float(contribution @ grad) / float(grad @ grad)
        assert got[d.constraint] == pytest.approx(want, rel=1e-14)


def test_an_atom_blocks_jacobian_leaves_its_arrays_alone():
    """``AtomBlock.linear`` sums a repeated column and sorts the columns of a row without touching the block's arrays
    (they may be a builder's record, read again at the next solve)."""
    from tpm_models.solvers.rows import AtomBlock

    indptr = np.array([0, 3, 5])
    cols = np.array([2, 0, 2, 1, 0], dtype=np.int64)
    coefs = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    block = AtomBlock(0, [None, None], indptr, cols, coefs, np.array([-1.0, -2.0]), None, np.zeros(2),
                      np.full(2, np.inf))
    L = block.linear(3)
    assert L.toarray().tolist() == [[2.0, 0.0, 4.0], [5.0, 4.0, 0.0]]
    assert cols.tolist() == [2, 0, 2, 1, 0] and coefs.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert indptr.tolist() == [0, 3, 5]
