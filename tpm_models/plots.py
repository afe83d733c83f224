"""Figures: the paper's Figure 1, multiclass decision regions on Iris, and a chart of Table 3.

    tpm-models plot fig1-linear --out docs/figures/fig1-linear     # writes .png and .svg
    tpm-models plot all --out-dir docs/figures

=================  ===============================================================  ==========================
name               what                                                              drawn by
=================  ===============================================================  ==========================
``fig1-linear``    Figure 1(a): :math:`H_\\pm` of (2)-(7) and :math:`f_{\\rm lin}=0` (8)  :func:`fig1_linear`
``fig1-gaussian``  Figure 1(b): :math:`S_\\pm` of (12)-(13) and :math:`f_{\\rm nonlin}=0`  :func:`fig1_gaussian`
                   (14), Gaussian kernel, :math:`\\sigma=1.5`
``iris-regions``   regions of (18), (20) and the robust (28) on Iris petal features     :func:`iris_regions`
``table3``         Table 3: our mean :math:`\\pm` std test accuracy beside the paper's    :func:`table3_chart`
=================  ===============================================================  ==========================

Every figure function returns a :class:`matplotlib.figure.Figure` built without ``pyplot``
(no display, no global state); :func:`save` writes it as PNG (Agg) and SVG, reproducibly:
the SVG ids are salted with :data:`SVG_HASHSALT` and neither file records a date or the
matplotlib version. ``matplotlib`` (the ``plot`` extra) is imported inside the functions only, through
:func:`matplotlib_module`, so that the rest of the package does not load it, and a figure drawn without it
says what to install.

One concern over ~500 lines: the figures; they share the figure set-up, the colours and the reproducible
:func:`save`.
"""

from __future__ import annotations

import csv
import math
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tpm_models.data import load_dataset, min_max_scale
from tpm_models.experiments.table3 import ALL_CELLS, CELLS, PAPER_TABLE3
from tpm_models.files import replacing
from tpm_models.lazy import import_optional
from tpm_models.learn.estimators import TPMSVM, RobustTPMSVMOneVsAll, TPMSVMOneVsAll

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from tpm_models.learn.estimators import TPMSVM

# --------------------------------------------------------------------------- parameters

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

GRID = 300
"""Grid points per axis for contours and regions. Contour vertices are linearly interpolated on
the grid's edges, so a point of a drawn level set is within one grid step of the true one."""

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

TABLE3_CSV = "docs/results/table3.csv"
"""Default ``--csv`` of ``tpm-models plot table3``, written by ``tpm-models table3``."""
TABLE3_REQUIRED = ("dataset", "kernel", "mean_first", "std_first", "mean_last", "std_last", "paper_mean",
                   "paper_std")
"""Columns of :data:`tpm_models.experiments.table3.CSV_HEADER` that the chart needs; ``mean_cv``, ``std_cv`` are used
when present and filled."""
TABLE3_FLOOR = 30.0
"""Lower end of the accuracy axis of the Table 3 chart (%): the numbers lie in 40-100, and bars from 0
would hide differences of a few points. The caption says so."""

SVG_HASHSALT = "tpm-models"
"""``svg.hashsalt``: fixed, so that the SVG ids (hence the files) are the same every time."""
DPI = 150

CLASS_COLORS = ("#1f77b4", "#d62728", "#2ca02c")
REGION_COLORS = ("#c6dbef", "#fcbba1", "#c7e9c0")
MARKERS = ("o", "^", "s")


# --------------------------------------------------------------------------- helpers


def matplotlib_module(name: str = "matplotlib") -> types.ModuleType:
    """The matplotlib module ``name``; :class:`tpm_models.lazy.MissingExtraError` naming the ``plot`` extra when
    matplotlib is not installed."""
    return import_optional(name, "plot", "drawing a figure")


def _figure(width: float, height: float, ncols: int = 1, nrows: int = 1) -> tuple[Figure, np.ndarray]:
    """A pyplot-free figure (no display, no global figure manager) and its axes as an array."""
    Figure = matplotlib_module("matplotlib.figure").Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


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


def _grid(box: tuple[float, float, float, float], n: int = GRID) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xx, yy = np.meshgrid(np.linspace(box[0], box[1], n), np.linspace(box[2], box[3], n))
    return xx, yy, np.column_stack([xx.ravel(), yy.ravel()])


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
    params = {"kernel": "gaussian", "sigma": FIG1_SIGMA} if kernel == "gaussian" else {}
    return TPMSVM(nu=FIG1_NU, alpha=FIG1_ALPHA, **params).fit(X, y), X, y


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
    fig, axes = _figure(6.4, 5.6)
    ax = axes[0, 0]
    xx, yy, points = _grid(box, grid)
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
    fig, axes = _figure(6.4, 5.6)
    ax = axes[0, 0]
    xx, yy, points = _grid(box, grid)
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


# --------------------------------------------------------------------------- Iris regions


def iris_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, str]]:
    """Iris petal length and width, min-max scaled: ``(X, y, class names, feature names)``."""

    d = load_dataset("iris")
    X = min_max_scale(d.X[:, list(IRIS_FEATURES)])
    names = tuple(d.feature_names[j].removesuffix("_cm").replace("_", " ") for j in IRIS_FEATURES)
    return X, d.y, d.classes, names


def iris_models() -> list[tuple[str, object]]:
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


def near_boundary(model: object, X: np.ndarray, y: np.ndarray, per_class: int, apart: float) -> np.ndarray:
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
    xx, yy, points = _grid(box, grid)
    fig, axes = _figure(15.0, 5.6, ncols=3)
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


# --------------------------------------------------------------------------- Table 3


@dataclass(frozen=True)
class Series:
    """One series of the Table 3 chart: a label and the CSV columns of its mean and std."""

    key: str
    label: str
    mean: str
    std: str
    color: str


TABLE3_SERIES = (
    Series("paper", "paper (MATLAB + MOSEK)", "paper_mean", "paper_std", "#7f7f7f"),
    Series("first", "ours, paper's protocol, tie rule first", "mean_first", "std_first", "#1f77b4"),
    Series("last", "ours, paper's protocol, tie rule last", "mean_last", "std_last", "#9ecae1"),
    Series("cv", "ours, selection by cross-validation", "mean_cv", "std_cv", "#ff7f0e"),
)
"""The series of the chart, in the order of the bars; ``cv`` only when the CSV has ``mean_cv`` values."""


def _number(text: str | None) -> float | None:
    if text is None or text.strip() == "":
        return None
    return float(text)


def read_table3(path: str | Path) -> list[dict[str, str]]:
    """The rows of a ``table3.csv`` (:data:`tpm_models.experiments.table3.CSV_HEADER`), checked for the columns
    :data:`TABLE3_REQUIRED` and for numbers where numbers belong."""
    path = Path(path)
    try:
        with path.open(newline="") as fh:
            reader = csv.DictReader(fh)
            rows = list(reader)
            header = reader.fieldnames or []
    except OSError as exc:
        raise ValueError(
            f"cannot read the Table 3 CSV {str(path)!r}: {exc.strerror or exc}. Write it with "
            f"'tpm-models table3' or pass --csv PATH"
        ) from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path} is not a readable CSV file: {exc}") from None
    missing = [c for c in TABLE3_REQUIRED if c not in header]
    if missing:
        raise ValueError(f"{path} lacks the column(s) {missing} of a table3.csv "
                         "(tpm_models.experiments.table3.CSV_HEADER)")
    if not rows:
        raise ValueError(f"{path} has a header but no rows")
    for n, row in enumerate(rows, start=2):
        for s in TABLE3_SERIES:
            for col in (s.mean, s.std):
                try:
                    _number(row.get(col))
                except ValueError:
                    raise ValueError(f"{path}, line {n}: column {col} is not a number: {row.get(col)!r}") from None
    return rows


def _series_value(row: dict[str, str], s: Series) -> tuple[float, float] | None:
    """``(mean, std)`` of series ``s`` in ``row``; the paper's from PAPER_TABLE3 when the CSV leaves it empty."""
    mean, std = _number(row.get(s.mean)), _number(row.get(s.std))
    if s.key == "paper" and mean is None:

        mean, std, _ = PAPER_TABLE3.get((row["dataset"], row["kernel"]), (None, None, None))
    if mean is None:
        return None
    return mean, std if std is not None else 0.0


def table3_chart(csv_path: str | Path = TABLE3_CSV) -> Figure:
    """Table 3 as bars: for each data set (one panel) and kernel cell, mean test accuracy (%) over the
    runs, error bars :math:`\\pm` one standard deviation, ours beside the paper's.

    Series (:data:`TABLE3_SERIES`): the paper; ours under the paper's protocol (selection by training
    accuracy) with the tie rules ``first`` and ``last``; ours with cross-validated selection when the CSV
    has ``mean_cv`` / ``std_cv`` values. A cell the paper leaves "to be done" shows ours only. Every bar
    carries the gid ``"<dataset>.<kernel>.<series key>"``.
    """
    Patch = matplotlib_module("matplotlib.patches").Patch


    rows = read_table3(csv_path)
    top = max((v[0] + v[1] for r in rows for s in TABLE3_SERIES if (v := _series_value(r, s))), default=100.0)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    series = [s for s in TABLE3_SERIES if any(_series_value(r, s) for r in rows)]
    width = 0.8 / len(series)
    cells_max = max(sum(r["dataset"] == d for r in rows) for d in datasets)
    fig, axes = _figure(max(8.0, 1.25 * cells_max + 2.0), 3.6 * len(datasets), nrows=len(datasets))
    for ax, dataset in zip(axes[:, 0], datasets):
        own = [r for r in rows if r["dataset"] == dataset]
        for k, s in enumerate(series):
            xs, means, stds, gids = [], [], [], []
            for i, row in enumerate(own):
                value = _series_value(row, s)
                if value is not None:
                    xs.append(i + (k - (len(series) - 1) / 2) * width)
                    means.append(value[0])
                    stds.append(value[1])
                    gids.append(f"{dataset}.{row['kernel']}.{s.key}")
            bars = ax.bar(xs, means, width=width, yerr=stds, color=s.color, edgecolor="black", linewidth=0.4,
                          error_kw={"ecolor": "black", "elinewidth": 0.9, "capsize": 2.5}, label=s.label)
            for patch, gid in zip(bars.patches, gids):
                patch.set_gid(gid)
        for i, row in enumerate(own):
            if series[0].key == "paper" and _series_value(row, series[0]) is None:
                note = "paper: to be done" if (dataset, row["kernel"]) in PAPER_TABLE3 else "not in the paper"
                ax.text(i - (len(series) - 1) / 2 * width, TABLE3_FLOOR + 1.5, note, ha="center", va="bottom",
                        rotation=90, fontsize=7.5, color="#555555", zorder=5)
            if i and row["kernel"] not in CELLS and own[i - 1]["kernel"] in CELLS:  # the baselines follow
                ax.axvline(i - 0.5, color="#888888", linestyle=":", linewidth=1.0)
        labels = [ALL_CELLS[r["kernel"]].label if r["kernel"] in ALL_CELLS else r["kernel"] for r in own]
        ax.set_xticks(range(len(own)), labels, fontsize=8.5)
        ax.set_xlim(-0.6, len(own) - 0.4)
        ax.set_ylim(TABLE3_FLOOR, max(102.0, top + 2.0))
        ax.set_ylabel("test accuracy (%), mean ± std")
        runs = sorted({r.get("runs", "") for r in own} - {""})
        ax.set_title(f"{dataset.capitalize()}" + (f" ({', '.join(runs)} runs)" if runs else ""))
        ax.grid(axis="y", color="#dddddd", linewidth=0.6, zorder=0)
        ax.set_axisbelow(True)
    handles = [Patch(facecolor=s.color, edgecolor="black", linewidth=0.4, label=s.label) for s in series]
    fig.legend(handles=handles, loc="outside lower center", ncols=len(series), fontsize=8.5, frameon=False)
    fig.suptitle(f"Table 3: test accuracy (axis from {TABLE3_FLOOR:g}%)", fontsize=11)
    return fig


# --------------------------------------------------------------------------- saving and the CLI


FIGURES: dict[str, tuple[Callable[..., Figure], str]] = {
    "fig1-linear": (fig1_linear, "Figure 1(a): linear binary TPMSVM, H+, H- and f_lin = 0"),
    "fig1-gaussian": (fig1_gaussian, "Figure 1(b): Gaussian binary TPMSVM, S+, S- and f_nonlin = 0"),
    "iris-regions": (iris_regions, "Iris decision regions: linear, Gaussian, robust (28) with U_2(x^i)"),
    "table3": (table3_chart, "Table 3: our accuracies beside the paper's"),
}
"""Figure name (the CLI's NAME) -> (function, one-line description)."""


def figure(name: str, csv_path: str | Path = TABLE3_CSV) -> Figure:
    """The figure called ``name`` (:data:`FIGURES`); ``csv_path`` is read by ``table3`` only."""
    if name not in FIGURES:
        raise ValueError(f"unknown figure {name!r}; choose one of {', '.join(FIGURES)} or 'all'")
    draw = FIGURES[name][0]
    return draw(csv_path) if name == "table3" else draw()


def save(fig: Figure, out: str | Path) -> tuple[Path, Path]:
    """Write ``fig`` as ``out.png`` and ``out.svg`` (a ``.png``/``.svg`` suffix of ``out`` is dropped).

    Reproducible: fixed :data:`SVG_HASHSALT`, no date in the SVG, no software tag in the PNG.
    Returns the two paths.
    """
    matplotlib = matplotlib_module()

    out = Path(out)
    if out.suffix.lower() in (".png", ".svg"):
        out = out.with_suffix("")
    out.parent.mkdir(parents=True, exist_ok=True)
    png, svg = out.with_name(out.name + ".png"), out.with_name(out.name + ".svg")
    with matplotlib.rc_context({"svg.hashsalt": SVG_HASHSALT, "svg.fonttype": "path"}):
        with replacing(png, binary=True) as fh:
            fig.savefig(fh, format="png", dpi=DPI, metadata={"Software": None})
        with replacing(svg, binary=True) as fh:
            fig.savefig(fh, format="svg", metadata={"Date": None, "Creator": None})
    return png, svg

