"""Every active component read or refused by name (:mod:`tpm_models.solvers.components`), the user's model left as it
was by every backend, and a certificate that does not share the solve path's reading: each break of that reading,
made on purpose, ends ``certificate_failed``, never certified.

Truths: closed forms in the docstrings; Pyomo's own transformations (``gdp.bigm``, ``core.logical_to_linear``) for
the models refused before them.
"""

import dataclasses
import math

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp
from pyomo.contrib.solver.common.results import TerminationCondition
from pyomo.core.base.component import ModelComponentFactory
from pyomo.gdp import Disjunction

from tpm_models import build
from tpm_models import solvers as S
from tpm_models.certify import gradients
from tpm_models.certify import reading as certificate_reading
from tpm_models.solvers import components
from tpm_models.solvers import expression_terms as atom_terms_module
from tpm_models.solvers import program as program_module
from tpm_models.solvers.backends import daqp as daqp_backend
from tpm_models.solvers.backends import piqp as piqp_backend
from tpm_models.solvers.common import Termination
from tpm_models.solvers.components import READ, SOS, TRANSFORM, UnsupportedComponentError
from tpm_models.solvers.dispatch import solve

OBJ_TOL = 1e-6
"""Relative error on a closed-form optimum (max(1, |optimum|)): every backend runs at 1e-9 or better."""


def _installed(name):
    if not S.BACKENDS[name].available():
        pytest.skip(f"{name} is not installed")


def test_every_component_type_pyomo_registers_is_read_refused_or_sent_by_name():
    """No type falls through: each of Pyomo's registered component types is read, sent to SOS backends, or
    refused with a transformation; the rest (the models themselves) are blocks."""
    for name in ModelComponentFactory:
        assert name in READ or name == SOS or name in TRANSFORM or name in (
            "ConcreteModel", "AbstractModel", "Model", "ObjectiveList", "ConstraintList", "VarList", "Piecewise",
            "BooleanVarList", "LogicalConstraintList", "ComplementarityList"), name


def _disjunction():
    """min x, x in [0, 10], x >= 2 or x >= 5: 2 (the first disjunct)."""
    m = pyo.ConcreteModel(name="disjunction")
    m.x = pyo.Var(bounds=(0, 10))
    m.d = Disjunction(expr=[[m.x >= 2], [m.x >= 5]])
    m.obj = pyo.Objective(expr=m.x)
    return m, 2.0


def _logical():
    """max sum_k (k + 1) y_k over binaries y_0..y_2 with at most one true: 3 (y_2)."""
    m = pyo.ConcreteModel(name="logical")
    m.K = pyo.RangeSet(0, 2)
    m.Y = pyo.BooleanVar(m.K)
    m.y = pyo.Var(m.K, domain=pyo.Binary)
    for k in m.K:
        m.Y[k].associate_binary_var(m.y[k])
    m.most = pyo.LogicalConstraint(expr=pyo.atmost(1, m.Y))
    m.obj = pyo.Objective(expr=sum((k + 1) * m.y[k] for k in m.K), sense=pyo.maximize)
    return m, 3.0


@pytest.mark.parametrize("case,transformation,kind", [(_disjunction, "gdp.bigm", "Disjunction"),
                                                      (_logical, "core.logical_to_linear", "LogicalConstraint")])
@pytest.mark.parametrize("solver", ["default", "highs", "clarabel", "scip"])
def test_untransformed_components_are_refused_and_solved_once_transformed(case, transformation, kind, solver):
    if solver != "default":
        _installed(solver)
    m, truth = case()
    with pytest.raises(UnsupportedComponentError, match=f"{kind}.*{transformation}"):
        solve(m, solver)
    pyo.TransformationFactory(transformation).apply_to(m)
    try:
        r = solve(m, solver, raise_on_failure=False)
    except S.SolverUnavailableError as exc:  # a continuous backend and the binaries the transformation made
        assert "integer" in str(exc)
        return
    assert r.optimal and abs(r.objective - truth) <= OBJ_TOL * max(1.0, abs(truth)), (r.solver, r.message)


def test_a_component_of_a_type_nobody_declared_is_refused_by_its_name():
    """A plug-in's component type (here one made for the test) is refused: what is not understood is not ignored."""

    class Mystery(pyo.Block):
        pass

    m = pyo.ConcreteModel(name="mystery")
    m.x = pyo.Var(bounds=(1, 2))
    m.obj = pyo.Objective(expr=m.x)
    m.odd = pyo.Block()
    m.odd._ctype = Mystery  # a block of another type: its rows would be invisible to a Block walk
    m.odd.row = pyo.Constraint(expr=m.x >= 1.5)
    with pytest.raises(UnsupportedComponentError, match="Mystery odd"):
        solve(m)


def test_a_variable_with_a_finite_set_domain_is_refused():
    m = pyo.ConcreteModel(name="odd domain")
    m.x = pyo.Var(domain=pyo.Set(initialize=[1, 3, 7]), initialize=1)
    m.obj = pyo.Objective(expr=m.x)
    with pytest.raises(UnsupportedComponentError, match="domain of x"):
        solve(m)


def _sos1():
    """min -x_1 - 2 x_2 - 3 x_3 on [0, 1]^3, at most one nonzero (SOS1): -3 at x_3 = 1 (ignoring the SOS: -6)."""
    m = pyo.ConcreteModel(name="sos1")
    m.I = pyo.RangeSet(1, 3)
    m.x = pyo.Var(m.I, bounds=(0, 1))
    m.s = pyo.SOSConstraint(var=m.x, sos=1)
    m.obj = pyo.Objective(expr=-sum(i * m.x[i] for i in m.I))
    return m, -3.0


def _piecewise_sos2():
    """y = f(x), f through (0, 0), (1, 3), (2, 1), (3, 4), x >= 0.5, min y: 1 at x = 2 (the SOS2 form; its LP
    relaxation gives 0.25 at x = 0.5, which is not on f)."""
    m = pyo.ConcreteModel(name="piecewise")
    m.x = pyo.Var(bounds=(0, 3))
    m.y = pyo.Var()
    m.f = pyo.Piecewise(m.y, m.x, pw_pts=[0, 1, 2, 3], f_rule=[0, 3, 1, 4], pw_constr_type="EQ")
    m.low = pyo.Constraint(expr=m.x >= 0.5)
    m.obj = pyo.Objective(expr=m.y)
    return m, 1.0


@pytest.mark.parametrize("case", [_sos1, _piecewise_sos2], ids=["sos1", "piecewise"])
@pytest.mark.parametrize("solver", ["default", "highs", "piqp", "clarabel", "gurobi", "cplex", "xpress", "scip"])
def test_sos_constraints_go_only_to_backends_that_take_them(case, solver):
    """A backend without SOS constraints refuses them by name; one with them reaches the optimum, "optimal, not
    certified" (its branch and bound is the proof); the certificate checks the SOS conditions themselves."""
    if solver != "default":
        _installed(solver)
    m, truth = case()
    if solver != "default" and not S.BACKENDS[solver].sos:
        with pytest.raises(S.SolverUnavailableError, match="SOS constraints"):
            solve(m, solver)
        return
    r = solve(m, solver, raise_on_failure=False)
    if r.termination is Termination.REFUSED:  # a size-limited licence
        return
    assert r.optimal and not r.certified and abs(r.objective - truth) <= OBJ_TOL, (r.solver, r.message)


def test_the_certificate_checks_sos_conditions():
    """Two nonzeros in an SOS1, and two that are not neighbours in an SOS2, violate them by the smaller one."""
    m, _ = _sos1()
    for i, value in zip(m.I, (0.0, 0.4, 1.0)):
        m.x[i].set_value(value)
    worst, name = certificate_reading.sos_violation(m, 1e-9)
    assert (worst, name) == (0.4, "s")
    m.t = pyo.SOSConstraint(var=m.x, sos=2)
    m.s.deactivate()
    assert certificate_reading.sos_violation(m, 1e-9) == (0.0, "")  # x_2, x_3 are neighbours
    m.x[2].set_value(0.0)
    m.x[1].set_value(0.3)
    assert certificate_reading.sos_violation(m, 1e-9) == (0.3, "t")
    cert = S.certify(m, None, convex=True)
    assert cert.level == "failed" and cert.worst_row == "t"


# ------------------------------------------------------------------------------------ the user's model as it was


def snapshot(model):
    """What a user owns of a model, but for the variables' values: every component's name, type, active flag and
    members, each row's expression, the parameters' values and the variables' bounds, domains and fixed flags."""
    out = []
    for c in model.component_objects(descend_into=True):
        entry = [c.name, type(c).__name__, getattr(c, "active", None), len(c) if c.is_indexed() else 1]
        if c.ctype is pyo.Constraint:
            entry.append([str(d.expr) for d in c.values()])
        elif c.ctype is pyo.Param:
            entry.append([pyo.value(d) for d in c.values()] if c.is_indexed() else pyo.value(c))
        elif c.ctype is pyo.Var:
            entry.append([(d.lb, d.ub, d.fixed, d.domain.name) for d in c.values()])
        out.append(tuple(map(str, entry)))
    return out


def _sparse_and_skipped():
    """min x_1 + 2 x_3 + sum_{i in {1, 3}} z_i, rows x_i + z_i >= i for i in {1, 3} (the rule skips 2), x a sparse
    Var with members 1 and 3 of 1..5, z >= 0, a user Suffix: 1 + 0 (x_1 = 1, then z_3 = 3 beats x_3 = 3 at 2
    a unit): optimum 1 + 3 = 4."""
    m = pyo.ConcreteModel(name="sparse and skipped")
    m.I = pyo.RangeSet(1, 5)
    m.x = pyo.Var(m.I, dense=False, bounds=(0, 4))
    m.z = pyo.Var(m.I, bounds=(0, None))
    m.p = pyo.Param(mutable=True, initialize=2.0)
    m.row = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] + m.z[i] >= i if i in (1, 3) else pyo.Constraint.Skip)
    m.obj = pyo.Objective(expr=m.x[1] + m.p * m.x[3] + m.z[1] + m.z[3])
    m.note = pyo.Suffix(direction=pyo.Suffix.LOCAL)
    m.note[m.row[1]] = "mine"
    return m, 4.0


@pytest.mark.parametrize("solver", ["default", "piqp", "daqp", "highs", "clarabel", "ipopt", "gurobi", "cplex",
                                    "xpress", "scip"])
def test_solve_leaves_the_users_model_as_it_was(solver):
    """A rule that returned ``Constraint.Skip`` and a ``Var(dense=False)`` once made the dual collection raise
    ``KeyError`` and add members to the user's Var; now every backend leaves the component tree as it was."""
    if solver != "default":
        _installed(solver)
    m, truth = _sparse_and_skipped()
    before = snapshot(m)
    r = solve(m, solver, raise_on_failure=False)
    assert snapshot(m) == before
    assert len(m.x) == 2 and m.note[m.row[1]] == "mine"
    if r.termination is not Termination.REFUSED:
        assert r.optimal and abs(r.objective - truth) <= OBJ_TOL * truth, (r.solver, r.message)
        if r.duals is not None:  # the skipped index: no row, no dual
            assert math.isnan(r.duals["row"][1]) and len(r.duals["row"]) == 5


# ------------------------------------------------------------------ the certificate does not share the reading


def _break_matrices(monkeypatch, change):
    """The solve path's reading of a model into matrices, as PIQP and DAQP receive it, changed by
    ``change(QPMatrices)`` (its inequality rows ``h_l <= G x <= h_u``)."""
    for module in (piqp_backend, daqp_backend):
        for name in ("qp_matrices", "dense_qp_matrices", "sparse_qp_matrices"):  # as each backend names its reader
            real = getattr(module, name, None)
            if real is None:
                continue

            def broken(*args, real=real):
                qp = real(*args)
                change(qp)
                return qp

            monkeypatch.setattr(module, name, broken)


def _drop_last_row(qp):
    qp.G, qp.h_l, qp.h_u = qp.G[:-1], qp.h_l[:-1], qp.h_u[:-1]
    qp.ineq_constraints = qp.ineq_constraints[:-1]


def _halve_a_coefficient(qp):
    G = sp.lil_matrix(qp.G) if sp.issparse(qp.G) else qp.G.copy()
    i, j = (G != 0).nonzero() if not sp.issparse(G) else G.nonzero()
    G[i[0], j[0]] = G[i[0], j[0]] * 0.5
    qp.G = G.tocsr() if sp.issparse(G) else G


def _loosen_a_side(qp):
    finite = np.flatnonzero(np.isfinite(qp.h_l))
    qp.h_l = qp.h_l.copy()
    qp.h_l[finite[0]] -= 10.0


def _small_lp():
    """min x + y s.t. x + 2 y >= 4, 3 x + y >= 6, x, y >= 0: the vertex (8/5, 6/5), 14/5."""
    m = pyo.ConcreteModel(name="small lp")
    m.x = pyo.Var(bounds=(0, None))
    m.y = pyo.Var(bounds=(0, None))
    m.a = pyo.Constraint(expr=m.x + 2 * m.y >= 4)
    m.b = pyo.Constraint(expr=3 * m.x + m.y >= 6)
    m.obj = pyo.Objective(expr=m.x + m.y)
    return m, 14 / 5


@pytest.mark.parametrize("change", [_drop_last_row, _halve_a_coefficient, _loosen_a_side])
@pytest.mark.parametrize("solver", ["piqp", "daqp"])
def test_a_misread_row_fails_the_certificate(monkeypatch, change, solver):
    """Each break of the solve path's reading makes the backend solve another model; its point is not the optimum
    of this one, and the certificate, reading the model on its own, says so. Control: unbroken, certified."""
    _installed(solver)
    m, truth = _small_lp()
    r = solve(m, solver)
    assert r.certified and abs(r.objective - truth) <= OBJ_TOL
    _break_matrices(monkeypatch, change)
    r = solve(_small_lp()[0], solver, raise_on_failure=False)
    assert not r.certified and r.termination is not Termination.OPTIMAL, (r.termination, r.message)


def test_a_misread_recorded_block_fails_the_certificate(monkeypatch, iris):
    """(15) on Iris: its rows (the margin rows a builder recorded) read by the solve path with a coefficient changed,
    solved, and failed by the certificate, which reads the builder's record itself. Control: unbroken, certified."""
    X, y = iris
    assert solve(build(15, X, y, 1, 0.3, 1.0), "piqp").certified
    _break_matrices(monkeypatch, _halve_a_coefficient)
    r = solve(build(15, X, y, 1, 0.3, 1.0), "piqp", raise_on_failure=False)
    assert r.termination is Termination.CERTIFICATE_FAILED, r.message


def test_a_misread_cone_fails_the_certificate(monkeypatch, iris):
    """(28) on Iris with the conic form's last second-order cone read wrong (its tail rows doubled: ``||w|| <= t``
    read as ``||2 w|| <= t``): Clarabel solves another cone, and the certificate fails it. Control: unbroken,
    certified."""
    X, y = iris
    assert solve(build(28, X, y, 1, 0.3, 1.0, eps=0.05), "clarabel").certified
    real = S.BACKENDS["clarabel"].prepare

    def misread(program):
        prepared = real(program)  # the program, its conic form built
        form = program.conic
        dims = [c.dim for c in form.cones]
        soc = [k for k, c in enumerate(form.cones) if c.kind == "soc"]
        assert soc, "(28) holds a second-order cone"
        end = sum(dims[:soc[-1] + 1])
        scale = np.ones(form.A.shape[0])
        scale[end - dims[soc[-1]] + 1:end] = 2.0
        form.A = sp.diags(scale) @ form.A
        form.A = form.A.tocsc()
        form.b = scale * form.b
        return prepared

    monkeypatch.setitem(S.BACKENDS, "clarabel", dataclasses.replace(S.BACKENDS["clarabel"], prepare=misread))
    r = solve(build(28, X, y, 1, 0.3, 1.0, eps=0.05), "clarabel", raise_on_failure=False)
    assert not r.certified and r.termination is not Termination.OPTIMAL, (r.termination, r.message)
    # the backend's stop apart from the verdict: Clarabel converged (on the cone it was given); the library refuses
    assert r.termination_condition is TerminationCondition.convergenceCriteriaSatisfied
    assert r.to_dict()["termination_condition"] == "convergenceCriteriaSatisfied"



@pytest.mark.parametrize("eq, p", [(28, None), (23, 2.0)])
def test_a_misread_norm_shape_fails_the_certificate(monkeypatch, iris, eq, p):
    """(28) and (23) at p = 2 on Iris by ``linear-decomposition``'s norm shape, its radius read twice too large
    (``NormForm.sigma`` doubled: w shrunk by 4 nu eps, not 2 nu eps): the backend returns the optimum of another model
    with duals that fit it, and the certificate, reading the model on its own, fails it. Control: unbroken,
    certified."""
    X, y = iris
    radius = {} if p is None else {"p": p}
    assert solve(build(eq, X, y, 1, 0.3, 1.0, eps=0.05, **radius), "linear-decomposition").certified
    real = S.BACKENDS["linear-decomposition"].prepare

    def misread(program):
        form = real(program)
        assert form.sigma > 0, "the norm shape was read (one radius, p = 2)"
        return dataclasses.replace(form, sigma=2.0 * form.sigma)

    monkeypatch.setitem(S.BACKENDS, "linear-decomposition",
                        dataclasses.replace(S.BACKENDS["linear-decomposition"], prepare=misread))
    r = solve(build(eq, X, y, 1, 0.3, 1.0, eps=0.05, **radius), "linear-decomposition", raise_on_failure=False)
    assert r.termination is Termination.CERTIFICATE_FAILED and not r.certified, (r.termination, r.message)

def test_components_module_names_every_refusal_with_what_to_do():
    for kind, how in TRANSFORM.items():
        assert "TransformationFactory" in how or "export" in how or "docplex" in how, kind
    assert components.SOS == "SOSConstraint"


# ----------------------------------------------------------------------------------------- convex shapes completed


def _shifted_cone():
    """min t s.t. (x - 3)^2 + (z - 4)^2 <= (t + 1)^2, (x, z) in [0, 1]^2, t >= 0: the point of the square nearest
    (3, 4) is (1, 1), at distance sqrt(13), so t = sqrt(13) - 1 (t + 1 >= 0 holds by t's bound)."""
    m = pyo.ConcreteModel(name="shifted cone")
    m.x = pyo.Var(bounds=(0, 1))
    m.z = pyo.Var(bounds=(0, 1))
    m.t = pyo.Var(bounds=(0, None))
    m.cone = pyo.Constraint(expr=(m.x - 3) ** 2 + (m.z - 4) ** 2 <= (m.t + 1) ** 2)
    m.obj = pyo.Objective(expr=m.t)
    return m, math.sqrt(13) - 1


def _shifted_below():
    """The same row with t >= -3: t + 1 may be negative, so the row is the union of two nappes, not convex."""
    m, _ = _shifted_cone()
    m.t.setlb(-3)
    return m


def _convex_quadratic_row():
    """min -x - y s.t. x^2 + x y + 2 y^2 <= 1 (a PSD form): by Lagrange, the maximiser of x + y on the ellipse
    x'Qx = 1, Q = [[1, 1/2], [1/2, 2]], is Q^{-1} 1 / sqrt(1'Q^{-1} 1), value -sqrt(1'Q^{-1} 1)."""
    m = pyo.ConcreteModel(name="convex quadratic row")
    m.x = pyo.Var()
    m.y = pyo.Var()
    m.row = pyo.Constraint(expr=m.x**2 + m.x * m.y + 2 * m.y**2 <= 1)
    m.obj = pyo.Objective(expr=-m.x - m.y)
    Q = np.array([[1.0, 0.5], [0.5, 2.0]])
    return m, -math.sqrt(float(np.ones(2) @ np.linalg.solve(Q, np.ones(2))))


def test_shifted_cones_and_convex_quadratic_rows_are_convex_socps():
    """Once "not convex" for every convex backend (a quadratic row not read as a cone), now an SOCP, proved convex;
    the shift that may leave its nappe is still not."""
    for case in (_shifted_cone, _convex_quadratic_row):
        traits = S.model_traits(case()[0])
        assert (traits.kind, traits.convex, traits.nonconvex) == ("SOCP", True, None), case.__name__
    assert S.model_traits(_shifted_below()).nonconvex is not None


@pytest.mark.parametrize("case", [_shifted_cone, _convex_quadratic_row], ids=["shifted cone", "PSD row"])
@pytest.mark.parametrize("solver", ["default", "clarabel", "ipopt", "gurobi", "cplex", "xpress", "scip"])
def test_convex_shapes_reach_the_closed_form(case, solver):
    """Every backend that takes the model reaches the closed form; the default certifies it. A backend whose own
    interface refuses the shape (CPLEX wants its cones with explicit variables) fails, never with an optimum."""
    if solver != "default":
        _installed(solver)
    m, truth = case()
    r = solve(m, solver, raise_on_failure=False)
    if r.optimal:
        assert abs(r.objective - truth) <= OBJ_TOL * max(1.0, abs(truth)), (r.solver, r.objective, truth)
    else:
        assert solver in ("cplex", "xpress") and r.termination in (Termination.ERROR, Termination.REFUSED), r.message
    if solver in ("default", "clarabel"):  # Clarabel maps both to its second-order cones
        assert r.certified and r.solver == "clarabel", r.message


def _abs_in_a_named_expression(c: float, where: str):
    """min |x - 2| + c x on [-10, 10] (``e = Expression(abs(x - 2))``), in the objective or as a row t >= e: for
    |c| < 1 the kink x = 2 is the optimum, value 2c (the subgradient -c of |.| at 0 lies in [-1, 1])."""
    m = pyo.ConcreteModel(name=f"abs kink {where}")
    m.x = pyo.Var(bounds=(-10, 10))
    m.e = pyo.Expression(expr=abs(m.x - 2))
    if where == "objective":
        m.obj = pyo.Objective(expr=m.e + c * m.x)
    else:
        m.t = pyo.Var()
        m.row = pyo.Constraint(expr=m.t >= m.e)
        m.obj = pyo.Objective(expr=m.t + c * m.x)
    return m, 2 * c


@pytest.mark.parametrize("where", ["objective", "row"])
def test_a_kink_inside_a_named_expression_is_certified_with_a_subgradient(where):
    """Clarabel's point at the kink of abs() failed the certificate (stationarity 0.5: abs' read as +-1 at
    |x - 2| = 1e-16) and the default fell back to Ipopt, which ended at its iteration limit. Read as the kink of a
    norm (a subgradient in [-1, 1]) it is certified; a point off the optimum still fails (control)."""
    m, truth = _abs_in_a_named_expression(0.5, where)
    r = solve(m)
    assert r.certified and abs(r.objective - truth) <= OBJ_TOL, r.message
    m.x.set_value(2.0)  # the kink, but with |c| > 1 it is not the optimum (x = -10 is): no subgradient cancels c
    m2, _ = _abs_in_a_named_expression(1.5, where)
    m2.x.set_value(2.0)
    if where == "row":
        m2.t.set_value(0.0)
    duals = {} if where == "objective" else {m2.row: 1.0}
    cert = S.certify(m2, duals, convex=True)
    assert not cert.passed and cert.stationarity > 0.1


# ------------------------------------------------------------------------------------------ defaults that serve


def test_the_default_honours_a_time_limit_and_takes_integers():
    """``solve(lp, time_limit=30)`` failed ("no default solver takes unknown: piqp cannot take time_limit"), and a
    MILP had no default: now the default moves on to a backend that honours the limit or takes the integers."""
    m, truth = _small_lp()
    r = solve(m, time_limit=30)
    assert S.BACKENDS[r.solver].time_limit and r.certified and abs(r.objective - truth) <= OBJ_TOL
    m = pyo.ConcreteModel(name="knapsack")
    m.x = pyo.Var([1, 2], domain=pyo.NonNegativeIntegers)
    m.cap = pyo.Constraint(expr=2 * m.x[1] + 3 * m.x[2] <= 7.5)
    m.obj = pyo.Objective(expr=m.x[1] + 2 * m.x[2], sense=pyo.maximize)
    r = solve(m)  # max x1 + 2 x2, 2 x1 + 3 x2 <= 7.5, integers: (0, 2) and (2, 1) give 4; (3, 0) 3
    assert S.BACKENDS[r.solver].integers and abs(r.objective - 4.0) <= OBJ_TOL


def test_messages_name_the_class():
    m, _ = _small_lp()
    with pytest.raises(S.SolverUnavailableError, match="piqp cannot take time_limit"):
        solve(m, "piqp", time_limit=5)
    m.s = pyo.SOSConstraint(var=pyo.Reference([m.x, m.y]), sos=1)
    with pytest.raises(S.SolverUnavailableError, match="piqp cannot take the LP 'small lp': it holds SOS"):
        solve(m, "piqp")


def test_a_misread_objective_fails_the_certificate(monkeypatch, iris):
    """The solve path's reading of the objective (``expression_terms.atom_terms``, read by the program for Clarabel's
    form) broken on purpose, its coefficients halved: Clarabel solves another problem, and the certificate, which
    reads the objective on its own (:mod:`tpm_models.certify.gradients`), fails it. (28) on Iris; control: unbroken,
    certified; and the certificate's reading does not reach the broken one (it is not called)."""
    X, y = iris
    assert solve(build(28, X, y, 1, 0.3, 1.0, eps=0.05), "clarabel").certified
    model = build(28, X, y, 1, 0.3, 1.0, eps=0.05)
    objective = model.component_data_objects(pyo.Objective, active=True).__next__().expr
    real = atom_terms_module.atom_terms
    calls: list[str] = []

    def halved(expr, column):
        read = real(expr, column)
        if read is None or expr is not objective:
            return read
        calls.append("read")
        cols, coefs, const, atoms = read
        return cols, [0.5 * c for c in coefs], const, atoms

    monkeypatch.setattr(program_module, "atom_terms", halved)  # the solve path's reading only
    r = solve(model, "clarabel", raise_on_failure=False)
    assert calls, "the solve path did not read the objective through atom_terms"
    assert r.termination is Termination.CERTIFICATE_FAILED, (r.termination, r.message)
    assert not hasattr(gradients, "atom_terms")  # the certificate has no such reader to share


def test_the_failure_message_does_not_suggest_the_solver_that_failed(monkeypatch):
    """``NoOptimalSolutionError`` said "e.g. solver='piqp'" whatever had failed, PIQP included."""
    def run(model, time_limit, options=None, prepared=None):
        return Termination.ITERATION_LIMIT, None, "made to stop"

    monkeypatch.setitem(S.BACKENDS, "piqp", dataclasses.replace(S.BACKENDS["piqp"], run=run))
    with pytest.raises(S.NoOptimalSolutionError) as info:
        solve(_small_lp()[0], "piqp")
    assert "other than piqp" in str(info.value) and "solver='piqp'" not in str(info.value)
