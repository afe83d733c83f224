"""``python -m benchmarks bench estimators --linear --sizes ...`` and ``--crossover``: the linear kernel's fit path
``backend="linear-decomposition"`` (:mod:`tpm_models.learn.linear_dual`) beside ``LinearSVC`` and beside the dense
path.

The data are :func:`benchmarks.bench_estimators.scaled_data`'s (``make_classification``, 4 classes, 20 features, 3
informative; min-max scaled, a stratified 75/25 split), the model ``TPMSVMOneVsAll(nu=0.3, alpha=1)``.

* ``--linear`` (:func:`bench_linear`): at each size, ``repeats`` fits of ours and of ``LinearSVC()``, alternating,
  each in a fresh process: the medians of the fit seconds and of the peak memory above the process's size before
  the fit (the high-water mark reset after the data are made:
  :func:`benchmarks.bench_estimators.fit_base_mb`), and the test accuracies (the
  same in every repeat: both are deterministic). Up to ``exact_max`` points the same QPs are also solved exactly
  by the dense path (PIQP, ``backend="dense"``, one fresh process), and the row gives our distance to that
  optimum: the largest over the classes of the dual objective's relative difference,
  of :math:`\\|w-w^*\\|/\\|w^*\\|` and of :math:`|\\theta-\\theta^*|`.
* ``--crossover`` (:func:`bench_crossover`): where ``backend="auto"`` should switch from the dense path to the linear
  one (:data:`tpm_models.learn.estimators.LINEAR_DENSE_MAX_POINTS`): at each number of points per class, one fresh
  process fits both backends alternating, ``repeats`` times after one warm-up fit each, and gives the medians.

Measured, never asserted.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from benchmarks import run_fresh
from benchmarks.bench_estimators import BENCH_ALPHA, BENCH_NU, fit_base_mb, scaled_data
from benchmarks.pages import fmt
from tpm_models.experiments.run_info import peak_rss_mb
from tpm_models.learn import TPMSVMOneVsAll

LINEAR_MODELS = ("ours", "linearsvc", "exact")
"""``ours``: ``backend="linear-decomposition"``; ``linearsvc``: ``LinearSVC()``; ``exact``: ``backend="dense"``."""


def _estimator(model: str):
    from sklearn.svm import LinearSVC

    if model == "linearsvc":
        return LinearSVC()
    backend = {"ours": "linear-decomposition", "exact": "dense"}[model]
    return TPMSVMOneVsAll(nu=BENCH_NU, alpha=BENCH_ALPHA, backend=backend)


def linear_fit_row(model: str, m: int) -> dict:
    """One fit of ``model`` (:data:`LINEAR_MODELS`) on :func:`scaled_data` at ``m`` points in this process: seconds,
    peak MB above the start, test accuracy; for ours and the exact path also :math:`w`, :math:`\\theta` and the dual
    objectives :math:`-\\tfrac12\\|w_c\\|^2 + \\tfrac12\\nu^2\\|\\mu_{-c}\\|^2` (as printed, errata 1's constant
    left out)."""
    X_train, X_test, y_train, y_test = scaled_data(m)
    est = _estimator(model)
    base = fit_base_mb()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LinearSVC's ConvergenceWarning: reported by its accuracy
        start = time.perf_counter()
        est.fit(X_train, y_train)
        seconds = time.perf_counter() - start
    row = {"fit": seconds, "peak_mb": peak_rss_mb() - base,
           "accuracy": float(np.mean(est.predict(X_test) == y_test)), "backend": getattr(est, "fit_backend_", None)}
    if model != "linearsvc":
        W = np.asarray(est.coef_)
        mus = [X_train[y_train != c].mean(axis=0) for c in est.classes_]
        row["w"] = W.tolist()
        row["theta"] = np.asarray(est.intercept_).tolist()
        row["objective"] = [float(-0.5 * w @ w + 0.5 * BENCH_NU**2 * mu @ mu) for w, mu in zip(W, mus)]
    return row


def _run(call: str, timeout: float) -> dict:
    """``call`` (a function of this module) in a fresh interpreter: :func:`benchmarks.run_fresh`."""
    return run_fresh("bench_linear", call, timeout)


def distance_to_exact(ours: dict, exact: dict) -> dict:
    """The largest over the classes of the relative difference of the dual objectives, of
    :math:`\\|w-w^*\\|/\\|w^*\\|` and of :math:`|\\theta-\\theta^*|` (``exact``: the dense path's row)."""
    obj, obj_x = np.array(ours["objective"]), np.array(exact["objective"])
    W, W_x = np.array(ours["w"]), np.array(exact["w"])
    return {"obj_rel": float(np.max(np.abs(obj - obj_x) / np.abs(obj_x))),
            "w_rel": float(np.max(np.linalg.norm(W - W_x, axis=1) / np.linalg.norm(W_x, axis=1))),
            "theta_abs": float(np.max(np.abs(np.array(ours["theta"]) - np.array(exact["theta"]))))}


def _median(runs: list[dict], key: str) -> float | None:
    ok = [r[key] for r in runs if key in r]
    return float(np.median(ok)) if ok else None


def bench_linear(sizes: Sequence[int] = (10_000, 100_000), repeats: int = 3, exact_max: int = 10_000,
                 timeout: float = 3600.0, progress: Callable[[str], object] | None = print) -> list[dict]:
    """One row per size (module docstring): medians over ``repeats`` fresh processes per model, alternating."""
    progress = progress or (lambda _: None)
    rows = []
    for m in sizes:
        runs: dict[str, list[dict]] = {"ours": [], "linearsvc": []}
        for i in range(repeats):
            for model in runs:
                progress(f"  linear m={m:,}: {model} {i + 1}/{repeats} ...")
                runs[model].append(_run(f"linear_fit_row({model!r}, {m})", timeout))
        row: dict = {"m": m, "repeats": repeats}
        for model, results in runs.items():
            errors = [r["error"] for r in results if "error" in r]
            ok = [r for r in results if "error" not in r]
            row[model] = {"fit": _median(ok, "fit"), "peak_mb": _median(ok, "peak_mb"),
                          "accuracy": ok[0]["accuracy"] if ok else None, "error": errors[0] if errors else None,
                          "backend": ok[0].get("backend") if ok else None}
        if m <= exact_max and any("error" not in r for r in runs["ours"]):
            progress(f"  linear m={m:,}: exact (dense path) ...")
            exact = _run(f"linear_fit_row('exact', {m})", timeout)
            ours = next(r for r in runs["ours"] if "error" not in r)
            row["exact"] = {"error": exact["error"]} if "error" in exact else {**distance_to_exact(ours, exact),
                                                                                "fit": exact["fit"]}
        rows.append(row)
    return rows


LINEAR_CSV_COLUMNS = ("m", "repeats", "ours_fit_s", "linearsvc_fit_s", "speedup", "ours_peak_mb",
                      "linearsvc_peak_mb", "ours_accuracy", "linearsvc_accuracy", "obj_rel_diff", "w_rel_diff",
                      "theta_abs_diff", "dense_fit_s", "note")
"""The header of ``docs/notes/bench-estimators-linear.csv`` (``bench estimators --linear --csv``)."""
LINEAR_CSV_TITLES = ("m", "repeats", "linear-decomposition fit s", "LinearSVC fit s", "LinearSVC / ours",
                     "ours peak MB", "LinearSVC peak MB", "ours accuracy", "LinearSVC accuracy",
                     "objective rel. diff to exact", "w rel. diff to exact", "theta abs. diff to exact",
                     "dense (exact) fit s", "note")
"""The column titles of that table in ``docs/notes/bench-estimators.md``, in the order of :data:`LINEAR_CSV_COLUMNS`."""


def linear_csv_rows(rows: list[dict]) -> list[dict[str, str]]:
    """:func:`bench_linear`'s rows as the CSV's cells (:data:`LINEAR_CSV_COLUMNS`); empty where there is no number."""
    out = []
    for r in rows:
        ours, lin, exact = r["ours"], r["linearsvc"], r.get("exact", {})
        notes = [f"{name}: {x['error']}" for name, x in (("ours", ours), ("LinearSVC", lin), ("exact", exact))
                 if x.get("error")]
        speedup = lin["fit"] / ours["fit"] if ours.get("fit") and lin.get("fit") else None
        out.append({"m": str(r["m"]), "repeats": str(r["repeats"]), "ours_fit_s": fmt(ours.get("fit"), ".3f"),
                    "linearsvc_fit_s": fmt(lin.get("fit"), ".3f"), "speedup": fmt(speedup, ".1f"),
                    "ours_peak_mb": fmt(ours.get("peak_mb"), ".0f"),
                    "linearsvc_peak_mb": fmt(lin.get("peak_mb"), ".0f"),
                    "ours_accuracy": fmt(ours.get("accuracy"), ".3f"),
                    "linearsvc_accuracy": fmt(lin.get("accuracy"), ".3f"),
                    "obj_rel_diff": fmt(exact.get("obj_rel"), ".1e"), "w_rel_diff": fmt(exact.get("w_rel"), ".1e"),
                    "theta_abs_diff": fmt(exact.get("theta_abs"), ".1e"), "dense_fit_s": fmt(exact.get("fit"), ".2f"),
                    "note": "; ".join(notes)})
    return out


def crossover_row(per_class: int, repeats: int) -> dict:
    """In this process, on :func:`scaled_data` with ``per_class`` training points in each of the 4 classes: the
    median fit seconds of ``backend="dense"`` and ``"linear-decomposition"`` over ``repeats`` fits each,
    alternating, after one warm-up fit each; and whether the two predict the same on the test points."""
    X_train, X_test, y_train, _ = scaled_data(int(round(per_class * 4 / 0.75)))
    backends = ("dense", "linear-decomposition")
    times: dict[str, list[float]] = {b: [] for b in backends}
    predictions = {}
    for i in range(1 + repeats):
        for backend in backends:
            est = TPMSVMOneVsAll(nu=BENCH_NU, alpha=BENCH_ALPHA, backend=backend)
            start = time.perf_counter()
            est.fit(X_train, y_train)
            if i:
                times[backend].append(time.perf_counter() - start)
            predictions[backend] = est.predict(X_test)
    return {"per_class": int(np.bincount(y_train).max()), "dense": float(np.median(times["dense"])),
            "linear": float(np.median(times["linear-decomposition"])),
            "same_predictions": bool(np.array_equal(predictions["dense"], predictions["linear-decomposition"]))}


def bench_crossover(per_class: Sequence[int] = (10, 25, 50, 100, 200, 400), repeats: int = 20,
                    timeout: float = 600.0, progress: Callable[[str], object] | None = print) -> list[dict]:
    """:func:`crossover_row` at each number of points per class, each in a fresh process."""
    progress = progress or (lambda _: None)
    rows = []
    for k in per_class:
        progress(f"  crossover: {k} points per class ...")
        rows.append(_run(f"crossover_row({k}, {repeats})", timeout))
    return rows


def crossover_table(rows: list[dict]) -> str:
    """Markdown: per class, the dense and the linear path's median fit ms and their ratio."""
    lines = ["| points per class (largest) | dense fit ms | linear-decomposition fit ms | dense / linear | "
             "same test predictions |", "|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| ? | {r['error']} | | | |")
            continue
        lines.append(f"| {r['per_class']} | {r['dense'] * 1e3:.2f} | {r['linear'] * 1e3:.2f} | "
                     f"{r['dense'] / r['linear']:.2f} | {'yes' if r['same_predictions'] else 'no'} |")
    return "\n".join(lines)
