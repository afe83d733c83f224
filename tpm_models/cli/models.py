"""``tpm-models solve``, ``models`` and ``solvers``: one model built and solved, and what there is."""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from tpm_models.checks.semi_infinite import solve_22_cutting_plane, solve_22_pyros
from tpm_models.checks.verify import PYROS_SUBSOLVER_NAMES, free_pyros_subsolvers
from tpm_models.cli.commands import add_command
from tpm_models.cli.options import (
    add_model_options,
    class_of,
    dataset_from_args,
    kernel_from_args,
    own_parameters,
    typed_params,
)
from tpm_models.data import Dataset, min_max_scale
from tpm_models.kernels import KERNELS
from tpm_models.models.norms import check_p
from tpm_models.models.registry import ModelInfo, all_models, build, model_info
from tpm_models.solvers import dispatch
from tpm_models.solvers.backends.registry import BACKENDS, DEFAULT, DEFAULT_LARGE, LARGE_MODEL, available_solvers
from tpm_models.solvers.common import NoOptimalSolutionError, SolveResult
from tpm_models.solvers.dispatch import solve
from tpm_models.solvers.program import title
from tpm_models.validation import json_safe


@contextmanager
def solver_log_on_stderr(active: bool) -> Iterator[None]:
    """While the block runs, what the process writes to standard output (a solver's log, printed by its C code to
    file descriptor 1) goes to standard error, so that the command's own output (``--json``) stays what it is."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@contextmanager
def failure_reported_here(model: object) -> Iterator[None]:
    """Hold back the library's warning that the solve of ``model`` ended without an optimum ("xpress on (15) ...:
    refused SolverError: ?120 ..."), which ``solve`` logs just before it raises ``NoOptimalSolutionError``: the
    command prints that error itself, with the same words, so the failure is said once. The warnings of the
    default solver's attempts ("default piqp on ...") and every other record pass."""
    verdicts = tuple(f"{name} on {title(model)}: " for name in BACKENDS)

    def keep(record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.WARNING and record.getMessage().startswith(verdicts))

    logger = logging.getLogger(dispatch.__name__)
    logger.addFilter(keep)
    try:
        yield
    finally:
        logger.removeFilter(keep)


def cmd_solve(args: argparse.Namespace) -> int:
    data = dataset_from_args(args)
    c = class_of(data, args.class_)
    kernel = kernel_from_args(args)
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
    params = typed_params(args.param, own_parameters(info), f"({info.key})")
    model = build(args.model, X, data.y, c, args.nu, args.alpha, kernel if info.kernel != "none" else None,
                  p=args.p, eps=args.eps, **params)
    try:
        with failure_reported_here(model), solver_log_on_stderr(args.verbose >= 1):  # -v: the backend's own log
            result = solve(model, args.solver, tee=args.verbose >= 1)
        code = 0
    except NoOptimalSolutionError as exc:  # reported, and no values are printed: they are not a solution
        result, code = exc.result, 1
        print(f"tpm-models: {exc}", file=sys.stderr)
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
        if not result.optimal:
            out.update(values=None, duals=None)
        print(json.dumps(json_safe(out), indent=2, allow_nan=False))
        return code
    print(f"model      {title(model)}")
    print(f"data       {data.name}, class {c} ({data.classes[c]}), nu={args.nu:g}, alpha={args.alpha:g}")
    print(f"solver     {result.solver} {result.solver_version}: {result.termination.value} "
          f"in {result.seconds * 1e3:.1f} ms")
    print(f"certificate {_certificate_line(result)}")
    if not result.optimal:
        return code
    print(f"objective  {result.objective:.12g}   ({objective_note(info)})")
    for name, value in result.values.items():
        shown = np.array2string(np.asarray(value), precision=6, max_line_width=100, threshold=12)
        print(f"{name:<10} {shown}")
    return code


def objective_note(info: ModelInfo) -> str:
    """Where the printed objective comes from, true for every model: the paper's as printed (a dual's omitted
    constant not added), a dual or counterpart derived here, a user's model as its builder writes it."""
    constant = info.omitted_constant is not None
    if info.group == "paper":
        return "as printed in the paper" + (", the constant its objective omits not added" if constant else "")
    if info.group == "dual":
        return (f"the dual derived here; opt({info.primal}) = this + the constant it omits" if constant
                else f"the dual derived here; opt({info.primal}) = this" if info.primal is not None
                else "the dual derived here")
    if info.group == "derived":
        return f"the robust counterpart of ({info.nominal}) derived by robust_counterpart, not printed in the paper"
    if info.group == "kernel":
        return "the robust kernel model derived here, not printed in the paper"
    return f"the objective of ({info.key}) as its builder writes it (a model registered by the user)"


def _certificate_line(result: SolveResult) -> str:
    """The certificate in one line: what it proves and its residuals (``SolveResult.certificate``)."""
    c = result.certificate
    if c is None:
        return "none (no point)"
    verdict = "certified optimal" if result.certified else (
        "optimal, not certified" if result.optimal else
        "locally optimal (the model is not proved convex)" if result.locally_optimal else
        f"failed ({result.solution_status.value} point)")
    residuals = [f"primal {c['primal']:.1e}"] + [f"{k} {c[k]:.1e}" for k in ("stationarity", "complementarity",
                                                                          "dual_sign") if c[k] is not None]
    return f"{verdict}: {', '.join(residuals)}" + ("" if result.certified else f" ({c['why']})")


def _solve_22(args: argparse.Namespace, data: Dataset, c: int, X: np.ndarray) -> int:
    """(22): the semi-infinite model by cutting planes (default) or PyROS."""
    method = args.method or "cutting-plane"
    p = check_p(args.p if args.p is not None else "2")
    if method == "pyros":
        subsolvers = {**PYROS_SUBSOLVER_NAMES, "default": free_pyros_subsolvers()[0]}  # our Ipopt: no licence limit
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
                print(json.dumps(json_safe({"model": 22, "method": method, "dataset": data.name, "class": c,
                                  "termination": r.termination, "solver": solver, "seconds": r.seconds,
                                  "message": r.message}), indent=2, allow_nan=False))
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
        print(json.dumps(json_safe(out), indent=2, allow_nan=False))
    else:
        print(f"model      (22) semi-infinite, {method}: {r.message}")
        print(f"objective  {r.objective:.12g}  (lower bound {r.lower_bound:.12g})")
        print(f"w          {np.array2string(r.w, precision=6)}")
        print(f"theta      {r.theta:.6g}")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    print(f"{'eq':>4}  {'family':<10} {'class':<5} {'kernel':<12} {'role':<7} summary")
    for eq, info in all_models().items():
        print(f"{f'({eq:>2})':<5} {info.family:<10} {info.model_class:<5} {info.kernel:<12} {info.role:<7} "
              f"{info.summary}")
    return 0


def cmd_solvers(args: argparse.Namespace) -> int:
    here = set(available_solvers())
    for name, b in BACKENDS.items():
        default = [k for k, v in DEFAULT.items() if v[0] == name]
        fallback = [k for k, v in DEFAULT.items() if name in v[1:]]
        large = [k for k, v in DEFAULT_LARGE.items() if v[0] == name and k not in default]
        status = "installed" if name in here else "no licence" if b.installed() else "missing"
        print(f"{name:<8} {status:<10} "
              f"{'/'.join(sorted(b.model_classes)):<8} package {b.package}"
              + (f"  (default for {', '.join(default)})" if default else "")
              + (f"  (default when the first refuses: {', '.join(fallback)})" if fallback else "")
              + (f"  (default for {', '.join(large)} from {LARGE_MODEL:,} variables"
                 + (", of its shape: " + b.shape if b.shape else "") + ")" if large else ""))
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """``solve``, ``models`` and ``solvers``."""
    s = add_command(sub, "solve")
    add_model_options(s)
    s.add_argument("--method", choices=("cutting-plane", "pyros"), help="(22): how to solve the semi-infinite model")
    s.add_argument("--solver", default="default", help=f"one of {sorted(BACKENDS)} or 'default'")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_solve)
    add_command(sub, "models").set_defaults(func=cmd_models)
    add_command(sub, "solvers").set_defaults(func=cmd_solvers)
