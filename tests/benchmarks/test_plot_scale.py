"""``docs/bench-scale.md`` shows today's numbers: its table is the CSV's rows, and its figure is drawn from them by
``python -m benchmarks.plot_scale``."""

import math

import pytest
from conftest import ROOT

from benchmarks import plot_scale

PAGE = ROOT / "docs" / "bench-scale.md"


def page_rows() -> list[list[str]]:
    """The rows of the table of the section "Today's numbers" (the page's other sections have tables of their own)."""
    section = PAGE.read_text().split("\n## Today's numbers\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| (")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines]


def test_the_page_table_is_the_csv():
    rows = plot_scale.read_rows()
    shown = page_rows()
    assert len(shown) == len(rows) > 0
    for cells, row in zip(shown, rows):
        assert cells[0] == row["model"] and cells[2] == row["solver"]
        assert int(cells[1].replace(",", "")) == int(row["points"])
        for cell, column in zip(cells[3:], plot_scale.COLUMNS[3:]):
            assert math.isclose(float(cell), float(row[column]), rel_tol=0, abs_tol=0), (row["model"], column)


def test_a_wrong_header_is_refused(tmp_path):
    bad = tmp_path / "rows.csv"
    bad.write_text("model,points\n(15),10\n")
    with pytest.raises(ValueError, match="the header must be"):
        plot_scale.read_rows(bad)


def test_the_figure_is_drawn_from_the_csv(tmp_path):
    """One panel per size; its bars' lengths are the CSV's wall seconds, ours then cvxpy's, in the CSV's order."""
    pytest.importorskip("matplotlib")
    rows = plot_scale.read_rows()
    fig = plot_scale.figure(rows)
    sizes = sorted({int(r["points"]) for r in rows})
    assert [ax.get_title() for ax in fig.axes] == [f"{m:,} points" for m in sizes]
    for ax, m in zip(fig.axes, sizes):
        these = [r for r in rows if int(r["points"]) == m]
        widths = [bar.get_width() for bar in ax.patches]
        assert widths == [float(r["wall_s"]) for r in these] + [float(r["cvxpy_wall_s"]) for r in these]
    assert plot_scale.main(["--out", str(tmp_path / "scale")]) == 0
    assert (tmp_path / "scale.svg").read_text().startswith("<?xml")
    assert (ROOT / "docs" / "figures" / "bench-scale.svg").is_file() and "bench-scale.svg" in PAGE.read_text()
