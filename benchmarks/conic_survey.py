"""Which solver by default for the SOCP and p-norm (NLP) models: every capable solver on 360 instances of (23) and
their twins (26)-(29), against an independent reference. ::

    /tmp/cvx/bin/python docs/reference/cvxpy_23.py docs/reference/cvxpy_23.csv    # the reference (cvxpy, once)
    python -m benchmarks conic-survey --csv rows.csv                  # every installed capable solver
    python -m benchmarks conic-survey --solvers clarabel ipopt

**Instances** (:data:`PARAMETERS`, :data:`P_VALUES`, :data:`EPS`): Iris and Wine (whole sets, min-max scaled),
every class, :math:`(\\nu, \\alpha) \\in \\{(0.2, 1), (0.5, 1), (0.9, 1), (1, 2)\\}`,
:math:`p \\in \\{1, 1.5, 2, 3, \\infty\\}`, :math:`\\varepsilon \\in \\{0, 0.02, 0.1\\}`: 360 instances. Each is
solved as (23), as (26), and as its Corollary-1 SOCP ((27) at :math:`p = 1`, (28) at 2, (29) at
:math:`\\infty`): 936 models, all with the same optimal value, :math:`w` and interval of optimal :math:`\\theta`.

**Reference.** ``docs/reference/cvxpy_23.py`` writes (23) straight from the paper's equation in cvxpy (another
modelling layer; its norms are cvxpy's atoms) and solves it by Clarabel at each of 1e-12 .. 1e-9, keeping the
point of least residual (relative duality gap, scaled primal and dual residuals: at most 4.5e-10, median 5e-13).
An interior point's :math:`w` is off by about the square root of its gap (up to 5e-6 here), so the script then
refines 352 of the 360 points in its own terms: Newton's method on (23)'s optimality conditions in
:math:`(w, \\theta, \\lambda)` where the norm is smooth (:math:`\\varepsilon = 0` or :math:`p \\in \\{1.5, 2, 3\\}`),
an active-set method on (23) as a QP at :math:`p \\in \\{1, \\infty\\}`, each kept only when (23)'s optimality
conditions hold to 1e-13 (column ``refined``); the 8 left are the instances with :math:`w = 0`. It is run in a
throwaway environment (the library never imports cvxpy) and its rows are read here from the CSV file
(:func:`read_reference`).

**Measured per (model, solver).** ``solved``: ``solve()`` returned an optimal, feasible point; ``obj``:
:func:`~tpm_models.solvers.compare.rel_gap` of the objective and the reference's, relative to the sum of the
objective's terms (:func:`~tpm_models.solvers.compare.objective_scale`, at least :data:`OBJ_FLOOR`; the terms
cancel to a small total);
``w``: :func:`~tpm_models.solvers.compare.rel_dist` of ``w`` from the reference's (reported also on the
instances whose reference point is refined); ``theta``: whether the solver's
:math:`\\theta` lies in the interval of optimal :math:`\\theta` for its own :math:`w`
(:func:`~tpm_models.models.recovery.theta_interval_primal` on the scores
:math:`{x^i}^\\top w - \\varepsilon\\|w\\|_{p'}`), widened by :data:`THETA_SLACK` relative to
:math:`\\max(1, |\\text{end}|)`; ``seconds``: ``SolveResult.seconds`` (the backend call with the translation of the
Pyomo model; the build excluded). A solve is *accurate* when all three meet :data:`OBJ_TOL`, :data:`W_TOL` and
:data:`THETA_SLACK`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tpm_models.data import load_dataset, min_max_scale
from tpm_models.models.norms import dual_norm
from tpm_models.models.recovery import theta_interval_primal
from tpm_models.models.registry import build
from tpm_models.solvers.backends.registry import available_solvers, honoured_time_limit
from tpm_models.solvers.common import NoOptimalSolutionError
from tpm_models.solvers.compare import objective_scale, rel_dist, rel_gap
from tpm_models.solvers.dispatch import is_licence_limit, solve
from tpm_models.solvers.structure import model_class

DATASETS: tuple[str, ...] = ("iris", "wine")
PARAMETERS: tuple[tuple[float, float], ...] = ((0.2, 1.0), (0.5, 1.0), (0.9, 1.0), (1.0, 2.0))
"""(nu, alpha): nu/alpha in {0.2, 0.5, 0.9}, and 1/2 at alpha = 2."""
P_VALUES: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0, math.inf)
EPS: tuple[float, ...] = (0.0, 0.02, 0.1)
TWIN = {1.0: 27, 2.0: 28, math.inf: 29}
"""Corollary 1's SOCP of each p."""

OBJ_TOL = 1e-8
"""Target: objective within 1e-8 of the reference, relative to the objective's terms."""
OBJ_FLOOR = 1e-3
"""The least denominator of the objective error: at w = 0 (Iris class 1, eps = 0.1: nothing to gain from a
hyperplane) the optimum is 0 and every term is ~1e-11, so a relative error is noise."""
W_TOL = 1e-7
"""Target: ``rel_dist(w, w_ref)`` <= 1e-7."""
THETA_SLACK = 1e-8
"""The interval of optimal theta widened by 1e-8 * max(1, |end|) on each side."""

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "cvxpy_23.csv"
"""The reference rows (``docs/reference/cvxpy_23.py``) in a source checkout."""


def read_reference(path: str | Path = REFERENCE) -> dict[tuple, dict]:
    """The reference rows by ``(dataset, cls, nu, alpha, p, eps)``: ``objective``, ``theta``, ``w``."""
    frame = pd.read_csv(path)
    out = {}
    for row in frame.itertuples(index=False):
        key = (row.dataset, int(row.cls), float(row.nu), float(row.alpha), float(row.p), float(row.eps))
        out[key] = {"objective": float(row.objective), "theta": float(row.theta),
                    "w": np.array([float(v) for v in str(row.w).split()]), "status": row.status,
                    "tol": float(row.tol), "residual": float(row.residual),
                    "refined": "" if pd.isna(row.refined) else str(row.refined)}
    return out


def theta_in_interval(theta: float, w: np.ndarray, Xc: np.ndarray, nu: float, alpha: float, p: float,
                      eps: float, slack: float = THETA_SLACK) -> bool:
    """Whether ``theta`` is optimal for ``w`` (the interval of :func:`theta_interval_primal`, widened by ``slack``)."""
    scores = Xc @ w - eps * dual_norm(w, p)
    lo, hi = theta_interval_primal(-scores, nu, alpha)
    return lo - slack * max(1.0, abs(lo)) <= theta <= hi + slack * max(1.0, abs(hi))


def conic_survey(
    reference: dict[tuple, dict],
    solvers: Sequence[str] | None = None,
    datasets: Sequence[str] = DATASETS,
    time_limit: float = 120.0,
    progress: Callable[[str], None] | None = None,
    extra_models: Sequence[int | str] = (),
) -> pd.DataFrame:
    """One row per (instance, model, solver); ``solvers`` default: every installed solver of SOCP or NLP.
    ``extra_models``: registered models of any p solved beside (23), (26) and the twin (``"15R"``: (23) derived by
    :func:`tpm_models.models.counterpart.robust_counterpart`)."""
    wanted = list(solvers) if solvers else list(dict.fromkeys(available_solvers("SOCP") + available_solvers("NLP")))
    rows = []
    for name in datasets:
        data = load_dataset(name)
        X, y = min_max_scale(data.X), data.y
        for c in np.unique(y):
            Xc = X[y == c]
            for nu, alpha in PARAMETERS:
                for p in P_VALUES:
                    for eps in EPS:
                        ref = reference[(name, int(c), nu, alpha, p, eps)]
                        for eq in (23, 26, *((TWIN[p],) if p in TWIN else ()), *extra_models):
                            kind = model_class(build(eq, X, y, c, nu, alpha, p=p, eps=eps))
                            capable = available_solvers(kind)
                            for solver in [s for s in wanted if s in capable]:
                                if progress:
                                    progress(f"{name} c={c} nu={nu:g} alpha={alpha:g} p={p:g} eps={eps:g} ({eq}) "
                                             f"{solver}")
                                rows.append(_one(build(eq, X, y, c, nu, alpha, p=p, eps=eps), solver, ref, Xc,
                                                 {"dataset": name, "cls": int(c), "nu": nu, "alpha": alpha, "p": p,
                                                  "eps": eps, "eq": eq, "model_class": kind, "solver": solver,
                                                  "ref_residual": ref["residual"],
                                                  "ref_refined": bool(ref["refined"])},
                                                 time_limit))
    return pd.DataFrame(rows)


def _one(model, solver: str, ref: dict, Xc: np.ndarray, row: dict, time_limit: float) -> dict:
    row = {**row, "termination": "optimal", "seconds": math.nan, "obj_err": math.nan, "w_err": math.nan,
           "theta_ok": False, "message": ""}
    try:
        r = solve(model, solver, time_limit=honoured_time_limit(solver, time_limit))
    except NoOptimalSolutionError as exc:
        row.update(termination="licence limit" if is_licence_limit(exc.result) else exc.result.termination.value,
                   seconds=exc.result.seconds, message=exc.result.message[:100])
        return row
    w = np.asarray(r.values["w"], dtype=float)
    scale = max(objective_scale(model), OBJ_FLOOR)
    row.update(seconds=r.seconds, obj_err=rel_gap(r.objective, ref["objective"], scale),
               w_err=rel_dist(w, ref["w"]),
               theta_ok=theta_in_interval(float(r.values["theta"]), w, Xc, row["nu"], row["alpha"], row["p"],
                                          row["eps"]))
    return row


def summarize(df: pd.DataFrame, by: Sequence[str] = ("solver",)) -> pd.DataFrame:
    """Per ``by``: solved/total, accurate (all three targets met), worst errors, theta failures, median and worst s."""
    out = []
    for key, g in df.groupby(list(by), sort=True):
        ok = g[g["termination"] == "optimal"]
        accurate = ok[(ok["obj_err"] <= OBJ_TOL) & (ok["w_err"] <= W_TOL) & ok["theta_ok"]]
        row = dict(zip(by, key if isinstance(key, tuple) else (key,)))
        row.update({
            "solved": f"{len(ok)}/{len(g)}", "accurate": f"{len(accurate)}/{len(g)}",
            "worst obj err": ok["obj_err"].max() if len(ok) else math.nan,
            "worst w err": ok["w_err"].max() if len(ok) else math.nan,
            "worst w err, refined reference": ok.loc[ok["ref_refined"], "w_err"].max() if len(ok) else math.nan,
            "theta outside": int((~ok["theta_ok"]).sum()),
            "median ms": 1e3 * ok["seconds"].median() if len(ok) else math.nan,
            "worst ms": 1e3 * ok["seconds"].max() if len(ok) else math.nan,
            "not solved": "; ".join(f"{t} ({n})" for t, n in
                                    g.loc[g["termination"] != "optimal", "termination"].value_counts().items()),
        })
        out.append(row)
    return pd.DataFrame(out)
