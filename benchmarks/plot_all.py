"""One page of today's benchmark numbers, ``docs/notes/benchmarks.md``: its figures and its tables, from the CSVs the
other benchmark pages show (no benchmark is run here).

    python -m benchmarks.plot_all               # writes docs/figures/benchmarks-{scale,estimators,builders}.svg, .png
    python -m benchmarks.plot_all --markdown    # prints the page's generated blocks
    python -m benchmarks.plot_all --page        # writes them into docs/notes/benchmarks.md, between their markers
    python -m benchmarks.plot_all --only scale  # draws one figure (of scale, estimators, builders)

Three comparisons, each a figure of wall seconds (log) against the points m (log), one line per peer and per ours,
and a table of the CSV's numbers with the ratio ours / peer:

* ``scale``: each model beside cvxpy + Clarabel, from ``docs/results/bench-scale.csv`` (:mod:`benchmarks.plot_scale`);
* ``estimators``: ``TPMSVMOneVsAll`` beside ``SVC`` and ``LinearSVC``, linear and Gaussian kernels, from
  ``docs/notes/bench-estimators.csv`` and ``docs/notes/bench-estimators-linear.csv``
  (:mod:`benchmarks.plot_estimators`, :mod:`benchmarks.bench_linear`);
* ``builders``: build + ``.lp`` beside linopy's, from ``docs/notes/bench-builders.csv``
  (:mod:`benchmarks.plot_builders`);

beside the estimators' table, Iris and Wine (``TPMSVMOneVsAll()`` beside ``SVC(kernel="linear")``, first and warm
fits in fresh processes) from ``docs/notes/bench-estimators-iris-wine.csv`` (no figure: two data sets);

and a block ``targets``: issue 51's targets, each met or not by the CSVs' rows. The machine, its load and the command
of each CSV are read from the page that recorded the run (the line ``measured ...`` that the bench printed; for the
scale rows, which ``bench scale`` prints as a table and writes no CSV of, the sentence of ``docs/bench-scale.md``).
The page's blocks sit between ``<!-- plot_all: NAME -->`` and ``<!-- /plot_all: NAME -->``; ``--page`` replaces
them and leaves the rest of the page as written.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks import ROOT, plot_builders, plot_estimators, plot_scale
from benchmarks.bench_estimators import SMALL_CSV_COLUMNS
from benchmarks.bench_linear import LINEAR_CSV_COLUMNS
from benchmarks.pages import FIGURES, NOTES, log_lines, number, read_rows
from tpm_models.files import write_text
from tpm_models.plots import matplotlib_module, save

PAGE = NOTES / "benchmarks.md"
"""The page."""
SCALE_CSV = plot_scale.CSV
ESTIMATORS_CSV = plot_estimators.PAGE.csv_path
LINEAR_CSV = NOTES / "bench-estimators-linear.csv"
BUILDERS_CSV = plot_builders.PAGE.csv_path
IRIS_WINE_CSV = NOTES / "bench-estimators-iris-wine.csv"
IRIS_WINE_PAGE = NOTES / "bench-builders.md"
"""The page that records the Iris and Wine run (its section on the estimators beside ``SVC(kernel="linear")``)."""
NAMES = ("scale", "estimators", "builders")
"""The comparisons; each one's figure is ``docs/figures/benchmarks-<name>`` (``.svg`` and ``.png``)."""
SCALE_COMMANDS = ("python -m benchmarks bench scale --sizes 10000 --timeout 600 --repeats 5",
                  "python -m benchmarks bench scale --sizes 100000 --timeout 600 --repeats 3",
                  "python -m benchmarks bench scale --sizes 1000000 --models 15 28 23:2 --repeats 1 --timeout 900")
"""The runs whose printed tables are the scale CSV's rows (``docs/notes/bench-scale-history.md``, "Where main stands
now")."""
REDRAW = "python -m benchmarks.plot_all"
Rows = Sequence[Mapping[str, str]]

SCALE_TITLES = ("model", "m", "our solver", "ours wall s", "cvxpy + Clarabel wall s", "ours / cvxpy",
                "target <= 0.5 (10^5, 10^6)")
ESTIMATORS_TITLES = ("kernel", "m", "TPMSVMOneVsAll fit s", "SVC fit s", "ours / SVC", "LinearSVC fit s",
                     "ours / LinearSVC", "our backend")
IRIS_WINE_TITLES = ("data", "m x n", "processes", "TPMSVMOneVsAll() first fit ms", "SVC first fit ms",
                    "first fit ours / SVC", "TPMSVMOneVsAll() warm fit ms", "SVC warm fit ms", "warm fit ours / SVC",
                    "target <= 1.5")
LINEAR_TITLES = ("m", "repeats", "linear-decomposition fit s", "LinearSVC fit s", "ours / LinearSVC")
BUILDERS_TITLES = ("model", "m", "Pyomo build + .lp s", "linopy build + .lp s", "ours / linopy",
                   "target <= 2 (10^5)")
TARGETS_TITLES = ("issue 51's target", "rows of the CSVs", "worst ours / peer", "rows over the bound", "met")


def table(titles: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; an empty cell is shown ``n/a``."""
    lines = ["| " + " | ".join(titles) + " |", "|" + "---|" * len(titles)]
    lines += ["| " + " | ".join(c or "n/a" for c in cells) + " |" for cells in rows]
    return "\n".join(lines)


def ratio(ours: float, peer: float) -> str:
    """``ours / peer`` to two decimals; ``""`` when either is missing (``nan``)."""
    return f"{ours / peer:.2f}" if ours == ours and peer == peer else ""


def verdict(value: float, bound: float) -> str:
    return "yes" if value <= bound else "no"


def points(m: str | int) -> str:
    return f"{int(m):,}"


def scale_table(rows: Rows) -> str:
    """Each (model, m): our wall seconds, cvxpy + Clarabel's, the CSV's wall ratio (of the medians, unrounded), and
    whether the target holds (only at 10^5 and 10^6 points)."""
    cells = [(r["model"], points(r["points"]), r["solver"], r["wall_s"], r["cvxpy_wall_s"], r["wall_ratio"],
              verdict(float(r["wall_ratio"]), 0.5) if 100_000 <= int(r["points"]) <= 1_000_000 else "-") for r in rows]
    return table(SCALE_TITLES, cells)


def estimators_table(rows: Rows) -> str:
    """Each (kernel, m): the fit seconds of ours, SVC, LinearSVC; the CSV's ratio to SVC, ours / LinearSVC from the
    cells."""
    cells = [(r["kernel"], points(r["m"]), r["tpmsvm_fit_s"], r["svc_fit_s"], r["ratio"], r["linearsvc_fit_s"],
              ratio(number(r["tpmsvm_fit_s"]), number(r["linearsvc_fit_s"])), r["tpmsvm_backend"]) for r in rows]
    return table(ESTIMATORS_TITLES, cells)


def milliseconds(cell: str) -> str:
    """A CSV's seconds as milliseconds to two decimals; ``""`` for an empty cell."""
    return f"{float(cell) * 1e3:.2f}" if cell else ""


def iris_wine_worst(row: Mapping[str, str]) -> tuple[float, str]:
    """The larger of a data set's ratios ours / SVC (first fit, warm fit: the CSV's cells, of the unrounded seconds)
    and which fit it is; ``(nan, "")`` when the row has neither."""
    measured = [(float(row[f"{fit}_ratio"]), f"{fit} fit") for fit in ("first", "warm") if row[f"{fit}_ratio"]]
    return max(measured) if measured else (float("nan"), "")


def iris_wine_table(rows: Rows) -> str:
    """Each data set: first and warm fit milliseconds of ours and SVC's (the CSV's seconds), the CSV's ratios, and
    whether the target (the larger ratio at most 1.5) holds."""
    cells = []
    for r in rows:
        value, fit = iris_wine_worst(r)
        cells.append((r["dataset"], f"{r['m']} x {r['n']}", r["processes"], milliseconds(r["tpmsvm_first_s"]),
                      milliseconds(r["svc_first_s"]), r["first_ratio"], milliseconds(r["tpmsvm_warm_s"]),
                      milliseconds(r["svc_warm_s"]), r["warm_ratio"], verdict(value, 1.5) if fit else ""))
    return table(IRIS_WINE_TITLES, cells)


def linear_table(rows: Rows) -> str:
    """Each m of ``bench estimators --linear``: medians of the fit seconds, ours / LinearSVC from the cells (the CSV
    holds the inverse, ``speedup``)."""
    cells = [(points(r["m"]), r["repeats"], r["ours_fit_s"], r["linearsvc_fit_s"],
              ratio(number(r["ours_fit_s"]), number(r["linearsvc_fit_s"]))) for r in rows]
    return table(LINEAR_TITLES, cells)


def builders_seconds(row: Mapping[str, str]) -> tuple[float, float]:
    """Our build + ``.lp`` seconds and linopy's (:data:`benchmarks.plot_builders.BARS`' first and last bar)."""
    (_, build, write, _), (_, peer_build, peer_write, _) = plot_builders.BARS[0], plot_builders.BARS[-1]
    return (plot_builders.build_and_write_s(row, build, write),
            plot_builders.build_and_write_s(row, peer_build, peer_write))


def builders_table(rows: Rows) -> str:
    """Each (model, m): build + ``.lp`` seconds of ours and linopy's (sums of the cells), the CSV's ratio (of the
    unrounded seconds), and whether the target holds at 10^5 points."""
    cells = []
    for r in rows:
        ours, peer = (f"{s:.2f}" if s == s else "" for s in builders_seconds(r))
        target = verdict(float(r["build_lp_ratio"]), 2.0) if int(r["m"]) == 100_000 and r["build_lp_ratio"] else "-"
        cells.append((r["model"], points(r["m"]), ours, peer, r["build_lp_ratio"], target))
    return table(BUILDERS_TITLES, cells)


def worst(pairs: Sequence[tuple[float, str, int]], bound: float) -> tuple[str, str, str, str]:
    """The cells of a target's row from its ``(ratio, where, m)``: how many rows at which m, the largest ratio and
    where, the rows over ``bound``, met (``yes``/``no``) or ``no CSV``."""
    if not pairs:
        return "none", "", "", "no CSV (see below)"
    value, where, _ = max(pairs)
    sizes = ", ".join(points(m) for m in sorted({m for _, _, m in pairs}))
    over = "; ".join(w for v, w, _ in pairs if v > bound) or "none"
    return f"{len(pairs)} (m = {sizes})", f"{value:.2f} ({where})", over, verdict(value, bound)


def targets_table(scale: Rows, estimators: Rows, linear: Rows, builders: Rows, iris_wine: Rows = ()) -> str:
    """Issue 51's targets, each judged on the CSVs' rows it covers (ours / peer as in the tables below, two
    decimals; Iris and Wine by each data set's larger ratio, :func:`iris_wine_worst`)."""
    def at(value: float, r: Mapping[str, str], m: str = "m", what: str = "") -> tuple[float, str, int]:
        name = what or r.get("model") or r["kernel"]
        return float(f"{value:.2f}"), f"{name} at {points(r[m])}", int(r[m])

    lin = [at(number(r["ours_fit_s"]) / number(r["linearsvc_fit_s"]), r, what="linear (the --linear run)")
           for r in linear if r["ours_fit_s"] and r["linearsvc_fit_s"]]
    lin += [at(number(r["tpmsvm_fit_s"]) / number(r["linearsvc_fit_s"]), r) for r in estimators
            if r["kernel"] == "linear" and 10_000 <= int(r["m"]) <= 1_000_000 and r["linearsvc_fit_s"]]
    small = [(iris_wine_worst(r), r) for r in iris_wine]
    rows = [
        ("every bench-scale row at 10^5 and 10^6 points <= 0.5x cvxpy + Clarabel's wall",
         worst([at(float(r["wall_ratio"]), r, "points") for r in scale
                if 100_000 <= int(r["points"]) <= 1_000_000], 0.5)),
        ("linear kernel <= 1.0x LinearSVC at 10^4-10^6 points", worst(lin, 1.0)),
        ("Gaussian kernel <= 0.5x SVC at 10^4-10^5 points",
         worst([at(float(r["ratio"]), r) for r in estimators
                if r["kernel"] == "gaussian" and 10_000 <= int(r["m"]) <= 100_000 and r["ratio"]], 0.5)),
        ("Iris and Wine <= 1.5x SVC",
         worst([at(value, r, what=f"{r['dataset']} {fit}") for (value, fit), r in small if fit], 1.5)),
        ("first fit at 10^3 points <= 1.0x SVC",
         worst([at(float(r["ratio"]), r) for r in estimators if int(r["m"]) == 1_000 and r["ratio"]], 1.0)),
        ("build + .lp <= 2x linopy at 10^5 points",
         worst([at(float(r["build_lp_ratio"]), r) for r in builders if int(r["m"]) == 100_000 and r["build_lp_ratio"]],
               2.0)),
    ]
    return table(TARGETS_TITLES, [(name, *cells) for name, cells in rows])


def recorded_run(page: Path, csv_name: str) -> tuple[str, str]:
    """The line ``measured ...`` that the run which wrote ``csv_name`` printed, as ``page`` quotes it (with the load
    at the run's start, when the page gives it), and the run's command (with the options after ``--csv PATH``);
    ``ValueError`` when the page has none."""
    text = " ".join(page.read_text().split())
    found = re.search(r"`(measured [^`]*?, Python [\d.]+: (python -m [^`]*--csv docs/notes/" + re.escape(csv_name)
                      + r"(?: [^`]*)?))`(; at its start the load average was \d+\.\d+ \d+\.\d+)?", text)
    if not found:
        raise ValueError(f"{page}: no line 'measured ...' of the run that wrote {csv_name}")
    return found.group(1) + (found.group(3) or ""), found.group(2)


def scale_recorded() -> str:
    """The machines and the loads of the scale rows' runs, as ``docs/bench-scale.md`` states them (each sentence
    ``Commit ... on the project's machine ..., load average a-b``, joined by ``; ``)."""
    text = " ".join((ROOT / "docs" / "bench-scale.md").read_text().split())
    found = re.findall(r"Commit [0-9a-f]{7,} on the project's machine .*?load average [\d.]+-[\d.]+", text)
    if not found:
        raise ValueError("docs/bench-scale.md: no sentence 'Commit ... on the project's machine ..., load average'")
    return "; ".join(found)


def figure_line(name: str, alt: str) -> str:
    return f"![{alt}](../figures/benchmarks-{name}.svg)"


def commands_block(commands: Sequence[str]) -> str:
    return "\n".join(["```bash", *commands, f"{REDRAW}    # the figures of this page, from the CSVs", "```"])


def scale_block(rows: Rows) -> str:
    return "\n\n".join([
        f"Recorded ([the scale page](../bench-scale.md)): {scale_recorded()}.",
        "The rows are [`docs/results/bench-scale.csv`](../results/bench-scale.csv), of these runs (with `--csv`; the "
        "median of five processes a side at 10^4 points, of three at 10^5, one process a side at 10^6; "
        "[the history](bench-scale-history.md)):",
        commands_block(SCALE_COMMANDS),
        figure_line("scale", "Wall seconds against points, each model, ours beside cvxpy + Clarabel"),
        scale_table(rows)])


def processes_phrase(rows: Rows) -> str:
    """How many fresh processes each number of ``bench-estimators.csv`` is the median of (its ``processes``
    column): empty for one."""
    counts = sorted({int(r.get("processes") or 1) for r in rows})
    if counts == [1]:
        return ""
    return ", the medians of " + " or ".join(str(c) for c in counts) + " such processes, the models in turn"


def estimators_block(rows: Rows, linear: Rows, iris_wine: Rows) -> str:
    page = NOTES / "bench-estimators.md"
    run, command = recorded_run(page, ESTIMATORS_CSV.name)
    linear_run, linear_command = recorded_run(page, LINEAR_CSV.name)
    small_run, small_command = recorded_run(IRIS_WINE_PAGE, IRIS_WINE_CSV.name)
    return "\n\n".join([
        f"Recorded ([the classifiers' page](bench-estimators.md)): `{run}`.",
        "The rows are [`bench-estimators.csv`](bench-estimators.csv) (each model's first fit in a fresh process"
        f"{processes_phrase(rows)}):",
        commands_block([command]),
        figure_line("estimators", "Fit seconds against points: TPMSVMOneVsAll beside SVC and LinearSVC, linear and "
                    "Gaussian kernels, and the linear path beside LinearSVC"),
        estimators_table(rows),
        f"Recorded: `{linear_run}`. The rows are [`bench-estimators-linear.csv`](bench-estimators-linear.csv) "
        "(`backend=\"linear-decomposition\"` beside `LinearSVC`, the medians of three fresh processes each, "
        "alternating):",
        commands_block([linear_command]),
        linear_table(linear),
        f"Recorded ([the builders' page](bench-builders.md)): `{small_run}`. The rows are "
        "[`bench-estimators-iris-wine.csv`](bench-estimators-iris-wine.csv) (Iris and Wine, min-max scaled, all "
        "points; `TPMSVMOneVsAll()` beside `SVC(kernel=\"linear\")`, each in fresh processes per data set, ours and "
        "SVC's in turn, each process timing its first fit and the median of its further fits; medians over the "
        "processes):",
        commands_block([small_command]),
        iris_wine_table(iris_wine)])


def builders_block(rows: Rows) -> str:
    run, command = recorded_run(NOTES / "bench-builders.md", BUILDERS_CSV.name)
    return "\n\n".join([
        f"Recorded ([the builders' page](bench-builders.md)): `{run}`.",
        "The rows are [`bench-builders.csv`](bench-builders.csv) (each number the median of three fresh processes a "
        "side, in turn; linopy cannot hold (23) at p = 2 or (28), and no `.lp` holds (23) at p = 2):",
        commands_block([command]),
        figure_line("builders", "Build + .lp seconds against points, Pyomo beside linopy"),
        builders_table(rows)])


def read_all(scale_csv: Path = SCALE_CSV, estimators_csv: Path = ESTIMATORS_CSV, linear_csv: Path = LINEAR_CSV,
             builders_csv: Path = BUILDERS_CSV, iris_wine_csv: Path = IRIS_WINE_CSV) -> dict[str, list[dict[str, str]]]:
    """The five CSVs' rows (strings), by name: scale, estimators, linear, builders, iris-wine."""
    return {"scale": plot_scale.read_rows(scale_csv),
            "estimators": read_rows(estimators_csv, plot_estimators.PAGE.columns),
            "linear": read_rows(linear_csv, LINEAR_CSV_COLUMNS),
            "builders": read_rows(builders_csv, plot_builders.PAGE.columns),
            "iris-wine": read_rows(iris_wine_csv, SMALL_CSV_COLUMNS)}


def blocks(rows: Mapping[str, Rows]) -> dict[str, str]:
    """The page's generated blocks, by name: targets, scale, estimators, builders."""
    return {"targets": targets_table(rows["scale"], rows["estimators"], rows["linear"], rows["builders"],
                                     rows["iris-wine"]),
            "scale": scale_block(rows["scale"]),
            "estimators": estimators_block(rows["estimators"], rows["linear"], rows["iris-wine"]),
            "builders": builders_block(rows["builders"])}


def marked(name: str, body: str) -> str:
    """A block between its markers."""
    return f"<!-- plot_all: {name} -->\n{body}\n<!-- /plot_all: {name} -->"


def rewrite(text: str, new: Mapping[str, str]) -> str:
    """``text`` with each marked block replaced by ``new``'s; ``ValueError`` when a block's markers are missing."""
    for name, body in new.items():
        pattern = re.compile(re.escape(f"<!-- plot_all: {name} -->") + ".*?" + re.escape(f"<!-- /plot_all: {name} -->"),
                             re.DOTALL)
        if not pattern.search(text):
            raise ValueError(f"the page has no block {name} (<!-- plot_all: {name} --> ... <!-- /plot_all: {name} -->)")
        block = marked(name, body)
        text = pattern.sub(lambda _, block=block: block, text, count=1)
    return text


def seconds(rows: Rows, column: str, m: str = "m") -> list[tuple[int, float]]:
    return [(int(r[m]), number(r[column])) for r in rows]


def scale_figure(rows: Rows) -> Any:
    """One panel per model: the wall seconds of ours and of cvxpy + Clarabel against the points."""
    Figure = matplotlib_module("matplotlib.figure").Figure
    models = list(dict.fromkeys(r["model"] for r in rows))
    ncols = (len(models) + 1) // 2
    fig = Figure(figsize=(2.9 * ncols, 5.6), layout="constrained")
    for ax, model in zip(fig.subplots(2, ncols, squeeze=False).ravel(), models):
        these = [r for r in rows if r["model"] == model]
        log_lines(ax, [("tpm-models (default solver)", seconds(these, "wall_s", "points"),
                        {"color": "#1f77b4", "marker": "o"}),
                       ("cvxpy + Clarabel", seconds(these, "cvxpy_wall_s", "points"),
                        {"color": "#7f7f7f", "marker": "s", "linestyle": "--"})], model, "wall s (whole process)")
    fig.legend(*fig.axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=2, fontsize="small")
    return fig


def estimators_figure(rows: Rows, linear: Rows) -> Any:
    """Three panels of fit seconds against the points: the linear and the Gaussian kernel of ``bench-estimators.csv``
    (:func:`benchmarks.plot_estimators.kernel_lines`), and the linear path beside ``LinearSVC`` of
    ``bench-estimators-linear.csv``."""
    Figure = matplotlib_module("matplotlib.figure").Figure
    fig = Figure(figsize=(13.5, 3.9), layout="constrained")
    axes = fig.subplots(1, 3)
    for ax, kernel in zip(axes, ("linear", "gaussian")):
        log_lines(ax, plot_estimators.kernel_lines(rows, kernel), f"{kernel} kernel, one fit", "fit seconds")
    (_, _, ours_colour, ours_marker), _, (_, _, peer_colour, peer_marker) = plot_estimators.LINES
    log_lines(axes[2], [("TPMSVMOneVsAll (linear path)", seconds(linear, "ours_fit_s"),
                         {"color": ours_colour, "marker": ours_marker}),
                        ("LinearSVC", seconds(linear, "linearsvc_fit_s"),
                         {"color": peer_colour, "marker": peer_marker})],
              "linear kernel, medians of 3 (--linear)", "fit seconds")
    for ax in axes:
        ax.legend(fontsize="small")
    return fig


def builders_figure(rows: Rows) -> Any:
    """One panel: build + ``.lp`` seconds against the points, for each model ours (solid) and linopy's (dashed, in
    the model's colour) where there are numbers."""
    matplotlib = matplotlib_module()
    fig = matplotlib_module("matplotlib.figure").Figure(figsize=(5.0, 3.9), layout="constrained")
    ax = fig.subplots()
    lines = []
    models = list(dict.fromkeys(r["model"] for r in rows))
    for model, colour in zip(models, matplotlib.colormaps["tab10"].colors):
        these = [(int(r["m"]), builders_seconds(r)) for r in rows if r["model"] == model]
        lines.append((f"{model} Pyomo", [(m, s[0]) for m, s in these], {"color": colour, "marker": "o"}))
        lines.append((f"{model} linopy", [(m, s[1]) for m, s in these],
                      {"color": colour, "marker": "s", "linestyle": "--"}))
    log_lines(ax, lines, "build + .lp, beside linopy", "seconds (in the process)")
    ax.legend(fontsize="small")
    return fig


def figures(rows: Mapping[str, Rows], names: Sequence[str] = NAMES) -> dict[str, Any]:
    """The figures ``names`` (of :data:`NAMES`), by name, from :func:`read_all`'s rows."""
    draw = {"scale": lambda: scale_figure(rows["scale"]),
            "estimators": lambda: estimators_figure(rows["estimators"], rows["linear"]),
            "builders": lambda: builders_figure(rows["builders"])}
    return {name: draw[name]() for name in names}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.plot_all", description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(FIGURES), help="the folder of the figures (default docs/figures)")
    p.add_argument("--only", nargs="+", choices=NAMES, default=list(NAMES), help="draw only these figures")
    p.add_argument("--markdown", action="store_true", help="print the page's generated blocks instead of drawing")
    p.add_argument("--page", nargs="?", const=str(PAGE), default=None,
                   help="write the generated blocks into this page (default docs/notes/benchmarks.md)")
    args = p.parse_args(sys.argv[1:] if argv is None else list(argv))
    rows = read_all()
    if args.markdown or args.page:
        new = blocks(rows)
        if args.markdown:
            print("\n\n".join(marked(name, body) for name, body in new.items()))
        if args.page:
            print(write_text(args.page, rewrite(Path(args.page).read_text(), new)))
        return 0
    for name, fig in figures(rows, args.only).items():
        for path in save(fig, Path(args.out) / f"benchmarks-{name}"):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
