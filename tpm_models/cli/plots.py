"""``tpm-models plot``: the figures (:mod:`tpm_models.plots`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tpm_models.cli.commands import add_command
from tpm_models.plots import FIGURES, TABLE3_CSV, figure, read_table3, save
from tpm_models.validation import check_output_path


def cmd_plot(args: argparse.Namespace) -> int:
    """``tpm-models plot NAME --out PATH`` or ``tpm-models plot all --out-dir DIR``."""
    if args.name == "all":
        if args.out_dir is None or args.out is not None:
            raise ValueError("plot all writes every figure into a folder: give --out-dir DIR (not --out)")
        check_output_path(args.out_dir, folder=True)
        read_table3(args.csv)  # fail before drawing anything
        targets = [(name, Path(args.out_dir) / name) for name in FIGURES]
    else:
        if args.out is None or args.out_dir is not None:
            raise ValueError(f"plot {args.name} writes one figure: give --out PATH (not --out-dir)")
        check_output_path(args.out)
        targets = [(args.name, Path(args.out))]
    for name, out in targets:
        png, svg = save(figure(name, args.csv), out)
        print(f"wrote {png} and {svg}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``plot`` on the ``tpm-models`` subparsers."""
    p = add_command(sub, "plot")
    p.add_argument("name", choices=[*FIGURES, "all"], metavar="NAME",
                   help=f"one of {', '.join(FIGURES)}, or all")
    p.add_argument("--out", help="output path without suffix (or with .png/.svg): writes PATH.png and PATH.svg")
    p.add_argument("--out-dir", help="for 'all': folder that receives NAME.png and NAME.svg for every figure")
    p.add_argument("--csv", default=TABLE3_CSV, help=f"table3: the results CSV (default {TABLE3_CSV})")
    p.set_defaults(func=cmd_plot)
