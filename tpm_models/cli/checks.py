"""``tpm-models check``: every tie between the formulations (:mod:`tpm_models.checks`), and the
protocol ties of the experiments (:mod:`tpm_models.experiments.ties`)."""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tpm_models.checks.deterministic import DEFAULT_PARAMETERS, CheckResult, failures, run_checks
from tpm_models.checks.registered import check_registered
from tpm_models.checks.robust import run_robust_checks
from tpm_models.cli.options import add_kernel_options, kernel_from_args, model_key
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.experiments.parallel import parallel_map
from tpm_models.experiments.ties import run_protocol_checks
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


@dataclass(frozen=True)
class CheckTask:
    """One independent group of ties on one data set: ``group`` (a key of :data:`GROUPS`), the data set, and the
    class and ``(nu, alpha)`` it is restricted to (``None``: not split)."""

    group: str
    dataset: str
    c: object = None
    parameters: tuple[float, float] | None = None
    position: int = 0
    """The data set's position in ``--dataset`` (a set named twice is reported twice, as it is run)."""


GROUPS = {
    "deterministic": "deterministic ties",
    "protocol": "protocol ties",
    "oracle": "(25) oracle ties",
    "robust": "robust ties",
    "pyros": "PyROS ties",
}
"""The groups of ties whose wall time ``tpm-models check`` reports, in the order of the report."""


def check_tasks(args: argparse.Namespace) -> list[CheckTask]:
    """Every task of ``tpm-models check`` in the order of the sequential run (and of its report): per data set
    the deterministic ties per ``(nu, alpha)`` and class, the protocol ties, then the robust ties per class (the
    (25) oracle first, PyROS after each class's other ties)."""
    tasks: list[CheckTask] = []
    for k, name in enumerate(args.dataset):
        y = load_dataset(name).y
        classes = [c.item() if hasattr(c, "item") else c for c in np.unique(y)]
        tasks += [CheckTask("deterministic", name, c, params, k)
                  for params, c in itertools.product(DEFAULT_PARAMETERS, classes)]
        tasks.append(CheckTask("protocol", name, position=k))
        if not args.no_robust:
            tasks.append(CheckTask("oracle", name, position=k))
            for c in classes:
                tasks.append(CheckTask("robust", name, c, position=k))
                if not args.no_pyros:
                    tasks.append(CheckTask("pyros", name, c, position=k))
    return tasks


def run_check_task(task: CheckTask, solver: str, cross_solvers: tuple[str, ...] | None,
                   quiet: bool) -> tuple[list[CheckResult], float, float]:
    """The ties of ``task``, the seconds they took and the CPU seconds of this process meanwhile (a module-level
    function: ``--jobs`` runs it in workers)."""
    start, cpu = time.perf_counter(), time.process_time()
    data = load_dataset(task.dataset)
    X, y = min_max_scale(data.X), data.y
    classes = None if task.c is None else [c for c in np.unique(y) if c == task.c]

    def progress(msg: str) -> None:
        print(f"  ... {msg}", file=sys.stderr, flush=True)

    say = None if quiet else progress
    if task.group == "deterministic":
        results = run_checks(X, y, data.name, solver=solver, parameters=[task.parameters], cross_solvers=cross_solvers,
                             progress=say, classes=classes)
    elif task.group == "protocol":
        results = run_protocol_checks(X, y, data.name, progress=say)
    elif task.group == "oracle":
        results = run_robust_checks(X, y, data.name, classes=(), pyros=False)
    else:
        results = run_robust_checks(X, y, data.name, cross_solvers=cross_solvers, pyros=task.group == "pyros",
                                    progress=say, classes=classes, oracle=False, robust=task.group == "robust")
    return results, time.perf_counter() - start, time.process_time() - cpu


def _indexed(index: int, task: CheckTask, solver: str, cross_solvers: tuple[str, ...] | None,
             quiet: bool) -> tuple[int, list[CheckResult], float, float]:
    return (index, *run_check_task(task, solver, cross_solvers, quiet))


def cmd_check(args: argparse.Namespace) -> int:
    if args.csv:
        check_output_path(args.csv)
    start = time.perf_counter()
    cross = tuple(args.cross_solvers) if args.cross_solvers else None
    if args.model:
        return _check_models(args, start)
    jobs = max(1, getattr(args, "jobs", 1) or 1)  # reproduce hands its own --jobs
    tasks = check_tasks(args)
    calls = [(i, task, args.solver, cross, args.quiet) for i, task in enumerate(tasks)]
    done: list[tuple[int, list[CheckResult], float, float]] = []
    try:
        if jobs == 1:
            for call in calls:
                done.append(_indexed(*call))
        else:  # the longest tasks first (the larger data set first), so that no worker is left with one long task
            points = {name: len(load_dataset(name).y) for name in args.dataset}
            first = sorted(calls, key=lambda call: (_LONGEST_FIRST.index(call[1].group), -points[call[1].dataset]))
            for item in parallel_map(_indexed, first, n_jobs=min(jobs, len(calls))):
                done.append(item)
    except KeyboardInterrupt:  # keep what was measured: the CSV of the ties so far
        measured = [r for _, rows, *_ in sorted(done, key=lambda d: d[0]) for r in rows]
        if args.csv:
            _write_csv(measured, args.csv)
        raise KeyboardInterrupt(f"{len(measured)} ties measured in {len(done)} of {len(tasks)} groups"
                                + (f", written to {args.csv}" if args.csv else "")) from None
    done.sort(key=lambda d: d[0])
    all_results: list[CheckResult] = []
    for k, name in enumerate(args.dataset):
        results = [r for i, rows, *_ in done if tasks[i].position == k for r in rows]
        all_results += results
        print(f"\n== {load_dataset(name).name}: {len(results)} ties measured, {len(failures(results))} failed ==")
        _print_check_table(results)
    bad = failures(all_results)
    _print_rows(all_results, args)
    wall = time.perf_counter() - start
    _print_group_times(tasks, done, jobs)
    print(f"\n{len(all_results)} ties, {len(bad)} failed, {wall:.1f} s "
          f"(solver {args.solver}; cross-solver: {', '.join(cross or available_solvers('QP'))}; --jobs {jobs})")
    return 1 if bad else 0


def _print_group_times(tasks: Sequence[CheckTask], done: Sequence[tuple[int, list, float, float]],
                       jobs: int) -> None:
    """The wall time of every group of ties on every data set (with ``--jobs`` > 1: summed over its tasks, which
    ran side by side), and the CPU time of the processes that ran it (below the wall time on a busy machine)."""
    seconds: dict[tuple[str, int], list[float]] = {}
    cpu: dict[tuple[str, int], float] = {}
    rows: dict[tuple[str, int], int] = {}
    names: dict[int, str] = {}
    for i, results, sec, cpu_sec in done:
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


_LONGEST_FIRST = ("robust", "pyros", "deterministic", "protocol", "oracle")
"""The groups by the time of one task, longest first (measured: robust ties of a class 20-60 s, PyROS of a class
5-15 s, deterministic ties of a class and (nu, alpha) 5-10 s)."""


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
                print(f"  ... ({info.eq}) on {data.name}", file=sys.stderr, flush=True)
            results += check_registered(info.eq, min_max_scale(data.X), data.y, data.name, args.nu, args.alpha,
                                        kernel=kernel, p=args.p, eps=args.eps, solvers=args.cross_solvers or None)
    print(f"\n== the generic ties of {', '.join(f'({m})' for m in args.model)}: {len(results)} measured, "
          f"{len(failures(results))} failed ==")
    _print_check_table(results)
    _print_rows(results, args)
    bad = failures(results)
    print(f"\n{len(results)} ties, {len(bad)} failed, {time.perf_counter() - start:.1f} s")
    return 1 if bad else 0


def _print_rows(results: Sequence[CheckResult], args: argparse.Namespace) -> None:
    bad = failures(results)
    if args.all or bad:
        print("\nrows" + (" (failed only)" if not args.all else "") + ":")
        for r in results if args.all else bad:
            flag = 'skip' if r.skipped else 'pass' if r.passed else 'FAIL'
            print(f"  {flag} {r.tie:<40} {r.instance:<45} {r.residual:.2e} {r.note}")
    if args.csv:
        _write_csv(results, args.csv)


def _write_csv(results: Sequence[CheckResult], path: str) -> None:
    with open(path, "w", newline="") as fh:
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
    c = sub.add_parser("check", help="run every tie between the formulations")
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
