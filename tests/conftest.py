"""Shared fixtures: the shipped data sets, min-max scaled as in Section 5."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tpm_models import load_dataset, min_max_scale

warnings.filterwarnings("ignore", category=DeprecationWarning)

ROOT = Path(__file__).resolve().parents[1]
"""The repository's root: on ``sys.path`` so that the tests of the lab import ``benchmarks`` (not installed)."""
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def iris():
    d = load_dataset("iris")
    return min_max_scale(d.X), d.y


@pytest.fixture(scope="session")
def wine():
    d = load_dataset("wine")
    return min_max_scale(d.X), d.y


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


FRESH = "TPM_MODELS_TEST_FRESH_PROCESS"


def ran_in_fresh_process(request, reason_module: str = "xpress") -> bool:
    """Run the calling test again in a new interpreter when ``reason_module`` was imported in this one;
    ``True`` when it did so (and the run passed), ``False`` when the test should run its body here.

    After an Xpress solve in the same process, Gurobi's barrier ends PyROS masters SUBOPTIMAL (docs/robust.md,
    the Xpress -> Gurobi effect, inside the closed libraries): a test that counts Gurobi's backup solves
    depends on which tests ran before it. A fresh interpreter makes it depend on nothing."""
    import os
    import subprocess
    import sys

    if os.environ.get(FRESH) or reason_module not in sys.modules:
        return False
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", request.node.nodeid],
                          cwd=request.config.rootpath, env={**os.environ, FRESH: "1"}, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:]
    return True


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs (root only; skipped with the reason otherwise)."""
    if os.geteuid() != 0:
        pytest.skip("a full disk needs a small tmpfs, which only root can mount")
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.fixture(scope="session")
def zygote(tmp_path_factory):
    """Commands run in child processes that pause inside a file's write (``tests/interrupt_harness.py``)."""
    from interrupt_harness import Zygote

    z = Zygote(tmp_path_factory.mktemp("zygote"))
    yield z
    z.close()
