"""``tpm-models plot``: the figures (:mod:`tpm_models.plots`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tpm_models.cli.commands import add_command
from tpm_models.plots import FIGURES, figure, read_table3, save
from tpm_models.plots.table3 import TABLE3_CSV
from tpm_models.validation import check_output_path

NO_TABLE3_CSV = (f"the Table 3 chart draws a results CSV and none was given: no {TABLE3_CSV} under the current "
                 "folder. Pass --csv PATH: 'tpm-models table3 --out-dir DIR' writes DIR/table3.csv, and a clone of "
                 f"the repository holds the 100-run reproduction in {TABLE3_CSV}")
"""Why the chart of Table 3 cannot be drawn without ``--csv`` outside a clone of the repository, and what to do."""


def table3_csv(given: str | None) -> str | None:
    """The results CSV of the Table 3 chart: ``--csv`` when given, else :data:`TABLE3_CSV` under the current folder
    (a clone of the repository) when it is there, else ``None``."""
    if given is not None:
        return given
    return TABLE3_CSV if Path(TABLE3_CSV).is_file() else None


def cmd_plot(args: argparse.Namespace) -> int:
    """``tpm-models plot NAME --out PATH`` or ``tpm-models plot all --out-dir DIR``. Without ``--csv`` and without
    :data:`TABLE3_CSV` under the current folder, ``plot table3`` is refused and ``plot all`` draws every other figure
    and says on stderr how to draw the chart (:data:`NO_TABLE3_CSV`)."""
    csv_path = table3_csv(args.csv)
    if args.name == "all":
        if args.out_dir is None or args.out is not None:
            raise ValueError("plot all writes every figure into a folder: give --out-dir DIR (not --out)")
        check_output_path(args.out_dir, folder=True)
        if csv_path is not None:
            read_table3(csv_path)  # fail before drawing anything
        names = [name for name in FIGURES if name != "table3" or csv_path is not None]
        targets = [(name, Path(args.out_dir) / name) for name in names]
    else:
        if args.out is None or args.out_dir is not None:
            raise ValueError(f"plot {args.name} writes one figure: give --out PATH (not --out-dir)")
        if args.name == "table3" and csv_path is None:
            raise ValueError(NO_TABLE3_CSV)
        check_output_path(args.out)
        targets = [(args.name, Path(args.out))]
    for name, out in targets:
        png, svg = save(figure(name, csv_path) if name == "table3" and csv_path is not None else figure(name), out)
        print(f"wrote {png} and {svg}")
    if csv_path is None and args.name == "all":
        print(f"tpm-models: table3 not drawn: {NO_TABLE3_CSV}", file=sys.stderr)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``plot`` on the ``tpm-models`` subparsers."""
    p = add_command(sub, "plot")
    p.add_argument("name", choices=[*FIGURES, "all"], metavar="NAME",
                   help=f"one of {', '.join(FIGURES)}, or all")
    p.add_argument("--out", help="output path without suffix (or with .png/.svg): writes PATH.png and PATH.svg")
    p.add_argument("--out-dir", help="for 'all': folder that receives NAME.png and NAME.svg for every figure")
    p.add_argument("--csv", help=f"table3: the results CSV of 'tpm-models table3' (default: {TABLE3_CSV} when it is "
                                 "under the current folder, as in a clone of the repository)")
    p.set_defaults(func=cmd_plot)
