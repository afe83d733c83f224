"""The dense Clarabel adapter of (23) (:mod:`tpm_models.learn.fastconic`) against the registry builder of (23).

Truth: ``solve(build(23, ...), "ipopt")`` -- the paper's model as the registry builds it in Pyomo (the norm written
as it is, no epigraph), solved by another solver (Ipopt, an NLP interior point that shares no code with Clarabel).
"""

import math

import numpy as np
import pytest

from tpm_models import build, load_dataset, min_max_scale
from tpm_models import solvers as S
from tpm_models.experiments.robust import fit_linear_23
from tpm_models.learn.fastconic import solve_23_dense
from tpm_models.models.norms import dual_norm
from tpm_models.solvers.compare import objective_scale, rel_dist, rel_gap
from tpm_models.solvers.dispatch import solve

OBJ_TOL = 1e-7
"""Objective agreement relative to the objective's terms (at least OBJ_FLOOR): both solvers stop at 1e-8..1e-9
gaps; measured <= 2.3e-8 on these cases."""
OBJ_FLOOR = 1e-3
"""At w = 0 the optimum and every term are ~1e-11; the error is then taken absolutely at this scale."""
W_TOL = 1e-6
"""``rel_dist`` of w: an interior point's w is off by about the square root of its gap (measured <= 1.0e-7 on these
cases; up to ~4e-6 between Ipopt and Clarabel on the 936 models of ``python -m benchmarks conic-survey``,
where the looser of the two stopped at 1e-8)."""

W_TOL_FIT = 1e-4
"""``rel_dist`` of w between two solvers whose objectives are each within ~1e-9 of the optimum: (23) minimised over
theta and xi is 1-strongly convex in w, so an objective error delta allows ||w - w*|| <= sqrt(2 delta) = 4.5e-5 per
solution (measured 3.8e-5: Wine, p = 2, eps = 0.05, nu = 0.4)."""

CASES = [("iris", 0, 1.0, 0.02), ("iris", 1, 2.0, 0.1), ("iris", 2, math.inf, 0.02), ("iris", 0, 1.5, 0.1),
         ("wine", 1, 3.0, 0.02), ("wine", 2, 2.0, 0.02), ("wine", 0, 1.0, 0.0), ("wine", 1, math.inf, 0.1)]
"""(data set, class, p, eps): every kind of norm row (p' = inf, 2, 1, general), eps = 0, both data sets."""

pytestmark = pytest.mark.skipif(not {"clarabel", "ipopt"} <= set(S.available_solvers("NLP")),
                                reason="needs Clarabel and Ipopt")


@pytest.mark.parametrize("dataset,c,p,eps", CASES)
@pytest.mark.parametrize("nu,alpha", [(0.3, 1.0), (1.0, 2.0)])
def test_dense_23_equals_the_registry_builder(dataset, c, p, eps, nu, alpha):
    d = load_dataset(dataset)
    X, y = min_max_scale(d.X), d.y
    dense = solve_23_dense(X[y == c], X[y != c], nu, alpha, p, eps)
    assert dense.optimal, dense.message
    model = build(23, X, y, c, nu, alpha, p=p, eps=eps)
    truth = solve(model, "ipopt")
    assert rel_gap(dense.objective, truth.objective, max(objective_scale(model), OBJ_FLOOR)) <= OBJ_TOL
    assert rel_dist(dense.w, truth.values["w"]) <= W_TOL
    assert np.isfinite(dense.theta)


@pytest.mark.parametrize("p,eps", [(1.0, 0.05), (2.0, 0.05), (math.inf, 0.0)])
def test_robust_fast_path_auto_is_clarabel_and_equals_the_registry_builder(p, eps):
    """``fit_linear_23(solver="auto")`` solves every class model by Clarabel (no commercial solver) and its w is the
    registry builder's, solved by Ipopt (PIQP for the QPs); theta is chosen in the interval of optimal theta for
    that w (compared through the objective of (23) at the fit's (w, theta))."""

    d = load_dataset("wine")
    X, y = min_max_scale(d.X), d.y
    used: dict[str, int] = {}
    (W, T), = fit_linear_23(X, y, 3, [0.4], p, eps, solver="auto", used=used)
    assert used == {"clarabel": 3}
    for c in range(3):
        model = build(23, X, y, c, 0.4, 1.0, p=p, eps=eps)
        truth = solve(model, "piqp" if S.model_class(model) == "QP" else "ipopt")  # Ipopt fails on some QPs
        Xc, Xo = X[y == c], X[y != c]
        norm = dual_norm(W[c], p)
        xi = np.maximum(0.0, -(Xc @ W[c] + T[c] - eps * norm))
        value = 0.5 * W[c] @ W[c] + 0.4 * (Xo.mean(0) @ W[c] + eps * norm) + 0.4 * T[c] + xi.mean()
        assert rel_gap(value, truth.objective, max(objective_scale(model), OBJ_FLOOR)) <= OBJ_TOL
        assert rel_dist(W[c], truth.values["w"]) <= W_TOL_FIT
