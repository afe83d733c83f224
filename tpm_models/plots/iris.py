"""Multiclass decision regions on Iris (petal features) of the linear, Gaussian and robust one-vs-all models
(:func:`iris_regions`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tpm_models.data import load_dataset, min_max_scale
from tpm_models.learn.base import OneVsAllBase
from tpm_models.learn.estimators import RobustTPMSVMOneVsAll, TPMSVMOneVsAll
from tpm_models.plots.drawing import (
    CLASS_COLORS,
    GRID,
    MARKERS,
    REGION_COLORS,
    grid_points,
    matplotlib_module,
    new_figure,
)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

IRIS_FEATURES = (2, 3)
"""Petal length and petal width (columns of ``load_dataset("iris").X``)."""
IRIS_NU = 0.8
""":math:`\\nu_c = \\nu` of the three Iris models. At :math:`\\varepsilon = 0.05` the robust (28) keeps a
nonzero :math:`w` for the middle class (versicolor) only for :math:`\\nu/\\alpha \\ge 0.7`: below,
:math:`\\|w_c\\|` shrinks to 0 (``DegenerateHyperplaneWarning``) and versicolor is never predicted."""
IRIS_ALPHA = 1.0
IRIS_SIGMA = 0.25
"""Gaussian :math:`\\sigma` of the Iris regions (in min-max scaled units, :math:`2^{-2}` of the paper's grid)."""
IRIS_P = 2.0
"""Norm of the uncertainty set (21) of the robust panel: :math:`p = 2`, balls, drawn as circles."""
IRIS_EPS = 0.05
"""Radius :math:`\\varepsilon_i` of (21) for every point of the robust panel (min-max scaled units)."""
IRIS_CIRCLES = 2
"""Uncertainty sets drawn per class: around the training points nearest to a region boundary
(:func:`near_boundary`), at least :math:`3\\varepsilon` apart so that the circles do not overlap."""


def iris_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, str]]:
    """Iris petal length and width, min-max scaled: ``(X, y, class names, feature names)``."""

    d = load_dataset("iris")
    X = min_max_scale(d.X[:, list(IRIS_FEATURES)])
    first, second = (d.feature_names[j].removesuffix("_cm").replace("_", " ") for j in IRIS_FEATURES)
    return X, d.y, d.classes, (first, second)


def iris_models() -> list[tuple[str, OneVsAllBase]]:
    """The three fitted classifiers of ``iris-regions``, with their panel titles."""

    X, y, _, _ = iris_data()
    p = "inf" if math.isinf(IRIS_P) else IRIS_P
    return [
        (f"linear (16)/(17), decision (18)\n$\\nu/\\alpha={IRIS_NU:g}$",
         TPMSVMOneVsAll(nu=IRIS_NU, alpha=IRIS_ALPHA).fit(X, y)),
        (f"Gaussian (19), decision (20)\n$\\sigma={IRIS_SIGMA:g}$, $\\nu/\\alpha={IRIS_NU:g}$",
         TPMSVMOneVsAll(nu=IRIS_NU, alpha=IRIS_ALPHA, kernel="gaussian", sigma=IRIS_SIGMA).fit(X, y)),
        (f"robust SOCP (28), decision (18)\n$p={IRIS_P:g}$, $\\varepsilon={IRIS_EPS:g}$, $\\nu/\\alpha={IRIS_NU:g}$",
         RobustTPMSVMOneVsAll(nu=IRIS_NU, alpha=IRIS_ALPHA, p=p, eps=IRIS_EPS).fit(X, y)),
    ]


def near_boundary(model: OneVsAllBase, X: np.ndarray, y: np.ndarray, per_class: int, apart: float) -> np.ndarray:
    """Indices of training points to draw :math:`\\mathcal U_p(x^i)` around: for each class, the
    ``per_class`` points with the smallest gap between their two nearest hyperplanes (18) -- the points
    nearest to a region boundary -- taken greedily so that no two chosen points are closer than ``apart``."""
    d = np.sort(model.distances(X), axis=1)
    gap = d[:, 1] - d[:, 0]
    chosen: list[int] = []
    for c in np.unique(y):
        taken = 0
        for i in np.flatnonzero(y == c)[np.argsort(gap[y == c], kind="stable")]:
            if taken == per_class:
                break
            if all(np.linalg.norm(X[i] - X[j]) >= apart for j in chosen):
                chosen.append(int(i))
                taken += 1
    return np.array(chosen, dtype=int)


def iris_regions(grid: int = GRID) -> Figure:
    """Decision regions on Iris (petal length, petal width; min-max scaled) of three one-vs-all models.

    Left: linear (16)/(17) with decision (18), :math:`\\arg\\min_c |w_c^\\top x+\\theta_c|/\\|w_c\\|_2`.
    Middle: Gaussian (19) with decision (20), :math:`\\sigma` = :data:`IRIS_SIGMA`. Right: the robust
    SOCP (28), :math:`p=2`, :math:`\\varepsilon_i` = :data:`IRIS_EPS`, with decision (18) and the
    uncertainty sets :math:`\\mathcal U_2(x^i)` (21) of :data:`IRIS_CIRCLES` points per class drawn as circles
    (gid ``"U-<i>"``, :math:`i` the row of :math:`x^i`). The regions of panel ``k`` carry the gid ``"regions-<k>"``.
    """
    Line2D = matplotlib_module("matplotlib.lines").Line2D
    patches = matplotlib_module("matplotlib.patches")
    Circle, Patch = patches.Circle, patches.Patch

    X, y, classes, names = iris_data()
    box = (-0.06, 1.06, -0.06, 1.06)
    xx, yy, points = grid_points(box, grid)
    fig, axes = new_figure(15.0, 5.6, ncols=3)
    for k, (ax, (title, model)) in enumerate(zip(axes[0], iris_models())):
        labels = model.predict(points).reshape(xx.shape)
        regions = ax.contourf(xx, yy, labels, levels=np.arange(len(classes) + 1) - 0.5,
                              colors=REGION_COLORS[:len(classes)], zorder=0)
        regions.set_gid(f"regions-{k}")
        for c in range(len(classes)):
            pts = X[y == c]
            ax.scatter(pts[:, 0], pts[:, 1], s=22, c=CLASS_COLORS[c], marker=MARKERS[c], edgecolors="black",
                       linewidths=0.4, zorder=3)
        handles = [Line2D([], [], linestyle="none", marker=MARKERS[c], markerfacecolor=CLASS_COLORS[c],
                          markeredgecolor="black", markeredgewidth=0.4, label=str(name))
                   for c, name in enumerate(classes)]
        handles += [Patch(facecolor=REGION_COLORS[c], label=f"predicted {name}") for c, name in enumerate(classes)]
        if hasattr(model, "eps"):
            for i in near_boundary(model, X, y, IRIS_CIRCLES, 3 * IRIS_EPS):
                circle = Circle(tuple(X[i]), IRIS_EPS, fill=False, edgecolor="black", linewidth=1.2, zorder=4)
                circle.set_gid(f"U-{i}")
                ax.add_patch(circle)
            handles.append(Line2D([], [], linestyle="none", marker="o", markersize=10, markerfacecolor="none",
                                  markeredgecolor="black",
                                  label=f"$\\mathcal{{U}}_2(x^i)$, radius $\\varepsilon={IRIS_EPS:g}$"))
        accuracy = float(np.mean(model.predict(X) == y))
        ax.set_title(f"{title}\ntraining accuracy {100 * accuracy:.1f}%", fontsize=10)
        ax.set_xlim(box[0], box[1])
        ax.set_ylim(box[2], box[3])
        ax.set_aspect("equal")
        ax.set_xlabel(f"{names[0]} (min-max scaled)")
        ax.set_ylabel(f"{names[1]} (min-max scaled)")
        ax.legend(handles=handles, loc="upper left", fontsize=7.5, framealpha=0.9)
    return fig
