"""The generic verifier (tpm_models.checks.verify): true counterparts verified, wrong ones rejected with a witness.

Truths, never the verifier's own output: the closed form (25) written here with numpy
(``eps * ||w||_q``); the semi-infinite objective of (22) by ``semi_infinite_objective`` (its own code);
the optimum of the paper's counterparts solved by another solver; the other route (PyROS against the
cutting planes); brute force over the vertices of boxes and budget sets; and the rows of the wrong
counterparts re-evaluated by hand at the violating delta the verifier returns.
"""

import itertools
import math

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.core.expr.compare import compare_expressions

from tpm_models import build, solve
from tpm_models.checks.robust import verify_model
from tpm_models.checks.semi_infinite import uncertain_22
from tpm_models.checks.verify import (
    MASTER_LARGE,
    MASTER_OPTIONS,
    OBJECTIVE_TOL,
    Box,
    Budget,
    Ellipsoid,
    NormBall,
    Polyhedron,
    UncertainRow,
    UncertainTerm,
    body_value,
    evaluate_point,
    master_fallback,
    master_large_solvers,
    master_options,
    master_solvers,
    rel_gap,
    scenario_sum,
    solve_cutting_planes,
    solve_master,
    solve_pyros,
    verify,
)
from tpm_models.models.norms import conjugate
from tpm_models.models.semi_infinite import semi_infinite_objective
from tpm_models.solvers.backends.registry import available_solvers
from tpm_models.solvers.common import NoOptimalSolutionError

NU, ALPHA, EPS = 0.3, 1.0, 0.02
GUROBI = "gurobi" in available_solvers()
needs_gurobi = pytest.mark.skipif(not GUROBI, reason="PyROS here uses Gurobi as subsolver (pip install gurobipy)")


def subset(data, per_class):
    X, y = data
    keep = np.sort(np.concatenate([np.flatnonzero(y == k)[:per_class] for k in np.unique(y)]))
    return X[keep], y[keep]


# --------------------------------------------------------------------------- the sets' support functions


def test_support_functions_against_closed_forms_and_vertices(rng):
    g = rng.normal(size=4)
    for p in (1.0, 1.5, 2.0, 3.0, math.inf):
        value, delta = NormBall(p, 0.3).support(g)
        assert value == pytest.approx(0.3 * np.linalg.norm(g, conjugate(p)), rel=1e-12)  # (25)
        assert np.linalg.norm(delta, p) == pytest.approx(0.3, rel=1e-12) and delta @ g == pytest.approx(value)
    lo, up = -rng.random(4), rng.random(4)
    vertices = np.array(list(itertools.product(*zip(lo, up))))
    value, delta = Box(tuple(lo), tuple(up)).support(g)
    assert value == pytest.approx((vertices @ g).max()) and delta @ g == pytest.approx(value)
    # the same box as a polyhedron: the LP by the library's solver
    A, b = np.vstack([np.eye(4), -np.eye(4)]), np.r_[up, -lo]
    assert Polyhedron(A.tolist(), b.tolist()).support(g)[0] == pytest.approx(value, abs=1e-7)
    # budget: vertices z in {0,1}^4 with sum z <= 2 (gamma integral)
    d = rng.random(4)
    best = max(g @ (d * np.array(z)) for z in itertools.product((0, 1), repeat=4) if sum(z) <= 2)
    assert Budget(tuple(d), 2).support(g)[0] == pytest.approx(max(best, 0.0))
    # ellipsoid: delta = L u, |u|_2 <= r, Sigma = L L'
    L = np.tril(rng.normal(size=(4, 4))) + 3 * np.eye(4)
    value, delta = Ellipsoid((L @ L.T).tolist(), 0.5).support(g)
    assert value == pytest.approx(0.5 * np.linalg.norm(L.T @ g))
    assert np.linalg.norm(np.linalg.solve(L, delta)) == pytest.approx(0.5)


# --------------------------------------------------------------------------- the paper's counterparts


@pytest.mark.parametrize("p", [1.0, 2.0, math.inf, 1.5])
def test_23_verified_by_cutting_planes(iris, wine, p):
    for (X, y), c in ((iris, 0), (iris, 2), (wine, 1)):
        v = verify_model(23, X, y, c, NU, ALPHA, p, EPS)
        assert v.verified, v.table()
        si = v.semi_infinite
        # the verifier's semi-infinite objective is (22)'s closed form at its point
        closed = semi_infinite_objective(X, y, c, NU, ALPHA, p, EPS, si.values["w"], si.values["theta"])
        assert si.objective == pytest.approx(closed, abs=1e-12)
        # and (23) by another solver has the same optimum
        other = solve(build(23, X, y, c, NU, ALPHA, p=p, eps=EPS), "scip" if p not in (1.0, math.inf) else "highs")
        assert abs(other.objective - si.objective) <= 1e-7 * abs(si.objective)


@pytest.mark.parametrize("eq,p", [(26, 3.0), (26, 1.0), (27, 1.0), (28, 2.0), (29, math.inf)])
def test_26_to_29_verified_by_cutting_planes(iris, wine, eq, p):
    for (X, y), c in ((iris, 2), (wine, 1)):
        v = verify_model(eq, X, y, c, NU, ALPHA, p, EPS)
        assert v.verified, v.table()
        si = v.semi_infinite
        closed = semi_infinite_objective(X, y, c, NU, ALPHA, p, EPS, si.values["w"], si.values["theta"])
        assert si.objective == pytest.approx(closed, abs=1e-12)


@needs_gurobi
@pytest.mark.parametrize("eq,p", [(23, 1.0), (28, 2.0), (29, math.inf), (27, 1.0)])
def test_paper_counterparts_verified_by_pyros_against_the_cutting_planes(iris, wine, eq, p):
    for data, per_class in ((iris, 5), (wine, 2)):
        X, y = subset(data, per_class)
        v = verify_model(eq, X, y, 0, NU, ALPHA, p, EPS, method="pyros", solver="gurobi")
        assert v.semi_infinite.termination == "robust_optimal" and v.verified, v.table()
        cp = verify_model(eq, X, y, 0, NU, ALPHA, p, EPS)
        scale = abs(cp.semi_infinite.objective)
        assert rel_gap(v.semi_infinite.objective, cp.semi_infinite.objective, scale) < OBJECTIVE_TOL
        np.testing.assert_allclose(v.semi_infinite.values["w"], cp.semi_infinite.values["w"], atol=1e-4)


# --------------------------------------------------------------------------- robust binary (2), (3), from outside


def norm_epigraph(m, q):
    """t >= ||w||_q for q in {1, 2, inf}, as rows of m."""
    m.t = pyo.Var(domain=pyo.NonNegativeReals)
    if q == 2.0:
        m.t_cone = pyo.Constraint(expr=sum(m.w[j] ** 2 for j in m.J) <= m.t**2)
    elif math.isinf(q):
        m.t_ge_w = pyo.Constraint(m.J, rule=lambda m, j: m.t - m.w[j] >= 0)
        m.t_ge_minus_w = pyo.Constraint(m.J, rule=lambda m, j: m.t + m.w[j] >= 0)
    else:
        m.a = pyo.Var(m.J, domain=pyo.NonNegativeReals)
        m.a_ge = pyo.Constraint(m.J, rule=lambda m, j: m.a[j] - m.w[j] >= 0)
        m.a_ge_minus = pyo.Constraint(m.J, rule=lambda m, j: m.a[j] + m.w[j] >= 0)
        m.t_sum = pyo.Constraint(expr=m.t - sum(m.a[j] for j in m.J) >= 0)
    return m.t


def robust_by_hand(m, own, other, weight, radii, t, row_sign=1.0, nominal_rows=()):
    """The nominal (2), (3) or (15) ``m`` made robust: the objective gets |weight| * sum_other eps_i * t, every
    row margin[i] of ``own`` moves by eps_i * t against itself (``row_sign=-1``: the wrong side); the rows
    in ``nominal_rows`` stay nominal."""
    m.obj.set_value(m.obj.expr + abs(weight) * sum(radii[i - 1] * t for i in other))
    m.robust_margin = pyo.ConstraintList()
    for i in own:
        row = m.margin[i]
        if i in nominal_rows:
            continue
        row.deactivate()
        if row.lower is not None:
            m.robust_margin.add(row.body - row_sign * radii[i - 1] * t >= row.lower)
        else:
            m.robust_margin.add(row.body + row_sign * radii[i - 1] * t <= row.upper)
    return m


def binary_problem(X, y, c, eq, p, radii, q=None, radius_factor=1.0, row_sign=1.0, nominal_rows=()):
    """(nominal, uncertain, counterpart) of the robust binary (2) or (3) under (21), class c positive."""
    nominal = build(eq, X, y, c, NU, ALPHA)
    own, other = (nominal.X_plus, nominal.X_minus) if eq == 2 else (nominal.X_minus, nominal.X_plus)
    weight = (1 if eq == 2 else -1) * NU / len(other)  # the objective's coefficient of x_i'w, i in other
    w = [nominal.w[j] for j in nominal.J]
    uncertain = [UncertainRow(nominal.margin[i], w, NormBall(p, radii[i - 1])) for i in own]
    uncertain += [UncertainTerm(w, NormBall(p, radii[i - 1]), weight) for i in other]
    cp = build(eq, X, y, c, NU, ALPHA)
    t = norm_epigraph(cp, conjugate(p) if q is None else q)
    robust_by_hand(cp, own, other, weight, radius_factor * np.asarray(radii), t, row_sign, nominal_rows)
    return nominal, uncertain, cp


@pytest.mark.parametrize("eq", [2, 3])
@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_robust_binary_verified_by_cutting_planes(iris, wine, eq, p):
    for data, c in ((iris, 2), (wine, 0)):  # (3) on Iris class 1 has w = 0 (nothing to perturb)
        X, y = data
        radii = np.full(len(y), EPS)
        radii[::7] = 0.0  # per-point radii, some points not perturbed
        radii[1::5] = 2 * EPS
        nominal, uncertain, cp = binary_problem(X, y, c, eq, p, radii)
        v = verify(nominal, uncertain, cp, ["w", "theta", "xi"], compare=["w"], solution_tol=1e-4)
        assert v.verified, v.table()
        # truth: the closed form (25), written here, at the verifier's point
        w, theta = v.semi_infinite.values["w"], v.semi_infinite.values["theta"]
        dn = np.linalg.norm(w, conjugate(p))
        yb = np.where(y == c, 1, -1)
        own, other = (yb == 1, yb == -1) if eq == 2 else (yb == -1, yb == 1)
        sign = 1 if eq == 2 else -1
        worst_score = X[own] @ w + theta - sign * radii[own] * dn
        xi = np.maximum(0.0, -sign * worst_score)
        closed = (0.5 * w @ w + NU / other.sum() * (sign * (X[other] @ w + theta) + radii[other] * dn).sum()
                  + ALPHA / own.sum() * xi.sum())
        assert v.semi_infinite.objective == pytest.approx(closed, abs=1e-12)


@needs_gurobi
@pytest.mark.parametrize("eq,p", [(2, 2.0), (3, 1.0), (3, math.inf), (2, 1.0)])
def test_robust_binary_verified_by_pyros_against_the_cutting_planes(iris, wine, eq, p):
    for data, per_class in ((iris, 5), (wine, 2)):
        X, y = subset(data, per_class)
        radii = np.full(len(y), EPS)
        radii[::4] = 0.0
        nominal, uncertain, cp = binary_problem(X, y, 2, eq, p, radii)
        v = verify(nominal, uncertain, cp, method="pyros", local_solver="gurobi_direct",
                   global_solver="gurobi_direct")
        assert v.semi_infinite.termination == "robust_optimal" and v.verified, v.table()
        ref = solve_cutting_planes(nominal, uncertain)
        assert rel_gap(v.semi_infinite.objective, ref.objective, abs(ref.objective)) < OBJECTIVE_TOL


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_box_uncertainty_per_coordinate_verified_by_both_routes(iris, wine, name):
    """|delta_j| <= r_j (a box, not a ball): the counterpart subtracts sum_j r_j |w_j|, written here."""
    X, y = subset(iris, 6) if name == "iris" else subset(wine, 2)
    r = np.linspace(0.005, 0.03, X.shape[1])
    nominal = build(15, X, y, 1, NU, ALPHA)
    w = [nominal.w[j] for j in nominal.J]
    weight = NU / len(nominal.X_minus_c)
    uncertain = [UncertainRow(nominal.margin[i], w, Box.symmetric(tuple(r))) for i in nominal.X_c]
    uncertain += [UncertainTerm(w, Box.symmetric(tuple(r)), weight) for i in nominal.X_minus_c]
    cp = build(15, X, y, 1, NU, ALPHA)
    cp.a = pyo.Var(cp.J, domain=pyo.NonNegativeReals)
    cp.a_ge = pyo.Constraint(cp.J, rule=lambda m, j: m.a[j] - m.w[j] >= 0)
    cp.a_ge_minus = pyo.Constraint(cp.J, rule=lambda m, j: m.a[j] + m.w[j] >= 0)
    support = sum(r[j - 1] * cp.a[j] for j in cp.J)
    robust_by_hand(cp, cp.X_c, cp.X_minus_c, weight, np.ones(len(y)), support)
    v = verify(nominal, uncertain, cp)
    assert v.verified, v.table()
    if GUROBI:
        vp = verify(nominal, uncertain, cp, method="pyros", local_solver="gurobi_direct", global_solver="gurobi_direct")
        assert vp.semi_infinite.termination == "robust_optimal" and vp.verified, vp.table()
        assert rel_gap(vp.semi_infinite.objective, v.semi_infinite.objective, abs(v.counterpart_objective)) \
            < OBJECTIVE_TOL


def ellipsoid_counterpart(X, y, L, radius):
    """(15) under delta = L u, |u|_2 <= radius: the worst cases are -/+ radius |L'w|_2, written here."""
    cp = build(15, X, y, 0, NU, ALPHA)
    cp.t = pyo.Var(domain=pyo.NonNegativeReals)
    n = len(L)
    Lw = [sum(L[j - 1, k] * cp.w[j] for j in cp.J) for k in range(n)]
    cp.t_cone = pyo.Constraint(expr=sum(e**2 for e in Lw) <= cp.t**2)
    robust_by_hand(cp, cp.X_c, cp.X_minus_c, NU / len(cp.X_minus_c), np.full(len(y), radius), cp.t)
    return cp


@needs_gurobi
def test_other_sets_by_both_routes(iris, rng):
    """Ellipsoid (with a counterpart written here), and a polyhedron and a budget set, where the two routes
    (cutting planes with their own support functions, PyROS with its own sets) must agree."""
    X, y = subset(iris, 4)
    n = X.shape[1]
    L = np.tril(rng.normal(size=(n, n))) * 0.3 + np.eye(n)
    ell = Ellipsoid((L @ L.T).tolist(), EPS)
    lo, up = -np.array([0.01, 0.02, 0.03, 0.01]), np.array([0.02, 0.01, 0.01, 0.03])
    poly = Polyhedron(np.vstack([np.eye(n), -np.eye(n), np.ones((1, n))]).tolist(), np.r_[up, -lo, 0.04].tolist())
    budget = Budget(tuple(up), 2)
    for uset in (ell, poly, budget):
        nominal = build(15, X, y, 0, NU, ALPHA)
        w = [nominal.w[j] for j in nominal.J]
        uncertain = [UncertainRow(nominal.margin[i], w, uset) for i in nominal.X_c]
        uncertain += [UncertainTerm(w, uset, NU / len(nominal.X_minus_c)) for i in nominal.X_minus_c]
        cp = solve_cutting_planes(nominal, uncertain)
        pr = solve_pyros(nominal, uncertain, "gurobi_direct", "gurobi_direct")
        assert pr.termination == "robust_optimal"
        assert rel_gap(pr.objective, cp.objective, abs(cp.objective)) < OBJECTIVE_TOL, uset
        if uset is ell:
            v = verify(nominal, uncertain, ellipsoid_counterpart(X, y, L, EPS))
            assert v.verified, v.table()
            assert v.semi_infinite.objective == pytest.approx(cp.objective, abs=1e-12)
            # truth: the optimum of the counterpart written here, solved by SCIP
            other = solve(ellipsoid_counterpart(X, y, L, EPS), "scip")
            assert abs(other.objective - cp.objective) <= 1e-6 * abs(cp.objective)


# --------------------------------------------------------------------------- wrong counterparts


def hand_row_value(X, y, c, eq, values, i, delta):
    """Row margin[i] of (2)/(3) at the counterpart's point and x^i + delta, by numpy: >= 0 (2), <= 0 (3) holds."""
    w, theta, xi = values["w"], values["theta"], values["xi"]
    yb = np.where(y == c, 1, -1)
    own = np.flatnonzero(yb == (1 if eq == 2 else -1)) + 1
    k = int(np.flatnonzero(own == i)[0])
    score = (X[i - 1] + delta) @ w + theta
    return score + xi[k] if eq == 2 else score - xi[k]


WRONG = {
    "radius halved": {"radius_factor": 0.5},
    "robust term on the wrong side of the rows": {"row_sign": -1.0},
    "rows left nominal": {"nominal_rows": "all"},
    "primal norm for the dual norm (p = inf: |w|_inf for |w|_1)": {"q": math.inf, "p": math.inf},
}


@pytest.mark.parametrize("eq", [2, 3])
@pytest.mark.parametrize("name", list(WRONG))
def test_wrong_counterparts_rejected_with_a_violating_delta(iris, eq, name):
    X, y = iris
    kw = dict(WRONG[name])
    p = kw.pop("p", 2.0)
    radii = np.full(len(y), EPS)
    if kw.get("nominal_rows") == "all":
        kw["nominal_rows"] = set(range(1, len(y) + 1))
    nominal, uncertain, cp = binary_problem(X, y, 2, eq, p, radii, **kw)
    v = verify(nominal, uncertain, cp, ["w", "theta", "xi"])
    assert not v.verified and v.violation > 1e-6, v.table()
    # the violating delta is in the set and breaks the row, checked by hand
    delta = v.violating_delta
    assert np.linalg.norm(delta, p) <= EPS * (1 + 1e-12)
    i = int(v.violating_row.split("[")[1].rstrip("]"))
    value = hand_row_value(X, y, 2, eq, v.counterpart_values, i, delta)
    assert (value < -1e-6) if eq == 2 else (value > 1e-6)
    assert value == pytest.approx(-v.violation if eq == 2 else v.violation, rel=1e-6)


def test_dual_norm_swapped_at_p1_rejected_with_the_robust_optimum_as_witness(iris):
    """|w|_1 where |w|_inf belongs (p = 1): more conservative, so its solution violates nothing; the
    optimum is too high (truth: (23) at p = 1 by HiGHS) and the semi-infinite optimum is its witness."""
    X, y = iris
    nominal = build(15, X, y, 0, NU, ALPHA)
    uncertain = uncertain_22(nominal, 1.0, EPS)
    cp = build(15, X, y, 0, NU, ALPHA)
    t = norm_epigraph(cp, 1.0)
    robust_by_hand(cp, cp.X_c, cp.X_minus_c, NU / len(cp.X_minus_c), np.full(len(y), EPS), t)
    v = verify(nominal, uncertain, cp)
    assert not v.verified and v.violation <= 1e-6 and v.witness, v.table()
    truth = solve(build(23, X, y, 0, NU, ALPHA, p=1.0, eps=EPS), "highs").objective
    assert v.counterpart_objective > truth + 1e-5
    assert v.semi_infinite.objective == pytest.approx(truth, abs=1e-8)
    assert "excluded" in v.witness or "objective is" in v.witness


def test_wrong_objective_caught_by_the_objective_check(iris):
    """Robust rows but a nominal objective: feasible over U, yet its value is not the worst case."""
    X, y = iris
    nominal = build(15, X, y, 0, NU, ALPHA)
    cp = build(15, X, y, 0, NU, ALPHA)
    t = norm_epigraph(cp, 2.0)
    robust_by_hand(cp, cp.X_c, cp.X_minus_c, 0.0, np.full(len(y), EPS), t)
    v = verify(nominal, uncertain_22(nominal, 2.0, EPS), cp)
    assert not v.verified and v.violation <= 1e-6 and v.consistency > 1e-4
    # truth: the semi-infinite objective at its point by (22)'s own closed form
    w, theta = v.counterpart_values["w"], v.counterpart_values["theta"]
    assert v.objective_at_counterpart == pytest.approx(
        semi_infinite_objective(X, y, 0, NU, ALPHA, 2.0, EPS, w, theta), abs=1e-9)  # its own xi, not the optimal


@needs_gurobi
def test_pyros_route_rejects_a_halved_radius(iris):
    X, y = subset(iris, 5)
    nominal, uncertain, cp = binary_problem(X, y, 1, 2, math.inf, np.full(len(y), EPS), radius_factor=0.5)
    v = verify(nominal, uncertain, cp, method="pyros", local_solver="gurobi_direct", global_solver="gurobi_direct")
    assert v.semi_infinite.termination == "robust_optimal"
    assert not v.verified and v.violation > 1e-6 and v.gap > OBJECTIVE_TOL


# --------------------------------------------------------------------------- bad input


def test_bad_input(iris):
    X, y = subset(iris, 3)
    m = build(15, X, y, 0, NU, ALPHA)
    w = [m.w[j] for j in m.J]
    cp = build(23, X, y, 0, NU, ALPHA, p=2.0, eps=EPS)
    with pytest.raises(ValueError, match="no counterpart variable"):
        verify(m, uncertain_22(m, 2.0, EPS), cp, {"w": "w"})
    with pytest.raises(ValueError, match="has no variable"):
        verify(m, uncertain_22(m, 2.0, EPS), cp, {"w": "w", "theta": "theta", "xi": "zeta"})
    with pytest.raises(ValueError, match="no l_p-ball"):
        verify(m, uncertain_22(m, 1.5, EPS), build(23, X, y, 0, NU, ALPHA, p=1.5, eps=EPS), method="pyros")
    m.eq_row = pyo.Constraint(expr=m.theta == 0)
    with pytest.raises(ValueError, match="equality"):
        solve_cutting_planes(m, [UncertainRow(m.eq_row, w, NormBall(2, 0.1))])
    with pytest.raises(ValueError, match="size of a norm ball must be finite and >= 0"):
        NormBall(2, -1.0)
    with pytest.raises(ValueError, match="every uncertainty set is a point"):
        solve_pyros(m, [UncertainTerm(w, NormBall(2, 0.0))])
    m.obj_too = pyo.Objective(expr=m.theta)  # a maximised objective is verified (tests/checks/test_verify_forms.py)
    with pytest.raises(ValueError, match="exactly one active objective"):
        evaluate_point(m, [], {})


def test_registry_counterpart_fields_checked():
    """nominal=/uncertain= only for robust models, uncertain a function; the paper's counterparts name (15) and get
    uncertain_22 from the checks layer; register_counterpart attaches data to a model registered without it."""
    from tpm_models import register_model
    from tpm_models.models.registry import REGISTRY, model_info, register_counterpart, verifiable_keys

    def builder(X, y, nu, alpha, *, p, eps):
        return build(2, X, y, 0, nu, alpha)

    with pytest.raises(ValueError, match="for robust models"):
        register_model("VT1", family="binary", model_class="QP", summary="", nominal=2, uncertain=uncertain_22)
    with pytest.raises(ValueError, match="must be a function"):
        register_model("VT1", family="binary", model_class="QP", summary="", robust_p=(2,), nominal=2, uncertain=3)
    with pytest.raises(ValueError, match="tuple of variable names"):
        register_model("VT1", family="binary", model_class="QP", summary="", robust_p=(2,), compare="w")
    for eq in (23, 26, 27, 28, 29):
        info = model_info(eq)
        assert info.nominal == 15 and info.uncertain is uncertain_22 and info.compare == ("w",) and info.verifiable
    try:
        register_model("VT1", family="binary", model_class="QP", summary="", robust_p=(2,))(builder)
        assert not model_info("VT1").verifiable and "VT1" not in verifiable_keys()
        with pytest.raises(ValueError, match="give nominal="):
            register_counterpart("VT1", uncertain=uncertain_22)
        register_counterpart("VT1", nominal=2, uncertain=uncertain_22)
        assert model_info("VT1").verifiable and model_info("VT1").nominal == 2 and "VT1" in verifiable_keys()
    finally:
        REGISTRY.pop("VT1", None)


def test_components_of_another_model_are_refused_even_with_the_same_names(iris):
    """The view of the nominal model finds its components on the clone by identity (the clone's memo), so a row or a
    coefficient of another model built from the same data (the same names ``w[1]``, ``margin[1]``) is refused; a
    lookup by name would have taken them as the nominal model's own."""
    X, y = subset(iris, 3)
    m, other = build(15, X, y, 0, NU, ALPHA), build(15, X, y, 0, NU, ALPHA)
    row = m.margin[next(iter(m.X_c))]
    with pytest.raises(ValueError, match="not in the nominal model"):
        solve_cutting_planes(m, [UncertainRow(row, [other.w[j] for j in other.J], NormBall(2, 0.1))])
    with pytest.raises(ValueError, match="not a constraint of the nominal model"):
        solve_cutting_planes(m, [UncertainRow(other.margin[next(iter(other.X_c))], [m.w[j] for j in m.J],
                                              NormBall(2, 0.1))])


def test_the_masters_go_to_clarabel_from_master_large_variables():
    """``"default"`` masters: Clarabel from MASTER_LARGE variables (PIQP's masters of (22) stalled at 10^5 points,
    docs/solvers.md), the QP default below, by name with its MASTER_OPTIONS first, then as "default" (the library's
    settings and fallbacks); a solver the caller names is kept; Ipopt stays the last resort. The models stand for
    masters, which have an objective (the default is read from the model's class)."""
    small, large = pyo.ConcreteModel(), pyo.ConcreteModel()
    small.x = pyo.Var(range(MASTER_LARGE - 1))
    large.x = pyo.Var(range(MASTER_LARGE))
    small.o = pyo.Objective(expr=sum(v**2 for v in small.x.values()))  # a QP, as the masters of (22)
    options = {"piqp": {"reg_lower_limit": 1e-13}}
    fallback = master_fallback()  # the accurate QP backends that honour a time limit: Ipopt
    assert fallback == [n for n in ("ipopt",) if n in available_solvers("QP")]
    assert master_solvers(small, ["default"]) == ["default", *fallback]  # no options: the library's default
    assert master_solvers(small, ["default"], options) == ["piqp", "default", *fallback]
    assert master_solvers(small, ["default"], {"clarabel": {}}) == ["default", *fallback]  # not the default's
    if "clarabel" in available_solvers("QP"):
        assert master_solvers(large, ["default"], options) == ["clarabel", *fallback]
        assert master_large_solvers(MASTER_LARGE) == ["clarabel"]
    assert master_solvers(large, ["piqp"], options) == ["piqp"]
    assert master_options(small) == {} and master_options(large) == {}  # above PIQP's dense solver
    tiny = pyo.ConcreteModel()
    tiny.x = pyo.Var(range(155))
    assert master_options(tiny) == MASTER_OPTIONS
    # solve_master hands each solver its own options, and only its own: an unknown setting fails PIQP alone
    tiny.o = pyo.Objective(expr=sum((v - 1) ** 2 for v in tiny.x.values()))
    with pytest.raises(NoOptimalSolutionError, match="no setting 'no_such_setting'"):
        solve_master(tiny, ["piqp"], {"piqp": {"no_such_setting": 1}})
    done = solve_master(tiny, ["piqp", "clarabel"], {"piqp": {"no_such_setting": 1}})
    assert done.solver == "clarabel" and abs(done.objective) <= 1e-9  # min of sum (x - 1)^2: 0 at x = 1


def test_the_masters_that_stalled_piqp_agree_with_23_and_with_clarabels_masters(iris):
    """(22) at p = 3 on Iris, class 1: the run whose late masters stalled PIQP at its default regularisation floor
    (2,133-7,061 iterations each; MASTER_OPTIONS). With the masters' options, PIQP's cutting planes must still reach
    the optimum of (23) (the closed-form counterpart, another formulation and solver) and the cutting planes whose
    masters Clarabel solves (another solver, no options). Tolerances: the objectives to OBJECTIVE_TOL (the
    verifier's own, relative); w to 1e-6, Clarabel's masters' w was measured 4e-7 from PIQP's over the 24 runs of
    (22) in ``tpm-models check`` (an interior point at a 1e-9 gap: w within about its square root of the optimum)."""
    X, y = iris
    nominal = build(15, X, y, 1, NU, ALPHA)
    piqp = solve_cutting_planes(nominal, uncertain_22(nominal, 3.0, EPS))
    assert "master solver piqp" in piqp.message
    nominal = build(15, X, y, 1, NU, ALPHA)
    clarabel = solve_cutting_planes(nominal, uncertain_22(nominal, 3.0, EPS), "clarabel")
    r23 = solve(build(23, X, y, 1, NU, ALPHA, p=3.0, eps=EPS))
    assert rel_gap(piqp.objective, r23.objective) <= OBJECTIVE_TOL
    assert rel_gap(piqp.objective, clarabel.objective) <= OBJECTIVE_TOL
    w, w_clarabel = np.asarray(piqp.values["w"]), np.asarray(clarabel.values["w"])
    assert np.abs(w - w_clarabel).max() <= 1e-6


@pytest.mark.parametrize("eq, kwargs", [(15, {}), (28, {"eps": EPS}), (23, {"p": 2.0, "eps": EPS})])
def test_body_value_is_pyomos_value_to_the_last_bit(iris, rng, eq, kwargs):
    """The separation reads a LinearExpression row's value term by term (body_value); Pyomo's own evaluation of every
    row of (15), (28) (monomials with a parameter as coefficient) and (23) at p = 2 (nonlinear rows: Pyomo's walker)
    is the truth, and the float must be the same one: the same products summed in the same order."""
    X, y = subset(iris, 10)
    model = build(eq, X, y, 0, NU, ALPHA, **kwargs)
    for v in model.component_data_objects(pyo.Var):
        v.set_value(float(rng.normal()), skip_validation=True)
    rows = list(model.component_data_objects(pyo.Constraint))
    assert rows
    for row in rows:
        assert body_value(row.body) == pyo.value(row.body), row.name


def test_scenario_sum_is_the_expression_of_pyomos_sum(iris, rng):
    """A cut's a(x)'delta built directly (scenario_sum) is, node for node, the expression Python's sum() of Pyomo's
    products makes: many terms, a coefficient of exactly 1 (the bare variable), one term, none, a weight."""
    X, y = subset(iris, 3)
    m = build(15, X, y, 0, NU, ALPHA)
    w = [m.w[j] for j in m.J]
    for delta, weight in ((rng.normal(size=4), 1.0), (np.array([1.0, 0.0, -2.5, 0.0]), 1.0),
                          (np.array([0.0, 0.0, 0.3, 0.0]), 1.0), (np.zeros(4), 1.0), (rng.normal(size=4), 0.075)):
        by_sum = sum(weight * float(d) * a for a, d in zip(w, delta) if d != 0)
        built = scenario_sum(w, delta, weight)
        if isinstance(by_sum, int):
            assert built == by_sum == 0
        else:
            assert compare_expressions(built, by_sum), (delta, weight)
