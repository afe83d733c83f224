"""Names a package re-exports lazily (PEP 562): loaded on first access, for load cost, not to dodge an import cycle.

A package that re-exports the classifiers would otherwise import scikit-learn (about 1.6 s) on ``import
tpm_models``. Each such package keeps its table ``_LAZY`` (name -> defining module) and a ``TYPE_CHECKING`` import
of the same names (for type checkers and ``tests/test_architecture.py``), and takes its ``__getattr__`` and
``__dir__`` from :func:`lazy_attributes`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_attributes(package: str, lazy: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a name of ``lazy`` is imported from its module on first access
    and then kept in the package's namespace; any other name is an ``AttributeError``."""

    def __getattr__(name: str) -> object:
        if name not in lazy:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(lazy[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(lazy))

    return __getattr__, __dir__
