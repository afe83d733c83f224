"""Adversarial searches in input space against the robust kernel model (23K) and decision (20).

(23K) (:mod:`tpm_models.models.robust_kernel`) is a *safe approximation*: its radii :math:`\\rho_i` bound the move of
:math:`\\varphi` over :math:`\\mathcal U_p(x^i)`. These functions measure that claim on a solved model, by sampling
and by local search in input space, for :math:`p\\in\\{1,2,\\infty\\}`:

* :func:`worst_case_search`: projected gradient for the least (largest) :math:`\\langle w_c,\\varphi(x+\\delta)\\rangle`
  over the set; a value attained at a point of the set, so a bound on the true extreme from the inside;
* :func:`safety_report`: sampled and searched perturbations of every training point against the model's bound
  (:class:`SafetyReport`; the tie of :func:`tpm_models.checks.robust.check_robust_kernel`);
* :func:`decision_attack_search`: perturbations that move a point to another class under decision (20) (used by
  :mod:`tpm_models.experiments.robust` to count the points an attack moves; a lower bound on the exact worst case).

They are checks, not model: nothing here builds or changes a model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tpm_models.kernels import Kernel
from tpm_models.models.norms import check_p, check_radii, worst_case_delta
from tpm_models.models.robust_kernel import RobustKernelHyperplane, feature_radius, l2_radius, value_and_gradient
from tpm_models.validation import check_features, check_labels


def project(delta: np.ndarray, p: float, eps: np.ndarray | float) -> np.ndarray:
    """Euclidean projection of each row of ``delta`` (last axis) onto :math:`\\{\\|\\delta\\|_p\\le\\varepsilon\\}`,
    :math:`p\\in\\{1,2,\\infty\\}`; ``eps`` broadcasts against ``delta[..., 0]``."""
    p = check_p(p)
    eps = np.asarray(eps, dtype=float)[..., None]
    if math.isinf(p):
        return np.clip(delta, -eps, eps)
    if p == 2.0:
        norm = np.linalg.norm(delta, axis=-1, keepdims=True)
        return delta * np.minimum(1.0, eps / np.maximum(norm, 1e-300))
    if p == 1.0:  # soft thresholding at the level that puts the row on the sphere (Duchi et al. 2008)
        a = np.abs(delta)
        inside = a.sum(axis=-1, keepdims=True) <= eps
        u = -np.sort(-a, axis=-1)
        k = np.arange(1, a.shape[-1] + 1)
        level = (np.cumsum(u, axis=-1) - eps) / k
        count = (u > level).sum(axis=-1, keepdims=True)
        tau = np.take_along_axis(level, count - 1, axis=-1)
        return np.where(inside, delta, np.sign(delta) * np.maximum(a - np.maximum(tau, 0.0), 0.0))
    raise ValueError(f"the projection is implemented for p in {{1, 2, inf}}, got p={p:g}")


def perturbation_samples(n: int, p: float, eps: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` perturbations with :math:`\\|\\delta\\|_p\\le\\varepsilon_i` per radius, shape
    ``(len(eps), count, n)``: half on the sphere :math:`\\|\\delta\\|_p=\\varepsilon_i` (directions
    ``normal * exponential``, as :func:`tpm_models.checks.robust.check_oracle`), half inside (radius
    scaled by :math:`U^{1/n}`); for :math:`p = \\infty` a quarter are vertices of the box."""
    p = check_p(p)
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    z = rng.normal(size=(len(eps), count, n)) * rng.exponential(size=(len(eps), count, 1))
    z /= np.maximum(np.linalg.norm(z, ord=p, axis=-1, keepdims=True), 1e-300)
    scale = np.where(np.arange(count) < count // 2, 1.0, rng.uniform(size=count) ** (1.0 / n))
    delta = z * scale[None, :, None] * eps[:, None, None]
    if math.isinf(p):
        vertices = count // 4
        delta[:, -vertices:] = rng.choice([-1.0, 1.0], size=(len(eps), vertices, n)) * eps[:, None, None]
    return delta


def projected_ascent(D: np.ndarray, f: np.ndarray, G: np.ndarray, step: np.ndarray,
                     evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], p: float,
                     radius: np.ndarray | float, iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """Monotone projected gradient ascent from the perturbations ``D`` (last axis: coordinates; one search per
    entry of ``f``) with values ``f`` and normalised ascent directions ``G``: each step goes ``step`` along ``G``,
    projects onto :math:`\\|\\delta\\|_p\\le` ``radius`` (:func:`project`) and is kept only if ``evaluate`` (``D ->
    (f, G)``) says the value rose; a kept step grows by 1.5 (at most twice the first), a refused one halves. Stops
    after ``iterations`` steps or when every step is below :data:`SEARCH_STEP_TOL` of its first. Returns the best
    perturbations and their values."""
    cap, finest = 2.0 * step, SEARCH_STEP_TOL * step
    for _ in range(iterations):
        trial = project(D + step[..., None] * G, p, radius)
        f_trial, G_trial = evaluate(trial)
        better = f_trial > f
        D = np.where(better[..., None], trial, D)
        f = np.where(better, f_trial, f)
        G = np.where(better[..., None], G_trial, G)
        step = np.where(better, np.minimum(1.5 * step, cap), 0.5 * step)
        if np.all(step < finest):
            break
    return D, f


SEARCH_STARTS = 6
"""Starts of :func:`worst_case_search` per point: the linearised worst case
(:func:`tpm_models.models.norms.worst_case_delta` of the gradient at :math:`x^i`), :math:`\\delta = 0`, and
random points of the sphere."""

SEARCH_ITERATIONS = 100
"""Most projected-gradient steps of :func:`worst_case_search` per start."""

SEARCH_STEP_TOL = 1e-6
""":func:`worst_case_search` stops when every start's step is below this fraction of the radius (steps grow by
1.5 when they improve the value and halve when not, so the point no longer moves)."""


def worst_case_search(
    plane: RobustKernelHyperplane, X: np.ndarray, p: float, eps: float | np.ndarray, sense: int = -1,
    starts: int = SEARCH_STARTS, iterations: int = SEARCH_ITERATIONS, seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """A local search for :math:`\\min` (``sense=-1``) or :math:`\\max` (``sense=+1``) of
    :math:`\\langle w_c,\\varphi(x+\\delta)\\rangle` over :math:`\\|\\delta\\|_p\\le\\varepsilon_i` for each row
    :math:`x` of ``X``; :math:`p \\in \\{1, 2, \\infty\\}`.

    Projected gradient with the exact Euclidean projection (:func:`project`) and a step per start that
    grows on success and halves on failure (monotone), from :data:`SEARCH_STARTS` starts; returns the best
    value per row and its :math:`\\delta`. A lower (upper) bound on the true minimum (maximum): the value is
    attained at a point of the set.
    """
    if sense not in (-1, 1):
        raise ValueError(f"sense must be -1 (minimise) or +1 (maximise), got {sense}")
    X = np.atleast_2d(np.asarray(X, dtype=float))
    N, n = X.shape
    radii = check_radii(eps, N)
    rng = np.random.default_rng(seed)
    grad0 = sense * plane.gradient(X)
    first = np.array([worst_case_delta(g, p, r) for g, r in zip(grad0, radii)])
    rest = perturbation_samples(n, p, radii, max(2 * (starts - 2), 2), rng)[:, : starts - 2]
    D = np.concatenate([first[:, None], np.zeros((N, 1, n)), rest], axis=1)[:, :starts]
    S = D.shape[1]
    R = np.broadcast_to(radii[:, None], (N, S))
    centre = np.broadcast_to(X[:, None, :], D.shape)

    def evaluate(D):
        f, g = value_and_gradient(plane.kernel, plane.points, plane.beta, (centre + D).reshape(-1, n))
        g = sense * g.reshape(N, S, n)
        return sense * f.reshape(N, S), g / np.maximum(np.linalg.norm(g, axis=-1, keepdims=True), 1e-300)

    f, G = evaluate(D)
    D, f = projected_ascent(D, f, G, l2_radius(R, p, n).copy(), evaluate, p, R, iterations)
    best = np.argmax(f, axis=1)
    return sense * f[np.arange(N), best], D[np.arange(N), best]


@dataclass(frozen=True)
class SafetyReport:
    """What :func:`safety_report` measured on one solved (23K).

    Attributes
    ----------
    sampled_violation : float
        :math:`\\max` over :math:`i\\in\\mathcal X_c` and the sampled :math:`\\delta` of
        :math:`-(\\langle w_c,\\varphi(x^i+\\delta)\\rangle+\\theta_c+\\xi_{c,i})`, clipped at 0: how far a robust row
        of the solver's point is violated at a perturbed point (exact kernel).
    search_violation : float
        The same at the local search's worst :math:`\\delta` (:func:`worst_case_search`).
    sampled_ratio : float
        :math:`\\max_i` of the largest sampled change of :math:`\\langle w_c,\\varphi(x)\\rangle` over
        :math:`\\mathcal U_p(x^i)` divided by the model's bound :math:`\\rho_i\\|w_c\\|` (decrease for
        :math:`\\mathcal X_c`, the rows; increase for :math:`\\mathcal X_{-c}`, the objective terms).
        Safe: :math:`\\le 1`.
    search_ratios : ndarray of shape (m,)
        Per point, the same ratio for the local search's worst case: how much of the bound the exact
        worst case uses (1 = the bound is attained, smaller = conservative).
    samples : int
        Perturbations evaluated in all.
    """

    sampled_violation: float
    search_violation: float
    sampled_ratio: float
    search_ratios: np.ndarray
    samples: int


def safety_report(
    X: np.ndarray, y: np.ndarray, c: object, p: float, eps: float | np.ndarray, plane: RobustKernelHyperplane,
    theta: float, xi: np.ndarray, samples: int = 400, starts: int = SEARCH_STARTS, seed: int = 0,
) -> SafetyReport:
    """Sampled and searched perturbations of every training point against a solved (23K) (:class:`SafetyReport`).

    ``theta`` and ``xi`` (one per point of class ``c``, in row order) are the solver's; ``plane`` gives
    :math:`\\beta` and :math:`\\|w_c\\|`. The bound compared with is :math:`\\rho_i\\|w_c\\| \\le \\rho_i t_c`, the
    stronger statement.
    """
    X = check_features(X)
    y = check_labels(X, y)
    radii = check_radii(eps, len(X))
    bound = feature_radius(plane.kernel, X, radii, p) * plane.norm_w
    rng = np.random.default_rng(seed)
    centre = plane.w_phi(X)
    sampled, searched = np.zeros(len(X)), np.zeros(len(X))
    violation = {}
    # the rows (own points) may only lose, the objective terms (other points) only gain, rho_i |w|
    for rows, sense in ((y == c, -1), (y != c, 1)):
        delta = perturbation_samples(X.shape[1], p, radii[rows], samples, rng)
        moved = (X[rows][:, None, :] + delta).reshape(-1, X.shape[1])
        values = plane.w_phi(moved).reshape(len(delta), samples)
        found, _ = worst_case_search(plane, X[rows], p, radii[rows], sense, starts, seed=seed)
        for out, change in ((sampled, (sense * (values - centre[rows][:, None])).max(axis=1)),
                            (searched, sense * (found - centre[rows]))):
            out[rows] = np.divide(change, bound[rows], out=np.zeros(len(change)), where=bound[rows] > 0)
        if sense == -1:
            base = theta + np.asarray(xi, dtype=float)
            violation["sampled"] = float(max(0.0, -(values.min(axis=1) + base).min()))
            violation["search"] = float(max(0.0, -(found + base).min()))
    return SafetyReport(violation["sampled"], violation["search"], float(sampled.max()), searched, samples * len(X))


ATTACK_STARTS = 4
"""Starts per (point, other class) of :func:`decision_attack_search`: the linearised attack, and random points
of the sphere."""

ATTACK_ITERATIONS = 60
"""Projected-gradient steps of :func:`decision_attack_search` (with :data:`SEARCH_STEP_TOL` as stopping rule)."""


def decision_attack_search(
    kernel: Kernel, points: np.ndarray, beta: np.ndarray, theta: np.ndarray, degenerate: np.ndarray,
    X: np.ndarray, y: np.ndarray, p: float, eps: float, starts: int = ATTACK_STARTS,
    iterations: int = ATTACK_ITERATIONS, seed: int = 0,
) -> np.ndarray:
    """Rows of ``X`` that a perturbation :math:`\\|\\delta\\|_p\\le\\varepsilon` found by a local search moves away
    from class ``y`` under decision (20) (``True`` = moved; a row already wrong counts as moved);
    :math:`p \\in \\{1, 2, \\infty\\}`.

    ``beta[:, c]`` expands :math:`w_c = \\sum_j` ``beta[j, c]`` :math:`\\varphi(x^j)` over ``points``; a degenerate
    hyperplane is at distance :math:`+\\infty` and never the nearest, ties go to the first class (as
    :func:`tpm_models.experiments.robust.predict`). For each point and each other live class :math:`c'`,
    projected gradient ascent on :math:`d_y(x+\\delta) - d_{c'}(x+\\delta)` (distances of (20)) from
    :data:`ATTACK_STARTS` starts; every point tried is a perturbation of the set, and the point counts as moved if
    any of them is classified otherwise. A search, not a proof: the count of points it moves is a lower bound
    on what the exact worst case moves.
    """
    X = np.atleast_2d(np.asarray(X, dtype=float))
    y = np.asarray(y)
    B = np.asarray(beta, dtype=float)
    norms = np.sqrt(np.maximum(np.einsum("mc,mk,kc->c", B, kernel.gram(points, points), B), 0.0))
    live = ~np.asarray(degenerate, dtype=bool)
    scale = np.where(live, norms, 1.0)

    def distances(Z):
        values, grads = value_and_gradient(kernel, points, B, Z)
        score = values + theta
        d = np.where(live, np.abs(score) / scale, np.inf)
        return d, np.sign(score)[:, :, None] * grads / scale[:, None]

    d0, _ = distances(X)
    moved = np.argmin(d0, axis=1) != y
    pairs = [(i, t) for i in np.flatnonzero(~moved) for t in np.flatnonzero(live) if t != y[i]]
    if not pairs or eps == 0:
        return moved
    rows, targets = np.array(pairs).T
    P, n = len(rows), X.shape[1]
    rng = np.random.default_rng(seed)
    own = y[rows]

    def objective(D):
        """:math:`d_y - d_{c'}`, its normalised gradient, and whether the point is classified otherwise."""
        d, g = distances((X[rows][:, None, :] + D).reshape(-1, n))
        d, g = d.reshape(P, D.shape[1], -1), g.reshape(P, D.shape[1], *g.shape[1:])
        mine, theirs = own[:, None, None], targets[:, None, None]
        f = np.take_along_axis(d, mine, 2)[..., 0] - np.take_along_axis(d, theirs, 2)[..., 0]
        gf = np.take_along_axis(g, mine[..., None], 2)[:, :, 0] - np.take_along_axis(g, theirs[..., None], 2)[:, :, 0]
        gf /= np.maximum(np.linalg.norm(gf, axis=-1, keepdims=True), 1e-300)
        return f, gf, np.argmin(d, axis=2) != own[:, None]

    _, g0, _ = objective(np.zeros((P, 1, n)))
    first = np.array([worst_case_delta(g, p, eps) for g in g0[:, 0]])
    D = np.concatenate([first[:, None], perturbation_samples(n, p, np.full(P, eps), 2 * starts, rng)[:, : starts - 1]],
                       axis=1)
    f, G, flipped = objective(D)
    hit = flipped.any(axis=1)

    def tried(D):
        """:func:`objective` at ``D``, noting every point a trial moves to another class."""
        f, G, flipped = objective(D)
        np.logical_or(hit, flipped.any(axis=1), out=hit)
        return f, G

    projected_ascent(D, f, G, np.full(f.shape, float(l2_radius(eps, p, n))), tried, p, eps, iterations)
    moved[rows[hit]] = True
    return moved




