"""The Pyomo plugin around the CasADi Ipopt bridge (``tpm_ipopt``) and PyROS with it.

The plugin is checked against ``solve(model, "ipopt")`` (the same Ipopt library, through
:func:`tpm_models.solvers.ipopt.run`) and against PIQP / SCIP on small QPs and SOCPs, for the
Pyomo contract PyROS relies on (results object, termination conditions, solution loading,
options, suffixes), and for the convexity certificate that lets it act as PyROS's global
solver. Then PyROS with the plugin on subsets agrees with (23).
"""

import math

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.factory import SolverFactory as ContribSolverFactory
from pyomo.contrib.solver.common.results import SolutionStatus
from pyomo.contrib.solver.common.results import TerminationCondition as TC
from pyomo.contrib.solver.common.util import IncompatibleModelError, NoDualsError, NoOptimalSolutionError
from pyomo.opt import SolverStatus, TerminationCondition

from tpm_models.checks.robust import rel_gap
from tpm_models.checks.semi_infinite import solve_22_pyros
from tpm_models.models.registry import build
from tpm_models.solvers import ipopt as ip
from tpm_models.solvers.backends.registry import available_solvers
from tpm_models.solvers.compare import objective_scale
from tpm_models.solvers.dispatch import solve

NU, ALPHA, EPS = 0.3, 1.0, 0.02


def small_qp() -> pyo.ConcreteModel:
    """A convex QP with a bound, a two-variable row and a one-variable row."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3))
    m.y = pyo.Var(bounds=(0, None))
    m.obj = pyo.Objective(expr=sum((m.x[i] - i) ** 2 for i in range(3)) + m.y)
    m.row = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] <= 1 + m.y)
    m.single = pyo.Constraint(expr=2 * m.x[2] <= 2.5)
    return m


def small_qcqp() -> pyo.ConcreteModel:
    """small_qp plus a convex quadratic row (a disc)."""
    m = small_qp()
    m.disc = pyo.Constraint(expr=m.x[0] ** 2 + m.x[1] ** 2 <= 0.5)
    return m


def values(m):
    return np.array([m.x[i].value for i in range(3)] + [m.y.value])


def test_plugin_is_a_pyomo_solver_in_both_factories():
    opt = pyo.SolverFactory("tpm_ipopt")
    assert type(opt) is ip.LegacyCasadiIpopt and isinstance(opt, ip.CasadiIpopt)
    assert opt.available() and opt.license_is_valid() and opt.warm_start_capable()
    version = opt.version()
    assert len(version) == 4 and version[0] == 3  # Ipopt 3.x, from casadi's bundled library
    with pyo.SolverFactory("tpm_ipopt") as ctx:
        assert ctx.available(exception_flag=False)
    with pytest.raises(TypeError, match="no_such_option"):
        opt.solve(small_qp(), no_such_option=1)
    new = ContribSolverFactory("tpm_ipopt")
    assert type(new) is ip.CasadiIpopt and new.available() and new.version() == version
    with pytest.raises(ValueError, match="no_such_option"):
        new.solve(small_qp(), no_such_option=1)


@pytest.mark.parametrize("build_model", [small_qp, small_qcqp])
def test_new_interface_results_against_the_ipopt_backend(build_model):
    """Pyomo's contrib.solver contract: why it stopped, what the point is, the objective and its bound, the
    point loaded and the duals from the loader, against solve(model, "ipopt")."""
    r = solve(build_model(), "ipopt")
    m = build_model()
    res = ContribSolverFactory("tpm_ipopt").solve(m)
    assert res.termination_condition == TC.convergenceCriteriaSatisfied
    assert res.solution_status == SolutionStatus.optimal  # certified convex: a KKT point is a minimum
    assert res.incumbent_objective == pytest.approx(r.objective, rel=1e-10)
    assert res.objective_bound == res.incumbent_objective
    assert pyo.value(m.obj) == pytest.approx(r.objective, rel=1e-10)
    assert res.extra_info.ipopt_status == "Solve_Succeeded" and res.extra_info.certified_convex is True
    with pytest.raises(NoDualsError, match="import Suffix"):  # row "single" went to Ipopt as a bound
        res.solution_loader.get_duals()
    m = build_model()
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    res = ContribSolverFactory("tpm_ipopt").solve(m, load_solutions=False)
    assert m.x[0].value is None  # not loaded
    duals = res.solution_loader.get_duals()
    for name in ("row", "single") + (("disc",) if hasattr(m, "disc") else ()):
        assert duals[getattr(m, name)] == pytest.approx(r.duals[name], abs=1e-7)
    res.solution_loader.load_solution()
    np.testing.assert_allclose(values(m), [r.values["x"][i] for i in range(3)] + [r.values["y"]], atol=1e-7)
    assert m.dual[m.row] == pytest.approx(r.duals["row"], abs=1e-7)


def test_new_interface_never_calls_an_uncertified_point_optimal():
    """Maximising a convex function: Ipopt converges to a KKT point that is not certified. Pyomo's default
    raises; asked not to, the point is ``feasible`` with no objective bound, and loaded."""
    def concave_max():
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(-1, 2), initialize=0.5)
        m.obj = pyo.Objective(expr=m.x**2, sense=pyo.maximize)
        return m

    with pytest.raises(NoOptimalSolutionError, match="not certified convex"):
        ContribSolverFactory("tpm_ipopt").solve(concave_max())
    m = concave_max()
    res = ContribSolverFactory("tpm_ipopt").solve(m, raise_exception_on_nonoptimal_result=False)
    assert res.termination_condition == TC.convergenceCriteriaSatisfied
    assert res.solution_status == SolutionStatus.feasible
    assert res.objective_bound == math.inf  # maximisation: no bound
    assert m.x.value is not None and res.incumbent_objective == pytest.approx(m.x.value**2, rel=1e-12)


@pytest.mark.parametrize("build_model", [small_qp, small_qcqp])
def test_plugin_agrees_with_the_ipopt_backend_and_piqp(build_model):
    ref = build_model()
    r = solve(ref, "ipopt")
    m = build_model()
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    res = pyo.SolverFactory("tpm_ipopt").solve(m)
    assert res.solver.status == SolverStatus.ok
    assert res.solver.termination_condition == TerminationCondition.globallyOptimal
    assert "certified convex" in res.solver.message
    assert pyo.value(m.obj) == pytest.approx(r.objective, rel=1e-10)
    assert res.problem.lower_bound == pytest.approx(r.objective, rel=1e-10)
    np.testing.assert_allclose(values(m), values(ref), atol=1e-7)
    for name in ("row", "single") + (("disc",) if hasattr(m, "disc") else ()):
        assert m.dual[getattr(m, name)] == pytest.approx(r.duals[name], abs=1e-7)
    assert m.dual[m.row] < 0  # a <= row of a minimisation (solvers.py sign convention)
    if build_model is small_qp:
        p = solve(build_model(), "piqp")
        assert pyo.value(m.obj) == pytest.approx(p.objective, rel=1e-9)
        np.testing.assert_allclose(values(m), np.r_[p.values["x"], p.values["y"]], atol=1e-6)


def test_plugin_on_an_socp_against_the_ipopt_backend_and_scip(iris):
    """(28) (p = 2) on a 12-point subset: second-order cones y'y <= t^2 are not convex
    quadratic forms, so the plugin says only locallyOptimal (PyROS would not take it as a
    global solve); the point matches Ipopt's backend and SCIP."""
    X, y = iris
    keep = np.concatenate([np.flatnonzero(y == k)[:4] for k in range(3)])
    model = build(28, X[keep], y[keep], 1, NU, ALPHA, p=2.0, eps=EPS)
    ref = solve(build(28, X[keep], y[keep], 1, NU, ALPHA, p=2.0, eps=EPS), "ipopt")
    res = pyo.SolverFactory("tpm_ipopt").solve(model)
    assert res.solver.termination_condition == TerminationCondition.locallyOptimal
    assert "not certified convex" in res.solver.message
    scale = objective_scale(model)
    got = pyo.value(next(model.component_data_objects(pyo.Objective, active=True)))
    assert rel_gap(got, ref.objective, scale) < 1e-10
    if "scip" in available_solvers("SOCP"):
        other = solve(build(28, X[keep], y[keep], 1, NU, ALPHA, p=2.0, eps=EPS), "scip")
        assert rel_gap(got, other.objective, scale) < 1e-6


def test_load_solutions_false_leaves_the_model_alone_until_loaded():
    m = small_qp()
    res = pyo.SolverFactory("tpm_ipopt").solve(m, load_solutions=False)
    assert all(m.x[i].value is None for i in range(3))
    assert len(res.solution) == 1
    m.solutions.load_from(res)
    assert pyo.value(m.obj) == pytest.approx(solve(small_qp(), "ipopt").objective, rel=1e-10)


def test_nonconvex_and_failed_solves_are_not_reported_optimal(caplog):
    # maximising a convex function: a KKT point, not certified global
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 2), initialize=0.5)
    m.obj = pyo.Objective(expr=m.x**2, sense=pyo.maximize)
    res = pyo.SolverFactory("tpm_ipopt").solve(m)
    assert res.solver.termination_condition == TerminationCondition.locallyOptimal
    # certification off: never globallyOptimal
    res = pyo.SolverFactory("tpm_ipopt", certify_convex=False).solve(small_qp())
    assert res.solver.termination_condition == TerminationCondition.locallyOptimal
    # an iteration limit: nothing loaded, reported as such
    m = small_qcqp()
    res = pyo.SolverFactory("tpm_ipopt").solve(m, options={"max_iter": 1})
    assert res.solver.termination_condition == TerminationCondition.maxIterations
    assert res.solver.status == SolverStatus.aborted
    assert m.x[0].value is None and "no solution loaded" in caplog.text
    # a convex infeasible model: certified infeasible
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.obj = pyo.Objective(expr=m.x**2)
    m.a = pyo.Constraint(expr=m.x >= 1)
    m.b = pyo.Constraint(expr=m.x + 0 * m.x <= 0)
    m.c = pyo.Constraint(expr=m.x**2 <= 4)
    res = pyo.SolverFactory("tpm_ipopt").solve(m)
    assert res.solver.termination_condition == TerminationCondition.infeasible
    res = ContribSolverFactory("tpm_ipopt").solve(m, raise_exception_on_nonoptimal_result=False)
    assert res.termination_condition == TC.provenInfeasible and res.incumbent_objective is None
    # an infeasibility that is not certified (a nonconvex row) does not say infeasible to PyROS
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-1, 1), initialize=0.5)
    m.obj = pyo.Objective(expr=m.x)
    m.far = pyo.Constraint(expr=m.x**2 >= 4)
    res = pyo.SolverFactory("tpm_ipopt").solve(m)
    assert res.solver.termination_condition == TerminationCondition.other
    assert ContribSolverFactory("tpm_ipopt").solve(
        m, raise_exception_on_nonoptimal_result=False).termination_condition == TC.locallyInfeasible
    # integer variables are refused
    m = small_qp()
    m.z = pyo.Var(domain=pyo.Binary)
    m.zrow = pyo.Constraint(expr=m.z <= m.y)
    with pytest.raises(IncompatibleModelError, match="integer"):
        pyo.SolverFactory("tpm_ipopt").solve(m)


def test_the_row_cache_follows_fixing_and_parameters():
    """Re-solving one model (as PyROS does) after fixing a variable, changing a fixed value or
    a mutable parameter gives the fresh model's answer."""
    def fresh(fix_y=None, rhs=1.0):
        m = small_qp()
        m.rhs = pyo.Param(initialize=rhs, mutable=True)
        m.prow = pyo.Constraint(expr=m.x[0] - m.x[1] >= m.rhs)
        if fix_y is not None:
            m.y.fix(fix_y)
        return m

    opt = pyo.SolverFactory("tpm_ipopt")
    m = fresh()
    for fix_y, rhs in ((None, 1.0), (0.5, 1.0), (2.0, 1.0), (2.0, -3.0), (None, 0.25)):
        if fix_y is None:
            m.y.unfix()
        else:
            m.y.fix(fix_y)
        m.rhs = rhs
        opt.solve(m)
        ref = solve(fresh(fix_y, rhs), "ipopt")
        assert pyo.value(m.obj) == pytest.approx(ref.objective, rel=1e-9, abs=1e-12), (fix_y, rhs)


def _subset(X, y, per_class):
    keep = np.concatenate([np.flatnonzero(y == k)[:per_class] for k in np.unique(y)])
    return X[keep], y[keep]


@pytest.mark.parametrize("p", [math.inf, 2.0, 1.0])
def test_pyros_with_the_plugin_equals_the_counterpart(iris, p):
    """(22) by PyROS, Ipopt as local and global subsolver, = (23) by its default solver."""
    Xs, ys = _subset(*iris, 8 if p != 1 else 5)
    m23 = build(23, Xs, ys, 1, NU, ALPHA, p=p, eps=EPS)
    r23 = solve(m23)
    pr = solve_22_pyros(Xs, ys, 1, NU, ALPHA, p, EPS, local_solver="tpm_ipopt", global_solver="tpm_ipopt")
    assert pr.termination == "robust_optimal"
    assert rel_gap(pr.objective, r23.objective, objective_scale(m23)) < 1e-8
    # PyROS's own objective is its last master's, over finitely many scenarios: not above
    assert pr.lower_bound <= pr.objective + 1e-12 and pr.lower_bound == pytest.approx(pr.objective, rel=1e-5)


def test_pyros_time_out_is_reported_not_raised(iris):
    X, y = iris
    pr = solve_22_pyros(X, y, 1, NU, ALPHA, 1.0, EPS, local_solver="tpm_ipopt", global_solver="tpm_ipopt",
                        time_limit=1, raise_on_failure=False)
    assert pr.termination == "time_out" and math.isnan(pr.objective)
