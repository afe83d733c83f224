"""The wheel a user installs: built from the sources, installed into a fresh venv, it runs.

The fresh venv has no system site-packages and no pip; the wheel is installed into it with ``--no-deps`` by this
interpreter's pip, and a ``.pth`` file lets it import the dependencies already installed in this interpreter's
venv (the test checks the package, not the dependency resolver, and needs no network)."""

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import tpm_models

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd, cwd, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel built from a copy of the files a build reads (no stale ``build/`` of the checkout can leak in)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "tpm_models", src / "tpm_models", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", str(tmp / "dist"), str(src)], cwd=tmp)
    (built,) = (tmp / "dist").glob("tpm_models-*.whl")
    return built


def test_wheel_holds_every_module_the_data_and_py_typed(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tpm_models").rglob("*.py")}
    assert sources <= names, sorted(sources - names)[:5]
    assert "tpm_models/py.typed" in names
    assert (ROOT / "benchmarks" / "bench_scale.py").is_file()  # the lab is in the repository ...
    assert not [n for n in names if n.startswith("benchmarks/")]  # ... and not in the wheel
    for key in ("iris", "wine"):  # the paper's data sets, read by tpm_models.load_dataset
        assert f"tpm_models/datasets/{key}.csv" in names
    meta = Parser().parsestr(zipfile.ZipFile(wheel).read(f"tpm_models-{tpm_models.__version__}.dist-info/METADATA")
                             .decode())
    assert meta["Version"] == tpm_models.__version__
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert f"tpm_models-{tpm_models.__version__}.dist-info/licenses/LICENSE" in names


def test_wheel_installs_into_a_fresh_venv_and_runs(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                        cwd=tmp_path).strip())
    # after the venv's own site-packages: the wheel's package comes first, the dependencies from here
    (purelib / "zz_project_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q",
          str(wheel)], cwd=tmp_path)
    assert _run([str(venv / "bin" / "tpm-models"), "--version"], cwd=tmp_path).strip() == \
        f"tpm-models {tpm_models.__version__}"
    out = _run([str(python), "-c", "import tpm_models as t; X = t.load_dataset('iris').X; "
                "print(t.__file__); print(X.shape)"], cwd=tmp_path).split("\n")
    assert Path(out[0]).is_relative_to(purelib), out[0]  # the installed wheel, not the checkout
    assert out[1] == "(150, 4)"
