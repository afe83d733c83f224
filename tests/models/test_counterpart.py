"""robust_counterpart (tpm_models.models.counterpart): the paper's robust models derived, not written.

Truths, never the derivation's own output: the optima of the independent cvxpy reference of (23)
(docs/reference/cvxpy_23.csv, the conic survey's reference), the hand-written builders (23), (26)-(29) and the
robust binary (2), (3) written here by hand, the verifier's semi-infinite solves (cutting planes with exact
separation; PyROS), the rows of the hand-written builders compared coefficient by coefficient, and RSOME's
optima of three problems beyond the paper (docs/reference/rsome_battery.csv, computed outside the library).
"""

import csv
import math
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.repn import generate_standard_repn

from benchmarks.conic_survey import OBJ_FLOOR, OBJ_TOL, read_reference
from tpm_models import build, robust_counterpart, solve
from tpm_models.checks.robust import verify_model
from tpm_models.checks.verify import verify
from tpm_models.models.derived import uncertain_2, uncertain_3
from tpm_models.models.norms import conjugate
from tpm_models.models.registry import model_info
from tpm_models.models.semi_infinite import uncertain_22
from tpm_models.models.uncertainty import Box, Budget, Ellipsoid, NormBall, Polyhedron, UncertainRow, UncertainTerm
from tpm_models.solvers.backends.registry import available_solvers
from tpm_models.solvers.compare import objective_scale, rel_gap

NU, ALPHA, EPS = 0.3, 1.0, 0.02
GUROBI = "gurobi" in available_solvers()
GUROBI_TIGHT = {"BarQCPConvTol": 1e-10, "BarConvTol": 1e-10}
"""Gurobi's barrier tolerances for a reference point (its defaults, 1e-6 on an SOCP, are looser than the 1e-8 here)."""
needs_gurobi = pytest.mark.skipif(not GUROBI, reason="PyROS here uses Gurobi as subsolver (pip install gurobipy)")


def subset(data, per_class):
    X, y = data
    keep = np.sort(np.concatenate([np.flatnonzero(y == k)[:per_class] for k in np.unique(y)]))
    return X[keep], y[keep]


# --------------------------------------------------------------------------- the paper: (23), (26)-(29)


def test_the_paper_counterparts_are_registered_with_their_data():
    for key, nominal in (("15R", 15), ("2R", 2), ("3R", 3)):
        info = model_info(key)
        assert info.verifiable and info.nominal == nominal and info.group == "derived" and info.robust_p == ()


@pytest.fixture(scope="module")
def reference():
    return read_reference()


@pytest.mark.parametrize("name", ["iris", "wine"])
@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 3.0, math.inf])
def test_15R_has_the_optimum_of_the_cvxpy_reference_and_of_23(iris, wine, reference, name, p):
    """Every class, (nu, alpha, eps) in {(0.2, 1, 0.1), (1, 2, 0.02)}: a subset of the conic survey's grid (the whole
    grid: docs/robustify.md). The survey's accuracy: objective within 1e-8 of the reference, relative to the
    objective's terms (at least OBJ_FLOOR).

    Two points per class, not the six of before (issue 27, for time): the other (nu, alpha, eps) of the grid are held
    by two ties elsewhere, 15R's rows are the hand-written (23)'s and (27)-(29)'s row by row at these five p
    (test_15R_rows_are_the_hand_written_rows, below) and (23) meets the same reference at (0.5, 1, 0.02) and
    (0.9, 1, 0.1) (test_conic_survey.py::test_default_solver_meets_the_cvxpy_reference)."""
    X, y = iris if name == "iris" else wine
    for c in np.unique(y):
        for nu, alpha, eps in ((0.2, 1.0, 0.1), (1.0, 2.0, 0.02)):
            ref = reference[(name, int(c), nu, alpha, p, eps)]
            model = build("15R", X, y, c, nu, alpha, p=p, eps=eps)
            r = solve(model, "clarabel")
            scale = max(objective_scale(model), OBJ_FLOOR)
            assert rel_gap(r.objective, ref["objective"], scale) <= OBJ_TOL, (c, nu, alpha, eps, r.objective, ref)
            if nu == 0.2 and eps == 0.1:  # and the hand-written (23) solved by the same solver
                hand = solve(build(23, X, y, c, nu, alpha, p=p, eps=eps), "clarabel")
                assert rel_gap(r.objective, hand.objective, scale) <= OBJ_TOL


def linear_part(expr, rename=None):
    """The linear coefficients of ``expr`` by variable name (``rename``: name -> name), and the quadratic ones."""
    repn = generate_standard_repn(expr, compute_values=True, quadratic=True)
    rename = rename or {}
    lin = {}
    for v, a in zip(repn.linear_vars, repn.linear_coefs):
        name = rename.get(v.name, v.name)
        lin[name] = lin.get(name, 0.0) + a
    quad = {(u.name, v.name): a for (u, v), a in zip(repn.quadratic_vars, repn.quadratic_coefs)}
    return lin, quad, repn.constant


def same_linear(a: dict, b: dict, tol=1e-14):
    keys = set(a) | set(b)
    return all(abs(a.get(k, 0.0) - b.get(k, 0.0)) <= tol * max(1.0, abs(b.get(k, 0.0))) for k in keys)


@pytest.mark.parametrize("p,twin", [(1.0, 27), (2.0, 28), (math.inf, 29), (3.0, 23), (1.5, 23)])
def test_15R_rows_are_the_hand_written_rows(iris, p, twin):
    """Row by row, the derived margin rows are the twin's with its norm variable renamed, and so is the linear part
    of the objective; what differs is stated: (27)-(29) write 1/2|w|^2 as the cone of (26) (t, u, v), 15R keeps
    (15)'s quadratic. Per-point radii (some 0)."""
    X, y = iris
    eps = np.full(len(y), EPS)
    eps[::5] = 0.0
    eps[1::7] = 0.05
    derived = build("15R", X, y, 1, NU, ALPHA, p=p, eps=eps)
    hand = build(twin, X, y, 1, NU, ALPHA, p=p, eps=eps)
    n = len(hand.J)
    rename = {1.0: {"norm_w": "s"}, 2.0: {"norm_w": "t"},
              math.inf: {f"abs_w[{j}]": f"s[{j}]" for j in range(1, n + 1)}}.get(p, {})
    for i in hand.X_c:
        lin_d, quad_d, const_d = linear_part(derived.margin[i].body, rename)
        lin_h, quad_h, const_h = linear_part(hand.margin[i].body)
        assert same_linear(lin_d, lin_h) and not quad_d and not quad_h and const_d == const_h, i
        assert derived.margin[i].lower == hand.margin[i].lower == 0 and derived.margin[i].upper is None
    lin_d, quad_d, _ = linear_part(derived.obj.expr, rename)
    lin_h, quad_h, _ = linear_part(hand.obj.expr)
    if twin == 23:  # (23) writes 1/2|w|^2 as 15R does
        assert same_linear(lin_d, lin_h) and quad_d == quad_h
    else:  # the twin writes it as 1/2 (u - v), with the cones of (26)
        assert lin_h.pop("u") == 0.5 and lin_h.pop("v") == -0.5 and not quad_h
        assert same_linear(lin_d, lin_h) and quad_d == {(f"w[{j}]", f"w[{j}]"): 0.5 for j in range(1, n + 1)}
    variables = {v.local_name for v in derived.component_objects(pyo.Var)}
    expected = {1.0: {"norm_w"}, 2.0: {"norm_w"}, math.inf: {"abs_w"}}.get(p, {"norm_w", "abs_w", "norm_w_z"})
    assert variables == {"w", "theta", "xi"} | expected


@pytest.mark.parametrize("p", [2.0, 1.5])
def test_15R_verified_by_cutting_planes(iris, wine, p):
    """p = 2 (a cone) and 1.5 (the power cones); p = 1 and inf (issue 27, for time) are held by two ties elsewhere:
    15R's rows are (27)'s and (29)'s (test_15R_rows_are_the_hand_written_rows) and (23) is verified by the cutting
    planes on the same data and classes at p = 1, 2, inf, 1.5 (test_verify.py::test_23_verified_by_cutting_planes)."""
    for (X, y), c in ((iris, 0), (wine, 1)):
        v = verify_model("15R", X, y, c, NU, ALPHA, p, EPS)
        assert v.verified, v.table()
        r26 = solve(build(26, X, y, c, NU, ALPHA, p=p, eps=EPS))
        assert rel_gap(v.counterpart_objective, r26.objective, abs(r26.objective)) <= 1e-7


@needs_gurobi
@pytest.mark.parametrize("key,p", [("15R", 1.0), ("15R", 2.0), ("2R", math.inf), ("3R", 2.0)])
def test_derived_counterparts_verified_by_pyros(iris, key, p):
    X, y = subset(iris, 4)
    v = verify_model(key, X, y, 0, NU, ALPHA, p, EPS, method="pyros", solver="gurobi")
    assert v.semi_infinite.termination == "robust_optimal" and v.verified, v.table()


# --------------------------------------------------------------------------- the robust binary (2), (3)


def robust_binary_by_hand(X, y, c, eq, p, radii):
    """The robust (2) or (3) under (21), written here from (25): t >= |w|_p', the objective gains
    nu/m_other sum_other eps_i t, every own row moves by eps_i t against itself."""
    m = build(eq, X, y, c, NU, ALPHA)
    own, other = (m.X_plus, m.X_minus) if eq == 2 else (m.X_minus, m.X_plus)
    q = conjugate(p)
    m.t = pyo.Var(domain=pyo.NonNegativeReals)
    if q == 2.0:
        m.t_cone = pyo.Constraint(expr=sum(m.w[j] ** 2 for j in m.J) <= m.t**2)
    elif math.isinf(q):
        m.t_ge = pyo.Constraint(m.J, rule=lambda m, j: m.t - m.w[j] >= 0)
        m.t_ge_minus = pyo.Constraint(m.J, rule=lambda m, j: m.t + m.w[j] >= 0)
    else:
        m.a = pyo.Var(m.J, domain=pyo.NonNegativeReals)
        m.a_ge = pyo.Constraint(m.J, rule=lambda m, j: m.a[j] - m.w[j] >= 0)
        m.a_ge_minus = pyo.Constraint(m.J, rule=lambda m, j: m.a[j] + m.w[j] >= 0)
        m.t_sum = pyo.Constraint(expr=m.t - sum(m.a[j] for j in m.J) >= 0)
    m.obj.set_value(m.obj.expr + NU / len(other) * sum(radii[i - 1] for i in other) * m.t)
    for i in own:
        row = m.margin[i]
        if row.lower is not None:
            row.set_value((row.lower, row.body - radii[i - 1] * m.t, None))
        else:
            row.set_value((None, row.body + radii[i - 1] * m.t, row.upper))
    return m


@pytest.mark.parametrize("eq", [2, 3])
@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_2R_3R_equal_the_hand_written_robust_binary_and_are_verified(iris, wine, eq, p):
    """Both data sets: 2R/3R's optimum is the hand-written robust (2)/(3)'s. Verified on Wine only (issue 27, for
    time: (2) at p = 2 on Iris took 78 s): on Iris, class 2, the same radii and p, the hand-written model of equal
    optimum is verified by the cutting planes in test_verify.py::test_robust_binary_verified_by_cutting_planes."""
    for name, (X, y), c in (("iris", iris, 2), ("wine", wine, 0)):
        radii = np.full(len(y), EPS)
        radii[::7] = 0.0
        radii[1::5] = 2 * EPS
        derived = build(f"{eq}R", X, y, c, NU, ALPHA, p=p, eps=radii)
        hand = robust_binary_by_hand(X, y, c, eq, p, radii)
        # Gurobi's barrier stops an SOCP at BarQCPConvTol = 1e-6 by default: its objective was seen 1.05e-8 off
        # (relative) on (3) at p = 2, uncertified; at 1e-10 it is within 1e-9 of Clarabel's certified point.
        rh = solve(hand, "gurobi", options=GUROBI_TIGHT) if GUROBI else solve(hand, "clarabel")
        rd = solve(derived, "clarabel")
        assert rel_gap(rd.objective, rh.objective, objective_scale(hand)) <= 1e-8
        if name == "iris":
            continue
        nominal = build(eq, X, y, c, NU, ALPHA)
        data = (uncertain_2 if eq == 2 else uncertain_3)(nominal, p, radii)
        v = verify(nominal, data, derived, compare=["w"], solution_tol=1e-4)
        assert v.verified, v.table()


# --------------------------------------------------------------------------- the other sets on (15)


def declarations(nominal, uset):
    w = [nominal.w[j] for j in nominal.J]
    out = [UncertainRow(nominal.margin[i], w, uset) for i in nominal.X_c]
    return out + [UncertainTerm(w, uset, NU / len(nominal.X_minus_c)) for _ in nominal.X_minus_c]


def test_15_under_box_ellipsoid_budget_polyhedron_verified_by_cutting_planes(iris, rng):
    """The sets beyond (21) on (15): each derived counterpart verified by the cutting planes (whose separation is the
    set's own support function). A box given as a polyhedron has the box's optimum (two derivations, one truth)."""
    X, y = subset(iris, 8)
    n = X.shape[1]
    L = np.tril(rng.normal(size=(n, n))) * 0.3 + np.eye(n)
    lo, up = -np.array([0.01, 0.02, 0.03, 0.01]), np.array([0.02, 0.01, 0.01, 0.03])
    box = Box(tuple(lo), tuple(up))
    sets = {"box": box, "ellipsoid": Ellipsoid((L @ L.T).tolist(), EPS), "budget": Budget(tuple(up), 2),
            "polyhedron": Polyhedron(np.vstack([np.eye(n), -np.eye(n), np.ones((1, n))]).tolist(),
                                     np.r_[up, -lo, 0.04].tolist()),
            "box as polyhedron": Polyhedron(np.vstack([np.eye(n), -np.eye(n)]).tolist(), np.r_[up, -lo].tolist())}
    optimum = {}
    for name, uset in sets.items():
        nominal = build(15, X, y, 0, NU, ALPHA)
        cp = robust_counterpart(nominal, declarations(nominal, uset))
        v = verify(nominal, declarations(nominal, uset), cp)
        assert v.verified, (name, v.table())
        optimum[name] = v.counterpart_objective
    assert rel_gap(optimum["box"], optimum["box as polyhedron"], abs(optimum["box"])) <= 1e-8


@needs_gurobi
@pytest.mark.parametrize("name", ["ellipsoid", "budget", "polyhedron"])
def test_15_under_other_sets_verified_by_pyros(iris, name):
    X, y = subset(iris, 3)
    n = X.shape[1]
    up = np.array([0.02, 0.01, 0.01, 0.03])
    uset = {"ellipsoid": Ellipsoid((np.eye(n) + 0.3).tolist(), EPS), "budget": Budget(tuple(up), 2),
            "polyhedron": Polyhedron(np.vstack([np.eye(n), -np.eye(n), np.ones((1, n))]).tolist(),
                                     np.r_[up, up, 0.04].tolist())}[name]
    nominal = build(15, X, y, 0, NU, ALPHA)
    cp = robust_counterpart(nominal, declarations(nominal, uset))
    v = verify(nominal, declarations(nominal, uset), cp, method="pyros", local_solver="gurobi_direct",
               global_solver="gurobi_direct")
    assert v.semi_infinite.termination == "robust_optimal" and v.verified, v.table()


def test_input_errors_say_what_is_wrong(iris):
    X, y = subset(iris, 3)
    nominal = build(15, X, y, 0, NU, ALPHA)
    w = [nominal.w[j] for j in nominal.J]
    row = nominal.margin[next(iter(nominal.X_c))]
    with pytest.raises(ValueError, match="named twice"):
        robust_counterpart(nominal, [UncertainRow(row, w, NormBall(2, 0.1))] * 2)
    with pytest.raises(ValueError, match="affine"):
        robust_counterpart(nominal, [UncertainRow(row, [v**2 for v in w], NormBall(2, 0.1))])
    other = build(15, X, y, 0, NU, ALPHA)
    with pytest.raises(ValueError, match="not in the nominal model"):
        robust_counterpart(nominal, [UncertainRow(row, [other.w[j] for j in other.J], NormBall(2, 0.1))])
    with pytest.raises(ValueError, match="not a constraint of the nominal model"):
        robust_counterpart(nominal, [UncertainRow(other.margin[next(iter(other.X_c))], w, NormBall(2, 0.1))])
    with pytest.raises(ValueError, match="unbounded"):
        robust_counterpart(nominal, [UncertainRow(row, w, Polyhedron([[1, 0, 0, 0]], [1]))])
    nominal.obj.deactivate()
    with pytest.raises(ValueError, match="exactly one active objective"):
        robust_counterpart(nominal, [])


def test_the_nominal_model_is_not_touched(iris):
    X, y = subset(iris, 5)
    nominal = build(15, X, y, 0, NU, ALPHA)
    rows, objective = {i: nominal.margin[i].expr for i in nominal.X_c}, nominal.obj.expr
    cp = robust_counterpart(nominal, uncertain_22(nominal, 2.0, EPS))
    assert all(nominal.margin[i].expr is rows[i] for i in nominal.X_c) and nominal.obj.expr is objective
    assert [c.local_name for c in nominal.component_objects()] == ["J", "X_c", "X_minus_c", "nu", "alpha", "w",
                                                                    "theta", "xi", "obj", "margin"]
    assert cp is not nominal and cp.margin is not nominal.margin and "norm_w" in cp.margin.doc


# --------------------------------------------------------------------------- beyond the paper: RSOME's optima

RSOME = Path(__file__).resolve().parents[2] / "docs" / "reference" / "rsome_battery.csv"
RSOME_TOL = 1e-7
"""Relative agreement with RSOME + Gurobi (docs/reference/rsome_battery.py: tolerances 1e-9, barrier 1e-12)."""


def rsome_instances() -> dict[tuple[str, int], dict[str, np.ndarray]]:
    out: dict = {}
    with open(RSOME, newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault((row["problem"], int(row["instance"])), {})[row["field"]] = np.array(
                [float(v) for v in row["values"].split()])
    return out


def lp_budget(d):
    """min max_z (c + dev*z)'x s.t. A x <= b, sum x >= D, 0 <= x <= 1; z in [0,1]^n, sum z <= Gamma."""
    n = len(d["c"])
    A = d["A"].reshape(d["A_shape"].astype(int))
    m = pyo.ConcreteModel("an LP with uncertain costs")
    m.J = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.J, bounds=(0, 1))
    m.obj = pyo.Objective(expr=sum(d["c"][j] * m.x[j] for j in m.J))
    m.capacity = pyo.Constraint(range(len(A)), rule=lambda m, k: sum(A[k, j] * m.x[j] for j in m.J) <= d["b"][k])
    m.demand = pyo.Constraint(expr=sum(m.x[j] for j in m.J) >= d["D"][0])
    x = [m.x[j] for j in m.J]
    return m, [UncertainTerm(x, Budget(tuple(d["d"]), float(d["gamma"][0])))]


def qp_polyhedron(d):
    """min 1/2|x - x0|^2 + q'x s.t. (a + delta)'x <= beta for all P delta <= h, sum x = 1."""
    n = len(d["x0"])
    m = pyo.ConcreteModel("a QP with an uncertain row")
    m.J = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.J)
    m.obj = pyo.Objective(expr=sum(0.5 * (m.x[j] - d["x0"][j]) ** 2 + d["q"][j] * m.x[j] for j in m.J))
    m.limit = pyo.Constraint(expr=sum(d["a"][j] * m.x[j] for j in m.J) <= d["beta"][0])
    m.simplex = pyo.Constraint(expr=sum(m.x[j] for j in m.J) == 1)
    P = d["P"].reshape(d["P_shape"].astype(int))
    return m, [UncertainRow(m.limit, [m.x[j] for j in m.J], Polyhedron(P.tolist(), d["h"].tolist()))]


def socp_ellipsoid(d):
    """min max -(mu + delta)'x s.t. (mu + delta)'x >= R for all delta, |V x|_2 <= s, sum x = 1, x >= 0;
    delta in {delta' (L L')^-1 delta <= r^2}."""
    n = int(d["n"][0])
    L, V = d["L"].reshape(n, n), d["V"].reshape(n, n)
    m = pyo.ConcreteModel("a portfolio with uncertain returns")
    m.J = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.J, domain=pyo.NonNegativeReals)
    m.risk_factor = pyo.Var(m.J)
    m.sigma = pyo.Var(bounds=(0, float(d["s"][0])))
    m.obj = pyo.Objective(expr=-sum(d["mu"][j] * m.x[j] for j in m.J))
    m.factor = pyo.Constraint(m.J, rule=lambda m, k: m.risk_factor[k] == sum(V[k, j] * m.x[j] for j in m.J))
    m.risk = pyo.Constraint(expr=sum(m.risk_factor[k] ** 2 for k in m.J) <= m.sigma**2)
    m.target = pyo.Constraint(expr=sum(d["mu"][j] * m.x[j] for j in m.J) >= d["R"][0])
    m.budget = pyo.Constraint(expr=sum(m.x[j] for j in m.J) == 1)
    x = [m.x[j] for j in m.J]
    ell = Ellipsoid((L @ L.T).tolist(), float(d["r"][0]))
    return m, [UncertainRow(m.target, x, ell), UncertainTerm(x, ell, -1.0)]


BATTERY = {"lp_budget": lp_budget, "qp_polyhedron": qp_polyhedron, "socp_ellipsoid": socp_ellipsoid}


@pytest.mark.parametrize("problem", list(BATTERY))
def test_battery_beyond_the_paper_matches_rsome_and_is_verified(problem):
    instances = {k: v for k, v in rsome_instances().items() if k[0] == problem}
    assert len(instances) == 3
    for (_, k), data in sorted(instances.items()):
        nominal, uncertain = BATTERY[problem](data)
        cp = robust_counterpart(nominal, uncertain)
        r = solve(cp)
        ref = float(data["objective"][0])
        assert abs(r.objective - ref) <= RSOME_TOL * abs(ref), (problem, k, r.objective, ref)
        x = np.array([r.values["x"][j] for j in range(len(r.values["x"]))])
        assert np.linalg.norm(x - data["x"]) <= 1e-4 * max(1.0, np.linalg.norm(data["x"])), (problem, k)
        v = verify(nominal, uncertain, cp)
        assert v.verified, (problem, k, v.table())


@needs_gurobi
@pytest.mark.parametrize("problem", list(BATTERY))
def test_battery_verified_by_pyros(problem):
    data = rsome_instances()[(problem, 1)]
    nominal, uncertain = BATTERY[problem](data)
    v = verify(nominal, uncertain, robust_counterpart(nominal, uncertain), method="pyros",
               local_solver="gurobi_direct", global_solver="gurobi_direct")
    assert v.semi_infinite.termination == "robust_optimal" and v.verified, v.table()


def test_ranged_row_and_an_off_centre_box_verified():
    """A ranged row l <= (a + delta)'x <= u with delta in an off-centre box, an objective term under a ball at
    p = 1.5 with a negative weight: both sides of the row robust (the upper side in ``fit_upper``), verified by the
    cutting planes; and against the LP written here: with x >= 0, the worst cases are a + upper and a + lower."""
    m = pyo.ConcreteModel("ranged")
    m.J = pyo.RangeSet(0, 2)
    m.x = pyo.Var(m.J, bounds=(0, 4))
    a, c = np.array([1.0, 2.0, 1.5]), np.array([-1.0, -1.5, -0.5])
    m.obj = pyo.Objective(expr=sum(c[j] * m.x[j] for j in m.J) + 0.1 * sum(m.x[j] ** 2 for j in m.J))
    m.fit = pyo.Constraint(expr=pyo.inequality(1.0, sum(a[j] * m.x[j] for j in m.J), 6.0))
    lo, up = np.array([-0.1, -0.3, 0.0]), np.array([0.2, 0.1, 0.4])
    x = [m.x[j] for j in m.J]
    uncertain = [UncertainRow(m.fit, x, Box(tuple(lo), tuple(up))), UncertainTerm(x, NormBall(1.5, 0.2), -0.5)]
    cp = robust_counterpart(m, uncertain)
    assert cp.component("fit_upper") is not None and "upper side" in cp.fit.doc
    v = verify(m, uncertain, cp)
    assert v.verified, v.table()
    hand = m.clone()
    hand.fit.deactivate()
    hand.low = pyo.Constraint(expr=sum((a[j] + lo[j]) * hand.x[j] for j in hand.J) >= 1.0)
    hand.high = pyo.Constraint(expr=sum((a[j] + up[j]) * hand.x[j] for j in hand.J) <= 6.0)
    hand.t = pyo.Var(domain=pyo.NonNegativeReals)
    hand.z = pyo.Var(hand.J, domain=pyo.NonNegativeReals)
    hand.t.set_value(0.01)
    q = conjugate(1.5)  # |x|_3 <= t as sum_j x_j^3 t^-2 <= t (x >= 0), the perspective rows
    hand.persp = pyo.Constraint(hand.J, rule=lambda h, j: h.x[j] ** q * h.t ** (1 - q) <= h.z[j])
    hand.sum = pyo.Constraint(expr=sum(hand.z[j] for j in hand.J) <= hand.t)
    hand.obj.set_value(hand.obj.expr + 0.5 * 0.2 * hand.t)
    truth = solve(hand, "ipopt").objective
    assert rel_gap(v.counterpart_objective, truth, abs(truth)) <= 1e-7
