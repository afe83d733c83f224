"""What the package loads late, for load cost (not to dodge an import cycle): a fresh process that builds and solves
a model should pay only for what it uses (``docs/architecture.md``, "scipy's import").

* **Names a package re-exports lazily** (PEP 562), loaded on first access. A package that re-exports the classifiers
  would otherwise import scikit-learn (about 1.6 s) on ``import tpm_models``. Each such package keeps its table
  ``_LAZY`` (name -> defining module) and a ``TYPE_CHECKING`` import of the same names (for type checkers and
  ``tests/test_architecture.py``), and takes its ``__getattr__`` and ``__dir__`` from :func:`lazy_attributes`.
* **A third-party module used by one rarely taken path** (:class:`LazyModule`): ``scipy.optimize`` (0.25-0.45 s),
  for the support LP of a polyhedral uncertainty set.
* **An optional dependency** (:func:`import_optional`): a package of one of the extras (matplotlib, distributed),
  imported where a feature needs it; when it is not installed, :class:`MissingExtraError` names the extra to install.
* **Pyomo's import hook for scipy** (:func:`defer_pyomo_scipy_extras`), turned off when this module is imported,
  which ``tpm_models/__init__.py`` does first.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

from pyomo.common import dependencies


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


class LazyModule(types.ModuleType):
    """A stand-in for the module ``name``, imported on the first attribute read (``LazyModule("scipy.optimize")
    .linprog``); ``sys.modules`` is not touched until then."""

    def __getattr__(self, attr: str) -> Any:  # the module's attribute, whatever it is (as on the module itself)
        return getattr(importlib.import_module(self.__name__), attr)


def defer_pyomo_scipy_extras() -> bool:
    """Turn off the hook by which Pyomo imports ``scipy.stats``, ``scipy.integrate`` and ``scipy.spatial`` (0.5-1 s,
    none of which this library uses) as soon as any scipy module is imported; ``True`` when it was on.

    ``pyomo.common.dependencies`` declares ``scipy`` a deferred import whose callback (``_finalize_scipy``) imports
    those three, and puts a finder first in ``sys.meta_path`` that runs the callback when anyone imports ``scipy``
    (``DeferredImportCallbackFinder``, whose table of callbacks is keyed by module name). Taking ``scipy`` out of that
    table leaves Pyomo's deferred ``scipy`` as it is documented: resolved, with its callback, the first time Pyomo
    itself uses it (``pyomo.common.dependencies.scipy.stats``, ``scipy_available``). Nothing to do when scipy was
    imported before Pyomo (Pyomo then ran the callback on its own import) or when a Pyomo release has no such table;
    ``tests/test_lazy_imports.py`` checks the effect in a fresh interpreter, so a Pyomo that changes it is seen."""
    callbacks = getattr(dependencies.DeferredImportCallbackFinder, "_callbacks", None)
    if not isinstance(callbacks, dict) or "scipy" not in callbacks:
        return False
    del callbacks["scipy"]
    return True


defer_pyomo_scipy_extras()


class MissingExtraError(ImportError):
    """A feature's optional dependency is not installed; the message names the extra of ``tpm-models`` that brings
    it (``pip install "tpm-models[plot]"``)."""


EXTRA_OF = {"sklearn": "learn", "casadi": "ipopt", "pyscipopt": "scip", "gurobipy": "commercial",
            "cplex": "commercial", "xpress": "commercial", "mosek": "mosek", "distributed": "dask", "dask": "dask",
            "matplotlib": "plot"}
"""The extra of ``tpm-models`` that brings each optional top-level package (pyproject.toml's extras)."""


def install_hint(package: str) -> str:
    """How to install ``package``: ``pip install "tpm-models[<extra>]"`` for a package of an extra
    (:data:`EXTRA_OF`), else ``pip install <package>``."""
    extra = EXTRA_OF.get(package)
    return f'pip install "tpm-models[{extra}]"' if extra else f"pip install {package}"


def import_optional(module: str, extra: str, feature: str) -> types.ModuleType:
    """The module ``module`` (dotted names allowed), imported for ``feature`` (words for the message: "drawing a
    figure"). Raises :class:`MissingExtraError` naming ``pip install "tpm-models[<extra>]"`` when its top-level
    package is not installed; any other import error (a broken install) propagates as it is."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".")[0]
        if exc.name is None or exc.name.split(".")[0] != top:
            raise
        raise MissingExtraError(f"{feature} needs {top}, which is not installed: "
                                f'pip install "tpm-models[{extra}]"') from exc
