"""One ``solve()`` for every backend, one result type.

Backends
--------
========  ================================================  ===================  ==========================
name      what                                              model classes        package
========  ================================================  ===================  ==========================
piqp      PIQP dense interior point, from the model's        LP, QP               ``piqp`` (default LP, QP)
          matrices (:mod:`tpm_models.matrices`)
daqp      DAQP dual active set, from the model's matrices    LP, QP               ``daqp``
highs     HiGHS through Pyomo's ``highs`` interface          LP, QP               ``highspy``
ipopt     Ipopt: the ``ipopt`` executable if on PATH, else   LP, QP, SOCP, NLP    ``casadi``
          CasADi's bundled Ipopt (:mod:`tpm_models.ipopt`)
gurobi    Gurobi through Pyomo's ``gurobi_direct``           LP, QP, SOCP         ``gurobipy`` (size-limited)
cplex     CPLEX through Pyomo's ``cplex_direct``             LP, QP, SOCP         ``cplex`` (size-limited)
xpress    Xpress through Pyomo's ``xpress_direct``           LP, QP, SOCP         ``xpress`` (size-limited)
scip      SCIP through Pyomo's ``scip_direct``               LP, QP, SOCP, NLP    ``pyscipopt``
========  ================================================  ===================  ==========================

HiGHS, PIQP and DAQP take no quadratic constraint: asking them for an SOCP or NLP is a
:class:`SolverUnavailableError` naming the installed solvers that can.

Size limits of the pip licences (a refusal is a reported ``ERROR``, never numbers):
Gurobi takes at most 200 variables once the objective is quadratic; Xpress Community at
most 200 rows plus columns; CPLEX Community 1000 variables and 1000 constraints.

``solver="default"`` picks the default for the model's class (``DEFAULT``), chosen from
the measurements in ``docs/solvers.md``.

:func:`solve_matrices` runs PIQP or DAQP (:data:`MATRIX_SOLVERS`, the same settings) on a QP given as
matrices (:class:`tpm_models.matrices.QPMatrices`, e.g. :func:`tpm_models.matrices.dual_matrices`),
without a Pyomo model, with the same verification: the estimators' default route.

Dual sign convention (all backends)
-----------------------------------
The dual of a constraint is the derivative of the optimal objective value, in the
model's own sense, with respect to the constraint's bound (right-hand side):

* minimisation: :math:`\\ge` rows have duals :math:`\\ge 0`, :math:`\\le` rows :math:`\\le 0`;
* maximisation: the signs flip;
* equality rows: any sign.

So the duals of the ``margin`` rows of (15) are the :math:`\\lambda_c` of (16), and the
dual of ``sum_lam`` in (16) is an optimal :math:`\\theta_c`. Every backend is mapped to
this convention and the test suite checks it per backend.

Never a silent non-optimum
--------------------------
A solve is ``OPTIMAL`` only if the solver says so **and** the returned point is finite
and feasible to ``FEASIBILITY_TOL``; otherwise :func:`solve` raises
:class:`NoOptimalSolutionError` (its ``result`` attribute holds what the solver returned).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import logging
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import metadata
from unittest import mock

import numpy as np
import pyomo.environ as pyo
from pyomo.repn import generate_standard_repn

from tpm_models import ipopt as _ipopt
from tpm_models.matrices import NotAQPError, QPMatrices, qp_matrices

log = logging.getLogger(__name__)

FEASIBILITY_TOL = 1e-6
"""Largest constraint or bound violation accepted at a point reported optimal (absolute;
the data are min-max scaled to [0, 1], so rows are of order one)."""

OPTIMALITY_TOL = 1e-9
"""Tolerance asked of every backend (absolute/relative gap and residuals where the
backend has such settings)."""

DENSE_QP_TOL = 1e-12
"""Residual and duality-gap tolerance asked of PIQP. An interior point's error in the
solution is about the square root of its objective gap, and the duals here have
rank-deficient Hessians: at 1e-9 PIQP left w of (15) on Wine 4e-6 away from the other
solvers' consensus; at 1e-12 it agrees to 1e-8 in ~10 iterations (0.25 ms)."""

SCIP_TIME_LIMIT = 120.0
"""Seconds SCIP may take when no ``time_limit`` is given."""

ITERATION_LIMIT = 10_000
"""Cap on iterations of iterative backends. HiGHS's QP solver defaults to 2**31 and has
been seen to iterate without end on this paper's duals. PIQP needs ~10 iterations and DAQP
< 200 on these QPs; HiGHS still hit this cap on 123 of the paper's 918 duals
(docs/solvers.md), which are then reported, never returned as optimal."""


class Termination(StrEnum):
    """Why the solver stopped."""

    OPTIMAL = "optimal"
    """Converged to its optimality tolerances, and the point passed our feasibility check."""
    INFEASIBLE = "infeasible"
    """Proved infeasible."""
    UNBOUNDED = "unbounded"
    """Proved unbounded (or dual infeasible)."""
    ITERATION_LIMIT = "iteration_limit"
    """Stopped at ``ITERATION_LIMIT``."""
    TIME_LIMIT = "time_limit"
    """Stopped at the time limit."""
    NUMERICAL_ERROR = "numerical_error"
    """Numerical trouble: NaN values, or a point the solver called optimal that is infeasible."""
    ERROR = "error"
    """Any other failure (including a licence refusing the model's size)."""


@dataclass
class SolveResult:
    """What one solve returned.

    ``values`` and ``duals`` are keyed by component name (``"w"``, ``"theta"``,
    ``"margin"``...): a float for a scalar component, an array in index order otherwise.
    ``objective`` is the model's objective exactly as built (no constant added).
    """

    solver: str
    solver_version: str
    termination: Termination
    objective: float | None
    values: dict[str, float | np.ndarray] = field(default_factory=dict)
    duals: dict[str, float | np.ndarray] | None = None
    seconds: float = 0.0
    max_violation: float | None = None
    message: str = ""

    @property
    def optimal(self) -> bool:
        return self.termination is Termination.OPTIMAL

    def to_dict(self) -> dict:
        """A JSON-ready dict (arrays become lists)."""

        def plain(d):
            if d is None:
                return None
            return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}

        return {
            "objective": self.objective,
            "termination": self.termination.value,
            "solver": self.solver,
            "solver_version": self.solver_version,
            "seconds": self.seconds,
            "max_violation": self.max_violation,
            "message": self.message,
            "values": plain(self.values),
            "duals": plain(self.duals),
        }


class NoOptimalSolutionError(RuntimeError):
    """The solver did not reach a verified optimum; ``.result`` holds what it returned."""

    def __init__(self, result: SolveResult):
        self.result = result
        super().__init__(
            f"{result.solver} did not solve the model to optimality: {result.termination.value}"
            f"{' (' + result.message + ')' if result.message else ''}. Try another solver "
            f"(tpm_models.available_solvers()), e.g. solver='piqp' for the QPs."
        )


class SolverUnavailableError(RuntimeError):
    """The named solver is unknown, not installed, or cannot take the model's class."""


# --------------------------------------------------------------------------- helpers


def model_class(model: pyo.ConcreteModel) -> str:
    """``"LP"``, ``"QP"`` (quadratic objective, linear rows), ``"SOCP"`` (linear or quadratic
    objective; every nonlinear row a second-order cone ``sum a_k x_k^2 <= b y^2`` with
    ``a, b > 0`` and ``y >= 0``) or ``"NLP"``."""
    try:
        qp = qp_matrices(model)
    except NotAQPError:
        pass
    else:
        return "QP" if np.any(qp.P) else "LP"
    objective = generate_standard_repn(
        next(model.component_data_objects(pyo.Objective, active=True)).expr, quadratic=True
    )
    if objective.nonlinear_expr is not None:
        return "NLP"
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        repn = generate_standard_repn(con.body, quadratic=True)
        if repn.nonlinear_expr is not None:
            return "NLP"
        if repn.quadratic_vars and not _is_cone(con, repn):
            return "NLP"
    return "SOCP"


def _is_cone(con, repn) -> bool:
    """``sum a_k x_k^2 - b y^2 <= 0`` (or its negation >= 0) with a, b > 0 and y >= 0."""
    if repn.linear_vars or repn.constant != 0:
        return False
    if con.upper is not None and con.lower is None and pyo.value(con.upper) == 0:
        sign = 1.0
    elif con.lower is not None and con.upper is None and pyo.value(con.lower) == 0:
        sign = -1.0
    else:
        return False
    negative = []
    for (u, v), coef in zip(repn.quadratic_vars, repn.quadratic_coefs):
        if u is not v:
            return False
        if sign * coef < 0:
            negative.append(u)
    return len(negative) == 1 and negative[0].lb is not None and pyo.value(negative[0].lb) >= 0


def _component_values(model: pyo.ConcreteModel, get: Callable, ctype) -> dict[str, float | np.ndarray]:
    out: dict[str, float | np.ndarray] = {}
    for comp in model.component_objects(ctype, active=None if ctype is pyo.Var else True, descend_into=True):
        if comp.is_indexed():
            out[comp.local_name] = np.array([get(comp[k]) for k in comp.index_set()], dtype=float)
        else:
            out[comp.local_name] = float(get(comp))
    return out


def values_of(model: pyo.ConcreteModel) -> dict[str, float | np.ndarray]:
    """Current variable values by component name (NaN where unset)."""

    def get(v):
        return np.nan if v.value is None else float(v.value)

    return _component_values(model, get, pyo.Var)


def max_violation(model: pyo.ConcreteModel) -> float:
    """Largest violation of a constraint or variable bound at the model's current values."""
    worst = 0.0
    for v in model.component_data_objects(pyo.Var, descend_into=True):
        if v.value is None:
            return math.inf
        if v.lb is not None:
            worst = max(worst, v.lb - v.value)
        if v.ub is not None:
            worst = max(worst, v.value - v.ub)
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        body = pyo.value(con.body, exception=False)
        if body is None or not math.isfinite(body):
            return math.inf
        if con.lower is not None:
            worst = max(worst, pyo.value(con.lower) - body)
        if con.upper is not None:
            worst = max(worst, body - pyo.value(con.upper))
    return float(worst)


@functools.cache
def _version(package: str) -> str:
    """The backend's version (cached: reading package metadata takes milliseconds); for Ipopt the
    library's own, beside the casadi wheel that bundles it."""
    try:
        version = metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"
    if package == "casadi":
        major, minor, patch, _ = _ipopt.ipopt_version()
        return f"{major}.{minor}.{patch} (casadi {version})" if major else f"unknown (casadi {version})"
    return version


# --------------------------------------------------------------------------- backends


@dataclass(frozen=True)
class Backend:
    """A solver adapter: what it takes, whether it is here, how to run it."""

    name: str
    package: str
    model_classes: frozenset[str]
    run: Callable[[pyo.ConcreteModel, float | None], tuple[Termination, dict | None, str]]
    """``run(model, time_limit)`` loads values into the model and returns
    ``(termination, duals by constraint data, message)``."""

    def available(self) -> bool:
        return importlib.util.find_spec(self.package) is not None


def _dense_duals(qp: QPMatrices, eq: np.ndarray, ineq: np.ndarray) -> dict:
    """Map multipliers of the minimised form (d/d rhs of the minimum) to the model's sense."""
    duals = {con: qp.sense * float(val) for con, val in zip(qp.eq_constraints, eq)}
    duals.update({con: qp.sense * float(val) for con, val in zip(qp.ineq_constraints, ineq)})
    return duals


def _load(qp: QPMatrices, x: np.ndarray) -> None:
    for var, value in zip(qp.variables, x):
        var.set_value(float(value), skip_validation=True)


@dataclass
class MatrixSolution:
    """What a dense QP solver returned on :class:`~tpm_models.matrices.QPMatrices`: its termination, the
    point ``x`` and the multipliers of the minimised form (:math:`\\partial\\min/\\partial b`,
    :math:`\\partial\\min/\\partial h`)."""

    termination: Termination
    x: np.ndarray
    eq_duals: np.ndarray
    ineq_duals: np.ndarray
    message: str


def run_piqp(qp: QPMatrices) -> MatrixSolution:
    """PIQP (dense) on the matrices ``qp``, with the settings of ``solve(model, "piqp")``."""
    import piqp

    solver = piqp.DenseSolver()
    solver.settings.verbose = False
    solver.settings.eps_abs = DENSE_QP_TOL
    solver.settings.eps_rel = DENSE_QP_TOL
    solver.settings.check_duality_gap = True
    solver.settings.eps_duality_gap_abs = DENSE_QP_TOL
    solver.settings.eps_duality_gap_rel = DENSE_QP_TOL
    solver.settings.max_iter = ITERATION_LIMIT
    finite = lambda a: np.where(np.isfinite(a), a, np.sign(a) * 1e30)  # noqa: E731  PIQP's "infinity"
    solver.setup(
        np.asfortranarray(qp.P), qp.q,
        np.asfortranarray(qp.A) if len(qp.b) else None, qp.b if len(qp.b) else None,
        np.asfortranarray(qp.G) if len(qp.h_l) else None,
        finite(qp.h_l) if len(qp.h_l) else None, finite(qp.h_u) if len(qp.h_u) else None,
        finite(qp.x_l), finite(qp.x_u),
    )
    status = solver.solve()
    names = {
        piqp.PIQP_SOLVED: Termination.OPTIMAL,
        piqp.PIQP_MAX_ITER_REACHED: Termination.ITERATION_LIMIT,
        piqp.PIQP_PRIMAL_INFEASIBLE: Termination.INFEASIBLE,
        piqp.PIQP_DUAL_INFEASIBLE: Termination.UNBOUNDED,
        piqp.PIQP_NUMERICS: Termination.NUMERICAL_ERROR,
    }
    r = solver.result
    # PIQP: L = f + y'(Ax - b) + z_u'(Gx - h_u) - z_l'(Gx - h_l); d min / d b = -y, d/dh = z_l - z_u
    return MatrixSolution(names.get(status, Termination.ERROR), np.array(r.x, dtype=float), -np.asarray(r.y),
                          np.asarray(r.z_l) - np.asarray(r.z_u), str(status))


def run_daqp(qp: QPMatrices) -> MatrixSolution:
    """DAQP on the matrices ``qp``, with the settings of ``solve(model, "daqp")``."""
    from ctypes import c_double, c_int

    import daqp

    n = len(qp.q)
    # DAQP takes simple bounds first (rows of the identity), then general rows
    A = np.vstack([qp.A, qp.G])
    upper = np.concatenate([qp.x_u, qp.b, qp.h_u])
    lower = np.concatenate([qp.x_l, qp.b, qp.h_l])
    sense = np.concatenate(
        [np.zeros(n), np.full(len(qp.b), 5), np.zeros(len(qp.h_l))]
    ).astype(c_int)  # 5 = equality (active, immutable)
    big = 1e30
    x, _, exitflag, info = daqp.solve(
        np.ascontiguousarray(qp.P, dtype=c_double), np.ascontiguousarray(qp.q, dtype=c_double),
        np.ascontiguousarray(A, dtype=c_double),
        np.ascontiguousarray(np.clip(upper, -big, big), dtype=c_double),
        np.ascontiguousarray(np.clip(lower, -big, big), dtype=c_double),
        sense,
        # full proximal regularisation (the Hessians are singular) run to a 1e-12 outer
        # tolerance: the default automatic mode left w of (15) 1e-6 off on Wine.
        eps_prox=1e-2, eta_prox=DENSE_QP_TOL, primal_tol=OPTIMALITY_TOL, iter_limit=ITERATION_LIMIT,
    )
    names = {1: Termination.OPTIMAL, 2: Termination.OPTIMAL, -1: Termination.INFEASIBLE,
             -3: Termination.UNBOUNDED, -4: Termination.ITERATION_LIMIT}
    lam = np.asarray(info["lam"])[n:]
    # DAQP: L = f + lam'(Ax - bound); d min / d bound = -lam
    m_eq = len(qp.b)
    return MatrixSolution(names.get(int(exitflag), Termination.ERROR), np.array(x, dtype=float), -lam[:m_eq],
                          -lam[m_eq:], f"exitflag {int(exitflag)}")


MATRIX_SOLVERS: dict[str, Callable[[QPMatrices], MatrixSolution]] = {"piqp": run_piqp, "daqp": run_daqp}
"""The dense QP solvers that take :class:`~tpm_models.matrices.QPMatrices` directly (:func:`solve_matrices`)."""


def _run_piqp(model: pyo.ConcreteModel, time_limit: float | None):
    qp = qp_matrices(model)
    sol = run_piqp(qp)
    _load(qp, sol.x)
    return sol.termination, _dense_duals(qp, sol.eq_duals, sol.ineq_duals), sol.message


def _run_daqp(model: pyo.ConcreteModel, time_limit: float | None):
    qp = qp_matrices(model)
    sol = run_daqp(qp)
    _load(qp, sol.x)
    return sol.termination, _dense_duals(qp, sol.eq_duals, sol.ineq_duals), sol.message


def matrix_violation(qp: QPMatrices, x: np.ndarray) -> float:
    """Largest violation of the rows and bounds of ``qp`` at ``x`` (absolute; ``inf`` if ``x`` is not finite)."""
    if not np.isfinite(x).all():
        return math.inf
    parts = [np.abs(qp.A @ x - qp.b), qp.h_l - qp.G @ x, qp.G @ x - qp.h_u, qp.x_l - x, x - qp.x_u]
    return float(max([0.0] + [float(np.max(v)) for v in parts if v.size]))


_IPOPT_STATUS = {
    "Solve_Succeeded": Termination.OPTIMAL,
    "Infeasible_Problem_Detected": Termination.INFEASIBLE,
    "Diverging_Iterates": Termination.UNBOUNDED,
    "Maximum_Iterations_Exceeded": Termination.ITERATION_LIMIT,
    "Maximum_CpuTime_Exceeded": Termination.TIME_LIMIT,
    "Maximum_WallTime_Exceeded": Termination.TIME_LIMIT,
    # "Solved_To_Acceptable_Level" is deliberately not optimal: it relaxes every tolerance
}


def _run_ipopt(model: pyo.ConcreteModel, time_limit: float | None):
    if shutil.which("ipopt"):  # an executable (idaes-pse, conda): Pyomo's .nl interface
        return _legacy_runner("ipopt", lambda t: {
            **_ipopt.IPOPT_OPTIONS, "max_iter": ITERATION_LIMIT, **({"max_cpu_time": t} if t else {}),
        })(model, time_limit)
    status, duals, message = _ipopt.run(model, time_limit, ITERATION_LIMIT)
    return _IPOPT_STATUS.get(status, Termination.ERROR), duals, message


@contextlib.contextmanager
def _fd_output_to_file(*_args, **_kwargs):
    """Send the process's stdout/stderr file descriptors to a temporary *file* while a
    solver's C code runs (it stands in for Pyomo's ``capture_output``, which uses a pipe).

    ``scip_direct`` captures SCIP's output through a pipe drained by a Python thread, but
    PySCIPOpt's ``optimize()`` holds the GIL: when SCIP prints more than a pipe holds (its
    LP-solver error messages ignore ``display/verblevel``), the write blocks and the solve
    hangs forever (seen on (23) for Wine at p = 1.2). A file never blocks.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def _contrib_runner(pyomo_name: str, options: Callable[[float | None], dict]):
    """Backends through Pyomo's newer solver interface (``pyomo.contrib.solver``)."""

    def run(model: pyo.ConcreteModel, time_limit: float | None):
        from pyomo.contrib.solver.common.factory import SolverFactory
        from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

        opt = SolverFactory(pyomo_name)
        kwargs = {"load_solutions": False, "raise_exception_on_nonoptimal_result": False,
                  "solver_options": options(time_limit)}
        if time_limit is not None:
            kwargs["time_limit"] = time_limit
        module = sys.modules[type(opt).__module__]
        no_pipe = mock.patch.object(module, "capture_output", _fd_output_to_file) \
            if hasattr(module, "capture_output") else contextlib.nullcontext()
        with contextlib.redirect_stdout(io.StringIO()), no_pipe:
            res = opt.solve(model, **kwargs)
        tc = res.termination_condition
        names = {
            TerminationCondition.convergenceCriteriaSatisfied: Termination.OPTIMAL,
            TerminationCondition.provenInfeasible: Termination.INFEASIBLE,
            TerminationCondition.locallyInfeasible: Termination.INFEASIBLE,
            TerminationCondition.unbounded: Termination.UNBOUNDED,
            TerminationCondition.infeasibleOrUnbounded: Termination.INFEASIBLE,
            TerminationCondition.iterationLimit: Termination.ITERATION_LIMIT,
            TerminationCondition.maxTimeLimit: Termination.TIME_LIMIT,
        }
        termination = names.get(tc, Termination.ERROR)
        if termination is Termination.OPTIMAL and res.solution_status != SolutionStatus.optimal:
            termination = Termination.NUMERICAL_ERROR
        duals = None
        if res.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible):
            res.solution_loader.load_vars()
            try:
                duals = dict(res.solution_loader.get_duals())
            except Exception as exc:  # some interfaces give no duals for some classes
                log.debug("%s gave no duals: %s", pyomo_name, exc)
        return termination, duals, str(tc.name)

    return run


def _legacy_runner(pyomo_name: str, options: Callable[[float | None], dict]):
    """Backends through Pyomo's direct (``SolverFactory``) interfaces, duals by suffix."""

    def run(model: pyo.ConcreteModel, time_limit: float | None):
        from pyomo.opt import SolverStatus, TerminationCondition

        opt = pyo.SolverFactory(pyomo_name)
        added = False
        if model.component("dual") is None:
            model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
            added = True
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                res = opt.solve(model, load_solutions=False, options=options(time_limit))
            tc = res.solver.termination_condition
            names = {
                TerminationCondition.optimal: Termination.OPTIMAL,
                TerminationCondition.infeasible: Termination.INFEASIBLE,
                TerminationCondition.unbounded: Termination.UNBOUNDED,
                TerminationCondition.infeasibleOrUnbounded: Termination.INFEASIBLE,
                TerminationCondition.maxIterations: Termination.ITERATION_LIMIT,
                TerminationCondition.maxTimeLimit: Termination.TIME_LIMIT,
            }
            termination = names.get(tc, Termination.ERROR)
            if termination is Termination.OPTIMAL and res.solver.status != SolverStatus.ok:
                termination = Termination.ERROR
            duals = None
            if len(res.solution) > 0:
                model.solutions.load_from(res)
                duals = {con: model.dual.get(con) for con in model.component_data_objects(
                    pyo.Constraint, active=True, descend_into=True)}
            return termination, duals, str(tc)
        finally:
            if added:
                model.del_component("dual")

    return run


BACKENDS: dict[str, Backend] = {
    "ipopt": Backend("ipopt", "casadi", frozenset({"LP", "QP", "SOCP", "NLP"}), _run_ipopt),
    "piqp": Backend("piqp", "piqp", frozenset({"LP", "QP"}), _run_piqp),
    "daqp": Backend("daqp", "daqp", frozenset({"LP", "QP"}), _run_daqp),
    "highs": Backend(
        "highs", "highspy", frozenset({"LP", "QP"}),
        _contrib_runner("highs", lambda t: {
            "qp_iteration_limit": ITERATION_LIMIT, "simplex_iteration_limit": ITERATION_LIMIT,
            "primal_feasibility_tolerance": OPTIMALITY_TOL, "dual_feasibility_tolerance": OPTIMALITY_TOL,
        }),
    ),
    "gurobi": Backend(
        "gurobi", "gurobipy", frozenset({"LP", "QP", "SOCP"}),
        _legacy_runner("gurobi_direct", lambda t: {
            "OutputFlag": 0, "BarConvTol": OPTIMALITY_TOL, "BarQCPConvTol": OPTIMALITY_TOL,
            "OptimalityTol": OPTIMALITY_TOL,
            "FeasibilityTol": OPTIMALITY_TOL, **({"TimeLimit": t} if t else {}),
        }),
    ),
    "cplex": Backend(
        "cplex", "cplex", frozenset({"LP", "QP", "SOCP"}),
        _legacy_runner("cplex_direct", lambda t: {
            "barrier_convergetol": OPTIMALITY_TOL, "barrier_qcpconvergetol": OPTIMALITY_TOL,
            **({"timelimit": t} if t else {}),
        }),
    ),
    "xpress": Backend(
        "xpress", "xpress", frozenset({"LP", "QP", "SOCP"}),
        _legacy_runner("xpress_direct", lambda t: {
            "bargapstop": OPTIMALITY_TOL, "barprimalstop": OPTIMALITY_TOL,
            "bardualstop": OPTIMALITY_TOL, **({"maxtime": -int(math.ceil(t))} if t else {}),
        }),
    ),
    "scip": Backend(
        "scip", "pyscipopt", frozenset({"LP", "QP", "SOCP", "NLP"}),
        _contrib_runner("scip_direct", lambda t: {
            # SCIP's spatial branch and bound ran > 25 min on (23) for Wine at 1e-9 tolerances:
            # never without a time limit (a limit is reported, never returned as optimal)
            "limits/time": t or SCIP_TIME_LIMIT,
            # verblevel 0: SCIP can block writing to the pipe Pyomo captures (DESIGN.md).
            # Default feastol 1e-6 left 3e-6 relative error on (15); these reach ~1e-9.
            "display/verblevel": 0, "numerics/feastol": 1e-9, "numerics/dualfeastol": 1e-9,
            "numerics/epsilon": 1e-11,
        }),
    ),
}

DEFAULT = {"LP": "piqp", "QP": "piqp", "SOCP": "ipopt", "NLP": "ipopt"}
"""Default backend per model class (measurements: ``docs/solvers.md``)."""


def available_solvers(model_class_name: str | None = None) -> list[str]:
    """Installed backends, optionally only those that take ``model_class_name``."""
    return [
        name for name, b in BACKENDS.items()
        if b.available() and (model_class_name is None or model_class_name in b.model_classes)
    ]


def _backend_for(model: pyo.ConcreteModel, solver: str) -> tuple[Backend, str]:
    kind = model_class(model)
    if solver == "default":
        solver = DEFAULT.get(kind, "")
        if not solver:
            raise SolverUnavailableError(f"no default solver for model class {kind}")
    if solver not in BACKENDS:
        raise SolverUnavailableError(
            f"unknown solver {solver!r}; known: {sorted(BACKENDS)}; installed for {kind}: "
            f"{available_solvers(kind)}"
        )
    backend = BACKENDS[solver]
    if kind not in backend.model_classes:
        raise SolverUnavailableError(
            f"{solver} cannot take a {kind} ({title(model)}); installed solvers that can: "
            f"{available_solvers(kind)}"
        )
    if not backend.available():
        raise SolverUnavailableError(
            f"solver {solver!r} is not installed (pip install {backend.package}); installed for "
            f"{kind}: {available_solvers(kind)}"
        )
    return backend, kind


def solve(
    model: pyo.ConcreteModel,
    solver: str = "default",
    time_limit: float | None = None,
    raise_on_failure: bool = True,
    warm_start: bool = False,
) -> SolveResult:
    """Solve ``model`` with ``solver`` and return a :class:`SolveResult`.

    Values are loaded into the model. Every solve starts cold (variable values cleared)
    unless ``warm_start=True``, which hands the current values to solvers that take a
    start (Ipopt). Unless the solve is verified optimal (module
    docstring), raises :class:`NoOptimalSolutionError`; with ``raise_on_failure=False``
    the non-optimal result is returned instead, with its termination saying so.
    """
    backend, _ = _backend_for(model, solver)
    if not warm_start:
        for v in model.component_data_objects(pyo.Var, descend_into=True):
            if not v.fixed:
                v.set_value(None, skip_validation=True)
    start = time.perf_counter()
    try:
        termination, raw_duals, message = backend.run(model, time_limit)
    except Exception as exc:  # a licence limit or a crash inside the solver is a failure, not a crash
        log.warning("%s raised %s: %s", backend.name, type(exc).__name__, exc)
        termination, raw_duals, message = Termination.ERROR, None, f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start

    values = values_of(model)
    violation = max_violation(model)
    objective = pyo.value(_objective(model), exception=False)
    objective = float(objective) if objective is not None else None
    if termination is Termination.OPTIMAL and (
        objective is None or not math.isfinite(objective) or violation > FEASIBILITY_TOL
    ):
        termination = Termination.NUMERICAL_ERROR
        message = f"reported optimal but max violation {violation:.3g} / objective {objective}"
    duals = None
    if raw_duals is not None and termination is Termination.OPTIMAL:

        def get(con):
            value = raw_duals.get(con)
            return np.nan if value is None else float(value)

        duals = _component_values(model, get, pyo.Constraint)
    result = SolveResult(
        solver=backend.name,
        solver_version=_version(backend.package),
        termination=termination,
        objective=objective if termination is Termination.OPTIMAL else None,
        values=values,
        duals=duals,
        seconds=seconds,
        max_violation=violation,
        message=message,
    )
    if not result.optimal:
        log.warning("%s on %s: %s %s", backend.name, title(model), termination.value, message)
        if raise_on_failure:
            raise NoOptimalSolutionError(result)
    return result


def solve_matrices(qp: QPMatrices, solver: str = "default", raise_on_failure: bool = True) -> SolveResult:
    """Solve the QP ``qp`` (:class:`~tpm_models.matrices.QPMatrices`) with a dense solver, no Pyomo model.

    ``solver``: ``"default"`` (``DEFAULT["QP"]``) or one of :data:`MATRIX_SOLVERS`, run with the settings
    of ``solve(model, solver)``. The same verification as :func:`solve`: ``OPTIMAL`` only if the solver
    says so and the point is finite and feasible to ``FEASIBILITY_TOL``; otherwise raises
    :class:`NoOptimalSolutionError` (or, with ``raise_on_failure=False``, returns the non-optimal result).
    ``values["x"]`` is the point, ``objective`` the objective in the model's own sense.
    """
    name = DEFAULT["QP"] if solver == "default" else solver
    if name not in MATRIX_SOLVERS:
        raise SolverUnavailableError(
            f"solver {solver!r} does not take a QP in matrix form; use 'default' or one of {sorted(MATRIX_SOLVERS)}"
        )
    start = time.perf_counter()
    try:
        sol = MATRIX_SOLVERS[name](qp)
    except Exception as exc:  # a crash inside the solver is a failure, not a crash
        log.warning("%s raised %s: %s", name, type(exc).__name__, exc)
        sol = MatrixSolution(Termination.ERROR, np.full(len(qp.q), np.nan), np.zeros(0), np.zeros(0),
                             f"{type(exc).__name__}: {exc}")
    seconds = time.perf_counter() - start
    violation = matrix_violation(qp, sol.x)
    termination, message = sol.termination, sol.message
    objective = qp.objective(sol.x) if np.isfinite(sol.x).all() else None
    if termination is Termination.OPTIMAL and (
        objective is None or not math.isfinite(objective) or violation > FEASIBILITY_TOL
    ):
        termination = Termination.NUMERICAL_ERROR
        message = f"reported optimal but max violation {violation:.3g} / objective {objective}"
    result = SolveResult(
        solver=name,
        solver_version=_version(BACKENDS[name].package),
        termination=termination,
        objective=objective if termination is Termination.OPTIMAL else None,
        values={"x": sol.x},
        seconds=seconds,
        max_violation=violation,
        message=message,
    )
    if not result.optimal:
        log.warning("%s on a QP in matrix form: %s %s", name, termination.value, message)
        if raise_on_failure:
            raise NoOptimalSolutionError(result)
    return result


_LICENCE_WORDS = ("too many rows", "too many columns", "size-limited", "model too large", "licen",
                  "restricted license", "promotional")


def is_licence_limit(result: SolveResult) -> bool:
    """True when a failure is a size-limited free licence refusing the model (not a numerical failure)."""
    return result.termination is Termination.ERROR and any(w in result.message.lower() for w in _LICENCE_WORDS)


def title(model: pyo.ConcreteModel) -> str:
    """The model's name as given to its builder (Pyomo quotes names with spaces)."""
    return model.name.strip("'")


def _objective(model: pyo.ConcreteModel):
    return next(model.component_data_objects(pyo.Objective, active=True))
