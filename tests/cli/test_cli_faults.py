"""The command line under faults: a full disk, no memory, a closed standard output, options that mean nothing.
Each ends in one line (no traceback), and no user file changes.

Truth: the files' bytes, mode and inode before and after; the exit code and the lines on stderr.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tpm_models.cli.main import main
from tpm_models.validation import json_safe

MODEL_15 = ["--model", "15", "--dataset", "iris", "--class", "0", "--nu", "0.3", "--alpha", "1"]
BIN = Path(sys.executable).parent


def state(path: Path) -> tuple[bytes, int, int]:
    st = path.stat()
    return path.read_bytes(), st.st_mode, st.st_ino


def test_a_full_disk_is_one_line_naming_the_file_and_the_old_file_is_kept(small_disk, capsys):
    """The disk is filled to the last byte beside the user's old export; a new export (9 KB) cannot fit: one line
    naming the file, the old file whole, no temporary file left."""
    out = small_disk / "eq15.lp"
    out.write_text("my old export\n")
    fd = os.open(small_disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        with pytest.raises(OSError):
            while True:
                os.write(fd, b"f" * 1024)
    finally:
        os.close(fd)
    before = state(out)
    assert main(["export", *MODEL_15, "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(out) in err and "left as it was" in err, err
    assert state(out) == before and sorted(p.name for p in small_disk.iterdir()) == ["eq15.lp", "filler"]


def test_a_read_only_export_target_is_refused_and_kept(tmp_path, capsys):
    out = tmp_path / "eq15.lp"
    out.write_text("mine\n")
    os.chmod(out, 0o444)
    before = state(out)
    assert main(["export", *MODEL_15, "--out", str(out)]) == 2
    assert "read-only" in capsys.readouterr().err
    assert state(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["eq15.lp"]


def test_no_memory_is_one_line(tmp_path, capsys, monkeypatch):
    import tpm_models.export.writers as writers

    def no_memory(path, data):
        raise MemoryError

    monkeypatch.setattr(writers, "write_bytes", no_memory)
    assert main(["export", *MODEL_15, "--out", str(tmp_path / "x.lp")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("tpm-models: error: out of memory"), err
    assert list(tmp_path.iterdir()) == []


def test_a_closed_standard_output_is_one_line():
    proc = subprocess.run(["bash", "-c", f"exec {BIN / 'tpm-models'} models >&-"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and proc.stderr.strip() == (
        "tpm-models: error: standard output is closed; nothing was run (give it a file: > out.txt)")


@pytest.mark.parametrize("limit", ["0", "-1", "nan", "inf"])
def test_a_time_limit_that_means_nothing_is_refused(capsys, limit):
    with pytest.raises(SystemExit) as info:
        main(["verify", "--model", "28", "--nu", "0.3", "--alpha", "1", "--eps", "0.02", "--time-limit", limit])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--time-limit" in err and ("must be > 0" in err or "finite" in err), err


def test_json_output_has_null_never_nan():
    text = json.dumps(json_safe({"objective": float("nan"), "w": np.array([1.0, np.inf]), "n": np.float64(-np.inf),
                                 "k": np.int64(3)}), allow_nan=False)
    assert json.loads(text) == {"objective": None, "w": [1.0, None], "n": None, "k": 3}
    assert math.isnan(float("nan"))  # the input above really held NaN (json.dumps would print NaN)
    assert "NaN" in json.dumps({"x": float("nan")})


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


@pytest.mark.parametrize("model", ["27", "28", "29"])
def test_solve_json_at_a_large_eps_is_valid_json(capsys, model):
    """``solve --json`` printed ``NaN`` for (27)-(29) at large eps; read back by a parser that takes no NaN or
    Infinity, every value is a number, a string or null."""
    assert main(["solve", "--model", model, "--dataset", "iris", "--class", "0", "--nu", "0.3", "--alpha", "1",
                 "--eps", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out, parse_constant=_no_constant)
    assert out["model"] == int(model) and out["eps"] == 10.0 and out["termination"] == "optimal"


def test_a_solver_refusal_is_printed_once(tmp_path, capsys, caplog):
    """Xpress's Community licence refuses (15) on 300 points (error 120, its size limit): the command line says so
    in one line, not once more as the library's warning just before the error. Truth: the solver's own words
    ("?120") counted on stderr and in the log records."""
    from tpm_models import available_solvers

    if "xpress" not in available_solvers():
        pytest.skip("xpress is not installed")
    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    rows = "".join(f"{a},{b},{c},{int(a > 0.5)}\n" for a, b, c in X)
    (tmp_path / "big.csv").write_text("a,b,c,label\n" + rows)
    code = main(["solve", "--model", "15", "--dataset", str(tmp_path / "big.csv"), "--class", "0", "--nu", "0.3",
                 "--alpha", "1", "--solver", "xpress"])
    err = capsys.readouterr().err
    assert code == 1 and "did not solve the model to optimality: refused" in err, err
    said = err.count("?120") + sum("?120" in r.getMessage() for r in caplog.records)
    assert said == 1, (err, [r.getMessage() for r in caplog.records])
