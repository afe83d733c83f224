"""``python -m benchmarks bench scale``: the paper's models at a user's size beside cvxpy + Clarabel (measured, not
asserted).

For each model and size :math:`m`: the data (:func:`scale_data`: scikit-learn's
``make_classification``, 20 features, 4 classes, min-max scaled, class 1 against the rest; ``nu = 0.3``,
``alpha = 1``, ``eps = 0.02``), then

* **tpm-models**: ``build(eq, ...)`` and ``solve(model)`` (the default solver), in a fresh process;
* **cvxpy + Clarabel**: the same model written from the paper's equation in cvxpy (:data:`CVXPY_SCRIPT`) and
  solved by Clarabel at its defaults (what a researcher would otherwise write), in a fresh process
  (``pip install -e ".[bench]"``: cvxpy is never a library dependency).

The data of each size and seed is drawn once (:func:`write_scale_data`) and each process reads it from a ``.npz``
file (:func:`read_scale_data`), as a user's process reads its data set: neither side imports scikit-learn, whose
import (2-3 s on a 2-core machine, ``docs/bench-scale.md``) is neither library's and was most of a process's wall
time and of its spread at 10^4 points. Each row reports the build and solve seconds, the whole process's wall time
(imports included, as a user waits for it), its peak resident memory, the objective, and the ratio of the wall times
(ours / cvxpy's): below 1 we are faster; the peak ratio likewise. With ``repeats`` (``--repeats``), each side runs
that many times in turn and the row is each side's run of median wall time, the range of the runs' ratios beside it:
on a shared machine one pair of runs varies by 10-30 % (``docs/bench-scale.md``). The objectives' absolute
difference closes the row. The objective of both is the model's (the objective of (26)-(29) is
:math:`\\tfrac12(u - v)` plus the same terms, equal to (23)'s at the optimum).
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import child_env
from tpm_models.models.registry import build
from tpm_models.solvers import solve

SCALE_NU, SCALE_ALPHA, SCALE_EPS, SCALE_FEATURES, SCALE_CLASS = 0.3, 1.0, 0.02, 20, 1

SCALE_MODELS: tuple[tuple[int, float | None], ...] = (
    (15, None), (23, 1.0), (23, 1.5), (23, 2.0), (23, 3.0), (23, math.inf), (26, 1.5), (27, None), (28, None),
    (29, None),
)
"""The models of the page's table (``docs/bench-scale.md``): ``(equation, p)``."""


def scale_data(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``m`` points of ``make_classification`` (20 features, 10 informative, 4 classes, ``random_state=seed``),
    min-max scaled to :math:`[0, 1]`, labels 0..3 (the models read class 1 against the rest)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=m, n_features=SCALE_FEATURES, n_informative=10, n_classes=4,
                               random_state=seed)
    lo, hi = X.min(axis=0), X.max(axis=0)
    return (X - lo) / np.where(hi > lo, hi - lo, 1.0), y


def write_scale_data(m: int, seed: int, directory: str | Path) -> Path:
    """:func:`scale_data` (``m``, ``seed``) written to ``directory`` as ``scale-m-seed.npz`` (``X``, ``y``), for the
    processes of :func:`run_row` to read (:func:`read_scale_data`); its path."""
    X, y = scale_data(m, seed)
    path = Path(directory) / f"scale-{m}-{seed}.npz"
    np.savez(path, X=X, y=y)
    return path


def read_scale_data(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a file of :func:`write_scale_data`."""
    with np.load(path) as data:
        return data["X"], data["y"]


def label(eq: int, p: float | None) -> str:
    """``(23) p=1.5``, ``(15)``."""
    return f"({eq})" if p is None else f"({eq}) p={p:g}"


def _kwargs(eq: int, p: float | None) -> dict:
    if eq == 15:
        return {}
    return {"eps": SCALE_EPS, **({"p": p} if p is not None else {})}


def bytecode_cached(package_dir: str | Path | None = None) -> tuple[int, int]:
    """``(cached, modules)``: how many of the ``.py`` modules under ``package_dir`` (default: this library's) have
    bytecode cached beside them (``__pycache__``, as ``pip install`` and ``python -m compileall`` write it) that is
    not older than their source. A module without it is compiled again by every process that imports it: an
    editable checkout under ``PYTHONDONTWRITEBYTECODE=1`` compiled this library's modules at each start (0.1 s of
    each process of the benchmark, where cvxpy's, installed by pip, are cached; ``docs/bench-scale.md``)."""
    root = Path(package_dir) if package_dir is not None else Path(__file__).resolve().parents[1]
    modules = sorted(root.rglob("*.py"))
    cached = 0
    for source in modules:
        compiled = Path(importlib.util.cache_from_source(str(source)))
        cached += compiled.exists() and compiled.stat().st_mtime >= source.stat().st_mtime
    return cached, len(modules)


def tpm_row(eq: int, p: float | None, data: str | Path) -> dict:
    """Build ``(eq)`` on the data of ``data`` (a file of :func:`write_scale_data`) and solve it with the default
    solver (run in a fresh process by :func:`run_row`)."""
    X, y = read_scale_data(data)
    start = time.perf_counter()
    model = build(eq, X, y, SCALE_CLASS, SCALE_NU, SCALE_ALPHA, **_kwargs(eq, p))
    built = time.perf_counter() - start
    start = time.perf_counter()
    result = solve(model, raise_on_failure=False)
    return {"build": built, "solve": time.perf_counter() - start, "objective": result.objective,
            "status": result.termination.value, "certified": result.certified, "solver": result.solver,
            "message": result.message[:300],
            "w": np.asarray(result.values.get("w", []), dtype=float).tolist(),
            "theta": result.values.get("theta")}


CVXPY_SCRIPT = r"""
import json, math, resource, sys, time
start = time.perf_counter()
import numpy as np
import cvxpy as cp

NU, ALPHA, EPS, CLASS = 0.3, 1.0, 0.02, 1


def read_scale_data(path):
    with np.load(path) as data:
        return data["X"], data["y"]


def peak_rss_mb():  # as tpm_models.experiments.run_info.peak_rss_mb: VmHWM, not ru_maxrss, which exec carries over
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024.0
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def cvxpy_problem(eq, p, X, y):
    own, other = X[y == CLASS], X[y != CLASS]
    mc, mo, n = len(own), len(other), X.shape[1]
    w, theta, xi = cp.Variable(n), cp.Variable(), cp.Variable(mc, nonneg=True)
    constraints = []
    if eq == 15:
        quadratic, norm = 0.5 * cp.sum_squares(w), 0
    else:
        q = None if p is None else {1.0: math.inf, 2.0: 2.0, math.inf: 1.0}.get(p) or p / (p - 1)  # p'
        if eq == 23:
            quadratic, norm = 0.5 * cp.sum_squares(w), cp.norm(w, q)
        else:  # (26)-(29): t >= |w|_2, u + v = 1, u >= |(t, v)|_2, objective (u - v) / 2
            t, u, v = cp.Variable(nonneg=True), cp.Variable(nonneg=True), cp.Variable()
            constraints += [cp.norm(w, 2) <= t, u + v == 1, cp.norm(cp.hstack([t, v]), 2) <= u]
            quadratic = 0.5 * (u - v)
            if eq == 26:
                norm = cp.norm(w, q)
            elif eq == 27:
                s = cp.Variable(nonneg=True)
                constraints += [s >= w, s >= -w]
                norm = s
            elif eq == 28:
                norm = t
            else:
                s = cp.Variable(n)
                constraints += [s >= w, s >= -w]
                norm = cp.sum(s)
    objective = quadratic + NU / mo * cp.sum(other @ w + EPS * norm) + NU * theta + ALPHA / mc * cp.sum(xi)
    constraints.append(own @ w + theta - EPS * norm >= -xi)
    return cp.Problem(cp.Minimize(objective), constraints), w, theta


if __name__ == "__main__":
    eq, p = int(sys.argv[1]), (None if sys.argv[2] == "None" else float(sys.argv[2]))
    X, y = read_scale_data(sys.argv[3])
    t0 = time.perf_counter()
    problem, w, theta = cvxpy_problem(eq, p, X, y)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    problem.solve(solver="CLARABEL")
    out = {"build": built, "solve": time.perf_counter() - t0, "objective": problem.value, "status": problem.status,
           "solver": "cvxpy+clarabel", "w": None if w.value is None else np.asarray(w.value, dtype=float).tolist(),
           "theta": None if theta.value is None else float(theta.value),
           "wall": time.perf_counter() - start,
           "peak_mb": peak_rss_mb()}
    print("RESULT" + json.dumps(out))
"""
"""(eq) written in cvxpy from the paper's equation and solved by Clarabel at its defaults, run as its own script
(``python -c CVXPY_SCRIPT eq p data.npz``, a file of :func:`write_scale_data`) so that its process imports cvxpy and
not this library."""


def run_row(tool: str, eq: int, p: float | None, m: int, timeout: float = 3600.0, seed: int = 0,
            data: str | Path | None = None) -> dict:
    """:func:`tpm_row` (``tool="tpm"``) or :data:`CVXPY_SCRIPT` (``"cvxpy"``) in a fresh interpreter, on
    :func:`scale_data` (``m``, ``seed``) read from ``data`` (a file of :func:`write_scale_data`; ``None``: drawn here
    into a temporary file): its result, its wall time (imports included) and peak memory; ``{"error": ...}`` when it
    failed or ran out of time."""
    if data is None:
        with tempfile.TemporaryDirectory(prefix="tpm-bench-") as directory:
            return run_row(tool, eq, p, m, timeout, seed, write_scale_data(m, seed, directory))
    if tool == "cvxpy":
        argv = [sys.executable, "-c", CVXPY_SCRIPT, str(eq), str(p), str(data)]
    else:
        code = (f"import json, time; start = time.perf_counter()\n"
                f"from benchmarks.bench_scale import tpm_row\n"
                f"from tpm_models.experiments.run_info import peak_rss_mb\n"
                f"out = tpm_row({eq}, {p!r}, {str(data)!r}); out['wall'] = time.perf_counter() - start\n"
                f"out['peak_mb'] = peak_rss_mb()\n"
                f"print('RESULT' + json.dumps(out))").replace("inf,", "float('inf'),")
        argv = [sys.executable, "-c", code]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=child_env())
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {timeout:g} s"}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT"):
            return json.loads(line[6:])
    return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:120]}


def median_run(runs: list[dict]) -> dict:
    """The run of median wall time among ``runs`` (the lower median of an even count; a run that failed counts as the
    slowest), with every run's wall time beside it (``walls``); the first run's error when none finished."""
    done = sorted((r for r in runs if "wall" in r), key=lambda r: r["wall"])
    if not done:
        return runs[0]
    pick = done[min((len(runs) - 1) // 2, len(done) - 1)]  # the failed runs sort after the slowest
    return {**pick, "walls": [r.get("wall") for r in runs]}


def bench_scale(sizes=(10_000, 100_000), models=SCALE_MODELS, cvxpy: bool = True, timeout: float = 3600.0,
                progress=print, seeds=(0,), repeats: int = 1) -> list[dict]:
    """One row per (seed, model, size): tpm-models' numbers and cvxpy + Clarabel's (module docstring), on
    :func:`scale_data` drawn with each of ``seeds`` (once per size and seed, into a temporary file that every process
    of that size reads: :func:`write_scale_data`). ``repeats``: each side runs that many times, ours and cvxpy's
    in turn (so that a slow spell of a shared machine falls on both), and the row holds the run of median wall time
    of each (:func:`median_run`) with all the wall times beside it."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    rows = []
    progress = progress or (lambda _: None)
    with tempfile.TemporaryDirectory(prefix="tpm-bench-") as directory:
        for seed in seeds:
            for m in sizes:
                data = write_scale_data(m, seed, directory)
                rows += _rows_on(data, m, seed, models, cvxpy, timeout, progress, repeats)
                data.unlink()
    return rows


def _rows_on(data: Path, m: int, seed: int, models, cvxpy: bool, timeout: float, progress, repeats: int) -> list:
    """:func:`bench_scale`'s rows of every model on one file of data."""
    rows = []
    for eq, p in models:
        name = label(eq, p) + (f" (seed {seed})" if seed else "")
        ours, theirs = [], []
        for k in range(repeats):
            again = f" ({k + 1}/{repeats})" if repeats > 1 else ""
            progress(f"  {name} m={m}: tpm-models{again} ...")
            ours.append(run_row("tpm", eq, p, m, timeout, seed, data))
            if cvxpy:
                progress(f"  {name} m={m}: cvxpy + clarabel{again} ...")
                theirs.append(run_row("cvxpy", eq, p, m, timeout, seed, data))
        row = {"model": name, "eq": eq, "p": p, "m": m, "seed": seed,
               "tpm": median_run(ours) if repeats > 1 else ours[0]}
        if cvxpy:
            row["cvxpy"] = median_run(theirs) if repeats > 1 else theirs[0]
        rows.append(row)
    return rows


def _f(value, fmt="{:.2f}") -> str:
    return "n/a" if value is None else fmt.format(value)


def row_numbers(r: dict) -> dict:
    """What a row of :func:`bench_scale` says beside its sides' own numbers: ``ratio`` (ours / cvxpy's wall, of the
    median runs), ``pairs`` (the runs' ratios, pair by pair), ``peak`` (the peaks' ratio), ``diff``/``rel`` (the
    objectives' absolute and relative difference), ``dw`` (the largest difference in w) and ``solver`` (our solver,
    with its status when not optimal and certified); ``tpm``/``cvxpy``: the sides (an error as its text)."""
    t, c = r["tpm"], r.get("cvxpy") or {}
    if "error" in t:
        t = {"solver": t["error"]}
    if "error" in c:
        c = {"status": c["error"]}
    ratio = t["wall"] / c["wall"] if "wall" in t and "wall" in c else None
    pairs = [a / b for a, b in zip(t.get("walls", []), c.get("walls", [])) if a is not None and b is not None]
    peak = t["peak_mb"] / c["peak_mb"] if "peak_mb" in t and "peak_mb" in c else None
    diff = rel = dw = None
    if t.get("objective") is not None and c.get("objective") is not None:
        diff = abs(t["objective"] - c["objective"])
        rel = diff / max(abs(c["objective"]), 1e-300)
    if t.get("w") and c.get("w") and len(t["w"]) == len(c["w"]):
        dw = float(np.max(np.abs(np.asarray(t["w"]) - np.asarray(c["w"]))))
    solver = t.get("solver", "")
    if t.get("status") not in (None, "optimal"):
        solver += f" ({t['status']})"
    elif t.get("certified") is False:
        solver += " (optimal, not certified)"
    if "fallback" in t.get("message", ""):
        solver += " (after a fallback)"
    return {"tpm": t, "cvxpy": c, "ratio": ratio, "pairs": pairs, "peak": peak, "diff": diff, "rel": rel, "dw": dw,
            "solver": solver}


def scale_table(rows: list[dict]) -> str:
    """The Markdown table of :func:`bench_scale`'s rows: with ``repeats`` > 1, the wall ratio is that of the median
    runs, followed by the range of the ratios of the runs taken pair by pair (ours and cvxpy's run in turn)."""
    lines = ["| model | m | ours: solver | build s | solve s | wall s | peak MB | cvxpy: build s | solve s | wall s | "
             "peak MB | wall ratio | peak ratio | objective (ours) | abs. diff | rel. diff | max abs w diff |",
             "|" + "---|" * 17]
    for r in rows:
        n = row_numbers(r)
        t, c, pairs = n["tpm"], n["cvxpy"], n["pairs"]
        ratio_text = _f(n["ratio"])
        if n["ratio"] is not None and len(pairs) > 1:  # the median's, and the range of the runs' ratios, pair by pair
            ratio_text += f" ({min(pairs):.2f}-{max(pairs):.2f})"
        lines.append(
            f"| {r['model']} | {r['m']:,} | {n['solver']} | {_f(t.get('build'))} | {_f(t.get('solve'))} | "
            f"{_f(t.get('wall'))} | {_f(t.get('peak_mb'), '{:.0f}')} | {_f(c.get('build'))} | {_f(c.get('solve'))} | "
            f"{_f(c.get('wall'))} | {_f(c.get('peak_mb'), '{:.0f}')} | {ratio_text} | {_f(n['peak'])} | "
            f"{_f(t.get('objective'), '{:.10g}')} | {_f(n['diff'], '{:.1e}')} | {_f(n['rel'], '{:.1e}')} | "
            f"{_f(n['dw'], '{:.1e}')} |")
    return "\n".join(lines)


CSV_COLUMNS = ("model", "points", "solver", "build_s", "solve_s", "wall_s", "peak_mb", "cvxpy_build_s",
               "cvxpy_solve_s", "cvxpy_wall_s", "cvxpy_peak_mb", "wall_ratio", "peak_ratio", "objective", "abs_diff")
"""The columns of ``docs/results/bench-scale.csv`` (the page's table, :mod:`benchmarks.plot_scale`)."""


def scale_csv_rows(rows: list[dict]) -> list[dict[str, str]]:
    """:func:`bench_scale`'s rows as the page's CSV rows (:data:`CSV_COLUMNS`), numbers as the page prints them."""
    out = []
    for r in rows:
        n = row_numbers(r)
        t, c = n["tpm"], n["cvxpy"]
        out.append({
            "model": r["model"], "points": str(r["m"]), "solver": n["solver"], "build_s": _f(t.get("build")),
            "solve_s": _f(t.get("solve")), "wall_s": _f(t.get("wall")), "peak_mb": _f(t.get("peak_mb"), "{:.0f}"),
            "cvxpy_build_s": _f(c.get("build")), "cvxpy_solve_s": _f(c.get("solve")), "cvxpy_wall_s": _f(c.get("wall")),
            "cvxpy_peak_mb": _f(c.get("peak_mb"), "{:.0f}"), "wall_ratio": _f(n["ratio"]), "peak_ratio": _f(n["peak"]),
            "objective": _f(t.get("objective"), "{:.10g}"), "abs_diff": _f(n["diff"], "{:.1e}")})
    return out


def parse_models(specs: list[str]) -> tuple[tuple[int, float | None], ...]:
    """``["15", "23:1.5", "28"]`` -> ``((15, None), (23, 1.5), (28, None))`` (``inf`` for p = infinity)."""
    out = []
    for spec in specs:
        eq, _, p = spec.partition(":")
        if not eq.isdigit() or int(eq) not in (15, 23, 26, 27, 28, 29):
            raise ValueError(f"model {spec!r}: give 15, 23:P, 26:P, 27, 28 or 29 (P a number >= 1 or inf)")
        if int(eq) in (23, 26) and not p:
            raise ValueError(f"model {spec!r}: ({eq}) needs p, e.g. {eq}:1.5")
        out.append((int(eq), float(p) if p else None))
    return tuple(out)


REFERENCE_P = {27: 1.0, 28: 2.0, 29: math.inf}
"""The p of (23) whose optimum (27)-(29) share (Corollary 1); (23) and (26) give their own p."""


def read_scale_reference(path: str) -> dict[tuple[int, float], dict]:
    """The rows of ``docs/reference/cvxpy_scale.py``'s CSV by ``(m, p)``: objective, theta, w."""
    import csv

    out = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            out[(int(row["m"]), float(row["p"]))] = {
                "objective": float(row["objective"]), "theta": float(row["theta"]),
                "w": np.array([float(v) for v in row["w"].split()]), "refined": row["refined"]}
    return out


def accuracy_table(rows: list[dict], reference: dict[tuple[int, float], dict]) -> str:
    """Ours against the reference of (23) at the same p: the objective's relative difference (to
    ``max(|f|, 1e-4)``: the objectives here are 1e-5 to 1e-4), ``max_j |w_j - w_j^ref|`` and ``|theta - theta^ref|``
    (the targets of the conic survey: 1e-8, 1e-7; theta is unique here only when a point lies on the margin)."""
    lines = ["| model | m | solver | objective rel. diff | max abs w diff | abs theta diff | reference refined |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("seed", 0):  # the reference is of seed 0's data
            continue
        p = REFERENCE_P.get(r["eq"], r["p"])
        ref, t = reference.get((r["m"], p)), r["tpm"]
        if ref is None or p is None or t.get("objective") is None or not t.get("w"):
            continue
        obj = abs(t["objective"] - ref["objective"]) / max(abs(ref["objective"]), 1e-4)
        dw = float(np.max(np.abs(np.asarray(t["w"]) - ref["w"])))
        dt = abs(float(t["theta"]) - ref["theta"])
        lines.append(f"| {r['model']} | {r['m']:,} | {t['solver']} | {obj:.1e} | {dw:.1e} | {dt:.1e} | "
                     f"{ref['refined'] or 'none'} |")
    return "\n".join(lines)
