"""The figure and the table of ``docs/bench-scale.md``, from the rows of ``docs/results/bench-scale.csv``.

    python -m benchmarks.plot_scale                 # writes docs/figures/bench-scale.svg and .png
    python -m benchmarks.plot_scale --markdown      # prints the page's table

The CSV holds one row per (model, points) of ``python -m benchmarks bench scale`` (our process and cvxpy + Clarabel's,
each the median of its runs): :data:`COLUMNS`. The figure: each model's wall time (the whole process, imports
included) beside cvxpy's, one panel per size. The SVG is committed beside the page (``docs/figures``), so that the
documentation builds without matplotlib; this script redraws it when the CSV changes.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks import ROOT
from tpm_models.plots import matplotlib_module, save

CSV = ROOT / "docs" / "results" / "bench-scale.csv"
"""The rows the page shows."""
FIGURE = ROOT / "docs" / "figures" / "bench-scale"
"""Where the figure is written (``.svg`` and ``.png``)."""
COLUMNS = ("model", "points", "solver", "build_s", "solve_s", "wall_s", "peak_mb", "cvxpy_build_s", "cvxpy_solve_s",
           "cvxpy_wall_s", "cvxpy_peak_mb", "wall_ratio", "peak_ratio", "objective", "abs_diff")
"""The CSV's header: ours (solver, seconds to build, to solve, of the whole process, peak MB), then cvxpy's, the
ratios ours / cvxpy's of the wall time (medians) and of the peak memory, our objective and its distance to cvxpy's."""
TITLES = ("model", "points", "solver", "build s", "solve s", "wall s", "peak MB", "cvxpy build s", "cvxpy solve s",
          "cvxpy wall s", "cvxpy peak MB", "wall ratio", "peak ratio", "objective", "abs. diff")
"""The table's column titles, in the order of :data:`COLUMNS`."""


def read_rows(path: str | Path = CSV) -> list[dict[str, str]]:
    """The CSV's rows as read (strings); ``ValueError`` when its header is not :data:`COLUMNS`."""
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: the header must be {','.join(COLUMNS)}")
        return list(reader)


def markdown(rows: Sequence[dict[str, str]]) -> str:
    """The rows as the page's Markdown table (the numbers as the CSV writes them; points with thousands commas)."""
    lines = ["| " + " | ".join(TITLES) + " |", "|" + "---|" * len(TITLES)]
    for row in rows:
        cells = [f"{int(row[c]):,}" if c == "points" else row[c] for c in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def figure(rows: Sequence[dict[str, str]]):
    """One panel per size: each model's wall seconds, ours beside cvxpy + Clarabel's (horizontal bars)."""
    Figure = matplotlib_module("matplotlib.figure").Figure
    sizes = sorted({int(r["points"]) for r in rows})
    fig = Figure(figsize=(4.0 * len(sizes), 4.6), layout="constrained")
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    for ax, m in zip(axes, sizes):
        these = [r for r in rows if int(r["points"]) == m]
        y = np.arange(len(these))
        ours = [float(r["wall_s"]) for r in these]
        theirs = [float(r["cvxpy_wall_s"]) for r in these]
        ax.barh(y - 0.2, ours, height=0.4, label="tpm-models (default solver)", color="#1f77b4")
        ax.barh(y + 0.2, theirs, height=0.4, label="cvxpy + Clarabel", color="#bbbbbb")
        ax.set_yticks(y, [r["model"] for r in these])
        ax.invert_yaxis()
        ax.set_xlabel("wall seconds (whole process)")
        ax.set_title(f"{m:,} points")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=2, fontsize="small")
    return fig


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.plot_scale", description=__doc__.splitlines()[0])
    p.add_argument("--csv", default=str(CSV), help="the rows (default docs/results/bench-scale.csv)")
    p.add_argument("--out", default=str(FIGURE), help="the figure, without suffix (default docs/figures/bench-scale)")
    p.add_argument("--markdown", action="store_true", help="print the page's table instead of drawing")
    args = p.parse_args(argv)
    rows = read_rows(args.csv)
    if args.markdown:
        print(markdown(rows))
        return 0
    for path in save(figure(rows), args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
