"""``python -m benchmarks bench estimators --sizes ... --kernel ...``: the classifiers at scale beside scikit-learn.

The data: ``make_classification`` (4 classes, 20 features of which 3 informative, the fewest
it accepts for 4 classes of 2 clusters; seed 0), min-max scaled, a stratified 75/25 split (seed 0).
On it, each in a fresh process:

* ``TPMSVMOneVsAll(nu=0.3, alpha=1)`` with the default ``backend="auto"`` (beyond
  :data:`tpm_models.learn.estimators.DENSE_MAX_POINTS` points per class the decomposition; with the linear kernel
  beyond :data:`tpm_models.learn.estimators.LINEAR_DENSE_MAX_POINTS` the linear path,
  :mod:`benchmarks.bench_linear`);
* ``SVC`` with the same kernel (``SVC(kernel="linear")``; for the Gaussian kernel of width :math:`\\sigma`,
  ``SVC(kernel="rbf", gamma=1/(2 sigma^2))``), scikit-learn's defaults otherwise;
* ``LinearSVC()`` for the linear kernel.

Each row (with ``--processes N`` the medians over ``N`` fresh processes per model, the models in turn): fit seconds
(wall), peak memory of the fit (peak resident set size of the process minus its size
before the fit, :func:`~tpm_models.experiments.run_info.peak_rss_mb`, the high-water mark reset after the data are
made: :func:`fit_base_mb`), test accuracy. Measured, never asserted.

``python -m benchmarks bench estimators --processes N`` (:func:`bench_small`): the paper's data sets (Iris, Wine,
min-max scaled, all points) with ``TPMSVMOneVsAll()`` (its defaults: the dense path) beside ``SVC(kernel="linear")``,
each model in ``N`` fresh processes per data set, alternating (ours, SVC, ours, ...). Each process times its first fit
(what a script that fits once pays) and the median of ``--repeats`` further fits (:func:`small_fit_row`); the
table gives the medians over the processes. With ``--csv PATH`` (with or without ``--processes``) the rows are
written as :data:`SMALL_CSV_COLUMNS` (:func:`small_csv_rows`), ``docs/notes/bench-estimators-iris-wine.csv``.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from benchmarks import run_fresh
from benchmarks.bench_builders import median_row
from benchmarks.pages import fmt
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.experiments.run_info import peak_rss_mb
from tpm_models.learn import TPMSVMOneVsAll

BENCH_SIGMA = 1.0
"""Width of the Gaussian kernel: ``SVC(kernel="rbf", gamma=0.5)``."""
BENCH_NU, BENCH_ALPHA = 0.3, 1.0
BENCH_KERNELS = ("linear", "gaussian")
MODELS = ("tpmsvm", "svc", "linearsvc")


def scaled_data(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, X_test, y_train, y_test)``: the data at ``m`` points (module docstring)."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import train_test_split

    X, y = make_classification(n_samples=m, n_features=20, n_informative=3, n_classes=4, random_state=seed)
    return train_test_split(min_max_scale(X), y, test_size=0.25, stratify=y, random_state=seed)


def make_model(model: str, kernel: str):
    """The estimator of a row: ``"tpmsvm"``, ``"svc"`` or ``"linearsvc"`` with ``kernel``."""
    from sklearn.svm import SVC, LinearSVC

    gaussian = {"kernel": "gaussian", "sigma": BENCH_SIGMA} if kernel == "gaussian" else {}
    if model == "tpmsvm":
        return TPMSVMOneVsAll(nu=BENCH_NU, alpha=BENCH_ALPHA, **gaussian)
    if model == "svc":
        return SVC(kernel="linear") if kernel == "linear" else SVC(kernel="rbf", gamma=1.0 / (2.0 * BENCH_SIGMA**2))
    if model == "linearsvc" and kernel == "linear":
        return LinearSVC()
    raise ValueError(f"no benchmark model {model!r} with kernel {kernel!r}")


def fit_base_mb() -> float:
    """The size (MB) a fit's peak is measured from, after Linux's high-water mark ``VmHWM`` is reset to the current
    size (``"5"`` to ``/proc/self/clear_refs``, a kernel control rather than a file): without the reset the peak
    above the start is that of generating the data (``make_classification``'s temporaries at :math:`10^6` points
    exceed either fit's), and both fits showed 0 MB. Before the reset, glibc's ``malloc_trim`` hands the freed
    memory back to the system, so that a fit's arrays count even where they reuse the data's freed pages.
    Elsewhere: the peak so far (:func:`~tpm_models.experiments.run_info.peak_rss_mb`)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    try:
        fd = os.open("/proc/self/clear_refs", os.O_WRONLY)
        try:
            os.write(fd, b"5")
        finally:
            os.close(fd)
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) / 1024.0 for line in status if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return peak_rss_mb()


def fit_row(model: str, kernel: str, m: int) -> dict:
    """Fit one model on :func:`scaled_data` in this process: seconds, peak MB above the start, test accuracy."""
    X_train, X_test, y_train, y_test = scaled_data(m)
    est = make_model(model, kernel)
    base = fit_base_mb()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of LinearSVC, degenerate planes: reported by accuracy
        start = time.perf_counter()
        est.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        peak = peak_rss_mb() - base
        accuracy = float(np.mean(est.predict(X_test) == y_test))
    return {"fit": seconds, "peak_mb": peak, "accuracy": accuracy,
            "backend": getattr(est, "fit_backend_", None)}


def small_fit_row(model: str, dataset: str, repeats: int) -> dict:
    """In this process, on ``dataset`` (Iris or Wine, min-max scaled): seconds of the first ``fit`` of ``model``
    (``"tpmsvm"``: ``TPMSVMOneVsAll()``; ``"svc"``: ``SVC(kernel="linear")``) and the median of ``repeats`` more
    (only ``fit`` is timed: the imports and the construction are not)."""
    d = load_dataset(dataset)
    X, y = min_max_scale(d.X), d.y
    times = []
    for _ in range(1 + repeats):
        est = TPMSVMOneVsAll() if model == "tpmsvm" else make_model("svc", "linear")  # imports: not timed
        start = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - start)
    return {"first": times[0], "warm": float(np.median(times[1:])) if repeats else None, "m": len(X),
            "n": X.shape[1]}


def bench_small(datasets: Sequence[str] = ("iris", "wine"), processes: int = 9, repeats: int = 50,
                timeout: float = 600.0, progress: Callable[[str], object] | None = print) -> list[dict]:
    """For each data set, ``processes`` fresh processes per model, alternating ours and SVC
    (:func:`small_fit_row` in each); medians over the processes."""
    progress = progress or (lambda _: None)
    rows = []
    for dataset in datasets:
        runs = {"tpmsvm": [], "svc": []}
        for i in range(processes):
            for model in runs:
                progress(f"  {dataset}: {model} process {i + 1}/{processes} ...")
                runs[model].append(_run_code(f"small_fit_row({model!r}, {dataset!r}, {repeats})", timeout))
        row = {"dataset": dataset, "processes": processes, "repeats": repeats}
        for model, results in runs.items():
            ok = [r for r in results if "first" in r]
            if len(ok) < len(results):
                row[model] = {"error": next(r["error"] for r in results if "error" in r)}
                continue
            row["m"], row["n"] = ok[0]["m"], ok[0]["n"]
            row[model] = {"first": float(np.median([r["first"] for r in ok])),
                          "warm": float(np.median([r["warm"] for r in ok])) if repeats else None}
        rows.append(row)
    return rows


def small_table(rows: list[dict]) -> str:
    """Markdown: first fit and warm fit (ms, medians over fresh processes) of ours and SVC, and the ratios."""
    lines = ["| data | m x n | processes | TPMSVMOneVsAll() first fit ms | SVC first fit ms | ratio | "
             "TPMSVMOneVsAll() warm fit ms | SVC warm fit ms | ratio |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ours, svc = r.get("tpmsvm", {}), r.get("svc", {})
        cells = []
        for key in ("first", "warm"):
            a, b = ours.get(key), svc.get(key)
            cells += [f"{a * 1e3:.2f}" if a else ours.get("error", "n/a"),
                      f"{b * 1e3:.2f}" if b else svc.get("error", "n/a"), f"{a / b:.2f}x" if a and b else "n/a"]
        size = f"{r['m']} x {r['n']}" if "m" in r else "n/a"
        lines.append(f"| {r['dataset']} | {size} | {r['processes']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _in_subprocess(model: str, kernel: str, m: int, timeout: float) -> dict:
    return _run_code(f"fit_row({model!r}, {kernel!r}, {m})", timeout)


def _run_code(call: str, timeout: float) -> dict:
    """``call`` (a function of this module) in a fresh interpreter: :func:`benchmarks.run_fresh`."""
    return run_fresh("bench_estimators", call, timeout)


def bench_scaled(sizes=(1_000, 10_000), kernels=BENCH_KERNELS, timeout: float = 3600.0, progress=print,
                 models=MODELS, processes: int = 1) -> list[dict]:
    """One row per (kernel, m): each of ``models`` (:data:`MODELS`) that takes the kernel, each in ``processes``
    fresh processes, the models in turn (ours, SVC, LinearSVC, ours, ...); every number of a model is the median
    over its processes (:func:`median_fit`), so with ``processes=3`` each fit second is the median of three first
    fits."""
    if processes < 1:
        raise ValueError(f"processes must be at least 1; got {processes}")
    progress = progress or (lambda _: None)
    rows = []
    for kernel in kernels:
        for m in sizes:
            row: dict = {"kernel": kernel, "m": m, "processes": processes}
            runs: dict[str, list[dict]] = {}
            for run in range(processes):
                for model in models:
                    if model == "linearsvc" and kernel != "linear":
                        continue
                    progress(f"  {kernel} m={m:,}: {model} ({run + 1}/{processes}) ...")
                    runs.setdefault(model, []).append(_in_subprocess(model, kernel, m, timeout))
            row.update({model: median_fit(fits) for model, fits in runs.items()})
            rows.append(row)
    return rows


def median_fit(fits: list[dict]) -> dict:
    """One model's fits in fresh processes as one: the medians of the seconds and of the peaks
    (:func:`benchmarks.bench_builders.median_row`, which reports the first failure rather than outvote it), the
    accuracy and backend of the first (the data and the fit are the same in each process)."""
    numbers = median_row([f if "error" in f else {"fit": f["fit"], "peak_mb": f["peak_mb"]} for f in fits])
    if "error" in numbers:
        return numbers
    return {**numbers, "accuracy": fits[0]["accuracy"], "backend": fits[0].get("backend")}


def _cell(r: dict, key: str, fmt: str) -> str:
    return fmt.format(r[key]) if key in r else r.get("error", "n/a")


def scaled_table(rows: list[dict]) -> str:
    """Markdown: fit seconds, peak MB and test accuracy of each model, and ours / SVC."""
    lines = ["| kernel | m | TPMSVMOneVsAll fit s | SVC fit s | ratio | LinearSVC fit s | peak MB (ours / SVC) | "
             "memory ratio | test accuracy (ours / SVC / LinearSVC) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ours, svc, lin = r.get("tpmsvm", {}), r.get("svc", {}), r.get("linearsvc", {})
        ratio = f"{ours['fit'] / svc['fit']:.2f}" if "fit" in ours and "fit" in svc else "n/a"
        mem = (f"{max(ours['peak_mb'], 1.0) / max(svc['peak_mb'], 1.0):.2f}"
               if "peak_mb" in ours and "peak_mb" in svc else "n/a")
        acc = " / ".join(_cell(x, "accuracy", "{:.3f}") for x in (ours, svc) + ((lin,) if lin else ()))
        lines.append(
            f"| {r['kernel']} | {r['m']:,} | {_cell(ours, 'fit', '{:.3f}')} | {_cell(svc, 'fit', '{:.3f}')} | "
            f"{ratio} | {_cell(lin, 'fit', '{:.3f}') if lin else '—'} | {_cell(ours, 'peak_mb', '{:.0f}')} / "
            f"{_cell(svc, 'peak_mb', '{:.0f}')} | {mem} | {acc} |"
        )
    return "\n".join(lines)


CSV_COLUMNS = ("kernel", "m", "processes", "tpmsvm_fit_s", "svc_fit_s", "ratio", "linearsvc_fit_s", "tpmsvm_peak_mb",
               "svc_peak_mb", "memory_ratio", "tpmsvm_accuracy", "svc_accuracy", "linearsvc_accuracy", "tpmsvm_backend",
               "note")
"""The header of the page's CSV (``bench estimators --sizes ... [--processes N] --csv``, :func:`scaled_csv_rows`):
the fresh processes each model ran in, each model's fit seconds, peak MB above the process's size before the fit and
test accuracy, the ratios ours / SVC's, the backend ``backend="auto"`` chose, and a note (a fit's error)."""
CSV_TITLES = ("kernel", "m", "processes", "TPMSVMOneVsAll fit s", "SVC fit s", "ratio", "LinearSVC fit s",
              "TPMSVMOneVsAll peak MB", "SVC peak MB", "memory ratio", "TPMSVMOneVsAll accuracy", "SVC accuracy",
              "LinearSVC accuracy", "our backend", "note")
"""The page's column titles, in the order of :data:`CSV_COLUMNS`."""


def scaled_csv_rows(rows: list[dict]) -> list[dict[str, str]]:
    """:func:`bench_scaled`' rows as the cells of the page's CSV (:data:`CSV_COLUMNS`), in the formats of
    :func:`scaled_table`; an empty cell where there is no number (LinearSVC has no Gaussian kernel)."""
    out = []
    for r in rows:
        ours, svc, lin = r.get("tpmsvm", {}), r.get("svc", {}), r.get("linearsvc", {})
        notes = [f"{name}: {x['error']}" for name, x in (("TPMSVMOneVsAll", ours), ("SVC", svc), ("LinearSVC", lin))
                 if "error" in x]
        ratio = ours["fit"] / svc["fit"] if "fit" in ours and "fit" in svc else None
        mem = (max(ours["peak_mb"], 1.0) / max(svc["peak_mb"], 1.0)
               if "peak_mb" in ours and "peak_mb" in svc else None)
        out.append({"kernel": r["kernel"], "m": str(r["m"]), "processes": str(r.get("processes", 1)),
                    "tpmsvm_fit_s": fmt(ours.get("fit"), ".3f"),
                    "svc_fit_s": fmt(svc.get("fit"), ".3f"), "ratio": fmt(ratio),
                    "linearsvc_fit_s": fmt(lin.get("fit"), ".3f"), "tpmsvm_peak_mb": fmt(ours.get("peak_mb"), ".0f"),
                    "svc_peak_mb": fmt(svc.get("peak_mb"), ".0f"), "memory_ratio": fmt(mem),
                    "tpmsvm_accuracy": fmt(ours.get("accuracy"), ".3f"),
                    "svc_accuracy": fmt(svc.get("accuracy"), ".3f"),
                    "linearsvc_accuracy": fmt(lin.get("accuracy"), ".3f"),
                    "tpmsvm_backend": ours.get("backend") or "", "note": "; ".join(notes)})
    return out


SMALL_CSV_COLUMNS = ("dataset", "m", "n", "processes", "repeats", "tpmsvm_first_s", "svc_first_s", "first_ratio",
                     "tpmsvm_warm_s", "svc_warm_s", "warm_ratio", "tpmsvm_pyomo_s", "note")
"""The header of the Iris and Wine CSV (``bench estimators --csv``, with or without ``--processes``:
:func:`small_csv_rows`): per data set, the fit seconds of ``TPMSVMOneVsAll()`` and ``SVC(kernel="linear")`` (first
fit: the median over fresh processes of each process's first fit, only with ``--processes``; warm: the median of
``repeats`` fits, over the processes with ``--processes``), the ratios ours / SVC's of the unrounded seconds, the Pyomo
route's median (only without ``--processes``), and a note (a fit's error). ``processes`` is 0 where every fit ran in
the one process."""


def small_csv_rows(rows: list[dict]) -> list[dict[str, str]]:
    """The Iris and Wine rows as the cells of :data:`SMALL_CSV_COLUMNS`: of :func:`bench_small` (``"tpmsvm"`` and
    ``"svc"`` each ``{"first", "warm"}`` or ``{"error"}``) or of :func:`benchmarks.bench_builders.bench_estimators`
    (``"dense"``, ``"svc"``, ``"pyomo"`` seconds, every fit in one process); seconds to the microsecond, ratios to
    two decimals; an empty cell where the run measured no number."""
    out = []
    for r in rows:
        if "dense" in r:
            ours, svc = {"warm": r["dense"]}, {"warm": r["svc"]}
        else:
            ours, svc = r.get("tpmsvm", {}), r.get("svc", {})
        notes = [f"{name}: {x['error']}" for name, x in (("TPMSVMOneVsAll", ours), ("SVC", svc)) if "error" in x]
        cells = {"dataset": r["dataset"], "m": str(r.get("m", "")), "n": str(r.get("n", "")),
                 "processes": str(r.get("processes", 0)), "repeats": str(r["repeats"]),
                 "tpmsvm_pyomo_s": fmt(r.get("pyomo"), ".6f"), "note": "; ".join(notes)}
        for key in ("first", "warm"):
            a, b = ours.get(key), svc.get(key)
            cells |= {f"tpmsvm_{key}_s": fmt(a, ".6f"), f"svc_{key}_s": fmt(b, ".6f"),
                      f"{key}_ratio": fmt(a / b if a and b else None)}
        out.append(cells)
    return out
