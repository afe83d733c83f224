"""The capability table: the backends that have joined, what each takes, and the defaults.

A backend joins by calling :func:`register_backend` next to its adapter (one module per
backend in :mod:`tpm_models.solvers.backends`); nothing else lists it. :func:`backend_for`
reads the declarations, never a solver's name.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

import pyomo.environ as pyo

from tpm_models.solvers.common import SolverUnavailableError, Termination
from tpm_models.solvers.structure import ModelTraits, model_traits, title


@dataclass(frozen=True)
class Backend:
    """A solver adapter: what it takes, whether it is here, how to run it."""

    name: str
    package: str
    model_classes: frozenset[str]
    run: Callable[[pyo.ConcreteModel, float | None], tuple[Termination, dict | None, str]]
    """``run(model, time_limit)`` loads values into the model and returns
    ``(termination, duals by constraint data, message)``."""
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
    nonconvex: bool = False
    """Solves a non-convex quadratic model to global optimality. A model proved not convex
    (:attr:`~tpm_models.solvers.structure.ModelTraits.nonconvex`) is refused by every other backend."""
    time_limit: bool = True
    """Honours ``time_limit``; a backend that cannot (PIQP, DAQP) is refused when one is given."""
    proves_convexity: bool = False
    """Takes a model only once its ``refuses`` check has mapped every row to a convex cone (Clarabel): a model it
    solves is convex, so its certificate's KKT conditions prove optimality."""

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

MODEL_CLASSES = frozenset({"LP", "QP", "SOCP", "NLP"})
"""The model classes of :func:`tpm_models.solvers.structure.model_class`."""


def register_backend(name: str, package: str, model_classes: set[str] | frozenset[str],
                     run: Callable[[pyo.ConcreteModel, float | None], tuple[Termination, dict | None, str]],
                     version: Callable[[], str] | None = None,
                     refuses: Callable[[pyo.ConcreteModel | None], str | None] | None = None,
                     ready: Callable[[], bool] | None = None, *, integers: bool = False,
                     nonconvex: bool = False, time_limit: bool = True, proves_convexity: bool = False) -> Backend:
    """Join the capability table: ``solve(model, name)`` then runs ``run`` on models of ``model_classes``
    when ``package`` is installed. ``integers``, ``nonconvex``, ``time_limit``,
    ``proves_convexity``: see :class:`Backend`. See
    ``docs/solvers.md`` ("How to add a backend") for what ``run`` must do."""
    if name in BACKENDS:
        raise ValueError(f"a backend named {name!r} is registered already")
    unknown = set(model_classes) - MODEL_CLASSES
    if unknown:
        raise ValueError(f"unknown model classes {sorted(unknown)}; known: {sorted(MODEL_CLASSES)}")
    backend = Backend(name, package, frozenset(model_classes), run, version, refuses, ready, integers, nonconvex,
                      time_limit, proves_convexity)
    BACKENDS[name] = backend
    return backend


DEFAULT: dict[str, tuple[str, ...]] = {
    "LP": ("piqp",), "QP": ("piqp",), "SOCP": ("clarabel", "ipopt"), "NLP": ("clarabel", "ipopt"),
}
"""The default backends per model class, in order of preference (measurements: ``docs/solvers.md``):
:func:`backend_for` takes the first that is installed, takes the class and does not refuse the model. So an
NLP that Clarabel cannot map to its cones (a user's non-conic row: ``Backend.refuses``) goes to Ipopt."""


def default_solver(kind: str) -> str:
    """The first default of model class ``kind`` (what ``solve(model)`` runs on a model every default takes)."""
    return DEFAULT[kind][0]


def honoured_time_limit(solver: str, time_limit: float | None) -> float | None:
    """``time_limit`` when ``solver`` can honour one, else ``None``: a survey that gives every backend the
    same limit runs PIQP and DAQP (no time limit; bounded by their iteration caps) without one instead of
    having them refused."""
    backend = BACKENDS.get(solver)
    return time_limit if backend is None or backend.time_limit else None


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
    """The backend that will solve ``model`` (``"default"``: the default of its class) and the class,
    or :class:`tpm_models.solvers.common.SolverUnavailableError` saying why none may. ``kind``: the
    model's :func:`~tpm_models.solvers.structure.model_class` (or its
    :func:`~tpm_models.solvers.structure.model_traits`) if the caller has it (the walk through a
    large model is not repeated). A backend is refused when the model has integer variables it would relax,
    is proved not convex and the backend is not a global solver, or ``time_limit`` is given and the backend
    cannot honour one."""
    traits = kind if isinstance(kind, ModelTraits) else model_traits(model, kind)
    return _backend_for(model, solver, traits, time_limit)


def _backend_for(model: pyo.ConcreteModel, solver: str, traits: ModelTraits,
                 time_limit: float | None) -> tuple[Backend, str]:
    kind = traits.kind
    if solver == "default":
        candidates = DEFAULT.get(kind, ())
        if not candidates:
            raise SolverUnavailableError(f"no default solver for model class {kind}")
        reasons = []
        for name in candidates:
            try:
                return _checked(model, name, traits, time_limit)
            except SolverUnavailableError as exc:
                reasons.append(str(exc))
        raise SolverUnavailableError(f"no default solver takes {title(model)}: {'; '.join(reasons)}")
    return _checked(model, solver, traits, time_limit)


def _capable(kind: str, integers: bool, nonconvex: bool) -> list[str]:
    return [name for name in available_solvers(kind)
            if (BACKENDS[name].integers or not integers) and (BACKENDS[name].nonconvex or not nonconvex)]


def _checked(model: pyo.ConcreteModel, solver: str, traits: ModelTraits,
             time_limit: float | None) -> tuple[Backend, str]:
    kind = traits.kind
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
    if traits.integers and not backend.integers:
        raise SolverUnavailableError(
            f"{solver} cannot take {title(model)}: it would relax the integer variables "
            f"({', '.join(traits.integers)}), so its optimum would not be the model's; installed solvers that take "
            f"integers: "
            f"{_capable(kind, True, traits.nonconvex is not None)}")
    if traits.nonconvex and not backend.nonconvex:
        raise SolverUnavailableError(
            f"{solver} cannot take {title(model)}: it solves convex models only and the model is not convex "
            f"({traits.nonconvex}), so its answer could be a saddle or a local optimum; installed global solvers: "
            f"{_capable(kind, bool(traits.integers), True)}")
    if time_limit is not None and not backend.time_limit:
        raise SolverUnavailableError(
            f"{solver} cannot take time_limit={time_limit:g}: it has no time limit, so it could not honour it; drop "
            f"time_limit or use "
            f"one of {[n for n in available_solvers(kind) if BACKENDS[n].time_limit]}")
    reason = backend.refuses(model) if backend.refuses is not None else None
    if reason:
        raise SolverUnavailableError(f"{solver} cannot take {title(model)}: {reason}")
    return backend, kind
