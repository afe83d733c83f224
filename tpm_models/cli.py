"""The ``tpm-models`` command.

    tpm-models solve --model 16 --dataset iris --class 0 --nu 0.5 --alpha 1 --json
    tpm-models check --dataset iris wine
    tpm-models models
    tpm-models solvers
    tpm-models export --model 28 --dataset iris --class 0 --nu 0.3 --alpha 1 --eps 0.02 --out eq28.lp
    tpm-models verify --model 28 --dataset iris --class 0 --nu 0.3 --alpha 1 --eps 0.02 --method pyros
    tpm-models export-library                 # regenerate formulations/ (tpm_models.export)
    tpm-models table3 --runs 100 --jobs 2     # Section 5 (tpm_models.experiments)
    tpm-models reproduce                      # check + Table 3
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import math
import sys
import time
from collections.abc import Sequence

import numpy as np

from tpm_models.checks import CheckResult, failures, run_checks
from tpm_models.data import Dataset, load_dataset, min_max_scale
from tpm_models.kernels import KERNELS, Kernel
from tpm_models.norms import check_p
from tpm_models.registry import DUAL_MODELS, KERNEL_MODELS, MODELS, build, model_info
from tpm_models.robust_checks import run_robust_checks
from tpm_models.solvers import (
    BACKENDS,
    DEFAULT,
    NoOptimalSolutionError,
    SolverUnavailableError,
    available_solvers,
    solve,
    title,
)


def _class_of(data: Dataset, k: str) -> int:
    """``--class K``: a class number 0..C-1, or else a label of the data set."""
    if k.lstrip("-").isdigit():
        number = int(k)
        if 0 <= number < data.n_classes:
            return number
        raise ValueError(
            f"--class {k}: {data.name} has classes 0..{data.n_classes - 1} "
            f"(labels {', '.join(map(str, data.classes))})"
        )
    labels = [str(c) for c in data.classes]
    if k in labels:
        return labels.index(k)
    raise ValueError(f"--class {k!r}: not a class number 0..{data.n_classes - 1} nor a label {labels}")


def _kernel(args: argparse.Namespace) -> Kernel | None:
    if args.kernel is None:
        return None
    params = {"degree": args.degree, "gamma": args.gamma, "sigma": args.sigma, "a": args.a, "b": args.b}
    needed = {
        "linear": (), "hom-poly": ("degree",), "inhom-poly": ("degree", "gamma"),
        "gaussian": ("sigma",), "sigmoid": ("a", "b"),
    }[args.kernel]
    given = {k: v for k, v in params.items() if v is not None}
    missing = [k for k in needed if k not in given]
    extra = [k for k in given if k not in needed]
    if missing or extra:
        raise ValueError(
            f"--kernel {args.kernel} needs {', '.join('--' + k for k in needed) or 'no parameter'}"
            + (f"; missing {', '.join('--' + k for k in missing)}" if missing else "")
            + (f"; not used: {', '.join('--' + k for k in extra)}" if extra else "")
        )
    return Kernel(args.kernel, **given)


def cmd_solve(args: argparse.Namespace) -> int:
    data = load_dataset(args.dataset)
    c = _class_of(data, args.class_)
    kernel = _kernel(args)
    info = model_info(args.model)
    if info.kernel == "none" and kernel is not None and kernel.name != "linear":
        raise ValueError(f"({args.model}) is a linear model; --kernel applies to (10)-(13) and (19)")
    if info.kernel != "none" and kernel is None:
        raise ValueError(f"({args.model}) needs --kernel ({', '.join(KERNELS)})")
    X = min_max_scale(data.X)
    robust = info.robust_p is not None
    if not robust and (args.p is not None or args.eps is not None or args.method is not None):
        raise ValueError(f"--p, --eps and --method apply to the robust models 22-29, not ({args.model})")
    if robust and args.eps is None:
        raise ValueError(f"({args.model}) is a robust model: give --eps (and --p)")
    if args.method is not None and args.model != 22:
        raise ValueError("--method applies to --model 22 only")
    if args.model == 22:
        return _solve_22(args, data, c, X)
    model = build(args.model, X, data.y, c, args.nu, args.alpha, kernel if info.kernel != "none" else None,
                  p=args.p, eps=args.eps)
    try:
        result = solve(model, args.solver)
        code = 0
    except NoOptimalSolutionError as exc:
        result, code = exc.result, 1
        print(str(exc), file=sys.stderr)
    if args.json:
        out = {
            "model": args.model,
            "dataset": data.name,
            "class": c,
            "label": str(data.classes[c]),
            "nu": args.nu,
            "alpha": args.alpha,
            "kernel": str(kernel) if kernel else None,
            **({"p": args.p, "eps": args.eps} if robust else {}),
            **result.to_dict(),
        }
        print(json.dumps(out, indent=2))
        return code
    print(f"model      {title(model)}")
    print(f"data       {data.name}, class {c} ({data.classes[c]}), nu={args.nu:g}, alpha={args.alpha:g}")
    print(f"solver     {result.solver} {result.solver_version}: {result.termination.value} "
          f"in {result.seconds * 1e3:.1f} ms")
    if result.objective is not None:
        print(f"objective  {result.objective:.12g}   (as printed in the paper, no constant added)")
    for name, value in result.values.items():
        shown = np.array2string(np.asarray(value), precision=6, max_line_width=100, threshold=12)
        print(f"{name:<10} {shown}")
    return code


def _solve_22(args: argparse.Namespace, data: Dataset, c: int, X: np.ndarray) -> int:
    """(22): the semi-infinite model by cutting planes (default) or PyROS."""
    from tpm_models.semi_infinite import solve_22_cutting_plane, solve_22_pyros

    method = args.method or "cutting-plane"
    p = check_p(args.p if args.p is not None else "2")
    if method == "pyros":
        subsolvers = {"default": "tpm_ipopt", "ipopt": "tpm_ipopt", "gurobi": "gurobi_direct", "scip": "scip"}
        if args.solver not in subsolvers:
            raise ValueError(f"--method pyros takes --solver {', '.join(subsolvers)} (PyROS's local and global "
                             f"subsolver), got {args.solver!r}")
        sub = subsolvers[args.solver]
        r = solve_22_pyros(X, data.y, c, args.nu, args.alpha, p, args.eps, local_solver=sub, global_solver=sub,
                           raise_on_failure=False)
        solver = f"pyros ({sub} subsolvers)"
        if r.termination != "robust_optimal":  # never reported as a solution
            print(f"PyROS ended {r.termination} ({r.message}): no robust optimum of (22)", file=sys.stderr)
            if args.json:
                print(json.dumps({"model": 22, "method": method, "dataset": data.name, "class": c,
                                  "termination": r.termination, "solver": solver, "seconds": r.seconds,
                                  "message": r.message}, indent=2))
            return 1
    else:
        r = solve_22_cutting_plane(X, data.y, c, args.nu, args.alpha, p, args.eps, solver=args.solver)
        solver = f"cutting-plane ({args.solver} masters)"
    out = {
        "model": 22, "method": method, "dataset": data.name, "class": c, "label": str(data.classes[c]),
        "nu": args.nu, "alpha": args.alpha, "p": p if math.isfinite(p) else "inf", "eps": args.eps,
        "objective": r.objective, "lower_bound": r.lower_bound, "termination": r.termination or "optimal",
        "solver": solver,
        "seconds": r.seconds, "rounds": r.rounds, "max_violation": r.max_violation, "message": r.message,
        "values": {"w": r.w.tolist(), "theta": r.theta, "xi": r.xi.tolist()},
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"model      (22) semi-infinite, {method}: {r.message}")
        print(f"objective  {r.objective:.12g}  (lower bound {r.lower_bound:.12g})")
        print(f"w          {np.array2string(r.w, precision=6)}")
        print(f"theta      {r.theta:.6g}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Theorem 1 for one registered counterpart (:func:`tpm_models.robust_checks.verify_model`): 0 verified,
    1 not verified (or the route failed), 2 bad input."""
    from tpm_models.robust_checks import verify_model

    data = load_dataset(args.dataset)
    c = _class_of(data, args.class_)
    if args.eps is None:
        raise ValueError("give --eps (the radius of the uncertainty set (21))")
    try:
        v = verify_model(args.model, min_max_scale(data.X), data.y, c, args.nu, args.alpha, args.p, args.eps,
                         method=args.method, solver=args.solver, points_per_class=args.points_per_class,
                         time_limit=args.time_limit)
    except SolverUnavailableError:
        raise  # bad input: exit 2 (main)
    except (NoOptimalSolutionError, RuntimeError) as exc:
        print(f"tpm-models: verification failed: {exc}", file=sys.stderr)
        return 1
    print(f"data       {data.name}, class {c} ({data.classes[c]}), nu={args.nu:g}, alpha={args.alpha:g}, "
          f"eps={args.eps:g}" + (f", first {args.points_per_class} points per class" if args.points_per_class else ""))
    print(v.table())
    return 0 if v.verified else 1


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
    all_results: list[CheckResult] = []
    start = time.perf_counter()
    cross = args.cross_solvers if args.cross_solvers else None
    for name in args.dataset:
        data = load_dataset(name)
        X = min_max_scale(data.X)

        def progress(msg: str) -> None:
            print(f"  ... {msg}", file=sys.stderr, flush=True)

        results = run_checks(
            X, data.y, data.name, solver=args.solver, cross_solvers=cross,
            progress=None if args.quiet else progress,
        )
        if not args.no_robust:
            results += run_robust_checks(X, data.y, data.name, cross_solvers=args.cross_solvers or None,
                                         pyros=not args.no_pyros, progress=None if args.quiet else progress)
        all_results += results
        print(f"\n== {data.name}: {len(results)} ties measured, {len(failures(results))} failed ==")
        _print_check_table(results)
    bad = failures(all_results)
    if args.all or bad:
        print("\nrows" + (" (failed only)" if not args.all else "") + ":")
        for r in all_results if args.all else bad:
            flag = 'skip' if r.skipped else 'pass' if r.passed else 'FAIL'
            print(f"  {flag} {r.tie:<40} {r.instance:<45} {r.residual:.2e} {r.note}")
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["tie", "instance", "residual", "tolerance", "passed", "note"])
            for r in all_results:
                writer.writerow([r.tie, r.instance, f"{r.residual:.6e}", r.tolerance, r.passed, r.note])
    print(f"\n{len(all_results)} ties, {len(bad)} failed, {time.perf_counter() - start:.1f} s "
          f"(solver {args.solver}; cross-solver: {', '.join(cross or available_solvers('QP'))})")
    return 1 if bad else 0


def cmd_models(args: argparse.Namespace) -> int:
    print(f"{'eq':>4}  {'family':<10} {'class':<5} {'kernel':<12} {'role':<7} summary")
    for eq, info in {**MODELS, **DUAL_MODELS, **KERNEL_MODELS}.items():
        print(f"{f'({eq:>2})':<5} {info.family:<10} {info.model_class:<5} {info.kernel:<12} {info.role:<7} "
              f"{info.summary}")
    return 0


def cmd_solvers(args: argparse.Namespace) -> int:
    here = set(available_solvers())
    for name, b in BACKENDS.items():
        default = [k for k, v in DEFAULT.items() if v == name]
        print(f"{name:<8} {'installed' if name in here else 'missing  '} "
              f"{'/'.join(sorted(b.model_classes)):<8} package {b.package}"
              + (f"  (default for {', '.join(default)})" if default else ""))
    return 0


def _model_key(text: str) -> int | str:
    """``--model``: an equation number (int), or a derived dual such as ``28D`` (checked by ``model_info``)."""
    return int(text) if text.lstrip("-").isdigit() else text.strip().upper()


def add_model_options(s: argparse.ArgumentParser) -> None:
    """The options that say which model to build on which data (``solve``, ``export``)."""
    s.add_argument("--model", type=_model_key, required=True,
                   help=f"equation number: {sorted(MODELS)}, a derived dual: {', '.join(DUAL_MODELS)}, "
                   f"or the robust kernel model: {', '.join(KERNEL_MODELS)}")
    s.add_argument("--dataset", default="iris", help="iris, wine or a CSV path (label column last)")
    s.add_argument("--class", dest="class_", default="0",
                   help="class number 0..C-1 (or a label) playing c, or positive for binary models")
    s.add_argument("--nu", type=float, required=True)
    s.add_argument("--alpha", type=float, required=True)
    s.add_argument("--kernel", choices=KERNELS, help="for (10)-(13), (19)")
    s.add_argument("--degree", type=int)
    s.add_argument("--gamma", type=float)
    s.add_argument("--sigma", type=float)
    s.add_argument("--a", type=float)
    s.add_argument("--b", type=float)
    s.add_argument("--p", help="robust models: norm of the uncertainty set (21), 1, 2, inf or any number >= 1")
    s.add_argument("--eps", type=float, help="robust models: radius of the uncertainty set (21), >= 0")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tpm-models", description=__doc__.split("\n")[0])
    p.add_argument("-v", "--verbose", action="store_true", help="log solver details")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("solve", help="build model EQ on a data set and solve it")
    add_model_options(s)
    s.add_argument("--method", choices=("cutting-plane", "pyros"), help="(22): how to solve the semi-infinite model")
    s.add_argument("--solver", default="default", help=f"one of {sorted(BACKENDS)} or 'default'")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_solve)

    c = sub.add_parser("check", help="run every tie between the formulations")
    c.add_argument("--dataset", nargs="+", default=["iris", "wine"])
    c.add_argument("--solver", default="default")
    c.add_argument("--cross-solvers", nargs="*", help="solvers compared on (15), (16) (default: all installed)")
    c.add_argument("--no-robust", action="store_true", help="skip the robust family (22)-(29)")
    c.add_argument("--no-pyros", action="store_true", help="skip PyROS (the slowest tie)")
    c.add_argument("--all", action="store_true", help="print every row, not only the failed ones")
    c.add_argument("--csv", help="write every row to this CSV file")
    c.add_argument("--quiet", action="store_true", help="no progress lines")
    c.set_defaults(func=cmd_check)

    v = sub.add_parser("verify", help="verify a registered robust counterpart against (22) (Theorem 1)")
    v.add_argument("--model", type=_model_key, required=True, help="the counterpart: 23, 26, 27, 28 or 29")
    v.add_argument("--dataset", default="iris", help="iris, wine or a CSV path (label column last)")
    v.add_argument("--class", dest="class_", default="0", help="class number 0..C-1 (or a label) playing c")
    v.add_argument("--nu", type=float, required=True)
    v.add_argument("--alpha", type=float, required=True)
    v.add_argument("--p", help="norm of the uncertainty set (21): 1, 2, inf or any number >= 1 (27-29: implied)")
    v.add_argument("--eps", type=float, help="radius of the uncertainty set (21), >= 0")
    v.add_argument("--method", choices=("cutting-plane", "pyros"), default="cutting-plane",
                   help="how to solve the semi-infinite model (22)")
    v.add_argument("--solver", default="default",
                   help="cutting planes: the masters' solver; pyros: default, gurobi, scip or ipopt")
    v.add_argument("--points-per-class", type=int, help="only the first points of every class (PyROS is slow)")
    v.add_argument("--time-limit", type=float, help="PyROS's time limit, seconds")
    v.set_defaults(func=cmd_verify)

    sub.add_parser("models", help="list the models by equation number").set_defaults(func=cmd_models)
    sub.add_parser("solvers", help="list the solver backends").set_defaults(func=cmd_solvers)

    from tpm_models.export import add_parsers as add_export_parsers  # export, export-library

    add_export_parsers(sub)

    from tpm_models.plots import add_plot_command  # plot (figures; matplotlib loaded only when drawing)

    add_plot_command(sub)

    from tpm_models.experiments import add_commands  # table3, bench, reproduce (Section 5)

    add_commands(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR, format="%(levelname)s %(message)s")
    try:
        return args.func(args)
    except (ValueError, SolverUnavailableError) as exc:
        print(f"tpm-models: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
