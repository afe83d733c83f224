"""Ties of the Wasserstein model (23W) (:mod:`tpm_models.models.wasserstein`, ``docs/wasserstein.md``).

* :math:`\\varepsilon = 0`: opt(23W) = opt(15);
* :math:`\\nu = \\alpha`: opt(23W) = opt(23) and the same :math:`w` (Proposition 3: the two models coincide);
* :math:`\\nu < \\alpha`: opt(23) :math:`\\le` opt(23W) :math:`\\le` opt(23) + :func:`gap_to_23` at (23)'s solution
  (Proposition 2), each side a residual :math:`\\max(0, \\text{violation}) / S`;
* the worst case attained: at (23W)'s solution, a distribution of each ball built here
  (:func:`worst_case_distribution`: the points of :math:`\\mathcal X_{-c}` moved by :math:`\\delta^\\star` of (25), the
  point of :math:`\\mathcal X_c` deepest past :math:`H_c` moved by :math:`m_c\\varepsilon_c` against
  :math:`\\delta^\\star`) costs at most the radius and its expectations equal the model's dual terms
  :math:`\\mathbb E_{\\hat P}[\\cdot] + \\varepsilon\\kappa` (a primal point equal to a dual bound: both are the
  supremum).

Objective residuals are relative to the objective's scale :math:`S`, with the solvers' absolute floor
(:func:`tpm_models.checks.deterministic.objective_gap`), as the cross-solver ties'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tpm_models.checks.deterministic import CheckResult, objective_gap
from tpm_models.checks.solves import Solves, array, objective, scalar
from tpm_models.models.norms import conjugate, norm, worst_case_delta
from tpm_models.models.wasserstein import gap_to_23
from tpm_models.solvers.compare import rel_dist

W_TOL = 1e-5
"""Tolerance on :math:`w` (as :data:`tpm_models.checks.robust.W_TOL`: strongly convex in :math:`w` only)."""

WASSERSTEIN_P = (1.0, 2.0, math.inf, 3.0)
"""The p of the transport cost at which the ties are measured."""


@dataclass(frozen=True)
class WorstCase:
    """A distribution of each ball, as atoms: ``other`` (weights :math:`1/m_{-c}`) and ``own`` (weights
    :math:`1/m_c`), their transport costs from :math:`\\hat P_{-c}`, :math:`\\hat P_c` (moving point :math:`i` to atom
    :math:`i`), and their expectations of :math:`w^\\top x+\\theta` and :math:`(-w^\\top x-\\theta)_+`."""

    other: np.ndarray
    own: np.ndarray
    cost_other: float
    cost_own: float
    linear: float
    hinge: float


def worst_case_distribution(X: np.ndarray, y: np.ndarray, c: object, p: float, eps_c: float, eps_minus_c: float,
                            w: np.ndarray, theta: float) -> WorstCase:
    """The distributions of the module docstring at :math:`(w,\\theta)`: :math:`\\hat P_{-c}` shifted by
    :math:`\\delta^\\star` (:func:`worst_case_delta`, :math:`\\|\\delta^\\star\\|_p=\\varepsilon_{-c}`), and
    :math:`\\hat P_c` with its point of largest :math:`-(w^\\top x+\\theta)` moved by
    :math:`-m_c\\varepsilon_c\\delta^\\star/\\|\\delta^\\star\\|_p`. Costs and expectations computed from the atoms."""
    X, y, w = np.asarray(X, float), np.asarray(y), np.asarray(w, float)
    own, other = X[y == c].copy(), X[y != c].copy()
    unit = worst_case_delta(w, p, 1.0)
    other += eps_minus_c * unit
    k = int(np.argmax(-(own @ w + theta)))
    moved = own.copy()
    moved[k] -= len(own) * eps_c * unit
    cost_other = float(np.mean(np.linalg.norm(other - X[y != c], ord=p, axis=1)))
    cost_own = float(np.mean(np.linalg.norm(moved - own, ord=p, axis=1)))
    return WorstCase(other, moved, cost_other, cost_own, float(np.mean(other @ w + theta)),
                     float(np.mean(np.maximum(-(moved @ w + theta), 0.0))))


def excess(a: float, b: float, scale: float) -> float:
    """How far :math:`a \\le b` fails, relative as every objective tie (:func:`objective_gap`: to
    :math:`\\max(|a|,|b|,S)` with the solvers' absolute floor); 0 when it holds."""
    return objective_gap(a, b, scale) if a > b else 0.0


def check_wasserstein(
    X: np.ndarray, y: np.ndarray, c: object, nu: float, alpha: float, eps: float, label: str = "",
    solves: Solves | None = None, ps: tuple[float, ...] = WASSERSTEIN_P,
) -> list[CheckResult]:
    """The ties of the module docstring on one class; (23) at ``(nu, alpha, eps)`` is shared with the other robust
    ties through ``solves``."""
    where = f"{label} c={c} nu={nu:g} alpha={alpha:g} eps={eps:g}"
    solves = (solves or Solves(X, y)).for_data(X, y)
    out = []
    r15, _ = solves.solve(15, c, nu, alpha)
    r0, scale0 = solves.solve("23W", c, nu, alpha, p=2.0, eps=0.0, scale=True)
    out.append(CheckResult("(23W) eps=0 = (15)", f"{where} p=2",
                           objective_gap(objective(r0), objective(r15), scale0 or 0.0)))
    for p in ps:
        w = f"{where} p={p:g}"
        r23, scale23 = solves.solve(23, c, nu, alpha, p=p, eps=eps, scale=True)
        rw, scale = solves.solve("23W", c, nu, alpha, p=p, eps=eps, scale=True)
        s = max(scale or 0.0, scale23 or 0.0)
        low, high = objective(r23), objective(r23) + gap_to_23(X, y, c, alpha, p, eps, array(r23, "w"),
                                                                 scalar(r23, "theta"))
        out.append(CheckResult("(23) <= (23W)", w, excess(low, objective(rw), s)))
        out.append(CheckResult("(23W) <= (23) + gap at (23)'s point", w, excess(objective(rw), high, s),
                               note=f"(23W)-(23) = {objective(rw) - low:.3g}, bound {high - low:.3g}"))
        ww, theta = array(rw, "w"), scalar(rw, "theta")
        wc = worst_case_distribution(X, y, c, p, eps, eps, ww, theta)
        other = X[y != c]
        dual_linear = float(np.mean(other @ ww + theta)) + eps * scalar(rw, "kappa_minus_c")
        dual_hinge = float(np.mean(array(rw, "xi"))) + eps * scalar(rw, "kappa_c")
        attained = abs(nu * (wc.linear - dual_linear)) + abs(alpha * (wc.hinge - dual_hinge))
        out.append(CheckResult("(23W) worst case attained in the balls", w, objective_gap(attained, 0.0, s),
                               note=f"costs {wc.cost_other:.3g}, {wc.cost_own:.3g} (radius {eps:g}); "
                                    f"|w|_p' = {norm(ww, conjugate(p)):.3g}, kappa_c = {scalar(rw, 'kappa_c'):.3g}"))
        out.append(CheckResult("(23W) worst case within the balls", w,
                               max(0.0, wc.cost_other - eps, wc.cost_own - eps) / max(eps, 1.0), 1e-12))
        # nu = alpha: the two models coincide (objective and w)
        r23e, se = solves.solve(23, c, alpha, alpha, p=p, eps=eps, scale=True)
        rwe, swe = solves.solve("23W", c, alpha, alpha, p=p, eps=eps, scale=True)
        we = f"{label} c={c} nu=alpha={alpha:g} eps={eps:g} p={p:g}"
        out.append(CheckResult("(23W) nu=alpha = (23)", we,
                               objective_gap(objective(rwe), objective(r23e), max(se or 0.0, swe or 0.0))))
        out.append(CheckResult("(23W) nu=alpha: w = (23) w", we, rel_dist(array(rwe, "w"), array(r23e, "w")), W_TOL))
    return out
