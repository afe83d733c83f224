"""The figure and the table of ``docs/notes/bench-backends.md``, from the rows of ``docs/notes/bench-backends.csv``.

    python -m benchmarks.plot_backends                 # writes docs/figures/bench-backends.svg and .png
    python -m benchmarks.plot_backends --markdown      # prints the page's table

The CSV holds one row per (model, points, backend) of ``python -m benchmarks bench backends --csv``
(:data:`benchmarks.bench_backends.CSV_COLUMNS`). The figure: one panel per size, for each model the seconds of
``solve()`` of every backend that reached an optimum (log scale; a backend that did not has no bar), the certified
default's bar outlined in black. The SVG is committed beside the page's figures (``docs/figures``), so that the
documentation builds without matplotlib; this script redraws it when the CSV changes.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchmarks.bench_backends import CSV_COLUMNS, CSV_TITLES
from benchmarks.pages import Page, number, plot_main
from tpm_models.plots import matplotlib_module

PAGE = Page("backends", CSV_COLUMNS, CSV_TITLES)
"""The page, its CSV and its figure."""


def drawn(rows: Sequence[Mapping[str, str]], m: int) -> list[Mapping[str, str]]:
    """The rows of the panel of ``m`` points: those that reached an optimum and have their seconds."""
    return [r for r in rows if int(r["m"]) == m and r["status"] == "optimal" and r["solve_s"]]


def figure(rows: Sequence[Mapping[str, str]]) -> Any:
    """One panel per size: a horizontal bar per (model, backend) that reached an optimum, its length the seconds of
    ``solve()``, grouped by model; the default's bar outlined in black."""
    Figure = matplotlib_module("matplotlib.figure").Figure
    sizes = sorted({int(r["m"]) for r in rows})
    backends = list(dict.fromkeys(r["backend"] for m in sizes for r in drawn(rows, m)))
    colours = dict(zip(backends, matplotlib_module("matplotlib").colormaps["tab10"].colors))
    tallest = max(len(drawn(rows, m)) for m in sizes)
    fig = Figure(figsize=(5.0 * len(sizes), 1.2 + 0.22 * tallest), layout="constrained")
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    for ax, m in zip(axes, sizes):
        these = drawn(rows, m)
        y = np.arange(len(these))
        for i, r in zip(y, these):
            ax.barh(i, number(r["solve_s"]), height=0.8, color=colours[r["backend"]],
                    edgecolor="black" if r["default"] == "yes" else "none", linewidth=1.2)
        ax.set_yticks(y, [f"{r['model']} {r['backend']}" for r in these], fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("solve() seconds (log scale)")
        ax.set_title(f"{m:,} points")
    Patch = matplotlib_module("matplotlib.patches").Patch
    handles = [Patch(facecolor=colours[b], label=b) for b in backends]
    handles.append(Patch(facecolor="white", edgecolor="black", label="the certified default"))
    fig.legend(handles=handles, loc="outside upper center", ncols=min(len(handles), 6), fontsize="small")
    return fig


def main(argv: Sequence[str] | None = None) -> int:
    return plot_main(PAGE, figure, argv)


if __name__ == "__main__":
    sys.exit(main())
