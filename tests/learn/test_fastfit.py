"""The estimators' dense route (issue 17): the matrices they solve are the ones the builders write.

Truths: the Pyomo model's own coefficients (read by ``qp_matrices`` through Pyomo's
``generate_standard_repn``, not by :func:`tpm_models.models.shapes.dual_matrices`), and the duals written out
here from the paper -- Table 1's kernel formulas, :math:`P = K(X_o, X_o)`,
:math:`q = -\\frac{\\nu}{m_{\\bar o}}K(X_{\\bar o}, X_o)^\\top e`, :math:`e^\\top\\lambda = \\nu`,
:math:`0 \\le \\lambda \\le \\alpha/m_o`.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from tpm_models.kernels import Kernel
from tpm_models.learn.estimators import TPMSVM, TPMSVMOneVsAll
from tpm_models.models.binary import build_dual_4, build_dual_5, build_dual_12, build_dual_13, dual_qp
from tpm_models.models.multiclass import build_dual_16, build_dual_19, dual_19_qp
from tpm_models.solvers.common import NoOptimalSolutionError, Termination
from tpm_models.solvers.matrices import qp_matrices

NU, ALPHA = 0.3, 1.0

MATRIX_RTOL = 1e-12
"""Entries are compared relative to the largest entry of their matrix. The two sides compute the same
sums of at most m = 178 terms of size <= 1 (min-max scaled data; Gaussian <= 1; (gamma + x'x')^d <= 14^2)
in possibly different orders: rounding differs by at most m * 2^-53 ~ 2e-14 of the largest term."""

SOLVER_TOL = 1e-6
"""The two routes hand the same matrices to the same PIQP settings (DENSE_QP_TOL = 1e-12 residuals); their
w and theta agree far inside this bound, which is FEASIBILITY_TOL, the accuracy the package promises."""

KERNELS = {
    "linear": (Kernel("linear"), lambda A, B: A @ B.T),
    "hom-poly": (Kernel("hom-poly", degree=2), lambda A, B: (A @ B.T) ** 2),
    "inhom-poly": (Kernel("inhom-poly", degree=2, gamma=1.0), lambda A, B: (1.0 + A @ B.T) ** 2),
    "gaussian": (Kernel("gaussian", sigma=0.5), lambda A, B: np.exp(
        -((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2) / (2 * 0.5**2))),
}


def paper_dual(k, X_own, X_other, nu, alpha):
    """(4)/(5)/(12)/(13)/(16)/(19) from the paper, as a minimisation of the negated objective."""
    m_own = len(X_own)
    return {"P": k(X_own, X_own), "q": -(nu / len(X_other)) * k(X_other, X_own).sum(axis=0),
            "A": np.ones((1, m_own)), "b": np.array([nu]), "x_l": np.zeros(m_own), "x_u": np.full(m_own, alpha / m_own)}


def assert_same_qp(a, b, what):
    for field in ("P", "q", "A", "b", "x_l", "x_u"):
        x, y = np.asarray(getattr(a, field, None) if not isinstance(a, dict) else a[field]), np.asarray(
            getattr(b, field, None) if not isinstance(b, dict) else b[field])
        assert x.shape == y.shape, (what, field)
        scale = max(np.abs(x).max(initial=0.0), 1.0)
        np.testing.assert_allclose(x, y, rtol=0, atol=MATRIX_RTOL * scale, err_msg=f"{what}: {field}")


@pytest.mark.parametrize("dataset", ["iris", "wine"])
@pytest.mark.parametrize("name", list(KERNELS))
def test_builders_write_the_dense_matrices(request, dataset, name):
    X, y = request.getfixturevalue(dataset)
    kernel, k = KERNELS[name]
    for c in np.unique(y):
        own, other = X[y == c], X[y != c]
        truth = paper_dual(k, own, other, NU, ALPHA)
        model = (build_dual_16(X, y, c, NU, ALPHA) if name == "linear"
                 else build_dual_19(X, y, c, NU, ALPHA, kernel=kernel))
        dense = dual_19_qp(X, y, c, NU, ALPHA, kernel)
        assert_same_qp(qp_matrices(model), dense, f"({16 if name == 'linear' else 19}) {dataset} class {c}")
        assert_same_qp(truth, dense, f"paper vs dual_19_qp, {dataset} class {c}")
        assert qp_matrices(model).sense == dense.sense == -1
        assert len(qp_matrices(model).h_l) == len(dense.h_l) == 0
    y_pm = np.where(y == y.max(), 1, -1)
    for sign, own, other in ((1, X[y_pm == 1], X[y_pm == -1]), (-1, X[y_pm == -1], X[y_pm == 1])):
        if name == "linear":
            model = (build_dual_4 if sign == 1 else build_dual_5)(X, y_pm, NU, ALPHA)
        else:
            model = (build_dual_12 if sign == 1 else build_dual_13)(X, y_pm, NU, ALPHA, kernel=kernel)
        dense = dual_qp(X, y_pm, NU, ALPHA, kernel, sign)
        assert_same_qp(qp_matrices(model), dense, f"binary sign {sign} {dataset}")
        assert_same_qp(paper_dual(k, own, other, NU, ALPHA), dense, f"paper vs dual_qp sign {sign} {dataset}")


@pytest.mark.parametrize("dataset", ["iris", "wine"])
@pytest.mark.parametrize("kernel", [{"kernel": "linear"}, {"kernel": "gaussian", "sigma": 0.5}])
def test_dense_and_pyomo_routes_agree(request, dataset, kernel):
    X, y = request.getfixturevalue(dataset)
    dense = TPMSVMOneVsAll(nu=NU, alpha=ALPHA, **kernel).fit(X, y)
    pyomo = TPMSVMOneVsAll(nu=NU, alpha=ALPHA, backend="pyomo", **kernel).fit(X, y)
    np.testing.assert_array_equal(dense.predict(X), pyomo.predict(X))
    for a, b in zip(dense.planes_, pyomo.planes_):
        np.testing.assert_allclose(a.lam, b.lam, atol=SOLVER_TOL)
        np.testing.assert_allclose(a.norm_w, b.norm_w, atol=SOLVER_TOL)
    np.testing.assert_allclose(dense.intercept_, pyomo.intercept_, atol=SOLVER_TOL)
    if kernel["kernel"] == "linear":
        np.testing.assert_allclose(dense.coef_, pyomo.coef_, atol=SOLVER_TOL)
    binary = y == y.max()
    d2 = TPMSVM(nu=NU, alpha=ALPHA, **kernel).fit(X, binary)
    p2 = TPMSVM(nu=NU, alpha=ALPHA, backend="pyomo", **kernel).fit(X, binary)
    np.testing.assert_array_equal(d2.predict(X), p2.predict(X))
    np.testing.assert_allclose(d2.intercept_, p2.intercept_, atol=SOLVER_TOL)
    np.testing.assert_allclose(d2.decision_function(X), p2.decision_function(X), atol=1e-5)


def test_daqp_on_the_dense_route(iris):
    X, y = iris
    a = TPMSVMOneVsAll(nu=NU, alpha=ALPHA, solver="daqp").fit(X, y)
    b = TPMSVMOneVsAll(nu=NU, alpha=ALPHA, solver="daqp", backend="pyomo").fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=SOLVER_TOL)


@pytest.mark.parametrize("params, match", [
    ({"backend": "cvxpy"}, "backend must be 'auto'.*'dense'.*'decomposition'.*or 'pyomo'"),
    ({"backend": "dense", "solver": "highs"}, "solver 'highs' solves Pyomo models: pass backend='pyomo'"),
])
def test_backend_is_validated(iris, params, match):
    X, y = iris
    for cls in (TPMSVM, TPMSVMOneVsAll):
        with pytest.raises(ValueError, match=match):
            cls(**params).fit(X, y == 0 if cls is TPMSVM else y)


@pytest.mark.parametrize("status, x, termination", [
    ("PIQP_MAX_ITER_REACHED", "nan", Termination.ITERATION_LIMIT),  # the solver says so
    ("PIQP_SOLVED", "infeasible", Termination.NUMERICAL_ERROR),  # the solver says solved, the point breaks e'lam = nu
])
@pytest.mark.parametrize("cls", [TPMSVMOneVsAll, TPMSVM])
def test_dense_route_never_returns_a_non_optimum(iris, monkeypatch, status, x, termination, cls):
    """PIQP itself is replaced, so the estimators' dense route (solve_matrices, the registry's PIQP backend) sees the
    fake: the fit raises with the fake's result, never returns its point."""
    import piqp

    X, y = iris
    real_settings = piqp.DenseSolver().settings

    class FakePIQP:
        settings = real_settings

        def setup(self, P, q, *rest, **named):
            self.n = len(q)

        def solve(self):
            return getattr(piqp, status)

        @property
        def result(self):
            point = np.zeros(self.n) if x == "infeasible" else np.full(self.n, np.nan)
            return SimpleNamespace(x=point, y=np.zeros(1), z_l=np.zeros(self.n), z_u=np.zeros(self.n))

    monkeypatch.setattr(piqp, "DenseSolver", FakePIQP)
    with pytest.raises(NoOptimalSolutionError) as err:
        cls(nu=NU, alpha=ALPHA).fit(X, y == 0 if cls is TPMSVM else y)
    assert err.value.result.termination is termination


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_diagonal_is_table_1_at_each_point(wine, name):
    """Kernel.diagonal (the scale of the degeneracy test) against Table 1 evaluated point by point;
    chunk=7 makes several blocks. Same sums of 13 terms: MATRIX_RTOL of the largest value."""
    X, _ = wine
    kernel, k = KERNELS[name]
    truth = np.array([k(x[None, :], x[None, :])[0, 0] for x in X])
    np.testing.assert_allclose(kernel.diagonal(X, chunk=7), truth, rtol=0, atol=MATRIX_RTOL * np.abs(truth).max())


def test_bench_commands_print_their_tables(capsys):
    """Smoke test of `python -m benchmarks bench builders|estimators` (numbers are printed, never asserted)."""
    from benchmarks.cli import main

    assert main(["bench", "builders", "--sizes", "300", "--no-linopy", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| (15) | 300 |" in out and "| (28) p=2 | 300 |" in out and "error" not in out
    assert main(["bench", "estimators", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    assert "| iris | 150 x 4 |" in out and "| wine | 178 x 13 |" in out


def test_bench_estimators_processes_prints_medians_over_processes(monkeypatch, capsys):
    """Smoke test of ``python -m benchmarks bench estimators --processes`` (numbers printed, never asserted). Each
    process's work (small_fit_row) runs here instead of in a fresh interpreter (that route is the one --sizes uses,
    tested in tests/learn/test_decomposition.py); what is checked is the alternation, the medians and the table."""
    from benchmarks import bench_estimators
    from benchmarks.cli import main

    calls = []

    def here(call, timeout):
        calls.append(call)
        return eval(call, vars(bench_estimators))  # the same call the fresh interpreter would make

    monkeypatch.setattr(bench_estimators, "_run_code", here)
    assert main(["bench", "estimators", "--processes", "2", "--repeats", "1", "--dataset", "iris", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert calls == ["small_fit_row('tpmsvm', 'iris', 1)", "small_fit_row('svc', 'iris', 1)"] * 2
    row = next(line for line in out.splitlines() if line.startswith("| iris |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:3] == ["iris", "150 x 4", "2"] and cells[5].endswith("x") and cells[8].endswith("x")
    with pytest.raises(SystemExit, match="takes iris wine"):
        main(["bench", "estimators", "--processes", "1", "--dataset", "digits"])
