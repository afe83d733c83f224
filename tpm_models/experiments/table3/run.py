"""A run of Table 3: every (data set, cell, split) as an independent task (``joblib``, or Dask through joblib's
backend: :func:`dask_backend`), each finished split appended to the results store at once
(:class:`Table3Store`, the rules of :mod:`tpm_models.experiments.store`), a resumed run reusing the records of
the same configuration."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tpm_models.experiments.parallel import Progress, parallel_map
from tpm_models.experiments.run_info import run_metadata
from tpm_models.experiments.store import ResultStore
from tpm_models.experiments.table3.grid import RESULT_FIELDS, SplitTask, run_split
from tpm_models.experiments.table3.protocol import (
    ALL_CELLS,
    CELLS,
    DATASETS,
    Cell,
    Protocol,
    check_cells,
    check_datasets,
    config_of,
    dataset_arrays,
)
from tpm_models.lazy import import_optional

LOGGER = logging.getLogger(__name__)


class Table3Store(ResultStore):
    """The results store of Table 3: one record per (data set, cell, split)."""

    key_names = ("data set", "cell", "split")
    result_fields = RESULT_FIELDS


@dataclass
class RunResult:
    """Records by key, and what the run did."""

    records: dict[tuple[str, str, int], dict]
    computed: int
    reused: int
    corrupt: int
    stale: int
    wall_seconds: float
    datasets: list[str]
    cells: list[str]
    runs: int
    protocol: Protocol


def run_table3(
    datasets: Sequence[str] = DATASETS,
    cells: Sequence[str] = tuple(CELLS),
    runs: int = 100,
    protocol: Protocol | None = None,
    n_jobs: int | None = 1,
    store: str | Path | None = None,
    resume: bool = False,
    progress: bool = True,
    fresh: bool = False,
) -> RunResult:
    """Run (or resume) the experiments of Table 3 for every (data set, cell, split ``0..runs-1``).

    ``n_jobs`` is joblib's (``None``: the active ``joblib.parallel_config``, e.g. Dask). With a ``store``,
    every finished split is appended to it at once; ``resume=True`` reuses its valid records of the same
    configuration, and without it an existing store is an error. ``fresh=True`` (``--fresh``) removes the store
    first, after recognising it as one, and says so on standard output: under the run's own lock, taken once and
    held from the removal to the run's end, so no other run gets in between (a read-only store is refused).
    """
    protocol = protocol or Protocol()
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    cell_specs = check_cells(cells)
    datasets = check_datasets(datasets)
    start = time.perf_counter()
    result_store = Table3Store(store) if store is not None else None
    records, corrupt = _open_store(result_store, resume, fresh) if result_store is not None else ([], 0)
    have: dict[tuple[str, str, int], list[dict]] = {}
    for rec in records:
        have.setdefault(tuple(rec["key"]), []).append(rec)
    out, tasks, stale = _plan(datasets, cell_specs, runs, protocol, have)
    wanted = {(d, c.name, s) for d in datasets for c in cell_specs for s in range(runs)}
    reused = len(out)
    # the costliest cells first, so that the last tasks are short ones
    tasks.sort(key=lambda t: -len(ALL_CELLS[t.cell].params))
    LOGGER.info("table3: %d splits to compute (%d data sets x %d cells x %d runs), %d reused from the store",
                len(tasks), len(datasets), len(cell_specs), runs, reused)
    _compute(tasks, n_jobs, result_store, out, progress)
    out = {k: out[k] for k in sorted(wanted)}
    return RunResult(out, len(tasks), reused, corrupt, stale, time.perf_counter() - start, list(datasets),
                     [c.name for c in cell_specs], runs, protocol)


def _open_store(result_store: Table3Store, resume: bool, fresh: bool) -> tuple[list[dict], int]:
    """Lock ``result_store`` for the run (the lock is held on return) and read its records: ``(records, number
    of corrupt lines)``, the corrupt lines set aside and the store rewritten without them. An existing store
    without ``resume`` or ``fresh`` is an error; ``fresh`` removes it under the lock first."""
    if result_store.path.exists() and not resume and not fresh:
        raise ValueError(f"the results store {result_store.path} exists: pass resume=True (--resume) to reuse "
                         "its records, or remove it (--fresh)")
    records, bad = result_store.check_recognised()
    result_store.path.parent.mkdir(parents=True, exist_ok=True)
    result_store.lock()
    try:
        result_store.check_writable()  # a read-only store is refused before anything is removed or rewritten
        if fresh:
            removed = result_store.remove()  # under the lock just taken, which the run keeps
            print(f"--fresh: removed {', '.join(map(str, removed))}" if removed
                  else f"--fresh: no store at {result_store.path}", flush=True)
        records, bad = result_store.check_recognised()  # again, now that no other run writes
        corrupt = len(bad)
        if bad:
            aside = result_store.set_aside(bad)
            LOGGER.warning("table3: %d corrupt or truncated line(s) in %s (a run stopped mid-line?): moved to %s, "
                           "their splits are recomputed", corrupt, result_store.path, aside)
            result_store.rewrite(records)
    except BaseException:
        result_store.unlock()
        raise
    return records, corrupt


def _plan(datasets: Sequence[str], cell_specs: Sequence[Cell], runs: int, protocol: Protocol,
          have: dict[tuple[str, str, int], list[dict]]) -> tuple[dict, list[SplitTask], int]:
    """``(reused records by key, tasks to compute, number of stale splits)``: a split is reused when ``have``
    holds a record of it with the same configuration, else computed (stale when ``have`` holds one of another
    configuration)."""
    out: dict[tuple[str, str, int], dict] = {}
    tasks: list[SplitTask] = []
    stale = 0
    for name in datasets:
        X, y, sha = dataset_arrays(name)
        for cell in cell_specs:
            config = config_of(sha, cell, protocol)
            for split in range(runs):
                key = (name, cell.name, split)
                rec = next((r for r in have.get(key, []) if r["config"] == config), None)
                if rec is not None:
                    out[key] = rec
                    continue
                stale += key in have  # records of this split, but of another configuration
                tasks.append(SplitTask(name, cell.name, split, protocol, X, y, config))
    return out, tasks, stale


def _compute(tasks: Sequence[SplitTask], n_jobs: int | None, result_store: Table3Store | None,
             out: dict[tuple[str, str, int], dict], progress: bool) -> None:
    """Run ``tasks``, each record appended to the store as it comes and put in ``out``; the store unlocked at
    the end. An interrupt says how many new records were kept."""
    reused = len(out)
    bar = Progress(len(tasks), enabled=progress)
    try:
        for rec in parallel_map(run_split, ((t,) for t in tasks), n_jobs) if tasks else ():
            if result_store is not None:
                result_store.append(rec)
            key = tuple(rec["key"])
            out[key] = rec
            bar.step(f"{key[0]} {key[1]} split {key[2]}")
    except KeyboardInterrupt:
        written = len(out) - reused
        raise KeyboardInterrupt(f"{written} new record(s) written to {result_store.path}, complete; --resume goes on"
                                if result_store is not None else f"{written} split(s) computed, no store") from None
    finally:
        bar.close()
        if result_store is not None:
            result_store.unlock()


@contextlib.contextmanager
def dask_backend(address: str = "local", n_workers: int = 2, processes: bool = True) -> Iterator[object]:
    """``joblib.parallel_config(backend="dask")`` with a ``distributed.Client``: of the scheduler at
    ``address``, or of a new ``distributed.LocalCluster`` for ``address="local"``. Raises
    :class:`tpm_models.lazy.MissingExtraError` naming the ``dask`` extra when ``distributed`` is not installed."""
    import logging

    from joblib import parallel_config

    distributed = import_optional("distributed", "dask", "running on Dask (--dask)")
    Client, LocalCluster = distributed.Client, distributed.LocalCluster

    quiet = logging.getLogger("distributed")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the scheduler's and workers' INFO lines
    cluster = None
    if address == "local":
        where = {"host": "127.0.0.1"} if processes else {}  # threads talk in-process (inproc://), no host
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes, **where,
                               dashboard_address=None, scheduler_kwargs={"dashboard": False},
                               silence_logs=logging.ERROR)
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        with parallel_config(backend="dask"):
            yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        quiet.setLevel(level)



def run_with_metadata(datasets: Sequence[str], cells: Sequence[str], runs: int, protocol: Protocol, jobs: int,
                      dask: str | None = None, store: str | Path | None = None, resume: bool = False,
                      progress: bool = True, fresh: bool = False) -> tuple[RunResult, dict[str, str]]:
    """:func:`run_table3` in ``jobs`` worker processes, or on Dask (``dask``: a scheduler address, or ``"local"``
    for a local cluster of ``jobs`` workers), and the metadata of its report
    (:func:`tpm_models.experiments.run_info.run_metadata`)."""
    load_before = os.getloadavg()
    context = dask_backend(dask, n_workers=jobs) if dask else contextlib.nullcontext()
    with context:
        run = run_table3(datasets, cells, runs, protocol, n_jobs=None if dask else jobs, store=store, resume=resume,
                         progress=progress, fresh=fresh)
    return run, run_metadata(load_before, run.computed, run.reused)
