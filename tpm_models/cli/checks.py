"""``tpm-models check``: every tie between the formulations (:mod:`tpm_models.checks`), and the
protocol ties of the experiments (:mod:`tpm_models.experiments.ties`), run by
:mod:`tpm_models.experiments.checks_run`; this module parses and prints."""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Sequence

from tpm_models.checks.deterministic import CheckResult, failures
from tpm_models.checks.registered import check_registered
from tpm_models.cli.commands import add_command
from tpm_models.cli.options import add_kernel_options, kernel_from_args, model_key
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.experiments.checks_run import GROUPS, TieRun, TiesInterrupted, run_ties
from tpm_models.files import replacing
from tpm_models.models.registry import model_info
from tpm_models.solvers.backends.registry import available_solvers
from tpm_models.validation import check_output_path


def _print_check_table(results: Sequence[CheckResult]) -> None:
    worst: dict[str, CheckResult] = {}
    counts: dict[str, int] = {}
    for r in results:
        counts[r.tie] = counts.get(r.tie, 0) + 1
        if r.tie not in worst or not (r.residual <= worst[r.tie].residual):
            worst[r.tie] = r
    print(f"{'tie':<44} {'n':>4} {'worst residual':>14} {'tolerance':>9}  {'result':<6} worst instance")
    for tie, r in worst.items():
        rows = [x for x in results if x.tie == tie]
        flag = "skip" if all(x.skipped for x in rows) else "pass" if all(x.passed for x in rows) else "FAIL"
        print(f"{tie:<44} {counts[tie]:>4} {r.residual:>14.2e} {r.tolerance:>9.0e}  {flag:<6} {r.instance}")


def cmd_check(args: argparse.Namespace) -> int:
    if args.csv:
        check_output_path(args.csv)
    if args.model:
        return _check_models(args, time.perf_counter())
    return check_ties(args.dataset, args.solver, args.cross_solvers, robust=not args.no_robust,
                      pyros=not args.no_pyros, jobs=args.jobs, quiet=args.quiet, csv_path=args.csv, show_all=args.all)


def check_ties(datasets: Sequence[str], solver: str = "default", cross_solvers: Sequence[str] | None = None,
               robust: bool = True, pyros: bool = True, jobs: int = 1, quiet: bool = False,
               csv_path: str | None = None, show_all: bool = False) -> int:
    """Run every tie (:func:`tpm_models.experiments.checks_run.run_ties`) and print the report (``check`` and
    ``reproduce``); ``csv_path``: every row, also written after a Ctrl-C. Exit code 1 when a tie failed."""
    start = time.perf_counter()
    try:
        run = run_ties(datasets, solver, cross_solvers, robust, pyros, jobs, quiet)
    except TiesInterrupted as stop:
        if csv_path:
            _write_csv(stop.run.rows, csv_path)
        raise KeyboardInterrupt(str(stop) + (f", written to {csv_path}" if csv_path else "")) from None
    for k, name in enumerate(datasets):
        results = run.rows_of(k)
        print(f"\n== {load_dataset(name).name}: {len(results)} ties measured, {len(failures(results))} failed ==")
        _print_check_table(results)
    all_results = run.rows
    bad = failures(all_results)
    _print_rows(all_results, show_all, csv_path)
    wall = time.perf_counter() - start
    _print_group_times(run)
    cross = tuple(cross_solvers) if cross_solvers else None
    print(f"\n{len(all_results)} ties, {len(bad)} failed, {wall:.1f} s "
          f"(solver {solver}; cross-solver: {', '.join(cross or available_solvers('QP'))}; --jobs {run.jobs})")
    return 1 if bad else 0


def _print_group_times(run: TieRun) -> None:
    """The wall time of every group of ties on every data set (with ``--jobs`` > 1: summed over its tasks, which
    ran side by side), and the CPU time of the processes that ran it (below the wall time on a busy machine)."""
    seconds: dict[tuple[str, int], list[float]] = {}
    cpu: dict[tuple[str, int], float] = {}
    rows: dict[tuple[str, int], int] = {}
    names: dict[int, str] = {}
    tasks, jobs = run.tasks, run.jobs
    for d in run.done:
        i, results, sec, cpu_sec = d.index, d.rows, d.seconds, d.cpu_seconds
        key = (tasks[i].group, tasks[i].position)
        seconds.setdefault(key, []).append(sec)
        cpu[key] = cpu.get(key, 0.0) + cpu_sec
        rows[key] = rows.get(key, 0) + len(results)
        if tasks[i].position not in names:
            names[tasks[i].position] = load_dataset(tasks[i].dataset).name
    how = "in this process" if jobs == 1 else f"summed over its tasks; {jobs} worker processes"
    print(f"\nwall time per group of ties ({how}):")
    for group, label in GROUPS.items():
        for (g, k), secs in seconds.items():
            if g == group and rows[g, k]:
                print(f"  {label} {names[k]}: {sum(secs):.1f} s (CPU {cpu[g, k]:.1f} s; {rows[g, k]} rows, "
                      f"{len(secs)} task{'s' if len(secs) > 1 else ''}, longest {max(secs):.1f} s)")


def _check_models(args: argparse.Namespace, start: float) -> int:
    """``check --model KEY...``: the generic ties of registered models, every class of every data set."""
    kernel = kernel_from_args(args)
    results: list[CheckResult] = []
    for eq in args.model:
        info = model_info(eq)
        info.options(kernel, args.p, args.eps)  # a clear error before any solve
        for name in args.dataset:
            data = load_dataset(name)
            if not args.quiet:
                print(f"  ... ({info.key}) on {data.name}", file=sys.stderr, flush=True)
            results += check_registered(info.key, min_max_scale(data.X), data.y, data.name, args.nu, args.alpha,
                                        kernel=kernel, p=args.p, eps=args.eps, solvers=args.cross_solvers or None)
    print(f"\n== the generic ties of {', '.join(f'({m})' for m in args.model)}: {len(results)} measured, "
          f"{len(failures(results))} failed ==")
    _print_check_table(results)
    _print_rows(results, args.all, args.csv)
    bad = failures(results)
    print(f"\n{len(results)} ties, {len(bad)} failed, {time.perf_counter() - start:.1f} s")
    return 1 if bad else 0


def _print_rows(results: Sequence[CheckResult], show_all: bool, csv_path: str | None) -> None:
    bad = failures(results)
    if show_all or bad:
        print("\nrows" + (" (failed only)" if not show_all else "") + ":")
        for r in results if show_all else bad:
            flag = 'skip' if r.skipped else 'pass' if r.passed else 'FAIL'
            print(f"  {flag} {r.tie:<40} {r.instance:<45} {r.residual:.2e} {r.note}")
    if csv_path:
        _write_csv(results, csv_path)


def _write_csv(results: Sequence[CheckResult], path: str) -> None:
    with replacing(path, newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["tie", "instance", "residual", "tolerance", "passed", "note"])
        for r in results:
            writer.writerow([r.tie, r.instance, f"{r.residual:.6e}", r.tolerance, r.passed, r.note])


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """``check``."""
    c = add_command(sub, "check")
    c.add_argument("--dataset", nargs="+", default=["iris", "wine"])
    c.add_argument("--solver", default="default")
    c.add_argument("--cross-solvers", nargs="*", help="solvers compared on (15), (16) (default: all installed)")
    c.add_argument("--no-robust", action="store_true", help="skip the robust family (22)-(29)")
    c.add_argument("--no-pyros", action="store_true", help="skip PyROS (the slowest tie)")
    c.add_argument("--all", action="store_true", help="print every row, not only the failed ones")
    c.add_argument("--csv", help="write every row to this CSV file")
    c.add_argument("--quiet", action="store_true", help="no progress lines")
    c.add_argument("--jobs", type=_positive_int, default=2,
                   help="worker processes for the independent groups of ties (data set x group x class; default 2, "
                        "1: all in this process); the same rows either way")
    c.add_argument("--model", type=model_key, nargs="+",
                   help="only the generic ties (cross-solver; a registered dual's gap) of these models, "
                        "e.g. a model a --plugin registers")
    c.add_argument("--nu", type=float, default=0.3, help="with --model (default 0.3)")
    c.add_argument("--alpha", type=float, default=1.0, help="with --model (default 1)")
    c.add_argument("--p", help="with --model, robust models: the norm of (21)")
    c.add_argument("--eps", type=float, help="with --model, robust models: the radius of (21)")
    add_kernel_options(c)
    c.set_defaults(func=cmd_check)
