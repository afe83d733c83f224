"""``tpm-models table3``, ``reproduce``, ``robust-table`` and ``robust-kernel-table``: the experiments of
Section 5 and beyond (:mod:`tpm_models.experiments`). This module parses the arguments and prints; the runs,
their metadata and their reports are in :mod:`tpm_models.experiments`."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tpm_models.cli.checks import check_ties
from tpm_models.cli.commands import add_command
from tpm_models.cli.options import at_least_one, worker_count
from tpm_models.experiments.robust import (
    EPS_GRID,
    KERNEL_SIGMA,
    SOLVERS,
    run_robust_kernel_table,
    run_robust_table,
    summarize_robust,
    summarize_robust_kernel,
)
from tpm_models.experiments.robust_report import solver_note, write_robust_kernel_table, write_robust_table
from tpm_models.experiments.run_info import run_metadata
from tpm_models.experiments.table3 import (
    ALL_CELLS,
    BASELINES,
    CELLS,
    CV_FOLDS,
    DATASETS,
    SEED,
    SELECTIONS,
    TIE_RULES,
    Protocol,
    RunResult,
    Table3Store,
    check_cells,
    check_datasets,
    print_summary,
    run_with_metadata,
    summarize,
    write_table3,
)
from tpm_models.learn.fastqp import FAST_SOLVERS
from tpm_models.models.norms import check_p
from tpm_models.validation import check_output_path

ROBUST_KERNEL_PACKAGES = ("numpy", "clarabel", "joblib")
"""The packages whose versions the (23K) section of ``robust.md`` names."""


def _protocol_from_args(args: argparse.Namespace) -> Protocol:
    """The protocol of ``table3``/``reproduce``, checked (``ValueError`` for a bad ``--folds``, ``--seed``...)."""
    return Protocol(seed=args.seed, solver=args.solver, shortcuts=not args.no_shortcuts,
                    cv_folds=args.folds if args.selection == "cv" else 0)


def _run_from_args(args: argparse.Namespace, store: str | None, resume: bool) -> tuple[RunResult, dict]:
    """The run of ``table3``/``reproduce``; ``--fresh`` removes the store under the run's own lock (one lock, held
    from the removal to the run's end: :func:`tpm_models.experiments.table3.run_table3`)."""
    return run_with_metadata(args.dataset, args.kernel, args.runs, _protocol_from_args(args), args.jobs,
                             dask=getattr(args, "dask", None), store=store, resume=resume, progress=not args.quiet,
                             fresh=bool(store) and args.fresh)


def _report_run(run: RunResult) -> str:
    return (f"{run.computed} splits computed, {run.reused} reused from the store, {run.corrupt} corrupt record(s) "
            f"dropped and recomputed; wall time {run.wall_seconds:.1f} s")


def default_store(selection: str) -> str:
    """``tpm-models table3``'s results store when ``--store`` is not given: one per selection protocol, so the
    two protocols run one after the other without ``--resume``."""
    return "runs/table3-cv.jsonl" if selection == "cv" else "runs/table3.jsonl"


REPORT_FILES = ("table3.md", "table3.csv")
"""The files ``write_table3`` writes in ``--out-dir``."""


def check_store_options(args: argparse.Namespace) -> None:
    """Refuse options that contradict each other (``--store X --no-store``, ``--no-store --resume``, ...) and a
    store the report would overwrite (``--store O/table3.csv --out-dir O``), before anything runs."""
    if args.no_store:
        given = [flag for flag, on in (("--store", args.store), ("--resume", args.resume), ("--fresh", args.fresh))
                 if on]
        if given:
            raise ValueError(f"--no-store contradicts {', '.join(given)}: keep the results in memory (--no-store) "
                             "or in a store, not both")
    if args.resume and args.fresh:
        raise ValueError("--resume contradicts --fresh: reuse the store's records (--resume) or delete it first "
                         "(--fresh), not both")
    if args.out_dir and not args.no_store:
        store = os.path.realpath(args.store or default_store(args.selection))
        reports = {os.path.realpath(Path(args.out_dir) / name) for name in REPORT_FILES}
        if store in reports:
            raise ValueError(f"--store {args.store} is a file the report writes in --out-dir {args.out_dir}; give "
                             "the store another name")


def cmd_table3(args: argparse.Namespace) -> int:
    check_store_options(args)
    store = None if args.no_store else check_output_path(args.store or default_store(args.selection))
    if args.out_dir:
        check_output_path(args.out_dir, folder=True)
    run, meta = _run_from_args(args, store, args.resume)
    summaries = summarize(run)
    print_summary(summaries, args.tie_rule, selection=args.selection)
    print(_report_run(run))
    if args.out_dir:
        write_table3(run, args.out_dir, args.command_line, meta)
        print(f"written: {Path(args.out_dir) / 'table3.md'}, {Path(args.out_dir) / 'table3.csv'}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    out = Path(check_output_path(args.out_dir, folder=True))
    # every argument of Table 3 is checked before the check phase (minutes) runs, not after it
    _protocol_from_args(args)
    check_datasets(args.dataset)
    check_cells(args.kernel)
    store = out / "table3.jsonl"
    if store.exists():
        Table3Store(store).check_recognised()
    out.mkdir(parents=True, exist_ok=True)
    code = 0
    if not args.no_checks:
        print("== 1. every tie between the formulations (tpm-models check) ==", flush=True)
        code = check_ties(args.dataset, robust=not args.no_robust, pyros=not args.no_pyros, jobs=args.jobs,
                          quiet=args.quiet, csv_path=str(out / "checks.csv"))
    print(f"\n== 2. Table 3 ({args.runs} runs{'; --runs 100 for the full protocol' if args.runs < 100 else ''}) ==",
          flush=True)
    run, meta = _run_from_args(args, str(store), resume=True)
    summaries = write_table3(run, out, args.command_line, meta)
    print_summary(summaries, args.tie_rule, selection=args.selection)
    print(_report_run(run))
    print(f"\nwritten: {out / 'table3.md'}, {out / 'table3.csv'}"
          + ("" if args.no_checks else f", {out / 'checks.csv'}")
          + f"; results store {store}")
    if code:
        print("tpm-models reproduce: some ties FAILED (see above)")
    return code


def _common(p: argparse.ArgumentParser, runs: int, jobs: int) -> None:
    p.add_argument("--dataset", nargs="+", default=list(DATASETS), help="iris, wine")
    p.add_argument("--runs", type=at_least_one, default=runs, help="random splits (the paper: 100)")
    p.add_argument("--jobs", type=worker_count, default=jobs,
                   help="worker processes (joblib; with --dask: local workers)")
    p.add_argument("--tie-rule", choices=TIE_RULES, default="first",
                   help="configuration taken among equally accurate ones, in grid order (both are written)")
    p.add_argument("--selection", choices=SELECTIONS, default="train",
                   help="train: the paper's protocol (best training accuracy); cv: also k-fold cross-validation "
                        "inside each training split, both protocols reported side by side (about k+1 times the QPs)")
    p.add_argument("--folds", type=int, default=CV_FOLDS, help="k of --selection cv (stratified, seeded)")
    p.add_argument("--seed", type=int, default=SEED, help="split k uses random_state = SeedSequence([seed, k])")
    p.add_argument("--solver", choices=FAST_SOLVERS, default="daqp")
    p.add_argument("--no-shortcuts", action="store_true",
                   help="solve every alpha (errata 7) and every gamma of inhom. linear (errata 10)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run on Dask through joblib: a scheduler address, or 'local' for a LocalCluster")
    p.add_argument("--fresh", action="store_true", help="delete the results store first")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``table3``, ``robust-table``, ``robust-kernel-table`` and ``reproduce``."""
    t = add_command(sub, "table3")
    _common(t, runs=100, jobs=1)
    t.add_argument("--kernel", nargs="+", default=list(CELLS), choices=list(ALL_CELLS), metavar="CELL",
                   help=f"cells of Table 3: {', '.join(CELLS)} (default: all 14); baselines: {', '.join(BASELINES)}; "
                        "other decision functions: vote-CELL, maxdist-CELL for each cell")
    t.add_argument("--store", help="results store (JSON lines; default runs/table3.jsonl, with --selection cv "
                                   "runs/table3-cv.jsonl)")
    t.add_argument("--resume", action="store_true", help="reuse the store's valid records, compute the rest")
    t.add_argument("--no-store", action="store_true", help="keep the results in memory only")
    t.add_argument("--out-dir", help="write table3.md and table3.csv here")
    t.set_defaults(func=cmd_table3)

    add_robust_command(sub)

    r = add_command(sub, "reproduce")
    _common(r, runs=5, jobs=2)
    r.set_defaults(kernel=list(CELLS))
    r.add_argument("--out-dir", default="runs/reproduce", help="where the report, Table 3 and the store go")
    r.add_argument("--no-checks", action="store_true", help="skip the verification report")
    r.add_argument("--no-robust", action="store_true", help="checks: skip the robust family (22)-(29)")
    r.add_argument("--no-pyros", action="store_true", help="checks: skip PyROS (the slowest tie)")
    r.set_defaults(func=cmd_reproduce)


def _check_outputs(args: argparse.Namespace) -> None:
    """Fail before any work when ``--records`` or ``--out-dir`` cannot be written."""
    check_output_path(args.records)
    if args.out_dir:
        check_output_path(args.out_dir, folder=True)


def cmd_robust_table(args: argparse.Namespace) -> int:
    _check_outputs(args)
    load_before = os.getloadavg()
    start = time.perf_counter()
    records = run_robust_table(args.dataset, args.runs, args.p, args.eps, n_jobs=args.jobs, progress=not args.quiet,
                               solver=args.solver)
    wall = time.perf_counter() - start
    rows = summarize_robust(records)
    for r in rows:
        print(f"{r['dataset']:<5} p={r['p']:<4} eps={r['eps']:<5g} robust {r['robust clean mean']:6.2f} / "
              f"{r['robust attacked mean']:6.2f}   deterministic {r['det clean mean']:6.2f} / "
              f"{r['det attacked mean']:6.2f}   (clean / attacked)")
    print(f"wall time {wall:.1f} s")
    if args.out_dir:
        meta = {**run_metadata(load_before, len(records)), "solver": solver_note(records),
                "wall time": f"{wall:.1f} s"}
        written = write_robust_table(args.out_dir, rows, records, args.command_line, meta, args.records)
        print(f"written: {', '.join(map(str, written))}", file=sys.stderr)
    return 0


def add_robust_command(sub: argparse._SubParsersAction) -> None:
    r = add_command(sub, "robust-table")
    r.add_argument("--dataset", nargs="+", default=["iris", "wine"])
    r.add_argument("--runs", type=at_least_one, default=100)
    r.add_argument("--jobs", type=worker_count, default=1)
    r.add_argument("--p", nargs="+", default=["1", "2", "inf"])
    r.add_argument("--eps", nargs="+", type=float, default=list(EPS_GRID))
    r.add_argument("--out-dir", help="write robust.md and robust.json (the table) here")
    r.add_argument("--records", default="runs/robust_records.json", help="every split's counts (JSON)")
    r.add_argument("--solver", choices=SOLVERS, default="auto",
                   help="backend of (23): Clarabel on the dense conic form (auto = clarabel; no licence)")
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(func=cmd_robust_table)
    add_robust_kernel_command(sub)


def cmd_robust_kernel_table(args: argparse.Namespace) -> int:
    _check_outputs(args)
    p_values = [check_p(p) for p in args.p]
    load_before = os.getloadavg()
    start = time.perf_counter()
    records = run_robust_kernel_table(args.dataset, args.runs, p_values, args.eps, args.sigma, n_jobs=args.jobs,
                                      progress=not args.quiet)
    wall = time.perf_counter() - start
    rows = summarize_robust_kernel(records)
    for r in rows:
        print(f"{r['dataset']:<5} p={r['p']:<4} eps={r['eps']:<5g} (23K) {r['robust clean mean']:6.2f} / "
              f"{r['robust certified mean']:6.2f}-{r['robust search mean']:6.2f}   (19) {r['det clean mean']:6.2f} / "
              f"{r['det certified mean']:6.2f}-{r['det search mean']:6.2f}   (clean / attacked: certified-search)")
    print(f"wall time {wall:.1f} s")
    if args.out_dir:
        meta = {**run_metadata(load_before, len(records), packages=ROBUST_KERNEL_PACKAGES),
                "wall time": f"{wall:.1f} s"}
        md, js = write_robust_kernel_table(args.out_dir, rows, records, args.command_line, meta, args.records)
        print(f"written: {md} (section (23K)), {js}", file=sys.stderr)
    return 0


def add_robust_kernel_command(sub: argparse._SubParsersAction) -> None:
    r = add_command(sub, "robust-kernel-table")
    r.add_argument("--dataset", nargs="+", default=["iris", "wine"])
    r.add_argument("--runs", type=at_least_one, default=100)
    r.add_argument("--jobs", type=worker_count, default=1)
    r.add_argument("--sigma", type=float, default=KERNEL_SIGMA, help="Gaussian kernel width")
    r.add_argument("--p", nargs="+", default=["1", "2", "inf"])
    r.add_argument("--eps", nargs="+", type=float, default=list(EPS_GRID))
    r.add_argument("--out-dir", help="write the (23K) section of robust.md and robust_kernel.json here")
    r.add_argument("--records", default="runs/robust_kernel_records.json", help="every split's counts (JSON)")
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(func=cmd_robust_kernel_table)
