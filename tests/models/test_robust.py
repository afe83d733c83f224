"""The robust family (21)-(29) against independent truths: the equations in numpy, the
deterministic model, the semi-infinite model solved by cutting planes and by PyROS, and
every capable solver."""

import math

import numpy as np
import pyomo.environ as pyo
import pytest
from conftest import ran_in_fresh_process

from tpm_models import Kernel, build, solve
from tpm_models import solvers as S
from tpm_models.checks.robust import check_oracle, rel_gap
from tpm_models.checks.semi_infinite import solve_22_cutting_plane, solve_22_pyros
from tpm_models.checks.verify import pyros_subsolver
from tpm_models.learn.estimators import RobustTPMSVMOneVsAll, TPMSVMOneVsAll
from tpm_models.models.norms import check_p, check_radii, conjugate, dual_norm, worst_case_delta
from tpm_models.models.semi_infinite import semi_infinite_objective
from tpm_models.solvers.common import SolverUnavailableError
from tpm_models.solvers.compare import objective_scale

NU, ALPHA, EPS = 0.3, 1.0, 0.02
TOL = 1e-6  # objectives, relative to the sum of |terms| (robust_checks docstring)


# ---------------------------------------------------------------- (21), (25)


@pytest.mark.parametrize("p,q", [(1, math.inf), (2, 2), (math.inf, 1), (3, 1.5), (1.5, 3), ("inf", 1)])
def test_conjugate(p, q):
    assert conjugate(p) == pytest.approx(q)


def test_worst_case_delta_closed_forms():
    w = np.array([0.5, -2.0, 1.0])
    np.testing.assert_array_equal(worst_case_delta(w, 1, 0.1), [0, -0.1, 0])  # vertex of the l1 ball
    np.testing.assert_array_equal(worst_case_delta(w, math.inf, 0.1), [0.1, -0.1, 0.1])  # corner of the box
    np.testing.assert_allclose(worst_case_delta(w, 2, 0.1), 0.1 * w / np.linalg.norm(w))
    np.testing.assert_array_equal(worst_case_delta(np.zeros(3), 2, 0.1), [0.1, 0, 0])
    np.testing.assert_array_equal(worst_case_delta(np.array([1.0, -1.0]), 1, 0.2), [0.2, 0])  # tie: first


def test_oracle_attains_the_dual_norm_and_no_sample_beats_it():
    results = check_oracle()
    assert len(results) == 45 and all(r.passed for r in results)


@pytest.mark.parametrize("bad", [0.5, 0, -1, float("nan"), "abc", True])
def test_bad_p(bad):
    with pytest.raises(ValueError, match="p must be"):
        check_p(bad)


def test_bad_radii():
    with pytest.raises(ValueError, match=">= 0"):
        check_radii(-0.1, 3)
    with pytest.raises(ValueError, match="one radius per point"):
        check_radii(np.ones(4), 3)
    with pytest.raises(ValueError, match="finite"):
        check_radii(np.array([0.1, np.inf, 0.1]), 3)
    np.testing.assert_array_equal(check_radii(0.2, 2), [0.2, 0.2])


# ---------------------------------------------------------------- builders = equations


def _random_point(model, rng):
    for v in model.component_data_objects(pyo.Var):
        v.set_value(float(rng.random() + 0.1), skip_validation=True)


@pytest.mark.parametrize("eq,p", [(23, 2), (23, 1), (23, math.inf), (23, 3), (27, 1), (28, 2), (29, math.inf),
                                  (26, 3), (26, 1), (26, math.inf)])
def test_robust_objective_and_rows_are_the_equation(rng, eq, p):
    X = rng.random((12, 3))
    y = np.arange(12) % 3
    eps = rng.random(12) * 0.1
    model = build(eq, X, y, 1, NU, ALPHA, p=p, eps=eps)
    _random_point(model, rng)
    w = np.array([model.w[j].value for j in model.J])
    theta = model.theta.value
    xi = np.array([model.xi[i].value for i in model.X_c])
    own, other = y == 1, y != 1
    if eq == 23:
        # p != 2: norm_w is an epigraph (a variable, or sum_j abs_w[j]) equal to |w|_p' at the optimum
        nrm = dual_norm(w, p) if p == 2 else pyo.value(model.norm_w)
        quad = 0.5 * w @ w
    else:
        nrm = {27: lambda: model.s.value, 28: lambda: model.t.value,
               29: lambda: sum(model.s[j].value for j in model.J), 26: lambda: model.r.value}[eq]()
        quad = 0.5 * (model.u.value - model.v.value)
    # (23)/(26)-(29): quad + nu/m_-c sum (x_i'w + eps_i N) + nu theta + alpha/m_c sum xi
    expected = (quad + NU / other.sum() * (X[other] @ w + eps[other] * nrm).sum() + NU * theta
                + ALPHA / own.sum() * xi.sum())
    assert pyo.value(model.obj) == pytest.approx(expected, rel=1e-12)
    rows = np.array([pyo.value(model.margin[i].body) for i in model.margin])
    np.testing.assert_allclose(rows, X[own] @ w + theta - eps[own] * nrm + xi, rtol=1e-12)
    if eq != 23:
        assert pyo.value(model.cone_t.body) == pytest.approx(w @ w - model.t.value**2)
        assert pyo.value(model.cone_u.body) == pytest.approx(model.t.value**2 + model.v.value**2 - model.u.value**2)


def test_model_classes_and_an_incapable_solver(iris):
    X, y = iris
    assert S.model_class(build(28, X, y, 0, NU, ALPHA, p=2, eps=EPS)) == "SOCP"
    assert S.model_class(build(26, X, y, 0, NU, ALPHA, p=2, eps=EPS)) == "SOCP"
    assert S.model_class(build(26, X, y, 0, NU, ALPHA, p=3, eps=EPS)) == "NLP"
    with pytest.raises(SolverUnavailableError, match="highs cannot take a SOCP.*ipopt"):
        solve(build(28, X, y, 0, NU, ALPHA, p=2, eps=EPS), "highs")


@pytest.mark.parametrize("eq,p,message", [(27, 2, "takes p in"), (28, 1, "takes p in"), (29, 2, "takes p in"),
                                          (23, None, "needs p"), (15, 2, "not a robust model")])
def test_p_validation(iris, eq, p, message):
    X, y = iris
    with pytest.raises(ValueError, match=message):
        build(eq, X, y, 0, NU, ALPHA, p=p, eps=EPS if eq != 15 else None)


# ---------------------------------------------------------------- ties


def test_23_at_eps_zero_is_15(iris):
    X, y = iris
    for c in (0, 1, 2):
        m23 = build(23, X, y, c, NU, ALPHA, p=2, eps=0.0)
        r23 = solve(m23, "scip")
        r15 = solve(build(15, X, y, c, NU, ALPHA), "piqp")
        assert rel_gap(r23.objective, r15.objective, objective_scale(m23)) < TOL


@pytest.fixture(scope="module")
def iris_sub(iris):
    X, y = iris
    keep = np.r_[0:15, 50:65, 100:115]
    return X[keep], y[keep]


@pytest.mark.parametrize("eq,p", [(27, 1.0), (28, 2.0), (29, math.inf), (26, 3.0), (26, 1.5)])
def test_theorem_1_cutting_planes_equal_the_counterpart(iris_sub, eq, p):
    """(22) solved by cutting planes (QP masters, (25) oracle) = the SOCP/NLP counterpart."""
    X, y = iris_sub
    for c in (0, 2):
        model = build(eq, X, y, c, NU, ALPHA, p=p, eps=EPS)
        r = solve(model, "ipopt")
        cp = solve_22_cutting_plane(X, y, c, NU, ALPHA, p, EPS)
        assert cp.max_violation <= 1e-11 and cp.lower_bound <= cp.objective + 1e-12
        assert rel_gap(cp.objective, r.objective, objective_scale(model)) < TOL
        np.testing.assert_allclose(r.values["w"], cp.w, atol=1e-5)
        # the counterpart's optimum, evaluated as the semi-infinite objective, is the same number
        assert semi_infinite_objective(X, y, c, NU, ALPHA, p, EPS, r.values["w"], r.values["theta"]) == \
            pytest.approx(r.objective, abs=1e-8)


@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_theorem_1_pyros_equals_the_counterpart(p):
    if "gurobi" not in S.available_solvers():
        pytest.skip("PyROS here uses Gurobi as subsolver (pip install gurobipy)")
    from tpm_models import load_dataset, min_max_scale

    d = load_dataset("iris")
    X = min_max_scale(d.X)
    keep = np.r_[0:6, 50:56, 100:106]
    Xs, ys = X[keep], d.y[keep]
    model = build(23, Xs, ys, 1, NU, ALPHA, p=p, eps=EPS)
    r23 = solve(model, "scip")
    pr = solve_22_pyros(Xs, ys, 1, NU, ALPHA, p, EPS)
    assert rel_gap(pr.objective, r23.objective, objective_scale(model)) < TOL


def _iris_subset(per_class: int):
    from tpm_models import load_dataset, min_max_scale

    d = load_dataset("iris")
    keep = np.concatenate([np.flatnonzero(d.y == k)[:per_class] for k in range(3)])
    return min_max_scale(d.X)[keep], d.y[keep]


_XPRESS_THEN_PYROS = """
import json, sys, warnings
import numpy as np
warnings.filterwarnings("ignore")
from tpm_models import build, load_dataset, min_max_scale, solve
from tpm_models.checks.semi_infinite import solve_22_pyros
d = load_dataset("iris"); X, y = min_max_scale(d.X), d.y
solve(build(23, X, y, 0, 0.3, 1.0, p=1.0, eps=0.02), "xpress")
p, k = float(sys.argv[1]), int(sys.argv[2])
keep = np.concatenate([np.flatnonzero(y == c)[:k] for c in range(3)])
r = solve_22_pyros(X[keep], y[keep], 0, 0.3, 1.0, p, 0.02, local_solver="gurobi_direct", global_solver="gurobi_direct",
                   raise_on_failure=False)
print(json.dumps({"termination": r.termination, "objective": r.objective, "message": r.message}))
"""


@pytest.mark.parametrize("p,per_class", [(1.0, 7), (2.0, 8)])
def test_pyros_with_gurobi_after_an_xpress_solve(p, per_class):
    """Regression: after an Xpress solve in the same process (as in ``tpm-models check``), Gurobi 13's barrier
    ended a PyROS master of these Iris subsets SUBOPTIMAL and PyROS stopped with subsolver_error. The Gurobi
    backup (NumericFocus 3) must carry PyROS to robust_optimal, at the optimum of (23) solved by SCIP. Run in a
    fresh process: the effect of the Xpress solve is process-wide."""
    import json
    import subprocess
    import sys

    for name in ("gurobi", "xpress"):
        if not S.BACKENDS[name].available():
            pytest.skip(f"{name} is not installed (the 'solvers' extra)")
    out = subprocess.run([sys.executable, "-c", _XPRESS_THEN_PYROS, str(p), str(per_class)], capture_output=True,
                         text=True, timeout=600, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["termination"] == "robust_optimal", r
    Xs, ys = _iris_subset(per_class)
    model = build(23, Xs, ys, 0, NU, ALPHA, p=p, eps=EPS)
    assert rel_gap(r["objective"], solve(model, "scip").objective, objective_scale(model)) < TOL


def _crippled_gurobi(backup_too: bool):
    """A ``subsolver=`` factory for solve_22_pyros: every Gurobi subsolver PyROS gets stops at its first barrier
    iteration (and, unless ``backup_too``, the backup of :data:`GUROBI_BACKUP_OPTIONS` does not); and the list of
    the subsolvers it made."""
    made = []
    original = pyros_subsolver

    def subsolver(kind, prefer, time_limit=None, gurobi_options=None, **kwds):
        backup = gurobi_options is not None
        if not backup or backup_too:
            gurobi_options = {**(gurobi_options or {}), "Method": 2, "BarIterLimit": 1, "Crossover": 0}
        opt = original(kind, prefer, time_limit, gurobi_options=gurobi_options, **kwds)
        made.append(("backup" if backup else "primary", opt))
        return opt

    return subsolver, made


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_pyros_gurobi_backup_takes_over_a_failed_master(request, p):
    """The primary Gurobi fails every solve (barrier iteration limit 1); the Gurobi backup solves them all, and
    PyROS still ends robust_optimal at the optimum of (23) (SCIP)."""
    if ran_in_fresh_process(request):
        return
    if "gurobi" not in S.available_solvers():
        pytest.skip("gurobipy is not installed")
    subsolver, made = _crippled_gurobi(backup_too=False)
    Xs, ys = _iris_subset(4)
    pr = solve_22_pyros(Xs, ys, 0, NU, ALPHA, p, EPS, local_solver="gurobi_direct", global_solver="gurobi_direct",
                        subsolver=subsolver)
    assert [role for role, _ in made] == ["primary", "primary", "backup", "backup"]
    backup_solves = sum(opt.solves for role, opt in made if role == "backup")
    assert backup_solves >= pr.rounds  # at least every master (one per PyROS iteration) went to the backup
    assert f"{backup_solves} backup solves" in pr.message
    model = build(23, Xs, ys, 0, NU, ALPHA, p=p, eps=EPS)
    assert rel_gap(pr.objective, solve(model, "scip").objective, objective_scale(model)) < TOL


def test_pyros_raises_when_the_gurobi_backup_fails_too(request):
    if ran_in_fresh_process(request):
        return
    if "gurobi" not in S.available_solvers():
        pytest.skip("gurobipy is not installed")
    subsolver, _ = _crippled_gurobi(backup_too=True)
    Xs, ys = _iris_subset(4)
    with pytest.raises(S.NoOptimalSolutionError, match="subsolver_error"):
        solve_22_pyros(Xs, ys, 0, NU, ALPHA, 1.0, EPS, local_solver="gurobi_direct", global_solver="gurobi_direct",
                       subsolver=subsolver)


@pytest.mark.parametrize("eq,p", [(27, 1.0), (28, 2.0), (29, math.inf)])
@pytest.mark.parametrize("name", ["ipopt", "scip", "gurobi", "cplex", "xpress", "clarabel"])
def test_every_socp_solver_agrees(wine, eq, p, name):
    if not S.BACKENDS[name].available():
        pytest.skip(f"{name} not installed")
    X, y = wine
    ref_model = build(26, X, y, 2, NU, ALPHA, p=p, eps=EPS)  # class 2: 48 points, within the pip licences
    ref = solve(ref_model, "ipopt")
    r = solve(build(eq, X, y, 2, NU, ALPHA, p=p, eps=EPS), name)
    assert rel_gap(r.objective, ref.objective, objective_scale(ref_model)) < TOL


def test_ipopt_solves_every_model_of_the_paper(iris):
    """Ipopt (from the CasADi wheel) on every model number, against another solver."""
    X, y = iris
    k = Kernel("hom-poly", degree=2)
    for eq, kw, other in [(2, {}, "piqp"), (3, {}, "piqp"), (4, {}, "piqp"), (5, {}, "piqp"),
                          (10, {"kernel": k}, "piqp"), (11, {"kernel": k}, "piqp"), (12, {"kernel": k}, "piqp"),
                          (13, {"kernel": k}, "piqp"), (15, {}, "piqp"), (16, {}, "piqp"),
                          (19, {"kernel": Kernel("gaussian", sigma=1.0)}, "piqp"),
                          (26, {"p": 3, "eps": EPS}, "scip"), (27, {"eps": EPS}, "scip"),
                          (28, {"eps": EPS}, "scip"), (29, {"eps": EPS}, "scip")]:
        model = build(eq, X, y, 1, NU, ALPHA, **kw)
        a = solve(model, "ipopt")
        scale = objective_scale(model)
        b = solve(build(eq, X, y, 1, NU, ALPHA, **kw), other)
        assert rel_gap(a.objective, b.objective, scale) < TOL, eq
    # (23) from Ipopt's default cold start, for the smooth-where-w != 0 NLPs and the QP at p = inf
    for p in (2, 3, math.inf):
        m23 = build(23, X, y, 1, NU, ALPHA, p=p, eps=EPS)
        a = solve(m23, "ipopt")
        b = solve(build(23, X, y, 1, NU, ALPHA, p=p, eps=EPS), "scip")
        assert rel_gap(a.objective, b.objective, objective_scale(m23)) < TOL, p


def test_23_epigraphs_equal_the_norm_at_the_optimum(iris):
    """p != 2 writes |w|_p' with epigraph variables: at the optimum they are the norm."""
    X, y = iris
    for p in (1, math.inf, 3):
        r = solve(build(23, X, y, 2, NU, ALPHA, p=p, eps=EPS))
        w = r.values["w"]
        got = r.values["abs_w"].sum() if math.isinf(p) else r.values["norm_w"]
        assert got == pytest.approx(dual_norm(w, p), rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------- classifier


def test_robust_classifier_at_eps_zero_predicts_like_the_deterministic_one(iris, wine):
    from tpm_models import stratified_split

    for X, y in (iris, wine):
        for seed in (0, 1):
            train, test = stratified_split(y, seed)
            for ratio in (0.3, 0.5):  # 0.5: theta not unique on some classes (errata 5)
                det = TPMSVMOneVsAll(nu=ratio, alpha=1.0).fit(X[train], y[train])
                rob = RobustTPMSVMOneVsAll(nu=ratio, alpha=1.0, p=2, eps=0.0).fit(X[train], y[train])
                np.testing.assert_array_equal(rob.predict(X[test]), det.predict(X[test]))
                np.testing.assert_allclose(rob.distances(X[test]), det.distances(X[test]), atol=1e-5)


def test_robust_classifier_contract(iris):
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    X, y = iris
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = RobustTPMSVMOneVsAll(nu=0.3, alpha=1.0, p="inf", eps=0.02)
    assert clone(clf).get_params()["p"] == "inf"
    scores = cross_val_score(clf, X, labels, cv=3)
    assert scores.mean() > 0.8
    fitted = clf.fit(X, labels)
    assert set(fitted.predict(X)) <= set(labels) and fitted.coef_.shape == (3, 4)
    with pytest.raises(ValueError, match="one radius per point"):
        RobustTPMSVMOneVsAll(eps=np.ones(3)).fit(X, y)
    with pytest.raises(ValueError, match="p must be"):
        RobustTPMSVMOneVsAll(p=0.5).fit(X, y)


def test_robust_survey_rows_agree_with_the_cutting_planes():
    """robust_survey's residuals are measured against (22) by cutting planes: Ipopt on (28) and
    PIQP on (23) at p = inf must be within the tie tolerance on every Iris class."""
    from benchmarks.robust_survey import robust_survey, summarize

    df = robust_survey(["iris"], ["ipopt", "piqp"], models=((28, 2.0), (23, math.inf)))
    assert len(df) == 9 and (df["termination"] == "optimal").all()  # (28): ipopt; (23) p=inf QP: both
    assert df["rel_gap"].max() < TOL
    assert df["w_dist"].max() < 1e-5
    assert set(summarize(df)["solved"]) == {"3/3"}


@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_theorem_1_pyros_with_ipopt_equals_the_counterpart(wine, p):
    """(22) by PyROS with the licence-free Ipopt plugin (``tpm_ipopt``) as local and global
    subsolver, on a Wine subset, = (23); the certificate is PyROS's ``robust_optimal``."""
    X, y = wine
    keep = np.concatenate([np.flatnonzero(y == k)[:4 if p == 1 else 6] for k in range(3)])
    Xs, ys = X[keep], y[keep]
    model = build(23, Xs, ys, 0, NU, ALPHA, p=p, eps=EPS)
    r23 = solve(model)
    pr = solve_22_pyros(Xs, ys, 0, NU, ALPHA, p, EPS, local_solver="tpm_ipopt", global_solver="tpm_ipopt")
    assert pr.termination == "robust_optimal"
    assert rel_gap(pr.objective, r23.objective, objective_scale(model)) < 1e-8


def test_pyros_separation_aid_is_redundant(iris):
    """``margin_sum`` is the sum of the margin rows (so implied by them), separated first;
    each margin row alone after PyROS's epigraph row (priority 0)."""
    from tpm_models.models.semi_infinite import add_separation_order, build_semi_infinite_22

    X, y = iris
    m = build_semi_infinite_22(X, y, 1, NU, ALPHA, p=math.inf, eps=EPS)
    add_separation_order(m, one_by_one=True)
    rng = np.random.default_rng(0)
    for v in m.component_data_objects(pyo.Var):
        v.set_value(float(rng.uniform(0, 1)))
    for d in m.delta.values():
        d.set_value(float(rng.uniform(-EPS, EPS)))
    total = sum(pyo.value(m.margin[i].body) for i in m.X_c)
    assert pyo.value(m.margin_sum.body) == pytest.approx(total, rel=1e-12)
    assert m.margin_sum.lower == 0 and m.margin_sum.upper is None
    priorities = m.pyros_separation_priority
    assert priorities[m.margin_sum] == 1
    assert sorted(priorities[m.margin[i]] for i in m.X_c) == list(range(-len(m.X_c), 0))
    add_separation_order(m2 := build_semi_infinite_22(X, y, 1, NU, ALPHA, p=2.0, eps=EPS), one_by_one=False)
    assert {m2.pyros_separation_priority[m2.margin[i]] for i in m2.X_c} == {-1}


def test_check_runs_theorem_1_through_the_verifier(iris):
    """``tpm-models check``'s robust ties reach Theorem 1 through the generic verifier: (22) by its cutting planes
    (solve_22_cutting_plane -> checks.verify.solve_cutting_planes), (23)'s point over U by its exact separation,
    and PyROS by verify_model. Truth for the new row: the rows of (23)'s point at their worst case by (25),
    written here with numpy."""
    from tpm_models.checks.robust import check_pyros, check_robust
    from tpm_models.solvers.backends.registry import available_solvers

    X, y = iris
    keep = np.sort(np.concatenate([np.flatnonzero(y == k)[:10] for k in range(3)]))
    X, y = X[keep], y[keep]
    rows = check_robust(X, y, 0, 0.3, 1.0, 0.02, "iris", cross_solvers=())
    ties = {r.tie for r in rows}
    assert {"(22) cutting planes = (23)", "(23) robust over U (exact separation)"} <= ties
    assert all(r.passed for r in rows), [r for r in rows if not r.passed]
    for p in (1.0, 2.0, math.inf, 3.0):
        r = solve(build(23, X, y, 0, 0.3, 1.0, p=p, eps=0.02))
        w, theta, xi = r.values["w"], r.values["theta"], r.values["xi"]
        worst = X[y == 0] @ w + theta + xi - 0.02 * np.linalg.norm(w, conjugate(p))  # >= 0 by (25)
        row = next(x for x in rows
                   if x.tie == "(23) robust over U (exact separation)" and x.instance.endswith(f"p={p:g}"))
        assert row.residual == pytest.approx(max(0.0, -worst.min()), abs=1e-12)
    if "gurobi" in available_solvers():
        pyros_rows = check_pyros(X, y, 0, 0.3, 1.0, 0.02, "iris", points_per_class=2)
        assert {r.tie for r in pyros_rows} == {"(22) PyROS = (23)", "(23) robust over U (PyROS subset)"}
        assert all(r.passed for r in pyros_rows), pyros_rows
