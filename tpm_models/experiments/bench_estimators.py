"""``tpm-models bench estimators --sizes ... --kernel ...``: the classifiers at scale beside scikit-learn.

The data of issue 25: ``make_classification`` (4 classes, 20 features of which 3 informative, the fewest
it accepts for 4 classes of 2 clusters; seed 0), min-max scaled, a stratified 75/25 split (seed 0).
On it, each in a fresh process:

* ``TPMSVMOneVsAll(nu=0.3, alpha=1)`` with the default ``backend="auto"`` (the decomposition beyond
  :data:`tpm_models.learn.estimators.DENSE_MAX_POINTS` points per class);
* ``SVC`` with the same kernel (``SVC(kernel="linear")``; for the Gaussian kernel of width :math:`\\sigma`,
  ``SVC(kernel="rbf", gamma=1/(2 sigma^2))``), scikit-learn's defaults otherwise;
* ``LinearSVC()`` for the linear kernel.

Each row: fit seconds (wall), peak memory of the fit (peak resident set size of the process minus its size
before the fit, ``resource.getrusage``), test accuracy. Measured, never asserted.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

from tpm_models.data import min_max_scale
from tpm_models.learn import TPMSVMOneVsAll

BENCH_SIGMA = 1.0
"""Width of the Gaussian kernel: ``SVC(kernel="rbf", gamma=0.5)``."""
BENCH_NU, BENCH_ALPHA = 0.3, 1.0
BENCH_KERNELS = ("linear", "gaussian")
MODELS = ("tpmsvm", "svc", "linearsvc")


def scaled_data(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, X_test, y_train, y_test)``: issue 25's data at ``m`` points (module docstring)."""
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


def fit_row(model: str, kernel: str, m: int) -> dict:
    """Fit one model on :func:`scaled_data` in this process: seconds, peak MB above the start, test accuracy."""
    X_train, X_test, y_train, y_test = scaled_data(m)
    est = make_model(model, kernel)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of LinearSVC, degenerate planes: reported by accuracy
        start = time.perf_counter()
        est.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0 - base
        accuracy = float(np.mean(est.predict(X_test) == y_test))
    return {"fit": seconds, "peak_mb": peak, "accuracy": accuracy,
            "backend": getattr(est, "fit_backend_", None)}


def _in_subprocess(model: str, kernel: str, m: int, timeout: float) -> dict:
    code = (f"import json; from tpm_models.experiments.bench_estimators import fit_row; "
            f"print('RESULT' + json.dumps(fit_row({model!r}, {kernel!r}, {m})))")
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout:.0f} s"}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT"):
            return json.loads(line[6:])
    return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:80]}


def bench_scaled(sizes=(1_000, 10_000), kernels=BENCH_KERNELS, timeout: float = 3600.0, progress=print,
                 models=MODELS) -> list[dict]:
    """One row per (kernel, m): each of ``models`` (:data:`MODELS`) that takes the kernel, each in a fresh
    process."""
    progress = progress or (lambda _: None)
    rows = []
    for kernel in kernels:
        for m in sizes:
            row = {"kernel": kernel, "m": m}
            for model in models:
                if model == "linearsvc" and kernel != "linear":
                    continue
                progress(f"  {kernel} m={m:,}: {model} ...")
                row[model] = _in_subprocess(model, kernel, m, timeout)
            rows.append(row)
    return rows


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
