"""The ``working-set`` backend: the margin rows of a conic form (tpm_models.solvers.margin_rows) solved by Clarabel on
a working set of them (tpm_models.solvers.backends.working_set).

Truths: Clarabel's optimum of the same model on the whole form (its pipeline polishes to KKT residuals of 1e-12 and
below), the duals it returns for every constraint, the model's own variables (which columns are the slacks), and the
certificate on the model as written. The method's sizes are set small (a start of 150 rows, rounds from 300 margin
rows) so that rounds run on a data set of 3,000 points, a second each.
"""

import numpy as np
import pyomo.environ as pyo
import pytest
from sklearn.datasets import make_classification

from tpm_models import build
from tpm_models import solvers as S
from tpm_models.solvers.backends.registry import default_candidates
from tpm_models.solvers.backends.working_set import WorkingSetSettings
from tpm_models.solvers.clarabel_runs import pipeline_solve
from tpm_models.solvers.common import SolverUnavailableError
from tpm_models.solvers.compare import objective_scale, rel_gap
from tpm_models.solvers.conic import conic_program
from tpm_models.solvers.dispatch import solve
from tpm_models.solvers.margin_rows import margin_rows
from tpm_models.solvers.program import Program
from tpm_models.solvers.reductions import ConicSolution

NAME = "working-set"
NU, ALPHA, EPS = 0.3, 1.0, 0.02
SMALL = WorkingSetSettings(start=150, whole_below=300)
OBJ_TOL = 1e-7
"""Relative objective agreement with Clarabel (the issue's; measured 1e-11 and below at 10^5 points)."""
W_TOL = 1e-6
"""w agreement (2-norm, relative to max(1, |w|)) with Clarabel's polished point: both are polished KKT points of a
strictly convex objective in w (measured 4e-14 at 10^5 points); 1e-6 leaves room for a point polished from a
different active set."""
DUAL_TOL = 1e-6
"""Each constraint's dual against Clarabel's, where the multipliers are unique (the margin rows of (15)'s shape with
few points on the margin; measured 1e-12 and below)."""

MODELS = [(23, {"p": 1.5}), (23, {"p": 3}), (26, {"p": 1.5}), (27, {}), (28, {}), (29, {}), (15, {}),
          (23, {"p": 2})]

pytestmark = pytest.mark.skipif(not S.BACKENDS[NAME].installed(), reason="clarabel (the rounds' solver) is missing")


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=3000, n_features=8, n_informative=5, n_classes=3, random_state=0)
    return (X - X.min(0)) / (X.max(0) - X.min(0)), y


def _model(key, X, y, kw, eps=EPS):
    return build(key, X, y, 1, NU, ALPHA, **({} if key == 15 else {"eps": eps}), **kw)


def _agree(key, X, y, kw, eps=EPS, settings=SMALL):
    model = _model(key, X, y, kw, eps)
    ours = solve(model, NAME, options={"working_set": settings})
    ref = solve(_model(key, X, y, kw, eps), "clarabel")
    assert ours.optimal and ours.certified and ours.solver == NAME, ours.message
    _close(model, ours, ref)
    return ours, ref


def _close(model, ours, ref):
    """``ours`` (a solve of ``model``) and Clarabel's ``ref``: objectives to :data:`OBJ_TOL`, w to :data:`W_TOL`."""
    scale = max(objective_scale(model), 1e-3)  # at w = 0 every term is 0 (about 1e-17 here): judged at 1e-3
    assert rel_gap(ours.objective, ref.objective, scale) < OBJ_TOL, (ours.objective, ref.objective)
    w, w_ref = ours.values["w"], ref.values["w"]
    assert np.linalg.norm(w - w_ref) <= W_TOL * max(1.0, np.linalg.norm(w_ref)), (w, w_ref)


@pytest.mark.parametrize("key, kw", MODELS)
def test_agrees_with_clarabel_and_is_certified(data, key, kw):
    X, y = data
    ours, _ = _agree(key, X, y, kw)
    assert "rounds, the last on" in ours.message and "given up" not in ours.message, ours.message


@pytest.mark.parametrize("key, kw", [(27, {}), (28, {}), (15, {})])
def test_the_margin_rows_duals_are_clarabels(data, key, kw):
    """The multipliers put back (0 for a loose row, u for a violated one, the working set's as solved) are the
    whole form's: Clarabel's on every constraint."""
    X, y = data
    ours, ref = _agree(key, X, y, kw)
    for name, dual in ref.duals.items():
        assert np.max(np.abs(np.asarray(ours.duals[name]) - dual)) < DUAL_TOL, name


def test_per_point_radii(data):
    """Radii of their own are margin rows all the same (linear-decomposition refuses them)."""
    X, y = data
    eps = np.random.default_rng(1).uniform(0, 3 * EPS, len(y))
    for key, kw in [(23, {"p": 1.5}), (28, {}), (27, {})]:
        _agree(key, X, y, kw, eps)


def test_the_degenerate_plane_doubles_the_working_set(data):
    """At a radius where the robust plane is w = 0 every score is one number; the start's working set carries the
    multipliers' mass, and a form on too few rows (unbounded) is solved again on twice as many."""
    X, y = data
    w15 = solve(_model(15, X, y, {}), "clarabel").values["w"]
    eps = 1.5 * np.linalg.norm(w15) / (2 * NU)
    ours, _ = _agree(23, X, y, {"p": 3}, eps)
    assert np.linalg.norm(ours.values["w"]) < 1e-9
    tiny = WorkingSetSettings(start=20, whole_below=30)  # 20 rows cannot carry nu: the form on them is unbounded
    ours, _ = _agree(28, X, y, {}, eps, tiny)


def test_below_whole_below_the_whole_form_is_clarabels(data):
    X, y = data
    ours, _ = _agree(27, X, y, {}, settings=WorkingSetSettings())
    m = int((y == 1).sum())
    assert ours.message.startswith(f"working set: {m} margin rows, fewer than 8000; Clarabel on the whole form")


def test_the_margin_rows_are_the_slacks(data):
    """The slack columns recognised are the model's xi, one for each own point; every other column is the core."""
    X, y = data
    model = _model(27, X, y, {})
    form = conic_program(Program(model))
    rows = margin_rows(form)
    names = [form.variables[j].parent_component().name for j in rows.slack]
    assert set(names) == {"xi"} and len(names) == int((y == 1).sum())
    assert "xi" not in {form.variables[j].parent_component().name for j in rows.core if j < len(form.variables)}


def test_reduced_on_every_row_is_the_form_and_whole_its_inverse(data):
    """With every row in the working set the reduced form is the form itself (structure exactly), and ``whole`` maps
    Clarabel's solution of it back to itself (slacks recomputed: to 1e-9, Clarabel's feasibility)."""
    X, y = data
    form = conic_program(Program(_model(28, X, y, {})))
    rows = margin_rows(form)
    every, none = np.arange(len(rows.rows)), np.arange(0)
    program = rows.reduced(every, none)
    order = np.concatenate([rows.core, rows.slack])
    assert (program.A != form.A[:, order]).nnz == 0 and np.array_equal(program.b, form.b)
    assert np.array_equal(program.q, form.q[order]) and program.cones == form.cones
    run = pipeline_solve(program)
    back = rows.whole(ConicSolution(run.x, run.s, run.z), every, none)
    assert np.abs(back.x[order] - run.x).max() < 1e-9
    assert np.abs(back.z - run.z).max() < 1e-9


@pytest.mark.parametrize("key, kw", [(28, {}), (23, {"p": 1.5})])
def test_a_row_the_user_adds_on_w_is_honoured(data, key, kw):
    """A constraint written beside the builder's (|w_j| at most half of its unconstrained optimum, j the largest) is a
    row of the core, kept in every round: the optimum moves onto it, as Clarabel's on the whole form does."""
    X, y = data

    def capped():
        model = _model(key, X, y, kw)
        j = int(np.argmax(np.abs(free)))
        model.cap = pyo.Constraint(expr=pyo.inequality(-cap, model.w[list(model.w)[j]], cap))
        return model, j

    free = solve(_model(key, X, y, kw), "clarabel").values["w"]
    cap = 0.5 * float(np.max(np.abs(free)))
    model, j = capped()
    ours = solve(model, NAME, options={"working_set": SMALL})
    ref = solve(capped()[0], "clarabel")
    assert ours.optimal and ours.certified and ours.solver == NAME, ours.message
    assert "rounds, the last on" in ours.message, ours.message  # the rounds ran, not the whole form
    assert abs(abs(ours.values["w"][j]) - cap) <= 1e-9 * max(1.0, cap)  # on the row (Clarabel's feasibility, 1e-9)
    _close(model, ours, ref)


def test_a_model_without_margin_rows_is_refused_by_name():
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1])
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] >= 1)
    m.obj = pyo.Objective(expr=m.x[0] ** 2 + m.x[1] ** 2)
    with pytest.raises(SolverUnavailableError, match="no margin rows"):
        solve(m, NAME)


def test_an_infeasible_core_is_infeasible():
    """The margin rows can always hold (by their slacks): an infeasible model is so by its other rows, which every
    round keeps; Clarabel on the whole form says so."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 9)
    m.w = pyo.Var()
    m.xi = pyo.Var(m.I, bounds=(0, None))
    m.margin = pyo.Constraint(m.I, rule=lambda m, i: m.w * (i + 1) + m.xi[i] >= 1)
    m.no = pyo.Constraint(expr=m.w ** 2 <= -1)
    m.obj = pyo.Objective(expr=m.w ** 2 + sum(m.xi.values()))
    result = solve(m, NAME, raise_on_failure=False)
    assert not result.optimal


def test_the_default_at_scale_after_linear_decomposition():
    assert default_candidates("SOCP", 10_000)[:3] == ("linear-decomposition", "working-set", "clarabel")
    assert default_candidates("NLP", 10_000)[:3] == ("linear-decomposition", "working-set", "clarabel")
    assert "working-set" not in default_candidates("SOCP", 100)[:2]
    assert default_candidates("QP", 100_000)[:3] == ("linear-decomposition", "working-set", "clarabel")
    assert default_candidates("QP", 10_000)[:2] == ("linear-decomposition", "piqp")


def test_unknown_settings_are_refused(data):
    X, y = data
    result = solve(_model(27, X, y, {}), NAME, options={"working_set": {"start": 10}}, raise_on_failure=False)
    assert not result.optimal and "must be a WorkingSetSettings, not dict" in result.message


@pytest.mark.parametrize("eq, m", [(27, 50_000), (28, 100_000)])
def test_an_optimum_w_0_with_multipliers_not_unique_is_certified(eq, m):
    """tests/solvers/test_clarabel.py's case of the scale benchmark's data at eps = 0 (w = 0, every margin row
    active, the multipliers not unique), by the default, which is this backend at this size: certified, w within
    1e-7 of 0."""
    from benchmarks.bench_scale import scale_data

    X, y = scale_data(m)
    result = solve(build(eq, X, y, 0, 0.1, 1.0, eps=0.0), raise_on_failure=False)
    assert result.solver == NAME and result.certified, result.message
    assert np.abs(np.asarray(result.values["w"], dtype=float)).max() <= 1e-7


def test_a_time_limit_is_honoured(data):
    """A microsecond ends as a time limit (no point claimed); ten seconds solve the rounds as without one."""
    X, y = data
    r = solve(_model(27, X, y, {}), NAME, time_limit=1e-6, options={"working_set": SMALL}, raise_on_failure=False)
    assert r.termination is S.Termination.TIME_LIMIT and r.objective is None, (r.termination, r.message)
    ours = solve(_model(27, X, y, {}), NAME, time_limit=10, options={"working_set": SMALL})
    assert ours.certified and "rounds, the last on" in ours.message


def test_a_point_not_certified_goes_to_clarabel_on_the_whole_form(data):
    """A side tolerance so loose that rows on the wrong side are taken as on theirs: the point put back is not the
    optimum, the certificate inside the backend says so, and Clarabel solves the whole form (the message says why)."""
    X, y = data
    loose = WorkingSetSettings(start=150, whole_below=300, side_tol=1e3)
    model = _model(28, X, y, {})
    ours = solve(model, NAME, options={"working_set": loose})
    assert "given up: its point is not certified" in ours.message and "Clarabel on the whole form" in ours.message
    ref = solve(_model(28, X, y, {}), "clarabel")
    assert ours.certified and rel_gap(ours.objective, ref.objective, objective_scale(model)) < OBJ_TOL


def test_the_degenerate_optimum_at_eps_0_by_the_default_is_certified():
    """tests/solvers/test_polish.py's case (10^5 points, class 2, nu = 0.1, eps = 0: (28) with 25,040 rows active at
    the optimum) by the default, this backend at this size: certified (by its own point or by Clarabel's on the whole
    form, after the certificate refused its own), the optimum of (23) at p = 1 by PIQP to the certificate's floor."""
    from benchmarks.bench_scale import scale_data

    X, y = scale_data(100_000)
    reference = solve(build(23, X, y, 2, 0.1, 1.0, p=1.0, eps=0.0), "piqp")
    result = solve(build(28, X, y, 2, 0.1, 1.0, eps=0.0), raise_on_failure=False)
    assert result.solver == NAME and result.certified, result.message
    assert abs(result.objective - reference.objective) <= 1e-12
