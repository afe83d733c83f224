"""``tpm-models table3``, ``reproduce``, ``bench``, ``robust-table`` and ``robust-kernel-table``: the
experiments of Section 5 and beyond (:mod:`tpm_models.experiments`)."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from tpm_models.cli.checks import cmd_check
from tpm_models.cli.options import at_least_one, worker_count
from tpm_models.experiments.bench import BENCH_KERNELS, fit_time, load, per_qp_times, pipeline_time
from tpm_models.experiments.bench_builders import (
    bench_builders,
    bench_estimators,
    builders_table,
    estimators_table,
    machine,
)
from tpm_models.experiments.bench_estimators import BENCH_KERNELS as SCALED_KERNELS
from tpm_models.experiments.bench_estimators import MODELS as SCALED_MODELS
from tpm_models.experiments.bench_estimators import bench_scaled, scaled_table
from tpm_models.experiments.bench_scale import (
    SCALE_MODELS,
    accuracy_table,
    bench_scale,
    parse_models,
    read_scale_reference,
    scale_table,
)
from tpm_models.experiments.parallel import Progress, parallel_map
from tpm_models.experiments.robust import (
    EPS_GRID,
    KERNEL_SIGMA,
    SOLVERS,
    kernel_section,
    robust_kernel_markdown,
    robust_markdown,
    run_robust_kernel_split,
    run_robust_table,
    summarize_robust,
    summarize_robust_kernel,
    with_kernel_section,
)
from tpm_models.experiments.run_info import DISCUSSION_END, DISCUSSION_START, run_metadata
from tpm_models.experiments.table3 import (
    ALL_CELLS,
    BASELINES,
    CELLS,
    CV_FOLDS,
    DATASETS,
    PAPER_TABLE3,
    RATIOS,
    SEED,
    SELECTIONS,
    TIE_RULES,
    Protocol,
    RunResult,
    Table3Store,
    check_cells,
    check_datasets,
    dask_backend,
    print_summary,
    run_table3,
    summarize,
    write_table3,
)
from tpm_models.learn.fastqp import FAST_SOLVERS
from tpm_models.models.norms import check_p
from tpm_models.solvers.backends.registry import BACKENDS
from tpm_models.validation import check_output_path


def _command(args: argparse.Namespace) -> str:
    """The canonical command line of a parsed ``table3``/``reproduce``."""
    parts = [f"tpm-models {args.command}", "--dataset " + " ".join(args.dataset)]
    if getattr(args, "kernel", None) is not None and list(args.kernel) != list(CELLS):
        parts.append("--kernel " + " ".join(args.kernel))
    parts.append(f"--runs {args.runs} --jobs {args.jobs}")
    if args.seed != SEED:
        parts.append(f"--seed {args.seed}")
    if args.solver != "daqp":
        parts.append(f"--solver {args.solver}")
    if args.no_shortcuts:
        parts.append("--no-shortcuts")
    if args.selection != "train":
        parts.append(f"--selection {args.selection}" + (f" --folds {args.folds}" if args.folds != CV_FOLDS else ""))
    if getattr(args, "dask", None):
        parts.append(f"--dask {args.dask}")
    if getattr(args, "store", None) and not getattr(args, "no_store", False):
        parts.append(f"--store {args.store}")
    if args.out_dir:
        parts.append(f"--out-dir {args.out_dir}")
    return " ".join(parts)


def _protocol_from_args(args: argparse.Namespace) -> Protocol:
    """The protocol of ``table3``/``reproduce``, checked (``ValueError`` for a bad ``--folds``, ``--seed``...)."""
    return Protocol(seed=args.seed, solver=args.solver, shortcuts=not args.no_shortcuts,
                    cv_folds=args.folds if args.selection == "cv" else 0)


def _run_from_args(args: argparse.Namespace, store: str | None, resume: bool) -> tuple[RunResult, dict]:
    protocol = _protocol_from_args(args)
    load_before = os.getloadavg()
    dask = getattr(args, "dask", None)
    context = dask_backend(dask, n_workers=args.jobs) if dask else contextlib.nullcontext()
    with context:
        run = run_table3(args.dataset, args.kernel, args.runs, protocol, n_jobs=None if dask else args.jobs,
                         store=store, resume=resume, progress=not args.quiet)
    return run, run_metadata(load_before, run.computed, run.reused)


def _report_run(run: RunResult) -> str:
    return (f"{run.computed} splits computed, {run.reused} reused from the store, {run.corrupt} corrupt record(s) "
            f"dropped and recomputed; wall time {run.wall_seconds:.1f} s")


def default_store(selection: str) -> str:
    """``tpm-models table3``'s results store when ``--store`` is not given: one per selection protocol, so the
    two protocols run one after the other without ``--resume``."""
    return "runs/table3-cv.jsonl" if selection == "cv" else "runs/table3.jsonl"


def _remove_store(path: Path) -> None:
    """``--fresh``: delete the results store, after recognising it as one (a file of other lines is refused)."""
    Table3Store(path).check_recognised()
    path.unlink()


def cmd_table3(args: argparse.Namespace) -> int:
    store = None if args.no_store else check_output_path(args.store or default_store(args.selection))
    if args.out_dir:
        check_output_path(args.out_dir, folder=True)
    if store and args.fresh and Path(store).exists():
        _remove_store(Path(store))
    run, meta = _run_from_args(args, store, args.resume)
    summaries = summarize(run)
    print_summary(summaries, args.tie_rule, selection=args.selection)
    print(_report_run(run))
    if args.out_dir:
        write_table3(run, args.out_dir, _command(args), meta)
        print(f"written: {Path(args.out_dir) / 'table3.md'}, {Path(args.out_dir) / 'table3.csv'}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    out = Path(check_output_path(args.out_dir, folder=True))
    # every argument of Table 3 is checked before the check phase (minutes) runs, not after it
    _protocol_from_args(args)
    check_datasets(args.dataset)
    check_cells(args.kernel)
    if (out / "table3.jsonl").exists():
        Table3Store(out / "table3.jsonl").check_recognised()
    out.mkdir(parents=True, exist_ok=True)
    code = 0
    if not args.no_checks:
        print("== 1. every tie between the formulations (tpm-models check) ==", flush=True)
        check_args = argparse.Namespace(dataset=args.dataset, solver="default", cross_solvers=None,
                                        no_robust=args.no_robust, no_pyros=args.no_pyros, all=False,
                                        csv=str(out / "checks.csv"), quiet=args.quiet, model=None,
                                        jobs=args.jobs)
        code = cmd_check(check_args)
    print(f"\n== 2. Table 3 ({args.runs} runs{'; --runs 100 for the full protocol' if args.runs < 100 else ''}) ==",
          flush=True)
    store = out / "table3.jsonl"
    if args.fresh and store.exists():
        _remove_store(store)
    run, meta = _run_from_args(args, str(store), resume=True)
    summaries = write_table3(run, out, _command(args), meta)
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


def add_parsers(sub) -> None:
    """Register ``table3``, ``bench``, ``robust-table`` and ``reproduce`` on the ``tpm-models`` subparsers."""
    t = sub.add_parser("table3", help="the experiments of Section 5 (Table 3)")
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

    add_bench_command(sub)
    add_robust_command(sub)

    r = sub.add_parser("reproduce", help="the main job: every tie (check), then Table 3 (quick by default)")
    _common(r, runs=5, jobs=2)
    r.set_defaults(kernel=list(CELLS))
    r.add_argument("--out-dir", default="runs/reproduce", help="where the report, Table 3 and the store go")
    r.add_argument("--no-checks", action="store_true", help="skip the verification report")
    r.add_argument("--no-robust", action="store_true", help="checks: skip the robust family (22)-(29)")
    r.add_argument("--no-pyros", action="store_true", help="checks: skip PyROS (the slowest tie)")
    r.set_defaults(func=cmd_reproduce)


def cmd_bench_builders(args: argparse.Namespace) -> int:
    """``tpm-models bench builders``: :mod:`tpm_models.experiments.bench_builders` (Pyomo builders beside linopy)."""
    print(f"tpm-models bench builders: {machine()}")
    rows = bench_builders(args.sizes, linopy=not args.no_linopy, progress=None if args.quiet else print)
    print(builders_table(rows))
    return 0


def cmd_bench_estimators(args: argparse.Namespace) -> int:
    """``tpm-models bench estimators``: one-versus-all fits beside ``SVC(kernel="linear")`` on Iris and Wine;
    with ``--sizes``, :mod:`tpm_models.experiments.bench_estimators` at those sizes and ``--kernel`` kernels."""
    print(f"tpm-models bench estimators: {machine()}")
    if args.sizes is None:
        print(estimators_table(bench_estimators(args.repeats)))
        return 0
    kernels = args.kernel if args.kernel is not None else list(SCALED_KERNELS)
    unknown = [k for k in kernels if k not in SCALED_KERNELS]
    if unknown:
        raise SystemExit(f"bench estimators --kernel takes {' '.join(SCALED_KERNELS)}; got {' '.join(unknown)}")
    models = args.models or list(SCALED_MODELS)
    unknown = [m for m in models if m not in SCALED_MODELS]
    if unknown:
        print(f"tpm-models bench estimators: unknown --models {unknown}; choose from {list(SCALED_MODELS)}",
              file=sys.stderr)
        return 2
    rows = bench_scaled(args.sizes, kernels, timeout=args.timeout, progress=None if args.quiet else print,
                        models=models)
    print(scaled_table(rows))
    print(f"\n{machine()}")
    return 0


def cmd_bench_scale(args: argparse.Namespace) -> int:
    """``tpm-models bench scale``: :mod:`tpm_models.experiments.bench_scale` (the models at scale beside cvxpy)."""
    try:
        models = parse_models(args.models) if args.models else SCALE_MODELS
    except ValueError as exc:
        print(f"tpm-models bench scale: {exc}", file=sys.stderr)
        return 2
    if not args.no_cvxpy and importlib.util.find_spec("cvxpy") is None:
        print("tpm-models bench scale: cvxpy is not installed (pip install tpm-models[bench]), or pass --no-cvxpy",
              file=sys.stderr)
        return 2
    print(f"tpm-models bench scale: {machine()}")
    rows = bench_scale(args.sizes or [10_000, 100_000], models, cvxpy=not args.no_cvxpy, timeout=args.timeout,
                       progress=None if args.quiet else print)
    print(scale_table(rows))
    print(f"({load()})")
    if args.reference:
        print("\nagainst the reference of (23) at the same p (docs/reference/cvxpy_scale.py):")
        print(accuracy_table(rows, read_scale_reference(args.reference)))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    if args.what == "scale":
        return cmd_bench_scale(args)
    if args.what == "builders":
        args.sizes = args.sizes or [10_000, 100_000]
        return cmd_bench_builders(args)
    if args.what == "estimators":
        return cmd_bench_estimators(args)
    args.kernel = args.kernel or list(CELLS)
    bad = [k for k in args.kernel if k not in CELLS]
    if bad:
        raise SystemExit(f"bench --kernel takes cells of Table 3 ({', '.join(CELLS)}); got {' '.join(bad)}")
    print(f"tpm-models bench: {load()}")
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


def add_bench_command(sub) -> None:
    b = sub.add_parser("bench", help="time the fast path (per-QP solver times, one fit, every cell of Table 3); "
                       "'bench builders': Pyomo builders beside linopy; 'bench estimators': fits beside SVC")
    b.add_argument("what", nargs="?", default="table3", choices=["table3", "builders", "estimators", "scale"],
                   help="table3 (default): the fast path; builders: (15), (23) p=2, (28) at --sizes points, n=20, "
                   "build/.lp/.nl seconds and peak memory beside linopy; estimators: Iris/Wine one-versus-all fits "
                   "beside scikit-learn's SVC(kernel='linear'), or with --sizes synthetic sets of those sizes "
                   "beside SVC and LinearSVC; scale: (15), (23), (26)-(29) at --sizes points built and solved by "
                   "the default solver beside cvxpy + Clarabel, each in a fresh process")
    b.add_argument("--sizes", nargs="+", type=int, default=None,
                   help="bench builders, bench scale: numbers of points (default 10000 100000); bench estimators: "
                   "numbers of points of the synthetic sets (none: Iris and Wine)")
    b.add_argument("--models", nargs="+", metavar="MODEL",
                   help="bench scale: models EQ[:P], e.g. 15 23:1.5 26:1.5 27 28 29 (default: those of issue 24); "
                   f"bench estimators --sizes: which of {', '.join(SCALED_MODELS)} to fit (default all)")
    b.add_argument("--no-cvxpy", action="store_true", help="bench scale: skip cvxpy + Clarabel")
    b.add_argument("--timeout", type=float, default=3600.0,
                   help="bench scale: seconds per process; bench estimators --sizes: seconds per fit")
    b.add_argument("--json", help="bench scale: also write the rows to this JSON file")
    b.add_argument("--reference", help="bench scale: the CSV of docs/reference/cvxpy_scale.py, to print the accuracy")
    b.add_argument("--no-linopy", action="store_true", help="bench builders: skip linopy")
    b.add_argument("--repeats", type=int, default=200, help="bench estimators: fits per median")
    b.add_argument("--dataset", nargs="+", default=list(DATASETS), help="iris, wine")
    b.add_argument("--kernel", nargs="+", default=None, metavar="CELL",
                   help=f"cells of Table 3: {', '.join(CELLS)} (default all); bench estimators --sizes: "
                   f"{' '.join(SCALED_KERNELS)}")
    b.add_argument("--runs", type=at_least_one, default=100)
    b.add_argument("--jobs", type=worker_count, default=2, help="worker processes (joblib)")
    b.add_argument("--no-shortcuts", action="store_true", help="solve every alpha and every gamma (errata 7, 10 off)")
    b.add_argument("--no-solvers", action="store_true", help="skip the per-QP solver comparison and the fit time")
    b.add_argument("--qp-dataset", default="iris", choices=list(DATASETS))
    b.add_argument("--quiet", action="store_true", help="no progress lines")
    b.set_defaults(func=cmd_bench)


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
        out = Path(args.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        command = (f"tpm-models robust-table --dataset {' '.join(args.dataset)} --runs {args.runs} --jobs {args.jobs} "
                   f"--p {' '.join(args.p)} --eps {' '.join(f'{e:g}' for e in args.eps)} --out-dir {args.out_dir}"
                   + (f" --solver {args.solver}" if args.solver != "auto" else ""))
        meta = {**run_metadata(load_before, len(records)), "solver": _solver_note(args.solver, records),
                "wall time": f"{wall:.1f} s"}
        md = out / "robust.md"
        discussion = None
        if md.exists() and DISCUSSION_START in (text := md.read_text()) and DISCUSSION_END in text:
            discussion = text.split(DISCUSSION_START, 1)[1].split(DISCUSSION_END, 1)[0].strip("\n")
        kept = kernel_section(md.read_text()) if md.exists() else None  # the (23K) section has its own command
        md.write_text(with_kernel_section(robust_markdown(rows, command, meta, discussion), kept))
        (out / "robust.json").write_text(json.dumps(rows, indent=1))
        if args.records:
            Path(args.records).parent.mkdir(parents=True, exist_ok=True)
            Path(args.records).write_text(json.dumps(records))  # every split's counts, per nu/alpha
        print(f"written: {out / 'robust.md'}, {out / 'robust.json'}", file=sys.stderr)
    return 0


def _solver_note(solver: str, records: Sequence[dict]) -> str:
    """The ``solver`` line of ``robust.md``: the rule, the versions, and the class models each backend solved."""
    counts: dict[str, dict[str, int]] = {}
    for r in records:
        for backend, k in r.get("solvers", {}).items():
            counts.setdefault(backend, {}).setdefault(r["dataset"], 0)
            counts[backend][r["dataset"]] += k
    parts = [f"{backend} {metadata.version(BACKENDS[backend].package)}: "
             + ", ".join(f"{d} {k}" for d, k in sorted(per.items())) for backend, per in sorted(counts.items())]
    rule = {"auto": "auto (Clarabel; without it, Gurobi where its licence takes the class model, else CPLEX)",
            "clarabel": "Clarabel (dense conic form, no licence)", "gurobi": "Gurobi", "cplex": "CPLEX"}[solver]
    return f"{rule}; class models solved (each for every nu/alpha): {'; '.join(parts)}"


def add_robust_command(sub) -> None:
    r = sub.add_parser("robust-table", help="robust vs deterministic, clean and adversarial test accuracy")
    r.add_argument("--dataset", nargs="+", default=["iris", "wine"])
    r.add_argument("--runs", type=at_least_one, default=100)
    r.add_argument("--jobs", type=worker_count, default=1)
    r.add_argument("--p", nargs="+", default=["1", "2", "inf"])
    r.add_argument("--eps", nargs="+", type=float, default=list(EPS_GRID))
    r.add_argument("--out-dir", help="write robust.md and robust.json (the table) here")
    r.add_argument("--records", default="runs/robust_records.json", help="every split's counts (JSON)")
    r.add_argument("--solver", choices=SOLVERS, default="auto",
                   help="backend of (23): auto (default) = clarabel (no licence); without it, Gurobi where its licence "
                        "takes the class model, else CPLEX")
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(func=cmd_robust_table)
    add_robust_kernel_command(sub)


def cmd_robust_kernel_table(args: argparse.Namespace) -> int:
    import os
    import platform
    if args.runs < 1:
        raise ValueError(f"--runs must be >= 1, got {args.runs}")
    _check_outputs(args)
    p_values = [check_p(p) for p in args.p]
    load_before = os.getloadavg()
    start = time.perf_counter()
    tasks = [(d, s) for d in args.dataset for s in range(args.runs)]
    bar = Progress(len(tasks), enabled=not args.quiet, label="robust-kernel-table")
    records = []
    for rec in parallel_map(run_robust_kernel_split, ((d, s, p_values, args.eps, args.sigma) for d, s in tasks),
                            args.jobs):
        records.append(rec)
        bar.step(f"{rec['dataset']} split {rec['split']}")
    records.sort(key=lambda r: (r["dataset"], r["split"]))
    wall = time.perf_counter() - start
    rows = summarize_robust_kernel(records)
    for r in rows:
        print(f"{r['dataset']:<5} p={r['p']:<4} eps={r['eps']:<5g} (23K) {r['robust clean mean']:6.2f} / "
              f"{r['robust certified mean']:6.2f}-{r['robust search mean']:6.2f}   (19) {r['det clean mean']:6.2f} / "
              f"{r['det certified mean']:6.2f}-{r['det search mean']:6.2f}   (clean / attacked: certified-search)")
    print(f"wall time {wall:.1f} s")
    if args.out_dir:
        out = Path(args.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        command = (f"tpm-models robust-kernel-table --dataset {' '.join(args.dataset)} --runs {args.runs} "
                   f"--jobs {args.jobs} --sigma {args.sigma:g} --p {' '.join(args.p)} "
                   f"--eps {' '.join(f'{e:g}' for e in args.eps)} --out-dir {args.out_dir}")
        versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("numpy", "gurobipy", "joblib"))
        meta = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
                           f"{versions}",
                "load average (1, 5, 15 min) before / after": (f"{' '.join(f'{x:.2f}' for x in load_before)} / "
                                                               f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"),
                "date": time.strftime("%Y-%m-%d %H:%M %Z"), "wall time": f"{wall:.1f} s"}
        md = out / "robust.md"
        text = md.read_text() if md.exists() else "# Robust experiments: clean and adversarial test accuracy\n"
        md.write_text(with_kernel_section(text, robust_kernel_markdown(rows, command, meta)))
        (out / "robust_kernel.json").write_text(json.dumps(rows, indent=1))
        if args.records:
            Path(args.records).parent.mkdir(parents=True, exist_ok=True)
            Path(args.records).write_text(json.dumps(records))
        print(f"written: {md} (section (23K)), {out / 'robust_kernel.json'}", file=sys.stderr)
    return 0


def add_robust_kernel_command(sub) -> None:
    r = sub.add_parser("robust-kernel-table",
                       help="robust kernel model (23K) vs (19), clean and attacked (certified / searched) accuracy")
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
