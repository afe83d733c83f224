"""The ``linear-decomposition`` backend: QPs whose dual is a box and one equality (tpm_models.solvers.slack_form).

Truths: PIQP's and Clarabel's optima of the same model (interior points to 1e-9 absolute), the dual (16) evaluated at
the backend's row duals, closed-form rays of unbounded models, and the certificate on the model as written (a wrong
point loaded by the backend must fail it).
"""

import numpy as np
import pyomo.environ as pyo
import pytest
from sklearn.datasets import make_classification

from tpm_models import build
from tpm_models import solvers as S
from tpm_models.models.recovery import FREE_TOL
from tpm_models.solvers import slack_form as slack_form_module
from tpm_models.solvers.backends import registry
from tpm_models.solvers.common import SolverUnavailableError, Termination
from tpm_models.solvers.compare import rel_gap
from tpm_models.solvers.dispatch import solve
from tpm_models.solvers.matrices import NotAQPError
from tpm_models.solvers.program import Program
from tpm_models.solvers.slack_form import slack_form

NAME = "linear-decomposition"
NU, ALPHA = 0.3, 1.0
OBJ_TOL = 1e-7
"""Relative objective agreement: PIQP and Clarabel stop at 1e-9 absolute residuals and gap on objectives of
1e-3 to 1e-1 here; the backend at a KKT gap of 1e-13 (relative to nu kappa)."""
W_TOL = 1e-6
"""w agreement (2-norm, relative to max(1, |w|)): the interior points' points are accurate to about the square root
of their gap in the worst case, 1e-7 to 1e-6 measured."""

pytestmark = pytest.mark.skipif(not S.BACKENDS[NAME].installed(), reason="daqp (the subproblems' solver) is missing")


def _data(m, seed=0):
    X, y = make_classification(n_samples=m, n_features=8, n_informative=5, n_classes=3, random_state=seed)
    return (X - X.min(0)) / (X.max(0) - X.min(0)), y


def _agree(model_of, reference="piqp"):
    ours, ref = solve(model_of(), NAME), solve(model_of(), reference)
    assert ours.optimal and ours.certified and ours.solver == NAME, ours.message
    assert rel_gap(ours.objective, ref.objective) < OBJ_TOL, (ours.objective, ref.objective)
    w, w_ref = ours.values["w"], ref.values["w"]
    assert np.linalg.norm(w - w_ref) <= W_TOL * max(1.0, np.linalg.norm(w_ref))
    return ours, ref


@pytest.mark.parametrize("c", [0, 1, 2])
def test_15_agrees_with_piqp_and_clarabel(wine, c):
    X, y = wine
    ours, _ = _agree(lambda: build(15, X, y, c, NU, ALPHA))
    _agree(lambda: build(15, X, y, c, NU, ALPHA), "clarabel")
    lam = ours.duals["margin"]  # the rows' duals solve (16): feasible, and (16)'s optimum at them
    m_c = int((y == c).sum())
    assert abs(lam.sum() - NU) < 1e-9 and lam.min() >= 0 and lam.max() <= ALPHA / m_c * (1 + 1e-12)
    dual = build(16, X, y, c, NU, ALPHA)
    for i, v in zip(dual.lam.index_set(), lam):
        dual.lam[i].set_value(float(v))
    assert rel_gap(pyo.value(dual.obj), solve(build(16, X, y, c, NU, ALPHA), "piqp").objective) < 1e-7


@pytest.mark.parametrize("key", [2, 3])
def test_binary_primals_agree_with_piqp(key):
    X, y = _data(600)
    ours, ref = _agree(lambda: build(key, X, y, 1, NU, ALPHA))
    assert abs(ours.values["theta"] - ref.values["theta"]) < W_TOL
    sign = 1 if key == 2 else -1  # (3)'s rows are <=: their duals are -lambda
    assert (sign * ours.duals["margin"]).min() >= 0


def _shaped(D=1.0, kappa=1.0, s=1.0, cost=0.01, h=0.3, sense=pyo.minimize, seed=1, m=40, n=3, rhs=0.0, le=False,
            columns=None):
    """min D/2 |w|^2 + g'w + h theta + cost sum(xi) s.t. a_i'w + kappa theta + s xi_i >= rhs, xi >= 0 (written <=
    with every sign flipped when ``le``; maximised as its negation for ``sense=maximize``)."""
    rng = np.random.default_rng(seed)
    A, g = rng.normal(size=(m, n)), rng.normal(size=n)
    if columns is not None:  # badly scaled: the columns of the rows' coefficients scaled apart
        A = A * np.asarray(columns)
    mdl = pyo.ConcreteModel(name="shaped QP")
    mdl.w = pyo.Var(range(n))
    mdl.theta = pyo.Var()
    mdl.xi = pyo.Var(range(m), domain=pyo.NonNegativeReals)
    f = (D / 2 * sum(mdl.w[j] ** 2 for j in range(n)) + sum(g[j] * mdl.w[j] for j in range(n)) + h * mdl.theta
         + cost * sum(mdl.xi[i] for i in range(m)))
    mdl.obj = pyo.Objective(expr=f if sense == pyo.minimize else -f, sense=sense)

    def row(mdl, i):
        body = sum(A[i, j] * mdl.w[j] for j in range(n)) + kappa * mdl.theta + s * mdl.xi[i]
        return -body <= -rhs if le else body >= rhs

    mdl.rows = pyo.Constraint(range(m), rule=row)
    return mdl


@pytest.mark.parametrize("variant", [dict(), dict(D=5.0, kappa=-2.0, s=3.0, cost=0.03, h=-0.5), dict(le=True),
                                     dict(sense=pyo.maximize), dict(D=0.1, cost=0.05, h=1.9)],
                         ids=["unit", "scaled", "le-rows", "maximise", "near-bound"])
def test_a_model_of_the_shape_agrees_with_piqp(variant):
    """Any model of the shape, not only the paper's: scaled Hessian, a negative coefficient of theta, slack
    coefficients, rows written <=, a maximisation (duals in the model's sense), nu near its bound m u."""
    ours, ref = solve(_shaped(**variant), NAME), solve(_shaped(**variant), "piqp")
    assert ours.optimal and ours.certified, ours.message
    assert rel_gap(ours.objective, ref.objective) < OBJ_TOL
    assert np.linalg.norm(ours.values["w"] - ref.values["w"]) <= W_TOL * max(1.0, np.linalg.norm(ref.values["w"]))
    assert np.linalg.norm(ours.duals["rows"] - ref.duals["rows"], np.inf) <= 1e-6


def test_a_badly_scaled_model_of_the_shape_agrees_with_clarabel():
    """Columns of the rows scaled by 1e3, 1 and 1e-3 (and a Hessian of 1e-2): the dual's Gram matrix spans 12 orders
    of magnitude; the backend's point against Clarabel's (which equilibrates): objective within 1e-7 relative, w
    within 1e-6 of its size, and certified."""
    variant = dict(columns=[1e3, 1.0, 1e-3], D=1e-2, cost=0.05)
    ours, ref = solve(_shaped(**variant), NAME), solve(_shaped(**variant), "clarabel")
    assert ours.optimal and ours.certified, ours.message
    assert rel_gap(ours.objective, ref.objective) < OBJ_TOL
    assert np.linalg.norm(ours.values["w"] - ref.values["w"]) <= W_TOL * max(1.0, np.linalg.norm(ref.values["w"]))


@pytest.mark.parametrize("variant, why", [
    (dict(rhs=1.0), "nonzero right-hand side"),
    (dict(D=-1.0), "not convex"),
])
def test_models_off_the_shape_are_refused_before_running(variant, why):
    with pytest.raises(SolverUnavailableError, match=f"{NAME} cannot take the QP 'shaped QP': .*{why}"):
        solve(_shaped(**variant), NAME)


def _edit(change):
    mdl = _shaped()
    change(mdl)
    return mdl


@pytest.mark.parametrize("change, why", [
    (lambda m: setattr(m, "eq", pyo.Constraint(expr=m.theta == 1)), "equality rows"),
    (lambda m: m.xi[3].setub(5.0), "bounds other than"),
    (lambda m: m.w[0].setlb(-1.0), "squares has a bound"),
    (lambda m: setattr(m, "t", pyo.Var()) or m.rows[2].set_value(m.rows[2].body + m.t >= 0), "2 free columns"),
    (lambda m: m.rows[1].set_value(m.rows[1].body - m.theta >= 0), "one coefficient"),
    (lambda m: m.obj.set_value(m.obj.expr + m.w[0] * m.w[1]), "multiplies two different columns"),
    (lambda m: m.obj.set_value(m.obj.expr + m.xi[0]), "costs over their coefficients"),
    (lambda m: m.rows[4].set_value(m.rows[4].body + m.xi[5] >= 0), "two slack|one slack a row"),
])
def test_each_part_of_the_shape_is_named_when_missing(change, why):
    with pytest.raises(SolverUnavailableError, match=f"{NAME} cannot take the QP 'shaped QP': .*({why})"):
        solve(_edit(change), NAME)


def test_other_classes_and_the_paper_duals_are_refused(iris):
    """An LP is not of its classes; (28) with one radius is of the norm shape (tests/solvers/test_norm_form.py),
    (29) is not."""
    X, y = iris
    lp = pyo.ConcreteModel(name="an LP")
    lp.x = pyo.Var(bounds=(0, None))
    lp.obj = pyo.Objective(expr=lp.x)
    with pytest.raises(SolverUnavailableError, match=f"{NAME} cannot take a LP"):
        solve(lp, NAME)
    with pytest.raises(SolverUnavailableError, match=f"{NAME} cannot take the SOCP .*free columns outside the cones"):
        solve(build(29, X, y, 0, NU, ALPHA, eps=0.05), NAME)
    with pytest.raises(SolverUnavailableError, match="multiplies two different columns"):
        solve(build(16, X, y, 0, NU, ALPHA), NAME)


@pytest.mark.parametrize("h", [-0.1, 0.5])
def test_an_unbounded_model_is_reported_unbounded_as_piqp_finds_it(h):
    """nu = h/kappa outside [0, m u] (here m u = 40 * 0.01 = 0.4): no dual point, the ray of the free column with
    the slacks lowers the objective without end (its value along the ray checked here, independently)."""
    r = solve(_shaped(h=h), NAME, raise_on_failure=False)
    assert r.termination is Termination.UNBOUNDED and not r.optimal and r.objective is None
    assert "dual has no point" in r.message
    ref = solve(_shaped(h=h), "piqp", raise_on_failure=False)
    assert ref.termination in (Termination.UNBOUNDED, Termination.INFEASIBLE_OR_UNBOUNDED)
    mdl = _shaped(h=h)
    for i in mdl.xi:
        mdl.xi[i].set_value(0.0)
    for j in mdl.w:
        mdl.w[j].set_value(0.0)
    values = []
    for t in (1.0, 10.0):
        mdl.theta.set_value(-t if h > 0 else t)
        for i in mdl.xi:
            mdl.xi[i].set_value(t if h > 0 else 0.0)
        assert all(pyo.value(c.body) >= -1e-12 for c in mdl.rows.values())
        values.append(pyo.value(mdl.obj))
    assert values[1] < values[0] < 0


def test_a_wrong_point_fails_the_certificate(monkeypatch, wine):
    """The certificate reads the model on its own: a theta off by 0.01 loaded by the backend is not optimal."""
    X, y = wine
    point = slack_form_module.SlackForm.point

    def off(self, lam, scores, v):
        x, rule = point(self, lam, scores, v)
        x[self.theta] += 0.01
        return x, rule

    monkeypatch.setattr(slack_form_module.SlackForm, "point", off)
    r = solve(build(15, X, y, 0, NU, ALPHA), NAME, raise_on_failure=False)
    assert not r.optimal and r.termination is Termination.CERTIFICATE_FAILED, r.message


def test_theta_is_the_mean_over_the_free_rows(wine):
    """Errata 5's rule: theta = -mean of the scores over the free multipliers (kappa = 1 for (15))."""
    X, y = wine
    model = build(15, X, y, 1, NU, ALPHA)
    r = solve(model, NAME)
    lam, w = r.duals["margin"], r.values["w"]
    u = ALPHA / (y == 1).sum()
    free = (lam > FREE_TOL * u) & (lam < u - FREE_TOL * u)
    assert free.any()
    assert abs(r.values["theta"] + (X[y == 1][free] @ w).mean()) < 1e-12


def test_options_are_its_own_and_checked(wine):
    X, y = wine
    loose = solve(build(15, X, y, 0, NU, ALPHA), NAME, options={"tol": 1e-6})
    assert loose.optimal
    bad = solve(build(15, X, y, 0, NU, ALPHA), NAME, options={"no_such_setting": 1}, raise_on_failure=False)
    assert not bad.optimal and "no_such_setting" in bad.message


def test_the_default_takes_it_from_the_measured_size_and_passes_others_on():
    X, y = _data(16000)
    model = build(15, X, y, 0, NU, ALPHA)
    assert registry.model_size(model) >= registry.LARGE_MODEL
    assert solve(model).solver == NAME
    small = build(15, *_data(300), 0, NU, ALPHA)
    assert solve(small).solver == registry.default_solver("QP")
    n = registry.LARGE_MODEL + 10  # a large separable QP with bounds on its squares: not of the shape
    big = pyo.ConcreteModel(name="boxed squares")
    big.x = pyo.Var(range(n), bounds=(0, 1))
    big.obj = pyo.Objective(expr=sum((big.x[i] - 0.5 * (i % 3) + 0.5) ** 2 for i in range(n)))  # targets -0.5, 0, 0.5
    r = solve(big)
    assert r.optimal and r.solver != NAME
    assert rel_gap(r.objective, sum(0.25 for i in range(n) if i % 3 == 0)) < 1e-6  # x = 0 where the target is -0.5


def test_the_shape_is_read_from_the_program_without_building_matrices(wine):
    """The refusal of a QP off the shape costs the program's reading only (which PIQP's matrices reuse)."""
    X, y = wine
    program = Program(build(16, X, y, 0, NU, ALPHA))
    with pytest.raises(NotAQPError):
        slack_form(program)
    assert "rows" not in vars(program)  # the objective refused it before the rows were read
