"""``python -m benchmarks bench check``: the wall and CPU seconds of ``tpm-models check`` (issue 51's target: Iris and
Wine in at most 45 s on 2 cores), each run in a fresh process.

Each run is ``python -m tpm_models.cli check --dataset DATASET ... --quiet --jobs JOBS``, timed from outside: the
wall seconds of the process, the CPU seconds (user + system) of it and its workers (``resource.getrusage`` of the
children), the one-minute load average before and after, and the ties and failures it printed. ``--repeats N`` runs
it ``N`` times; the summary is the median of the wall and of the CPU seconds. With ``--against PATH`` (a checkout of
another commit, e.g. ``git worktree add ../base HEAD~3``) each repeat runs that checkout's code (``PYTHONPATH=PATH``)
and then this one's, in turn, so that both meet the same load: the machine's speed drifts by 10-20 % between minutes
on a shared host, more than most changes. Measured, never asserted.
"""

from __future__ import annotations

import os
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

from benchmarks import ROOT

TIES = re.compile(r"(\d+) ties, (\d+) failed")


def run_check(datasets: Sequence[str], jobs: int, code: str | None = None, timeout: float = 1800.0,
              extra: Sequence[str] = ()) -> dict:
    """One run of ``tpm-models check`` on ``datasets`` with ``jobs`` workers (and the options ``extra``) in a fresh
    interpreter, the library imported from ``code`` (a checkout's root; ``None``: this clone's): its wall and CPU
    seconds, the load before and after, its ties and failures (``None`` when it printed no count) and its exit
    status."""
    env = {**os.environ, "PYTHONPATH": str(code or ROOT)}
    command = [sys.executable, "-m", "tpm_models.cli", "check", "--dataset", *datasets, "--quiet", "--jobs",
               str(jobs), *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(code or ROOT))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    found = TIES.findall(done.stdout)
    ties, failed = (int(found[-1][0]), int(found[-1][1])) if found else (None, None)
    return {"code": str(code or ROOT), "wall": wall,
            "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "load_before": load_before, "load_after": os.getloadavg()[0], "ties": ties, "failed": failed,
            "status": done.returncode}


def bench_check(datasets: Sequence[str] = ("iris", "wine"), repeats: int = 3, jobs: int = 2,
                against: str | None = None, progress: Callable[[str], None] | None = print,
                extra: Sequence[str] = ()) -> list[dict]:
    """``repeats`` runs of :func:`run_check` (with ``against``, that checkout's run before each of this clone's)."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1; got {repeats}")
    codes = ([against] if against else []) + [None]
    runs = []
    for k in range(repeats):
        for code in codes:
            if progress:
                progress(f"  run {k + 1}/{repeats}: {code or ROOT} ...")
            runs.append(run_check(datasets, jobs, code, extra=extra))
    return runs


def check_table(runs: list[dict]) -> str:
    """Markdown: each run (code, wall, CPU, load before -> after, ties, failed) and each code's medians."""
    lines = ["| code | run | wall s | CPU s | load (1 min) before -> after | ties | failed |",
             "|---|---|---|---|---|---|---|"]
    seen: dict[str, int] = {}
    for r in runs:
        seen[r["code"]] = seen.get(r["code"], 0) + 1
        lines.append(f"| {r['code']} | {seen[r['code']]} | {r['wall']:.1f} | {r['cpu']:.1f} | "
                     f"{r['load_before']:.2f} -> {r['load_after']:.2f} | {r['ties']} | {r['failed']} |")
    for code in seen:
        mine = [r for r in runs if r["code"] == code]
        lines.append(f"| {code} | median of {len(mine)} | {statistics.median(r['wall'] for r in mine):.1f} | "
                     f"{statistics.median(r['cpu'] for r in mine):.1f} | | | |")
    return "\n".join(lines)
