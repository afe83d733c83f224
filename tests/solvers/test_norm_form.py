"""The ``linear-decomposition`` backend on (15)'s shape with one Euclidean norm of one radius
(tpm_models.solvers.norm_form): (23) and (26) at p = 2, (28).

Truths: Clarabel's optimum of the same model (its pipeline polishes to KKT residuals of 1e-12 and below), every
constraint's dual Clarabel returns, the closed form w = 0 when |w15| <= 2 nu eps (the degenerate plane), and the
certificate on the model as written.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from tpm_models import build
from tpm_models import solvers as S
from tpm_models.solvers.backends import registry
from tpm_models.solvers.common import SolverUnavailableError
from tpm_models.solvers.compare import objective_scale, rel_gap
from tpm_models.solvers.dispatch import solve
from tpm_models.solvers.norm_form import norm_form
from tpm_models.solvers.program import Program

NAME = "linear-decomposition"
NU, ALPHA, EPS = 0.3, 1.0, 0.02
OBJ_TOL = 1e-7
"""Relative objective agreement with Clarabel (the brief's; measured 4e-15 and below on Iris and Wine)."""
W_TOL = 1e-7
"""w agreement (2-norm, relative to max(1, |w|)) with Clarabel's polished point (measured 2e-15 on Iris and Wine)."""
DUAL_TOL = 1e-7
"""Each constraint's dual against Clarabel's (both are exact KKT multipliers of a unique w; measured 4e-16)."""

MODELS = [(23, {"p": 2}), (26, {"p": 2}), (28, {})]

pytestmark = pytest.mark.skipif(not S.BACKENDS[NAME].installed(), reason="daqp (the subproblems' solver) is missing")


def _data(m, seed=0):
    X, y = make_classification(n_samples=m, n_features=8, n_informative=5, n_classes=3, random_state=seed)
    return (X - X.min(0)) / (X.max(0) - X.min(0)), y


def _agree(X, y, c, key, kw, eps=EPS, floor=0.0):
    """Ours and Clarabel's solve; the objectives compared relative to the sum of the objective's terms, at least
    ``floor`` (at w = 0 every term is 0: ours is 0 exactly, Clarabel's 1e-23)."""
    model = build(key, X, y, c, NU, ALPHA, eps=eps, **kw)
    ours = solve(model, NAME)
    ref = solve(build(key, X, y, c, NU, ALPHA, eps=eps, **kw), "clarabel")
    assert ours.optimal and ours.certified and ours.solver == NAME, ours.message
    assert ours.certificate["level"] == "kkt"
    scale = max(objective_scale(model), floor)
    assert rel_gap(ours.objective, ref.objective, scale) < OBJ_TOL, (ours.objective, ref.objective)
    w, w_ref = ours.values["w"], ref.values["w"]
    assert np.linalg.norm(w - w_ref) <= W_TOL * max(1.0, np.linalg.norm(w_ref))
    return ours, ref


@pytest.mark.parametrize("key, kw", MODELS)
@pytest.mark.parametrize("data", ["iris", "wine", "classification"])
def test_agrees_with_clarabel_and_is_certified(request, data, key, kw):
    X, y = _data(900) if data == "classification" else request.getfixturevalue(data)
    for c in np.unique(y):
        ours, ref = _agree(X, y, c, key, kw)
        for name, dual in ref.duals.items():  # every constraint's dual, the cones' included
            assert np.max(np.abs(np.asarray(ours.duals[name]) - dual)) < DUAL_TOL, name


@pytest.mark.parametrize("key, kw", MODELS)
def test_the_degenerate_plane_is_zero_and_certified(iris, key, kw):
    """|w15| <= 2 nu eps: w = 0 (the cones at their apex, certified by their normal cones)."""
    X, y = iris
    w15 = solve(build(15, X, y, 0, NU, ALPHA), NAME).values["w"]
    eps = 1.5 * np.linalg.norm(w15) / (2 * NU)
    ours, _ = _agree(X, y, 0, key, kw, eps, floor=1.0)  # floor: the size of a term nu x'w at |w| = 1, x in [0, 1]
    assert np.linalg.norm(ours.values["w"]) == 0.0 and "to 0" in ours.message
    ours, _ = _agree(X, y, 0, key, kw, 0.98 * np.linalg.norm(w15) / (2 * NU))  # just short of it: shrunk, not 0
    assert 0 < np.linalg.norm(ours.values["w"]) < 0.03 * np.linalg.norm(w15)


def test_w_is_15s_shrunk(wine):
    """The closed form of docs/derivations.md: w = (1 - 2 nu eps / |w15|) w15."""
    X, y = wine
    w15 = solve(build(15, X, y, 1, NU, ALPHA), NAME).values["w"]
    w = solve(build(28, X, y, 1, NU, ALPHA, eps=EPS), NAME).values["w"]
    assert np.linalg.norm(w - (1 - 2 * NU * EPS / np.linalg.norm(w15)) * w15) < 1e-12


@pytest.mark.parametrize("key, kw", MODELS)
def test_per_point_radii_are_refused(iris, key, kw):
    X, y = iris
    eps = np.full(len(y), EPS)
    eps[np.flatnonzero(y == 0)[0]] = 2 * EPS
    model = build(key, X, y, 0, NU, ALPHA, eps=eps, **kw)
    with pytest.raises(SolverUnavailableError, match="radii differ"):
        solve(model, NAME)
    assert solve(model).solver != NAME  # the default passes it on


@pytest.mark.parametrize("key, kw", MODELS)
def test_the_other_points_radii_may_differ(wine, key, kw):
    """Only the own points' radii must be one: the other points' enter the objective as the norm's cost
    nu/m_-c sum eps_i, a constant of the dual (docs/derivations.md)."""
    X, y = wine
    eps = np.full(len(y), EPS)
    other = np.flatnonzero(y != 1)
    eps[other] = np.random.default_rng(0).uniform(0, 3 * EPS, len(other))
    ours, _ = _agree(X, y, 1, key, kw, eps)
    assert "shrunk" in ours.message


@pytest.mark.parametrize("key, p, why", [(23, 3, "pow cone"), (26, 3, "pow cone"), (23, 1.5, "pow cone"),
                                         (26, 1, "cones' heads are in the margin rows"),
                                         (27, 1, "cones' heads are in the margin rows"),
                                         (29, np.inf, "free columns outside the cones")])
def test_other_norms_are_refused(iris, key, p, why):
    X, y = iris
    with pytest.raises(SolverUnavailableError, match=why):
        solve(build(key, X, y, 0, NU, ALPHA, p=p, eps=EPS), NAME)


def test_the_shape_is_read_off_the_conic_form(iris):
    X, y = iris
    form = norm_form(Program(build(26, X, y, 0, NU, ALPHA, p=2, eps=EPS)))
    assert form.eps == pytest.approx(EPS, rel=1e-15) and form.sigma == pytest.approx(2 * NU * EPS, rel=1e-15)
    assert len(form.gadgets.a) == X.shape[1] and form.gadgets.square is not None


@pytest.mark.parametrize("key, kw", MODELS)
def test_the_default_takes_them_from_the_large_size(key, kw):
    X, y = _data(16000)
    model = build(key, X, y, 0, NU, ALPHA, eps=EPS, **kw)
    assert registry.model_size(model) >= registry.LARGE_MODEL
    ours = solve(model)
    assert ours.solver == NAME and ours.certified
    small = build(key, *_data(300), 0, NU, ALPHA, eps=EPS, **kw)
    assert solve(small).solver == "clarabel"
