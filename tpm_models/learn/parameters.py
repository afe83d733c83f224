"""The estimators' parameter checks (each raising a ``ValueError`` that says what to do), the choice of
fit path (:data:`FIT_BACKENDS`, :data:`DENSE_MAX_POINTS`, :data:`LINEAR_DENSE_MAX_POINTS`) and the test for
degenerate hyperplanes
(:func:`degenerate_planes`), shared by the classifiers of :mod:`tpm_models.learn.estimators`."""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any

import numpy as np

from tpm_models.kernels import Kernel
from tpm_models.lazy import import_optional, install_hint
from tpm_models.learn.decomposition import DecompositionError, DecompositionWarning
from tpm_models.learn.kernel_sums import self_kernel
from tpm_models.models.recovery import DEGENERATE_TOL
from tpm_models.solvers.backends.registry import BACKENDS, available_solvers
from tpm_models.solvers.common import SolverUnavailableError
from tpm_models.solvers.dense import matrix_solvers

# scikit-learn is the "learn" extra's: without it, importing an estimator says which extra to install
sklearn_base = import_optional("sklearn.base", "learn", "an estimator of tpm_models.learn")
BaseEstimator: Any = sklearn_base.BaseEstimator  # a class of the optional extra (Any to the type checker)

log = logging.getLogger(__name__)


class DegenerateHyperplaneWarning(UserWarning):
    """A fitted hyperplane has :math:`w = 0` (:data:`DEGENERATE_TOL`) and is left out of the decision."""


# --------------------------------------------------------------------------- parameter checks


def scale_sigma(X: np.ndarray) -> float:
    """The Gaussian kernel's :math:`\\sigma` for ``sigma="scale"``: the :math:`\\sigma` of scikit-learn's
    ``gamma="scale"``, :math:`\\gamma = 1/(n\\,\\mathrm{Var}(X))` in :math:`\\exp(-\\gamma\\|x-x'\\|^2)`, so
    :math:`\\sigma = \\sqrt{n\\,\\mathrm{Var}(X)/2}` with :math:`n` features and the variance of every entry of
    ``X``; 1 when ``X`` is constant."""
    var = float(np.var(X))
    return math.sqrt(X.shape[1] * var / 2.0) if var > 0 else 1.0


def validate_kernel(est: Any, X: np.ndarray | None = None) -> Kernel:
    """The :class:`~tpm_models.kernels.Kernel` of Table 1 named by the estimator's parameters. ``sigma="scale"``
    (with the training points ``X``) is :func:`scale_sigma` for the Gaussian kernel and ignored by the kernels
    without a :math:`\\sigma`."""
    sigma = est.sigma
    if isinstance(sigma, str) and sigma == "scale" and X is not None:
        sigma = scale_sigma(X) if est.kernel == "gaussian" else None
    try:
        return Kernel(est.kernel, degree=est.degree, gamma=est.gamma, sigma=sigma, a=est.a, b=est.b)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{type(est).__name__}: {exc}. Give the kernel the parameters of Table 1 it takes "
            "(hom-poly: degree; inhom-poly: degree, gamma; gaussian: sigma; sigmoid: a, b) and leave the others None"
        ) from None


def validate_solver(solver: object, model_class: str) -> str:
    """``"default"`` or a backend that takes ``model_class`` and is installed."""
    if not isinstance(solver, str) or (solver != "default" and solver not in BACKENDS):
        raise ValueError(
            f"unknown solver {solver!r}: use 'default' or one of {sorted(BACKENDS)}; "
            f"installed ones that take this classifier's {model_class}s: {available_solvers(model_class)}"
        )
    if solver == "default":
        return solver
    backend = BACKENDS[solver]
    if model_class not in backend.model_classes:
        raise ValueError(
            f"solver {solver!r} cannot take the {model_class}s this classifier solves; use 'default' or one "
            f"of the installed solvers that can: {available_solvers(model_class)}"
        )
    if not backend.available():
        why = backend.refuses(None) if backend.installed() and backend.refuses is not None else None
        raise SolverUnavailableError(
            f"solver {solver!r}" + (f": {why}" if why else f" is not installed ({install_hint(backend.package)})")
            + f"; installed ones that take {model_class}s: {available_solvers(model_class)}"
        )
    return solver


FIT_BACKENDS = ("auto", "dense", "decomposition", "linear-decomposition", "pyomo")
"""How :class:`TPMSVM` and :class:`TPMSVMOneVsAll` solve their duals: ``"dense"`` hands the matrices of
:func:`tpm_models.models.shapes.dual_matrices` straight to a dense QP solver; ``"decomposition"`` solves the
same QP by :mod:`tpm_models.learn.decomposition` (kernel rows on demand, nothing of size :math:`m\\times m`);
``"linear-decomposition"`` solves (4)/(5)/(16), the linear kernel's, by :mod:`tpm_models.learn.linear_dual`
(:math:`w` kept explicitly, no kernel rows); ``"pyomo"`` builds the Pyomo model
(:func:`tpm_models.models.multiclass.build_dual_19`, ...) and solves it with
:func:`tpm_models.solvers.dispatch.solve`; ``"auto"`` (the default): :func:`resolve_backend`. All solve the same
QP."""

DENSE_MAX_POINTS = 100
"""Largest own set (:math:`m_c`, :math:`m_\\pm`) that ``backend="auto"`` gives to the dense solver with a kernel
other than the linear one. Measured (``docs/notes/bench-estimators.md``): the dense interior point is cubic in
:math:`m_c` and holds :math:`K(X_c, X_c)`; the decomposition is faster from a few hundred points per class on."""

LINEAR_DENSE_MAX_POINTS = 100
"""Largest own set (:math:`\\max_c m_c`) that ``backend="auto"`` gives to the dense solver with ``kernel="linear"``;
larger sets go to ``"linear-decomposition"`` (:mod:`tpm_models.learn.linear_dual`). Measured (medians of 15 warm
fits, ``nu=0.3``, load 2-3 on 2 cores; ``docs/notes/bench-estimators.md``):

* ``TPMSVMOneVsAll`` on the benchmark's data (``python -m benchmarks bench estimators --crossover``): the two cross
  between 36 and 46 points per class (within 10% there); the linear path was 2.5-3.2x faster at 56-70 points per
  class, 1.9x at 102, 5.5x at 202 and 14x at 401;
* on the paper's data sets the dense path was as fast or faster up to 100 points in the larger class: Iris
  one-versus-all (50 per class) 1.64 ms against 2.04 ms, Wine (48-71) 1.98 against 2.33 ms, ``TPMSVM`` on Iris one
  class against the rest (100 and 50 points) 1.26-1.63 ms against 1.26-1.90 ms; on Wine one class against the rest
  (107-130 points in the larger class) the linear path was faster, 1.53-1.79 ms against 1.86-2.06 ms.

100 keeps every split of the paper's data with at most 100 points in a class on the dense path (its numbers
unchanged) and gives the linear path every larger set, where it was faster in every measurement."""


def check_backend(backend: object, solver: str, kernel: str | None = None) -> str:
    """``backend`` in :data:`FIT_BACKENDS`; with ``"dense"`` the solver must take matrices, with
    ``"decomposition"`` and ``"linear-decomposition"`` it is their own method's (``solver="default"``), and
    ``"linear-decomposition"`` takes the linear ``kernel`` only (its name; None: not checked)."""
    if not isinstance(backend, str) or backend not in FIT_BACKENDS:
        raise ValueError(
            f"backend must be 'auto' (by size and kernel, the default), 'dense' (the dual's matrices to a dense QP "
            f"solver), 'decomposition' (kernel rows on demand, for large sets), 'linear-decomposition' (the linear "
            f"kernel's duals with w explicit, for large sets) or 'pyomo' (build the Pyomo model and solve it); "
            f"got {backend!r}"
        )
    if backend in ("dense", "auto") and solver != "default" and solver not in matrix_solvers():
        raise ValueError(
            f"solver {solver!r} solves Pyomo models: pass backend='pyomo' to use it, or keep backend={backend!r} "
            f"with solver 'default' or one of {matrix_solvers()} (the backends that take a QP in matrix form)"
        )
    if backend == "decomposition" and solver != "default":
        raise ValueError(
            f"backend='decomposition' solves the duals with its own method (tpm_models.learn.decomposition); "
            f"leave solver='default' or choose backend='dense' or 'pyomo' for solver {solver!r}"
        )
    if backend == "linear-decomposition" and solver != "default":
        raise ValueError(
            f"backend='linear-decomposition' solves the duals with its own method (tpm_models.learn.linear_dual); "
            f"leave solver='default' or choose backend='dense' or 'pyomo' for solver {solver!r}"
        )
    if backend == "linear-decomposition" and kernel is not None and kernel != "linear":
        raise ValueError(
            f"backend='linear-decomposition' solves the linear kernel's duals (4)/(5)/(16) with w explicit; "
            f"kernel={kernel!r} needs backend='decomposition' (kernel rows on demand), 'dense', 'pyomo' or 'auto'"
        )
    return backend


def resolve_backend(backend: str, solver: str, own_sizes: list[int], kernel: str = "linear") -> str:
    """The fit path of ``backend``: itself unless ``"auto"``; for ``"auto"``, ``"dense"`` with a named dense solver,
    else by the largest own set and the ``kernel`` (its name): with the linear kernel ``"linear-decomposition"``
    beyond :data:`LINEAR_DENSE_MAX_POINTS`, with the others ``"decomposition"`` beyond :data:`DENSE_MAX_POINTS`;
    ``"dense"`` up to them."""
    if backend != "auto":
        return backend
    largest = max(own_sizes)
    if solver != "default":
        return "dense"
    if kernel == "linear":
        return "linear-decomposition" if largest > LINEAR_DENSE_MAX_POINTS else "dense"
    return "dense" if largest <= DENSE_MAX_POINTS else "decomposition"


def dense_fallback(requested: str, error: DecompositionError) -> str:
    """``"dense"`` after the decomposition (or the linear working-set method) failed (``error``) under
    ``backend="auto"``, with a :class:`tpm_models.learn.decomposition.DecompositionWarning` that says so: the dense
    path solves the same QP exactly from the :math:`m_c\\times m_c` Gram blocks (slower, and refused with
    :class:`tpm_models.kernels.TooLargeError` when they cannot fit in memory). A backend asked for by name is not
    replaced: ``error`` is raised."""
    if requested != "auto":
        raise error
    message = (f"backend='auto': the decomposition failed ({error}); the dual is solved by the dense path instead "
               "(fit_backend_ = 'dense')")
    log.warning(message)
    warnings.warn(message, DecompositionWarning, stacklevel=3)
    return "dense"


def degenerate_planes(norms: np.ndarray, nus: np.ndarray, X: np.ndarray, kernel: Kernel,
                      names: list[str]) -> np.ndarray:
    """Which hyperplanes have :math:`w = 0` (:data:`DEGENERATE_TOL`); a warning names them.

    The decision functions (8), (14), (18), (20) divide by :math:`\\|w\\|`, so a degenerate
    hyperplane has no distance: the classifiers leave it out of the decision (each ``predict``
    says how) instead of dividing by a number that is solver noise.
    """
    sq_norms = self_kernel(kernel, X)  # k(x^i, x^i) = |phi(x^i)|^2
    scale = np.sqrt(np.abs(sq_norms).max())
    degenerate = np.asarray(norms) <= DEGENERATE_TOL * np.asarray(nus) * scale
    if degenerate.any():
        warnings.warn(
            f"hyperplane(s) {[n for n, d in zip(names, degenerate) if d]} have w = 0 (|w| <= {DEGENERATE_TOL:g} "
            "* nu * max |phi(x)|): the classes overlap too much for them, and they are left out of the decision. "
            "A smaller nu/alpha, another kernel or a smaller eps may separate them",
            DegenerateHyperplaneWarning,
            stacklevel=3,
        )
    return degenerate
