"""The figure and the table of ``docs/notes/bench-estimators.md``, from the rows of
``docs/notes/bench-estimators.csv``.

    python -m benchmarks.plot_estimators                 # writes docs/figures/bench-estimators.svg and .png
    python -m benchmarks.plot_estimators --markdown      # prints the page's table

The CSV holds one row per (kernel, points) of ``python -m benchmarks bench estimators --sizes ... --csv``
(:data:`benchmarks.bench_estimators.CSV_COLUMNS`). The figure: one panel per kernel, the fit seconds of
``TPMSVMOneVsAll``, ``SVC`` and ``LinearSVC`` (linear kernel only) against the number of points, both axes
logarithmic. The SVG is committed in ``docs/figures``, so that the documentation builds without matplotlib; this
script redraws it when the CSV changes.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.bench_estimators import CSV_COLUMNS, CSV_TITLES
from benchmarks.pages import Page, log_lines, number, plot_main
from tpm_models.plots import matplotlib_module

PAGE = Page("estimators", CSV_COLUMNS, CSV_TITLES)
"""The page, its CSV and its figure."""

LINES = (("TPMSVMOneVsAll", "tpmsvm_fit_s", "#1f77b4", "o"), ("SVC", "svc_fit_s", "#7f7f7f", "s"),
         ("LinearSVC", "linearsvc_fit_s", "#bbbbbb", "^"))
"""The lines of each panel: label, the CSV's column, colour, marker."""


def kernel_lines(rows: Sequence[Mapping[str, str]], kernel: str) -> list[tuple[str, list, dict[str, str]]]:
    """The lines of the panel of ``kernel``: for each of :data:`LINES`, its label, its points ``(m, fit seconds)``
    from the rows of that kernel that have a number in its column, and its style (:func:`benchmarks.pages.log_lines`
    draws them)."""
    these = [r for r in rows if r["kernel"] == kernel]
    return [(label, [(int(r["m"]), number(r[column])) for r in these if r[column]],
             {"color": colour, "marker": marker}) for label, column, colour, marker in LINES]


def figure(rows: Sequence[Mapping[str, str]]) -> Any:
    """One panel per kernel: fit seconds against points for each of :data:`LINES` that has a number there."""
    Figure = matplotlib_module("matplotlib.figure").Figure
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    fig = Figure(figsize=(4.5 * len(kernels), 3.8), layout="constrained")
    axes = fig.subplots(1, len(kernels), squeeze=False)[0]
    for ax, kernel in zip(axes, kernels):
        log_lines(ax, kernel_lines(rows, kernel), f"{kernel} kernel", "fit seconds")
        ax.legend(fontsize="small")
    return fig


def main(argv: Sequence[str] | None = None) -> int:
    return plot_main(PAGE, figure, argv)


if __name__ == "__main__":
    sys.exit(main())
