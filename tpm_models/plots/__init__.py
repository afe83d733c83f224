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
the SVG ids are salted with :data:`~tpm_models.plots.drawing.SVG_HASHSALT` and neither file records a date or the
matplotlib version. ``matplotlib`` (the ``plot`` extra) is imported inside the functions only, through
:func:`matplotlib_module`, so that the rest of the package does not load it, and a figure drawn without it
says what to install.

Modules: :mod:`.drawing` (what the figures share: the figure set-up, the colours, :func:`save`), :mod:`.fig1`,
:mod:`.iris`, :mod:`.table3` (one each); this package lists the figures (:data:`FIGURES`, :func:`figure`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tpm_models.plots.drawing import matplotlib_module, save
from tpm_models.plots.fig1 import fig1_gaussian, fig1_linear, fit_fig1, line_points, toy_data
from tpm_models.plots.iris import iris_data, iris_models, iris_regions, near_boundary
from tpm_models.plots.table3 import TABLE3_CSV, read_table3, table3_chart

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "FIGURES", "fig1_gaussian", "fig1_linear", "figure", "fit_fig1", "iris_data", "iris_models",
    "iris_regions", "line_points", "matplotlib_module", "near_boundary", "read_table3", "save", "table3_chart",
    "toy_data",
]


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
