"""``python -m benchmarks bench``: the timings of the fast path (per-QP solver times, one fit, every cell of Table 3),
and ``bench builders`` / ``estimators`` / ``scale`` / ``certificate`` / ``counterpart``
(:mod:`benchmarks.bench`, :mod:`~benchmarks.bench_builders`,
:mod:`~benchmarks.bench_estimators`, :mod:`~benchmarks.bench_scale`,
:mod:`~benchmarks.bench_certificate`, :mod:`~benchmarks.bench_counterpart`).
Benchmarks print numbers; nothing here asserts a speed."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time

import pandas as pd

from benchmarks import HELP, bench_backends
from benchmarks import bench_builders as bench_builders_module
from benchmarks.bench import BENCH_KERNELS, fit_time, load, per_qp_times, pipeline_time
from benchmarks.bench_builders import (
    bench_builders,
    bench_estimators,
    builders_table,
    estimators_table,
    machine,
)
from benchmarks.bench_certificate import LARGE_MODELS, PAPER_MODELS, synthetic, time_solves
from benchmarks.bench_check import bench_check, check_table
from benchmarks.bench_counterpart import bench_counterpart
from benchmarks.bench_dask import DEFAULT_POINTS as DASK_POINTS
from benchmarks.bench_dask import WORKER_MEMORY, bench_dask
from benchmarks.bench_estimators import BENCH_KERNELS as SCALED_KERNELS
from benchmarks.bench_estimators import CSV_COLUMNS as SCALED_CSV_COLUMNS
from benchmarks.bench_estimators import MODELS as SCALED_MODELS
from benchmarks.bench_estimators import (
    SMALL_CSV_COLUMNS,
    bench_scaled,
    bench_small,
    scaled_csv_rows,
    scaled_table,
    small_csv_rows,
    small_table,
)
from benchmarks.bench_linear import LINEAR_CSV_COLUMNS, bench_crossover, bench_linear, crossover_table, linear_csv_rows
from benchmarks.bench_robust import bench_robust, robust_table
from benchmarks.bench_scale import CSV_COLUMNS as SCALE_CSV_COLUMNS
from benchmarks.bench_scale import (
    SCALE_MODELS,
    accuracy_table,
    bench_scale,
    bytecode_cached,
    parse_models,
    read_scale_reference,
    scale_csv_rows,
    scale_table,
)
from benchmarks.pages import measured_line, write_rows
from benchmarks.survey import markdown_table
from tpm_models.cli.options import at_least_one, worker_count
from tpm_models.cli.options import seconds as time_limit_seconds
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.experiments.table3 import CELLS, DATASETS, PAPER_TABLE3, RATIOS, Protocol, run_table3, summarize
from tpm_models.files import write_text
from tpm_models.models.norms import check_p
from tpm_models.validation import json_safe


def cmd_bench_builders(args: argparse.Namespace) -> int:
    """``python -m benchmarks bench builders``: :mod:`benchmarks.bench_builders` (Pyomo builders beside linopy)."""
    print(f"python -m benchmarks bench builders: {machine()}")
    rows = bench_builders(args.sizes, linopy=not args.no_linopy, progress=None if args.quiet else print,
                          repeats=args.repeats or 1)
    print(builders_table(rows))
    _write_csv(args, bench_builders_module.CSV_COLUMNS, bench_builders_module.builders_csv_rows(rows))
    return 0


def _write_csv(args: argparse.Namespace, columns: tuple[str, ...], rows: list[dict[str, str]]) -> None:
    """With ``--csv PATH``: the page's rows to ``PATH`` (:func:`benchmarks.pages.write_rows`), and the line the page
    states beside them (date, load average, command: :func:`benchmarks.pages.measured_line`)."""
    if args.csv:
        print(f"wrote {write_rows(args.csv, columns, rows)}")
    print(measured_line(getattr(args, "command_line", "python -m benchmarks bench " + args.what)))


def cmd_bench_estimators(args: argparse.Namespace) -> int:
    """``python -m benchmarks bench estimators``: one-versus-all fits beside ``SVC(kernel="linear")`` on Iris and Wine
    (with ``--csv``, their rows: :data:`benchmarks.bench_estimators.SMALL_CSV_COLUMNS`); with ``--sizes``,
    :mod:`benchmarks.bench_estimators` at those sizes and ``--kernel`` kernels."""
    print(f"python -m benchmarks bench estimators: {machine()}")
    if args.linear or args.crossover:
        return _bench_linear(args)
    if args.sizes is None and args.processes:
        unknown = [d for d in args.dataset if d not in DATASETS]
        if unknown:
            raise SystemExit(f"bench estimators --dataset takes {' '.join(DATASETS)}; got {' '.join(unknown)}")
        rows = bench_small(args.dataset, args.processes, 50 if args.repeats is None else args.repeats,
                           progress=None if args.quiet else print)
        print(small_table(rows))
        print(f"\n{machine()}")
        _write_csv(args, SMALL_CSV_COLUMNS, small_csv_rows(rows))
        return 0
    if args.sizes is None:
        rows = bench_estimators(args.repeats or 200)
        print(estimators_table(rows))
        _write_csv(args, SMALL_CSV_COLUMNS, small_csv_rows(rows))
        return 0
    kernels = args.kernel if args.kernel is not None else list(SCALED_KERNELS)
    unknown = [k for k in kernels if k not in SCALED_KERNELS]
    if unknown:
        raise SystemExit(f"bench estimators --kernel takes {' '.join(SCALED_KERNELS)}; got {' '.join(unknown)}")
    models = args.models or list(SCALED_MODELS)
    unknown = [m for m in models if m not in SCALED_MODELS]
    if unknown:
        print(f"python -m benchmarks bench estimators: unknown --models {unknown}; choose from {list(SCALED_MODELS)}",
              file=sys.stderr)
        return 2
    rows = bench_scaled(args.sizes, kernels, timeout=args.timeout, progress=None if args.quiet else print,
                        models=models, processes=args.processes or 1)
    print(scaled_table(rows))
    print(f"\n{machine()}")
    _write_csv(args, SCALED_CSV_COLUMNS, scaled_csv_rows(rows))
    return 0


def cmd_bench_check(args: argparse.Namespace) -> int:
    """``python -m benchmarks bench check``: :mod:`benchmarks.bench_check`, the runs' table and the measured line."""
    print(f"python -m benchmarks bench check: {machine()}")
    runs = bench_check(args.dataset, args.repeats or 3, args.jobs, args.against,
                       progress=None if args.quiet else print)
    print(check_table(runs))
    print(measured_line(getattr(args, "command_line", "python -m benchmarks bench check")))
    return 0 if all(r["status"] == 0 and r["failed"] == 0 for r in runs) else 1


def _bench_linear(args: argparse.Namespace) -> int:
    """``bench estimators --crossover`` (the dense against the linear path by points per class, the table printed)
    and ``--linear`` (``backend="linear-decomposition"`` beside ``LinearSVC`` at ``--sizes``, with ``--csv`` the
    rows of ``docs/notes/bench-estimators-linear.csv``): :mod:`benchmarks.bench_linear`."""
    progress = None if args.quiet else print
    if args.crossover:
        print(crossover_table(bench_crossover(repeats=args.repeats or 20, progress=progress)))
        print(measured_line(getattr(args, "command_line", "python -m benchmarks bench estimators --crossover")))
    if args.linear:
        rows = bench_linear(args.sizes or (10_000, 100_000), args.repeats or 3, timeout=args.timeout,
                            progress=progress)
        print(json.dumps(rows, indent=1))
        _write_csv(args, LINEAR_CSV_COLUMNS, linear_csv_rows(rows))
    return 0


def cmd_bench_scale(args: argparse.Namespace) -> int:
    """``python -m benchmarks bench scale``: :mod:`benchmarks.bench_scale` (the models at scale beside cvxpy)."""
    try:
        models = parse_models(args.models) if args.models else SCALE_MODELS
    except ValueError as exc:
        print(f"python -m benchmarks bench scale: {exc}", file=sys.stderr)
        return 2
    if args.seeds and min(args.seeds) < 0:
        print(f"python -m benchmarks bench scale: --seeds must be integers >= 0 (make_classification's "
              f"random_state), got {min(args.seeds)}", file=sys.stderr)
        return 2
    if args.repeats is not None and args.repeats < 1:
        print(f"python -m benchmarks bench scale: --repeats must be >= 1, got {args.repeats}", file=sys.stderr)
        return 2
    if not args.no_cvxpy and importlib.util.find_spec("cvxpy") is None:
        print("python -m benchmarks bench scale: cvxpy is not installed (pip install -e '.[bench]'), or pass "
              "--no-cvxpy", file=sys.stderr)
        return 2
    print(f"python -m benchmarks bench scale: {machine()}")
    cached, modules = bytecode_cached()
    print(f"tpm_models' bytecode cached for {cached} of its {modules} modules" + (
        "" if cached == modules else ": the others are compiled again by each process, 0.1 s of its wall time when "
        "none is cached (python -m compileall on the package, or make bytecode, caches them as pip install does)"))
    print("the data drawn here once per size and seed, read from a file by each process (neither side imports "
          "scikit-learn)")
    rows = bench_scale(args.sizes or [10_000, 100_000], models, cvxpy=not args.no_cvxpy, timeout=args.timeout,
                       progress=None if args.quiet else print, seeds=args.seeds or [0], repeats=args.repeats or 1)
    print(scale_table(rows))
    print(f"({load()})")
    _write_csv(args, SCALE_CSV_COLUMNS, scale_csv_rows(rows))
    if args.reference:
        print("\nagainst the reference of (23) at the same p (docs/reference/cvxpy_scale.py):")
        print(accuracy_table(rows, read_scale_reference(args.reference)))
    if args.json:
        write_text(args.json, json.dumps(json_safe(rows), indent=1, allow_nan=False))
    return 0


def cmd_bench_backends(args: argparse.Namespace) -> int:
    """``python -m benchmarks bench backends``: :mod:`benchmarks.bench_backends` (every installed backend on each
    model and size, against the certified default)."""
    try:
        models = bench_backends.parse_models(args.models) if args.models else bench_backends.SURVEY_MODELS
    except ValueError as exc:
        print(f"python -m benchmarks bench backends: {exc}", file=sys.stderr)
        return 2
    print(f"python -m benchmarks bench backends: {machine()}")
    print(f"({load()})")
    rows = bench_backends.bench_backends(args.sizes or [1_000, 10_000, 100_000], models, args.solvers,
                                         args.time_limit or bench_backends.TIME_LIMIT, args.memory_gb,
                                         args.store, args.resume, progress=None if args.quiet else print,
                                         run=not args.no_run)
    print(bench_backends.pivot_table(rows))
    print()
    print(bench_backends.backends_table(rows))
    print(f"({load()})")
    _write_csv(args, bench_backends.CSV_COLUMNS, bench_backends.csv_rows(rows))
    if args.json:
        write_text(args.json, json.dumps(json_safe(rows), indent=1, allow_nan=False))
    return 0


def cmd_bench_certificate(args: argparse.Namespace) -> int:
    """``python -m benchmarks bench certificate``: :mod:`benchmarks.bench_certificate` (what the certificate costs
    inside ``solve()``), on Iris and Wine or, with ``--points``, a synthetic set of that size."""
    if args.points is None:
        sets = [(name, min_max_scale(load_dataset(name).X), load_dataset(name).y) for name in ("iris", "wine")]
        models, solver = PAPER_MODELS, "default"
    else:
        sets = [(f"synthetic {args.points}", *synthetic(args.points))]
        models, solver = LARGE_MODELS, "clarabel"
    for name, X, y in sets:
        for eq, seconds, cert, level in time_solves(X, y, models, solver, args.repeats or 5):
            print(f"({eq}) {name}: solve {seconds * 1e3:9.1f} ms, certificate {cert * 1e3:8.1f} ms "
                  f"({100 * cert / seconds:4.1f}%), {level}")
    return 0


def cmd_bench_counterpart(args: argparse.Namespace) -> int:
    """``python -m benchmarks bench counterpart``: :mod:`benchmarks.bench_counterpart` (the derivation of (15)'s
    counterpart at ``--sizes`` points against solving it)."""
    rows = bench_counterpart(args.sizes or [10_000, 100_000], check_p(args.p), args.solver or "clarabel")
    print(markdown_table(pd.DataFrame(rows).set_index("points")))
    return 0


def cmd_bench_dask(args: argparse.Namespace) -> int:
    """``python -m benchmarks bench dask``: :mod:`benchmarks.bench_dask` (the linear one-versus-all fit at --points,
    default 10^7, on a LocalCluster with --worker-memory per worker, beside n_jobs=1 in this process)."""
    if args.workers < 2:
        raise SystemExit("bench dask --workers: at least 2 (joblib runs the call of a one-worker cluster in this "
                         "process: there would be nothing to measure)")
    print(f"python -m benchmarks bench dask: {machine()}")
    bench_dask(args.points or DASK_POINTS, n_workers=args.workers, worker_memory_limit=args.worker_memory)
    print(measured_line(getattr(args, "command_line", "python -m benchmarks bench dask")))
    return 0


def cmd_bench_robust(args: argparse.Namespace) -> int:
    """``python -m benchmarks bench robust``: :mod:`benchmarks.bench_robust` (RobustTPMSVMOneVsAll at p = 2 with one
    radius by the closed form, beside the SOCP (28) by Clarabel, fresh processes)."""
    print(f"python -m benchmarks bench robust: {machine()}")
    rows = bench_robust(args.sizes or [10_000, 100_000], timeout=args.timeout or 1200.0,
                        progress=None if args.quiet else print)
    print(robust_table(rows))
    print(measured_line(getattr(args, "command_line", "python -m benchmarks bench robust")))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    if args.what == "robust":
        return cmd_bench_robust(args)
    if args.what == "dask":
        return cmd_bench_dask(args)
    if args.what == "certificate":
        return cmd_bench_certificate(args)
    if args.what == "counterpart":
        return cmd_bench_counterpart(args)
    if args.what == "scale":
        return cmd_bench_scale(args)
    if args.what == "backends":
        return cmd_bench_backends(args)
    if args.what == "builders":
        args.sizes = args.sizes or [10_000, 100_000]
        return cmd_bench_builders(args)
    if args.what == "estimators":
        return cmd_bench_estimators(args)
    if args.what == "check":
        return cmd_bench_check(args)
    args.kernel = args.kernel or list(CELLS)
    bad = [k for k in args.kernel if k not in CELLS]
    if bad:
        raise SystemExit(f"bench --kernel takes cells of Table 3 ({', '.join(CELLS)}); got {' '.join(bad)}")
    print(f"python -m benchmarks bench: {load()}")
    if not args.no_solvers:
        print(f"\nper-QP time on the (19) QPs of {args.qp_dataset} split 0 ({len(BENCH_KERNELS)} kernels x classes "
              f"x {len(RATIOS)} values of nu/alpha):")
        times = per_qp_times(args.qp_dataset)
        fastest = min(v for k, v in times.items() if "pyomo" not in k)
        for name, t in times.items():
            print(f"  {name:<48} {t * 1e6:10.1f} us/QP   {t / fastest:6.2f} x fastest")
        t = pipeline_time(args.qp_dataset)
        print(f"  {'whole pipeline per QP (+ recovery, decision)':<48} {t * 1e6:10.1f} us/QP   "
              f"{t / fastest:6.2f} x fastest")
        med, best = fit_time()
        print(f"\none multiclass fit on Iris (112 points, 3 classes, linear, fast path): median {med * 1e3:.3f} ms, "
              f"min {best * 1e3:.3f} ms   ({load()})")
    start = time.perf_counter()
    run = run_table3(args.dataset, args.kernel, args.runs, Protocol(shortcuts=not args.no_shortcuts),
                     n_jobs=args.jobs, progress=not args.quiet)
    wall = time.perf_counter() - start
    print(f"\nTable 3 cells, {args.runs} runs, --jobs {args.jobs}, shortcuts "
          f"{'off' if args.no_shortcuts else 'on'}:")
    print(f"{'data':<5} {'kernel':<16} {'QPs':>9} {'compute s':>10} {'QPs/s':>8} {'paper CPU s':>12} "
          f"{'paper/ours':>10}")
    for s in summarize(run):
        pc = PAPER_TABLE3[(s.dataset, s.cell)][2]
        ratio = f"{pc / s.seconds:10.0f}" if pc else f"{'—':>10}"
        print(f"{s.dataset:<5} {s.cell:<16} {s.qps:>9} {s.seconds:>10.2f} {s.qps / s.seconds:>8.0f} "
              f"{(f'{pc:.2f}' if pc else '—'):>12} {ratio}")
    print(f"\nwall time {wall:.1f} s for {len(run.records)} splits (incl. process start-up), {load()}")
    return 0


def add_parsers(sub) -> None:
    """Register ``bench``."""
    b = sub.add_parser("bench", help=HELP["bench"])
    b.add_argument("what", nargs="?", default="table3",
                   choices=["table3", "builders", "estimators", "scale", "backends", "certificate", "counterpart",
                            "dask", "robust", "check"],
                   help="table3 (default): the fast path; builders: (15), (23) p=2, (28) at --sizes points, n=20, "
                   "build/.lp/.nl seconds and peak memory beside linopy; estimators: Iris/Wine one-versus-all fits "
                   "beside scikit-learn's SVC(kernel='linear'), or with --sizes synthetic sets of those sizes "
                   "beside SVC and LinearSVC; scale: (15), (23), (26)-(29) at --sizes points built and solved by "
                   "the default solver beside cvxpy + Clarabel, each in a fresh process; backends: every installed "
                   "backend that takes the model on (15), (23), (26)-(29), their duals and (22) by cutting planes "
                   "at --sizes points (default 1000 10000 100000), against the certified default, each solve in a "
                   "fresh process; certificate: what the "
                   "certificate costs inside solve() (Iris and Wine, or --points); counterpart: the derivation of "
                   "(15)'s counterpart at --sizes points against solving it; dask: the linear one-versus-all fit at "
                   "--points (default 10^7) on a LocalCluster of --workers workers with --worker-memory each, beside "
                   "n_jobs=1 here; check: tpm-models check on --dataset with --jobs workers, --repeats fresh runs "
                   "(default 3), with --against PATH that checkout's run before each of ours")
    b.add_argument("--sizes", nargs="+", type=int, default=None,
                   help="bench builders, bench scale: numbers of points (default 10000 100000); bench estimators: "
                   "numbers of points of the synthetic sets (none: Iris and Wine)")
    b.add_argument("--models", nargs="+", metavar="MODEL",
                   help="bench scale: models EQ[:P], e.g. 15 23:1.5 26:1.5 27 28 29 (default: those of "
                   "docs/bench-scale.md); "
                   "bench backends: also 16, 23D:P, 27D, 28D, 29D and 22:P (cutting planes); "
                   f"bench estimators --sizes: which of {', '.join(SCALED_MODELS)} to fit (default all)")
    b.add_argument("--solvers", nargs="+", default=None,
                   help="bench backends: only these backends (default: every installed one that takes the model)")
    b.add_argument("--time-limit", type=time_limit_seconds, default=None,
                   help=f"bench backends: seconds per solve (default {bench_backends.TIME_LIMIT:g})")
    b.add_argument("--memory-gb", type=float, default=bench_backends.MEMORY_LIMIT_GB,
                   help="bench backends: address-space limit of each solve's process")
    b.add_argument("--store", help="bench backends: append every row to this results store (JSON lines)")
    b.add_argument("--resume", action="store_true", help="bench backends: reuse the rows of an existing --store")
    b.add_argument("--no-run", action="store_true", help="bench backends: print the rows --store holds, run nothing")
    b.add_argument("--no-cvxpy", action="store_true", help="bench scale: skip cvxpy + Clarabel")
    b.add_argument("--seeds", nargs="+", type=int, default=None,
                   help="bench scale: the data drawn with each of these seeds of make_classification (default 0)")
    b.add_argument("--timeout", type=float, default=3600.0,
                   help="bench scale: seconds per process; bench estimators --sizes: seconds per fit")
    b.add_argument("--json", help="bench scale, backends: also write the rows to this JSON file")
    b.add_argument("--csv", help="bench backends, builders, estimators, scale: also write the page's rows to "
                   "this CSV file (docs/notes/bench-<what>.csv; python -m benchmarks.plot_<what> draws its figure; "
                   "bench estimators on Iris and Wine: docs/notes/bench-estimators-iris-wine.csv)")
    b.add_argument("--reference", help="bench scale: the CSV of docs/reference/cvxpy_scale.py, to print the accuracy")
    b.add_argument("--no-linopy", action="store_true", help="bench builders: skip linopy")
    b.add_argument("--repeats", type=int, default=None,
                   help="bench estimators: fits per median (default 200; with --processes, 50 after the first fit "
                   "of each process); bench certificate: solves per model (5); bench scale: processes per side and "
                   "row, ours and cvxpy's in turn, the median's row printed (default 1); bench builders: fresh "
                   "processes per side and row, Pyomo's and linopy's in turn, each number their median (default 1)")
    b.add_argument("--processes", type=int, default=0,
                   help="bench estimators (Iris, Wine): fit in this many fresh processes per model and data set "
                   "(--dataset), alternating ours and SVC: the first fit and the warm median of each, medians over "
                   "the processes (default 0: every fit in this process); with --sizes, fit each model in this many "
                   "fresh processes per row, the models in turn, each number their median (default 1)")
    b.add_argument("--linear", action="store_true",
                   help="bench estimators: backend='linear-decomposition' beside LinearSVC at --sizes (default 10000 "
                   "100000), --repeats fresh processes each (default 3), our distance to the dense path's optimum "
                   "up to 10,000 points (benchmarks.bench_linear)")
    b.add_argument("--crossover", action="store_true",
                   help="bench estimators: the dense against the linear path at 10-400 points per class, --repeats "
                   "fits each (default 20) in one fresh process per size (the threshold of backend='auto')")
    b.add_argument("--points", type=int, default=None,
                   help="bench certificate: a synthetic set of this size (default: Iris and Wine); bench dask: the "
                   "points of make_classification (default 10^7)")
    b.add_argument("--worker-memory", default=WORKER_MEMORY,
                   help=f"bench dask: memory_limit of each Dask worker (default {WORKER_MEMORY})")
    b.add_argument("--workers", type=at_least_one, default=2,
                   help="bench dask: Dask worker processes, 1 thread each (at least 2)")
    b.add_argument("--p", default="2", help="bench counterpart: the norm of (21)")
    b.add_argument("--solver", default=None, help="bench counterpart: the solver of both counterparts (clarabel)")
    b.add_argument("--dataset", nargs="+", default=list(DATASETS),
                   help="iris, wine (Table 3's cells; bench estimators --processes, bench check: the data sets)")
    b.add_argument("--kernel", nargs="+", default=None, metavar="CELL",
                   help=f"cells of Table 3: {', '.join(CELLS)} (default all); bench estimators --sizes: "
                   f"{' '.join(SCALED_KERNELS)}")
    b.add_argument("--runs", type=at_least_one, default=100)
    b.add_argument("--jobs", type=worker_count, default=2,
                   help="worker processes (joblib; bench check: check's --jobs)")
    b.add_argument("--against", default=None, metavar="PATH",
                   help="bench check: a checkout of another commit (git worktree add), run in turn with this one")
    b.add_argument("--no-shortcuts", action="store_true", help="solve every alpha and every gamma (errata 7, 10 off)")
    b.add_argument("--no-solvers", action="store_true", help="skip the per-QP solver comparison and the fit time")
    b.add_argument("--qp-dataset", default="iris", choices=list(DATASETS))
    b.add_argument("--quiet", action="store_true", help="no progress lines")
    b.set_defaults(func=cmd_bench)


