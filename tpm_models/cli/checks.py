"""``tpm-models check``: every tie between the formulations (:mod:`tpm_models.checks`), and the
protocol ties of the experiments (:mod:`tpm_models.experiments.ties`)."""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Sequence

from tpm_models.checks.deterministic import CheckResult, failures, run_checks
from tpm_models.checks.registered import check_registered
from tpm_models.checks.robust import run_robust_checks
from tpm_models.cli.options import add_kernel_options, kernel_from_args, model_key
from tpm_models.data import load_dataset, min_max_scale
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


def cmd_check(args: argparse.Namespace) -> int:
    if args.csv:
        check_output_path(args.csv)
    all_results: list[CheckResult] = []
    start = time.perf_counter()
    cross = args.cross_solvers if args.cross_solvers else None
    if args.model:
        return _check_models(args, start)
    for name in args.dataset:
        data = load_dataset(name)
        X = min_max_scale(data.X)

        def progress(msg: str) -> None:
            print(f"  ... {msg}", file=sys.stderr, flush=True)

        results = run_checks(
            X, data.y, data.name, solver=args.solver, cross_solvers=cross,
            progress=None if args.quiet else progress,
        )
        results += run_protocol_checks(X, data.y, data.name, progress=None if args.quiet else progress)
        if not args.no_robust:
            results += run_robust_checks(X, data.y, data.name, cross_solvers=args.cross_solvers or None,
                                         pyros=not args.no_pyros, progress=None if args.quiet else progress)
        all_results += results
        print(f"\n== {data.name}: {len(results)} ties measured, {len(failures(results))} failed ==")
        _print_check_table(results)
    bad = failures(all_results)
    _print_rows(all_results, args)
    print(f"\n{len(all_results)} ties, {len(bad)} failed, {time.perf_counter() - start:.1f} s "
          f"(solver {args.solver}; cross-solver: {', '.join(cross or available_solvers('QP'))})")
    return 1 if bad else 0


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
        with open(args.csv, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["tie", "instance", "residual", "tolerance", "passed", "note"])
            for r in results:
                writer.writerow([r.tie, r.instance, f"{r.residual:.6e}", r.tolerance, r.passed, r.note])


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
    c.add_argument("--model", type=model_key, nargs="+",
                   help="only the generic ties (cross-solver; a registered dual's gap) of these models, "
                        "e.g. a model a --plugin registers")
    c.add_argument("--nu", type=float, default=0.3, help="with --model (default 0.3)")
    c.add_argument("--alpha", type=float, default=1.0, help="with --model (default 1)")
    c.add_argument("--p", help="with --model, robust models: the norm of (21)")
    c.add_argument("--eps", type=float, help="with --model, robust models: the radius of (21)")
    add_kernel_options(c)
    c.set_defaults(func=cmd_check)
