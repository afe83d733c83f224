"""Independent tasks in worker processes that end with the process that started them.

joblib's loky workers outlive a parent killed with ``kill -9`` (or the OOM killer): they go on
with their task, then wait for more, each holding its memory, until loky's idle timeout of
several minutes. :func:`parallel_map` gives every worker a watcher thread that ends the worker
as soon as its parent is gone (the worker is re-parented, so ``os.getppid()`` changes), so an
interrupted run leaves nothing running. A run that is interrupted loses no finished work: the
experiments append each record to their store as it arrives and a rerun resumes.

Workers that are not children of this process (a Dask cluster, ``n_jobs=1`` in this process)
are left alone. :class:`Progress` shows the progress of the experiments' loops.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from tpm_models.progress import progress_bar

LOGGER = logging.getLogger(__name__)

PARENT_POLL_SECONDS = 0.5
"""How often a worker looks for its parent: an orphan ends within this time (plus its start-up)."""

WATCHER = "end-with-parent"
"""The name of the thread :func:`end_with_parent` starts (one a process: a later call finds it running)."""


def end_with_parent(parent: int, interval: float = PARENT_POLL_SECONDS) -> bool:
    """In a worker started by process ``parent``: end this process as soon as ``parent`` is gone.

    Starts one daemon thread per process (later calls do nothing). Does nothing in the parent
    itself or in a process that ``parent`` did not start (a Dask worker). Returns whether this
    process is watched.
    """
    if any(thread.name == WATCHER for thread in threading.enumerate()):
        return True
    if os.getpid() == parent or os.getppid() != parent:
        return False

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)  # the parent is gone: nobody will read this worker's results

    threading.Thread(target=watch, name=WATCHER, daemon=True).start()
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
    """The progress of an experiment's loop: a bar on stderr (:func:`tpm_models.progress.progress_bar`: counts, rate,
    time left; off when stderr is not a terminal or ``enabled`` is false) and, at debug level, one log line a
    step."""

    def __init__(self, total: int, enabled: bool = True, stream: IO[str] | None = None, label: str = "table3",
                 unit: str = "split") -> None:
        self.total, self.done, self.label = total, 0, label
        self.bar = progress_bar(total, label, unit=unit, enabled=enabled, stream=stream)

    def step(self, what: str) -> None:
        self.done += 1
        self.bar.set_postfix_str(what, refresh=False)
        self.bar.update()
        LOGGER.debug("%s: %d/%d %s", self.label, self.done, self.total, what)
        if self.done >= self.total:
            self.bar.close()

    def close(self) -> None:
        self.bar.close()
