"""The working-set method for the QP of a box and one equality, the engine of the decomposition backends.

The QP is

.. math::
    \\min_\\lambda\\ f(\\lambda)
    \\quad\\text{s.t.}\\quad e^\\top\\lambda = \\nu,\\ \\ 0\\le\\lambda\\le u,

with :math:`f` convex quadratic and gradient :math:`G`: the duals (4)/(5), (12)/(13), (16), (19) of the paper, and
the dual of any QP of the shape that :mod:`tpm_models.solvers.slack_form` recognises. Its KKT conditions hold, with
the multiplier :math:`\\rho` of the equality, when :math:`\\max_{I_{low}} G \\le \\min_{I_{up}} G`
(:math:`I_{up} = \\{\\lambda_i < u\\}`, :math:`I_{low} = \\{\\lambda_i > 0\\}`); the violation
:func:`kkt_gap` is the stopping rule, :func:`select_working_set` the maximal violating pairs (first order; Joachims'
SVMlight, Chang & Lin's libsvm), :func:`solve_subproblem` the exact solve of a working set with a proximal term,
:func:`greedy_vertex` a start, :func:`accept_at_cap` the verdict at the cap. What the gap bounds (objective, ``w``,
``theta``) is stated on :class:`DecompositionResult`. Two methods use them: the kernel rows on demand
(:mod:`tpm_models.learn.decomposition`) and ``w`` explicit (:mod:`tpm_models.solvers.linear_dual`, also the
``linear-decomposition`` backend of ``solve()``).
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from typing import cast

import numpy as np

from tpm_models.qp import QPMatrices
from tpm_models.solvers.dense import solve_matrices

log = logging.getLogger(__name__)

GAP_TOL = 1e-9
"""Default stopping tolerance of the decompositions' KKT gap, relative to :math:`\\nu\\kappa` (the scale of the
scores: :math:`|\\langle w,\\varphi(x)\\rangle| \\le 2\\nu\\kappa`): their objective within 1e-9 relative of the
dense path's (what a gap bounds: ``docs/notes/bench-estimators.md``, "What the tolerance means")."""

WORKING_SET = 64
"""Points per working set (the subproblem's size). Own sets up to this size are solved in one subproblem."""

PROXIMAL = 1e-8
"""Weight :math:`\\delta/\\kappa` of the proximal term :math:`\\tfrac\\delta2\\|\\lambda_B-\\lambda_B^{old}\\|^2`
added to every subproblem: the Gram blocks are singular (the linear kernel has rank at most :math:`n`, repeated points
make any kernel singular); with it DAQP solves a strictly convex QP in one active-set pass."""

SUBPROBLEM_SOLVER = "daqp"
"""The backend of the subproblems (:func:`solve_box_qp`): DAQP, a dense active set, solves the strictly convex
subproblem exactly in one pass; when it fails, the default QP backend does. Both with their settings of
``solve(model, solver)``."""

SUBPROBLEM_OPTIONS = {"eps_prox": 0.0}
"""What the subproblems change in :data:`SUBPROBLEM_SOLVER`'s settings: no proximal loop (the subproblem is made
strictly convex by :data:`PROXIMAL`)."""

BOUND_SNAP = 1e-12
"""A subproblem's multiplier within ``BOUND_SNAP * u`` of a bound is put on it: DAQP's proximal iterations
leave multipliers of active bounds ~1e-30 off them, which would count them as free in the working sets."""

OUTER_PER_POINT = 2.0
"""Cap on the decomposition's subproblems: ``1000 + OUTER_PER_POINT * m`` (then :func:`accept_at_cap`; typical
counts: ``docs/notes/bench-estimators.md``)."""

ACCEPT_GAP_TOL = 1e-7
"""The looser KKT gap (relative to :math:`\\nu\\kappa`, like :data:`GAP_TOL`) that a solve stopped by its cap must
meet to be returned, with a :class:`DecompositionWarning` and ``converged=False``; above it the cap raises
:class:`DecompositionError` (why and when: ``docs/notes/bench-estimators.md``, "When the cap is reached")."""

W_REL_TOL = 1e-3
"""A solve stopped by its cap is returned only when the gap's bound on :math:`w`, :math:`\\|w-w^*\\| \\le
\\sqrt{2\\,\\text{gap}\\,\\nu}`, is at most ``W_REL_TOL`` :math:`\\cdot\\max(\\|w\\|, w_0)`, with
:math:`w_0 = ` :data:`tpm_models.models.recovery.DEGENERATE_TOL` :math:`\\cdot\\,\\nu\\sqrt\\kappa` the norm
below which a plane counts as degenerate (``docs/notes/bench-estimators.md``, "When the cap is reached"). A solve
that reaches :data:`GAP_TOL` is returned as converged without this test."""


class DecompositionError(RuntimeError):
    """The decomposition did not reach :data:`ACCEPT_GAP_TOL` within its cap (or a subproblem was not solved)."""


class DecompositionWarning(UserWarning):
    """The decomposition stopped at its cap with a gap between :data:`GAP_TOL` and :data:`ACCEPT_GAP_TOL`:
    the solution is returned with the gap it reached (``DecompositionResult.gap``, ``converged=False``)."""


@dataclass(frozen=True)
class DecompositionResult:
    """The solution of the dual and how it was reached.

    ``lam``: :math:`\\lambda`; ``gradient``: :math:`G = K_{oo}\\lambda - a r` (the own points' scores
    :math:`\\langle w,\\varphi(x^i)\\rangle`); ``gap``: the final KKT violation
    :math:`\\max_{I_{low}}G - \\min_{I_{up}}G` (absolute); ``tol``: the absolute tolerance it met;
    ``iterations``: subproblems solved; ``rows``: kernel rows computed; ``seconds``: wall time;
    ``converged``: whether ``gap <= tol`` (False: stopped at the cap within :data:`ACCEPT_GAP_TOL`, with a
    :class:`DecompositionWarning`); ``nu`` and ``kappa``: :math:`\\nu` and
    :math:`\\kappa = \\max_i k(x^i,x^i)` over the own points, for :attr:`w_bound` and :attr:`theta_bound`."""

    lam: np.ndarray
    gradient: np.ndarray
    gap: float
    tol: float
    iterations: int
    rows: int
    seconds: float
    converged: bool = True
    nu: float = float("nan")
    kappa: float = float("nan")

    @property
    def w_bound(self) -> float:
        """What the gap certifies for :math:`w`: :math:`\\|w-w^*\\| \\le \\sqrt{2\\,\\text{gap}\\,\\nu}` for the
        optimum :math:`w^*` (:mod:`tpm_models.learn.decomposition`). Absolute: compare it with :math:`\\|w\\|`."""
        return float(np.sqrt(2.0 * self.gap * self.nu))

    @property
    def theta_bound(self) -> float:
        """What the gap certifies for :math:`\\theta` (errata 5's rule on this :math:`\\lambda`): within
        ``gap`` of a :math:`\\theta` optimal for this :math:`w`, so within
        ``gap`` :math:`+ \\sqrt{2\\,\\text{gap}\\,\\nu\\kappa}` of one optimal for :math:`w^*` (module
        docstring)."""
        return float(self.gap + np.sqrt(2.0 * self.gap * self.nu * self.kappa))

    def objective(self, r: np.ndarray, a: float) -> float:
        """The dual's objective as printed (a maximisation, without the constant of errata 1):
        :math:`-\\tfrac12\\lambda^\\top K_{oo}\\lambda + a r^\\top\\lambda = -\\tfrac12\\lambda^\\top(G - a r)
        + a r^\\top\\lambda`."""
        return float(-0.5 * self.lam @ (self.gradient + a * r) + a * (r @ self.lam))


def kkt_gap(lam: np.ndarray, G: np.ndarray, u: float) -> float:
    """The KKT violation of the dual (module docstring) at ``lam`` with gradient ``G`` and bound ``u``:
    :math:`\\max_{I_{low}} G - \\min_{I_{up}} G` (absolute, in the units of the scores); 0 when one set is empty."""
    up, low = lam < u, lam > 0.0
    if not up.any() or not low.any():
        return 0.0
    return float(G[low].max() - G[up].min())


def select_working_set(lam: np.ndarray, G: np.ndarray, u: float, q: int) -> np.ndarray:
    """The working set (sorted positions): ``q/2`` points of :math:`I_{up}` with the smallest :math:`G`, ``q/2`` of
    :math:`I_{low}` with the largest (a point in both may be picked once)."""
    half = max(1, q // 2)
    up = np.flatnonzero(lam < u)
    low = np.flatnonzero(lam > 0.0)
    if len(up) > half:
        up = up[np.argpartition(G[up], half - 1)[:half]]
    if len(low) > half:
        low = low[np.argpartition(-G[low], half - 1)[:half]]
    return np.union1d(up, low)


def solve_box_qp(P: np.ndarray, c: np.ndarray, total: float, upper: float) -> np.ndarray:
    """:math:`\\min \\tfrac12 x^\\top P x + c^\\top x` s.t. :math:`e^\\top x = ` ``total``,
    :math:`0\\le x\\le` ``upper`` (the subproblem, ``P`` positive definite), by :data:`SUBPROBLEM_SOLVER` with
    :data:`SUBPROBLEM_OPTIONS`, the default QP backend if that fails, both through
    :func:`tpm_models.solvers.dense.solve_matrices` (their settings, its checks); the result is clipped to the bounds
    and multipliers within :data:`BOUND_SNAP` of a bound put on it."""
    m, none = len(c), np.zeros(0)
    qp = QPMatrices([], P, c, 0.0, 1, np.ones((1, m)), np.array([total]), [], np.zeros((0, m)), none, none, [],
                    np.zeros(m), np.full(m, upper))
    first = solve_matrices(qp, SUBPROBLEM_SOLVER, raise_on_failure=False, options=SUBPROBLEM_OPTIONS)
    result = first if first.optimal else solve_matrices(qp, "default", raise_on_failure=False)
    if not result.optimal:
        raise DecompositionError(f"the subproblem of {m} points was solved neither by {first.solver} "
                                 f"({first.termination.value}: {first.message}) nor by {result.solver} "
                                 f"({result.termination.value}: {result.message})")
    return snap_to_bounds(cast(np.ndarray, result.values["x"]), upper)  # a QP in matrix form: its point an array


def solve_subproblem(K_BB: np.ndarray, G_B: np.ndarray, old: np.ndarray, u: float, delta: float) -> np.ndarray:
    """The new :math:`\\lambda_B` of a working set ``B`` with the other multipliers fixed, by :func:`solve_box_qp`:
    the Gram block ``K_BB``, the gradient ``G_B`` and the multipliers ``old`` of ``B``, the bound ``u`` and the
    proximal weight ``delta`` (:data:`PROXIMAL` :math:`\\cdot\\,\\kappa`), whose term makes the subproblem strictly
    convex and changes no fixed point."""
    P = K_BB + delta * np.eye(len(old))
    return solve_box_qp(P, G_B - P @ old, float(old.sum()), u)


def accept_at_cap(what: str, cap: int, gap: float, nu: float, tol_abs: float, accept_abs: float,
                  w_w: float | None, w_floor_sq: float, why: str) -> None:
    """The verdict on a solve (``what``, e.g. "the decomposition of 500 points") stopped at its ``cap`` of
    subproblems with the KKT gap ``gap`` above ``tol_abs``: :class:`DecompositionError` if ``gap`` exceeds
    ``accept_abs`` or, with :math:`\\langle w,w\\rangle` = ``w_w`` known, if the bound :math:`2\\,\\text{gap}\\,\\nu`
    on :math:`\\|w-w^*\\|^2` exceeds :data:`W_REL_TOL`:math:`^2 \\max(\\|w\\|^2,` ``w_floor_sq`` :math:`)` (``why``
    names the usual cause in the message); else a :class:`DecompositionWarning` (and a log line) that gives the
    gap and what it bounds, and the caller returns its result with ``converged=False``."""
    w_bound = float(np.sqrt(2.0 * gap * nu))
    w_ok = w_w is None or 2.0 * gap * nu <= W_REL_TOL**2 * max(w_w, w_floor_sq)
    if gap > accept_abs or not w_ok:
        w_norm = np.sqrt(max(w_w, 0.0)) if w_w is not None else np.nan
        raise DecompositionError(
            f"{what} stopped at its cap of {cap} subproblems with the KKT gap {gap:.3g} (accept_tol "
            f"{accept_abs:.3g}; it bounds |w - w*| by {w_bound:.3g}, |w| = {w_norm:.3g}). A tiny |w| (classes alike) "
            f"needs a gap out of reach; {why}. backend='dense' solves the same QP exactly")
    message = (f"{what} stopped at its cap of {cap} subproblems with the KKT gap {gap:.3g} > {tol_abs:.3g} (tol) "
               f"but <= {accept_abs:.3g} (accept_tol): the dual objective is within {gap * nu:.3g} of the optimum "
               f"and |w - w*| <= {w_bound:.3g}" + ("" if w_w is None else f" (<= {W_REL_TOL:g} |w|)")
               + "; raise max_outer for the tighter tolerance")
    log.warning(message)
    warnings.warn(message, DecompositionWarning, stacklevel=3)


def snap_to_bounds(x: np.ndarray, upper: float) -> np.ndarray:
    """``x`` clipped to :math:`[0,` ``upper`` :math:`]` (a new array), entries within :data:`BOUND_SNAP`
    ``* upper`` of a bound put on it: the multipliers a subproblem returns, before the working sets count them."""
    x = np.clip(x, 0.0, upper)
    x[x <= BOUND_SNAP * upper] = 0.0
    x[x >= upper * (1.0 - BOUND_SNAP)] = upper
    return x


def greedy_vertex(G: np.ndarray, nu: float, u: float) -> np.ndarray:
    """The vertex of :math:`\\{e^\\top\\lambda=\\nu,\\ 0\\le\\lambda\\le u\\}` that minimises :math:`G^\\top\\lambda`:
    :math:`u` on the :math:`\\lfloor\\nu/u\\rfloor` points of smallest ``G`` (stable order: ties by position),
    the rest of :math:`\\nu` on the next one, snapped to the bounds (:func:`snap_to_bounds`): the decompositions'
    start."""
    m = len(G)
    k = int(np.floor(nu / u * (1.0 + 1e-12)))
    order = np.argsort(G, kind="stable")
    lam = np.zeros(m)
    lam[order[:k]] = u
    if k < m:
        lam[order[k]] = nu - k * u
    return snap_to_bounds(lam, u)
