"""Numerical ties of the robust family (DESIGN.md item 4, and item 5 for every robust model).

* (23) with :math:`\\varepsilon = 0` equals (15);
* (26) equals (23) for :math:`p \\in \\{1, 2, \\infty\\}` and a general :math:`p`;
* (27), (28), (29) equal (26) at :math:`p = 1, 2, \\infty`;
* (22) by cutting planes equals (23) for :math:`p \\in \\{1, 2, \\infty, 3\\}`, and (22) by PyROS
  equals (23) for :math:`p \\in \\{1, 2, \\infty\\}` (Theorem 1, numerically);
* the (25) oracle attains :math:`\\varepsilon\\|w\\|_{p'}` with :math:`\\|\\delta^\\star\\|_p = \\varepsilon`
  and no sampled :math:`\\delta` of the ball beats it;
* every installed solver that takes an SOCP gives the same optimum of (27), (28), (29).

Objective residuals are :math:`|a-b| / \\max(|a|, |b|, S)` where :math:`S` is the sum of the
absolute values of the objective's terms at the solution (:func:`objective_scale`): the
objectives here are sums of terms of order :math:`10^{-2}` that cancel to
:math:`10^{-4}` or less, and a solver's absolute accuracy is relative to the terms.
Solutions: :math:`\\|w_a - w_b\\|_2 / \\max(\\|w_b\\|_2, 1)` against the cutting-plane :math:`w`
(PIQP masters at 1e-12: the most accurate route), held to ``W_TOL``. (23) is solved by the
default solver of its class: PIQP for :math:`p\\in\\{1,\\infty\\}` (a QP), Ipopt otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np
import pyomo.environ as pyo
from pyomo.repn import generate_standard_repn

from tpm_models.checks import CheckResult, rel_dist
from tpm_models.norms import conjugate, norm, worst_case_delta
from tpm_models.registry import build
from tpm_models.semi_infinite import solve_22_cutting_plane, solve_22_pyros
from tpm_models.solvers import (
    DEFAULT,
    NoOptimalSolutionError,
    SolveResult,
    available_solvers,
    is_licence_limit,
    model_class,
    solve,
)

W_TOL = 1e-5
"""Tolerance on solutions: the objective is strongly convex only in w (1/2|w|^2), so a
solver whose objective is within d of the optimum has w within ~sqrt(2d); barrier SOCP
solvers at a 1e-9 gap were seen at 1e-6 to 3e-6 from the cutting-plane w."""

W_TOL_OTHER_SOCP = 1e-4
"""Solution tolerance for the SOCP backends other than Ipopt (Gurobi, CPLEX, Xpress, SCIP at
their 1e-9 gap/feasibility settings): measured up to 2.1e-5 from the cutting-plane w on
Wine (Gurobi, (29), class 0) while their objectives agreed to 7e-10."""

GENERAL_P = 3.0
"""The p in (1, inf) on which the general-p ties are measured (p' = 1.5)."""

ROBUST_PARAMETERS = (0.3, 1.0, 0.02)
"""(nu, alpha, eps) of ``tpm-models check``: eps = 0.02 (2% of the feature range) keeps
w well away from 0 on every class of Iris and Wine."""


def objective_scale(model: pyo.ConcreteModel) -> float:
    """Sum of the absolute values of the objective's terms at the model's current values."""
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    repn = generate_standard_repn(objective.expr, quadratic=True)
    total = abs(float(pyo.value(repn.constant)))
    total += sum(abs(c * v.value) for v, c in zip(repn.linear_vars, repn.linear_coefs))
    total += sum(abs(c * u.value * v.value) for (u, v), c in zip(repn.quadratic_vars, repn.quadratic_coefs))
    if repn.nonlinear_expr is not None:
        total += abs(pyo.value(repn.nonlinear_expr))
    return float(total)


def obj_residual(a: float, b: float, scale: float) -> float:
    """:math:`|a-b| / \\max(|a|, |b|, S)`."""
    denom = max(abs(a), abs(b), abs(scale))
    return 0.0 if denom == 0 else abs(a - b) / denom


def _solve(eq, X, y, c, nu, alpha, p, eps, solver="default") -> tuple[SolveResult, float]:
    model = build(eq, X, y, c, nu, alpha, p=p, eps=eps)
    result = solve(model, solver)
    return result, objective_scale(model)


def check_oracle(n: int = 5, samples: int = 20000, seed: int = 0) -> list[CheckResult]:
    """(25): :math:`\\delta^\\star` has norm :math:`\\varepsilon`, attains :math:`\\varepsilon\\|w\\|_{p'}`,
    and no sampled :math:`\\delta` with :math:`\\|\\delta\\|_p \\le \\varepsilon` beats it."""
    rng = np.random.default_rng(seed)
    out = []
    eps = 0.3
    ws = {"random w": rng.normal(size=n), "tied |w_j|": np.array([1.0, -1.0, 1.0, 0.5, -0.5][:n]),
          "w = 0": np.zeros(n)}
    for p in (1.0, 1.5, 2.0, 3.0, math.inf):
        for name, w in ws.items():
            where = f"p={p:g}, {name}"
            d = worst_case_delta(w, p, eps)
            bound = eps * norm(w, conjugate(p))
            out.append(CheckResult("(25) oracle: |delta*|_p = eps", where, abs(norm(d, p) - eps) / eps, 1e-12))
            out.append(CheckResult("(25) oracle: delta*'w = eps|w|_p'", where,
                                   abs(d @ w - bound) / max(bound, 1.0), 1e-12))
            z = rng.normal(size=(samples, n)) * rng.exponential(size=(samples, 1))
            z = eps * z / np.linalg.norm(z, ord=p, axis=1, keepdims=True)  # points on the sphere
            beat = max(0.0, float((z @ w).max() - d @ w))
            out.append(CheckResult("(25) oracle: no sampled delta beats it", where, beat / max(bound, 1.0), 1e-12))
    return out


def check_robust(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps: float, label: str = "",
    cross_solvers: Iterable[str] | None = None,
) -> list[CheckResult]:
    """Every robust tie but PyROS on one class (module docstring)."""
    where = f"{label} c={c} nu={nu:g} alpha={alpha:g} eps={eps:g}"
    out = []
    # (23) at eps = 0 equals (15)
    r15 = solve(build(15, X, y, c, nu, alpha))
    r23_0, scale = _solve(23, X, y, c, nu, alpha, 2.0, 0.0)
    out.append(CheckResult("(23) eps=0 = (15)", where, obj_residual(r23_0.objective, r15.objective, scale)))
    r23, scale23, w22 = {}, {}, {}
    for p in (1.0, 2.0, math.inf, GENERAL_P):
        r23[p], scale = _solve(23, X, y, c, nu, alpha, p, eps)
        scale23[p] = scale
        r26, _ = _solve(26, X, y, c, nu, alpha, p, eps, "ipopt")
        cp = solve_22_cutting_plane(X, y, c, nu, alpha, p, eps)
        w22[p] = cp.w
        w = f"{where} p={p:g}"
        out.append(CheckResult("(26) = (23) objective", w, obj_residual(r26.objective, r23[p].objective, scale)))
        out.append(CheckResult("(22) cutting planes = (23)", w, obj_residual(cp.objective, r23[p].objective, scale),
                               note=cp.message))
        out.append(CheckResult("(23) w = (22) w", w, rel_dist(r23[p].values["w"], cp.w), W_TOL))
        out.append(CheckResult("(26) w = (22) w", w, rel_dist(r26.values["w"], cp.w), W_TOL))
    # every installed solver that takes the model: (27)-(29) against (26) (Ipopt), and (23) itself
    # (a QP at p = 1, inf; an NLP otherwise) against its default solve
    cross = [(27, 1.0, 26), (28, 2.0, 26), (29, math.inf, 26)] + [(23, p, 23) for p in r23]
    for eq, p, ref_eq in cross:
        w = f"{where} p={p:g}"
        if ref_eq == 26:
            ref, scale = _solve(26, X, y, c, nu, alpha, p, eps, "ipopt")
        else:
            ref, scale = r23[p], scale23[p]
        kind = model_class(build(eq, X, y, c, nu, alpha, p=p, eps=eps))
        capable = available_solvers(kind)
        names = [n for n in cross_solvers if n in capable] if cross_solvers is not None else capable
        if ref_eq == 23:  # the reference is the default solver's
            names = [n for n in names if n != DEFAULT[kind]]
        else:
            names = names or ["ipopt"]
        for name in names:
            tie = f"({eq}) = (26), {name}" if ref_eq == 26 else f"(23) {name} = (23) {DEFAULT[kind]}"
            try:
                r, _ = _solve(eq, X, y, c, nu, alpha, p, eps, name)
            except NoOptimalSolutionError as exc:
                limited = is_licence_limit(exc.result)
                out.append(CheckResult(tie, w, math.nan if limited else math.inf,
                                       note=exc.result.message[:80], skipped=limited))
                continue
            out.append(CheckResult(tie, w, obj_residual(r.objective, ref.objective, scale)))
            tol = W_TOL if name in ("ipopt", "piqp", "daqp") else W_TOL_OTHER_SOCP
            out.append(CheckResult(f"({eq}) w = (22) w, {name}", w, rel_dist(r.values["w"], w22[p]), tol))
    return out


PYROS_PARAMETERS = 180
"""Largest number of uncertain parameters handed to PyROS by ``tpm-models check``."""

PYROS_POINTS_PER_CLASS = 8
"""PyROS on the whole sets takes 1-5 minutes per class (DESIGN.md); ``tpm-models check``
runs it on the first points of every class (at most 8, and at most ``PYROS_PARAMETERS``
uncertain parameters in all)."""


def check_pyros(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps: float, label: str = "",
    points_per_class: int = PYROS_POINTS_PER_CLASS,
) -> list[CheckResult]:
    """(22) by PyROS equals (23) for p = 1, 2, inf on a subset of the points."""
    if "gurobi" not in available_solvers():
        return [CheckResult("(22) PyROS = (23)", f"{label} c={c}", math.nan, skipped=True,
                            note="skipped: PyROS here needs Gurobi as subsolver (pip install gurobipy)")]
    out = []
    classes = np.unique(y)
    for p in (1.0, 2.0, math.inf):
        # PyROS's separation problems carry one variable per uncertain parameter (2n per point for
        # p = 1): keep them under the 200-variable quadratic limit of Gurobi's pip licence
        per_point = X.shape[1] * len(classes) * (2 if p == 1 else 1)
        per_class = max(2, min(points_per_class, PYROS_PARAMETERS // per_point))
        keep = np.concatenate([np.flatnonzero(y == k)[:per_class] for k in classes])
        Xs, ys = X[keep], y[keep]
        where = f"{label}[{len(keep)} pts] c={c} nu={nu:g} alpha={alpha:g} eps={eps:g} p={p:g}"
        r23, scale = _solve(23, Xs, ys, c, nu, alpha, p, eps)
        try:
            pr = solve_22_pyros(Xs, ys, c, nu, alpha, p, eps, local_solver="gurobi_direct",
                                global_solver="gurobi_direct")
        except NoOptimalSolutionError as exc:
            out.append(CheckResult("(22) PyROS = (23)", where, math.inf, note=exc.result.message))
            continue
        except Exception as exc:  # a subsolver's licence refusing a separation problem
            limited = any(w in str(exc).lower() for w in ("size-limited", "too large", "licen"))
            out.append(CheckResult("(22) PyROS = (23)", where, math.nan if limited else math.inf,
                                   note=f"{type(exc).__name__}: {str(exc)[:80]}", skipped=limited))
            continue
        out.append(CheckResult("(22) PyROS = (23)", where, obj_residual(pr.objective, r23.objective, scale),
                               note=pr.message))
    return out


def run_robust_checks(
    X: np.ndarray, y: np.ndarray, label: str = "", parameters: tuple[float, float, float] = ROBUST_PARAMETERS,
    cross_solvers: Iterable[str] | None = None, pyros: bool = True,
    progress: Callable[[str], None] | None = None,
) -> list[CheckResult]:
    """Every robust tie on one data set, for every class."""
    nu, alpha, eps = parameters
    results = check_oracle() if label in ("", "iris") else []
    for c in np.unique(y):
        if progress:
            progress(f"{label} robust class {c}")
        results += check_robust(X, y, c, nu, alpha, eps, label, cross_solvers)
        if pyros:
            results += check_pyros(X, y, c, nu, alpha, eps, label)
    return results

