"""Accuracy and speed of every capable solver on the robust models, for docs/robust.md.

    python -m tpm_models.robust_survey            # Iris and Wine, every class

For each data set, class and model ((23), (26) at p = 3, (27), (28), (29)), every installed
solver that takes the model's class is timed and its objective compared with the
semi-infinite (22) solved by cutting planes (the reference: QP masters by PIQP, worst-case
violation <= 1e-11), residual relative to the objective's terms
(:func:`tpm_models.robust_checks.obj_residual`). A failure is counted, never hidden.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence

import pandas as pd

from tpm_models.data import load_dataset, min_max_scale
from tpm_models.registry import build
from tpm_models.robust_checks import ROBUST_PARAMETERS, obj_residual, objective_scale
from tpm_models.semi_infinite import solve_22_cutting_plane
from tpm_models.solvers import NoOptimalSolutionError, available_solvers, is_licence_limit, model_class, solve
from tpm_models.survey import _markdown

CASES = ((23, 2.0), (23, math.inf), (26, 3.0), (27, 1.0), (28, 2.0), (29, math.inf))


def robust_survey(datasets: Sequence[str] = ("iris", "wine")) -> pd.DataFrame:
    """One row per (data set, class, model, p, solver)."""
    nu, alpha, eps = ROBUST_PARAMETERS
    rows = []
    for name in datasets:
        d = load_dataset(name)
        X = min_max_scale(d.X)
        for c in range(d.n_classes):
            for eq, p in CASES:
                start = time.perf_counter()
                ref = solve_22_cutting_plane(X, d.y, c, nu, alpha, p, eps)
                cp_seconds = time.perf_counter() - start
                kind = model_class(build(eq, X, d.y, c, nu, alpha, p=p, eps=eps))
                rows.append(dict(dataset=name, c=c, eq=eq, p=p, model_class=kind, solver="cutting planes (22)",
                                 status="optimal", residual=0.0, seconds=cp_seconds, rounds=ref.rounds))
                for solver in available_solvers(kind):
                    model = build(eq, X, d.y, c, nu, alpha, p=p, eps=eps)
                    try:
                        r = solve(model, solver)
                    except NoOptimalSolutionError as exc:
                        status = "licence limit" if is_licence_limit(exc.result) else exc.result.termination.value
                        rows.append(dict(dataset=name, c=c, eq=eq, p=p, model_class=kind, solver=solver,
                                         status=status, residual=math.nan, seconds=exc.result.seconds))
                        continue
                    res = obj_residual(r.objective, ref.objective, objective_scale(model))
                    rows.append(dict(dataset=name, c=c, eq=eq, p=p, model_class=kind, solver=solver,
                                     status="optimal", residual=res, seconds=r.seconds))
    return pd.DataFrame(rows)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Per model and solver: solves, optimal, worst residual, median milliseconds."""
    g = df.groupby(["eq", "p", "solver"], sort=True)
    out = pd.DataFrame({
        "solves": g.size(),
        "optimal": g["status"].apply(lambda s: int((s == "optimal").sum())),
        "other outcomes": g["status"].apply(lambda s: ", ".join(sorted(set(s) - {"optimal"})) or "-"),
        "worst residual": g["residual"].max(),
        "median ms": g["seconds"].median() * 1e3,
    })
    return out.reset_index()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tpm_models.robust_survey", description=__doc__)
    parser.add_argument("--datasets", nargs="+", default=["iris", "wine"])
    args = parser.parse_args(argv)
    table = summarize(robust_survey(args.datasets))
    table["p"] = table["p"].map(lambda p: "inf" if math.isinf(p) else f"{p:g}")
    print(_markdown(table))


if __name__ == "__main__":  # pragma: no cover
    main()
