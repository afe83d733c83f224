"""The Wasserstein model (23W) (issue 50, item 3; ``docs/wasserstein.md``).

Truths, each computed here and not by the code under test:

* :math:`\\varepsilon = 0`: (15) solved by another route ((16) by PIQP plus the constant the dual omits, errata 1);
* :math:`\\nu = \\alpha`: (23) (Proposition 3), objective and :math:`w`;
* :math:`\\nu < \\alpha`: the closed forms of both objectives evaluated here in numpy, their difference
  :math:`\\frac{\\alpha}{m_c}\\sum\\min(\\varepsilon\\|w\\|_{p'}, (x^\\top w+\\theta)_+)` (Proposition 2), and the
  sandwich opt(23) <= opt(23W) <= opt(23) + that difference at (23)'s point;
* the worst case: a distribution of each ball built here (the dual-norm direction written here) whose transport cost
  is the radius and whose expectations equal the model's dual terms; random distributions of the balls never beat
  them (weak duality, sampled).

Tolerances: the solvers stop at ~1e-9 (Clarabel, PIQP); objectives are compared relative to the sum of the absolute
values of their terms (they cancel to 1e-4 of it), held to 1e-7; :math:`w` to 1e-5 (the objective is strongly convex
in :math:`w` only: a gap d moves :math:`w` by ~sqrt(2d)).
"""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
import pytest

from tpm_models import build, solve
from tpm_models.checks.wasserstein import check_wasserstein
from tpm_models.models.wasserstein import gap_to_23, worst_case_terms

NU, ALPHA, EPS = 0.3, 1.0, 0.02
OBJ_TOL, W_TOL = 1e-7, 1e-5
ABS_TOL = 1e-9
"""The solvers' absolute gap: where robustness drives w to 0 (p = inf, eps = 0.03 on Iris class 1) the terms are
1e-14 and only an absolute floor is meaningful."""
PS = (1.0, 1.5, 2.0, 3.0, math.inf)


def q_of(p: float) -> float:
    return math.inf if p == 1 else 1.0 if math.isinf(p) else p / (p - 1)


def direction(w: np.ndarray, p: float) -> np.ndarray:
    """d with |d|_p = 1 and d'w = |w|_q (Hölder's equality case), written here."""
    if p == 1:
        d = np.zeros_like(w)
        k = int(np.argmax(np.abs(w)))
        d[k] = np.sign(w[k])
        return d
    if math.isinf(p):
        return np.where(w >= 0, 1.0, -1.0)
    q = q_of(p)
    d = np.sign(w) * np.abs(w) ** (q - 1)
    return d / np.linalg.norm(d, ord=p)


def f15_parts(X, y, c, w, theta):
    own, other = X[y == c] @ w + theta, X[y != c] @ w + theta
    return 0.5 * w @ w, other.mean(), np.maximum(-own, 0).mean(), own


def f_23w(X, y, c, nu, alpha, p, eps, w, theta):
    """(23W)'s objective with xi, kappa at their least, in closed form."""
    quad, lin, hinge, _ = f15_parts(X, y, c, w, theta)
    lip = np.linalg.norm(w, ord=q_of(p))
    return quad + nu * (lin + eps * lip) + alpha * (hinge + eps * lip)


def f_23(X, y, c, nu, alpha, p, eps, w, theta):
    """(23)'s objective with xi at its least, every radius eps, in closed form."""
    quad, lin, _, own = f15_parts(X, y, c, w, theta)
    lip = np.linalg.norm(w, ord=q_of(p))
    return quad + nu * (lin + eps * lip) + alpha * np.maximum(-own + eps * lip, 0).mean()


def scale_of(X, y, c, nu, alpha, p, eps, w, theta):
    """The sum of the absolute values of the objective's terms at (w, theta)."""
    quad, lin, hinge, _ = f15_parts(X, y, c, w, theta)
    lip = np.linalg.norm(w, ord=q_of(p))
    return quad + nu * abs(lin) + alpha * hinge + (nu + alpha) * eps * lip


def solved(eq, X, y, c, nu, alpha, **kw):
    r = solve(build(eq, X, y, c, nu, alpha, **kw))
    return r, np.asarray(r.values["w"], float), float(r.values["theta"])


@pytest.mark.parametrize("data", ["iris", "wine"])
@pytest.mark.parametrize("p", PS)
def test_eps_0_is_15(request, data, p):
    X, y = request.getfixturevalue(data)
    for c in (0, 1, 2):
        r0, w0, t0 = solved("23W", X, y, c, NU, ALPHA, p=p, eps=0.0)
        r16 = solve(build(16, X, y, c, NU, ALPHA), "piqp")
        other = X[y != c]
        opt15 = r16.objective - 0.5 * (NU / len(other)) ** 2 * float(np.sum(other.sum(axis=0) ** 2))  # errata 1
        s = scale_of(X, y, c, NU, ALPHA, p, 0.0, w0, t0)
        assert abs(r0.objective - opt15) <= OBJ_TOL * s + ABS_TOL, (c, r0.objective, opt15)
        lam = np.asarray(r16.values["lam"], float)
        w17 = X[y == c].T @ lam - NU / len(other) * other.sum(axis=0)  # (17)
        assert np.linalg.norm(w0 - w17) <= W_TOL * max(1.0, np.linalg.norm(w17))


@pytest.mark.parametrize("data", ["iris", "wine"])
@pytest.mark.parametrize("p", (1.0, 2.0, 3.0, math.inf))
def test_nu_equal_alpha_coincides_with_23(request, data, p):
    """Proposition 3: at nu = alpha the two models have the same optimum and the same w."""
    X, y = request.getfixturevalue(data)
    for c in (0, 1, 2):
        rw, ww, tw = solved("23W", X, y, c, ALPHA, ALPHA, p=p, eps=EPS)
        r23, w23, _ = solved(23, X, y, c, ALPHA, ALPHA, p=p, eps=EPS)
        s = scale_of(X, y, c, ALPHA, ALPHA, p, EPS, ww, tw)
        assert abs(rw.objective - r23.objective) <= OBJ_TOL * s + ABS_TOL, (c, rw.objective, r23.objective)
        assert np.linalg.norm(ww - w23) <= W_TOL * max(1.0, np.linalg.norm(w23)), c


@pytest.mark.parametrize("data", ["iris", "wine"])
@pytest.mark.parametrize("p", (1.0, 2.0, 3.0, math.inf))
def test_23_bounds_23w_from_below_and_the_gap_from_above(request, data, p):
    """Proposition 2 at nu < alpha: opt(23) <= opt(23W) <= opt(23) + G(w23, theta23), G computed here; and strict:
    the per-point balls (23) are not the Wasserstein ball here."""
    X, y = request.getfixturevalue(data)
    for c in (0, 1, 2):
        rw, ww, tw = solved("23W", X, y, c, NU, ALPHA, p=p, eps=EPS)
        r23, w23, t23 = solved(23, X, y, c, NU, ALPHA, p=p, eps=EPS)
        own = X[y == c] @ w23 + t23
        lip = np.linalg.norm(w23, ord=q_of(p))
        G = ALPHA * np.minimum(EPS * lip, np.maximum(own, 0)).mean()
        s = scale_of(X, y, c, NU, ALPHA, p, EPS, ww, tw)
        assert r23.objective <= rw.objective + OBJ_TOL * s + ABS_TOL
        assert rw.objective <= r23.objective + G + OBJ_TOL * s + ABS_TOL, (c, rw.objective - r23.objective, G)
        assert rw.objective - r23.objective > 0.1 * G > 1e3 * OBJ_TOL * s, c  # a real gap, not round-off
        assert gap_to_23(X, y, c, ALPHA, p, EPS, w23, t23) == pytest.approx(G, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("p", PS)
def test_the_objectives_differ_by_the_stated_gap_at_every_point(iris, rng, p):
    """At random (w, theta): the model's objective (xi, kappa at their least) = the closed form f_23w, and
    f_23w - f_23 = gap_to_23 >= 0 (Proposition 2 pointwise)."""
    X, y = iris
    m = build("23W", X, y, 1, NU, ALPHA, p=p, eps=EPS)
    for _ in range(20):
        w, theta = rng.normal(size=X.shape[1]), rng.normal()
        for j in m.J:
            m.w[j].set_value(float(w[j - 1]))
        m.theta.set_value(theta)
        own = X[y == 1] @ w + theta
        for k, i in enumerate(m.X_c):
            m.xi[i].set_value(float(max(-own[k], 0.0)))
        lip = float(np.linalg.norm(w, ord=q_of(p)))
        m.kappa_c.set_value(lip)
        m.kappa_minus_c.set_value(lip)
        fw = f_23w(X, y, 1, NU, ALPHA, p, EPS, w, theta)
        assert pyo.value(m.obj) == pytest.approx(fw, rel=1e-12)
        gap = fw - f_23(X, y, 1, NU, ALPHA, p, EPS, w, theta)
        assert gap >= -1e-14
        assert gap_to_23(X, y, 1, ALPHA, p, EPS, w, theta) == pytest.approx(gap, rel=1e-9, abs=1e-14)
        lin, hinge = worst_case_terms(X, y, 1, p, EPS, EPS, w, theta)
        quad, lin0, hinge0, _ = f15_parts(X, y, 1, w, theta)
        assert lin == pytest.approx(lin0 + EPS * lip) and hinge == pytest.approx(hinge0 + EPS * lip)


@pytest.mark.parametrize("data", ["iris", "wine"])
@pytest.mark.parametrize("p", PS)
def test_the_worst_case_is_attained_in_the_balls(request, rng, data, p):
    """At (23W)'s optimum, eps_c != eps_-c: the distributions built here lie in the balls (cost = radius) and their
    expectations equal the model's terms E[.] + eps kappa (a primal value equal to a dual bound: the supremum); no
    sampled distribution of the balls exceeds them."""
    X, y = request.getfixturevalue(data)
    eps_c, eps_o = 0.03, 0.01
    for c in (0, 1, 2):
        r = solve(build("23W", X, y, c, NU, ALPHA, p=p, eps=eps_c, eps_minus_c=eps_o))
        w, theta = np.asarray(r.values["w"], float), float(r.values["theta"])
        xi, kc, ko = np.asarray(r.values["xi"], float), float(r.values["kappa_c"]), float(r.values["kappa_minus_c"])
        own, other = X[y == c], X[y != c]
        dual_lin = (other @ w + theta).mean() + eps_o * ko
        dual_hinge = xi.mean() + eps_c * kc
        d = direction(w, p)
        assert np.linalg.norm(d, ord=p) == pytest.approx(1.0) and d @ w == pytest.approx(np.linalg.norm(w, ord=q_of(p)))
        # P_-c: every point moved by eps_o d; P_c: the point deepest past H_c moved by m_c eps_c against d
        q_other = other + eps_o * d
        k = int(np.argmax(-(own @ w + theta)))
        assert -(own[k] @ w + theta) >= -1e-8  # theta's optimality: some point of X_c on or past H_c
        q_own = own.copy()
        q_own[k] -= len(own) * eps_c * d
        assert np.linalg.norm(q_other - other, ord=p, axis=1).mean() == pytest.approx(eps_o, rel=1e-12)
        assert np.linalg.norm(q_own - own, ord=p, axis=1).mean() == pytest.approx(eps_c, rel=1e-12)
        e_lin = (q_other @ w + theta).mean()
        e_hinge = np.maximum(-(q_own @ w + theta), 0).mean()
        s = scale_of(X, y, c, NU, ALPHA, p, max(eps_c, eps_o), w, theta)
        assert abs(NU * (e_lin - dual_lin)) + abs(ALPHA * (e_hinge - dual_hinge)) <= OBJ_TOL * s + ABS_TOL, c
        # sampled distributions of the balls: two atoms per point (a mass split), moved at random, scaled so the
        # mean transport cost is the radius
        for _ in range(200):
            for pts, eps, dual, hinge in ((own, eps_c, dual_hinge, True), (other, eps_o, dual_lin, False)):
                split = rng.uniform(size=len(pts))
                moves = rng.normal(size=(2, *pts.shape)) * rng.exponential(size=(2, len(pts), 1)) ** 3
                cost = (split * np.linalg.norm(moves[0], ord=p, axis=1)
                        + (1 - split) * np.linalg.norm(moves[1], ord=p, axis=1)).mean()
                moves *= eps / cost
                vals = [(pts + moves[a]) @ w + theta for a in (0, 1)]
                if hinge:
                    vals = [np.maximum(-v, 0) for v in vals]
                e = (split * vals[0] + (1 - split) * vals[1]).mean()
                assert e <= dual + OBJ_TOL * s + ABS_TOL


@pytest.mark.parametrize("p", PS)
def test_the_optimum_w_0_is_certified(p):
    """A radius large enough drives w to 0 (the cone's apex): the default solve is certified there, w = 0 and the
    optimum 0 (truth: F_W(0, theta) = nu theta + alpha (-theta)_+ >= 0 for nu <= alpha, and at w = 0 the gradient of
    (15)'s terms is smaller than (nu + alpha) eps). Two cones at their apex on the same columns were refused."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(2000, 10))
    y = (X[:, 0] + 0.3 * rng.normal(size=2000) > 0.5).astype(int)
    r = solve(build("23W", X, y, 1, NU, ALPHA, p=p, eps=0.5))
    assert r.optimal and r.certificate is not None and r.certificate["certified"], r.message
    assert abs(r.objective) <= ABS_TOL and np.abs(np.asarray(r.values["w"], float)).max() <= 1e-8


def test_the_tie_in_check_passes(iris):
    rows = check_wasserstein(*iris, 1, NU, ALPHA, EPS, "iris", ps=(2.0, math.inf))
    assert len(rows) == 1 + 2 * 6 and all(r.passed for r in rows), [r for r in rows if not r.passed]


@pytest.mark.parametrize("kw,message", [
    ({"eps": -0.1}, "eps must be >= 0"),
    ({"eps": math.nan}, "eps must be finite"),
    ({"eps": math.inf}, "eps must be finite"),
    ({"eps": np.full(150, 0.02)}, "one radius"),
    ({"eps": True}, "real number"),
    ({"eps": "0.1"}, "real number"),
    ({"eps": 0.02, "eps_minus_c": -1.0}, "eps_minus_c must be >= 0"),
    ({"eps": 0.02, "p": 0.5}, "p must be >= 1"),
    ({"eps": 0.02, "p": math.nan}, "p must be a number"),
])
def test_bad_radii_and_norms_are_refused(iris, kw, message):
    X, y = iris
    kw = {"p": 2.0, **kw}
    with pytest.raises(ValueError, match=message):
        build("23W", X, y, 1, NU, ALPHA, **kw)


def test_bad_data_and_parameters_are_refused(iris):
    X, y = iris
    with pytest.raises(ValueError, match="nu = 2.0 > alpha"):
        build("23W", X, y, 1, 2.0, 1.0, p=2, eps=EPS)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="finite|NaN"):
        build("23W", bad, y, 1, NU, ALPHA, p=2, eps=EPS)
    with pytest.raises(ValueError):
        build("23W", X, y[:-1], 1, NU, ALPHA, p=2, eps=EPS)
    with pytest.raises(ValueError):
        build("23W", X, y, 7, NU, ALPHA, p=2, eps=EPS)
    with pytest.raises(ValueError, match="robust model: give eps"):
        build("23W", X, y, 1, NU, ALPHA, p=2)


def test_solve_and_export_from_the_command_line(iris, capsys, tmp_path):
    import json

    from tpm_models.cli import main

    args = ["--model", "23W", "--dataset", "iris", "--class", "1", "--nu", "0.3", "--alpha", "1", "--p", "2",
            "--eps", "0.02"]
    assert main(["solve", *args, "--param", "eps_minus_c=0.01", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    X, y = iris
    truth = solve(build("23W", X, y, 1, NU, ALPHA, p=2, eps=0.02, eps_minus_c=0.01), "ipopt")
    assert abs(out["objective"] - truth.objective) <= 1e-6 * max(1e-2, abs(truth.objective))
    for fmt in ("lp", "nl", "cbf"):
        path = tmp_path / f"m.{fmt}"
        assert main(["export", *args, "--format", fmt, "--out", str(path)]) == 0
        assert path.stat().st_size > 1000
