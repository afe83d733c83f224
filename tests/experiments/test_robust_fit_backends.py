"""The backends of ``fit_linear_23``: CPLEX against the Gurobi path and against an independent truth, the registry's
Pyomo builder of (23) solved by ``tpm_models.solvers.solve`` (PIQP for the QPs p = 1, inf and eps = 0; Ipopt for the
cone p = 2); a failed solve raises; ``solver="auto"`` hands to CPLEX what Gurobi's licence refuses."""

import math
from importlib.util import find_spec

import numpy as np
import pytest

from tpm_models import build, solve
from tpm_models.experiments.robust import fit_linear_23
from tpm_models.models.norms import dual_norm

pytest.importorskip("cplex", reason="cplex is not installed (the 'solvers' extra: pip install -e '.[solvers]')")
needs_gurobi = pytest.mark.skipif(find_spec("gurobipy") is None, reason="gurobipy is not installed")

RATIOS = [0.3, 0.7]
# Tolerances. The solvers stop at relative gaps of 1e-9 (PIQP, Ipopt) to 1e-10 (CPLEX, Gurobi barrier) on objective
# values of size <= 0.3 here, so objectives agree to OBJ_RTOL relative, with OBJ_ATOL for an optimum near 0 (w = 0:
# Iris, p = inf, eps = 0.05, class 1). (23) minimised over theta and xi is 1-strongly convex in w (1/2 ||w||^2 plus
# convex terms), so an objective error delta allows ||w - w*||_2 <= sqrt(2 delta): delta <= 1e-10 gives 1.4e-5 per
# solution. Measured worst cases: objective 1.1e-6 relative (Gurobi, Iris p = 2, eps = 0.05; CPLEX 3.7e-8), w 1.0e-5
# between CPLEX and Gurobi (Gurobi's cone solves are the least accurate), 1.4e-6 between CPLEX and Pyomo.
OBJ_RTOL, OBJ_ATOL = 1e-6, 1e-9
W_TOL = 2e-5


def subset(data, k=20):
    """The first k points of each class."""
    X, y = data
    idx = np.concatenate([np.flatnonzero(y == c)[:k] for c in range(3)])
    return X[idx], y[idx]


def objective(w, theta, X, y, c, nu, p, eps, alpha=1.0):
    """(23) at (w, theta) with the smallest feasible xi."""
    Xc, Xo = X[y == c], X[y != c]
    norm = dual_norm(w, p)
    xi = np.maximum(0.0, -(Xc @ w + theta - eps * norm))
    return 0.5 * w @ w + nu / len(Xo) * (Xo.sum(0) @ w) + nu * eps * norm + nu * theta + alpha / len(Xc) * xi.sum()


def close(value, truth):
    return abs(value - truth) <= OBJ_RTOL * abs(truth) + OBJ_ATOL


@pytest.fixture(scope="module", params=["iris", "wine"])
def data(request):
    return subset(request.getfixturevalue(request.param))


@pytest.mark.parametrize("eps", [0.0, 0.05])
@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_cplex_equals_pyomo_truth(data, p, eps):
    X, y = data
    fits = fit_linear_23(X, y, 3, RATIOS, p, eps, solver="cplex")
    for (W, T), nu in zip(fits, RATIOS):
        for c in range(3):
            truth = solve(build(23, X, y, c, nu, 1.0, p=p, eps=eps))
            assert close(objective(W[c], T[c], X, y, c, nu, p, eps), truth.objective), (nu, c)
            assert np.linalg.norm(W[c] - truth.values["w"]) <= W_TOL, (nu, c)


@needs_gurobi
@pytest.mark.parametrize("eps", [0.0, 0.05])
@pytest.mark.parametrize("p", [1.0, 2.0, math.inf])
def test_cplex_equals_gurobi(data, p, eps):
    X, y = data
    used: dict[str, int] = {}
    cplex_fits = fit_linear_23(X, y, 3, RATIOS, p, eps, solver="cplex")
    gurobi_fits = fit_linear_23(X, y, 3, RATIOS, p, eps, solver="gurobi", used=used)
    assert used == {"gurobi": 3}
    # theta is chosen on an interval whose ends are scores x'w - eps ||w||_p': it moves by at most
    # (max ||x||_2 + eps sqrt(n)) ||dw||_2
    theta_tol = (np.linalg.norm(X, axis=1).max() + eps * math.sqrt(X.shape[1])) * W_TOL
    for (Wc, Tc), (Wg, Tg), nu in zip(cplex_fits, gurobi_fits, RATIOS):
        for c in range(3):
            assert close(objective(Wc[c], Tc[c], X, y, c, nu, p, eps), objective(Wg[c], Tg[c], X, y, c, nu, p, eps))
            assert np.linalg.norm(Wc[c] - Wg[c]) <= W_TOL, (nu, c)
            assert abs(Tc[c] - Tg[c]) <= theta_tol, (nu, c)


@needs_gurobi
def test_auto_hands_to_cplex_what_gurobi_refuses(rng, monkeypatch):
    """Without Clarabel (hidden here), a class model with more than 200 variables (n + m_c + 2 = 5 + 210 + 2) is
    refused by the pip licence of Gurobi; "auto" then solves it by CPLEX, the same solution as solver="cplex"."""
    import dataclasses

    import gurobipy as gp

    from tpm_models.solvers.backends.registry import BACKENDS

    monkeypatch.setitem(BACKENDS, "clarabel", dataclasses.replace(BACKENDS["clarabel"], package="no_such_package_"))

    X = rng.random((300, 5))
    y = np.repeat([0, 1], [210, 90])
    X[y == 1] += 0.3
    used: dict[str, int] = {}
    (W, T), = fit_linear_23(X, y, 2, [0.4], 2.0, 0.05, solver="auto", used=used)
    (Wc, Tc), = fit_linear_23(X, y, 2, [0.4], 2.0, 0.05, solver="cplex")
    assert sum(used.values()) == 2
    assert np.linalg.norm(W - Wc) <= 2 * W_TOL
    try:  # a size-limited licence refuses class 0 (and takes class 1: 5 + 90 + 2 variables)
        with gp.Env(params={"OutputFlag": 0}) as env, gp.Model(env=env) as model:
            x = model.addMVar(201)
            model.setObjective(x @ x)
            model.optimize()
    except gp.GurobiError as exc:
        assert exc.errno == gp.GRB.Error.SIZE_LIMIT_EXCEEDED
        assert used == {"cplex": 1, "gurobi": 1}
        with pytest.raises(RuntimeError, match="Gurobi refused"):
            fit_linear_23(X, y, 2, [0.4], 2.0, 0.05, solver="gurobi")
    else:
        assert used == {"gurobi": 2}  # a full licence


@pytest.mark.parametrize("p, eps", [(2.0, 0.05), (1.0, 0.05), (2.0, 0.0)])
def test_a_failed_cplex_solve_raises(iris, monkeypatch, p, eps):
    """With every iteration limit at 0 no solve (barrier, and for a QP the simplex retries) ends optimal."""
    import cplex

    solve_ = cplex.Cplex.solve

    def stopped(self):
        self.parameters.barrier.limits.iteration.set(0)
        self.parameters.simplex.limits.iterations.set(0)
        return solve_(self)

    monkeypatch.setattr(cplex.Cplex, "solve", stopped)
    with pytest.raises(RuntimeError, match=r"CPLEX did not solve \(23\) \(class 0.*status \d+"):
        fit_linear_23(*subset(iris), 3, [0.5], p, eps, solver="cplex")


def test_cplex_size_limit_raises(rng):
    """The Community Edition's limit (1000 variables) is a RuntimeError too, not a crash or a silent result."""
    X = rng.random((1100, 2))
    y = (np.arange(1100) >= 1050).astype(int)
    with pytest.raises(RuntimeError, match="CPLEX did not solve"):
        fit_linear_23(X, y, 2, [0.5], 2.0, 0.0, solver="cplex")


def test_unknown_solver():
    with pytest.raises(ValueError, match="solver must be one of"):
        fit_linear_23(np.eye(3), np.array([0, 1, 2]), 3, [0.5], 2.0, 0.0, solver="mosek")
