"""The options shared by several commands, and what they mean."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from tpm_models.data import Dataset
from tpm_models.kernels import KERNELS, Kernel
from tpm_models.models.registry import DUAL_MODELS, KERNEL_MODELS, MODELS


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
    reachable by ``--model``. Returns the names loaded; ``ValueError`` for one that cannot be loaded."""
    loaded = []
    for name in names:
        path = Path(name)
        try:
            if name.endswith(".py"):
                if not path.is_file():
                    raise ValueError(f"--plugin {name}: no such file")
                name_of_module = f"tpm_models_plugin_{path.stem}"
                if name_of_module in sys.modules:  # loaded already in this process (main() called again)
                    loaded.append(name)
                    continue
                spec = importlib.util.spec_from_file_location(name_of_module, path)
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


def add_model_options(s: argparse.ArgumentParser) -> None:
    """The options that say which model to build on which data (``solve``, ``export``)."""
    s.add_argument("--model", type=model_key, required=True,
                   help=f"equation number: {sorted(MODELS)}, a derived dual: {', '.join(DUAL_MODELS)}, "
                   f"the robust kernel model: {', '.join(KERNEL_MODELS)}, or a model a --plugin registers")
    s.add_argument("--dataset", default="iris", help="iris, wine or a CSV path (label column last)")
    s.add_argument("--class", dest="class_", default="0",
                   help="class number 0..C-1 (or a label) playing c, or positive for binary models")
    s.add_argument("--nu", type=float, required=True)
    s.add_argument("--alpha", type=float, required=True)
    add_kernel_options(s)
    s.add_argument("--p", help="robust models: norm of the uncertainty set (21), 1, 2, inf or any number >= 1")
    s.add_argument("--eps", type=float, help="robust models: radius of the uncertainty set (21), >= 0")
