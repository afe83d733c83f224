"""The figure and the table of ``docs/notes/bench-builders.md``, from the rows of ``docs/notes/bench-builders.csv``.

    python -m benchmarks.plot_builders                 # writes docs/figures/bench-builders.svg and .png
    python -m benchmarks.plot_builders --markdown      # prints the page's table

The CSV holds one row per (model, points) of ``python -m benchmarks bench builders --csv``
(:data:`benchmarks.bench_builders.CSV_COLUMNS`). The figure: one panel per size, for each model the seconds to build
it and write its ``.lp`` and its ``.nl`` with the library, beside linopy's build and ``.lp`` (stacked bars: build,
then the write; a model a format or linopy cannot hold has no bar). The SVG is committed in ``docs/figures``, so that
the documentation builds without matplotlib; this script redraws it when the CSV changes.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchmarks.bench_builders import CSV_COLUMNS, CSV_TITLES
from benchmarks.pages import Page, number, plot_main
from tpm_models.plots import matplotlib_module

PAGE = Page("builders", CSV_COLUMNS, CSV_TITLES)
"""The page, its CSV and its figure."""

BARS = (("Pyomo build + .lp", "pyomo_build_s", "pyomo_lp_s", "#1f77b4"),
        ("Pyomo build + .nl", "pyomo_build_s", "pyomo_nl_s", "#6baed6"),
        ("linopy build + .lp", "linopy_build_s", "linopy_lp_s", "#bbbbbb"))
"""The bars of each model: label, the build's column, the write's column, colour."""


def build_and_write_s(row: Mapping[str, str], build: str, write: str) -> float:
    """The seconds to build and write one model: the sum of the row's ``build`` and ``write`` cells (two columns of a
    bar of :data:`BARS`), ``nan`` when either is empty (that side cannot hold the model, or failed)."""
    return number(row[build]) + number(row[write]) if row[build] and row[write] else float("nan")


def figure(rows: Sequence[Mapping[str, str]]) -> Any:
    """One panel per size: for each model and each of :data:`BARS`, the build seconds and the write seconds after
    them (one bar in two shades: the build dark, the write light)."""
    Figure = matplotlib_module("matplotlib.figure").Figure
    sizes = sorted({int(r["m"]) for r in rows})
    fig = Figure(figsize=(4.5 * len(sizes), 3.8), layout="constrained")
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    height = 0.8 / len(BARS)
    for ax, m in zip(axes, sizes):
        these = [r for r in rows if int(r["m"]) == m]
        y = np.arange(len(these))
        for k, (label, build, write, colour) in enumerate(BARS):
            at = y - 0.4 + height * (k + 0.5)
            built = [number(r[build]) if r[write] else float("nan") for r in these]
            written = [number(r[write]) for r in these]
            ax.barh(at, built, height=height, color=colour, edgecolor="black", linewidth=0.4, label=label)
            ax.barh(at, written, left=np.nan_to_num(built), height=height, color=colour, alpha=0.45,
                    edgecolor="black", linewidth=0.4)
        ax.set_yticks(y, [r["model"] for r in these])
        ax.invert_yaxis()
        ax.set_xlabel("seconds: build (dark), then write (light)")
        ax.set_title(f"{m:,} points")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=len(BARS), fontsize="small")
    return fig


def main(argv: Sequence[str] | None = None) -> int:
    return plot_main(PAGE, figure, argv)


if __name__ == "__main__":
    sys.exit(main())
