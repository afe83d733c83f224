""":func:`tpm_models.experiments.run_info.peak_rss_mb` measures the process it runs in, not the one that started it.

Truths: the size of an array the process fills (``np.ones`` writes every page: its bytes are resident), and the size
of the parent's ballast, which the child's own peak must not include. The control (``ru_maxrss`` in the same child
does include it, on Linux) shows what the benchmarks reported before and that the check can fail."""

import importlib.util
import json
import platform
import subprocess
import sys

import numpy as np
import pytest

from benchmarks.bench_scale import run_row

BALLAST_MB = 400
"""What the parent holds when it starts the child: larger than any child below needs (they stay under 250 MB)."""

linux = pytest.mark.skipif(platform.system() != "Linux", reason="VmHWM and ru_maxrss across exec are Linux's")


def in_child_of_large_parent(code: str) -> dict:
    """Run ``code`` (which prints one JSON line last) in a child of this process while it holds ``BALLAST_MB`` more."""
    ballast = np.ones(BALLAST_MB * 2**20 // 8)
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    finally:
        del ballast
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_peak_grows_by_what_the_process_fills():
    """In a fresh interpreter (its peak so far is its start, under 250 MB), filling 80 MB raises the peak by the
    array, within the allocator's slack."""
    code = ("import json\nimport numpy as np\nfrom tpm_models.experiments.run_info import peak_rss_mb\n"
            "before = peak_rss_mb()\nfilled = np.ones(80 * 2**20 // 8)\n"
            "print(json.dumps({'before': before, 'after': peak_rss_mb()}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert 80 <= out["after"] - out["before"] <= 80 + 16, out


@linux
def test_a_child_reports_its_own_peak_not_its_parents():
    code = ("import json, resource\nimport numpy as np\nfrom tpm_models.experiments.run_info import peak_rss_mb\n"
            "filled = np.ones(50 * 2**20 // 8)\n"
            "print(json.dumps({'peak': peak_rss_mb(),"
            " 'ru_maxrss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))")
    out = in_child_of_large_parent(code)
    assert 50 <= out["peak"] < 250, out  # its 50 MB array, Python, numpy and the library: not the parent's 400 MB
    assert out["ru_maxrss"] >= BALLAST_MB, out  # control: Linux carries ru_maxrss over exec


@linux
@pytest.mark.parametrize("tool", ["tpm", "cvxpy"])
def test_a_bench_row_reports_its_own_process_peak(tool):
    """A row of ``bench scale`` at 400 points needs well under 250 MB; started by a bench of more than 400 MB, it
    reported at least that before."""
    if tool == "cvxpy" and importlib.util.find_spec("cvxpy") is None:
        pytest.skip("cvxpy is not installed (tpm-models[bench])")
    ballast = np.ones(BALLAST_MB * 2**20 // 8)
    try:
        row = run_row(tool, 28, None, 400, timeout=600)
    finally:
        del ballast
    assert row["status"] == "optimal", row
    assert 30 <= row["peak_mb"] < 250, row
