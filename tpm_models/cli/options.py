"""The options shared by several commands, and what they mean."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import math
import sys
import typing
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

from tpm_models.data import Dataset, load_dataset
from tpm_models.kernels import KERNELS, Kernel
from tpm_models.models.registry import (
    ModelInfo,
    describe,
    extra_parameters,
    group_keys,
    model_info,
)
from tpm_models.validation import finite_number


def class_of(data: Dataset, k: str) -> int:
    """``--class K``: a class number 0..C-1, or else a label of the data set."""
    if k.lstrip("-").isdigit():
        number = int(k)
        if 0 <= number < data.n_classes:
            return number
        raise ValueError(
            f"--class {k}: {data.name} has classes 0..{data.n_classes - 1} "
            f"(labels {', '.join(map(str, data.classes))})"
        )
    labels = [str(c) for c in data.classes]
    if k in labels:
        return labels.index(k)
    raise ValueError(f"--class {k!r}: not a class number 0..{data.n_classes - 1} nor a label {labels}")


def kernel_from_args(args: argparse.Namespace) -> Kernel | None:
    if args.kernel is None:
        return None
    params = {"degree": args.degree, "gamma": args.gamma, "sigma": args.sigma, "a": args.a, "b": args.b}
    needed = {
        "linear": (), "hom-poly": ("degree",), "inhom-poly": ("degree", "gamma"),
        "gaussian": ("sigma",), "sigmoid": ("a", "b"),
    }[args.kernel]
    given = {k: v for k, v in params.items() if v is not None}
    missing = [k for k in needed if k not in given]
    extra = [k for k in given if k not in needed]
    if missing or extra:
        raise ValueError(
            f"--kernel {args.kernel} needs {', '.join('--' + k for k in needed) or 'no parameter'}"
            + (f"; missing {', '.join('--' + k for k in missing)}" if missing else "")
            + (f"; not used: {', '.join('--' + k for k in extra)}" if extra else "")
        )
    return Kernel(args.kernel, **given)


def model_key(text: str) -> int | str:
    """``--model``: an equation number (int), or a name such as ``28D`` (checked by ``model_info``)."""
    return int(text) if text.lstrip("-").isdigit() else text.strip().upper()


PLUGIN_GROUP = "tpm_models.models"
"""The entry-point group of installed packages that register models: each entry point names a module,
imported when the command starts (``[project.entry-points."tpm_models.models"]`` in their pyproject)."""


def load_plugins(names: Sequence[str]) -> list[str]:
    """Import each ``--plugin``: a module name, or a path to a ``.py`` file; then every module of the
    entry-point group :data:`PLUGIN_GROUP`. Their ``register_model`` decorators make their models
    reachable by ``--model``. Returns the names loaded; ``ValueError`` for one that cannot be loaded, and for a
    second file of the same file name (one module per path: ``a/p.py`` and ``b/p.py`` cannot both be
    ``tpm_models_plugin_p``). Called by the command line only after the whole command line has parsed."""
    loaded = []
    for name in names:
        path = Path(name)
        try:
            if name.endswith(".py"):
                if not path.is_file():
                    raise ValueError(f"--plugin {name}: no such file")
                name_of_module = f"tpm_models_plugin_{path.stem}"
                before = sys.modules.get(name_of_module)
                if before is not None:
                    first = Path(getattr(before, "__file__", "") or "")
                    if first.resolve() != path.resolve():
                        raise ValueError(f"--plugin {name}: a plugin of the same file name was loaded from {first}; "
                                         "two plugins are told apart by their file names: rename one")
                    loaded.append(name)  # the same file, loaded already in this process (main() called again)
                    continue
                spec = importlib.util.spec_from_file_location(name_of_module, path)
                if spec is None or spec.loader is None:
                    raise ValueError(f"--plugin {name}: {path} cannot be loaded as a Python module")
                module = importlib.util.module_from_spec(spec)
                sys.modules[spec.name] = module
                spec.loader.exec_module(module)
            else:
                importlib.import_module(name)
        except ValueError:
            raise
        except Exception as exc:  # a plugin's own error: say whose and what, no traceback
            raise ValueError(f"--plugin {name} could not be loaded: {type(exc).__name__}: {exc}") from exc
        loaded.append(name)
    for entry in metadata.entry_points(group=PLUGIN_GROUP):
        try:
            entry.load()
        except Exception as exc:
            raise ValueError(f"the {PLUGIN_GROUP} entry point {entry.name} ({entry.value}) could not be loaded: "
                             f"{type(exc).__name__}: {exc}") from exc
        loaded.append(entry.value)
    return loaded


def add_kernel_options(s: argparse.ArgumentParser) -> None:
    """``--kernel`` and its parameters (read by :func:`kernel_from_args`)."""
    s.add_argument("--kernel", choices=KERNELS, help="kernel models: (10)-(13), (19), 23K")
    s.add_argument("--degree", type=int)
    s.add_argument("--gamma", type=float)
    s.add_argument("--sigma", type=float)
    s.add_argument("--a", type=float)
    s.add_argument("--b", type=float)


def add_data_options(s: argparse.ArgumentParser) -> None:
    """``--no-header`` and ``--delimiter``: how a CSV given as ``--dataset`` is read (:func:`dataset_from_args`)."""
    s.add_argument("--no-header", action="store_true",
                   help="the CSV has no header row: every line is a point (label last)")
    s.add_argument("--delimiter", help="the CSV's delimiter (default ','), e.g. ';' or a tab")


def dataset_from_args(args: argparse.Namespace) -> Dataset:
    """``--dataset`` read with ``--no-header`` and ``--delimiter`` (:func:`tpm_models.data.load_dataset`)."""
    delimiter = args.delimiter
    if delimiter is not None and delimiter.lower() in ("\\t", "tab"):
        delimiter = "\t"
    return load_dataset(args.dataset, header=not args.no_header, delimiter=delimiter)


def add_model_options(s: argparse.ArgumentParser) -> None:
    """The options that say which model to build on which data (``solve``, ``export``)."""
    s.add_argument("--model", type=model_key, required=True,
                   help=f"equation number: {sorted(group_keys('paper'))}, a derived dual: "
                   f"{', '.join(map(str, group_keys('dual')))}, the robust kernel model: "
                   f"{', '.join(map(str, group_keys('kernel')))}, the Wasserstein model: "
                   f"{', '.join(map(str, group_keys('dro')))}, or a model a --plugin registers")
    s.add_argument("--dataset", default="iris", help="iris, wine or a CSV path (label column last)")
    add_data_options(s)
    add_param_option(s)
    s.add_argument("--class", dest="class_", default="0",
                   help="class number 0..C-1 (or a label) playing c, or positive for binary models")
    s.add_argument("--nu", type=float, required=True)
    s.add_argument("--alpha", type=float, required=True)
    add_kernel_options(s)
    s.add_argument("--p", help="robust models: norm of the uncertainty set (21), 1, 2, inf or any number >= 1")
    s.add_argument("--eps", type=float, help="robust models: radius of the uncertainty set (21), >= 0")


def seconds(text: str) -> float:
    """``--time-limit``: a finite number of seconds > 0 (checked by the parser; ``0``, a negative number and
    ``nan`` are refused, not read as "no limit": leave the option out for that)."""
    try:
        return finite_number(text, "a time limit", positive=True)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def at_least_one(text: str) -> int:
    """``--runs``: an integer >= 1 (checked by the parser, before any work)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def worker_count(text: str) -> int:
    """``--jobs``: worker processes, an integer >= 1, or -1 for one per core (joblib's meaning); 0 and other
    negatives are refused here in our words, before any work (joblib's own message comes after the work before
    it)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1 (or -1: one per core), got {text!r}") from None
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"must be >= 1 worker process (or -1: one per core), got {value}")
    return value


def add_param_option(s: argparse.ArgumentParser) -> None:
    """``--param NAME=VALUE`` (repeatable): a registered model's own parameters (read by :func:`typed_params`)."""
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of a registered model's builder (or its uncertain= function), typed by its "
                        "annotation: int, float, bool, str, or numpy.ndarray read from a .npy, .csv or .txt file; "
                        "repeatable")


ARRAY_TYPES = ("np.ndarray", "numpy.ndarray", "ndarray", "NDArray", "np.typing.NDArray", "npt.NDArray", "ArrayLike",
               "npt.ArrayLike")
"""Annotations read as "a numpy array from a file" (with ``from __future__ import annotations`` they are text)."""


def _kind(parameter: inspect.Parameter, hints: Mapping[str, object]) -> str | None:
    """``int``, ``float``, ``bool``, ``str``, ``array`` or ``path`` from a parameter's annotation (else its
    default's type); None when neither says."""
    annotation = hints.get(parameter.name, parameter.annotation)
    if annotation is inspect.Parameter.empty:
        default = parameter.default
        if default is inspect.Parameter.empty or default is None:
            return None
        annotation = type(default)
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    text = str(text).replace("typing.", "").replace(" ", "")
    for option in text.split("|"):
        option = option.removeprefix("Optional[").rstrip("]")
        if option in ("bool",):
            return "bool"
        if option in ("int", "float", "str"):
            return option
        if option in ("Path", "pathlib.Path"):
            return "path"
        if option.split("[")[0] in ARRAY_TYPES or annotation is np.ndarray:
            return "array"
    return None


def read_array(path: str, name: str) -> np.ndarray:
    """A numeric array from ``.npy`` (``numpy.save``), ``.csv`` (commas) or ``.txt`` (spaces): ``--param NAME=FILE``."""
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"--param {name}={path}: no such file (an array parameter is read from a .npy, .csv or .txt "
                         "file)")
    try:
        if file.suffix == ".npy":
            value = np.load(file, allow_pickle=False)
        else:
            value = np.loadtxt(file, delimiter="," if file.suffix == ".csv" else None, ndmin=1)
    except (ValueError, OSError) as exc:
        raise ValueError(f"--param {name}={path}: not a numeric array: {exc}") from None
    if not np.issubdtype(np.asarray(value).dtype, np.number) or not np.all(np.isfinite(value)):
        raise ValueError(f"--param {name}={path}: the array must hold finite numbers")
    return np.asarray(value, float)


def own_parameters(info: ModelInfo) -> list[tuple[object, dict[str, inspect.Parameter]]]:
    """The functions a registered model's ``--param`` may reach, each with its own parameters: the builder (after
    its data, ``nu``, ``alpha``, ``kernel``, ``p``, ``eps``), its ``uncertain=`` (after ``nominal_model, p, eps``) and
    its nominal model's builder."""
    out: list[tuple[object, dict[str, inspect.Parameter]]] = [(info.builder, info.parameters())]
    if info.uncertain is not None:
        out.append((info.uncertain, extra_parameters(info.uncertain, 3, skip=())))
    if info.nominal is not None:
        nominal = model_info(info.nominal)
        out.append((nominal.builder, nominal.parameters()))
    return out


def typed_params(texts: Sequence[str], functions: Sequence[tuple[object, Mapping[str, inspect.Parameter]]],
                 where: str) -> dict[str, object]:
    """``--param NAME=VALUE`` texts, each typed by the annotation of ``NAME`` in the first of ``functions`` (a
    builder, its ``uncertain=`` function, with their own parameters: :func:`own_parameters`) that has a parameter
    ``NAME`` (:func:`_kind`); a name none has, or one whose type none says, is a ``ValueError`` naming the
    functions and their parameters."""
    out: dict[str, object] = {}
    found: dict[str, tuple[object, inspect.Parameter]] = {}
    for function, parameters in functions:
        for parameter in parameters.values():
            found.setdefault(parameter.name, (function, parameter))
    for text in texts:
        name, sep, value = text.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ValueError(f"--param {text!r}: write NAME=VALUE (e.g. --param shape=sigma.npy)")
        if name in out:
            raise ValueError(f"--param {name} is given twice")
        if name not in found:
            names = sorted(n for n, (_, q) in found.items() if q.kind is not q.VAR_KEYWORD)
            raise ValueError(f"--param {name}: {where} takes no parameter {name!r} "
                             f"({', '.join(describe(f) for f, _ in functions)}: {', '.join(names) or 'none'})")
        function, parameter = found[name]
        try:
            hints = typing.get_type_hints(function)
        except Exception:  # an annotation that names what its module does not import: read it as text
            hints = {}
        kind = _kind(parameter, hints)
        if kind is None:
            raise ValueError(f"--param {name}: {describe(function)} says no type for {name!r}; annotate it "
                             "(int, float, bool, str, numpy.ndarray) so that the command line can read it")
        try:
            if kind == "array":
                out[name] = read_array(value, name)
            elif kind == "bool":
                if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                out[name] = value.lower() in ("true", "1", "yes")
            elif kind == "path":
                out[name] = Path(value)
            else:
                number = {"int": int, "float": float, "str": str}[kind](value)
                out[name] = number
                if isinstance(number, float) and not math.isfinite(number):
                    raise ValueError(f"--param {name}={value}: must be a finite number (not nan or inf)")
        except ValueError as exc:
            if str(exc).startswith("--param"):
                raise
            raise ValueError(f"--param {name}={value}: not a {kind} ({describe(function)} annotates {name!r} so)") \
                from None
    return out
