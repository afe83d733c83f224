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
from typing import Any

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
    """A solver adapter: what it takes, whether it is here, how to run it (each field: ``docs/solvers.md``, "How to
    add a backend")."""

    name: str
    package: str
    model_classes: frozenset[str]
    run: Callable[..., tuple[Termination, dict | None, str]]
    """``run(model, time_limit)`` loads values into the model and returns ``(termination, duals by constraint data,
    message)``; given, as keywords, ``options=`` (the user's settings, the solver's names, over this library's) when
    there are some, ``prepared=`` (what :attr:`prepare` built) and ``tee=True`` (with :attr:`tee`)."""
    version: Callable[[], str] | None = None
    """The solver's version; default: the version of ``package``."""
    refuses: Callable[[pyo.ConcreteModel | None], str | None] | None = None
    """``refuses(model)``: ``None`` when the backend takes the model, else why not (raised as
    :class:`SolverUnavailableError` before any run); ``refuses(None)``: why it cannot run at all, if it cannot."""
    ready: Callable[[], bool] | None = None
    """``ready()``: an installed package can run at all (a licence); ``None``: always."""
    integers: bool = False
    """Takes integer and binary variables (branch and bound); a backend without it is refused a model that has any."""
    sos: bool = False
    """Takes ``SOSConstraint`` s natively; every other backend is refused a model that holds any."""
    nonconvex: bool = False
    """Solves a non-convex quadratic model to global optimality; every other backend is refused a model proved not
    convex (:attr:`~tpm_models.solvers.structure.ModelTraits.nonconvex`)."""
    time_limit: bool = True
    """Honours ``time_limit``; a backend that cannot (PIQP, DAQP) is refused when one is given."""
    proves_convexity: bool = False
    """Takes a model only once its ``refuses`` check has mapped every row to a convex cone (Clarabel): its
    certificate's KKT conditions then prove optimality."""
    accurate_point: bool = False
    """Its optimal points are accurate to about 1e-7 in the variables and multipliers, so ``tpm-models check`` holds
    its ties to the formulations' tolerance; without it, to their looser documented tolerances."""
    shape: str | None = None
    """The module defining the one shape of model it takes (``"tpm_models.solvers.slack_form"``), refused otherwise
    by its ``prepare``; ``None``: every model of its classes."""
    tee: bool = False
    """``run`` takes ``tee=True`` and then streams the solver's own log to standard output."""
    licence_limit: Callable[[BaseException], bool] | None = None
    """``licence_limit(error)``: whether an error ``run`` raised is its licence refusing the model's size (from the
    solver's own error code): the run is then ``REFUSED`` with ``SolveResult.licence_limited``."""
    prepare: Callable[[Program], object] | None = None
    """``prepare(program)``: the backend's input built from the solve's :class:`~tpm_models.solvers.program.Program`,
    or :class:`~tpm_models.solvers.matrices.NotAQPError` saying why it cannot take the model; called once a solve by
    the refusal check (:func:`prepared_backend`) and handed to ``run`` as ``prepared``."""
    pyros: str | None = None
    """The name PyROS's subsolver of this backend is made from (:func:`tpm_models.checks.verify.pyros_subsolver`:
    ``"gurobi_direct"``, ``"scip"``, ``"tpm_ipopt"``); ``None``: not a PyROS subsolver. Which subsolvers PyROS tries
    is read off the other declarations (:func:`pyros_backends`)."""
    matrix_run: Callable[..., object] | None = None
    """``matrix_run(qp, options=None, warm=None)``: the backend on a :class:`tpm_models.qp.QPMatrices`, no Pyomo
    model, returning a :class:`tpm_models.solvers.dense.MatrixSolution` (run by
    :func:`tpm_models.solvers.dense.solve_matrices`); ``None``: models only."""

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
    """The installed version of ``package``, or ``"unknown"``: the ``Version`` field among the headers of its core
    metadata (``METADATA``, the same field ``importlib.metadata.version`` returns), read line by line rather than
    by the ``email`` parser that function loads on its first call (1.9 ms against 0.4 ms here, part of a first
    fit's 10 ms at 10^3 points); cached, as a fit of the estimators solves several QPs."""
    try:
        distribution = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        return "unknown"
    for line in (distribution.read_text("METADATA") or distribution.read_text("PKG-INFO") or "").splitlines():
        if not line.strip():
            break  # the headers end at the first empty line
        if line.startswith("Version:"):
            return line.removeprefix("Version:").strip()
    return "unknown"  # no Version header (importlib.metadata gives None, or KeyError under its backport)


BACKENDS: dict[str, Backend] = {}
"""Every backend that has joined, by name, in the order they joined (``tpm-models solvers``)."""


def raised_by(exc: BaseException | None, test: Callable[[BaseException], bool]) -> bool:
    """``test`` of ``exc`` or of an error it was raised from (``__cause__``, ``__context__``; five deep: Pyomo's
    interfaces and PyROS may wrap the solver's own error)."""
    seen = 0
    while exc is not None and seen < 5:
        if test(exc):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def is_licence_refusal(exc: BaseException) -> bool:
    """Whether ``exc`` is a backend's licence refusing a model's size, as that backend declares it
    (:attr:`Backend.licence_limit`, on the solver's own error: Gurobi's error code 10010, say), raised by it or by
    an error it was raised from; what a solver run through Pyomo (PyROS's subsolvers) raises. Never a word match:
    an error that only says "licence" is not one."""
    return any(b.licence_limit is not None and raised_by(exc, b.licence_limit) for b in BACKENDS.values())


def register_backend(name: str, package: str, model_classes: set[str] | frozenset[str],
                     run: Callable[..., tuple[Termination, dict | None, str]],
                     version: Callable[[], str] | None = None,
                     refuses: Callable[[pyo.ConcreteModel | None], str | None] | None = None,
                     ready: Callable[[], bool] | None = None, **capabilities: Any) -> Backend:
    """Join the capability table: ``solve(model, name)`` then runs ``run`` on models of ``model_classes`` when
    ``package`` is installed; ``capabilities``: the other fields of :class:`Backend`, by keyword. What ``run`` must
    do: ``docs/solvers.md``, "How to add a backend"."""
    if name in BACKENDS:
        raise ValueError(f"a backend named {name!r} is registered already")
    backend = Backend(name, package, frozenset(model_classes), run, version, refuses, ready, **capabilities)
    if backend.shape is not None and backend.prepare is None:
        raise ValueError(f"backend {name!r} declares the shape {backend.shape!r} but no prepare to refuse other models")
    unknown = set(model_classes) - set(SOLVABLE_CLASSES)
    if unknown:
        raise ValueError(f"model classes {sorted(unknown)} are not ones a backend takes; choose among "
                         f"{list(SOLVABLE_CLASSES)} (tpm_models.validation.SOLVABLE_CLASSES)")
    BACKENDS[name] = backend
    return backend


DEFAULT: dict[str, tuple[str, ...]] = {
    "LP": ("piqp", "highs"), "QP": ("piqp",), "SOCP": ("clarabel", "ipopt"), "NLP": ("clarabel", "ipopt"),
}
"""The default backends per model class, in order of preference (why: ``docs/solvers.md``, "Which solver for which
model"); the first that takes the model solves it (an NLP that Clarabel cannot map to its cones goes to Ipopt)."""


LARGE_MODEL = 5_000
"""Variables from which a model is *large* for :data:`DEFAULT_LARGE` (measured: ``docs/bench-scale.md``)."""

CONIC_LARGE: tuple[str, ...] = ("linear-decomposition", "working-set", "clarabel", "ipopt")
"""The large SOCP and NLP defaults: (23), (26) at p = 2 and (28) with one radius (:mod:`tpm_models.solvers.norm_form`)
to ``linear-decomposition`` (which refuses every other model), a model with margin rows
(:mod:`tpm_models.solvers.margin_rows`: (23), (26)-(29)) to ``working-set``, then those of :data:`DEFAULT`."""

DEFAULT_LARGE: dict[str, tuple[str, ...]] = {**DEFAULT, "QP": ("linear-decomposition", "piqp", "clarabel"),
                                             "SOCP": CONIC_LARGE, "NLP": CONIC_LARGE}
"""The defaults of a model of at least :data:`LARGE_MODEL` variables: a QP of the shape of
:mod:`tpm_models.solvers.slack_form` to ``linear-decomposition`` (which refuses every other QP), then PIQP's sparse
solver and Clarabel; an SOCP or NLP: :data:`CONIC_LARGE` (why: ``docs/solvers.md``, "Defaults chosen from these
numbers")."""


HUGE_MODEL = 100_000
"""Variables from which :data:`DEFAULT_HUGE` holds (``docs/solvers.md``, "Defaults chosen from these numbers")."""

DEFAULT_HUGE: dict[str, tuple[str, ...]] = {
    **DEFAULT, "LP": ("highs", "piqp"), "QP": ("linear-decomposition", "working-set", "clarabel", "piqp"),
    "SOCP": CONIC_LARGE, "NLP": CONIC_LARGE,
}
"""The defaults of a model of at least :data:`HUGE_MODEL` variables (why: ``docs/solvers.md``, "The defaults and
their fallbacks"); a QP with margin rows ((23) at p = 1, inf) to ``working-set`` before Clarabel on the whole form
(why not from :data:`LARGE_MODEL`: ``docs/solvers.md``, "Margin rows by a working set")."""


FALLBACK: tuple[str, ...] = ("highs", "clarabel", "piqp", "scip", "ipopt", "gurobi", "cplex", "xpress", "mosek",
                             "daqp", "linear-decomposition", "working-set")
"""After the defaults of a class, every other backend that takes it, in this order (free ones first, the
size-limited licences after), at any size."""


def model_size(model: pyo.ConcreteModel) -> int:
    """The number of variables of ``model`` that are not fixed (the size :func:`default_candidates` reads)."""
    return len(free_variables(model)[0])


def takers(program: Program, traits: ModelTraits, time_limit: float | None = None) -> Iterator[tuple]:
    """The one fallback order: the defaults of the model (:func:`default_candidates`), each as
    ``(name, backend, prepared, None)`` when it takes the model (``prepared``: what ``Backend.prepare`` built), else
    ``(name, None, None, why not)``; :func:`prepared_backend` and :func:`tpm_models.solvers.dispatch.solve` walk it."""
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
    the other backends of :data:`FALLBACK` that take the class."""
    table = DEFAULT_HUGE if size >= HUGE_MODEL else DEFAULT_LARGE if size >= LARGE_MODEL else DEFAULT
    first = table.get(kind, ())
    return first + tuple(name for name in FALLBACK if name not in first and name in BACKENDS
                         and kind in BACKENDS[name].model_classes)


def default_solver(kind: str) -> str:
    """The first default of model class ``kind`` (what ``solve(model)`` runs on a model every default takes)."""
    return DEFAULT[kind][0]


def honoured_time_limit(solver: str, time_limit: float | None) -> float | None:
    """``time_limit`` when ``solver`` can honour one, else ``None`` (a survey's one limit for every backend runs
    PIQP and DAQP without one instead of having them refused)."""
    backend = BACKENDS.get(solver)
    return time_limit if backend is None or backend.time_limit else None


def has_accurate_point(solver: str) -> bool:
    """Whether the backend named ``solver`` declares :attr:`Backend.accurate_point` (``False``: not a backend)."""
    backend = BACKENDS.get(solver)
    return backend is not None and backend.accurate_point


def accurate_solvers(kind: str, time_limit: bool = False) -> list[str]:
    """The installed backends that take every model of class ``kind`` (no :attr:`Backend.shape`) and declare
    :attr:`Backend.accurate_point` (and, with ``time_limit``, honour a time limit), in the order they joined: the
    checks' reference of an NLP and the cutting planes' last resort on a master (Ipopt here)."""
    return [name for name in available_solvers(kind) if BACKENDS[name].accurate_point and BACKENDS[name].shape is None
            and (BACKENDS[name].time_limit or not time_limit)]


def time_limited_defaults(kind: str, size: int) -> list[str]:
    """The defaults of a model of class ``kind`` and ``size`` variables (:data:`DEFAULT`, :data:`DEFAULT_LARGE` or
    :data:`DEFAULT_HUGE`, without :data:`FALLBACK`) that are installed, honour a time limit and take every model of
    their classes (no :attr:`Backend.shape`): the solvers of a large model that nothing else would stop (Clarabel
    for a large QP here)."""
    table = DEFAULT_HUGE if size >= HUGE_MODEL else DEFAULT_LARGE if size >= LARGE_MODEL else DEFAULT
    here = available_solvers(kind)
    return [name for name in table.get(kind, ()) if name in here
            and BACKENDS[name].time_limit and BACKENDS[name].shape is None]


def pyros_backends(global_only: bool = False, free_only: bool = False) -> list[Backend]:
    """The registered backends that declare a PyROS subsolver (:attr:`Backend.pyros`), installed or not, in the
    order they joined; ``global_only``: those that solve non-convex models globally (:attr:`Backend.nonconvex`:
    PyROS's default subsolvers); ``free_only``: those whose licence never refuses a model's size (no
    :attr:`Backend.licence_limit`: PyROS's subsolvers when the default's licence refuses)."""
    return [b for b in BACKENDS.values() if b.pyros is not None and (b.nonconvex or not global_only)
            and (b.licence_limit is None or not free_only)]


def available_solvers(model_class_name: str | None = None) -> list[str]:
    """Installed backends that can run (``Backend.available``: MOSEK only with a licence), optionally only
    those that take ``model_class_name``."""
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
    """The backend that will solve ``model`` (``"default"``: the first of :func:`takers`), the class, and what the
    backend prepared from the model (``Backend.prepare``, handed to ``run``); or
    :class:`~tpm_models.solvers.common.SolverUnavailableError` saying why none may (integers it would relax, a
    model proved not convex on a backend that is not global, a ``time_limit`` it cannot honour, its own refusal).
    ``kind``: the model's :func:`~tpm_models.solvers.structure.model_class` or
    :func:`~tpm_models.solvers.structure.model_traits` if the caller has it; ``program``: the solve's reading of
    ``model`` (a fresh one if not given)."""
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
        raise SolverUnavailableError(f"unknown solver {solver!r}; known: {sorted(BACKENDS)}; installed for {kind}: "
                                     f"{available_solvers(kind)}")
    backend = BACKENDS[solver]
    if kind not in backend.model_classes:
        raise SolverUnavailableError(f"{solver} cannot take a {kind} ({title(model)}); installed solvers that can: "
                                     f"{available_solvers(kind)}")
    if not backend.installed():
        raise SolverUnavailableError(f"solver {solver!r} is not installed ({install_hint(backend.package)}); "
                                     f"installed for {kind}: {available_solvers(kind)}")

    def refused(why: str) -> SolverUnavailableError:
        return SolverUnavailableError(f"{solver} cannot take the {kind} {title(model)!r}: {why}")

    if traits.integers and not backend.integers:
        raise refused(f"it would relax the integer variables ({', '.join(traits.integers)}), so its optimum would not "
                      f"be the model's; installed solvers that take integers: "
                      f"{_capable(kind, True, traits.nonconvex is not None)}")
    if traits.sos and not backend.sos:
        raise refused(f"it holds SOS constraints, which {solver} would ignore; installed solvers that take them: "
                      f"{[n for n in available_solvers(kind) if BACKENDS[n].sos]} (or write the Piecewise with "
                      "pw_repn='DCC' or 'BIGM_BIN', binary variables any MILP solver takes)")
    if traits.nonconvex and not backend.nonconvex:
        raise refused(f"it solves convex models only and the model is not convex ({traits.nonconvex}), so its answer "
                      f"could be a saddle or a local optimum; installed global solvers: "
                      f"{_capable(kind, bool(traits.integers), True)}")
    if time_limit is not None and not backend.time_limit:
        raise SolverUnavailableError(
            f"{solver} cannot take time_limit={time_limit:g}: it has no time limit, so it could not honour it; drop "
            f"time_limit or use one of {[n for n in available_solvers(kind) if BACKENDS[n].time_limit]}")
    reason = backend.refuses(model) if backend.refuses is not None else None
    if reason:
        raise refused(reason)
    prepared = None
    if backend.prepare is not None:
        try:
            prepared = backend.prepare(program)
        except NotAQPError as exc:
            raise refused(str(exc)) from exc
    return backend, kind, prepared
