"""Independent tasks in worker processes that end with the process that started them.

joblib's loky workers outlive a parent killed with ``kill -9`` (or the OOM killer): they go on
with their task, then wait for more, each holding its memory, until loky's idle timeout of
several minutes. :func:`parallel_map` gives every worker a watcher thread that ends the worker
as soon as its parent is gone (the worker is re-parented, so ``os.getppid()`` changes), so an
interrupted run leaves nothing running. A run that is interrupted loses no finished work: the
experiments append each record to their store as it arrives and a rerun resumes.

Workers that are not children of this process (a Dask cluster, ``n_jobs=1`` in this process)
are left alone. :class:`Progress` prints the progress lines of the experiments' loops.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

PARENT_POLL_SECONDS = 0.5
"""How often a worker looks for its parent: an orphan ends within this time (plus its start-up)."""

_watching = False


def end_with_parent(parent: int, interval: float = PARENT_POLL_SECONDS) -> bool:
    """In a worker started by process ``parent``: end this process as soon as ``parent`` is gone.

    Starts one daemon thread per process (later calls do nothing). Does nothing in the parent
    itself or in a process that ``parent`` did not start (a Dask worker). Returns whether this
    process is watched.
    """
    global _watching
    if _watching:
        return True
    if os.getpid() == parent or os.getppid() != parent:
        return False
    _watching = True

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)  # the parent is gone: nobody will read this worker's results

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()
    return True


def _call(parent: int, fn: Callable[..., Any], args: tuple) -> Any:
    end_with_parent(parent)
    return fn(*args)


def parallel_map(fn: Callable[..., Any], tasks: Iterable[tuple], n_jobs: int | None = 1) -> Iterator[Any]:
    """``fn(*args)`` for every ``args`` of ``tasks``, as they finish (in any order).

    ``n_jobs`` is joblib's (``None``: the active ``joblib.parallel_config``, e.g. Dask). ``fn``
    must be picklable (a module-level function).
    """
    from joblib import Parallel, delayed

    parent = os.getpid()
    return Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
        delayed(_call)(parent, fn, tuple(args)) for args in tasks)


class Progress:
    """Progress lines with an ETA on stderr, at most one every ``every`` seconds (and the last one)."""

    def __init__(self, total: int, enabled: bool = True, every: float = 2.0, stream=None, label: str = "table3"):
        self.total, self.done, self.enabled, self.every, self.label = total, 0, enabled, every, label
        self.stream = stream or sys.stderr
        self.start = self.last = time.perf_counter()

    def step(self, what: str) -> None:
        self.done += 1
        now = time.perf_counter()
        if not self.enabled or (now - self.last < self.every and self.done < self.total):
            return
        self.last = now
        elapsed = now - self.start
        eta = elapsed / self.done * (self.total - self.done)
        print(f"{self.label}: {self.done}/{self.total} splits ({100 * self.done / self.total:.0f}%), "
              f"{elapsed:.1f} s elapsed, ETA {eta:.1f} s  [{what}]", file=self.stream, flush=True)

