"""(22) by PyROS on the whole data sets, against (23): the table in ``docs/robust.md``.

``tpm-models check`` runs PyROS on subsets (Gurobi's pip licence caps the separation
problems); this runs it on every point, with the licence-free subsolvers (HiGHS is not
one: PyROS moves the quadratic objective into a quadratic epigraph row, which HiGHS does
not take; so SCIP is the local and global subsolver). Each finished (data set, class, p)
is appended to a CSV at once, and a rerun skips what is already there, so an interrupted
run loses at most the instance it was on::

    python -m tpm_models.pyros_table --out docs/results/pyros_full.csv --time-limit 3600
"""

from __future__ import annotations

import argparse
import csv
import logging
import math
import os
import sys
import time
from collections.abc import Sequence

from tpm_models.data import load_dataset, min_max_scale
from tpm_models.registry import build
from tpm_models.robust_checks import ROBUST_PARAMETERS, obj_residual, objective_scale
from tpm_models.semi_infinite import solve_22_pyros
from tpm_models.solvers import NoOptimalSolutionError, solve

FIELDS = ("dataset", "cls", "p", "points", "local", "global", "status", "seconds", "objective_22",
          "objective_23", "obj_residual", "message")


def _done(path: str) -> set[tuple[str, str, str]]:
    if not os.path.exists(path):
        return set()
    with open(path, newline="") as f:
        return {(r["dataset"], r["cls"], r["p"]) for r in csv.DictReader(f) if r.get("message") is not None}


def run(datasets: Sequence[str], ps: Sequence[float], out: str, time_limit: float,
        local: str = "scip", global_: str = "scip") -> None:
    """Solve (22) by PyROS for every (data set, class, p) not yet in ``out``."""
    nu, alpha, eps = ROBUST_PARAMETERS
    done = _done(out)
    new = not os.path.exists(out)
    with open(out, "a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        if new:
            writer.writeheader()
        for name in datasets:
            data = load_dataset(name)
            X, y = min_max_scale(data.X), data.y
            for c in sorted(set(y.tolist())):
                for p in ps:
                    key = (name, str(c), f"{p:g}")
                    if key in done:
                        continue
                    print(f"{name} class {c} p={p:g}: PyROS on {len(X)} points ...", file=sys.stderr, flush=True)
                    model = build(23, X, y, c, nu, alpha, p=p, eps=eps)
                    r23 = solve(model)
                    row = {"dataset": name, "cls": c, "p": f"{p:g}", "points": len(X), "local": local,
                           "global": global_, "objective_23": f"{r23.objective:.12g}"}
                    start = time.perf_counter()
                    try:
                        pr = solve_22_pyros(X, y, c, nu, alpha, p, eps, local_solver=local, global_solver=global_,
                                            time_limit=time_limit)
                    except NoOptimalSolutionError as exc:
                        row.update(status="not robust_optimal", message=exc.result.message, objective_22="",
                                   obj_residual="")
                    else:
                        residual = obj_residual(pr.objective, r23.objective, objective_scale(model))
                        row.update(status="robust_optimal", message=pr.message, objective_22=f"{pr.objective:.12g}",
                                   obj_residual=f"{residual:.2e}")
                    row["seconds"] = f"{time.perf_counter() - start:.0f}"
                    writer.writerow(row)
                    f.flush()
                    print(f"  {row['status']} in {row['seconds']} s, residual {row['obj_residual']}", file=sys.stderr,
                          flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    """(22) by PyROS on whole data sets vs (23), appended to a CSV (resumable)."""
    parser = argparse.ArgumentParser(prog="python -m tpm_models.pyros_table", description=main.__doc__)
    parser.add_argument("--datasets", nargs="+", default=["iris", "wine"])
    parser.add_argument("--p", nargs="+", default=["inf", "1", "2"], help="norms of (21): 1, 2, inf")
    parser.add_argument("--out", required=True, help="CSV to append to (rows already there are skipped)")
    parser.add_argument("--time-limit", type=float, default=3600.0, help="PyROS time limit per instance (s)")
    parser.add_argument("--local", default="scip")
    parser.add_argument("--global", dest="global_", default="scip")
    args = parser.parse_args(argv)
    logging.getLogger("tpm_models").setLevel(logging.ERROR)
    ps = [math.inf if s.lower() in ("inf", "infinity") else float(s) for s in args.p]
    run(args.datasets, ps, args.out, args.time_limit, args.local, args.global_)


if __name__ == "__main__":
    main()
