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
from tpm_models.solvers.program import Program
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
        self.readings: dict[tuple, Program] = {}
        """The reading of each model its traits were read from, until its first solve (which is handed it)."""
        self.last: dict[tuple, str] = {}
        """The solver whose solution each model holds (its values are that solve's)."""
        self.defaults: dict[tuple, str] = {}
        """The name of each model's default solver, once known."""
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
        of it is handed them (the PSD test of (16)'s objective is not repeated per solver), and the first solve the
        :class:`Program` they were read from (the model read once for both)."""
        key = self._key(eq, c, nu, alpha, kernel, p, eps)
        if key not in self.kinds:
            model = self.model(eq, c, nu, alpha, kernel, p, eps)
            self.readings[key] = Program(model)
            self.kinds[key] = model_traits(model, program=self.readings[key])
        return self.kinds[key]

    def solve(self, eq: int | str, c: object, nu: float, alpha: float, kernel: Kernel | None = None,
              p: float | None = None, eps: float | None = None, solver: str = "default",
              scale: bool = False) -> tuple[SolveResult, float | None]:
        """``solve(model(...), solver)`` and, with ``scale``, the model's :func:`objective_scale` at that
        solution; made on the first call (again only if a scale is asked that was not measured). ``"default"`` is
        the first default that takes the model, alone (``solve(..., fallback=False)``, as that solver by name): one
        entry with it, whichever name it is asked by, and the model read once per solve."""
        at = self._key(eq, c, nu, alpha, kernel, p, eps)
        model, traits = self.model(eq, c, nu, alpha, kernel, p, eps), self.traits(eq, c, nu, alpha, kernel, p, eps)
        name = self.default_name(at, model, traits) if solver == "default" else solver
        known = None if name is None else self.results.get((*at, name))
        if isinstance(known, NoOptimalSolutionError):
            raise known
        if known is not None and known[1] is None and scale and self.last.get(at) == name:
            known = self.results[(*at, name)] = (known[0], objective_scale(model))  # the model holds that solution
        if known is not None and (known[1] is not None or not scale):
            self.reused += 1
            return known
        self.solved += 1
        self.last.pop(at, None)
        try:  # name None: the default, not known yet; the solve finds it (its result names it)
            result = solve(model, name or "default", kind=traits, fallback=False, program=self.readings.pop(at, None))
        except NoOptimalSolutionError as exc:
            self.results[(*at, self.ran(at, solver, exc.result))] = exc
            raise
        name = self.ran(at, solver, result)
        self.last[at] = name
        entry = (result, objective_scale(model) if scale else None)
        self.results[(*at, name)] = entry
        return entry

    def default_name(self, at: tuple, model: pyo.ConcreteModel, traits: ModelTraits) -> str | None:
        """The default solver's name for the model at key ``at``: known once a ``"default"`` solve of it ran; read
        from the model (:func:`backend_for`) only when another solver's solve of it is remembered, which may be the
        default's (asked by name) and is not made twice; else ``None`` (the solve will say)."""
        if at not in self.defaults and any(key[:-1] == at for key in self.results):
            self.defaults[at] = backend_for(model, "default", traits)[0].name
        return self.defaults.get(at)

    def ran(self, at: tuple, solver: str, result: SolveResult) -> str:
        """The name ``result`` of the model at ``at`` is kept under: ``solver`` as asked, or for ``"default"`` the
        solver that made it (``result.solver``), then kept as the model's default."""
        if solver != "default":
            return solver
        self.defaults[at] = result.solver
        return result.solver
