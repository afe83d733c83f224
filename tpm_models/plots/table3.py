"""Table 3 as a bar chart, ours beside the paper's (:func:`table3_chart`), read from a ``table3.csv``
(:func:`read_table3`)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tpm_models.experiments.table3 import ALL_CELLS, CELLS, PAPER_TABLE3
from tpm_models.plots.drawing import matplotlib_module, new_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

TABLE3_CSV = "docs/results/table3.csv"
"""Default ``--csv`` of ``tpm-models plot table3``, written by ``tpm-models table3``."""
TABLE3_REQUIRED = ("dataset", "kernel", "mean_first", "std_first", "mean_last", "std_last", "paper_mean",
                   "paper_std")
"""Columns of :data:`tpm_models.experiments.table3.CSV_HEADER` that the chart needs; ``mean_cv``, ``std_cv`` are used
when present and filled."""
TABLE3_FLOOR = 30.0
"""Lower end of the accuracy axis of the Table 3 chart (%): the numbers lie in 40-100, and bars from 0
would hide differences of a few points. The caption says so."""


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
    fig, axes = new_figure(max(8.0, 1.25 * cells_max + 2.0), 3.6 * len(datasets), nrows=len(datasets))
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
