"""Workers end with their parent (issue 15, item 4).

Truth: the process table. A script starts two joblib workers through ``parallel_map``, each
writes its pid and sleeps; the script is killed with SIGKILL (no clean-up of its own can run),
and every worker must be gone within a few polling intervals. Without the watcher the workers
sleep on for their minute (checked when this test was written).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tpm_models.experiments.parallel import PARENT_POLL_SECONDS, end_with_parent, parallel_map

SCRIPT = textwrap.dedent("""
    import os, sys, time
    from tpm_models.experiments.parallel import parallel_map

    def task(folder, k):
        open(os.path.join(folder, f"worker-{k}-{os.getpid()}"), "w").close()
        time.sleep(60)
        return k

    if __name__ == "__main__":
        for _ in parallel_map(task, [(sys.argv[1], 0), (sys.argv[1], 1)], n_jobs=2):
            pass
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie has ended; it only waits for its reaper
        return fh.read().split(") ", 1)[1][0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_end_when_their_parent_is_killed(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    parent = subprocess.Popen([sys.executable, str(script), str(tmp_path)])
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("worker-*"))) < 2:
            assert time.monotonic() < deadline, "the workers did not start"
            assert parent.poll() is None, "the script ended early"
            time.sleep(0.1)
        workers = [int(p.name.rsplit("-", 1)[1]) for p in tmp_path.glob("worker-*")]
        assert all(_alive(pid) for pid in workers)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10 * PARENT_POLL_SECONDS + 5
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in workers), f"orphaned workers {workers} still running"
    finally:
        parent.kill()
        for p in tmp_path.glob("worker-*"):
            try:
                os.kill(int(p.name.rsplit("-", 1)[1]), signal.SIGKILL)
            except ProcessLookupError:
                pass


def _square(x):
    return x * x


def test_parallel_map_gives_every_result_and_leaves_this_process_alone():
    assert sorted(parallel_map(_square, [(k,) for k in range(6)], n_jobs=2)) == [k * k for k in range(6)]
    assert sorted(parallel_map(_square, [(k,) for k in range(3)], n_jobs=1)) == [0, 1, 4]
    assert end_with_parent(os.getpid()) is False  # never watches the process itself
