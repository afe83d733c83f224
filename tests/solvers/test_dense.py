"""solve_matrices on the one registry (issue 48): the backends that take a QP in matrix form are those that declare
``matrix_run``; any other name is refused by capability, naming them. Truths: the registry's own declarations, the
Pyomo model of the same QP solved by ``solve()``, and DAQP's settings as ``daqp.Model`` reports them."""

from __future__ import annotations

import pytest

from tpm_models import Kernel, solve
from tpm_models.models.multiclass import build_dual_19
from tpm_models.models.shapes import kernel_dual_matrices
from tpm_models.solvers import (
    BACKENDS,
    NoOptimalSolutionError,
    SolverUnavailableError,
    WarmStart,
    matrix_solvers,
    solve_matrices,
)
from tpm_models.solvers.backends.daqp import DAQP_SETTINGS

OBJ_RTOL = 1e-9  # OPTIMALITY_TOL: the same QP through two readings (matrices here, the Pyomo model there)


def test_the_matrix_backends_are_those_that_declare_it():
    declared = sorted(name for name, backend in BACKENDS.items() if backend.matrix_run is not None)
    assert matrix_solvers() == declared
    assert {"piqp", "daqp"} <= set(declared)  # the two dense QP backends of this library
    assert BACKENDS["highs"].matrix_run is None and BACKENDS["clarabel"].matrix_run is None


@pytest.mark.parametrize("solver", ["highs", "clarabel", "no-such-solver"])
def test_a_backend_without_the_capability_is_refused_naming_those_with_it(iris, solver):
    X, y = iris
    qp = kernel_dual_matrices(Kernel(), X[y == 0], X[y != 0], 0.5, 1.0)
    with pytest.raises(SolverUnavailableError, match="does not take a QP in matrix form") as err:
        solve_matrices(qp, solver)
    assert str(matrix_solvers()) in str(err.value)


@pytest.mark.parametrize("solver", ["default", "piqp", "daqp"])
def test_solve_matrices_is_the_pyomo_dual_solved(iris, solver):
    """The dual (19) as matrices through solve_matrices against the Pyomo model of (19) solved by solve() with
    PIQP: the same optimum (OBJ_RTOL), a feasible point, and the name of the backend that ran."""
    X, y = iris
    kernel = Kernel("gaussian", sigma=0.5)
    qp = kernel_dual_matrices(kernel, X[y == 1], X[y != 1], 0.3, 1.0)
    got = solve_matrices(qp, solver)
    truth = solve(build_dual_19(X, y, 1, 0.3, 1.0, kernel=kernel), "piqp")
    assert got.solver == ("piqp" if solver == "default" else solver)
    assert abs(got.objective - truth.objective) <= OBJ_RTOL * max(1.0, abs(truth.objective))
    assert got.max_violation <= 1e-9


@pytest.mark.parametrize("solver, option", [("piqp", "no_such_setting"), ("daqp", "no_such_setting")])
def test_an_unknown_option_is_a_failure_that_names_it(iris, solver, option):
    X, y = iris
    qp = kernel_dual_matrices(Kernel(), X[y == 0], X[y != 0], 0.5, 1.0)
    with pytest.raises(NoOptimalSolutionError, match=option):
        solve_matrices(qp, solver, options={option: 1}, warm=WarmStart())


def test_the_daqp_settings_are_those_daqp_applies(iris):
    """DAQP_SETTINGS (the one place of DAQP's tolerances) as daqp.Model reads them back: every key is a DAQP
    setting, and the values are the ones set (DAQP stores doubles and ints as given)."""
    import daqp

    model = daqp.Model()
    model.settings = DAQP_SETTINGS
    for key, value in DAQP_SETTINGS.items():
        assert model.settings[key] == value, key
