"""The capability table: the backends that have joined, what each takes, and the defaults.

A backend joins by calling :func:`register_backend` next to its adapter (one module per
backend in :mod:`tpm_models.solvers.backends`); nothing else lists it. :func:`backend_for`
reads the declarations, never a solver's name.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata

import pyomo.core as pyo

from tpm_models.lazy import install_hint
from tpm_models.solvers.common import SolverUnavailableError, Termination
from tpm_models.solvers.matrices import NotAQPError
from tpm_models.solvers.program import Program, title
from tpm_models.solvers.structure import ModelTraits, model_traits
from tpm_models.solvers.variables import free_variables
from tpm_models.validation import MODEL_CLASSES as MODEL_CLASSES
from tpm_models.validation import SOLVABLE_CLASSES


@dataclass(frozen=True)
class Backend:
    """A solver adapter: what it takes, whether it is here, how to run it."""

    name: str
    package: str
    model_classes: frozenset[str]
    run: Callable[..., tuple[Termination, dict | None, str]]
    """``run(model, time_limit)`` loads values into the model and returns ``(termination, duals by constraint data,
    message)``; it is also given, as keywords, ``options=`` (the user's settings for the solver, its own names, over
    this library's, when the user gives some) and ``prepared=`` (what :attr:`prepare` built from the model)."""
    version: Callable[[], str] | None = None
    """The solver's version; default: the version of ``package``."""
    refuses: Callable[[pyo.ConcreteModel | None], str | None] | None = None
    """``refuses(model)``: ``None`` when the backend takes the model, else why not (a licence, a row it
    cannot map); :func:`backend_for` raises :class:`SolverUnavailableError` with it before running.
    Called with ``None`` it says why the backend cannot run at all, if it cannot."""
    ready: Callable[[], bool] | None = None
    """``ready()``: an installed package can run at all (a licence); ``None``: always."""
    integers: bool = False
    """Takes integer and binary variables (branch and bound: its integer optimum is the answer). A backend
    without it would relax them, so a model that has any is refused."""
    sos: bool = False
    """Takes ``SOSConstraint`` s natively (branch and bound on them). A model that holds any is refused by every
    other backend: ignoring them would solve another model."""
    nonconvex: bool = False
    """Solves a non-convex quadratic model to global optimality. A model proved not convex
    (:attr:`~tpm_models.solvers.structure.ModelTraits.nonconvex`) is refused by every other backend."""
    time_limit: bool = True
    """Honours ``time_limit``; a backend that cannot (PIQP, DAQP) is refused when one is given."""
    proves_convexity: bool = False
    """Takes a model only once its ``refuses`` check has mapped every row to a convex cone (Clarabel): a model it
    solves is convex, so its certificate's KKT conditions prove optimality."""
    accurate_point: bool = False
    """Its optimal points are accurate to about 1e-7 in the variables and multipliers on the paper's models (held to
    ``tpm_models.checks.deterministic.TOL`` and ``checks.robust.W_TOL`` by ``tpm-models check``); without it, the
    ties against it are held to their looser documented tolerances."""
    shape: str | None = None
    """The one shape of model of its classes it takes, as the module that defines it
    (``"tpm_models.solvers.slack_form"`` for ``linear-decomposition``): its ``prepare`` refuses every other model
    (:class:`~tpm_models.solvers.matrices.NotAQPError`, so ``solve(model, name)`` raises
    :class:`~tpm_models.solvers.common.SolverUnavailableError` before running, and ``solve(model)`` goes on to the
    next default); ``None``: it takes every model of its classes."""
    tee: bool = False
    """``run`` takes ``tee=True`` and then streams the solver's own log to standard output
    (``solve(model, tee=True)``); a backend without it runs silent and says so in the log."""
    licence_limit: Callable[[BaseException], bool] | None = None
    """``licence_limit(error)``: whether an error the backend's run raised is its licence refusing the model's size
    (a size-limited free licence), read from the solver's own error code; the run is then ``REFUSED`` with
    ``SolveResult.licence_limited`` set (nothing was solved; another backend may take the model)."""
    prepare: Callable[[Program], object] | None = None
    """``prepare(program)``: the backend's input built from the solve's reading of the model
    (:class:`~tpm_models.solvers.program.Program`; Clarabel's conic form, PIQP's matrices), or
    :class:`tpm_models.solvers.matrices.NotAQPError` saying why the backend cannot take the model. Called once per
    solve by :func:`prepared_backend` (the refusal check) and handed to ``run`` as ``prepared``."""
    matrix_run: Callable[..., object] | None = None
    """The backend takes a QP in matrix form (:class:`tpm_models.qp.QPMatrices`), no Pyomo model:
    ``matrix_run(qp, options=None, warm=None)`` returns a :class:`tpm_models.solvers.dense.MatrixSolution`
    (:func:`tpm_models.solvers.dense.solve_matrices` runs and verifies it); ``None``: it takes models only."""

    def installed(self) -> bool:
        """Whether ``package`` can be imported here."""
        return importlib.util.find_spec(self.package) is not None

    def available(self) -> bool:
        """Installed and ready (so listed by :func:`available_solvers`)."""
        return self.installed() and (self.ready is None or self.ready())

    def solver_version(self) -> str:
        """The version reported in every :class:`tpm_models.solvers.common.SolveResult`."""
        return self.version() if self.version else package_version(self.package)


@functools.cache
def package_version(package: str) -> str:
    """The installed version of ``package``, or ``"unknown"`` (cached: reading package metadata takes
    milliseconds, and a fit of the estimators solves several QPs)."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


BACKENDS: dict[str, Backend] = {}
"""Every backend that has joined, by name, in the order they joined (``tpm-models solvers``)."""


def register_backend(name: str, package: str, model_classes: set[str] | frozenset[str],
                     run: Callable[..., tuple[Termination, dict | None, str]],
                     version: Callable[[], str] | None = None,
                     refuses: Callable[[pyo.ConcreteModel | None], str | None] | None = None,
                     ready: Callable[[], bool] | None = None, *, integers: bool = False, sos: bool = False,
                     nonconvex: bool = False, time_limit: bool = True, proves_convexity: bool = False,
                     prepare: Callable[[Program], object] | None = None,
                     licence_limit: Callable[[BaseException], bool] | None = None,
                     matrix_run: Callable[..., object] | None = None, tee: bool = False,
                     accurate_point: bool = False, shape: str | None = None) -> Backend:
    """Join the capability table: ``solve(model, name)`` then runs ``run`` on models of ``model_classes``
    when ``package`` is installed. ``integers``, ``nonconvex``, ``time_limit``,
    ``proves_convexity``: see :class:`Backend`. See
    ``docs/solvers.md`` ("How to add a backend") for what ``run`` must do."""
    if name in BACKENDS:
        raise ValueError(f"a backend named {name!r} is registered already")
    if shape is not None and prepare is None:
        raise ValueError(f"backend {name!r} declares the shape {shape!r} but no prepare to refuse other models")
    unknown = set(model_classes) - set(SOLVABLE_CLASSES)
    if unknown:
        raise ValueError(f"model classes {sorted(unknown)} are not ones a backend takes; choose among "
                         f"{list(SOLVABLE_CLASSES)} (tpm_models.validation.SOLVABLE_CLASSES)")
    backend = Backend(name, package, frozenset(model_classes), run, version, refuses, ready, integers=integers,
                      sos=sos, nonconvex=nonconvex, time_limit=time_limit, proves_convexity=proves_convexity,
                      licence_limit=licence_limit, prepare=prepare, matrix_run=matrix_run, tee=tee,
                      accurate_point=accurate_point, shape=shape)
    BACKENDS[name] = backend
    return backend


DEFAULT: dict[str, tuple[str, ...]] = {
    "LP": ("piqp", "highs"), "QP": ("piqp",), "SOCP": ("clarabel", "ipopt"), "NLP": ("clarabel", "ipopt"),
}
"""The default backends per model class, in order of preference (measurements: ``docs/solvers.md``):
:func:`backend_for` takes the first that is installed, takes the class and does not refuse the model. So an
NLP that Clarabel cannot map to its cones (a user's non-conic row: ``Backend.refuses``) goes to Ipopt."""


LARGE_MODEL = 5_000
"""Variables from which a model is *large* for :data:`DEFAULT_LARGE` (measured: ``docs/bench-scale.md``)."""

DEFAULT_LARGE: dict[str, tuple[str, ...]] = {
    "LP": ("piqp", "highs"), "QP": ("linear-decomposition", "piqp", "clarabel"), "SOCP": ("clarabel", "ipopt"),
    "NLP": ("clarabel", "ipopt"),
}
"""The defaults of a model of at least :data:`LARGE_MODEL` variables, per class, in order of preference: a QP whose
dual is a box and one equality (:mod:`tpm_models.solvers.slack_form`) to ``linear-decomposition`` (every other QP it
refuses before running), then PIQP (its sparse solver) and Clarabel for LP and QP (the measurements:
``docs/solvers.md``, "Defaults chosen from these numbers")."""


HUGE_MODEL = 100_000
"""Variables from which :data:`DEFAULT_HUGE` holds (measured: ``docs/solvers.md``, "Defaults chosen from these
numbers")."""

DEFAULT_HUGE: dict[str, tuple[str, ...]] = {
    "LP": ("highs", "piqp"), "QP": ("linear-decomposition", "clarabel", "piqp"), "SOCP": ("clarabel", "ipopt"),
    "NLP": ("clarabel", "ipopt"),
}
"""The defaults of a model of at least :data:`HUGE_MODEL` variables: a QP of ``linear-decomposition``'s shape to it,
any other QP to Clarabel before PIQP, an LP to HiGHS before PIQP (the LP measurements: ``docs/solvers.md``, "The
defaults and their fallbacks")."""


FALLBACK: tuple[str, ...] = ("highs", "clarabel", "piqp", "scip", "ipopt", "gurobi", "cplex", "xpress", "mosek",
                             "daqp", "linear-decomposition")
"""After the defaults of a class, every other backend that takes it, in this order (free ones first, the
size-limited licences after): a model the defaults refuse (integer variables, SOS constraints, a ``time_limit``
PIQP cannot honour) or fail on goes to the next one that takes it, at any size."""


def model_size(model: pyo.ConcreteModel) -> int:
    """The number of variables of ``model`` that are not fixed (the size :func:`default_candidates` reads)."""
    return len(free_variables(model)[0])


def takers(program: Program, traits: ModelTraits, time_limit: float | None = None) -> Iterator[tuple]:
    """The defaults of the model (:func:`default_candidates` of its class and size) in order, each as
    ``(name, backend, prepared, None)`` when it takes the model (``prepared``: what ``Backend.prepare`` built) or
    ``(name, None, None, why not)`` when it does not: the one fallback order, which :func:`prepared_backend` and
    :func:`tpm_models.solvers.dispatch.solve` walk."""
    for name in default_candidates(traits.kind, program.n):
        try:
            backend, _, prepared = _checked(program, name, traits, time_limit)
        except SolverUnavailableError as exc:
            yield name, None, None, str(exc)
            continue
        yield name, backend, prepared, None


def default_candidates(kind: str, size: int) -> tuple[str, ...]:
    """The defaults of a model of class ``kind`` and ``size`` variables, in order: :data:`DEFAULT_HUGE` from
    :data:`HUGE_MODEL` variables on, :data:`DEFAULT_LARGE` from :data:`LARGE_MODEL` on, else :data:`DEFAULT`, then
    the other backends of :data:`FALLBACK` that take the class; the first that takes the model solves it, the next
    ones are the fallbacks of ``solve(model)`` when it fails (:func:`tpm_models.solvers.dispatch.solve`)."""
    table = DEFAULT_HUGE if size >= HUGE_MODEL else DEFAULT_LARGE if size >= LARGE_MODEL else DEFAULT
    first = table.get(kind, ())
    return first + tuple(name for name in FALLBACK if name not in first and name in BACKENDS
                         and kind in BACKENDS[name].model_classes)


def default_solver(kind: str) -> str:
    """The first default of model class ``kind`` (what ``solve(model)`` runs on a model every default takes)."""
    return DEFAULT[kind][0]


def honoured_time_limit(solver: str, time_limit: float | None) -> float | None:
    """``time_limit`` when ``solver`` can honour one, else ``None``: a survey that gives every backend the
    same limit runs PIQP and DAQP (no time limit; bounded by their iteration caps) without one instead of
    having them refused."""
    backend = BACKENDS.get(solver)
    return time_limit if backend is None or backend.time_limit else None


def has_accurate_point(solver: str) -> bool:
    """Whether the backend named ``solver`` declares :attr:`Backend.accurate_point` (``False`` for a name that is not
    a registered backend)."""
    backend = BACKENDS.get(solver)
    return backend is not None and backend.accurate_point


def available_solvers(model_class_name: str | None = None) -> list[str]:
    """Installed backends that can run (``Backend.available``: MOSEK only with a licence), optionally only
    those that take ``model_class_name``. Clarabel is listed for ``"NLP"``: it takes the NLPs that
    :func:`tpm_models.solvers.conic.conic_form` maps (every NLP this library builds) and refuses others."""
    return [
        name for name, b in BACKENDS.items()
        if b.available() and (model_class_name is None or model_class_name in b.model_classes)
    ]


def backend_for(model: pyo.ConcreteModel, solver: str, kind: str | ModelTraits | None = None,
                time_limit: float | None = None) -> tuple[Backend, str]:
    """:func:`prepared_backend` without what the backend prepared."""
    backend, kind, _ = prepared_backend(model, solver, kind, time_limit)
    return backend, kind


def prepared_backend(model: pyo.ConcreteModel, solver: str, kind: str | ModelTraits | None = None,
                     time_limit: float | None = None, program: Program | None = None) -> tuple[Backend, str, object]:
    """The backend that will solve ``model`` (``"default"``: the first of :func:`default_candidates` that takes it),
    the class, and what the backend prepared from the model (``Backend.prepare``: built once, by this refusal
    check, then handed to ``run``); or :class:`tpm_models.solvers.common.SolverUnavailableError` saying why none may.
    ``kind``: the model's :func:`~tpm_models.solvers.structure.model_class` (or its
    :func:`~tpm_models.solvers.structure.model_traits`) if the caller has it (the walk through a large model is not
    repeated). A backend is refused when the model has integer variables it would relax, is proved not convex and
    the backend is not a global solver, or ``time_limit`` is given and the backend cannot honour one. ``program``:
    the solve's reading of ``model`` (a fresh one if not given)."""
    program = Program(model) if program is None else program
    traits = kind if isinstance(kind, ModelTraits) else model_traits(model, kind, program)
    if solver != "default":
        return _checked(program, solver, traits, time_limit)
    reasons = []
    for _, backend, prepared, why in takers(program, traits, time_limit):
        if backend is not None:
            return backend, traits.kind, prepared
        reasons.append(why)
    raise no_default(model, traits.kind, reasons)


def no_default(model: pyo.ConcreteModel, kind: str, reasons: list[str]) -> SolverUnavailableError:
    """The error when no default takes ``model`` (of class ``kind``), with each default's ``reasons``."""
    if not reasons:
        return SolverUnavailableError(f"no default solver for model class {kind}")
    return SolverUnavailableError(f"no default solver takes the {kind} {title(model)!r}: {'; '.join(reasons)}")


def _capable(kind: str, integers: bool, nonconvex: bool) -> list[str]:
    return [name for name in available_solvers(kind)
            if (BACKENDS[name].integers or not integers) and (BACKENDS[name].nonconvex or not nonconvex)]


def _checked(program: Program, solver: str, traits: ModelTraits,
             time_limit: float | None) -> tuple[Backend, str, object]:
    model, kind = program.model, traits.kind
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
            f"solver {solver!r} is not installed ({install_hint(backend.package)}); installed for "
            f"{kind}: {available_solvers(kind)}"
        )
    if traits.integers and not backend.integers:
        raise SolverUnavailableError(
            f"{solver} cannot take the {kind} {title(model)!r}: it would relax the integer variables "
            f"({', '.join(traits.integers)}), so its optimum would not be the model's; installed solvers that take "
            f"integers: "
            f"{_capable(kind, True, traits.nonconvex is not None)}")
    if traits.sos and not backend.sos:
        raise SolverUnavailableError(
            f"{solver} cannot take the {kind} {title(model)!r}: it holds SOS constraints, which {solver} would "
            f"ignore; installed solvers that take them: {[n for n in available_solvers(kind) if BACKENDS[n].sos]} "
            "(or write the Piecewise with pw_repn='DCC' or 'BIGM_BIN', binary variables any MILP solver takes)")
    if traits.nonconvex and not backend.nonconvex:
        raise SolverUnavailableError(
            f"{solver} cannot take the {kind} {title(model)!r}: it solves convex models only and the model is not "
            f"convex ({traits.nonconvex}), so its answer could be a saddle or a local optimum; installed global "
            f"solvers: {_capable(kind, bool(traits.integers), True)}")
    if time_limit is not None and not backend.time_limit:
        raise SolverUnavailableError(
            f"{solver} cannot take time_limit={time_limit:g}: it has no time limit, so it could not honour it; drop "
            f"time_limit or use "
            f"one of {[n for n in available_solvers(kind) if BACKENDS[n].time_limit]}")
    reason = backend.refuses(model) if backend.refuses is not None else None
    if reason:
        raise SolverUnavailableError(f"{solver} cannot take the {kind} {title(model)!r}: {reason}")
    prepared = None
    if backend.prepare is not None:
        try:
            prepared = backend.prepare(program)
        except NotAQPError as exc:
            raise SolverUnavailableError(f"{solver} cannot take the {kind} {title(model)!r}: {exc}") from exc
    return backend, kind, prepared
