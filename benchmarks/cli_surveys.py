"""``python -m benchmarks survey``, ``robust-survey``, ``conic-survey`` and ``pyros-table``: the solver surveys and the
PyROS table (:mod:`benchmarks.survey`, :mod:`~benchmarks.robust_survey`,
:mod:`~benchmarks.conic_survey`, :mod:`~benchmarks.pyros_table`), printed as Markdown."""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
import warnings

import numpy as np

from benchmarks import HELP, conic_survey, pyros_table, robust_survey, survey
from benchmarks.survey import markdown_table
from tpm_models.cli.options import seconds
from tpm_models.files import write_text
from tpm_models.progress import progress_bar
from tpm_models.solvers.backends.registry import available_solvers
from tpm_models.solvers.common import Termination
from tpm_models.validation import check_output_path


def _quiet_library() -> None:
    """The surveys print tables: the library's warnings (a solver that fails is a row) are not shown."""
    logging.getLogger("tpm_models").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")


def _check_csv(path: str | None) -> None:
    """Fail before the survey (minutes) when ``--csv`` cannot be written."""
    if path:
        check_output_path(path)


def _progress(message: str) -> None:
    print(f"  {message}", file=sys.stderr, flush=True)


def cmd_survey(args: argparse.Namespace) -> int:
    """The paper grid on Iris and Wine (dual (16)) with every solver; Markdown tables."""
    _check_csv(args.csv)
    _quiet_library()
    solvers = args.solvers or available_solvers("QP")
    strides = {s: args.stride for s in survey.SLOW_SOLVERS if s in solvers}

    bars: list = []

    def progress(done: int, total: int) -> None:  # a bar with counts and time left (off when stderr is no terminal)
        if not bars:
            bars.append(progress_bar(total, "survey", unit="solve"))
        bars[0].update(done - bars[0].n)

    start = time.perf_counter()
    try:
        df = survey.survey(datasets=args.datasets, solvers=solvers, progress=progress, strides=strides)
    finally:
        for bar in bars:
            bar.close()
    elapsed = time.perf_counter() - start
    if args.csv:
        write_text(args.csv, df.to_csv(index=False))
    n_inst = df[survey.INSTANCE].drop_duplicates().shape[0]
    print(f"## Survey: dual (16), {', '.join(args.datasets)}, alpha = 2^-8..2^8, nu/alpha = 0.1..0.9, "
          f"all classes: {n_inst} instances ({elapsed:.0f} s)\n")
    if args.stride > 1 and strides:
        print(f"{', '.join(strides)} ran on a deterministic 1-in-{args.stride} subsample of the grid "
              f"(instances with alpha# + ratio# + class# divisible by {args.stride}); the other "
              f"solvers on the full grid. The reference of an instance is the median optimal "
              f"objective of the other solvers that ran on it.\n")
    versions = df.groupby("solver", sort=False)["version"].first()
    print("Versions: " + ", ".join(f"{s} {v}" for s, v in versions.items()) + "\n")
    print(markdown_table(survey.summarize(df)))
    for solver in solvers:
        g = df[df["solver"] == solver]
        bad = ~(g["termination"].eq(Termination.OPTIMAL.value) & (g["rel_err"] <= survey.ACCURATE))
        if bad.any():
            print(f"\n### {solver}: not accurate, by alpha\n")
            print(markdown_table(survey.failures_by_alpha(df, solver)))
            msgs = g.loc[bad, "message"].value_counts()
            print("\nmessages: " + "; ".join(f"{m!r} x{n}" for m, n in msgs.items()))
            fail = g[bad & ~g["termination"].eq(Termination.OPTIMAL.value)]
            if len(fail):
                print(f"points returned by failed solves: point_rel_err median "
                      f"{fail['point_rel_err'].median():.2g}, max violation median "
                      f"{fail['max_violation'].median():.2g}")
    if "highs" in solvers and args.rescale_ratios:
        keys = df[["dataset", "cls", "alpha", "ratio"]].drop_duplicates()
        keys = keys[np.isin(np.round(keys["ratio"], 6), np.round(args.rescale_ratios, 6))]
        r = survey.rescaled(df, keys.itertuples(index=False), solver="highs")
        print(f"\n## HiGHS on the rescaled dual (nu' = 1, alpha' = alpha/nu): {len(r)} instances, "
              f"nu/alpha in {args.rescale_ratios}, every alpha, class and data set\n")
        print(markdown_table(survey.summarize_rescaled(r)))
    return 0


def cmd_robust_survey(args: argparse.Namespace) -> int:
    """Every robust model with every installed capable solver; a Markdown table."""
    _check_csv(args.csv)
    _quiet_library()
    start = time.perf_counter()
    df = robust_survey.robust_survey(args.datasets, args.solvers, time_limit=args.time_limit, progress=_progress)
    if args.csv:
        write_text(args.csv, df.to_csv(index=False))
    nu, alpha, eps = robust_survey.ROBUST_PARAMETERS
    print(f"## Robust models, {', '.join(args.datasets)}, every class, nu={nu:g}, alpha={alpha:g}, eps={eps:g} "
          f"({time.perf_counter() - start:.0f} s)\n")
    print(markdown_table(robust_survey.summarize(df).set_index("model")))
    return 0


def cmd_conic_survey(args: argparse.Namespace) -> int:
    """(23) and its twins (26)-(29) against the cvxpy reference; tables per solver and per model class."""
    _check_csv(args.csv)
    _quiet_library()
    start = time.perf_counter()
    df = conic_survey.conic_survey(conic_survey.read_reference(args.reference), args.solvers, args.datasets,
                                   args.time_limit, progress=None if args.quiet else _progress,
                                   extra_models=args.models)
    if args.csv:
        write_text(args.csv, df.to_csv(index=False))
    print(f"## (23) and its twins (26)-(29), {', '.join(args.datasets)}: {len(df)} solves "
          f"({time.perf_counter() - start:.0f} s)\n")
    print(markdown_table(conic_survey.summarize(df).set_index("solver")))
    print()
    print(markdown_table(conic_survey.summarize(df, ("model_class", "solver")).set_index("model_class")))
    if args.models:
        print()
        print(markdown_table(conic_survey.summarize(df.assign(eq=df["eq"].astype(str)), ("eq", "solver"))
                             .set_index("eq")))
    return 0


def cmd_pyros_table(args: argparse.Namespace) -> int:
    """(22) by PyROS on whole data sets vs (23), appended to a CSV (resumable); or the table of a finished CSV."""
    if args.markdown:
        print(pyros_table.markdown(args.markdown))
        return 0
    if not args.out:
        raise ValueError("pyros-table needs --out CSV (the rows are appended to it), or --markdown CSV")
    check_output_path(args.out)
    logging.getLogger("tpm_models").setLevel(logging.ERROR)
    ps = [math.inf if s.lower() in ("inf", "infinity") else float(s) for s in args.p]
    pyros_table.run(args.datasets, ps, args.out, args.time_limit, args.local, args.global_, args.classes)
    return 0


def add_parsers(sub) -> None:
    """Register ``survey``, ``robust-survey``, ``conic-survey`` and ``pyros-table``."""
    s = sub.add_parser("survey", help=HELP["survey"])
    s.add_argument("--datasets", nargs="+", default=["iris", "wine"])
    s.add_argument("--solvers", nargs="+", default=None, help="default: all installed")
    s.add_argument("--stride", type=int, default=3,
                   help=f"run {', '.join(survey.SLOW_SOLVERS)} on 1 instance in STRIDE (1 = full grid)")
    s.add_argument("--rescale-ratios", nargs="+", type=float, default=[0.1, 0.5, 0.9],
                   help="nu/alpha values of the rescaling check (every alpha, class, data set)")
    s.add_argument("--csv", help="also write the raw rows to this CSV file")
    s.set_defaults(func=cmd_survey)

    r = sub.add_parser("robust-survey", help=HELP["robust-survey"])
    r.add_argument("--datasets", nargs="+", default=["iris", "wine"])
    r.add_argument("--solvers", nargs="+", default=None, help="default: every installed capable solver")
    r.add_argument("--time-limit", type=seconds, default=120.0, help="seconds per solve (SCIP, Gurobi, ...)")
    r.add_argument("--csv", help="also write the raw rows to this CSV file")
    r.set_defaults(func=cmd_robust_survey)

    c = sub.add_parser("conic-survey", help=HELP["conic-survey"])
    c.add_argument("--reference", default=str(conic_survey.REFERENCE), help="the CSV of docs/reference/cvxpy_23.py")
    c.add_argument("--solvers", nargs="+", default=None, help="default: every installed SOCP or NLP solver")
    c.add_argument("--datasets", nargs="+", default=list(conic_survey.DATASETS))
    c.add_argument("--time-limit", type=seconds, default=120.0, help="seconds per solve")
    c.add_argument("--csv", help="also write the raw rows to this CSV file")
    c.add_argument("--models", nargs="+", default=[], help="registered models of any p solved beside (23), (26) "
                   "and the twin, e.g. 15R (the counterpart derived by robust_counterpart)")
    c.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    c.set_defaults(func=cmd_conic_survey)

    p = sub.add_parser("pyros-table", help=HELP["pyros-table"])
    p.add_argument("--datasets", nargs="+", default=["iris", "wine"])
    p.add_argument("--classes", nargs="+", help="only these class labels (default: all)")
    p.add_argument("--p", nargs="+", default=["inf", "1", "2"], help="norms of (21): 1, 2, inf")
    p.add_argument("--out", help="CSV to append to (rows already there are skipped)")
    p.add_argument("--time-limit", type=seconds, default=1800.0, help="PyROS time limit per instance (s)")
    p.add_argument("--local", default="tpm_ipopt", help="PyROS local subsolver (tpm_ipopt, scip, gurobi_direct)")
    p.add_argument("--global", dest="global_", default="tpm_ipopt", help="PyROS global subsolver")
    p.add_argument("--markdown", metavar="CSV", help="print the Markdown table of a finished CSV and exit")
    p.set_defaults(func=cmd_pyros_table)
