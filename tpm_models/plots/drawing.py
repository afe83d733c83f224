"""What the figures share: matplotlib loaded when drawing (:func:`matplotlib_module`), a pyplot-free figure
(:func:`new_figure`), the grid of contours and regions (:func:`grid_points`), the colours, and the reproducible
:func:`save`."""

from __future__ import annotations

import types
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tpm_models.files import replacing
from tpm_models.lazy import import_optional

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

GRID = 300
"""Grid points per axis for contours and regions. Contour vertices are linearly interpolated on
the grid's edges, so a point of a drawn level set is within one grid step of the true one."""

SVG_HASHSALT = "tpm-models"
"""``svg.hashsalt``: fixed, so that the SVG ids (hence the files) are the same every time."""
DPI = 150

CLASS_COLORS = ("#1f77b4", "#d62728", "#2ca02c")
REGION_COLORS = ("#c6dbef", "#fcbba1", "#c7e9c0")
MARKERS = ("o", "^", "s")


def matplotlib_module(name: str = "matplotlib") -> types.ModuleType:
    """The matplotlib module ``name``; :class:`tpm_models.lazy.MissingExtraError` naming the ``plot`` extra when
    matplotlib is not installed."""
    return import_optional(name, "plot", "drawing a figure")


def new_figure(width: float, height: float, ncols: int = 1, nrows: int = 1) -> tuple[Figure, np.ndarray]:
    """A pyplot-free figure (no display, no global figure manager) and its axes as an array."""
    Figure = matplotlib_module("matplotlib.figure").Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def grid_points(box: tuple[float, float, float, float], n: int = GRID) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An ``n`` x ``n`` grid spanning ``box = (x0, x1, y0, y1)``: ``(xx, yy, points)``, ``points`` its rows."""
    xx, yy = np.meshgrid(np.linspace(box[0], box[1], n), np.linspace(box[2], box[3], n))
    return xx, yy, np.column_stack([xx.ravel(), yy.ravel()])


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

