"""The generic ties that apply to any registered model, the paper's or a user's.

* **cross-solver**: every installed backend that takes the model's class reaches the same optimum as
  the default solver, :math:`|f_s - f_{ref}| \\le` :data:`TOL` :math:`\\max(|f_s|, |f_{ref}|, S) +` :data:`ABS_TOL`
  with ``S`` the objective's scale (:func:`tpm_models.solvers.compare.objective_scale`;
  :func:`tpm_models.checks.deterministic.objective_gap`);
* **primal/dual gap**: a dual registered with ``primal=`` satisfies
  :math:`\\mathrm{opt(primal)} = \\mathrm{opt(dual)} + k` with ``k`` its ``omitted_constant`` (0 when none).

They need nothing but the registry entry: ``tpm-models check --model KEY`` runs them
(``docs/adding-a-formulation.md``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from tpm_models.checks.deterministic import CheckResult, objective_gap
from tpm_models.checks.solves import objective, shape_skip
from tpm_models.kernels import Kernel
from tpm_models.models.registry import build, call_builder, model_info
from tpm_models.solvers.backends.registry import available_solvers
from tpm_models.solvers.common import NoOptimalSolutionError, SolverUnavailableError
from tpm_models.solvers.compare import objective_scale
from tpm_models.solvers.dispatch import is_licence_limit, solve
from tpm_models.solvers.structure import model_class


def _where(eq: int | str, label: str, c: object, nu: float, alpha: float, options: dict) -> str:
    extra = "".join(f" {k}={v:g}" if isinstance(v, (int, float)) else f" {k}={v}" for k, v in options.items())
    return f"{label} ({eq}) c={c} nu={nu:g} alpha={alpha:g}{extra}".strip()


def check_model_cross_solver(
    eq: int | str, X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *,
    kernel: Kernel | None = None, p: float | None = None, eps: float | np.ndarray | None = None,
    solvers: Iterable[str] | None = None, reference: str = "default", label: str = "",
) -> list[CheckResult]:
    """Every installed solver that takes the class of model ``eq`` against the ``reference`` solver."""
    model = build(eq, X, y, c, nu, alpha, kernel, p, eps)
    kind = model_class(model)
    where = _where(eq, label, c, nu, alpha, {k: v for k, v in (("p", p), ("eps", eps)) if v is not None})
    try:
        ref = solve(model, reference)
    except NoOptimalSolutionError as exc:  # nothing to compare with: one failed row that says why
        r = exc.result
        return [CheckResult(f"cross-solver: reference {reference}", where, np.inf,
                            note=f"({eq}): {r.solver} ended {r.termination.value}, no optimum to compare with"
                                 + (f" ({r.message[:60]})" if r.message else ""))]
    scale = objective_scale(model)
    out = []
    for name in solvers if solvers is not None else available_solvers(kind):
        if name == ref.solver:
            continue
        tie = f"cross-solver {name} vs {ref.solver}"
        try:
            r = solve(build(eq, X, y, c, nu, alpha, kernel, p, eps), name)
            out.append(CheckResult(tie, where, objective_gap(objective(r), objective(ref), scale)))
        except NoOptimalSolutionError as exc:
            limited = is_licence_limit(exc.result)
            out.append(CheckResult(tie, where, np.nan if limited else np.inf, note=exc.result.message[:80],
                                   skipped=limited))
        except SolverUnavailableError as exc:
            out.append(CheckResult(tie, where, np.nan, note=shape_skip(name, exc), skipped=True))
    return out


def check_model_dual_gap(
    eq: int | str, X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, *,
    kernel: Kernel | None = None, p: float | None = None, eps: float | np.ndarray | None = None,
    solver: str = "default", label: str = "",
) -> list[CheckResult]:
    """opt(primal) = opt(dual) + omitted constant, for a dual registered with its primal (else no row)."""
    info = model_info(eq)
    if info.role != "dual" or info.primal is None:
        return []
    primal_info = model_info(info.primal)
    options = info.options(kernel, p, eps)
    dual_model = build(info.key, X, y, c, nu, alpha, kernel, p, eps)
    primal_model = call_builder(primal_info, X, y, c, nu, alpha, primal_info.options(kernel, p, eps), {})
    where = _where(eq, label, c, nu, alpha, {k: v for k, v in (("p", p), ("eps", eps)) if v is not None})
    tie = f"strong duality ({info.primal}) = ({info.key}) + constant"
    try:
        dual, primal = solve(dual_model, solver), solve(primal_model, solver)
    except NoOptimalSolutionError as exc:
        r = exc.result
        return [CheckResult(tie, where, np.inf, note=f"{r.solver} ended {r.termination.value}: no optimum to compare")]
    constant = info.omitted_constant(*info.data(X, y, c), nu, alpha, **options) if info.omitted_constant else 0.0
    scale = max(objective_scale(primal_model), objective_scale(dual_model))
    return [CheckResult(tie, where,
                        objective_gap(objective(primal), objective(dual) + constant, scale),
                        note=f"constant {constant:.6g}")]


def check_registered(
    eq: int | str, X: np.ndarray, y: np.ndarray, label: str = "", nu: float = 0.3, alpha: float = 1.0, *,
    kernel: Kernel | None = None, p: float | None = None, eps: float | np.ndarray | None = None,
    solvers: Iterable[str] | None = None,
) -> list[CheckResult]:
    """The generic ties of model ``eq`` for every class of ``y``."""
    out: list[CheckResult] = []
    for c in np.unique(y):
        out += check_model_cross_solver(eq, X, y, c, nu, alpha, kernel=kernel, p=p, eps=eps, solvers=solvers,
                                        label=label)
        out += check_model_dual_gap(eq, X, y, c, nu, alpha, kernel=kernel, p=p, eps=eps, label=label)
    return out



