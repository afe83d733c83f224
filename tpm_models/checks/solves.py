"""Models built once and solves made once for the several ties that share them (``tpm-models check``).

The ties of one class share most of their solves: (16) by the default solver is the reference of the
duality, kernel-trick, inhom.-linear and cross-solver ties; (26) by Ipopt is compared with (23) and is the
reference of (27)-(29); (27)-(29) by every SOCP backend are compared with (26) and give the multipliers of
(27D)-(29D); (28) is the reference of (23K). A :class:`Solves` holds, for one data set ``(X, y)``, every model
built (one per equation and parameters: each solver solves the same model object; :func:`solve` starts cold
by default) and every result (one per model and solver), so each is built and solved once. A failed solve is
remembered too: asking again raises the same :class:`~tpm_models.solvers.common.NoOptimalSolutionError`.

The ties take ``solves=None`` (a fresh :class:`Solves`: nothing shared) and give the same rows either way.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from tpm_models.kernels import Kernel
from tpm_models.models.registry import build
from tpm_models.solvers.backends.registry import backend_for
from tpm_models.solvers.common import NoOptimalSolutionError, SolveResult
from tpm_models.solvers.compare import objective_scale
from tpm_models.solvers.dispatch import solve
from tpm_models.solvers.structure import ModelTraits, model_traits


def objective(result: SolveResult) -> float:
    """The objective of a solve that returned a point (every tie compares optima: a failed solve raised
    :class:`~tpm_models.solvers.common.NoOptimalSolutionError` before); ``ValueError`` naming the solver if none."""
    if result.objective is None:
        raise ValueError(f"{result.solver}: no objective ({result.termination.value})")
    return result.objective


def array(result: SolveResult, name: str) -> np.ndarray:
    """The values of the component ``name`` of a solve, as a float array (a scalar gives a 0-d array)."""
    return np.asarray(result.values[name], dtype=float)


def scalar(result: SolveResult, name: str) -> float:
    """The value of the scalar component ``name`` of a solve (``theta``)."""
    return float(np.asarray(result.values[name], dtype=float))


def duals(result: SolveResult, name: str) -> np.ndarray:
    """The duals of the constraint ``name`` of a solve, as a float array; ``ValueError`` if the solver gave none."""
    if result.duals is None or name not in result.duals:
        raise ValueError(f"{result.solver}: no duals of {name!r}")
    return np.asarray(result.duals[name], dtype=float)


class Solves:
    """The models and solves of one data set ``(X, y)``, each made once (module docstring)."""

    def __init__(self, X: np.ndarray, y: np.ndarray) -> None:
        self.X, self.y = X, y
        self.models: dict[tuple, pyo.ConcreteModel] = {}
        self.kinds: dict[tuple, ModelTraits] = {}
        self.last: dict[tuple, str] = {}
        """The solver whose solution each model holds (its values are that solve's)."""
        self.results: dict[tuple, tuple[SolveResult, float | None] | NoOptimalSolutionError] = {}
        self.built = self.solved = self.reused = 0
        """Counts: models built, solves made, solves answered from memory."""

    def for_data(self, X: np.ndarray, y: np.ndarray) -> Solves:
        """This cache if it holds ``(X, y)``, else a fresh one (a tie called on other data shares nothing)."""
        return self if X is self.X and y is self.y else Solves(X, y)

    @staticmethod
    def _key(eq: int | str, c: object, nu: float, alpha: float, kernel: Kernel | None, p: float | None,
             eps: float | None) -> tuple:
        return (str(eq), c, float(nu), float(alpha), kernel, None if p is None else float(p),
                None if eps is None else float(eps))

    def model(self, eq: int | str, c: object, nu: float, alpha: float, kernel: Kernel | None = None,
              p: float | None = None, eps: float | None = None) -> pyo.ConcreteModel:
        """``build(eq, X, y, c, nu, alpha, kernel, p=p, eps=eps)``, built on the first call."""
        key = self._key(eq, c, nu, alpha, kernel, p, eps)
        if key not in self.models:
            self.models[key] = build(eq, self.X, self.y, c, nu, alpha, kernel, p=p, eps=eps)
            self.built += 1
        return self.models[key]

    def kind(self, eq: int | str, c: object, nu: float, alpha: float, kernel: Kernel | None = None,
             p: float | None = None, eps: float | None = None) -> str:
        """The model's class (LP, QP, SOCP, NLP)."""
        return self.traits(eq, c, nu, alpha, kernel, p, eps).kind

    def traits(self, eq: int | str, c: object, nu: float, alpha: float, kernel: Kernel | None = None,
               p: float | None = None, eps: float | None = None) -> ModelTraits:
        """:func:`model_traits` of the model (its class, integers, convexity), read once per model: every solve
        of it is handed them (the PSD test of (16)'s objective is not repeated per solver)."""
        key = self._key(eq, c, nu, alpha, kernel, p, eps)
        if key not in self.kinds:
            self.kinds[key] = model_traits(self.model(eq, c, nu, alpha, kernel, p, eps))
        return self.kinds[key]

    def solve(self, eq: int | str, c: object, nu: float, alpha: float, kernel: Kernel | None = None,
              p: float | None = None, eps: float | None = None, solver: str = "default",
              scale: bool = False) -> tuple[SolveResult, float | None]:
        """``solve(model(...), solver)`` and, with ``scale``, the model's :func:`objective_scale` at that
        solution; made on the first call (again only if a scale is asked that was not measured)."""
        if solver == "default":  # one entry for the default solver asked by name or as "default"
            kind = self.traits(eq, c, nu, alpha, kernel, p, eps)
            solver = backend_for(self.model(eq, c, nu, alpha, kernel, p, eps), "default", kind)[0].name
        key = (*self._key(eq, c, nu, alpha, kernel, p, eps), solver)
        known = self.results.get(key)
        if isinstance(known, NoOptimalSolutionError):
            raise known
        model = self.model(eq, c, nu, alpha, kernel, p, eps)
        if known is not None and known[1] is None and scale and self.last.get(key[:-1]) == solver:
            known = self.results[key] = (known[0], objective_scale(model))  # the model still holds that solution
        if known is not None and (known[1] is not None or not scale):
            self.reused += 1
            return known
        self.solved += 1
        self.last.pop(key[:-1], None)
        try:
            result = solve(model, solver, kind=self.traits(eq, c, nu, alpha, kernel, p, eps))
        except NoOptimalSolutionError as exc:
            self.results[key] = exc
            raise
        self.last[key[:-1]] = solver
        entry = (result, objective_scale(model) if scale else None)
        self.results[key] = entry
        return entry
