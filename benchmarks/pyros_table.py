"""(22) by PyROS on the whole data sets, against (23): the table in ``docs/robust.md``.

``tpm-models check`` runs PyROS on subsets (Gurobi's pip licence caps the separation
problems); this runs it on every point. The default subsolver, local and global, is our
Ipopt plugin ``tpm_ipopt`` (:class:`tpm_models.solvers.ipopt.CasadiIpopt`; why it may act as the
global solver: :func:`tpm_models.checks.semi_infinite.solve_22_pyros`). HiGHS cannot be one (PyROS
moves the quadratic objective into a quadratic epigraph row, which HiGHS does not take);
``--local scip --global scip`` is the licence-free alternative that timed out.

Every PyROS objective is compared with (23) solved independently by its default solver
(PIQP for p = 1, inf; Ipopt for p = 2) and with (22) by cutting planes
(:func:`tpm_models.checks.semi_infinite.solve_22_cutting_plane`: PIQP masters and the closed-form
oracle (25), no Ipopt). Each finished (data set, class, p) is appended to a CSV at once
with the 1-minute load average before and after it, and a rerun skips what is already
there, so an interrupted run loses at most the instance it was on::

    nice -n 10 python -m benchmarks pyros-table --out docs/results/pyros.csv --time-limit 1800
    python -m benchmarks pyros-table --markdown docs/results/pyros.csv
"""

from __future__ import annotations

import csv
import io
import os
import sys
from collections.abc import Sequence

from tpm_models.checks.robust import ROBUST_PARAMETERS, rel_gap
from tpm_models.checks.semi_infinite import solve_22_cutting_plane, solve_22_pyros
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.files import append_line
from tpm_models.models.registry import build
from tpm_models.solvers.common import NoOptimalSolutionError
from tpm_models.solvers.compare import objective_scale
from tpm_models.solvers.dispatch import solve

FIELDS = ("dataset", "cls", "p", "points", "uncertain_params", "local", "global", "termination", "iterations",
          "seconds", "objective_22", "pyros_objective", "objective_23", "solver_23", "rel_diff", "rel_gap",
          "objective_cp", "rel_diff_cp", "load_start", "load_end", "message")
"""CSV columns. ``termination`` is PyROS's own. ``objective_22``: the objective of (22) at
PyROS's (w, theta), inner maxima by (25); ``pyros_objective``: PyROS's final objective.
``rel_diff`` = ``|objective_22 - objective_23| / |objective_23|``; ``rel_gap``: the same
difference over ``max(|a|, |b|, S)`` with S the sum of the absolute values of the terms of
(23)'s objective (``robust_checks.rel_gap``); ``rel_diff_cp``: ``objective_22`` against
the cutting planes, relative like ``rel_diff``."""


def _done(path: str) -> set[tuple[str, str, str]]:
    if not os.path.exists(path):
        return set()
    with open(path, newline="") as f:
        return {(r["dataset"], r["cls"], r["p"]) for r in csv.DictReader(f) if r.get("message") is not None}


def csv_line(fields: Sequence[object]) -> str:
    """One CSV row, its newline included (what ``csv.writer`` writes)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(fields)
    return buffer.getvalue()


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def run(datasets: Sequence[str], ps: Sequence[float], out: str, time_limit: float,
        local: str = "tpm_ipopt", global_: str = "tpm_ipopt", classes: Sequence[str] | None = None) -> None:
    """Solve (22) by PyROS for every (data set, class, p) not yet in ``out``."""
    nu, alpha, eps = ROBUST_PARAMETERS
    done = _done(out)
    if not os.path.exists(out):
        append_line(out, csv_line(FIELDS))
    # one row appended (flushed, synced, never through a link) as each instance ends
    for name in datasets:
        data = load_dataset(name)
        X, y = min_max_scale(data.X), data.y
        for c in sorted(set(y.tolist())):
            if classes is not None and str(c) not in classes:
                continue
            for p in ps:
                key = (name, str(c), f"{p:g}")
                if key in done:
                    continue
                print(f"{name} class {c} p={p:g}: PyROS on {len(X)} points ...", file=sys.stderr, flush=True)
                row = {"dataset": name, "cls": c, "p": f"{p:g}", "points": len(X),
                       "uncertain_params": len(X) * X.shape[1] * (2 if p == 1 else 1),
                       "local": local, "global": global_, "load_start": _load()}
                model = build(23, X, y, c, nu, alpha, p=p, eps=eps)
                r23 = solve(model)
                scale = objective_scale(model)
                cp = solve_22_cutting_plane(X, y, c, nu, alpha, p, eps)
                row.update(objective_23=f"{r23.objective:.12g}", solver_23=r23.solver,
                           objective_cp=f"{cp.objective:.12g}")
                try:
                    pr = solve_22_pyros(X, y, c, nu, alpha, p, eps, local_solver=local, global_solver=global_,
                                        time_limit=time_limit, raise_on_failure=False)
                except (NoOptimalSolutionError, RuntimeError, ValueError) as exc:  # a subsolver crashing
                    row.update(termination="error", iterations="", seconds="", message=f"{type(exc).__name__}: "
                               f"{str(exc)[:300]}")
                else:
                    row.update(termination=pr.termination, iterations=pr.rounds, seconds=f"{pr.seconds:.1f}",
                               message=pr.message)
                    if pr.termination == "robust_optimal":
                        row.update(
                            objective_22=f"{pr.objective:.12g}", pyros_objective=f"{pr.lower_bound:.12g}",
                            rel_diff=f"{abs(pr.objective - r23.objective) / abs(r23.objective):.2e}",
                            rel_gap=f"{rel_gap(pr.objective, r23.objective, scale):.2e}",
                            rel_diff_cp=f"{abs(pr.objective - cp.objective) / abs(cp.objective):.2e}",
                        )
                row["load_end"] = _load()
                append_line(out, csv_line([row.get(field, "") for field in FIELDS]))
                print(f"  {row['termination']} in {row['seconds']} s, rel. diff {row.get('rel_diff', '')}",
                      file=sys.stderr, flush=True)


def markdown(path: str) -> str:
    """The CSV as the Markdown table of ``docs/robust.md``, plus the worst difference per p."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    lines = ["| data set | class | p | uncertain params | PyROS termination | iterations | seconds | (22) by PyROS "
             "| (23) | rel. diff | vs cutting planes | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    worst: dict[str, float] = {}
    for r in rows:
        lines.append(f"| {r['dataset']} | {r['cls']} | {r['p']} | {r['uncertain_params']} | {r['termination']} "
                     f"| {r['iterations']} | {r['seconds']} | {r['objective_22'] or '—'} | {r['objective_23']} "
                     f"| {r['rel_diff'] or '—'} | {r['rel_diff_cp'] or '—'} | {r['load_start']}–{r['load_end']} |")
        if r["rel_diff"]:
            worst[r["p"]] = max(worst.get(r["p"], 0.0), float(r["rel_diff"]), float(r["rel_diff_cp"]))
    lines.append("")
    lines.append("Worst relative difference (to (23) or to the cutting planes) per p: "
                 + ", ".join(f"p = {p}: {v:.1e}" for p, v in sorted(worst.items())) + ".")
    return "\n".join(lines)
