"""Solver reliability survey on the paper's dual QPs (16) and (19).

Every installed QP backend of :mod:`tpm_models.solvers` is run on every instance of a
grid (data set x class x alpha x nu/alpha x kernel) and compared with the others, so the
default QP solver can be chosen from data (``docs/solvers.md``)::

    python -m benchmarks survey              # the paper grid on Iris and Wine, dual (16)
    python -m benchmarks survey --csv rows.csv

:func:`survey` returns one row per (instance, solver), :func:`summarize` one row per
solver, :func:`rescaled` re-solves instances in the exactly rescaled form
(:math:`\\nu' = 1`, :math:`\\alpha' = \\alpha/\\nu`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import pyomo.environ as pyo

from tpm_models.data import load_dataset, min_max_scale
from tpm_models.kernels import Kernel
from tpm_models.models.registry import build
from tpm_models.solvers.backends.registry import available_solvers
from tpm_models.solvers.common import Termination
from tpm_models.solvers.dispatch import solve

PAPER_ALPHAS = tuple(2.0**j for j in range(-8, 9))
"""The paper's grid of alpha: 2^j, j = -8..8."""

PAPER_RATIOS = tuple(round(0.1 * k, 1) for k in range(1, 10))
"""The paper's grid of nu/alpha: 0.1, 0.2, ..., 0.9."""

ACCURATE = 1e-6
"""A solve counts as accurate when optimal and ``rel_err <= ACCURATE``."""

SLOW_SOLVERS = ("gurobi", "cplex", "xpress", "scip")
"""Backends that :func:`main` runs on a deterministic subsample of the grid (``--stride``)."""

FAILURES = tuple(t.value for t in Termination if t is not Termination.OPTIMAL)


def _kernel_label(kernel: Kernel | None) -> str:
    if kernel is None:
        return "linear (16)"
    params = {k: v for k, v in vars(kernel).items() if k != "name" and v is not None}
    inside = ", ".join(f"{k}={v:g}" for k, v in params.items())
    return f"{kernel.name}{'(' + inside + ')' if inside else ''} (19)"


def _build(X, y, c, nu, alpha, kernel: Kernel | None) -> pyo.ConcreteModel:
    if kernel is None:
        return build(16, X, y, c, nu, alpha)
    return build(19, X, y, c, nu, alpha, kernel=kernel)


def _point_objective(model: pyo.ConcreteModel) -> float:
    """The objective at the model's current values (NaN if a value is missing or not finite)."""
    for v in model.component_data_objects(pyo.Var, descend_into=True):
        if v.value is None or not math.isfinite(v.value):
            return math.nan
    obj = next(model.component_data_objects(pyo.Objective, active=True))
    value = pyo.value(obj, exception=False)
    return float(value) if value is not None else math.nan


def _selected(stride: int, ia: int, ir: int, ic: int) -> bool:
    """Deterministic subsample: instance (alpha #ia, ratio #ir, class #ic) is kept for a
    solver of stride ``s`` iff ``(ia + ir + ic) % s == 0`` (every alpha, ratio and class
    still appears)."""
    return (ia + ir + ic) % stride == 0


def survey(
    datasets: Sequence[str] = ("iris", "wine"),
    solvers: Sequence[str] | None = None,
    alphas: Sequence[float] | None = None,
    ratios: Sequence[float] | None = None,
    kernels: Sequence[Kernel | None] | None = None,
    classes: Sequence[int] | None = None,
    progress: Callable[[int, int], None] | None = None,
    strides: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """Solve every instance of the grid with every solver; one row per (instance, solver).

    Grid: each data set in ``datasets`` (the whole set, min-max scaled with
    :func:`~tpm_models.data.min_max_scale`), each class ``c`` in ``classes`` (default: all),
    each ``alpha`` in ``alphas`` (default :data:`PAPER_ALPHAS`), each ``nu/alpha`` in
    ``ratios`` (default :data:`PAPER_RATIOS`; ``nu = ratio * alpha``) and each entry of
    ``kernels``: ``None`` is the linear dual (16) (the default, ``kernels=[None]``), a
    :class:`~tpm_models.kernels.Kernel` is the kernel dual (19) with that kernel.

    Each instance is built once and solved by every solver in turn (default: all installed
    QP solvers). Every solve starts cold: :func:`~tpm_models.solvers.dispatch.solve` sets every
    free variable to ``None`` before calling the backend, none of the backends is asked to
    warm start, and the Pyomo interfaces are created afresh for each solve, so no solver
    sees another's values.

    ``strides`` (solver -> s) runs a solver only on a deterministic subsample, the
    instances whose alpha, ratio and class positions sum to a multiple of ``s``.

    Columns
    -------
    dataset, cls, alpha, ratio, nu, kernel, solver
        The instance and the solver.
    termination
        :class:`~tpm_models.solvers.common.Termination` value.
    objective
        The objective reported by :func:`solve` (NaN unless optimal).
    point_objective
        The objective evaluated at the point the solver returned, optimal or not (NaN if
        no finite point came back).
    max_violation
        Largest constraint/bound violation at the returned point.
    seconds
        ``SolveResult.seconds``: the backend call, including the translation of the
        Pyomo model (matrix extraction for piqp/daqp, Pyomo's writer for the others).
    wall_seconds
        The whole :func:`solve` call (adds loading values and our feasibility check).
    reference
        The reference objective of this row: the **median of the optimal objectives of all
        the other solvers** on the same instance (never the measured solver itself); NaN
        if no other solver was optimal.
    rel_err
        ``|objective - reference| / max(1, |reference|)`` (NaN unless optimal).
    point_rel_err
        The same with ``point_objective`` (shows how far off a failed solve's point is).
    message, version
        The backend's message and package version.
    """
    solvers = list(solvers) if solvers is not None else available_solvers("QP")
    alphas = list(alphas) if alphas is not None else list(PAPER_ALPHAS)
    ratios = list(ratios) if ratios is not None else list(PAPER_RATIOS)
    kernels = list(kernels) if kernels is not None else [None]
    strides = dict(strides or {})

    data = []
    for name in datasets:
        ds = load_dataset(name)
        cls = list(classes) if classes is not None else list(range(ds.n_classes))
        data.append((name, min_max_scale(ds.X), ds.y, cls))
    total = sum(len(cls) for *_, cls in data) * len(alphas) * len(ratios) * len(kernels)

    rows: list[dict] = []
    done = 0
    for name, X, y, cls in data:
        for kernel in kernels:
            for ic, c in enumerate(cls):
                for ia, alpha in enumerate(alphas):
                    for ir, ratio in enumerate(ratios):
                        nu = ratio * alpha
                        chosen = [s for s in solvers if _selected(strides.get(s, 1), ia, ir, ic)]
                        model = _build(X, y, c, nu, alpha, kernel) if chosen else None
                        for solver in chosen:
                            start = time.perf_counter()
                            res = solve(model, solver=solver, raise_on_failure=False)
                            wall = time.perf_counter() - start
                            rows.append({
                                "dataset": name, "cls": c, "alpha": alpha, "ratio": ratio, "nu": nu,
                                "kernel": _kernel_label(kernel), "solver": solver,
                                "termination": res.termination.value,
                                "objective": res.objective if res.objective is not None else math.nan,
                                "point_objective": _point_objective(model),
                                "max_violation": res.max_violation,
                                "seconds": res.seconds, "wall_seconds": wall,
                                "message": res.message, "version": res.solver_version,
                            })
                        done += 1
                        if progress is not None:
                            progress(done, total)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    return _add_reference(df)


INSTANCE = ["dataset", "cls", "alpha", "ratio", "kernel"]


def _add_reference(df: pd.DataFrame) -> pd.DataFrame:
    """Reference = median of the optimal objectives of the *other* solvers of the instance."""
    df = df.copy()
    refs = np.full(len(df), np.nan)
    for _, group in df.groupby(INSTANCE, sort=False):
        ok = group["termination"].eq(Termination.OPTIMAL.value).to_numpy()
        obj = group["objective"].to_numpy()
        for k, idx in enumerate(group.index):
            others = obj[ok & (np.arange(len(group)) != k)]
            if len(others):
                refs[df.index.get_loc(idx)] = float(np.median(others))
    df["reference"] = refs
    scale = np.maximum(1.0, np.abs(df["reference"]))
    df["rel_err"] = (df["objective"] - df["reference"]).abs() / scale
    df["point_rel_err"] = (df["point_objective"] - df["reference"]).abs() / scale
    return df


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """One row per solver.

    ``QPs`` solves; ``% optimal`` with termination optimal; ``% accurate`` optimal and
    ``rel_err <= 1e-6``; one count column per failure termination that occurs (plus
    ``optimal, rel_err > 1e-6``: reported optimal with a wrong objective, and ``no
    reference``: optimal but no other solver was, so unchecked); median and 95th-percentile
    milliseconds of ``seconds``; ``worst rel_err`` among the optimal solves, and the worst
    unscaled ``|objective - reference| / |reference|`` (``rel_err`` is an absolute error when
    ``|reference| < 1``, as for small alpha, where the objectives are 1e-8..1e-3).
    """
    out = []
    for solver, g in df.groupby("solver", sort=False):
        opt = g["termination"].eq(Termination.OPTIMAL.value)
        accurate = opt & (g["rel_err"] <= ACCURATE)
        row = {
            "solver": solver,
            "QPs": len(g),
            "% optimal": 100.0 * opt.mean(),
            "% accurate": 100.0 * accurate.mean(),
        }
        for term in FAILURES:
            row[term] = int(g["termination"].eq(term).sum())
        row["optimal, rel_err > 1e-6"] = int((opt & (g["rel_err"] > ACCURATE)).sum())
        row["no reference"] = int((opt & g["reference"].isna()).sum())
        ms = 1000.0 * g["seconds"]
        row["median ms"] = float(ms.median())
        row["p95 ms"] = float(ms.quantile(0.95))
        row["worst rel_err"] = float(g.loc[opt, "rel_err"].max()) if opt.any() else math.nan
        unscaled = (g["objective"] - g["reference"]).abs() / g["reference"].abs()
        row["worst err/ref"] = float(unscaled[opt].max()) if opt.any() else math.nan
        out.append(row)
    table = pd.DataFrame(out).set_index("solver")
    empty = [t for t in (*FAILURES, "no reference") if table[t].sum() == 0]
    return table.drop(columns=empty)


def failures_by_alpha(df: pd.DataFrame, solver: str) -> pd.DataFrame:
    """For one solver: per alpha, solves and how many ended in each non-accurate way."""
    g = df[df["solver"] == solver]
    opt = g["termination"].eq(Termination.OPTIMAL.value)
    frame = pd.DataFrame({
        "alpha": g["alpha"],
        "QPs": 1,
        "optimal": opt.astype(int),
        "optimal, rel_err > 1e-6": (opt & (g["rel_err"] > ACCURATE)).astype(int),
    })
    for term in FAILURES:
        frame[term] = g["termination"].eq(term).astype(int)
    table = frame.groupby("alpha").sum()
    table = table.loc[:, (table != 0).any(axis=0) | table.columns.isin(["QPs", "optimal"])]
    table.index = [f"2^{int(round(math.log2(a)))}" for a in table.index]
    table.index.name = "alpha"
    return table


def rescaled(
    df: pd.DataFrame,
    instances: Iterable[tuple] | None = None,
    solver: str = "highs",
) -> pd.DataFrame:
    """Re-solve instances of ``df`` (linear dual (16) only) in the exactly rescaled form.

    (16) with ``nu' = 1``, ``alpha' = alpha/nu`` has the solution ``lam' = lam/nu`` and the
    optimal value ``opt' = opt/nu^2``: substitute ``lam = nu lam'`` in (16). The rescaled
    problem is solved by ``solver`` and ``nu^2 * opt'`` compared with the reference of the
    original instance (median of the optimal objectives of the solvers other than
    ``solver`` in ``df``). ``instances``: ``(dataset, cls, alpha, ratio)`` tuples (default:
    every linear instance of ``df``). One row per instance: termination and ``rel_err`` of
    ``solver`` on the original (from ``df``) and on the rescaled problem.
    """
    lin = df[df["kernel"] == _kernel_label(None)]
    if instances is None:
        instances = lin[["dataset", "cls", "alpha", "ratio"]].drop_duplicates().itertuples(index=False)
    cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    rows = []
    for dataset, c, alpha, ratio in instances:
        here = lin[(lin["dataset"] == dataset) & (lin["cls"] == c) & (lin["alpha"] == alpha)
                   & (lin["ratio"] == ratio)]
        others = here[(here["solver"] != solver) & here["termination"].eq(Termination.OPTIMAL.value)]
        reference = float(others["objective"].median()) if len(others) else math.nan
        mine = here[here["solver"] == solver]
        if dataset not in cache:
            ds = load_dataset(dataset)
            cache[dataset] = (min_max_scale(ds.X), ds.y)
        X, y = cache[dataset]
        nu = ratio * alpha
        model = build(16, X, y, c, 1.0, alpha / nu)
        res = solve(model, solver=solver, raise_on_failure=False)
        objective = nu**2 * res.objective if res.objective is not None else math.nan
        scale = max(1.0, abs(reference))
        rows.append({
            "dataset": dataset, "cls": c, "alpha": alpha, "ratio": ratio, "reference": reference,
            "original": mine["termination"].iloc[0] if len(mine) else None,
            "original rel_err": float(mine["rel_err"].iloc[0]) if len(mine) else math.nan,
            "rescaled": res.termination.value,
            "rescaled objective": objective,
            "rescaled rel_err": abs(objective - reference) / scale,
            "rescaled seconds": res.seconds,
        })
    return pd.DataFrame(rows)


def summarize_rescaled(r: pd.DataFrame) -> pd.DataFrame:
    """Per alpha: instances, accurate (optimal and rel_err <= 1e-6) solves on the original and
    on the rescaled problem, and the worst rescaled rel_err."""
    opt = Termination.OPTIMAL.value
    frame = pd.DataFrame({
        "alpha": r["alpha"],
        "instances": 1,
        "original accurate": (r["original"].eq(opt) & (r["original rel_err"] <= ACCURATE)).astype(int),
        "rescaled accurate": (r["rescaled"].eq(opt) & (r["rescaled rel_err"] <= ACCURATE)).astype(int),
    })
    table = frame.groupby("alpha").sum()
    table["worst rescaled rel_err"] = r.groupby("alpha")["rescaled rel_err"].max()
    table.index = [f"2^{int(round(math.log2(a)))}" for a in table.index]
    table.index.name = "alpha"
    return table


def markdown_table(table: pd.DataFrame) -> str:
    def fmt(v):
        if isinstance(v, int | np.integer):
            return str(int(v))
        if isinstance(v, float | np.floating):
            if math.isnan(v):
                return "–"
            if v != 0 and (abs(v) < 1e-2 or abs(v) >= 1e5):
                return f"{v:.1e}"
            if abs(v) < 1:
                return f"{v:.2g}"
            return f"{v:.1f}"
        return str(v)

    head = [table.index.name or ""] + [str(c) for c in table.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for idx, row in table.astype(object).iterrows():
        lines.append("| " + " | ".join([str(idx)] + [fmt(v) for v in row.tolist()]) + " |")
    return "\n".join(lines)
