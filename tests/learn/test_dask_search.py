"""Scale-out (issue 25): ``GridSearchCV`` over the classifiers on a Dask cluster through joblib's Dask backend.

Truth: the same search run serially; a ``distributed.LocalCluster`` of two workers (threads, so the test
starts in a second) must give exactly its scores and best parameters, and every task must have run on the
cluster (its scheduler counts them).
"""

from __future__ import annotations

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from tpm_models.data import load_dataset, min_max_scale
from tpm_models.learn import TPMSVM, TPMSVMOneVsAll

distributed = pytest.importorskip("distributed", reason="the Dask scale-out needs distributed")


def _search(estimator, grid):
    return GridSearchCV(estimator, grid, cv=StratifiedKFold(3, shuffle=True, random_state=0), n_jobs=-1)


@pytest.mark.parametrize(
    ("estimator", "grid", "binary"),
    [
        (TPMSVMOneVsAll(), {"nu": [0.1, 0.3, 0.5], "kernel": ["linear"]}, False),
        (TPMSVMOneVsAll(kernel="gaussian"), {"nu": [0.2, 0.5], "sigma": [0.5, 1.0]}, False),
        (TPMSVM(), {"nu": [0.2, 0.4], "backend": ["dense", "decomposition"]}, True),
    ],
    ids=["one-vs-all linear", "one-vs-all gaussian", "binary"],
)
def test_grid_search_on_a_dask_local_cluster_equals_serial(estimator, grid, binary):
    d = load_dataset("wine")
    X, y = min_max_scale(d.X), d.y
    if binary:
        y = (y == 0).astype(int)
    serial = GridSearchCV(estimator, grid, cv=StratifiedKFold(3, shuffle=True, random_state=0), n_jobs=1).fit(X, y)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client, parallel_config(backend="dask"):
        on_dask = _search(estimator, grid).fit(X, y)
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert any("batch_of" in p or "fit_and_score" in p for p in prefixes), prefixes  # the fits ran as Dask tasks
    np.testing.assert_array_equal(on_dask.cv_results_["mean_test_score"], serial.cv_results_["mean_test_score"])
    assert on_dask.best_params_ == serial.best_params_
    np.testing.assert_array_equal(on_dask.predict(X), serial.predict(X))
