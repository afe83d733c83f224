"""Figure 1 of the paper: the binary TPMSVM on a two-dimensional toy set, linear (:func:`fig1_linear`) and with
the Gaussian kernel (:func:`fig1_gaussian`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tpm_models.learn.estimators import TPMSVM
from tpm_models.plots.drawing import CLASS_COLORS, GRID, REGION_COLORS, grid_points, matplotlib_module, new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FIG1_NU = 0.5
"""Figure 1: :math:`\\nu_+ = \\nu_- = 0.5` (the paper's caption)."""
FIG1_ALPHA = 1.0
"""Figure 1: :math:`\\alpha_+ = \\alpha_- = 1` (the paper's caption)."""
FIG1_SIGMA = 1.5
"""Figure 1(b): the Gaussian kernel's :math:`\\sigma` (the paper's caption)."""

TOY_SEED = 6
"""numpy seed of the toy data of Figure 1 (:func:`toy_data`)."""
TOY_POINTS = 41
"""Points per class of the toy data. Odd on purpose: with :math:`\\nu m_\\pm/\\alpha = 20.5` not an
integer the optimal :math:`\\theta_\\pm` is unique (errata 5), so the drawn :math:`H_\\pm` are *the*
solution, not one point of an interval."""
TOY_MEANS = ((1.0, 1.0), (3.5, 0.0))
"""Means of the positive and the negative blob."""
TOY_COVS = (((1.0, 0.5), (0.5, 1.0)), ((1.0, -0.3), (-0.3, 0.6)))
"""Covariances of the positive and the negative blob (they overlap a little, so some slacks are > 0)."""


def toy_data(seed: int = TOY_SEED, m: int = TOY_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """The two-dimensional toy set of Figure 1: two Gaussian blobs of ``m`` points each.

    Returns ``(X, y)``: ``X`` of shape ``(2m, 2)``, the positive blob first; ``y`` is +1 / -1.
    """
    rng = np.random.default_rng(seed)
    blobs = [rng.multivariate_normal(mean, cov, m) for mean, cov in zip(TOY_MEANS, TOY_COVS)]
    return np.vstack(blobs), np.concatenate([np.ones(m), -np.ones(m)])


def _box(X: np.ndarray, pad: float) -> tuple[float, float, float, float]:
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    return float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])


def line_points(w: np.ndarray, theta: float, box: tuple[float, float, float, float]) -> np.ndarray:
    """Two points of the line :math:`w^\\top x + \\theta = 0` spanning ``box = (x0, x1, y0, y1)``.

    The free coordinate is the one along which :math:`|w_j|` is the smaller, so the other is
    :math:`-(\\theta + w_j x_j)/w_k` with :math:`|w_k|` the larger (no division by a tiny number).
    """
    w = np.asarray(w, dtype=float)
    if w.shape != (2,) or not np.any(w):
        raise ValueError(f"a line in the plane needs w of shape (2,) and w != 0, got {w}")
    x0, x1, y0, y1 = box
    if abs(w[1]) >= abs(w[0]):
        xs = np.array([x0, x1])
        return np.column_stack([xs, -(theta + w[0] * xs) / w[1]])
    ys = np.array([y0, y1])
    return np.column_stack([-(theta + w[1] * ys) / w[0], ys])


def _binary_points(ax: Axes, X: np.ndarray, y: np.ndarray) -> None:
    for label, color, marker, name in ((1, CLASS_COLORS[0], "o", "$\\mathcal{X}_+$ (y = +1)"),
                                       (-1, CLASS_COLORS[1], "^", "$\\mathcal{X}_-$ (y = -1)")):
        pts = X[y == label]
        ax.scatter(pts[:, 0], pts[:, 1], s=28, c=color, marker=marker, edgecolors="black", linewidths=0.5,
                   label=name, zorder=3)


def _shade_sign(ax: Axes, xx: np.ndarray, yy: np.ndarray, f: np.ndarray) -> None:
    """Light background: where the decision (8)/(14) is positive (blue) or negative (red)."""
    ax.contourf(xx, yy, f.reshape(xx.shape), levels=[-np.inf, 0.0, np.inf], colors=[REGION_COLORS[1],
                REGION_COLORS[0]], alpha=0.45, zorder=0)


def _finish_binary(fig: Figure, ax: Axes, box: tuple[float, float, float, float], title: str, handles: list) -> None:
    """Limits, equal aspect, labels, and the legend below the axes (it hides no point)."""
    ax.set_xlim(box[0], box[1])
    ax.set_ylim(box[2], box[3])
    ax.set_aspect("equal")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.set_title(title, fontsize=11)
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=8.5, frameon=False)


def fit_fig1(kernel: str = "linear") -> tuple[TPMSVM, np.ndarray, np.ndarray]:
    """The binary TPMSVM of Figure 1 on :func:`toy_data`: duals (4)/(5) (``"linear"``) or (12)/(13)
    (``"gaussian"``, :data:`FIG1_SIGMA`), :math:`\\nu_\\pm` = :data:`FIG1_NU`, :math:`\\alpha_\\pm` =
    :data:`FIG1_ALPHA`. Returns ``(estimator, X, y)``."""

    if kernel not in ("linear", "gaussian"):
        raise ValueError(f"Figure 1 has a linear and a Gaussian panel: kernel 'linear' or 'gaussian', not {kernel!r}")
    X, y = toy_data()
    sigma = FIG1_SIGMA if kernel == "gaussian" else None
    return TPMSVM(nu=FIG1_NU, alpha=FIG1_ALPHA, kernel=kernel, sigma=sigma).fit(X, y), X, y


def fig1_linear(grid: int = GRID) -> Figure:
    """Figure 1(a): the linear binary TPMSVM (2)-(3), solved by its duals (4)-(5).

    Draws :math:`H_+: w_+^\\top x + \\theta_+ = 0` and :math:`H_-: w_-^\\top x + \\theta_- = 0` from the
    recovery (6)-(7), and the classifier :math:`f_{\\rm lin} = 0` of (8),

    .. math::
        \\frac{w_+^\\top x+\\theta_+}{\\|w_+\\|_2} + \\frac{w_-^\\top x+\\theta_-}{\\|w_-\\|_2} = 0,

    itself a line, with normal :math:`w_+/\\|w_+\\| + w_-/\\|w_-\\|`. The lines carry the gids
    ``"H_plus"``, ``"H_minus"`` and ``"f_zero"`` (the ids of their groups in the SVG). ``grid`` points per
    axis shade the sign of (8).
    """
    est, X, y = fit_fig1("linear")
    (w_p, w_m), (t_p, t_m) = est.coef_, est.intercept_
    n_p, n_m = np.linalg.norm(w_p), np.linalg.norm(w_m)
    box = _box(X, 0.6)
    fig, axes = new_figure(6.4, 5.6)
    ax = axes[0, 0]
    xx, yy, points = grid_points(box, grid)
    _shade_sign(ax, xx, yy, est.decision_function(points))
    lines = (
        ("H_plus", w_p, t_p, CLASS_COLORS[0], "-", "$H_+$: $w_+^\\top x+\\theta_+=0$"),
        ("H_minus", w_m, t_m, CLASS_COLORS[1], "-", "$H_-$: $w_-^\\top x+\\theta_-=0$"),
        ("f_zero", w_p / n_p + w_m / n_m, t_p / n_p + t_m / n_m, "black", "--", "$f_{\\rm lin}(x)=0$ (8)"),
    )
    for gid, w, theta, color, style, label in lines:
        pts = line_points(w, theta, box)
        (line,) = ax.plot(pts[:, 0], pts[:, 1], color=color, linestyle=style, linewidth=2, label=label, zorder=2)
        line.set_gid(gid)
    _binary_points(ax, X, y)
    _finish_binary(fig, ax, box, f"(a) Linear binary TPMSVM, $\\nu_\\pm={FIG1_NU:g}$, $\\alpha_\\pm={FIG1_ALPHA:g}$",
                   ax.get_legend_handles_labels()[0])
    return fig


def fig1_gaussian(grid: int = GRID) -> Figure:
    """Figure 1(b): the Gaussian-kernel binary TPMSVM (12)-(13), :math:`\\sigma = 1.5`.

    Draws the surfaces :math:`S_\\pm: \\langle w_\\pm,\\varphi(x)\\rangle + \\theta_\\pm = 0` with
    :math:`\\langle w_+,\\varphi(x)\\rangle = \\lambda_+^\\top K(X_+,x) - \\frac{\\nu_+}{m_-}e_-^\\top K(X_-,x)`
    (and its mirror for :math:`S_-`), and :math:`f_{\\rm nonlin} = 0` of (14), each as the zero contour
    on a ``grid`` x ``grid`` grid spanning the axes. The contour sets carry the gids ``"S_plus"``,
    ``"S_minus"``, ``"f_zero"``.
    """
    Line2D = matplotlib_module("matplotlib.lines").Line2D

    est, X, y = fit_fig1("gaussian")
    plus, minus = est.planes_
    box = _box(X, 0.6)
    fig, axes = new_figure(6.4, 5.6)
    ax = axes[0, 0]
    xx, yy, points = grid_points(box, grid)
    s_plus, s_minus = plus.score(points), minus.score(points)
    f = s_plus / plus.norm_w + s_minus / minus.norm_w  # (14) before the sign
    _shade_sign(ax, xx, yy, f)
    handles = []
    for gid, values, color, style, label in (
        ("S_plus", s_plus, CLASS_COLORS[0], "solid", "$S_+$: $\\langle w_+,\\varphi(x)\\rangle+\\theta_+=0$"),
        ("S_minus", s_minus, CLASS_COLORS[1], "solid", "$S_-$: $\\langle w_-,\\varphi(x)\\rangle+\\theta_-=0$"),
        ("f_zero", f, "black", "dashed", "$f_{\\rm nonlin}(x)=0$ (14)"),
    ):
        cs = ax.contour(xx, yy, values.reshape(xx.shape), levels=[0.0], colors=[color], linestyles=[style],
                        linewidths=2, zorder=2)
        cs.set_gid(gid)
        handles.append(Line2D([], [], color=color, linestyle=style, linewidth=2, label=label))
    _binary_points(ax, X, y)
    _finish_binary(fig, ax, box, f"(b) Gaussian binary TPMSVM, $\\sigma={FIG1_SIGMA:g}$, $\\nu_\\pm={FIG1_NU:g}$, "
                   f"$\\alpha_\\pm={FIG1_ALPHA:g}$", [*handles, *ax.get_legend_handles_labels()[0]])
    return fig
