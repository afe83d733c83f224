"""Numerical ties of the robust family (DESIGN.md item 4, and item 5 for every robust model).

* (23) with :math:`\\varepsilon = 0` equals (15), and at :math:`p = 2` with one :math:`\\varepsilon` its :math:`w` is
  (15)'s shrunk, :math:`(1 - 2\\nu\\varepsilon/\\|w_{(15)}\\|)_+\\,w_{(15)}` (``docs/derivations.md``, "One
  :math:`\\varepsilon`");
* (26) equals (23) for :math:`p \\in \\{1, 2, \\infty\\}` and a general :math:`p`;
* (27), (28), (29) equal (26) at :math:`p = 1, 2, \\infty`;
* (22) by cutting planes equals (23) for :math:`p \\in \\{1, 2, \\infty, 3\\}`, and (22) by PyROS
  equals (23) for :math:`p \\in \\{1, 2, \\infty\\}` (Theorem 1, numerically);
* the (25) oracle attains :math:`\\varepsilon\\|w\\|_{p'}` with :math:`\\|\\delta^\\star\\|_p = \\varepsilon`
  and no sampled :math:`\\delta` of the ball beats it;
* every installed solver that takes an SOCP gives the same optimum of (27), (28), (29);
* the duals (27D), (28D), (29D), (23D) (:mod:`tpm_models.models.robust_duals`): no duality gap, the
  primal :math:`w` recovered from the dual, the dual solution equal to the primal solver's
  multipliers, and the reduction to (16) at :math:`\\varepsilon = 0` (:func:`check_robust_duals`);
* the robust kernel model (23K) (:mod:`tpm_models.models.robust_kernel`): (28) with the linear kernel, (19) at
  :math:`\\varepsilon = 0`, and safe: no sampled or searched perturbation in :math:`\\mathcal U_p(x^i)`
  violates its rows or beats its bound :math:`\\rho_i\\|w\\|` (:func:`check_robust_kernel`);
* the Wasserstein model (23W) (:mod:`tpm_models.checks.wasserstein`): (15) at :math:`\\varepsilon = 0`, (23) at
  :math:`\\nu = \\alpha`, opt(23) :math:`\\le` opt(23W) :math:`\\le` opt(23) + its gap bound otherwise, and its worst
  case attained by a distribution of each ball.

Objective residuals are :math:`|a-b| / \\max(|a|, |b|, S)` where :math:`S` is the sum of the
absolute values of the objective's terms at the solution (:func:`objective_scale`): the
objectives here are sums of terms of order :math:`10^{-2}` that cancel to
:math:`10^{-4}` or less, and a solver's absolute accuracy is relative to the terms.
Solutions: :math:`\\|w_a - w_b\\|_2 / \\max(\\|w_b\\|_2, 1)` against the cutting-plane :math:`w`
(PIQP masters at 1e-12: the most accurate route), held to ``W_TOL``. (23) is solved by the
default solver of its class: PIQP for :math:`p\\in\\{1,\\infty\\}` (a QP), Clarabel otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from tpm_models.checks.deterministic import TOL, CheckResult, refused_by_shape
from tpm_models.checks.kernel_search import safety_report
from tpm_models.checks.semi_infinite import PAPER_COUNTERPARTS, solve_22_cutting_plane, uncertain_22
from tpm_models.checks.solves import Solves, array, objective, scalar
from tpm_models.checks.verify import (  # noqa: F401  (PYROS_SUBSOLVER_NAMES: re-exported)
    PYROS_SUBSOLVER_NAMES,
    VIOLATION_TOL,
    evaluate_point,
    is_licence_refusal,
    verify_model,
)
from tpm_models.checks.wasserstein import check_wasserstein
from tpm_models.kernels import Kernel
from tpm_models.lazy import install_hint
from tpm_models.models.multiclass import recover_17
from tpm_models.models.norms import conjugate, norm, worst_case_delta
from tpm_models.models.registry import build
from tpm_models.models.robust_duals import (
    multipliers_from_primal,
    omitted_constant,
    recover_w_23,
    recover_w_socp,
    shrunk_15,
)
from tpm_models.models.robust_kernel import recover_robust_kernel_23, span_basis
from tpm_models.models.shapes import dual_constant
from tpm_models.solvers.backends.registry import (
    Backend,
    accurate_solvers,
    available_solvers,
    default_solver,
    has_accurate_point,
    pyros_backends,
)
from tpm_models.solvers.common import NoOptimalSolutionError, SolveResult, SolverUnavailableError
from tpm_models.solvers.compare import rel_dist, rel_gap
from tpm_models.solvers.dispatch import is_licence_limit

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



def _solve(solves: Solves, eq: int | str, c: object, nu: float, alpha: float, p: float, eps: float,
           solver: str = "default") -> tuple[SolveResult, float]:
    """(result, objective scale) of ``eq`` at ``(p, eps)`` by ``solver``, built and solved once in ``solves``."""
    result, scale = solves.solve(eq, c, nu, alpha, p=p, eps=eps, solver=solver, scale=True)
    if scale is None:  # scale=True measures it
        raise ValueError(f"({eq}) by {result.solver}: no objective scale")
    return result, scale


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
    cross_solvers: Iterable[str] | None = None, solves: Solves | None = None,
) -> list[CheckResult]:
    """Every robust tie but PyROS on one class (module docstring); ``solves``: the models and solves shared
    with other ties (:mod:`tpm_models.checks.solves`)."""
    where = f"{label} c={c} nu={nu:g} alpha={alpha:g} eps={eps:g}"
    solves = (solves or Solves(X, y)).for_data(X, y)
    reference = reference_26_solver()
    out = []
    # (23) at eps = 0 equals (15)
    r15, _ = solves.solve(15, c, nu, alpha)
    r23_0, scale = _solve(solves, 23, c, nu, alpha, 2.0, 0.0)
    out.append(CheckResult("(23) eps=0 = (15)", where, rel_gap(objective(r23_0), objective(r15), scale)))
    r23, scale23, w22 = {}, {}, {}
    nominal = build(15, X, y, c, nu, alpha)
    for p in (1.0, 2.0, math.inf, GENERAL_P):
        r23[p], scale = _solve(solves, 23, c, nu, alpha, p, eps)
        scale23[p] = scale
        # (23)'s point over the whole set (21), by the verifier's exact separation (the (25) oracle)
        ev = evaluate_point(nominal, uncertain_22(nominal, p, eps), r23[p].values)
        out.append(CheckResult("(23) robust over U (exact separation)", f"{where} p={p:g}", ev.violation,
                               VIOLATION_TOL, note=ev.row))
        r26, _ = _solve(solves, 26, c, nu, alpha, p, eps, reference)
        cp = solve_22_cutting_plane(X, y, c, nu, alpha, p, eps)
        w22[p] = cp.w
        w = f"{where} p={p:g}"
        out.append(CheckResult("(26) = (23) objective", w, rel_gap(objective(r26), objective(r23[p]), scale)))
        out.append(CheckResult("(22) cutting planes = (23)", w, rel_gap(cp.objective, objective(r23[p]), scale),
                               note=cp.message))
        out.append(CheckResult("(23) w = (22) w", w, rel_dist(array(r23[p], "w"), cp.w), W_TOL))
        out.append(CheckResult("(26) w = (22) w", w, rel_dist(array(r26, "w"), cp.w), W_TOL))
    out.append(CheckResult("(23) p=2, one eps: w = (15) w shrunk", f"{where} p=2",
                           rel_dist(array(r23[2.0], "w"), shrunk_15(array(r15, "w"), nu, eps)), W_TOL))
    # every installed solver that takes the model: (27)-(29) against (26) (Ipopt), and (23) itself
    # (a QP at p = 1, inf; an NLP otherwise) against its default solve
    cross = [(27, 1.0, 26), (28, 2.0, 26), (29, math.inf, 26)] + [(23, p, 23) for p in r23]
    for eq, p, ref_eq in cross:
        w = f"{where} p={p:g}"
        if ref_eq == 26:
            ref, scale = _solve(solves, 26, c, nu, alpha, p, eps, reference)
        else:
            ref, scale = r23[p], scale23[p]
        kind = solves.kind(eq, c, nu, alpha, p=p, eps=eps)
        capable = available_solvers(kind)
        names = [n for n in cross_solvers if n in capable] if cross_solvers is not None else capable
        if ref_eq == 23:  # the reference is the default solver's
            names = [n for n in names if n != default_solver(kind)]
        else:
            names = names or [reference]
        for name in names:
            tie = f"({eq}) = (26), {name}" if ref_eq == 26 else f"(23) {name} = (23) {default_solver(kind)}"
            try:
                r, _ = solves.solve(eq, c, nu, alpha, p=p, eps=eps, solver=name)
            except SolverUnavailableError as exc:
                out.append(refused_by_shape(name, tie, w, exc))
                continue
            except NoOptimalSolutionError as exc:
                limited = is_licence_limit(exc.result)
                out.append(CheckResult(tie, w, math.nan if limited else math.inf,
                                       note=exc.result.message[:80], skipped=limited))
                continue
            out.append(CheckResult(tie, w, rel_gap(objective(r), objective(ref), scale)))
            tol = W_TOL if has_accurate_point(name) else W_TOL_OTHER_SOCP
            out.append(CheckResult(f"({eq}) w = (22) w, {name}", w, rel_dist(array(r, "w"), w22[p]), tol))
    return out


DUAL_PARAMETERS = ((0.3, 1.0, 0.02), (0.7, 1.0, 0.03), (0.4, 2.0, 0.01))
"""(nu, alpha, eps) of the dual ties in ``tpm-models check``: w stays away from 0 on every class of
Iris and Wine (smallest |w|_2 over (27)-(29) and the classes: 0.02). Where robustness drives w to 0
(e.g. nu=0.1, alpha=0.5, eps=0.1 on Iris class 1) the cone multipliers are not unique."""

DUAL_GENERAL_P = (3.0, 1.5)
"""The p in (1, inf) at which (23D) is measured, beside p = 1, 2, inf: the first at every point of
``DUAL_PARAMETERS``, the others at the first (CasADi takes ~0.6 s to set up the dense Hessian of
(23D) for Ipopt on Wine)."""

DUAL_MULTIPLIER_TOL_OTHER = 1e-3
"""Tolerance on the multipliers reported by the barrier SOCP backends (Gurobi, Xpress, CPLEX) against
the dual solved by Ipopt. Their barriers stop at a 1e-9 gap with complementarity products of ~1e-6
left: Gurobi on (29), Iris class 0, returned lam = 0.01989 for a point 1e-4 inside the margin whose
multiplier is alpha/m_c = 0.02 (residual 1.2e-4), while its objective agreed to 1e-9. A wrong sign or
factor in the mapping (``multipliers_from_primal``) shows as 1e-2 or more. Ipopt's multipliers (and
PIQP's, for (23) at p = 1, inf) are within 4e-7 and held to ``TOL``."""


def _multiplier_row(eq: str, primal_eq: int, dual: SolveResult, primal: SolveResult, where: str) -> CheckResult:
    """Dual solution vs the multipliers read off the primal solver's duals (components the solver
    gives: finite values)."""
    tie = f"({eq}) = multipliers of ({primal_eq}), {primal.solver}" if eq != "23D" \
        else f"(23D) = multipliers of the primal, {primal.solver}"
    if primal.duals is None:
        return CheckResult(tie, where, math.nan, skipped=True, note=f"skipped: {primal.solver} gives no duals")
    given = multipliers_from_primal(eq, primal.values, primal.duals)
    ours, theirs, missing = [], [], []
    for name, value in given.items():
        value = np.atleast_1d(np.asarray(value, float))
        if np.all(np.isfinite(value)):
            ours.append(np.atleast_1d(np.asarray(dual.values[name], float)))
            theirs.append(value)
        else:
            missing.append(name)
    tol = TOL if has_accurate_point(primal.solver) else DUAL_MULTIPLIER_TOL_OTHER
    note = f"compared: {', '.join(n for n in given if n not in missing)}"
    if missing:
        note += f"; not given by {primal.solver} (cone rows): {', '.join(missing)}"
    return CheckResult(tie, where, rel_dist(np.concatenate(ours), np.concatenate(theirs)), tol, note=note)


def check_robust_duals(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps: float, label: str = "",
    multiplier_solvers: Iterable[str] | None = None, general_p: Iterable[float] = DUAL_GENERAL_P,
    solves: Solves | None = None,
) -> list[CheckResult]:
    """The duals (27D), (28D), (29D), (23D) on one class (``docs/robust_duals.md``).

    * strong duality: opt(primal) = opt(dual) + ``omitted_constant`` (residual :func:`rel_gap`
      relative to the primal's terms): (27D), (28D), (29D) against (27), (28), (29) solved by Ipopt;
      (23D) at p = 1, 2, inf against the same SOCPs, and at each p of ``general_p`` against (23)
      (Ipopt);
    * the primal w recovered from the dual (``recover_w_socp``, ``recover_w_23``) vs the primal w;
    * the dual solution vs the multipliers the primal solver reports (``multipliers_from_primal``):
      the default solver's always, and those of every other installed SOCP backend in ``multiplier_solvers`` (``None``:
      all); a backend that gives no duals, or whose licence refuses the model, is skipped;
    * at eps = 0: opt(dual) + constant = opt(16) + ``dual_constant`` (= opt(15)) and lam = lam of (16).
    """
    where = f"{label} c={c} nu={nu:g} alpha={alpha:g} eps={eps:g}"
    solves = (solves or Solves(X, y)).for_data(X, y)
    out = []
    others = [n for n in available_solvers("SOCP") if n != default_solver("SOCP")]
    if multiplier_solvers is not None:
        others = [n for n in others if n in set(multiplier_solvers)]
    # eps = 0: every dual is (16) up to its constant
    r16, _ = solves.solve(16, c, nu, alpha)
    k16 = dual_constant(X[y != c], nu)
    for eq, p in (("27D", 1.0), ("28D", 2.0), ("29D", math.inf), ("23D", DUAL_GENERAL_P[0])):
        d0, _ = solves.solve(eq, c, nu, alpha, p=p, eps=0.0)
        w0 = f"{label} c={c} nu={nu:g} alpha={alpha:g} eps=0" + (f" p={p:g}" if eq == "23D" else "")
        out.append(CheckResult(f"({eq}) eps=0 = (16) objective", w0,
                               rel_gap(objective(d0) + omitted_constant(eq, X, y, c, nu), objective(r16) + k16, k16)))
        out.append(CheckResult(f"({eq}) eps=0: lam = lam of (16)", w0, rel_dist(array(d0, "lam"), array(r16, "lam"))))
    # the conic duals of the SOCPs
    socp: dict[float, tuple[int, SolveResult, float]] = {}
    for eq, p, primal_eq in (("27D", 1.0, 27), ("28D", 2.0, 28), ("29D", math.inf, 29)):
        w = f"{where} p={p:g}"
        primal, scale = _solve(solves, primal_eq, c, nu, alpha, p, eps)
        socp[p] = primal_eq, primal, scale
        dual, _ = solves.solve(eq, c, nu, alpha, p=p, eps=eps)
        out.append(CheckResult(f"({eq}) strong duality with ({primal_eq})", w,
                               rel_gap(objective(primal), objective(dual), scale)))
        out.append(CheckResult(f"({eq}) w recovered = ({primal_eq}) w", w,
                               rel_dist(recover_w_socp(dual.values), array(primal, "w")), W_TOL))
        out.append(_multiplier_row(eq, primal_eq, dual, primal, w))
        for name in others:
            try:
                other, _ = solves.solve(primal_eq, c, nu, alpha, p=p, eps=eps, solver=name)
            except SolverUnavailableError as exc:
                out.append(refused_by_shape(name, f"({eq}) = multipliers of ({primal_eq}), {name}", w, exc))
                continue
            except NoOptimalSolutionError as exc:
                limited = is_licence_limit(exc.result)
                out.append(CheckResult(f"({eq}) = multipliers of ({primal_eq}), {name}", w,
                                       math.nan if limited else math.inf, note=exc.result.message[:80],
                                       skipped=limited))
                continue
            out.append(_multiplier_row(eq, primal_eq, dual, other, w))
    # (23D) for every p: against the SOCP at p = 1, 2, inf, against (23) otherwise
    k23 = omitted_constant("23D", X, y, c, nu)
    for p in (1.0, 2.0, math.inf, *general_p):
        primal_eq, primal, scale = socp[p] if p in socp else (23, *_solve(solves, 23, c, nu, alpha, p, eps))
        w = f"{where} p={p:g} vs ({primal_eq})"
        dual, _ = solves.solve("23D", c, nu, alpha, p=p, eps=eps)
        out.append(CheckResult("(23D) strong duality with the primal", w,
                               rel_gap(objective(primal), objective(dual) + k23, scale)))
        out.append(CheckResult("(23D) w recovered = primal w", w,
                               rel_dist(recover_w_23(X, y, c, nu, dual.values), array(primal, "w")), W_TOL))
        out.append(_multiplier_row("23D", primal_eq, dual, primal, w))
    return out


PYROS_PARAMETERS = 180
"""Largest number of uncertain parameters handed to PyROS by ``tpm-models check``."""

PYROS_POINTS_PER_CLASS = 8
"""PyROS on the whole sets takes 1-5 minutes per class (DESIGN.md); ``tpm-models check``
runs it on the first points of every class (at most 8, and at most ``PYROS_PARAMETERS``
uncertain parameters in all)."""


VERIFY_MODELS = PAPER_COUNTERPARTS
"""The paper's registered robust counterparts of (22) that :func:`verify_model` (``tpm-models verify``) checks;
it takes every model whose registry entry names its nominal model and uncertain data
(:func:`tpm_models.models.registry.verifiable_keys`: a user's too)."""

def reference_26_solver() -> str:
    """The solver of (26), the reference of (27)-(29): the first installed NLP backend that declares an accurate
    point (:func:`~tpm_models.solvers.backends.registry.accurate_solvers`: Ipopt, the ``ipopt`` extra), an NLP
    solver independent of the conic path that solves (27)-(29); without one, the default NLP solver (Clarabel on the
    core install)."""
    return next(iter(accurate_solvers("NLP")), "default")


def pyros_check_backend() -> Backend:
    """The backend of :func:`check_pyros`'s PyROS subsolvers: the first of PyROS's default (global) subsolvers
    (:func:`~tpm_models.solvers.backends.registry.pyros_backends`; Gurobi here), whose size-limited licence the
    check's subsets are sized for; installed or not."""
    return pyros_backends(global_only=True)[0]


def check_pyros(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps: float, label: str = "",
    points_per_class: int = PYROS_POINTS_PER_CLASS,
) -> list[CheckResult]:
    """(22) by PyROS equals (23) for p = 1, 2, inf on a subset of the points, through the generic verifier
    (:func:`verify_model` with PyROS and the subsolvers of :func:`pyros_check_backend`, Gurobi); the residual is its
    relative gap."""
    backend = pyros_check_backend()
    if not backend.available():
        return [CheckResult("(22) PyROS = (23)", f"{label} c={c}", math.nan, skipped=True,
                            note=f"skipped: PyROS here needs {backend.name} as subsolver "
                                 f"({install_hint(backend.package)})")]
    out = []
    classes = np.unique(y)
    for p in (1.0, 2.0, math.inf):
        # PyROS's separation problems carry one variable per uncertain parameter (2n per point for
        # p = 1): keep them under the 200-variable quadratic limit of Gurobi's pip licence
        per_point = X.shape[1] * len(classes) * (2 if p == 1 else 1)
        per_class = max(2, min(points_per_class, PYROS_PARAMETERS // per_point))
        where = f"{label}[{per_class * len(classes)} pts] c={c} nu={nu:g} alpha={alpha:g} eps={eps:g} p={p:g}"
        try:
            v = verify_model(23, X, y, c, nu, alpha, p, eps, method="pyros", solver=backend.name,
                             points_per_class=per_class)
        except NoOptimalSolutionError as exc:
            out.append(CheckResult("(22) PyROS = (23)", where, math.inf, note=exc.result.message))
            continue
        except Exception as exc:  # a subsolver's licence refusing a separation problem
            limited = is_licence_refusal(exc)
            out.append(CheckResult("(22) PyROS = (23)", where, math.nan if limited else math.inf,
                                   note=f"{type(exc).__name__}: {str(exc)[:80]}", skipped=limited))
            continue
        if not v.semi_infinite.ok:  # the verifier caught the route's failure: a licence refusal is a skip
            limited = v.semi_infinite.licence_limited
            out.append(CheckResult("(22) PyROS = (23)", where, math.nan if limited else math.inf,
                                   note=v.semi_infinite.message[:80], skipped=limited))
            continue
        out.append(CheckResult("(22) PyROS = (23)", where, v.gap, note=v.semi_infinite.message))
        out.append(CheckResult("(23) robust over U (PyROS subset)", where, v.violation, note=v.violating_row))
    return out


def run_robust_checks(
    X: np.ndarray, y: np.ndarray, label: str = "", parameters: tuple[float, float, float] = ROBUST_PARAMETERS,
    cross_solvers: Iterable[str] | None = None, pyros: bool = True,
    progress: Callable[[str], None] | None = None, classes: Iterable[object] | None = None,
    oracle: bool | None = None, robust: bool = True,
) -> list[CheckResult]:
    """Every robust tie on one data set, for every class (``classes``: these only).

    ``oracle``: the (25) oracle's ties first (``None``: on Iris or an unnamed set); ``robust=False`` leaves out
    every tie but the oracle's and PyROS's (``tpm-models check --jobs`` runs PyROS in a task of its own). The ties
    of one class share their models and solves (:class:`Solves`): (26) by Ipopt, (27)-(29) by each SOCP
    backend, (23) and (28) by their default solvers serve several ties each."""
    nu, alpha, eps = parameters
    cross_solvers = None if cross_solvers is None else tuple(cross_solvers)
    results = check_oracle() if (label in ("", "iris") if oracle is None else oracle) else []
    for c in np.unique(y) if classes is None else classes:
        if progress:
            progress(f"{label} robust class {c}" + ("" if robust else " (PyROS)"))
        if robust:
            solves = Solves(X, y)
            results += check_robust(X, y, c, nu, alpha, eps, label, cross_solvers, solves=solves)
            results += check_robust_kernel(X, y, c, nu, alpha, eps, label, solves=solves)
            results += check_wasserstein(X, y, c, nu, alpha, eps, label, solves=solves)
            for k, (nu_d, alpha_d, eps_d) in enumerate(DUAL_PARAMETERS):  # other backends' multipliers: once
                results += check_robust_duals(X, y, c, nu_d, alpha_d, eps_d, label,
                                              cross_solvers if k == 0 else (),
                                              DUAL_GENERAL_P if k == 0 else DUAL_GENERAL_P[:1], solves=solves)
        if pyros:
            results += check_pyros(X, y, c, nu, alpha, eps, label)
    return results


KERNEL_CHECK_KERNELS = (Kernel("gaussian", sigma=0.5), Kernel("gaussian", sigma=2.0),
                        Kernel("inhom-poly", degree=2, gamma=1.0))
"""Kernels of the (23K) ties: two Gaussian widths (exact radii) and the inhomogeneous quadratic kernel (a radius
that bounds, not attains, the largest move of :math:`\\varphi`)."""

KERNEL_SAMPLES = 200
"""Sampled perturbations per training point and model in the (23K) safety ties (half on the sphere)."""

KERNEL_ROW_TOL = 1e-8
"""Largest violation of a (23K) row at a perturbed point: the solver's own rows hold to ~1e-9 (Ipopt left
:math:`t` 1.5e-9 below :math:`\\|w\\|` on Iris, hom-poly d = 3), which a perturbation can expose by
:math:`\\rho_i` times that."""

KERNEL_RATIO_TOL = 1e-9
"""Tolerance above 1 on (change of :math:`\\langle w,\\varphi(x)\\rangle` over :math:`\\mathcal U_p(x^i)`) /
:math:`\\rho_i\\|w\\|`: the ratio is computed from kernel values to ~1e-13; with the linear kernel and
:math:`p = 2` it is 1."""


def check_robust_kernel(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps: float, label: str = "",
    kernels: Iterable[Kernel] = KERNEL_CHECK_KERNELS, samples: int = KERNEL_SAMPLES,
    solves: Solves | None = None,
) -> list[CheckResult]:
    """The robust kernel model (23K) on one class (``docs/robust_kernel.md``).

    * linear kernel, :math:`p=2`: (23K) = (28) (objective; :math:`w = X^\\top\\beta` vs (28)'s :math:`w`);
    * :math:`\\varepsilon = 0`: opt(23K) = opt(19) + ``dual_constant``, and the distances (20) of the two
      hyperplanes (:func:`~tpm_models.models.robust_kernel.recover_robust_kernel_23`,
      :func:`~tpm_models.models.multiclass.recover_17`) agree on every training point;
    * :math:`p = 2, \\infty`, each kernel: :func:`~tpm_models.checks.kernel_search.safety_report` -- no sampled
      :math:`\\delta` and not the local search's worst :math:`\\delta` violates a row
      :math:`\\langle w,\\varphi(x^i+\\delta)\\rangle + \\theta + \\xi_i \\ge 0` of the solver's point, and
      their change of :math:`\\langle w,\\varphi(x)\\rangle` stays within :math:`\\rho_i\\|w\\|` (the note gives
      the searched worst case as a fraction of the bound: the model's conservatism).
    """
    where = f"{label} c={c} nu={nu:g} alpha={alpha:g}"
    solves = (solves or Solves(X, y)).for_data(X, y)
    out = []
    linear = Kernel("linear")
    r28, scale = _solve(solves, 28, c, nu, alpha, 2.0, eps)
    rk, _ = solves.solve("23K", c, nu, alpha, linear, p=2.0, eps=eps)
    plane = recover_robust_kernel_23(X, y, c, nu, alpha, 2.0, eps, linear, array(rk, "w"))
    out.append(CheckResult("(23K) linear kernel p=2 = (28)", f"{where} eps={eps:g}",
                           rel_gap(objective(rk), objective(r28), scale)))
    out.append(CheckResult("(23K) linear kernel p=2: w = (28) w", f"{where} eps={eps:g}",
                           rel_dist(X.T @ plane.beta, array(r28, "w")), W_TOL))
    for kernel in kernels:
        basis = span_basis(kernel, X)
        w0 = f"{where} {kernel} eps=0"
        r19, _ = solves.solve(19, c, nu, alpha, kernel)
        r0, scale0 = solves.solve("23K", c, nu, alpha, kernel, p=2.0, eps=0.0, scale=True)
        out.append(CheckResult("(23K) eps=0 = (19) + constant", w0, rel_gap(
            objective(r0), objective(r19) + dual_constant(X[y != c], nu, kernel), scale0 or 0.0)))  # measured: scale
        d19 = recover_17(X, y, c, array(r19, "lam"), nu, alpha, kernel).distance(X)
        d0 = recover_robust_kernel_23(X, y, c, nu, alpha, 2.0, 0.0, kernel, array(r0, "w"), basis).distance(X)
        out.append(CheckResult("(23K) eps=0: distances (20) = (19)'s", w0,
                               float(np.abs(d0 - d19).max() / max(np.abs(d19).max(), 1.0))))
        for p in (2.0, math.inf):
            w = f"{where} {kernel} eps={eps:g} p={p:g}"
            r, _ = solves.solve("23K", c, nu, alpha, kernel, p=p, eps=eps)
            plane = recover_robust_kernel_23(X, y, c, nu, alpha, p, eps, kernel, array(r, "w"), basis)
            rep = safety_report(X, y, c, p, eps, plane, scalar(r, "theta"), array(r, "xi"), samples)
            note = (f"searched worst case / rho|w|: max {rep.search_ratios.max():.3f}, "
                    f"mean {rep.search_ratios.mean():.3f}, min {rep.search_ratios.min():.3f}")
            out.append(CheckResult("(23K) sampled delta: rows hold", w, rep.sampled_violation, KERNEL_ROW_TOL,
                                   note=f"{rep.samples} perturbations"))
            out.append(CheckResult("(23K) sampled change <= rho|w|", w, max(0.0, rep.sampled_ratio - 1.0),
                                   KERNEL_RATIO_TOL, note=f"largest sampled / rho|w|: {rep.sampled_ratio:.3f}"))
            out.append(CheckResult("(23K) searched delta: rows hold", w, rep.search_violation, KERNEL_ROW_TOL))
            out.append(CheckResult("(23K) searched worst case <= rho|w|", w,
                                   max(0.0, float(rep.search_ratios.max()) - 1.0), KERNEL_RATIO_TOL, note=note))
    return out
