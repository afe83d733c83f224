"""``tpm-models verify``: a registered robust counterpart against its semi-infinite model, Theorem 1 style
(:func:`tpm_models.checks.robust.verify_model`, on the generic verifier :mod:`tpm_models.checks.verify`): the paper's
(23), (26)-(29) against (22), or a model a ``--plugin`` registers with ``nominal=`` and ``uncertain=``."""

from __future__ import annotations

import argparse
import sys

from tpm_models.checks.robust import verify_model
from tpm_models.cli.options import class_of, model_key
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.solvers import NoOptimalSolutionError, SolverUnavailableError


def cmd_verify(args: argparse.Namespace) -> int:
    """0 verified, 1 not verified (or the route failed), 2 bad input."""
    data = load_dataset(args.dataset)
    c = class_of(data, args.class_)
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


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """``verify``."""
    v = sub.add_parser("verify", help="verify a registered robust counterpart against its semi-infinite model "
                                      "(Theorem 1)")
    v.add_argument("--model", type=model_key, required=True,
                   help="the counterpart: 23, 26, 27, 28, 29, or a model a --plugin registers with nominal= and "
                        "uncertain= (docs/verify.md)")
    v.add_argument("--dataset", default="iris", help="iris, wine or a CSV path (label column last)")
    v.add_argument("--class", dest="class_", default="0",
                   help="class number 0..C-1 (or a label) playing c, or positive for binary models")
    v.add_argument("--nu", type=float, required=True)
    v.add_argument("--alpha", type=float, required=True)
    v.add_argument("--p", help="norm of the uncertainty set (21): 1, 2, inf or any number >= 1 (implied for a model "
                   "that takes one p: 27-29)")
    v.add_argument("--eps", type=float, help="radius of the uncertainty set (21), >= 0")
    v.add_argument("--method", choices=("cutting-plane", "pyros"), default="cutting-plane",
                   help="how to solve the semi-infinite model")
    v.add_argument("--solver", default="default",
                   help="cutting planes: the masters' solver; pyros: default, gurobi, scip or ipopt")
    v.add_argument("--points-per-class", type=int, help="only the first points of every class (PyROS is slow)")
    v.add_argument("--time-limit", type=float, help="PyROS's time limit, seconds")
    v.set_defaults(func=cmd_verify)
