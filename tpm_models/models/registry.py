"""The front door of the models: every builder joins here with what it is, and :func:`build` calls it.

A builder joins with :func:`register_model`, a decorator written next to it, declaring its key (the
paper's equation number, or a name such as ``"28D"``), family, model class, kernel and role, and, for
a dual, its primal and the constant the dual omits, and, for a robust counterpart, the nominal model it
robustifies and its uncertain data (``nominal=``, ``uncertain=``: ``tpm-models verify``). Nothing else lists
it: it is then reachable by :func:`build`, :func:`tpm_models.solvers.dispatch.solve`, the exports,
``tpm-models solve/export/check/verify --model KEY`` and the generic ties that apply to it
(``docs/adding-a-formulation.md``).

Every builder takes its data in one order, and the options it uses by keyword::

    binary family:      builder(X, y_pm, nu, alpha, *, kernel=..., p=..., eps=...)   (y_pm in {-1, +1})
    multiclass family:  builder(X, y, c, nu, alpha, *, kernel=..., p=..., eps=...)

``kernel`` is passed to kernel models only (``kernel != "none"``), ``p`` and ``eps`` to robust models
only (``robust_p is not None``). :func:`build` turns ``(y, c)`` into ``y_pm`` for the binary family.

>>> from tpm_models import build, load_dataset, min_max_scale
>>> d = load_dataset("iris")
>>> model = build(16, min_max_scale(d.X), d.y, c=0, nu=0.5, alpha=1.0)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyomo.core as pyo

from tpm_models.data import one_vs_rest
from tpm_models.kernels import Kernel
from tpm_models.models.norms import check_p
from tpm_models.validation import MODEL_CLASSES

FAMILIES = ("binary", "multiclass")
"""``binary``: class ``c`` positive, the rest negative, the builder takes labels in {-1, +1};
``multiclass``: the builder takes the labels and the class ``c``."""
KERNEL_KINDS = ("none", "feature map", "gram")
ROLES = ("primal", "dual")
GROUPS = ("paper", "dual", "kernel", "derived", "dro", "user")
"""Where a model comes from: the paper's numbered models, the duals derived here, the robust kernel
model derived here, the paper's counterparts derived by :func:`tpm_models.models.counterpart.robust_counterpart`
(``15R``, ``2R``, ``3R``), the distributionally robust models derived here (``23W``: Wasserstein balls), and the
models a user registers."""


@dataclass(frozen=True)
class ModelInfo:
    """One registered model: its builder and what it is."""

    key: int | str
    """The registry key: the paper's equation number for its numbered models (``15``), or a name (``"28D"``: the
    dual of (28); ``"23K"``; ``"15R"``; a user's ``"2RE"``). Not always an equation: hence not ``eq``."""
    builder: Callable[..., pyo.ConcreteModel]
    family: str
    """One of :data:`FAMILIES`."""
    model_class: str
    """What the model holds, one of :data:`tpm_models.validation.MODEL_CLASSES` (the solvers read it from the
    model itself; this is what the model is declared to be)."""
    kernel: str
    """``"none"`` (linear model), ``"feature map"`` (explicit finite map) or ``"gram"``."""
    role: str
    """``"primal"`` or ``"dual"``."""
    summary: str
    robust_p: tuple[float, ...] | None = None
    """For the robust models: the p it takes (``()`` = any p >= 1); ``None`` = not robust."""
    primal: int | str | None = None
    """For a dual: the key of its primal, when one is registered; the tie ``opt(primal) = opt(dual) +
    omitted_constant`` then applies. (19) has none: its primal lives in the kernel's feature space."""
    omitted_constant: Callable[..., float] | None = None
    """For a dual: the constant its objective omits, called with the builder's own arguments; ``None``: 0."""
    group: str = "user"
    """One of :data:`GROUPS`."""
    nominal: int | str | None = None
    """For a robust model: the key of the nominal model it is the robust counterpart of (``15`` for (23),
    ``2`` for a robust (2)); with :attr:`uncertain`, ``tpm-models verify --model KEY`` checks the claim."""
    uncertain: Callable[..., list] | None = None
    """For a robust model: ``uncertain(nominal_model, p, eps)``, the uncertain data of the nominal model
    built on the same data: a list of :class:`tpm_models.models.uncertainty.UncertainRow` and
    :class:`tpm_models.models.uncertainty.UncertainTerm` (the verifier, :func:`tpm_models.checks.robust.verify_model`,
    calls it; :func:`tpm_models.models.counterpart.robust_counterpart` derives a counterpart from it). The paper's
    (23), (26)-(29) register :func:`tpm_models.models.semi_infinite.uncertain_22`."""
    compare: tuple[str, ...] = ()
    """The first-stage variables (nominal names) whose optimum is unique, held to the verifier's
    ``SOLUTION_TOL`` (``("w",)``: the strongly convex part); ``()``: the distance is reported only."""

    @property
    def verifiable(self) -> bool:
        """It names its nominal model and its uncertain data: ``tpm-models verify`` takes it."""
        return self.nominal is not None and self.uncertain is not None

    def options(self, kernel: Kernel | None = None, p: float | None = None,
                eps: float | np.ndarray | None = None) -> dict:
        """The keywords the builder takes, checked: ``kernel`` for kernel models, ``p`` and ``eps`` for robust
        models (a single allowed p is the default); ``ValueError`` for a missing or an unused one."""
        eq = self.key
        out: dict = {}
        if self.robust_p is None:
            if p is not None or eps is not None:
                raise ValueError(f"({eq}) is not a robust model and takes no p or eps; robust models: "
                                 f"{', '.join(str(k) for k in robust_keys())}")
        else:
            if eps is None:
                raise ValueError(f"({eq}) is a robust model: give eps (the radii of (21))")
            if self.robust_p:
                p = self.robust_p[0] if p is None and len(self.robust_p) == 1 else p
                if p is None or check_p(p) not in self.robust_p:
                    raise ValueError(
                        f"({eq}) takes p in {[f'{q:g}' for q in self.robust_p]}, got p={p}; "
                        "(23) and (26) take any p >= 1"
                    )
            elif p is None:
                raise ValueError(f"({eq}) needs p >= 1 (the norm of the uncertainty set (21))")
            out.update(p=check_p(p), eps=eps)  # a number, whatever the caller held ("inf" from a command line)
        if self.kernel == "none":
            if kernel is not None and kernel.name != "linear":
                raise ValueError(f"({eq}) is a linear model and takes no kernel; kernel models: "
                                 f"{', '.join(str(k) for k in kernel_keys())}")
        else:
            if kernel is None:
                raise ValueError(f"({eq}) needs a kernel (tpm_models.Kernel)")
            out["kernel"] = kernel
        return out

    def parameters(self) -> dict[str, inspect.Parameter]:
        """The builder's own parameters (:func:`extra_parameters`): what ``build(KEY, ..., **params)`` and
        ``--param name=value`` may give it."""
        return extra_parameters(self.builder, len(self.data_names()) + 2 if self.takes_data else 0)

    @property
    def takes_data(self) -> bool:
        """The builder takes the data, ``nu`` and ``alpha`` first (every builder of the paper); False for a builder
        with no positional parameter (``def build()``, ``def build(*, size=3)``): a model with data of its own,
        called with its keywords only (``tpm-models robustify --model KEY`` without ``--dataset``)."""
        try:
            params = inspect.signature(self.builder).parameters.values()
        except (TypeError, ValueError):
            return True
        return any(q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD, q.VAR_POSITIONAL) for q in params)

    def data_names(self) -> tuple[str, ...]:
        return ("X", "y_pm") if self.family == "binary" else ("X", "y", "c")

    def data(self, X: np.ndarray, y: np.ndarray, c: object) -> tuple:
        """The builder's data arguments: ``(X, y_pm)`` for the binary family (class ``c`` positive),
        ``(X, y, c)`` for the multiclass family."""
        return (X, one_vs_rest(y, c)) if self.family == "binary" else (X, y, c)


REGISTRY: dict[int | str, ModelInfo] = {}
"""Every registered model, by key, in the order it joined; :attr:`ModelInfo.group` says where it comes from."""


def group_keys(group: str) -> list[int | str]:
    """The keys of the models of one :data:`GROUPS` entry, in the order they joined: ``"paper"`` (the numbered
    models), ``"dual"`` (``"23D"``, ``"27D"``, ... : ``docs/robust_duals.md``), ``"kernel"`` (``"23K"``),
    ``"derived"`` (``"15R"``, ``"2R"``, ``"3R"``: :mod:`tpm_models.models.derived`), ``"dro"`` (``"23W"``:
    :mod:`tpm_models.models.wasserstein`), ``"user"`` (registered from
    outside the package)."""
    if group not in GROUPS:
        raise ValueError(f"group {group!r} is not one of {GROUPS}")
    return [k for k, info in REGISTRY.items() if info.group == group]


def all_models() -> dict[int | str, ModelInfo]:
    """Every registered model, group by group in the order of :data:`GROUPS` (the paper's first)."""
    return {k: info for group in GROUPS for k, info in REGISTRY.items() if info.group == group}


def robust_keys() -> list[int | str]:
    return [k for k, info in all_models().items() if info.robust_p is not None]


def verifiable_keys() -> list[int | str]:
    """The robust counterparts that name their nominal model and uncertain data (:attr:`ModelInfo.verifiable`)."""
    return [k for k, info in all_models().items() if info.verifiable]


def kernel_keys() -> list[int | str]:
    return [k for k, info in all_models().items() if info.kernel != "none"]


def _key(eq: int | str) -> int | str:
    """An equation number as an int; a name stripped and upper-cased (``"28d"`` is ``"28D"``)."""
    if isinstance(eq, bool):
        raise ValueError(f"({eq}) is not a model key")
    if isinstance(eq, (int, np.integer)):
        return int(eq)
    if isinstance(eq, str):
        text = eq.strip()
        return int(text) if text.lstrip("-").isdigit() else text.upper()
    if isinstance(eq, float) and eq.is_integer():
        return int(eq)
    raise ValueError(f"({eq}) is not a model key: give an equation number or a name such as '28D'")


def register_model(
    eq: int | str, *, family: str, model_class: str, kernel: str = "none", role: str = "primal", summary: str,
    robust_p: tuple[float, ...] | None = None, primal: int | str | None = None,
    omitted_constant: Callable[..., float] | None = None, group: str = "user",
    nominal: int | str | None = None, uncertain: Callable[..., list] | None = None, compare: tuple[str, ...] = (),
) -> Callable[[Callable[..., pyo.ConcreteModel]], Callable[..., pyo.ConcreteModel]]:
    """Decorator: register the builder it decorates under ``eq`` (see :class:`ModelInfo` for the fields).

    The builder must take the arguments of its family in the order of the module docstring, with
    ``kernel``, ``p`` and ``eps`` by keyword where it uses them. A key may be registered once.

    A robust model may say what it robustifies: ``nominal=`` (the key of the nominal model, built on the
    same data) and ``uncertain=`` (its uncertain data, ``uncertain(nominal_model, p, eps)``); ``compare=``
    names the first-stage variables with a unique optimum. ``tpm-models verify --model KEY`` then solves
    the semi-infinite model and compares (``docs/verify.md``).
    """
    key = _key(eq)
    for name, value, allowed in (("family", family, FAMILIES), ("model_class", model_class, MODEL_CLASSES),
                                 ("kernel", kernel, KERNEL_KINDS), ("role", role, ROLES), ("group", group, GROUPS)):
        if value not in allowed:
            raise ValueError(f"register_model({eq!r}): {name}={value!r} is not one of {allowed}")
    if role == "primal" and (primal is not None or omitted_constant is not None):
        raise ValueError(f"register_model({eq!r}): primal= and omitted_constant= are for duals")
    if robust_p is not None:
        robust_p = tuple(check_p(p) for p in robust_p)
    counterpart = _counterpart_fields(eq, robust_p, nominal, uncertain, compare)

    def join(builder: Callable[..., pyo.ConcreteModel]) -> Callable[..., pyo.ConcreteModel]:
        if key in all_models():
            raise ValueError(f"({key}) is registered already (by {all_models()[key].builder.__qualname__}); "
                             "choose another key")
        REGISTRY[key] = ModelInfo(key, builder, family, model_class, kernel, role, summary, robust_p,
                                             None if primal is None else _key(primal), omitted_constant, group,
                                             **counterpart)
        return builder

    return join


def _counterpart_fields(eq: int | str, robust_p: tuple[float, ...] | None, nominal: int | str | None,
                        uncertain: object, compare: Sequence[str] | str) -> dict:
    """``nominal``, ``uncertain``, ``compare`` checked: for robust models only, a callable, names."""
    if (nominal is not None or uncertain is not None) and robust_p is None:
        raise ValueError(f"register_model({eq!r}): nominal= and uncertain= are for robust models (give robust_p=)")
    if uncertain is not None and not callable(uncertain):
        raise ValueError(f"register_model({eq!r}): uncertain= must be a function (nominal_model, p, eps) -> "
                         f"list of UncertainRow/UncertainTerm, got {uncertain!r}")
    if isinstance(compare, str) or not all(isinstance(n, str) for n in compare):
        raise ValueError(f"register_model({eq!r}): compare= is a tuple of variable names, got {compare!r}")
    return {"nominal": None if nominal is None else _key(nominal), "uncertain": uncertain, "compare": tuple(compare)}


def register_counterpart(
    eq: int | str, *, uncertain: Callable[..., list], nominal: int | str | None = None,
    compare: tuple[str, ...] | None = None,
) -> ModelInfo:
    """Attach the uncertain data (and, if given, the nominal key and ``compare``) to the registered robust model
    ``eq``, after its registration: for a model registered elsewhere, without them. Returns
    the new :class:`ModelInfo`."""
    info = model_info(eq)
    nominal = info.nominal if nominal is None else nominal
    fields = _counterpart_fields(eq, info.robust_p, nominal, uncertain, info.compare if compare is None else compare)
    if fields["nominal"] is None:
        raise ValueError(f"register_counterpart({eq!r}): give nominal= (the key of the nominal model)")
    new = replace(info, **fields)
    REGISTRY[info.key] = new
    return new


def model_info(eq: int | str) -> ModelInfo:
    """The :class:`ModelInfo` of ``eq`` (``ValueError`` if no model is registered under it)."""
    try:
        return all_models()[_key(eq)]
    except (KeyError, ValueError):
        raise ValueError(
            f"({eq}) is not a model of the paper nor a registered one; the paper's models: "
            f"{sorted(group_keys('paper'))}, derived: {sorted(group_keys('dual'))} {sorted(group_keys('kernel'))} "
            f"{sorted(group_keys('derived'))}, distributionally robust: {sorted(group_keys('dro'))}"
            + (f", registered: {sorted(map(str, group_keys('user')))}" if group_keys("user") else "")
        ) from None


STANDARD_OPTIONS = ("kernel", "p", "eps")
"""The options :func:`build` gives a builder by keyword itself (:meth:`ModelInfo.options`)."""


def extra_parameters(function: Callable, n_positional: int, skip: tuple[str, ...] = STANDARD_OPTIONS,
                     ) -> dict[str, inspect.Parameter]:
    """The parameters of ``function`` after its first ``n_positional`` (the data, ``nu``, ``alpha`` of a builder; the
    nominal model, ``p``, ``eps`` of an ``uncertain`` function), without ``skip``: a researcher's own parameters
    (an ellipsoid's matrix, per-feature radii, a weight). A ``**kwargs`` shows as a parameter of kind
    ``VAR_KEYWORD``."""
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return {}
    positional = [q for q in params if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
    rest = positional[n_positional:] + [q for q in params if q.kind in (q.KEYWORD_ONLY, q.VAR_KEYWORD)]
    return {q.name: q for q in rest if q.name not in skip}


def accepted(parameters: Mapping[str, inspect.Parameter], params: Mapping[str, object]) -> dict:
    """The entries of ``params`` a function with these :func:`extra_parameters` takes (all with a ``**kwargs``)."""
    if any(q.kind is q.VAR_KEYWORD for q in parameters.values()):
        return dict(params)
    return {k: v for k, v in params.items() if k in parameters}


def describe(function: object) -> str:
    """A builder's (or a function's) name and module, for messages: ``build_robust_2 (robust_2.py)``."""
    name = getattr(function, "__qualname__", repr(function))
    module = getattr(function, "__module__", "") or ""
    return f"{name} ({module.removeprefix('tpm_models_plugin_')})" if module else name


def call_builder(info: ModelInfo, X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float,
                 options: Mapping[str, object], params: Mapping[str, object]) -> pyo.ConcreteModel:
    """``info.builder(data..., nu, alpha, **options, **params)``, and what it returned checked: a Pyomo
    ``ConcreteModel``. A builder registered from outside (group ``user``) that raises, or any builder that
    returns something else, is a ``ValueError`` naming the builder, the key and what it returned."""
    who = f"the builder {describe(info.builder)} of ({info.key})"
    try:
        data = (*info.data(X, y, c), nu, alpha) if info.takes_data else ()
        model = info.builder(*data, **options, **params)
    except ValueError:
        raise
    except Exception as exc:
        if info.group != "user":
            raise
        raise ValueError(f"{who} failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(model, pyo.ConcreteModel):
        raise ValueError(f"{who} returned {type(model).__name__} {short_repr(model)}; a builder must return a "
                         "pyomo.environ.ConcreteModel")
    return model


def short_repr(value: object) -> str:
    """``repr(value)``, cut to 60 characters, for messages about what a user's function returned."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_params(info: ModelInfo, params: Mapping[str, object]) -> dict:
    """``params`` checked against the builder's own parameters: a name it does not take is a ``ValueError``
    listing those it does."""
    own = info.parameters()
    unknown = [k for k in params if k not in accepted(own, {k: None for k in params})]
    if unknown:
        takes = ", ".join(n for n, q in own.items() if q.kind is not q.VAR_KEYWORD) or "none"
        raise ValueError(f"({info.key}) takes no parameter {', '.join(unknown)}; the parameters of its builder "
                         f"{describe(info.builder)}: {takes}")
    return dict(params)


def build(
    eq: int | str,
    X: np.ndarray,
    y: np.ndarray,
    c: object,
    nu: float,
    alpha: float,
    kernel: Kernel | None = None,
    p: float | None = None,
    eps: float | np.ndarray | None = None,
    **params: object,
) -> pyo.ConcreteModel:
    """Build model ``(eq)`` on points ``X`` (rows) with labels ``y``.

    ``c`` is the class that plays :math:`\\mathcal X_c` (multiclass) or the positive class
    (binary: :math:`\\mathcal X_+` = class ``c``, :math:`\\mathcal X_-` = the rest).
    ``kernel`` is required by the kernel models ((10)-(13), (19), ``"23K"``) and refused by the others.
    ``p`` and ``eps`` (radii of (21)) are required by the robust models ((22)-(29), their duals,
    ``"23K"``) and refused by the others; (27), (28), (29) take only p = 1, 2, inf.
    ``params`` go to the builder by keyword: a registered model's own parameters (:meth:`ModelInfo.parameters`,
    e.g. an ellipsoid's matrix); the paper's builders take none. A builder that returns anything but a
    ``ConcreteModel`` is a ``ValueError`` (:func:`call_builder`).
    """
    info = model_info(eq)
    options = info.options(kernel, p, eps)
    return call_builder(info, X, y, c, nu, alpha, options, check_params(info, params))
