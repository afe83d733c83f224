"""``python -m benchmarks bench dask``: the linear one-versus-all fit at ``--points`` (default :math:`10^7`) on a
``distributed.LocalCluster`` with a bounded memory per worker, beside the same fit in this process (``n_jobs=1``).

The data are :func:`benchmarks.bench_estimators.scaled_data`'s kind (``make_classification``, 4 classes, 20
features, 3 informative; min-max scaled, a stratified 75/25 split), made here with fewer copies
(:func:`lean_data`: the scaling in place, the split by index), the model ``TPMSVMOneVsAll(nu=0.3, alpha=1)``, which
``backend="auto"`` fits by the linear working-set method (:mod:`tpm_models.learn.linear_dual`, above 100 points a
class). In order, so that the largest copies are never alive together:

1. the data (this process's peak: ``make_classification`` holds about four times the points at its peak);
2. the fit in this process, ``n_jobs=1`` (seconds, and the peak above the process's size before the fit:
   :func:`benchmarks.bench_estimators.fit_base_mb`);
3. a ``LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=--worker-memory)`` of worker processes (their
   nanny starts them with one BLAS thread, and each task sets one thread anyway,
   :func:`tpm_models.learn.linear_dual.linear_plane_task`); the training points are scattered to every worker once
   (``joblib.parallel_config(backend="dask", scatter=[X_train])``: the tasks get a reference, not a pickled copy;
   the class indices, made inside ``fit``, are scattered once per fit by joblib), then the same estimator with
   ``n_jobs=None`` fits its four classes as Dask tasks, two at a time;
4. each worker's peak (``VmHWM`` of ``/proc/self/status`` in the worker: :func:`worker_memory`) and its size after
   the fit, the held-out accuracy of both fits, whether their planes are the same bits, and the load.

A worker holds the training points (:math:`0.75 \\cdot 160` bytes a point), its class's rows (a quarter of them) and
vectors of :math:`O(m_c)`: about 1.9 GB at :math:`10^7` points. The default bound, 4 GB, keeps that under Dask's
``distributed.worker.memory.target`` (60 %: 2.4 GB), from which a worker would start spilling the scattered points
to disk, and two workers with this process stay under 12 GB on the 23 GB machine. Nothing here asserts a time.
"""

from __future__ import annotations

import gc
import logging
import os
import time

import numpy as np

from benchmarks.bench_estimators import BENCH_ALPHA, BENCH_NU, fit_base_mb
from tpm_models.experiments.run_info import peak_rss_mb
from tpm_models.lazy import import_optional
from tpm_models.learn import TPMSVMOneVsAll

DEFAULT_POINTS = 10_000_000
WORKER_MEMORY = "4GB"
"""``memory_limit`` of each worker (module docstring: why 4 GB)."""


def lean_data(points: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, X_test, y_train, y_test)`` as :func:`benchmarks.bench_estimators.scaled_data` draws them (same
    generator, same scaling to [0, 1] per feature), with one copy of the points fewer: the scaling in place and
    the stratified 75/25 split by index (``StratifiedShuffleSplit``), the full array freed before the fit."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import StratifiedShuffleSplit

    X, y = make_classification(n_samples=points, n_features=20, n_informative=3, n_classes=4, random_state=seed)
    low = X.min(axis=0)
    span = X.max(axis=0) - low
    X -= low
    X /= np.where(span > 0, span, 1.0)
    train, test = next(StratifiedShuffleSplit(n_splits=1, test_size=0.25, random_state=seed).split(np.zeros(len(y)), y))
    train.sort()
    test.sort()
    parts = X[train], X[test], y[train], y[test]
    del X
    gc.collect()
    return parts


def worker_memory() -> dict[str, float]:
    """In a worker: its peak (``VmHWM``) and current (``VmRSS``) resident size in MB, from ``/proc/self/status``."""
    sizes = {}
    with open("/proc/self/status") as status:
        for line in status:
            key = line.split(":")[0]
            if key in ("VmHWM", "VmRSS"):
                sizes[key] = int(line.split()[1]) / 1024.0
    return sizes


def _seconds(values: list[float]) -> str:
    return " + ".join(f"{v:.1f}" for v in values) + " s"


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def bench_dask(points: int = DEFAULT_POINTS, n_workers: int = 2, worker_memory_limit: str = WORKER_MEMORY,
               seed: int = 0, progress=print) -> dict[str, object]:
    """Steps 1-4 of the module docstring; the numbers as a dict (and, by ``progress``, as lines)."""
    from joblib import parallel_config

    distributed = import_optional("distributed", "dask", "python -m benchmarks bench dask")
    row: dict[str, object] = {"points": points, "workers": n_workers, "worker_memory_limit": worker_memory_limit,
                              "load_start": _load()}
    start = time.perf_counter()
    X_train, X_test, y_train, y_test = lean_data(points, seed)
    row["data_seconds"], row["data_peak_mb"] = time.perf_counter() - start, peak_rss_mb()
    progress(f"data: {len(X_train)} training, {len(X_test)} held-out points in {row['data_seconds']:.1f} s, this "
             f"process's peak {row['data_peak_mb']:.0f} MB ({_load()})")

    base = fit_base_mb()
    start = time.perf_counter()
    here = TPMSVMOneVsAll(nu=BENCH_NU, alpha=BENCH_ALPHA, n_jobs=1).fit(X_train, y_train)
    row["here_seconds"] = time.perf_counter() - start
    row["here_peak_mb"] = peak_rss_mb() - base
    row["here_accuracy"] = float(here.score(X_test, y_test))
    row["here_class_seconds"] = [plane.result.seconds for plane in here.planes_]
    progress(f"n_jobs=1 in this process: {row['here_seconds']:.1f} s ({here.fit_backend_}; the classes' solves "
             f"{_seconds(row['here_class_seconds'])}), peak {row['here_peak_mb']:.0f} MB above the data, held-out "
             f"accuracy {row['here_accuracy']:.4f} ({_load()})")

    logging.getLogger("distributed").setLevel(logging.WARNING)  # not the scheduler's INFO lines about every worker
    start = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, memory_limit=worker_memory_limit,
                                       processes=True, dashboard_address=None, silence_logs=logging.WARNING)
    with cluster, distributed.Client(cluster) as client:
        row["cluster_seconds"] = time.perf_counter() - start
        start = time.perf_counter()
        with parallel_config(backend="dask", scatter=[X_train]):
            row["scatter_seconds"] = time.perf_counter() - start
            on_dask = TPMSVMOneVsAll(nu=BENCH_NU, alpha=BENCH_ALPHA).fit(X_train, y_train)  # n_jobs=None
        row["dask_seconds"] = time.perf_counter() - start
        row["dask_load_end"] = _load()
        info = client.scheduler_info()["workers"]
        row["worker_limit_mb"] = sorted(w["memory_limit"] / 2**20 for w in info.values())
        workers = dict(sorted(client.run(worker_memory).items()))
        row["worker_mb"] = workers
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    row["dask_tasks"] = [p for p in prefixes if "plane_task" in p]
    row["dask_accuracy"] = float(on_dask.score(X_test, y_test))
    row["dask_class_seconds"] = [plane.result.seconds for plane in on_dask.planes_]
    row["same_bits"] = bool(np.array_equal(here.coef_, on_dask.coef_)
                            and np.array_equal(here.intercept_, on_dask.intercept_))
    row["max_coef_difference"] = float(np.abs(here.coef_ - on_dask.coef_).max())
    progress(f"on the cluster ({n_workers} workers x 1 thread, memory_limit {worker_memory_limit} each; started in "
             f"{row['cluster_seconds']:.1f} s): {row['dask_seconds']:.1f} s with the scatter "
             f"({row['scatter_seconds']:.1f} s of it; the classes' solves {_seconds(row['dask_class_seconds'])}), "
             f"held-out accuracy {row['dask_accuracy']:.4f} ({row['dask_load_end']})")
    for addr, mb in workers.items():
        progress(f"  worker {addr}: peak {mb['VmHWM']:.0f} MB, {mb['VmRSS']:.0f} MB once the fit's data are released")
    progress(f"planes the same bits as n_jobs=1: {row['same_bits']} (largest |w| difference "
             f"{row['max_coef_difference']:.3g}); tasks {row['dask_tasks']}; this process's peak since the "
             f"n_jobs=1 fit began {peak_rss_mb():.0f} MB")
    return row
