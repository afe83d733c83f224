"""The lab apart: ``tpm-models bench`` and the surveys only say what to run from a clone, and the lab's own command
line (``python -m benchmarks``) runs them."""

import subprocess
import sys

import pytest
from conftest import ROOT

from benchmarks.cli import main as lab_main
from tpm_models.cli import main
from tpm_models.cli.commands import COMMANDS


@pytest.mark.parametrize("command", [n for n, c in COMMANDS.items() if c.group == "lab"])
def test_a_lab_command_of_the_package_says_what_to_run_and_runs_nothing(command, capsys, tmp_path):
    out = tmp_path / "rows.csv"
    assert main([command, "--csv", str(out), "--datasets", "iris"]) == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert f"python -m benchmarks {command} --csv {out} --datasets iris" in said.err
    assert 'pip install -e ".[test,bench]"' in said.err and not out.exists()


def test_the_lab_runs_as_a_module_from_the_clone():
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert all(name in done.stdout for name in ("bench", "survey", "robust-survey", "conic-survey", "pyros-table"))


def test_bench_table3_prints_its_cells(capsys):
    """Smoke test of ``python -m benchmarks bench`` (numbers printed, never asserted)."""
    assert lab_main(["bench", "--no-solvers", "--dataset", "wine", "--kernel", "linear", "--runs", "1", "--jobs", "1",
                     "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "paper CPU s" in out and "wine  linear" in out


WRITERS = {  # every lab command that writes, with {F} where it writes a file
    "survey csv": ["survey", "--datasets", "iris", "--csv", "{F}"],
    "robust-survey csv": ["robust-survey", "--datasets", "iris", "--csv", "{F}"],
    "conic-survey csv": ["conic-survey", "--datasets", "iris", "--quiet", "--csv", "{F}"],
    "pyros-table out": ["pyros-table", "--datasets", "iris", "--out", "{F}"],
}


@pytest.mark.parametrize("command", sorted(WRITERS))
@pytest.mark.parametrize("where", ["parent is a file", "file is a folder"])
def test_a_path_that_cannot_be_written_is_a_clear_error(tmp_path, capsys, command, where):
    """Each survey says which path and why, before any work, and exits 2; nothing is written."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    folder = tmp_path / "folder"
    folder.mkdir()
    if where == "parent is a file":
        target, reason = blocker / "sub" / "out.csv", f"{blocker} is a file, not a folder"
    else:
        target, reason = folder, "it is a folder; give a file name"
    assert lab_main([a.replace("{F}", str(target)) for a in WRITERS[command]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m benchmarks: error: cannot write") and str(target) in err and reason in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "folder"] and not any(folder.iterdir())
