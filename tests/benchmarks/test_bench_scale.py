"""``python -m benchmarks bench scale``: its rows measure what they say (a benchmark prints numbers; nothing timed is
asserted).

Truths: the same model solved in this process (the row's objective and w), and cvxpy's problem data where cvxpy is
installed (its objective at our point equals ours: the two writings are the same model)."""

import importlib.util
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from benchmarks.bench_scale import (
    CVXPY_SCRIPT,
    SCALE_MODELS,
    bench_scale,
    bytecode_cached,
    median_run,
    parse_models,
    read_scale_data,
    run_row,
    scale_data,
    scale_table,
    write_scale_data,
)
from tpm_models import build
from tpm_models.solvers import solve


def test_parse_models():
    assert parse_models(["15", "23:1.5", "28", "26:inf"]) == ((15, None), (23, 1.5), (28, None), (26, math.inf))
    for bad in (["16"], ["23"], ["x"]):
        with pytest.raises(ValueError, match="give 15|needs p"):
            parse_models(bad)
    assert (26, 1.5) in SCALE_MODELS and len(SCALE_MODELS) == 10


def test_bytecode_cached_counts_the_modules_whose_bytecode_is_current(tmp_path):
    """Three modules: one compiled (py_compile, as compileall and pip write it), one never compiled, one compiled and
    then edited (its bytecode older than its source): one of three cached."""
    import os
    import py_compile

    for name in ("compiled", "never", "edited"):
        (tmp_path / f"{name}.py").write_text("x = 1\n")
    py_compile.compile(str(tmp_path / "compiled.py"))
    py_compile.compile(str(tmp_path / "edited.py"))
    edited = tmp_path / "edited.py"
    later = os.stat(importlib.util.cache_from_source(str(edited))).st_mtime + 10
    edited.write_text("x = 2\n")
    os.utime(edited, (later, later))
    assert bytecode_cached(tmp_path) == (1, 3)
    assert bytecode_cached()[1] > 100  # the library's own modules


def test_a_row_is_the_solve_of_the_same_model():
    X, y = scale_data(400)
    assert X.shape == (400, 20) and X.min() == 0.0 and X.max() == 1.0 and set(np.unique(y)) == {0, 1, 2, 3}
    row = run_row("tpm", 23, 1.5, 400, timeout=600)
    here = solve(build(23, X, y, 1, 0.3, 1.0, p=1.5, eps=0.02))
    assert row["status"] == "optimal" and row["solver"] == here.solver
    assert row["objective"] == pytest.approx(here.objective, rel=1e-9, abs=1e-13)
    assert np.abs(np.array(row["w"]) - here.values["w"]).max() <= 1e-8
    assert row["peak_mb"] > 0 and row["wall"] >= row["build"] + row["solve"]
    assert "| (23) p=1.5 | 400 |" in scale_table([{"model": "(23) p=1.5", "eq": 23, "p": 1.5, "m": 400, "tpm": row}])


def test_the_data_file_holds_the_drawn_data_exactly(tmp_path):
    """Each process reads the data the bench drew once: the file gives back ``scale_data``'s arrays bit for bit (an
    uncompressed ``.npz``), one file per size and seed."""
    path = write_scale_data(400, 1, tmp_path)
    X, y = read_scale_data(path)
    X0, y0 = scale_data(400, 1)
    assert path.parent == tmp_path and X.dtype == X0.dtype and np.array_equal(X, X0) and np.array_equal(y, y0)
    assert write_scale_data(400, 2, tmp_path) != path


def imports_sklearn(argv: list[str]) -> bool:
    """Whether the process ``argv`` (``python -c CODE args``) has scikit-learn in ``sys.modules`` at its end."""
    probe = argv[:2] + [argv[2] + "\nimport sys\nprint('SKLEARN', 'sklearn' in sys.modules)"] + argv[3:]
    done = subprocess.run(probe, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1] == "SKLEARN True"


def test_neither_process_imports_sklearn(tmp_path):
    """The wall time of a row is the library's and the solver's: the processes read the data and import no
    scikit-learn (it drew the data, in the bench's own process). Control: a process that draws the data does."""
    path = write_scale_data(300, 0, tmp_path)
    ours = [sys.executable, "-c", f"from benchmarks.bench_scale import tpm_row\n"
            f"assert tpm_row(28, None, {str(path)!r})['status'] == 'optimal'"]
    assert imports_sklearn(ours) is False
    control = [sys.executable, "-c", "from benchmarks.bench_scale import scale_data\nscale_data(300)"]
    assert imports_sklearn(control) is True
    if importlib.util.find_spec("cvxpy") is not None:
        assert imports_sklearn([sys.executable, "-c", CVXPY_SCRIPT, "28", "None", str(path)]) is False


def test_a_row_of_another_seed_is_the_solve_of_that_data():
    """``--seeds``: a row on the data drawn with seed 1 is the solve of that data here (not of seed 0's), and the
    table names its seed; a row optimal but not certified says so in the table."""
    X, y = scale_data(400, 1)
    assert not np.array_equal(X, scale_data(400)[0])
    row = run_row("tpm", 28, None, 400, timeout=600, seed=1)
    here = solve(build(28, X, y, 1, 0.3, 1.0, eps=0.02))
    assert row["status"] == "optimal" and row["certified"] is True
    assert row["objective"] == pytest.approx(here.objective, rel=1e-9, abs=1e-13)
    table = scale_table([{"model": "(28) (seed 1)", "eq": 28, "p": None, "m": 400, "seed": 1, "tpm": row},
                         {"model": "(28)", "eq": 28, "p": None, "m": 400, "tpm": {**row, "certified": False}}])
    assert "| (28) (seed 1) | 400 | clarabel |" in table
    assert "| (28) | 400 | clarabel (optimal, not certified) |" in table


@pytest.mark.skipif(importlib.util.find_spec("cvxpy") is None, reason="cvxpy is not installed (tpm-models[bench])")
def test_cvxpy_row_solves_the_same_model():
    """cvxpy + Clarabel on its own writing of (28) reaches our optimum (objectives to 1e-7 relative of 1e-4), on
    seed 0's data and on seed 2's (the seed reaches cvxpy's script)."""
    for seed in (0, 2):
        ours = run_row("tpm", 28, None, 400, timeout=600, seed=seed)
        theirs = run_row("cvxpy", 28, None, 400, timeout=600, seed=seed)
        assert theirs["status"] == "optimal", theirs
        assert abs(ours["objective"] - theirs["objective"]) <= 1e-7 * max(1e-4, abs(ours["objective"]))
    assert run_row("tpm", 28, None, 400, timeout=600)["objective"] != ours["objective"]  # another data set


def test_cli_bench_scale_without_cvxpy(tmp_path):
    out = tmp_path / "rows.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks", "bench", "scale", "--sizes", "300", "--models",
                           "15", "--no-cvxpy", "--quiet", "--json", str(out)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert "| (15) | 300 | piqp |" in done.stdout
    rows = json.loads(out.read_text())
    assert rows[0]["tpm"]["status"] == "optimal"
    bad = subprocess.run([sys.executable, "-m", "benchmarks", "bench", "scale", "--models", "16", "--no-cvxpy"],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "give 15" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "benchmarks", "bench", "scale", "--seeds", "-1", "--no-cvxpy"],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "--seeds must be integers >= 0" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "benchmarks", "bench", "scale", "--repeats", "0", "--no-cvxpy"],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "--repeats must be >= 1" in bad.stderr


def test_repeats_keep_the_median_run_and_the_range_of_the_ratios():
    """``--repeats``: the row is each side's run of median wall time, the table prints the ratio of the medians and
    the range of the runs' ratios pair by pair; a failed run counts as the slowest."""
    runs = [{"wall": 3.0, "solve": 1.0}, {"wall": 1.0, "solve": 0.5}, {"wall": 2.0, "solve": 0.7}]
    assert median_run(runs) == {"wall": 2.0, "solve": 0.7, "walls": [3.0, 1.0, 2.0]}
    assert median_run([{"wall": 1.0}, {"error": "timeout 5 s"}, {"wall": 2.0}])["wall"] == 2.0
    assert median_run([{"error": "timeout 5 s"}] * 2) == {"error": "timeout 5 s"}
    ours = median_run([{"wall": 2.0}, {"wall": 4.0}, {"wall": 3.0}])
    theirs = median_run([{"wall": 4.0}, {"wall": 2.0}, {"wall": 3.0}])
    table = scale_table([{"model": "(28)", "eq": 28, "p": None, "m": 400, "tpm": ours, "cvxpy": theirs}])
    assert "| 1.00 (0.50-2.00) |" in table  # 3/3 at the medians; pairs 2/4, 4/2, 3/3
    with pytest.raises(ValueError, match="repeats must be >= 1"):
        bench_scale(sizes=(300,), repeats=0)


def test_repeated_rows_are_solves_of_the_same_model():
    """Two runs of (15) on 300 points without cvxpy: the row's objective is that of the solve here, and both runs'
    wall times are kept."""
    rows = bench_scale(sizes=(300,), models=((15, None),), cvxpy=False, timeout=600, progress=None, repeats=2)
    X, y = scale_data(300)
    here = solve(build(15, X, y, 1, 0.3, 1.0))
    assert len(rows) == 1 and len(rows[0]["tpm"]["walls"]) == 2
    assert rows[0]["tpm"]["objective"] == pytest.approx(here.objective, rel=1e-9, abs=1e-13)
    assert rows[0]["tpm"]["wall"] == min(rows[0]["tpm"]["walls"])  # the lower median of two
