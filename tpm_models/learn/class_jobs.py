"""The per-class fits of the one-versus-all estimators as independent joblib tasks (``n_jobs``).

Every class's plane (or the two planes of the binary model) is one call of a top-level, picklable function on
arguments that are the same objects for every class (the training points, their class indices, sums computed
once), so the same code runs for each class wherever it runs: in this process one class after another, in
joblib's loky worker processes, in its threads, or on a Dask cluster (``joblib.parallel_config(backend="dask")``,
which scatters each large argument to the workers once per fit, not once per task). The planes are therefore
the same numbers as a fit in this process (the tests compare them bit for bit), with one exception: the dense and
Pyomo paths run their matrix products on the process's BLAS threads, and a worker with another number of threads
(loky gives each ``cores // n_jobs``) rounds those products differently (about 1e-13 on the planes).

:func:`map_classes` decides where: ``n_jobs=1`` always in this process; ``None`` in this process when the
active ``joblib.parallel_config`` has one worker (joblib's default), else joblib's; any other value joblib's.
joblib itself runs a call in this process when its backend has one worker, a Dask cluster of one worker thread
included (``joblib.effective_n_jobs`` on Dask is the cluster's thread count): a cluster gets the classes from two
worker threads on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from joblib import Parallel, delayed, effective_n_jobs

T = TypeVar("T")


def runs_here(n_jobs: int | None) -> bool:
    """Whether :func:`map_classes` with this (checked, :func:`tpm_models.validation.check_n_jobs`) ``n_jobs`` runs
    its tasks in this process, one after another: for 1, and for None when the active ``joblib.parallel_config``
    has one worker (``joblib.effective_n_jobs(None)``, a few microseconds: a small fit pays no joblib call)."""
    return n_jobs == 1 or (n_jobs is None and effective_n_jobs(None) == 1)


def map_classes(fn: Callable[..., T], tasks: Sequence[tuple[Any, ...]], n_jobs: int | None) -> list[T]:
    """``[fn(*args) for args in tasks]``, in order; by ``joblib.Parallel(n_jobs)`` unless :func:`runs_here`.

    ``fn`` must be a module-level function (picklable); pass large arrays as direct arguments (not inside a
    tuple or dict), so that loky memory-maps them and Dask scatters them once for all tasks."""
    if runs_here(n_jobs) or len(tasks) < 2:
        return [fn(*args) for args in tasks]
    return list(Parallel(n_jobs=n_jobs)(delayed(fn)(*args) for args in tasks))
