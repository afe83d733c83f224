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
clarabel  Clarabel conic interior point, from the model's    LP, QP, SOCP, NLP*   ``clarabel``
          conic form (:mod:`tpm_models.conic`)
mosek     MOSEK through Pyomo's ``mosek_direct``             LP, QP               ``mosek`` (licence needed)
========  ================================================  ===================  ==========================

HiGHS, PIQP and DAQP take no quadratic constraint: asking them for an SOCP or NLP is a
:class:`SolverUnavailableError` naming the installed solvers that can.

\\* Clarabel takes an NLP only when :func:`tpm_models.conic.conic_form` maps it to its cones (the
robust models (23), (26) and (23D) for every p, and a user's model written in the shapes listed
there); any other NLP is refused with the row it cannot take, before any solve (``Backend.refuses``).
MOSEK is refused with a :class:`SolverUnavailableError` when its package has no licence, and takes
no SOCP here: Pyomo's ``mosek_direct`` maps cones only from ``pyomo.kernel.conic`` constraints and
passes the cone rows ``sum_k x_k^2 <= y^2`` of an ``environ`` model as quadratic constraints, which
MOSEK accepts only when convex (its code read, not run: no licence on this machine).

Size limits of the pip licences (a refusal is a reported ``ERROR``, never numbers):
Gurobi takes at most 200 variables once the objective is quadratic; Xpress Community at
most 200 rows plus columns; CPLEX Community 1000 variables and 1000 constraints.

``solver="default"`` picks the default for the model's class (``DEFAULT``), chosen from
the measurements in ``docs/solvers.md``.

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
from tpm_models.conic import conic_form, why_not_conic
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

CLARABEL_TOL = 1e-9
"""Clarabel's ``tol_gap_abs``, ``tol_gap_rel``, ``tol_feas``, ``tol_infeas_abs`` and ``tol_infeas_rel``
(its defaults are 1e-8). Measured on the 264 models of ``docs/solvers.md`` (every robust model and
dual, (15), (16), Iris and Wine, every class, eps 0 and 0.02): with ``CLARABEL_REFINE_TOL`` all 264
are ``Solved`` at 1e-9 (10-25 iterations); at 1e-10, 16 stop ``AlmostSolved`` (reported, never optimal)."""

CLARABEL_REFINE_TOL = 1e-15
"""Clarabel's ``iterative_refinement_reltol`` and ``_abstol`` (defaults 1e-13, 1e-12). At the defaults
its KKT solves stalled at a primal residual of ~1e-9 and 4 of the 264 models stopped ``AlmostSolved``
at ``CLARABEL_TOL`` (e.g. 28D on Iris class 0, 29D on Wine class 0); refined further, all are ``Solved``."""

CLARABEL_KTRATIO_TOL = 1e-7
"""Clarabel's ``tol_ktratio`` (default 1e-6): the kappa/tau ratio under which it calls a point optimal
rather than a certificate of infeasibility."""

CLARABEL_MAX_ITER = 500
"""Iteration cap of Clarabel (default 200); it needs < 50 on this library's models."""

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


def _version(package: str) -> str:
    """The backend's version; for Ipopt the library's own, beside the casadi wheel that bundles it."""
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
    refuses: Callable[[pyo.ConcreteModel], str | None] | None = None
    """``refuses(model)``: ``None`` when the backend takes the model, else why not (a licence, a row it
    cannot map); :func:`solve` raises :class:`SolverUnavailableError` with it before running."""
    ready: Callable[[], bool] | None = None
    """``ready()``: an installed package can run at all (a licence); ``None``: always."""

    def installed(self) -> bool:
        return importlib.util.find_spec(self.package) is not None

    def available(self) -> bool:
        """Installed and ready (so listed by :func:`available_solvers`)."""
        return self.installed() and (self.ready is None or self.ready())


def _dense_duals(qp: QPMatrices, eq: np.ndarray, ineq: np.ndarray) -> dict:
    """Map multipliers of the minimised form (d/d rhs of the minimum) to the model's sense."""
    duals = {con: qp.sense * float(val) for con, val in zip(qp.eq_constraints, eq)}
    duals.update({con: qp.sense * float(val) for con, val in zip(qp.ineq_constraints, ineq)})
    return duals


def _load(qp: QPMatrices, x: np.ndarray) -> None:
    for var, value in zip(qp.variables, x):
        var.set_value(float(value), skip_validation=True)


def _run_piqp(model: pyo.ConcreteModel, time_limit: float | None):
    import piqp

    qp = qp_matrices(model)
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
    termination = names.get(status, Termination.ERROR)
    r = solver.result
    _load(qp, r.x)
    # PIQP: L = f + y'(Ax - b) + z_u'(Gx - h_u) - z_l'(Gx - h_l); d min / d b = -y, d/dh = z_l - z_u
    duals = _dense_duals(qp, -np.asarray(r.y), np.asarray(r.z_l) - np.asarray(r.z_u))
    return termination, duals, str(status)


def _run_daqp(model: pyo.ConcreteModel, time_limit: float | None):
    from ctypes import c_double, c_int

    import daqp

    qp = qp_matrices(model)
    n = len(qp.variables)
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
    termination = names.get(int(exitflag), Termination.ERROR)
    _load(qp, np.asarray(x))
    lam = np.asarray(info["lam"])[n:]
    # DAQP: L = f + lam'(Ax - bound); d min / d bound = -lam
    m_eq = len(qp.b)
    duals = _dense_duals(qp, -lam[:m_eq], -lam[m_eq:])
    return termination, duals, f"exitflag {int(exitflag)}"


_CLARABEL_STATUS = {
    "Solved": Termination.OPTIMAL,
    # "AlmostSolved" met only Clarabel's reduced tolerances (5e-5): deliberately not optimal
    "AlmostSolved": Termination.NUMERICAL_ERROR,
    "PrimalInfeasible": Termination.INFEASIBLE,
    "DualInfeasible": Termination.UNBOUNDED,
    "AlmostPrimalInfeasible": Termination.NUMERICAL_ERROR,
    "AlmostDualInfeasible": Termination.NUMERICAL_ERROR,
    "MaxIterations": Termination.ITERATION_LIMIT,
    "MaxTime": Termination.TIME_LIMIT,
    "NumericalError": Termination.NUMERICAL_ERROR,
    "InsufficientProgress": Termination.NUMERICAL_ERROR,
}
"""Clarabel's ``SolverStatus`` (by name) -> :class:`Termination`; any other status is ``ERROR``."""


def _run_clarabel(model: pyo.ConcreteModel, time_limit: float | None):
    """Clarabel on :func:`tpm_models.conic.conic_form` of the model; duals by ``ConicForm.dual_values``."""
    import clarabel

    form = conic_form(model)
    make = {"zero": lambda c: clarabel.ZeroConeT(c.dim), "nonneg": lambda c: clarabel.NonnegativeConeT(c.dim),
            "soc": lambda c: clarabel.SecondOrderConeT(c.dim), "pow": lambda c: clarabel.PowerConeT(c.alpha)}
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = CLARABEL_TOL
    settings.tol_infeas_abs = settings.tol_infeas_rel = CLARABEL_TOL
    settings.tol_ktratio = CLARABEL_KTRATIO_TOL
    settings.iterative_refinement_reltol = settings.iterative_refinement_abstol = CLARABEL_REFINE_TOL
    settings.max_iter = CLARABEL_MAX_ITER
    if time_limit is not None:
        settings.time_limit = float(time_limit)
    solver = clarabel.DefaultSolver(form.P, form.q, form.A, form.b, [make[c.kind](c) for c in form.cones], settings)
    solution = solver.solve()
    status = str(solution.status)
    termination = _CLARABEL_STATUS.get(status, Termination.ERROR)
    x = np.asarray(solution.x, dtype=float)
    if termination not in (Termination.INFEASIBLE, Termination.UNBOUNDED) and x.size and np.isfinite(x).all():
        for var, value in zip(form.variables, x):  # a certificate is no point: left unloaded
            var.set_value(float(value), skip_validation=True)
    duals = None
    if termination is Termination.OPTIMAL:
        duals = form.dual_values(x, np.asarray(solution.z, dtype=float))
    return termination, duals, f"{status} in {solution.iterations} iterations"


@functools.cache
def _mosek_licensed() -> bool:
    """MOSEK needs a licence: Pyomo's ``license_is_valid`` checks one out (once per process)."""
    return bool(pyo.SolverFactory("mosek_direct").license_is_valid())


def _mosek_refuses(model: pyo.ConcreteModel) -> str | None:
    if not _mosek_licensed():
        return ("mosek is installed but has no licence (MOSEKLM_LICENSE_FILE unset or no valid "
                "mosek.lic in ~/mosek; https://www.mosek.com/products/academic-licenses/)")
    return None


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
    "clarabel": Backend("clarabel", "clarabel", frozenset({"LP", "QP", "SOCP", "NLP"}), _run_clarabel,
                        refuses=why_not_conic),
    "mosek": Backend(
        "mosek", "mosek", frozenset({"LP", "QP"}),
        _legacy_runner("mosek_direct", lambda t: {
            "dparam.intpnt_co_tol_rel_gap": OPTIMALITY_TOL, "dparam.intpnt_qo_tol_rel_gap": OPTIMALITY_TOL,
            **({"dparam.optimizer_max_time": t} if t else {}),
        }),
        refuses=_mosek_refuses, ready=_mosek_licensed,
    ),
}

DEFAULT = {"LP": "piqp", "QP": "piqp", "SOCP": "ipopt", "NLP": "ipopt"}
"""Default backend per model class (measurements: ``docs/solvers.md``)."""


def available_solvers(model_class_name: str | None = None) -> list[str]:
    """Installed backends that can run (``Backend.available``: MOSEK only with a licence), optionally only
    those that take ``model_class_name``. Clarabel is listed for ``"NLP"``: it takes the NLPs that
    :func:`tpm_models.conic.conic_form` maps (every NLP this library builds) and refuses others."""
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
    if not backend.installed():
        raise SolverUnavailableError(
            f"solver {solver!r} is not installed (pip install {backend.package}); installed for "
            f"{kind}: {available_solvers(kind)}"
        )
    reason = backend.refuses(model) if backend.refuses is not None else None
    if reason:
        raise SolverUnavailableError(f"{solver} cannot take {title(model)}: {reason}")
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
