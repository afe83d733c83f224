"""``n_jobs`` of the one-versus-all estimators (issue 51): the classes' planes as joblib tasks.

Truth: the same estimator fitted with ``n_jobs=1`` (one class after another in this process, the code of before).
The same function runs for every class on the same arguments, so the planes must be the same numbers to the last
bit wherever the tasks run: in loky's worker processes, in joblib's threads, on a Dask ``LocalCluster``. Every
field of every plane (but a solve's wall time) is compared exactly (``assert_same``: arrays by ``array_equal``,
numbers by ``==``).

One cause of a difference is not the tasks': OpenBLAS rounds a matrix product differently on one thread and on
two. The linear and kernel working-set paths run their products on one BLAS thread everywhere; the dense and Pyomo
paths use the process's threads, and loky's workers get ``cores // n_jobs`` threads. Their loky fits are therefore
compared with a fit in this process on one BLAS thread, with loky's workers pinned to one thread too
(``inner_max_num_threads=1``); the difference from the fit on all threads is rounding (measured 3e-13 on
these data), which the dense comparison bounds at 1e-9 on lambda and theta.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from joblib import Parallel, delayed, parallel_config
from sklearn.base import clone
from sklearn.datasets import make_classification

from tpm_models.kernels import Kernel
from tpm_models.learn import RobustKernelTPMSVMOneVsAll, RobustTPMSVMOneVsAll, TPMSVMOneVsAll
from tpm_models.learn.blas_threads import one_blas_thread
from tpm_models.learn.class_jobs import map_classes, runs_here
from tpm_models.validation import check_n_jobs

ESTIMATORS = [TPMSVMOneVsAll, RobustTPMSVMOneVsAll, RobustKernelTPMSVMOneVsAll]


def _data(n: int = 1200) -> tuple[np.ndarray, np.ndarray]:
    """The benchmarks' generator (benchmarks/bench_linear.py): 4 classes, 20 features; 300 points a class, so
    ``backend="auto"`` takes the linear working-set method (above 100 points a class)."""
    return make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=4, random_state=0)


def assert_same(a: object, b: object, where: str = "plane") -> None:
    """``a`` and ``b`` the same structure with the same numbers: dataclasses field by field, arrays exactly."""
    assert type(a) is type(b), (where, type(a), type(b))
    if dataclasses.is_dataclass(a) and not isinstance(a, Kernel):
        for f in dataclasses.fields(a):
            if f.name == "seconds":  # a solve's wall time, the one field that is not a number of the fit
                continue
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b)):
            assert_same(u, v, f"{where}[{i}]")
    else:
        assert a == b or (a != a and b != b), (where, a, b)  # nan == nan here


def assert_same_fit(a: object, b: object) -> None:
    for name in ("classes_", "intercept_", "degenerate_", "fit_backend_", "coef_", "theta_intervals_"):
        if hasattr(a, name) or hasattr(b, name):
            assert_same(getattr(a, name), getattr(b, name), name)
    if hasattr(a, "planes_"):
        assert_same(a.planes_, b.planes_, "planes_")
    np.testing.assert_array_equal(a.decision_function(_data()[0][:50]), b.decision_function(_data()[0][:50]))


@pytest.mark.parametrize("bad", [0, 1.5, True, "2", [2]])
def test_n_jobs_is_checked_at_the_boundary(bad):
    X, y = _data(60)
    for cls in ESTIMATORS:
        with pytest.raises(ValueError, match="n_jobs"):
            cls(n_jobs=bad).fit(X, y)


@pytest.mark.parametrize("good", [None, 1, 2, -1, -2, np.int64(3)])
def test_n_jobs_values_joblib_takes(good):
    assert check_n_jobs(good) == (None if good is None else int(good))


def test_n_jobs_is_a_parameter_of_the_contract():
    for cls in ESTIMATORS:
        assert cls().get_params()["n_jobs"] is None
        est = cls().set_params(n_jobs=2)
        assert clone(est).get_params()["n_jobs"] == 2


def test_where_the_tasks_run():
    assert runs_here(1) and runs_here(None)
    assert not runs_here(2)
    with parallel_config(backend="threading", n_jobs=2):
        assert not runs_here(None) and runs_here(1)
    assert map_classes(divmod, [(7, 2), (9, 4)], 2) == [(3, 1), (2, 1)]  # in order


@pytest.mark.parametrize("backend", ["loky", "threading"])
@pytest.mark.parametrize("params", [
    {"nu": 0.3},  # auto: the linear working-set method
    {"nu": 0.3, "kernel": "gaussian", "sigma": 2.0, "backend": "decomposition"},
], ids=["linear-decomposition", "decomposition"])
def test_working_set_paths_are_the_same_bits_in_parallel(backend, params):
    X, y = _data()
    serial = TPMSVMOneVsAll(**params, n_jobs=1).fit(X, y)
    with parallel_config(backend=backend):
        parallel = TPMSVMOneVsAll(**params, n_jobs=2).fit(X, y)
    assert serial.fit_backend_ == params.get("backend", "linear-decomposition")
    assert_same_fit(serial, parallel)
    if params.get("backend") == "decomposition":  # every plane holds this fit's X, one array as in this process
        assert all(p.X_train is parallel.planes_[0].X_train for p in parallel.planes_)


def test_dense_path_on_loky_is_the_one_thread_fit():
    X, y = _data(400)
    with one_blas_thread():
        serial = TPMSVMOneVsAll(nu=0.3, backend="dense").fit(X, y)
    with parallel_config(backend="loky", inner_max_num_threads=1):
        parallel = TPMSVMOneVsAll(nu=0.3, backend="dense", n_jobs=2).fit(X, y)
    assert_same_fit(serial, parallel)
    default = TPMSVMOneVsAll(nu=0.3, backend="dense").fit(X, y)  # the process's BLAS threads: rounding apart
    for p, q in zip(default.planes_, parallel.planes_):
        np.testing.assert_allclose(p.lam, q.lam, rtol=0, atol=1e-9 * p.lam.max())
        assert abs(p.theta - q.theta) <= 1e-9 * max(1.0, abs(p.theta))


def test_dense_path_in_threads_is_the_same_bits():
    X, y = _data(400)
    serial = TPMSVMOneVsAll(nu=0.3, backend="dense").fit(X, y)
    with parallel_config(backend="threading"):
        parallel = TPMSVMOneVsAll(nu=0.3, backend="dense", n_jobs=2).fit(X, y)
    assert_same_fit(serial, parallel)


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_robust_estimator_is_the_same_bits_in_parallel(backend):
    X, y = _data(150)
    est = RobustTPMSVMOneVsAll(nu=0.3, p="inf", eps=0.02)
    serial = clone(est).fit(X, y)
    with parallel_config(backend=backend, inner_max_num_threads=1 if backend == "loky" else None):
        parallel = clone(est).set_params(n_jobs=2).fit(X, y)
    assert_same_fit(serial, parallel)


def test_on_a_dask_local_cluster():
    distributed = pytest.importorskip("distributed", reason="n_jobs on Dask needs distributed (the dask extra)")
    X, y = _data()
    serial = TPMSVMOneVsAll(nu=0.3, n_jobs=1).fit(X, y)
    dense = TPMSVMOneVsAll(nu=0.3, backend="dense", n_jobs=1).fit(X[:400], y[:400])
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client, parallel_config(backend="dask", scatter=[X]):
        on_dask = TPMSVMOneVsAll(nu=0.3).fit(X, y)  # n_jobs=None: the active configuration's workers
        dense_on_dask = TPMSVMOneVsAll(nu=0.3, backend="dense").fit(X[:400], y[:400])
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert any("linear_plane_task" in p for p in prefixes), prefixes  # the classes ran as Dask tasks
    assert any("fit_class_plane" in p for p in prefixes), prefixes
    assert_same_fit(serial, on_dask)
    assert_same_fit(dense, dense_on_dask)


def test_a_one_worker_dask_cluster_runs_here_as_joblib_does():
    """joblib runs a call in this process when its backend has one worker, a one-thread Dask cluster included
    (its effective_n_jobs is the cluster's thread count); n_jobs=None follows it without a joblib call."""
    distributed = pytest.importorskip("distributed", reason="n_jobs on Dask needs distributed (the dask extra)")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client, parallel_config(backend="dask"):
        assert runs_here(None)
        assert Parallel(n_jobs=None)(delayed(divmod)(7, 2) for _ in range(2)) == [(3, 1), (3, 1)]
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert prefixes == []  # joblib did not use the cluster either
