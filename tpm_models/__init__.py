"""tpm-models: the models of "A Robust Twin Parametric Margin Support Vector Machine
for Multiclass Classification" (De Leone, Maggioni, Spinelli) as Pyomo builders,
with solvers, checks that tie the formulations together, and the paper's experiments.

The package is layered (``docs/architecture.md``); each layer imports only those below it::

    cli -> plots -> experiments -> learn -> checks -> export -> solvers -> models -> kernels, data, validation
"""

from tpm_models.data import Dataset, load_dataset, min_max_scale, one_vs_rest, stratified_split
from tpm_models.kernels import Kernel
from tpm_models.models import MODELS, build, model_info, register_model, register_robustified, robust_counterpart
from tpm_models.solvers.backends.registry import available_solvers
from tpm_models.solvers.common import NoOptimalSolutionError, SolveResult, SolverUnavailableError, Termination
from tpm_models.solvers.dispatch import solve

__all__ = [
    "MODELS",
    "Dataset",
    "Kernel",
    "NoOptimalSolutionError",
    "SolveResult",
    "SolverUnavailableError",
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
