"""``docs/notes/benchmarks.md`` shows today's numbers: each of its tables is its CSV's rows (the structure exactly,
the numbers as the CSV writes them or, where the page computes one, within the rounding it is shown at), it states
the runs' commands and loads, and its figures are drawn from the CSVs by ``python -m benchmarks.plot_all`` and named
on the page.

Truths: the CSVs as the ``csv`` module reads them, and the ratios, sums and verdicts recomputed here from their
cells."""

import csv
import math
import re

import pytest
from conftest import ROOT

from benchmarks import plot_all

PAGE = ROOT / "docs" / "notes" / "benchmarks.md"
SCALE = ROOT / "docs" / "results" / "bench-scale.csv"
NOTES = ROOT / "docs" / "notes"
SHOWN_TO_TWO_DECIMALS = 0.005 + 1e-12
"""A number the page computes from the cells and shows to two decimals is within half a unit of its last place of
the exact value (plus the rounding of the float division)."""


def csv_rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def page_table(titles) -> list[list[str]]:
    """The cells of the page's table whose header row is ``titles``."""
    lines = PAGE.read_text().splitlines()
    start = lines.index("| " + " | ".join(titles) + " |")  # ValueError: no such table on the page
    assert lines[start + 1] == "|" + "---|" * len(titles)
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == len(titles), line
        rows.append(cells)
    return rows


def same(shown: str, written: str) -> bool:
    """The CSV's cell as the page shows it: ``n/a`` for an empty cell, a number equal (thousands commas dropped)."""
    if not written:
        return shown == "n/a"
    try:
        return math.isclose(float(shown.replace(",", "")), float(written), rel_tol=0, abs_tol=0)
    except ValueError:
        return shown == written


def near(shown: str, value: float | None) -> bool:
    """A number the page computed, shown to two decimals; ``n/a`` when there is none."""
    if value is None:
        return shown == "n/a"
    return abs(float(shown) - value) <= SHOWN_TO_TWO_DECIMALS


def quotient(row, ours: str, peer: str) -> float | None:
    return float(row[ours]) / float(row[peer]) if row[ours] and row[peer] else None


def test_the_scale_table_is_its_csv():
    rows, shown = csv_rows(SCALE), page_table(plot_all.SCALE_TITLES)
    assert len(shown) == len(rows) > 0
    for cells, r in zip(shown, rows):
        model, m, solver, ours, peer, ratio, target = cells
        assert (model, solver) == (r["model"], r["solver"]) and int(m.replace(",", "")) == int(r["points"])
        assert same(ours, r["wall_s"]) and same(peer, r["cvxpy_wall_s"]) and same(ratio, r["wall_ratio"]), r
        big = 100_000 <= int(r["points"]) <= 1_000_000  # the target names 10^5 and 10^6
        assert target == (("yes" if float(r["wall_ratio"]) <= 0.5 else "no") if big else "-"), r


def test_the_classifier_tables_are_their_csvs():
    rows, shown = csv_rows(NOTES / "bench-estimators.csv"), page_table(plot_all.ESTIMATORS_TITLES)
    assert len(shown) == len(rows) > 0
    for cells, r in zip(shown, rows):
        kernel, m, ours, svc, ratio, linear, to_linear, backend = cells
        assert (kernel, backend) == (r["kernel"], r["tpmsvm_backend"]) and int(m.replace(",", "")) == int(r["m"])
        assert same(ours, r["tpmsvm_fit_s"]) and same(svc, r["svc_fit_s"]) and same(ratio, r["ratio"]), r
        assert same(linear, r["linearsvc_fit_s"]) and near(to_linear, quotient(r, "tpmsvm_fit_s", "linearsvc_fit_s"))
    rows, shown = csv_rows(NOTES / "bench-estimators-linear.csv"), page_table(plot_all.LINEAR_TITLES)
    assert len(shown) == len(rows) > 0
    for cells, r in zip(shown, rows):
        m, repeats, ours, linear, to_linear = cells
        assert int(m.replace(",", "")) == int(r["m"]) and repeats == r["repeats"]
        assert same(ours, r["ours_fit_s"]) and same(linear, r["linearsvc_fit_s"])
        assert near(to_linear, quotient(r, "ours_fit_s", "linearsvc_fit_s"))


def test_the_iris_and_wine_table_is_its_csv():
    """Each data set's seconds shown as milliseconds (within the rounding to two decimals), the CSV's ratios as it
    writes them, and the verdict on the larger ratio."""
    rows, shown = csv_rows(NOTES / "bench-estimators-iris-wine.csv"), page_table(plot_all.IRIS_WINE_TITLES)
    assert len(shown) == len(rows) == 2
    for cells, r in zip(shown, rows):
        data, size, processes, ours, svc, first, ours_warm, svc_warm, warm, target = cells
        assert (data, size, processes) == (r["dataset"], f"{r['m']} x {r['n']}", r["processes"])
        for cell, column in ((ours, "tpmsvm_first_s"), (svc, "svc_first_s"), (ours_warm, "tpmsvm_warm_s"),
                             (svc_warm, "svc_warm_s")):
            assert near(cell, float(r[column]) * 1e3), (column, r)
        assert same(first, r["first_ratio"]) and same(warm, r["warm_ratio"]), r
        assert target == ("yes" if max(float(r["first_ratio"]), float(r["warm_ratio"])) <= 1.5 else "no"), r


def test_the_builders_table_is_its_csv():
    rows, shown = csv_rows(NOTES / "bench-builders.csv"), page_table(plot_all.BUILDERS_TITLES)
    assert len(shown) == len(rows) > 0
    for cells, r in zip(shown, rows):
        model, m, ours, peer, ratio, target = cells
        assert model == r["model"] and int(m.replace(",", "")) == int(r["m"])
        assert near(ours, float(r["pyomo_build_s"]) + float(r["pyomo_lp_s"]) if r["pyomo_lp_s"] else None), r
        assert near(peer, float(r["linopy_build_s"]) + float(r["linopy_lp_s"]) if r["linopy_lp_s"] else None), r
        assert same(ratio, r["build_lp_ratio"])
        at_target = int(r["m"]) == 100_000 and r["build_lp_ratio"]
        assert target == (("yes" if float(r["build_lp_ratio"]) <= 2 else "no") if at_target else "-"), r


def test_the_targets_are_judged_on_the_csvs():
    """Each target's worst ratio and verdict, recomputed from the CSVs' rows it covers."""
    scale, est = csv_rows(SCALE), csv_rows(NOTES / "bench-estimators.csv")
    linear, builders = csv_rows(NOTES / "bench-estimators-linear.csv"), csv_rows(NOTES / "bench-builders.csv")
    iris_wine = csv_rows(NOTES / "bench-estimators-iris-wine.csv")
    worst = {
        "scale": (max(float(r["wall_ratio"]) for r in scale if 100_000 <= int(r["points"]) <= 1_000_000), 0.5),
        "linear": (max([quotient(r, "ours_fit_s", "linearsvc_fit_s") for r in linear]
                       + [quotient(r, "tpmsvm_fit_s", "linearsvc_fit_s") for r in est
                          if r["kernel"] == "linear" and int(r["m"]) >= 10_000]), 1.0),
        "gaussian": (max(float(r["ratio"]) for r in est if r["kernel"] == "gaussian" and int(r["m"]) >= 10_000), 0.5),
        "iris-wine": (max(float(r[ratio]) for r in iris_wine for ratio in ("first_ratio", "warm_ratio")), 1.5),
        "first": (max(float(r["ratio"]) for r in est if int(r["m"]) == 1_000), 1.0),
        "builders": (max(float(r["build_lp_ratio"]) for r in builders
                         if int(r["m"]) == 100_000 and r["build_lp_ratio"]), 2.0),
    }
    shown = page_table(plot_all.TARGETS_TITLES)
    assert len(shown) == 6
    judged = dict(zip(("scale", "linear", "gaussian", "iris-wine", "first", "builders"), shown))
    assert judged["iris-wine"][1] == f"{len(iris_wine)} (m = 150, 178)"
    for name, (value, bound) in worst.items():
        cells = judged[name]
        assert near(cells[2].split()[0], value), (name, cells)
        assert cells[4] == ("yes" if value <= bound else "no"), (name, cells)
        assert (cells[3] == "none") == (value <= bound), (name, cells)


def test_the_page_states_each_runs_command_and_load_and_is_up_to_date():
    """The commands that wrote the CSVs and the one that redraws, a ``measured ...`` line with its load for each CSV
    a bench wrote, and every generated block as ``plot_all --page`` writes it now (the page was not edited by hand
    nor left behind a CSV)."""
    text = PAGE.read_text()
    for name in ("bench-estimators.csv", "bench-estimators-linear.csv", "bench-builders.csv",
                 "bench-estimators-iris-wine.csv"):
        assert re.search(r"`measured 20\d\d-\d\d-\d\d \d\d:\d\d UTC, load average [\d.]+ [\d.]+ [\d.]+ .*?: "
                         rf"python -m benchmarks bench [^`]*--csv docs/notes/{re.escape(name)}", text), name
        assert f"]({name})" in text
    for command in plot_all.SCALE_COMMANDS:
        assert f"\n{command}\n" in text
    assert "](../results/bench-scale.csv)" in text and "load average 1.1-1.4" in text
    assert "python -m benchmarks.plot_all\n" in text or "python -m benchmarks.plot_all " in text
    for name, body in plot_all.blocks(plot_all.read_all()).items():
        assert plot_all.marked(name, body) in text, name


def test_a_block_without_its_markers_is_refused():
    with pytest.raises(ValueError, match="no block scale"):
        plot_all.rewrite("# a page\n", {"scale": "| x |"})
    page = "a\n<!-- plot_all: scale -->\nold\n<!-- /plot_all: scale -->\nb\n"
    assert plot_all.rewrite(page, {"scale": "new"}) == page.replace("old", "new")


def test_the_figures_are_drawn_from_the_csvs_and_named_on_the_page(tmp_path):
    """Each line of the figures is the CSV's seconds (the scale panels: ours, then cvxpy's, per model; the linear
    path beside LinearSVC); the command writes a figure into a folder (one: writing all three takes about 9 s on the
    2-core machine, mostly matplotlib's constrained layout of the ten scale panels); the page shows the committed
    ones."""
    pytest.importorskip("matplotlib")
    text = PAGE.read_text()
    for name in plot_all.NAMES:
        assert f"](../figures/benchmarks-{name}.svg)" in text
        assert (ROOT / "docs" / "figures" / f"benchmarks-{name}.svg").is_file()
    scale = csv_rows(SCALE)
    figures = plot_all.figures(plot_all.read_all())
    models = list(dict.fromkeys(r["model"] for r in scale))
    drawn = [ax for ax in figures["scale"].axes if ax.get_lines()]
    assert [ax.get_title() for ax in drawn] == models
    for ax, model in zip(drawn, models):
        these = [r for r in scale if r["model"] == model]
        ours, peer = ax.get_lines()
        assert list(ours.get_xdata()) == [int(r["points"]) for r in these]
        assert list(ours.get_ydata()) == [float(r["wall_s"]) for r in these]
        assert list(peer.get_ydata()) == [float(r["cvxpy_wall_s"]) for r in these]
    linear = csv_rows(NOTES / "bench-estimators-linear.csv")
    ours, peer = figures["estimators"].axes[2].get_lines()
    assert list(ours.get_ydata()) == [float(r["ours_fit_s"]) for r in linear]
    assert list(peer.get_ydata()) == [float(r["linearsvc_fit_s"]) for r in linear]
    assert plot_all.main(["--out", str(tmp_path), "--only", "builders"]) == 0
    assert (tmp_path / "benchmarks-builders.svg").read_text().startswith("<?xml")
    assert (tmp_path / "benchmarks-builders.png").read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["benchmarks-builders.png", "benchmarks-builders.svg"]
