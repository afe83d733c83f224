"""The default solver of SOCP and NLP against the independent reference of ``docs/reference/cvxpy_23.py`` (cvxpy +
Clarabel, (23) written from the paper's equation), on a few of the survey's instances; the full survey is
``python -m benchmarks conic-survey`` (``docs/solvers.md``)."""

import math

import numpy as np
import pytest

from benchmarks.conic_survey import (
    OBJ_FLOOR,
    OBJ_TOL,
    REFERENCE,
    TWIN,
    W_TOL,
    read_reference,
    theta_in_interval,
)
from tpm_models import build, load_dataset, min_max_scale
from tpm_models.solvers import available_solvers, model_class
from tpm_models.solvers.compare import objective_scale, rel_dist, rel_gap
from tpm_models.solvers.dispatch import solve

CASES = [("iris", 0, 0.5, 1.0, 1.5, 0.02), ("iris", 2, 0.2, 1.0, 2.0, 0.1), ("wine", 1, 1.0, 2.0, 3.0, 0.0),
         ("wine", 0, 0.9, 1.0, 1.0, 0.1), ("wine", 2, 0.5, 1.0, math.inf, 0.02)]

pytestmark = pytest.mark.skipif(not REFERENCE.is_file() or "clarabel" not in available_solvers("NLP"),
                                reason="needs the reference CSV (a source checkout) and Clarabel")


@pytest.fixture(scope="module")
def reference():
    return read_reference()


def test_the_reference_covers_the_survey(reference):
    assert len(reference) == 360
    assert all(np.isfinite(r["objective"]) and r["residual"] <= 1e-9 for r in reference.values())
    refined = [r["refined"].split()[0] for r in reference.values() if r["refined"]]
    assert refined.count("newton") == 256 and refined.count("qp") == 96  # 8 left: w = 0, where no norm is smooth
    assert all(float(r["refined"].split()[1]) <= 1e-13 for r in reference.values() if r["refined"])


@pytest.mark.parametrize("dataset,c,nu,alpha,p,eps", CASES)
def test_default_solver_meets_the_cvxpy_reference(reference, dataset, c, nu, alpha, p, eps):
    d = load_dataset(dataset)
    X, y = min_max_scale(d.X), d.y
    ref = reference[(dataset, c, nu, alpha, p, eps)]
    for eq in (23, 26) + ((TWIN[p],) if p in TWIN else ()):
        model = build(eq, X, y, c, nu, alpha, p=p, eps=eps)
        r = solve(model)
        if model_class(model) in ("SOCP", "NLP"):
            assert r.solver == "clarabel"
        assert rel_gap(r.objective, ref["objective"], max(objective_scale(model), OBJ_FLOOR)) <= OBJ_TOL, eq
        assert rel_dist(r.values["w"], ref["w"]) <= W_TOL, eq
        assert theta_in_interval(r.values["theta"], np.asarray(r.values["w"]), X[y == c], nu, alpha, p, eps), eq
