"""The benchmark pages' tables and figures from their CSV files: one :class:`Page` per page of ``docs/notes``.

A benchmark run with ``--csv`` writes its rows (:func:`write_rows`, the numbers as text in the formats the page shows)
and prints :func:`measured_line`; ``python -m benchmarks.plot_<name>`` draws the page's figure from the CSV and, with
``--markdown``, prints the page's table (:func:`markdown`). ``tests/benchmarks/test_pages.py`` checks that each page's
table is its CSV's rows.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import os
import platform
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import ROOT
from tpm_models.files import write_text

NOTES = ROOT / "docs" / "notes"
"""The folder of the benchmark pages and their CSV files."""
FIGURES = ROOT / "docs" / "figures"
"""The folder of the pages' figures (``.svg`` shown, ``.png`` beside it)."""


@dataclass(frozen=True)
class Page:
    """A benchmark page: its name (``bench-<name>.md``, ``bench-<name>.csv``, ``figures/bench-<name>.svg``), the CSV's
    header (``columns``) and the table's column titles in the same order (``titles``)."""

    name: str
    columns: tuple[str, ...]
    titles: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.columns) != len(self.titles):
            raise ValueError(f"page {self.name}: {len(self.columns)} columns but {len(self.titles)} titles")

    @property
    def markdown_path(self) -> Path:
        return NOTES / f"bench-{self.name}.md"

    @property
    def csv_path(self) -> Path:
        return NOTES / f"bench-{self.name}.csv"

    @property
    def figure_path(self) -> Path:
        """Without suffix: :func:`tpm_models.plots.save` writes ``.svg`` and ``.png``."""
        return FIGURES / f"bench-{self.name}"


def write_rows(path: str | Path, columns: Sequence[str], rows: Iterable[Mapping[str, object]]) -> Path:
    """The rows as CSV with the header ``columns`` (a missing value is an empty cell); the file written."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n", extrasaction="raise")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: "" if row.get(c) is None else row[c] for c in columns})
    return write_text(path, out.getvalue())


def read_rows(path: str | Path, columns: Sequence[str]) -> list[dict[str, str]]:
    """The CSV's rows as read (strings); ``ValueError`` when its header is not ``columns``."""
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != tuple(columns):
            raise ValueError(f"{path}: the header must be {','.join(columns)}")
        return list(reader)


def markdown(page: Page, rows: Sequence[Mapping[str, str]]) -> str:
    """The rows as the page's Markdown table: the cells as the CSV writes them, ``m`` with thousands commas, an empty
    cell ``n/a`` (an empty ``note`` stays empty)."""
    lines = ["| " + " | ".join(page.titles) + " |", "|" + "---|" * len(page.titles)]
    for row in rows:
        cells = [f"{int(row[c]):,}" if c == "m" and row[c] else (row[c] or ("" if c == "note" else "n/a"))
                 for c in page.columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def number(text: str) -> float:
    """A cell as a number: ``nan`` when empty (nothing drawn)."""
    return float(text) if text else float("nan")


def log_lines(ax: Any, lines: Iterable[tuple[str, Sequence[tuple[float, float]], Mapping[str, Any]]], title: str,
              ylabel: str, xlabel: str = "points m") -> list[str]:
    """Draw on ``ax`` each of ``lines`` (its label, its points ``(m, seconds)``, the keyword arguments of ``ax.plot``:
    colour, marker, ...), both axes logarithmic; a point whose seconds are ``nan`` (an empty cell) is left out, and a
    line with no point left is not drawn. Returns the labels drawn, in order."""
    drawn = []
    for label, points, style in lines:
        kept = [(x, y) for x, y in points if y == y]
        if kept:
            ax.plot(*zip(*kept), label=label, **style)
            drawn.append(label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return drawn


def fmt(value: float | None, spec: str = ".2f") -> str:
    """``value`` in ``spec``; ``""`` (an empty cell) for ``None``."""
    return "" if value is None else format(value, spec)


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what ``platform`` says."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return cpu


def measured_line(command: str) -> str:
    """What a page states beside its table: the date (UTC), the machine's load (``os.getloadavg()``), the CPU and
    the command."""
    one, five, fifteen = os.getloadavg()
    cpu = cpu_name()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"measured {now}, load average {one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count()} "
            f"cores ({cpu}), Python {platform.python_version()}: {command}")


def plot_main(page: Page, figure: Callable[[Sequence[Mapping[str, str]]], Any],
              argv: Sequence[str] | None = None) -> int:
    """The command line of ``python -m benchmarks.plot_<name>``: draw the page's figure from its CSV, or with
    ``--markdown`` print its table."""
    p = argparse.ArgumentParser(prog=f"python -m benchmarks.plot_{page.name}",
                                description=f"The figure and the table of docs/notes/bench-{page.name}.md from "
                                f"docs/notes/bench-{page.name}.csv.")
    p.add_argument("--csv", default=str(page.csv_path), help=f"the rows (default docs/notes/bench-{page.name}.csv)")
    p.add_argument("--out", default=str(page.figure_path),
                   help=f"the figure, without suffix (default docs/figures/bench-{page.name})")
    p.add_argument("--markdown", action="store_true", help="print the page's table instead of drawing")
    args = p.parse_args(sys.argv[1:] if argv is None else list(argv))
    rows = read_rows(args.csv, page.columns)
    from tpm_models.plots import save  # the plot extra (matplotlib), only to draw

    if args.markdown:
        print(markdown(page, rows))
        return 0
    for path in save(figure(rows), args.out):
        print(path)
    return 0
