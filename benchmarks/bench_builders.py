"""``python -m benchmarks bench builders`` and ``python -m benchmarks bench estimators``: measured, never asserted.

* **builders**: (15), (23) at :math:`p=2` and (28) on synthetic data (three classes, ``n = 20``) at
  :math:`m = 10^4, 10^5, \\dots` points: build seconds, ``.lp`` and ``.nl`` write seconds (the
  library's own :func:`tpm_models.export.writers.model_text`) and peak memory, each row in a fresh
  subprocess (peak resident set size, :func:`~tpm_models.experiments.run_info.peak_rss_mb`, minus the
  process's size before the build); beside linopy (``pip install -e ".[bench]"``) building the same model
  and writing its ``.lp`` (linopy writes no ``.nl``; (23) at :math:`p=2` has a square root no ``.lp`` holds, and
  linopy 0.10 refuses quadratic constraints, so the cones of (28) are "n/a" for it).
* **estimators**: one-versus-all fits on Iris and Wine (min-max scaled, default settings), median of
  repeated fits, beside scikit-learn's ``SVC(kernel="linear")`` on the same data.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks import child_env
from benchmarks.pages import cpu_name, fmt
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.experiments.run_info import peak_rss_mb
from tpm_models.export.writers import model_text
from tpm_models.learn import TPMSVMOneVsAll
from tpm_models.models.registry import build

BENCH_N = 20
BENCH_CLASSES = 3
BENCH_NU, BENCH_ALPHA, BENCH_EPS = 0.3, 1.0, 0.02


def synthetic(m: int, n: int = BENCH_N, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``m`` points in :math:`[0,1]^n`, three classes around three centres (labels 0, 1, 2)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, BENCH_CLASSES, size=m)
    centres = rng.random((BENCH_CLASSES, n))
    X = np.clip(centres[y] + 0.15 * rng.standard_normal((m, n)), 0.0, 1.0)
    return X, y


def pyomo_row(eq: int, m: int) -> dict:
    """Build ``(eq)`` (class 0 of :func:`synthetic` ``m`` points) and write its ``.lp`` (not for (23)) and ``.nl``
    with :func:`tpm_models.export.writers.model_text`: seconds of each step and the peak memory (MB) above the start."""
    X, y = synthetic(m)
    base = peak_rss_mb()
    kw = {"p": 2.0, "eps": BENCH_EPS} if eq in (23, 28) else {}
    start = time.perf_counter()
    model = build(eq, X, y, 0, BENCH_NU, BENCH_ALPHA, **kw)
    out = {"build": time.perf_counter() - start}
    if eq != 23:
        start = time.perf_counter()
        model_text(model, "lp")
        out["lp"] = time.perf_counter() - start
    start = time.perf_counter()
    model_text(model, "nl")
    out["nl"] = time.perf_counter() - start
    out["peak_mb"] = peak_rss_mb() - base
    return out


def linopy_row(eq: int, m: int) -> dict:
    """(15) or (28) for class 0 in linopy: the same variables, rows and objective."""
    import linopy
    import pandas as pd
    import xarray as xr

    X, y = synthetic(m)
    base = peak_rss_mb()
    start = time.perf_counter()
    own, other = X[y == 0], X[y != 0]
    mc, mo = len(own), len(other)
    model = linopy.Model()
    j, i = pd.Index(np.arange(1, BENCH_N + 1), name="j"), pd.Index(np.arange(mc), name="i")
    w = model.add_variables(coords=[j], name="w")
    theta = model.add_variables(name="theta")
    xi = model.add_variables(lower=0, coords=[i], name="xi")
    Xc = xr.DataArray(own, dims=["i", "j"], coords={"i": i, "j": j})
    xbar = xr.DataArray(other.sum(axis=0), dims="j", coords={"j": j})
    margin = (Xc * w).sum("j") + theta + xi
    objective_linear = (BENCH_NU / mo) * (xbar * w).sum() + BENCH_NU * theta + (BENCH_ALPHA / mc) * xi.sum()
    if eq == 15:
        model.add_constraints(margin >= 0, name="margin")
        model.add_objective(0.5 * (w * w).sum() + objective_linear)
    else:
        raise NotImplementedError(f"({eq}) in linopy: only (15); linopy 0.10 refuses quadratic constraints "
                                  "('Quadratic expressions cannot be used in constraints'), so no cone of (28)")
    out = {"build": time.perf_counter() - start}
    with tempfile.TemporaryDirectory(prefix="tpm-bench-") as tmp:
        start = time.perf_counter()
        model.to_file(os.path.join(tmp, "model.lp"), io_api="lp")
        out["lp"] = time.perf_counter() - start
    out["peak_mb"] = peak_rss_mb() - base
    return out


def _row_in_subprocess(tool: str, eq: int, m: int) -> dict:
    code = (f"import json; from benchmarks.bench_builders import {tool}_row as f; "
            f"print('RESULT' + json.dumps(f({eq}, {m})))")
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=3600,
                              env=child_env())
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT"):
            return json.loads(line[6:])
    return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:80]}


BUILDER_EQS = ((15, "(15)"), (23, "(23) p=2"), (28, "(28) p=2"))


def bench_builders(sizes=(10_000, 100_000), linopy: bool = True, progress=print, repeats: int = 1) -> list[dict]:
    """One row per (model, m): Pyomo's and linopy's numbers (module docstring); with ``repeats`` > 1, each side runs
    in that many fresh processes, Pyomo's and linopy's in turn (so both see the same load), and each number is the
    median of its runs (:func:`median_row`)."""
    rows = []
    progress = progress or (lambda _: None)
    for m in sizes:
        for eq, label in BUILDER_EQS:
            runs: dict[str, list[dict]] = {"pyomo": [], "linopy": []}
            for r in range(repeats):
                progress(f"  {label} m={m}: pyomo ..." + (f" ({r + 1} of {repeats})" if repeats > 1 else ""))
                runs["pyomo"].append(_row_in_subprocess("pyomo", eq, m))
                if linopy and eq == 15:
                    progress(f"  {label} m={m}: linopy ...")
                    runs["linopy"].append(_row_in_subprocess("linopy", eq, m))
            row = {"model": label, "m": m, "pyomo": median_row(runs["pyomo"])}
            if linopy:  # (23): sqrt; (28): cones
                row["linopy"] = median_row(runs["linopy"]) if eq == 15 else {"error": "n/a"}
            rows.append(row)
    return rows


def median_row(runs: list[dict]) -> dict:
    """The median of each number over ``runs`` (each one process's :func:`pyomo_row` or :func:`linopy_row`), or the
    first run's error when a run failed (a failure is reported, not outvoted)."""
    for run in runs:
        if "error" in run:
            return run
    return {key: float(np.median([run[key] for run in runs])) for key in runs[0]}


def _f(value, fmt="{:.2f}") -> str:
    return "n/a" if value is None else fmt.format(value)


def builders_table(rows: list[dict]) -> str:
    head = ("| model | m | Pyomo build s | Pyomo .lp s | Pyomo .nl s | Pyomo peak MB | linopy build s | "
            "linopy .lp s | linopy peak MB | (build+.lp) / linopy | peak / linopy |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        p, lp = r["pyomo"], r.get("linopy", {})
        if "error" in p:
            lines.append(f"| {r['model']} | {r['m']:,} | {p['error']} |" + " |" * 9)
            continue
        if "error" in lp:
            lp = {}
        ratio = peak = None
        if lp and "error" not in lp and "lp" in p:
            ratio = (p["build"] + p["lp"]) / (lp["build"] + lp["lp"])
            peak = p["peak_mb"] / lp["peak_mb"] if lp["peak_mb"] > 0 else None
        lines.append(
            f"| {r['model']} | {r['m']:,} | {_f(p['build'])} | {_f(p.get('lp'))} | {_f(p.get('nl'))} | "
            f"{_f(p['peak_mb'], '{:.0f}')} | {_f(lp.get('build'))} | {_f(lp.get('lp'))} | "
            f"{_f(lp.get('peak_mb'), '{:.0f}')} | {_f(ratio, '{:.2f}x')} | {_f(peak, '{:.2f}x')} |"
        )
    return "\n".join(lines)


CSV_COLUMNS = ("model", "m", "pyomo_build_s", "pyomo_lp_s", "pyomo_nl_s", "pyomo_peak_mb", "linopy_build_s",
               "linopy_lp_s", "linopy_peak_mb", "build_lp_ratio", "peak_ratio", "note")
"""The header of the page's CSV (``bench builders --csv``, :func:`builders_csv_rows`): :func:`builders_table`'s columns
and a note (a row's error; ``n/a`` where linopy cannot hold the model)."""
CSV_TITLES = ("model", "m", "Pyomo build s", "Pyomo .lp s", "Pyomo .nl s", "Pyomo peak MB", "linopy build s",
              "linopy .lp s", "linopy peak MB", "(build+.lp) / linopy", "peak / linopy", "note")
"""The page's column titles, in the order of :data:`CSV_COLUMNS`."""


def builders_csv_rows(rows: list[dict]) -> list[dict[str, str]]:
    """:func:`bench_builders`' rows as the cells of the page's CSV (:data:`CSV_COLUMNS`), in the formats of
    :func:`builders_table`; an empty cell where there is no number."""
    out = []
    for r in rows:
        p, lp = r["pyomo"], r.get("linopy", {})
        notes = [f"Pyomo: {p['error']}"] if "error" in p else []
        if "error" in lp:
            notes.append("linopy: n/a (it cannot hold the model)" if lp["error"] == "n/a" else f"linopy: {lp['error']}")
            lp = {}
        ratio = peak = None
        if lp and "lp" in p:
            ratio = (p["build"] + p["lp"]) / (lp["build"] + lp["lp"])
            peak = p["peak_mb"] / lp["peak_mb"] if lp["peak_mb"] > 0 else None
        out.append({"model": r["model"], "m": str(r["m"]), "pyomo_build_s": fmt(p.get("build")),
                    "pyomo_lp_s": fmt(p.get("lp")), "pyomo_nl_s": fmt(p.get("nl")),
                    "pyomo_peak_mb": fmt(p.get("peak_mb"), ".0f"), "linopy_build_s": fmt(lp.get("build")),
                    "linopy_lp_s": fmt(lp.get("lp")), "linopy_peak_mb": fmt(lp.get("peak_mb"), ".0f"),
                    "build_lp_ratio": fmt(ratio), "peak_ratio": fmt(peak), "note": "; ".join(notes)})
    return out


def bench_estimators(repeats: int = 200, pyomo_repeats: int = 5) -> list[dict]:
    """Median fit seconds of ``TPMSVMOneVsAll()`` (the dense default) and ``SVC(kernel="linear")``, timed in
    alternation (one of each per round, so both see the same machine load), and of the Pyomo route."""
    import warnings

    from sklearn.svm import SVC


    def seconds(fit) -> float:
        start = time.perf_counter()
        fit()
        return time.perf_counter() - start

    rows = []
    for name in ("iris", "wine"):
        d = load_dataset(name)
        X, y = min_max_scale(d.X), d.y
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, svc = [], []
            for _ in range(repeats):
                ours.append(seconds(lambda X=X, y=y: TPMSVMOneVsAll().fit(X, y)))
                svc.append(seconds(lambda X=X, y=y: SVC(kernel="linear").fit(X, y)))
            pyomo = [seconds(lambda X=X, y=y: TPMSVMOneVsAll(backend="pyomo").fit(X, y)) for _ in range(pyomo_repeats)]
        rows.append({"dataset": name, "m": len(X), "n": X.shape[1], "dense": float(np.median(ours)),
                     "pyomo": float(np.median(pyomo)), "svc": float(np.median(svc)), "repeats": repeats})
    return rows


def estimators_table(rows: list[dict]) -> str:
    lines = ["| data | m x n | TPMSVMOneVsAll() ms | backend='pyomo' ms | SVC(kernel='linear') ms | ours / SVC |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['dataset']} | {r['m']} x {r['n']} | {r['dense'] * 1e3:.2f} | {r['pyomo'] * 1e3:.1f} | "
                     f"{r['svc'] * 1e3:.2f} | {r['dense'] / r['svc']:.2f}x |")
    return "\n".join(lines)


def machine() -> str:
    from importlib import metadata

    def v(p):
        try:
            return metadata.version(p)
        except metadata.PackageNotFoundError:
            return "not installed"

    cpu = cpu_name()
    one, five, _ = os.getloadavg()
    return (f"{cpu}, {os.cpu_count()} cores, load average {one:.2f}/{five:.2f}; Python {platform.python_version()}, "
            f"pyomo {v('pyomo')}, linopy {v('linopy')}, numpy {v('numpy')}, scikit-learn {v('scikit-learn')}, "
            f"piqp {v('piqp')}")
