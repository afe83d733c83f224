"""``python -m benchmarks bench robust``: ``RobustTPMSVMOneVsAll(p=2)`` with one radius, by the closed form of
``docs/derivations.md`` ("One eps": (15) on its dual, w shrunk; ``fit_backend_ == "shrunk-15"``), beside the same
estimator solving the SOCP (28) per class (``solver="clarabel"``), each fit in a fresh process.

The data are the scale benchmark's (:func:`benchmarks.bench_scale.scale_data`: ``make_classification``, 20 features,
10 informative, 4 classes, min-max scaled), the estimator ``nu=0.3, alpha=1, p=2, eps=0.02`` on all points. Each
process makes the data, fits, and reports the fit's seconds (the data and the imports not counted), the planes and
the training predictions; this process compares them (largest difference in ``coef_`` and ``intercept_``, the share
of equal predictions). Nothing here asserts a time.
"""

from __future__ import annotations

import os
import time

import numpy as np

from benchmarks import run_fresh
from benchmarks.bench_scale import scale_data
from tpm_models.learn import RobustTPMSVMOneVsAll

NU, ALPHA, EPS = 0.3, 1.0, 0.02


def robust_fit(points: int, solver: str) -> dict:
    """One fit (in the calling process) of the module's estimator on :func:`scale_data` at ``points``: its seconds,
    ``fit_backend_``, planes and training predictions (as lists: JSON)."""
    X, y = scale_data(points)
    start = time.perf_counter()
    clf = RobustTPMSVMOneVsAll(nu=NU, alpha=ALPHA, p=2, eps=EPS, solver=solver).fit(X, y)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "backend": clf.fit_backend_, "coef": clf.coef_.tolist(),
            "intercept": clf.intercept_.tolist(), "predictions": clf.predict(X).tolist()}


def bench_robust(sizes: list[int], timeout: float = 1200.0, progress=print) -> list[dict]:
    """For each of ``sizes``: :func:`robust_fit` by the default (the closed form) and by Clarabel, each in a fresh
    process; the rows of :func:`robust_table`."""
    rows = []
    for points in sizes:
        sides = {}
        for solver in ("default", "clarabel"):
            if progress:
                progress(f"  RobustTPMSVMOneVsAll p=2, m={points}: solver={solver} ...")
            sides[solver] = run_fresh("bench_robust", f"robust_fit({points}, {solver!r})", timeout)
        ours, socp = sides["default"], sides["clarabel"]
        row = {"points": points, "ours": ours.get("seconds"), "ours_backend": ours.get("backend", ours.get("error")),
               "socp": socp.get("seconds"), "socp_backend": socp.get("backend", socp.get("error")),
               "load": os.getloadavg()[0]}
        if "coef" in ours and "coef" in socp:
            row["dw"] = float(np.abs(np.asarray(ours["coef"]) - np.asarray(socp["coef"])).max())
            row["dtheta"] = float(np.abs(np.asarray(ours["intercept"]) - np.asarray(socp["intercept"])).max())
            row["same"] = float(np.mean(np.asarray(ours["predictions"]) == np.asarray(socp["predictions"])))
        rows.append(row)
    return rows


def _f(value, fmt="{:.2f}") -> str:
    return "n/a" if value is None else fmt.format(value)


def robust_table(rows: list[dict]) -> str:
    """The Markdown table of :func:`bench_robust`'s rows (ratio: ours over the SOCP's fit seconds)."""
    lines = ["| m | ours s | backend | SOCP s | backend | ratio | max abs coef diff | max abs intercept diff | "
             "same predictions | load |", "|" + "---|" * 10]
    for r in rows:
        ratio = r["ours"] / r["socp"] if r.get("ours") and r.get("socp") else None
        lines.append(f"| {r['points']:,} | {_f(r.get('ours'))} | {r['ours_backend']} | {_f(r.get('socp'))} | "
                     f"{r['socp_backend']} | {_f(ratio, '{:.3f}')} | {_f(r.get('dw'), '{:.1e}')} | "
                     f"{_f(r.get('dtheta'), '{:.1e}')} | {_f(r.get('same'), '{:.4f}')} | {r['load']:.2f} |")
    return "\n".join(lines)
