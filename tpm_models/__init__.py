"""tpm-models: the models of "A Robust Twin Parametric Margin Support Vector Machine
for Multiclass Classification" (De Leone, Maggioni, Spinelli) as Pyomo builders,
with solvers, checks that tie the formulations together, and the paper's experiments.

The package is layered (``docs/architecture.md``); each layer imports only those below it::

    cli -> plots -> experiments -> learn -> checks -> export -> solvers -> models -> kernels, data, validation

The scikit-learn classifiers (:class:`TPMSVMOneVsAll` and the others of :mod:`tpm_models.learn`) are importable
from here too, but loaded on first use (a module ``__getattr__``, PEP 562): ``import tpm_models`` and
``from tpm_models import build, solve`` do not import scikit-learn or pandas, which cost about 2.4 s of a 3.2 s
import (measured: ``docs/notes/bench-scale-history.md``).
"""

from typing import TYPE_CHECKING

# first, before any module below imports scipy: importing it turns off Pyomo's hook that loads scipy.stats
from tpm_models.lazy import lazy_attributes

# isort: split
from tpm_models.data import Dataset, load_dataset, min_max_scale, one_vs_rest, stratified_split
from tpm_models.kernels import Kernel
from tpm_models.models import REGISTRY, build, model_info, register_model, register_robustified, robust_counterpart
from tpm_models.solvers.backends.registry import available_solvers
from tpm_models.solvers.common import NoOptimalSolutionError, SolveResult, SolverUnavailableError, Termination
from tpm_models.solvers.dispatch import solve

if TYPE_CHECKING:  # the lazy names below, for type checkers and the architecture test
    from tpm_models.learn.estimators import TPMSVM, RobustTPMSVMOneVsAll, TPMSVMOneVsAll
    from tpm_models.learn.robust_kernel import RobustKernelTPMSVMOneVsAll

_LAZY = {
    "TPMSVM": "tpm_models.learn.estimators",
    "TPMSVMOneVsAll": "tpm_models.learn.estimators",
    "RobustTPMSVMOneVsAll": "tpm_models.learn.estimators",
    "RobustKernelTPMSVMOneVsAll": "tpm_models.learn.robust_kernel",
}
"""Names loaded on first access, with their module: importing them costs scikit-learn (about 1.6 s)."""


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "REGISTRY",
    "Dataset",
    "Kernel",
    "NoOptimalSolutionError",
    "RobustKernelTPMSVMOneVsAll",
    "RobustTPMSVMOneVsAll",
    "SolveResult",
    "SolverUnavailableError",
    "TPMSVM",
    "TPMSVMOneVsAll",
    "Termination",
    "available_solvers",
    "build",
    "load_dataset",
    "min_max_scale",
    "model_info",
    "one_vs_rest",
    "register_model",
    "register_robustified",
    "robust_counterpart",
    "solve",
    "stratified_split",
]

__version__ = "0.1.0"
"""The package's version, the only place it is written: ``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``),
``tpm-models --version`` prints it, and ``CITATION.cff`` and ``CHANGELOG.md`` name it."""
