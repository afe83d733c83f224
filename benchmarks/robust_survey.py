"""Speed and accuracy of every solver on every robust model (23), (26)-(29), Iris and Wine.

The reference of an instance is (22) solved by cutting planes
(:func:`tpm_models.checks.semi_infinite.solve_22_cutting_plane`, PIQP masters at 1e-12), which
shares no code with the builders of (23)-(29) but the data handling; by Theorem 1 its
optimum is the optimum of every model here. ::

    python -m benchmarks robust-survey                 # every installed capable solver
    python -m benchmarks robust-survey --solvers ipopt scip --csv rows.csv

:func:`robust_survey` returns one row per (instance, solver), :func:`summarize` one row per
(model, solver): solved, worst objective residual (relative to the sum of the objective's
terms, :func:`tpm_models.solvers.compare.objective_scale`), worst distance of ``w`` from the
cutting-plane ``w``, and the median and worst wall time of ``solve()`` (model build excluded).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from tpm_models.checks.robust import GENERAL_P, ROBUST_PARAMETERS, rel_gap
from tpm_models.checks.semi_infinite import solve_22_cutting_plane
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.models.registry import build
from tpm_models.solvers.backends.registry import available_solvers, honoured_time_limit
from tpm_models.solvers.common import NoOptimalSolutionError
from tpm_models.solvers.compare import objective_scale, rel_dist
from tpm_models.solvers.dispatch import is_licence_limit, solve
from tpm_models.solvers.structure import model_class

MODELS: tuple[tuple[int, float], ...] = (
    (23, 1.0), (23, 2.0), (23, math.inf), (23, GENERAL_P),
    (26, 1.0), (26, 2.0), (26, math.inf), (26, GENERAL_P),
    (27, 1.0), (28, 2.0), (29, math.inf),
)
"""(equation, p) of the survey: every robust builder at p = 1, 2, inf and one general p."""


def robust_survey(
    datasets: Sequence[str] = ("iris", "wine"),
    solvers: Sequence[str] | None = None,
    parameters: tuple[float, float, float] = ROBUST_PARAMETERS,
    models: Sequence[tuple[int, float]] = MODELS,
    time_limit: float = 120.0,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Solve every (data set, class, model, p) with every capable installed solver."""
    nu, alpha, eps = parameters
    rows = []
    for name in datasets:
        data = load_dataset(name)
        X, y = min_max_scale(data.X), data.y
        for c in np.unique(y):
            for p in sorted({p for _, p in models}):
                ref = solve_22_cutting_plane(X, y, c, nu, alpha, p, eps)
                for eq, q in models:
                    if q != p:
                        continue
                    kind = model_class(build(eq, X, y, c, nu, alpha, p=p, eps=eps))
                    capable = available_solvers(kind)
                    for solver in [s for s in (solvers or capable) if s in capable]:
                        if progress:
                            progress(f"{name} c={c} ({eq}) p={p:g} {solver}")
                        model = build(eq, X, y, c, nu, alpha, p=p, eps=eps)
                        row = {"dataset": name, "cls": int(c), "eq": eq, "p": p, "model_class": kind,
                               "solver": solver, "termination": "optimal", "seconds": math.nan,
                               "rel_gap": math.nan, "w_dist": math.nan, "message": ""}
                        try:
                            r = solve(model, solver, time_limit=honoured_time_limit(solver, time_limit))
                        except NoOptimalSolutionError as exc:
                            row.update(termination="licence limit" if is_licence_limit(exc.result)
                                       else exc.result.termination.value,
                                       seconds=exc.result.seconds, message=exc.result.message[:100])
                        else:
                            row.update(seconds=r.seconds,
                                       rel_gap=rel_gap(r.objective, ref.objective, objective_scale(model)),
                                       w_dist=rel_dist(r.values["w"], ref.w))
                        rows.append(row)
    return pd.DataFrame(rows)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, p, solver): how many solved, worst residuals, times."""
    out = []
    for (eq, p, solver), g in df.groupby(["eq", "p", "solver"], sort=True):
        ok = g[g["termination"] == "optimal"]
        out.append({
            "model": f"({eq})", "p": "∞" if math.isinf(p) else f"{p:g}", "class": g["model_class"].iloc[0],
            "solver": solver, "solved": f"{len(ok)}/{len(g)}",
            "worst obj residual": ok["rel_gap"].max() if len(ok) else math.nan,
            "worst w distance": ok["w_dist"].max() if len(ok) else math.nan,
            "median s": ok["seconds"].median() if len(ok) else math.nan,
            "worst s": ok["seconds"].max() if len(ok) else math.nan,
            "not solved": "; ".join(sorted(set(g.loc[g["termination"] != "optimal", "termination"]))),
        })
    return pd.DataFrame(out)
