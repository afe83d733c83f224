"""The benchmark pages of ``docs/notes`` show today's numbers: each page's table is its CSV's rows, its figure is drawn
from them by ``python -m benchmarks.plot_<name>``, and the page states the command, the date and the load.

Truths: the CSV as written (``benchmarks.pages.write_rows``), the header each bench declares (``CSV_COLUMNS``)."""

import math
import re

import pytest

from benchmarks import (
    bench_backends,
    bench_builders,
    bench_estimators,
    pages,
    plot_backends,
    plot_builders,
    plot_estimators,
)

PLOTS = {"backends": plot_backends, "builders": plot_builders, "estimators": plot_estimators}


def page_table(page: pages.Page) -> list[list[str]]:
    """The cells of the page's table whose header row is the page's titles."""
    lines = page.markdown_path.read_text().splitlines()
    header = "| " + " | ".join(page.titles) + " |"
    start = lines.index(header)  # ValueError: the page has no such table
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def same_cell(shown: str, written: str, column: str) -> bool:
    """The same value: numbers compared as numbers (thousands commas dropped), an empty cell shown as n/a (an empty
    note as nothing)."""
    if not written:
        return shown == ("" if column == "note" else "n/a")
    try:
        return math.isclose(float(shown.replace(",", "")), float(written), rel_tol=0, abs_tol=0)
    except ValueError:
        return shown == written


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_the_page_table_is_the_csv(name):
    page = PLOTS[name].PAGE
    rows = pages.read_rows(page.csv_path, page.columns)
    shown = page_table(page)
    assert len(shown) == len(rows) > 0
    for cells, row in zip(shown, rows):
        assert len(cells) == len(page.columns)
        for cell, column in zip(cells, page.columns):
            assert same_cell(cell, row[column], column), (name, row, column, cell)


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_the_page_states_its_command_date_and_load(name):
    page = PLOTS[name].PAGE
    text = page.markdown_path.read_text()
    assert f"--csv docs/notes/bench-{name}.csv" in text
    assert f"python -m benchmarks.plot_{name}" in text
    assert re.search(r"measured 20\d\d-\d\d-\d\d \d\d:\d\d UTC, load average [\d.]+ [\d.]+ [\d.]+", text)
    assert f"../figures/bench-{name}.svg" in text
    assert page.figure_path.with_suffix(".svg").is_file()


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_the_figure_is_drawn_from_the_csv(name, tmp_path):
    pytest.importorskip("matplotlib")
    module = PLOTS[name]
    assert module.main(["--out", str(tmp_path / name)]) == 0
    assert (tmp_path / f"{name}.svg").read_text().startswith("<?xml")


def test_the_backends_bars_are_the_optimal_rows():
    """One bar per optimal row of each size, its length the CSV's seconds, in the CSV's order."""
    pytest.importorskip("matplotlib")
    rows = pages.read_rows(plot_backends.PAGE.csv_path, plot_backends.PAGE.columns)
    fig = plot_backends.figure(rows)
    sizes = sorted({int(r["m"]) for r in rows})
    for ax, m in zip(fig.axes, sizes):
        assert [bar.get_width() for bar in ax.patches] == [float(r["solve_s"]) for r in plot_backends.drawn(rows, m)]


def test_a_wrong_header_is_refused(tmp_path):
    bad = tmp_path / "rows.csv"
    bad.write_text("model,m\n(15),10\n")
    with pytest.raises(ValueError, match="the header must be"):
        pages.read_rows(bad, bench_builders.CSV_COLUMNS)


def test_rows_written_read_back(tmp_path):
    """``write_rows`` then ``read_rows``: the same cells, ``None`` as an empty cell (shown n/a)."""
    path = pages.write_rows(tmp_path / "x.csv", ("model", "m", "s"), [{"model": "(15)", "m": "1000", "s": None}])
    rows = pages.read_rows(path, ("model", "m", "s"))
    assert rows == [{"model": "(15)", "m": "1000", "s": ""}]
    page = pages.Page("x", ("model", "m", "s"), ("model", "m", "s"))
    assert pages.markdown(page, rows).splitlines()[-1] == "| (15) | 1,000 | n/a |"


def test_the_benches_rows_become_csv_cells():
    """The conversions keep a bench's numbers in the table's formats; a missing number is an empty cell."""
    backends = bench_backends.csv_rows([
        {"model": "(15)", "key": "15", "p": None, "m": 1000, "backend": "piqp", "kind": "QP", "status": "optimal",
         "certified": True, "objective": -1e-4, "w": [1.0, 2.0], "build": 0.011, "solve": 0.0312, "peak_mb": 190.4,
         "variables": 273},
        {"model": "(15)", "key": "15", "p": None, "m": 1000, "backend": "gurobi", "kind": "QP",
         "status": "licence limit", "certified": False, "objective": None, "build": 0.01, "solve": 0.04,
         "peak_mb": 194.0, "variables": 273},
    ])
    assert backends[0]["default"] == "yes" and backends[0]["solve_s"] == "0.03" and backends[0]["obj_rel_diff"] == \
        "0.0e+00"
    assert backends[1]["default"] == "no" and backends[1]["obj_rel_diff"] == "" and backends[1]["peak_mb"] == "194"
    builders = bench_builders.builders_csv_rows([
        {"model": "(15)", "m": 10000, "pyomo": {"build": 0.03, "lp": 0.09, "nl": 0.11, "peak_mb": 28.0},
         "linopy": {"build": 0.2, "lp": 0.06, "peak_mb": 66.0}},
        {"model": "(28) p=2", "m": 10000, "pyomo": {"build": 0.06, "lp": 0.13, "nl": 0.13, "peak_mb": 33.0},
         "linopy": {"error": "n/a"}},
    ])
    assert builders[0]["build_lp_ratio"] == "0.46" and builders[0]["peak_ratio"] == "0.42"
    assert builders[1]["linopy_build_s"] == "" and "linopy: n/a" in builders[1]["note"]
    scaled = bench_estimators.scaled_csv_rows([
        {"kernel": "gaussian", "m": 1000, "tpmsvm": {"fit": 0.008, "peak_mb": 0.0, "accuracy": 0.608,
                                                      "backend": "dense"},
         "svc": {"error": "> 10 s"}},
    ])
    assert scaled[0]["tpmsvm_fit_s"] == "0.008" and scaled[0]["svc_fit_s"] == "" and scaled[0]["ratio"] == ""
    assert scaled[0]["linearsvc_fit_s"] == "" and scaled[0]["note"] == "SVC: > 10 s"


def test_the_classifiers_median_fit_is_each_numbers_median_and_keeps_a_failure():
    """``bench estimators --sizes ... --processes 3``: the middle of three fits' seconds and peaks (by hand), the
    first fit's accuracy and backend, a failed fit reported; the CSV says how many processes."""
    fits = [{"fit": 0.03, "peak_mb": 2.0, "accuracy": 0.6, "backend": "dense"},
            {"fit": 0.01, "peak_mb": 4.0, "accuracy": 0.6, "backend": "dense"},
            {"fit": 0.02, "peak_mb": 3.0, "accuracy": 0.6, "backend": "dense"}]
    assert bench_estimators.median_fit(fits) == {"fit": 0.02, "peak_mb": 3.0, "accuracy": 0.6, "backend": "dense"}
    assert bench_estimators.median_fit(fits[:2] + [{"error": "timeout"}]) == {"error": "timeout"}
    row = bench_estimators.scaled_csv_rows([{"kernel": "linear", "m": 1000, "processes": 3,
                                             "tpmsvm": bench_estimators.median_fit(fits)}])[0]
    assert row["processes"] == "3" and row["tpmsvm_fit_s"] == "0.020" and row["tpmsvm_peak_mb"] == "3"


def test_the_builders_median_row_is_each_numbers_median_and_keeps_a_failure():
    """``bench builders --repeats``: each number is the median of its runs (three runs: the middle value, computed
    here by hand), and a failed run is reported, not outvoted by the others."""
    runs = [{"build": 0.3, "lp": 2.0, "peak_mb": 250.0}, {"build": 0.1, "lp": 3.0, "peak_mb": 251.0},
            {"build": 0.2, "lp": 1.0, "peak_mb": 249.0}]
    assert bench_builders.median_row(runs) == {"build": 0.2, "lp": 2.0, "peak_mb": 250.0}
    assert bench_builders.median_row(runs[:1] + [{"error": "timeout"}]) == {"error": "timeout"}


def test_the_linear_section_is_its_csv():
    """``bench estimators --linear --csv docs/notes/bench-estimators-linear.csv``: the table of bench-estimators.md
    with those titles is the CSV's rows, and the page states the command and the measured line beside it."""
    from benchmarks import bench_linear

    page = pages.Page("estimators", bench_linear.LINEAR_CSV_COLUMNS, bench_linear.LINEAR_CSV_TITLES)
    rows = pages.read_rows(pages.NOTES / "bench-estimators-linear.csv", bench_linear.LINEAR_CSV_COLUMNS)
    shown = page_table(page)
    assert len(shown) == len(rows) > 0
    for cells, row in zip(shown, rows):
        for cell, column in zip(cells, page.columns):
            assert same_cell(cell, row[column], column), (row, column, cell)
    text = page.markdown_path.read_text()
    assert "--csv docs/notes/bench-estimators-linear.csv" in text
    assert re.search(r"measured 20\d\d-\d\d-\d\d \d\d:\d\d UTC, load average [\d.]+ [\d.]+ [\d.]+ .*"
                     r"bench estimators --linear", text)


def test_the_linear_rows_become_csv_cells():
    """The conversion keeps the numbers in the table's formats; a missing number (no exact solve at 10^6, a fit's
    error) is an empty cell and a note."""
    from benchmarks import bench_linear

    cells = bench_linear.linear_csv_rows([
        {"m": 10000, "repeats": 3, "ours": {"fit": 0.0214, "peak_mb": 1.2, "accuracy": 0.4456, "error": None},
         "linearsvc": {"fit": 0.0454, "peak_mb": 2.8, "accuracy": 0.7608, "error": None},
         "exact": {"obj_rel": 2.2e-14, "w_rel": 6.5e-9, "theta_abs": 1.27e-10, "fit": 6.71}},
        {"m": 1000000, "repeats": 3, "ours": {"fit": 3.1, "peak_mb": 300.0, "accuracy": 0.43, "error": None},
         "linearsvc": {"fit": None, "peak_mb": None, "accuracy": None, "error": "> 600 s"}},
    ])
    assert cells[0]["ours_fit_s"] == "0.021" and cells[0]["speedup"] == "2.1" and cells[0]["w_rel_diff"] == "6.5e-09"
    assert cells[0]["note"] == "" and cells[0]["dense_fit_s"] == "6.71"
    assert cells[1]["linearsvc_fit_s"] == "" and cells[1]["obj_rel_diff"] == "" and cells[1]["note"] == \
        "LinearSVC: > 600 s"


def test_the_linear_bench_rows_in_this_process():
    """One row of each kind without a fresh process: ours ran the linear path, the crossover's two paths predict
    alike, the distance to the exact optimum is small (the tests of tests/learn/test_linear_dual.py bound it)."""
    from benchmarks import bench_linear

    ours, exact = (bench_linear.linear_fit_row(model, 800) for model in ("ours", "exact"))
    assert ours["backend"] == "linear-decomposition" and exact["backend"] == "dense"
    distance = bench_linear.distance_to_exact(ours, exact)
    assert distance["obj_rel"] < 1e-6 and distance["w_rel"] < 1e-4
    row = bench_linear.crossover_row(120, 1)
    assert row["per_class"] >= 120 and row["same_predictions"]
    assert bench_linear.crossover_table([row]).splitlines()[2].startswith(f"| {row['per_class']} |")
