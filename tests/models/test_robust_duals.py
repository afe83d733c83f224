"""The duals (23D), (27D), (28D), (29D) against independent truths: the primal SOCPs solved by
other solvers, the primal objective evaluated in numpy at the w recovered from the dual (a
certificate: weak duality makes both optimal), the deterministic dual (16) with the constant
computed by hand, and the KKT conditions computed by hand."""

import math

import numpy as np
import pytest
from pyomo.core.expr.compare import compare_expressions

from tpm_models import build, solve
from tpm_models import solvers as S
from tpm_models.checks.robust import check_robust_duals, rel_gap
from tpm_models.cli import main
from tpm_models.models.norms import conjugate, norm
from tpm_models.models.registry import REGISTRY, group_keys, model_info
from tpm_models.models.robust_duals import multipliers_from_primal, omitted_constant, recover_w_23, recover_w_socp
from tpm_models.solvers.compare import objective_scale

NU, ALPHA, EPS = 0.3, 1.0, 0.02
TOL = 1e-6  # objectives, relative to the sum of |terms| of the primal (robust_checks docstring)
SOCP = {"27D": (1.0, 27), "28D": (2.0, 28), "29D": (math.inf, 29)}


def primal_value(X, y, c, nu, alpha, eps, p, w):
    """Objective of (23) at ``w``, minimised over theta and xi in numpy (the terms at the optimum, for
    a scale): xi_i = max(0, -(x_i'w + theta - eps |w|_p')), and the minimum over theta of the convex
    piecewise-linear rest lies at a breakpoint theta = -(x_i'w - eps |w|_p')."""
    own, other = X[y == c], X[y != c]
    n = norm(w, conjugate(p))
    a, b = nu / len(other), alpha / len(own)
    scores = own @ w - eps * n
    fixed = 0.5 * w @ w + a * np.sum(other @ w + eps * n)
    values = [nu * th + b * np.maximum(0.0, -(scores + th)).sum() for th in -scores]
    return fixed + min(values)


def constant_by_hand(X, y, c, nu):
    """-1/2 (nu/m_-c)^2 e'X_-c'X_-c e as a double sum of inner products (errata 1)."""
    other = X[y != c]
    return -0.5 * (nu / len(other)) ** 2 * sum(float(u @ v) for u in other for v in other)


# ---------------------------------------------------------------- registry and command line


def test_registered_beside_the_paper_models():
    assert sorted(group_keys("dual")) == ["23D", "27D", "28D", "29D"]
    assert all(isinstance(k, int) for k in group_keys("paper"))
    for key in group_keys("dual"):
        assert model_info(key).role == "dual" and model_info(key.lower()) is REGISTRY[key]
    assert model_info("28D").model_class == "SOCP" and model_info("28D").robust_p == (2.0,)


def test_build_validates_p_and_eps(iris):
    X, y = iris
    with pytest.raises(ValueError, match="takes p in"):
        build("27D", X, y, 0, NU, ALPHA, p=2, eps=EPS)
    with pytest.raises(ValueError, match="give eps"):
        build("23D", X, y, 0, NU, ALPHA, p=2)
    with pytest.raises(ValueError, match="p must be"):
        build("23D", X, y, 0, NU, ALPHA, p=0.5, eps=EPS)
    with pytest.raises(ValueError, match="not a model of the paper"):
        build("30D", X, y, 0, NU, ALPHA, p=2, eps=EPS)
    assert S.title(build("29d", X, y, 0, NU, ALPHA, eps=EPS)).startswith("(29D)")


def test_cli_lists_and_solves_a_dual(capsys, iris):
    assert main(["models"]) == 0
    listed = capsys.readouterr().out
    assert all(f"({k})" in listed for k in group_keys("dual")) and "(19)" in listed
    code = main(["solve", "--model", "28D", "--dataset", "iris", "--class", "0", "--nu", "0.3", "--alpha", "1",
                 "--eps", "0.02", "--json"])
    import json

    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["model"] == "28D" and {"lam", "mu", "tau", "z"} <= set(out["values"])
    X, y = iris
    truth = solve(build(28, X, y, 0, NU, ALPHA, eps=EPS), "scip")
    assert abs(out["objective"] - truth.objective) <= 1e-7 * abs(truth.objective)


# ---------------------------------------------------------------- strong duality, by another solver


@pytest.mark.parametrize("eq", ["27D", "28D", "29D"])
@pytest.mark.parametrize("name", ["scip", "gurobi", "xpress", "cplex"])
def test_conic_dual_equals_primal_solved_by_another_solver(iris, eq, name):
    if name not in S.available_solvers("SOCP"):
        pytest.skip(f"{name} is not installed")
    X, y = iris
    p, primal_eq = SOCP[eq]
    model = build(primal_eq, X, y, 2, NU, ALPHA, eps=EPS)
    primal = solve(model, name)
    dual = solve(build(eq, X, y, 2, NU, ALPHA, eps=EPS))  # Ipopt
    assert omitted_constant(eq, X, y, 2, NU) == 0.0
    assert rel_gap(primal.objective, dual.objective, objective_scale(model)) < TOL


@pytest.mark.parametrize("eq", ["27D", "28D", "29D"])
def test_conic_dual_solved_by_another_solver(wine, eq):
    """The dual itself through a second SOCP backend (Gurobi, else SCIP) gives Ipopt's optimum."""
    name = "gurobi" if "gurobi" in S.available_solvers("SOCP") else "scip"
    X, y = wine
    a = solve(build(eq, X, y, 1, NU, ALPHA, eps=EPS))
    b = solve(build(eq, X, y, 1, NU, ALPHA, eps=EPS), name)
    assert abs(a.objective - b.objective) <= 1e-6 * abs(a.objective)


# ---------------------------------------------------------------- certificates in numpy


CERTIFICATE_TOL = {"ipopt": 1e-7, "clarabel": 1e-6}
"""Relative gap between the primal value at the recovered w and the dual's value, per solver of the dual. Ipopt
stops at 1e-9 relative; Clarabel (the default of SOCP) takes a stalled point that meets a 1e-8 duality gap relative
to max(1, |objective|) -- absolute on these objectives of ~4e-4 -- so 1e-6 (measured: 4.7e-7, Iris class 1, (29D))."""


@pytest.mark.parametrize("solver", ["ipopt", "clarabel"])
@pytest.mark.parametrize("eq", ["27D", "28D", "29D"])
@pytest.mark.parametrize("data,c", [("iris", 0), ("iris", 1), ("wine", 2)])
def test_primal_value_at_recovered_w_equals_the_dual(request, eq, data, c, solver):
    """Weak duality: every w gives (23) >= opt >= every dual point. The w recovered from the dual,
    put into the primal objective computed in numpy, meets the dual's value: both are optimal."""
    if solver not in S.available_solvers("SOCP"):
        pytest.skip(f"{solver} not installed")
    X, y = request.getfixturevalue(data)
    p, _ = SOCP[eq]
    dual = solve(build(eq, X, y, c, NU, ALPHA, eps=EPS), solver)
    w = recover_w_socp(dual.values)
    upper = primal_value(X, y, c, NU, ALPHA, EPS, p, w)
    assert upper >= dual.objective - 1e-10
    assert (upper - dual.objective) <= CERTIFICATE_TOL[solver] * max(abs(upper), 0.5 * w @ w)


@pytest.mark.parametrize("p", [1.0, 2.0, math.inf, 3.0, 1.5])
def test_23d_certificate_and_constant(wine, p):
    X, y = wine
    c = 0
    dual = solve(build("23D", X, y, c, NU, ALPHA, p=p, eps=EPS))
    k = constant_by_hand(X, y, c, NU)
    assert omitted_constant("23D", X, y, c, NU) == pytest.approx(k, rel=1e-12)
    w = recover_w_23(X, y, c, NU, dual.values)
    upper = primal_value(X, y, c, NU, ALPHA, EPS, p, w)
    assert upper >= dual.objective + k - 1e-10
    assert (upper - (dual.objective + k)) <= 1e-7 * abs(k)


# ---------------------------------------------------------------- KKT by hand


def test_kkt_of_28d_by_hand(iris):
    """Cones, stationarity and complementarity of (28D), each computed in numpy."""
    X, y = iris
    c = 1
    v = solve(build("28D", X, y, c, NU, ALPHA, eps=EPS)).values
    own, other = X[y == c], X[y != c]
    a, b = NU / len(other), ALPHA / len(own)
    lam, z = v["lam"], v["z"]
    r = a * EPS * len(other) + EPS * lam.sum()
    # dual feasibility: the rows and the cones
    np.testing.assert_allclose(z, a * other.sum(axis=0) - own.T @ lam, atol=1e-10)
    assert abs(lam.sum() - NU) < 1e-10 and lam.min() >= -1e-12 and lam.max() <= b + 1e-12
    assert abs(v["tau"] + v["sigma"] - r) < 1e-10
    assert abs(v["rho"] + v["mu"] - 0.5) < 1e-10 and abs(v["zeta"] + v["mu"] + 0.5) < 1e-10
    assert v["tau"] >= np.linalg.norm(z) - 1e-9 and v["rho"] >= math.hypot(v["sigma"], v["zeta"]) - 1e-9
    # the primal point it certifies: t = -sigma = |w|, u, v from u - v = t^2, u + v = 1
    w = recover_w_socp(v)
    t = -v["sigma"]
    assert abs(t - np.linalg.norm(w)) < 1e-8
    u_, v_ = (1 + t**2) / 2, (1 - t**2) / 2
    # complementarity of the cones: <(t, w), (tau, z)> = 0 and <(u, t, v), (rho, sigma, zeta)> = 0
    assert abs(t * v["tau"] + w @ z) < 1e-9
    assert abs(u_ * v["rho"] + t * v["sigma"] + v_ * v["zeta"]) < 1e-9
    # mu = -t^2/2 (the value of the dual) and the margins: lam_i > 0 only where the row can be tight
    assert abs(v["mu"] + t**2 / 2) < 1e-9
    scores = own @ w - EPS * t
    theta = -scores[(lam > 1e-6) & (lam < b - 1e-6)] if np.any((lam > 1e-6) & (lam < b - 1e-6)) else None
    if theta is not None:
        np.testing.assert_allclose(theta, theta[0], atol=1e-6)  # one hyperplane through the free points


def test_dual_rows_multipliers_are_the_primal_solution(iris):
    """The duals of the dual's stationarity rows (its solver's multipliers) are the primal w, t, u, v of
    (29) solved by another solver."""
    X, y = iris
    d = solve(build("29D", X, y, 0, NU, ALPHA, eps=EPS))
    name = "scip" if "scip" in S.available_solvers("SOCP") else "ipopt"
    p = solve(build(29, X, y, 0, NU, ALPHA, eps=EPS), name)
    np.testing.assert_allclose(d.duals["stat_w"], p.values["w"], atol=1e-6)
    np.testing.assert_allclose(d.duals["stat_s"], p.values["s"], atol=1e-6)
    for row, var in (("stat_t", "t"), ("stat_u", "u"), ("stat_v", "v")):
        assert abs(d.duals[row] - p.values[var]) < 1e-6


@pytest.mark.parametrize("eq", ["27D", "28D", "29D"])
def test_multipliers_of_the_primal(wine, eq):
    X, y = wine
    p, primal_eq = SOCP[eq]
    primal = solve(build(primal_eq, X, y, 0, NU, ALPHA, eps=EPS))  # Ipopt: duals of every row
    dual = solve(build(eq, X, y, 0, NU, ALPHA, eps=EPS))
    for name, value in multipliers_from_primal(eq, primal.values, primal.duals).items():
        np.testing.assert_allclose(dual.values[name], value, atol=1e-6, err_msg=name)


# ---------------------------------------------------------------- eps = 0: (16)


@pytest.mark.parametrize("eq,p", [("27D", 1.0), ("28D", 2.0), ("29D", math.inf), ("23D", 1.5)])
def test_eps_zero_is_16(wine, eq, p):
    X, y = wine
    c = 2
    d16 = solve(build(16, X, y, c, NU, ALPHA))
    d0 = solve(build(eq, X, y, c, NU, ALPHA, p=p, eps=0.0))
    k = constant_by_hand(X, y, c, NU)
    assert abs((d0.objective + omitted_constant(eq, X, y, c, NU)) - (d16.objective + k)) <= 1e-8 * abs(k)
    np.testing.assert_allclose(d0.values["lam"], d16.values["lam"], atol=1e-6)


def test_check_rows_pass(iris):
    rows = check_robust_duals(*iris, 0, NU, ALPHA, EPS, "iris", multiplier_solvers=(), general_p=(3.0,))
    assert len(rows) == 8 + 9 + 12 and all(r.passed for r in rows), [r for r in rows if not r.passed]


@pytest.mark.parametrize("eq, p", [("27D", 1.0), ("28D", 2.0), ("29D", math.inf), ("23D", 1.0), ("23D", 2.0),
                                   ("23D", math.inf), ("23D", 1.5)])
def test_dual_rows_written_from_numbers_are_the_operators_expressions(rng, eq, p):
    """The duals' rows and objective, written as one ``LinearExpression`` per :math:`(X_c\\lambda)_j` from the
    numbers (``robust_duals._x_lam``, ``_radius_terms``: no ``Param`` ``x[i, j]``), are, node for node and float for
    float, what Pyomo's operators make of the equations as the paper writes them, point by point: sum over
    :math:`\\mathcal X_c` of :math:`x_{ij}\\lambda_i`, of :math:`\\varepsilon_i\\lambda_i`, and over :math:`\\mathcal
    X_{-c}` of :math:`x_{ij}` and :math:`\\varepsilon_i` (the old builders' expressions, whose ``x[i, j]`` and
    ``eps[i]`` were immutable: numbers in the expression). The data hold an exact 0 and 1 (Pyomo keeps ``0.0*lam``
    and writes ``1*lam`` as the variable), and one radius is 1."""
    X = rng.random((30, 4))
    X[0, 1], X[3, 2] = 0.0, 1.0
    y = np.arange(30) % 3
    eps = np.linspace(0.0, 0.1, 30)
    eps[3] = 1.0
    model = build(eq, X, y, 0, NU, ALPHA, p=p, eps=eps)
    own, other = list(model.X_c), list(model.X_minus_c)
    assert model.component("x") is None  # the data are the rows' numbers
    lam = model.lam

    def x_lam(j):
        return sum(float(X[i - 1, j - 1]) * lam[i] for i in own)

    def a_xbar(j):
        return model.nu / len(other) * sum(float(X[i - 1, j - 1]) for i in other)

    constant = model.nu / len(other) * sum(float(eps[i - 1]) for i in other)
    lam_part = sum(float(eps[i - 1]) * lam[i] for i in own)
    rows = {"sum_lam": {None: sum(lam[i] for i in own) == model.nu}}
    if eq in SOCP:
        z, pi_p, pi_m = model.z, model.component("pi_plus"), model.component("pi_minus")
        rows["stat_w"] = {j: (z[j] + x_lam(j) == a_xbar(j)) if eq == "28D" else
                          (z[j] + x_lam(j) - pi_p[j] + pi_m[j] == a_xbar(j)) for j in model.J}
        if eq == "28D":
            rows["stat_t"] = {None: model.tau + model.sigma - lam_part == constant}
        elif eq == "27D":
            rows["stat_s"] = {None: sum(pi_p[j] + pi_m[j] for j in model.J) - lam_part <= constant}
        else:
            rows["stat_s"] = {j: pi_p[j] + pi_m[j] - lam_part == constant for j in model.J}
        objective = model.mu
    else:
        rows["radius"] = {None: model.r - lam_part == constant}
        beta = model.beta
        objective = (-0.5 * sum((x_lam(j) + beta[j]) ** 2 for j in model.J)
                     + sum(a_xbar(j) * (x_lam(j) + beta[j]) for j in model.J))
    for name, expected in rows.items():
        for index, expr in expected.items():
            assert compare_expressions(model.component(name)[index].expr, expr), (name, index)
    assert compare_expressions(model.obj.expr, objective)


def test_check_rows_with_a_backend_of_one_shape(iris):
    """``linear-decomposition`` takes (28) (one radius, p = 2: its norm shape) and refuses (27) and (29) before it
    runs: the (28D) multipliers tie against its duals (derived in closed form, independent of Clarabel's), the other
    two rows are skipped as refused, never raised."""
    rows = check_robust_duals(*iris, 0, NU, ALPHA, EPS, "iris", multiplier_solvers=("linear-decomposition",),
                              general_p=())
    ours = {r.tie.split(",")[0]: r for r in rows if r.tie.endswith(", linear-decomposition")}
    assert set(ours) == {"(27D) = multipliers of (27)", "(28D) = multipliers of (28)", "(29D) = multipliers of (29)"}
    assert ours["(28D) = multipliers of (28)"].passed and not ours["(28D) = multipliers of (28)"].skipped
    for eq in (27, 29):
        row = ours[f"({eq}D) = multipliers of ({eq})"]
        assert row.skipped and "refused, not of its shape" in row.note, row
    assert all(r.passed for r in rows if not r.skipped), [r for r in rows if not r.passed]
