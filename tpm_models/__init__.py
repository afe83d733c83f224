"""tpm-models: the models of "A Robust Twin Parametric Margin Support Vector Machine
for Multiclass Classification" (De Leone, Maggioni, Spinelli) as Pyomo builders,
with solvers, checks that tie the formulations together, and the paper's experiments.
"""

from tpm_models.binary import one_vs_rest
from tpm_models.data import Dataset, load_dataset, min_max_scale, stratified_split
from tpm_models.kernels import Kernel
from tpm_models.registry import MODELS, build
from tpm_models.solvers import (
    NoOptimalSolutionError,
    SolveResult,
    SolverUnavailableError,
    Termination,
    available_solvers,
    solve,
)

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
    "one_vs_rest",
    "solve",
    "stratified_split",
]

__version__ = "0.1.0"
