"""The run of every tie between the formulations (``tpm-models check`` and the first phase of ``reproduce``):
independent groups of ties (data set x group x class, and (nu, alpha) for the deterministic ones) as tasks, in
this process or in worker processes (:func:`tpm_models.experiments.parallel.parallel_map`), the longest first.

Contract: :func:`run_ties` returns every task's rows in the order of the sequential run, whatever ``jobs``; on
Ctrl-C it raises :class:`TiesInterrupted`, which holds the rows of the groups that ended before it.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tpm_models.checks.deterministic import DEFAULT_PARAMETERS, CheckResult, run_checks
from tpm_models.checks.robust import run_robust_checks
from tpm_models.data import load_dataset, min_max_scale
from tpm_models.experiments.parallel import parallel_map
from tpm_models.experiments.ties import run_protocol_checks
from tpm_models.progress import progress_bar

LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckTask:
    """One independent group of ties on one data set: ``group`` (a key of :data:`GROUPS`), the data set, and the
    class and ``(nu, alpha)`` it is restricted to (``None``: not split)."""

    group: str
    dataset: str
    c: object = None
    parameters: tuple[float, float] | None = None
    position: int = 0
    """The data set's position in ``--dataset`` (a set named twice is reported twice, as it is run)."""


GROUPS = {
    "deterministic": "deterministic ties",
    "protocol": "protocol ties",
    "oracle": "(25) oracle ties",
    "robust": "robust ties",
    "pyros": "PyROS ties",
}
"""The groups of ties whose wall time ``tpm-models check`` reports, in the order of the report."""

LONGEST_FIRST = ("robust", "pyros", "deterministic", "protocol", "oracle")
"""The groups by the time of one task, longest first (measured: robust ties of a class 20-60 s, PyROS of a class
5-15 s, deterministic ties of a class and (nu, alpha) 5-10 s)."""


def check_tasks(datasets: Sequence[str], robust: bool = True, pyros: bool = True) -> list[CheckTask]:
    """Every task in the order of the sequential run (and of its report): per data set the deterministic ties per
    ``(nu, alpha)`` and class, the protocol ties, then (``robust``) the robust ties per class (the (25) oracle
    first, PyROS after each class's other ties unless ``pyros`` is false)."""
    tasks: list[CheckTask] = []
    for k, name in enumerate(datasets):
        y = load_dataset(name).y
        classes = [c.item() if hasattr(c, "item") else c for c in np.unique(y)]
        tasks += [CheckTask("deterministic", name, c, params, k)
                  for params, c in itertools.product(DEFAULT_PARAMETERS, classes)]
        tasks.append(CheckTask("protocol", name, position=k))
        if robust:
            tasks.append(CheckTask("oracle", name, position=k))
            for c in classes:
                tasks.append(CheckTask("robust", name, c, position=k))
                if pyros:
                    tasks.append(CheckTask("pyros", name, c, position=k))
    return tasks


def run_check_task(task: CheckTask, solver: str, cross_solvers: tuple[str, ...] | None,
                   quiet: bool) -> tuple[list[CheckResult], float, float]:
    """The ties of ``task``, the seconds they took and the CPU seconds of this process meanwhile (a module-level
    function: ``jobs > 1`` runs it in workers)."""
    start, cpu = time.perf_counter(), time.process_time()
    data = load_dataset(task.dataset)
    X, y = min_max_scale(data.X), data.y
    classes = None if task.c is None else [c for c in np.unique(y) if c == task.c]

    say = None if quiet else LOGGER.info  # what each group is doing, at info level (-v)
    if task.group == "deterministic":
        if task.parameters is None:
            raise ValueError(f"the deterministic group of {task.dataset} has no (nu, alpha)")
        results = run_checks(X, y, data.name, solver=solver, parameters=[task.parameters], cross_solvers=cross_solvers,
                             progress=say, classes=classes)
    elif task.group == "protocol":
        results = run_protocol_checks(X, y, data.name, progress=say)
    elif task.group == "oracle":
        results = run_robust_checks(X, y, data.name, classes=(), pyros=False)
    else:
        results = run_robust_checks(X, y, data.name, cross_solvers=cross_solvers, pyros=task.group == "pyros",
                                    progress=say, classes=classes, oracle=False, robust=task.group == "robust")
    return results, time.perf_counter() - start, time.process_time() - cpu


def _indexed(index: int, task: CheckTask, solver: str, cross_solvers: tuple[str, ...] | None,
             quiet: bool) -> tuple[int, list[CheckResult], float, float]:
    return (index, *run_check_task(task, solver, cross_solvers, quiet))


@dataclass(frozen=True)
class TaskDone:
    """A finished task: its position in :attr:`TieRun.tasks`, its rows, its wall and CPU seconds."""

    index: int
    rows: list[CheckResult]
    seconds: float
    cpu_seconds: float


@dataclass(frozen=True)
class TieRun:
    """The tasks of a run and the finished ones, in task order."""

    tasks: list[CheckTask]
    done: list[TaskDone]
    jobs: int

    @property
    def rows(self) -> list[CheckResult]:
        return [r for d in self.done for r in d.rows]

    def rows_of(self, position: int) -> list[CheckResult]:
        """The rows of the data set at ``position`` of the run's data sets."""
        return [r for d in self.done if self.tasks[d.index].position == position for r in d.rows]


class TiesInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_ties`: :attr:`run` holds the groups that ended before it."""

    def __init__(self, run: TieRun):
        super().__init__(f"{len(run.rows)} ties measured in {len(run.done)} of {len(run.tasks)} groups")
        self.run = run


def run_ties(datasets: Sequence[str], solver: str = "default", cross_solvers: Sequence[str] | None = None,
             robust: bool = True, pyros: bool = True, jobs: int = 1, quiet: bool = False) -> TieRun:
    """Every tie of :func:`check_tasks` on ``datasets``; ``jobs`` worker processes (1: in this process)."""
    cross = tuple(cross_solvers) if cross_solvers else None
    jobs = max(1, jobs)
    tasks = check_tasks(datasets, robust, pyros)
    calls = [(i, task, solver, cross, quiet) for i, task in enumerate(tasks)]
    done: list[TaskDone] = []
    LOGGER.info("check: %d groups of ties on %s, %d worker(s)", len(tasks), ", ".join(datasets), jobs)
    bar = progress_bar(len(tasks), "check", unit="group", enabled=not quiet)

    def finished(item: tuple) -> None:
        done.append(TaskDone(*item))
        task = tasks[item[0]]
        what = " ".join(str(x) for x in (task.dataset, task.group, task.c) if x is not None)
        bar.set_postfix_str(what, refresh=False)
        bar.update()
        LOGGER.debug("check: %d/%d groups, %s done in %.1f s", len(done), len(tasks), what, item[2])

    try:
        if jobs == 1:
            for call in calls:
                finished(_indexed(*call))
        else:  # the longest tasks first (the larger data set first), so that no worker is left with one long task
            points = {name: len(load_dataset(name).y) for name in datasets}
            first = sorted(calls, key=lambda call: (LONGEST_FIRST.index(call[1].group), -points[call[1].dataset]))
            for item in parallel_map(_indexed, first, n_jobs=min(jobs, len(calls))):
                finished(item)
    except KeyboardInterrupt:  # keep what was measured
        raise TiesInterrupted(TieRun(tasks, sorted(done, key=lambda d: d.index), jobs)) from None
    finally:
        bar.close()
    return TieRun(tasks, sorted(done, key=lambda d: d.index), jobs)
