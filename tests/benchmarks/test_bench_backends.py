"""``python -m benchmarks bench backends``: its rows say what each backend did (a benchmark prints numbers; nothing
timed is asserted).

Truths: two backends of different algorithms (PIQP's interior point, Clarabel's conic interior point and polish) reach
the same optimum of (15) and (23) at p = 1 (objectives within 1e-8 relative, the conic survey's target; w within 1e-7);
(23) at p = 1 and its Corollary-1 SOCP (27) have the same optimum; a backend that cannot take a model is a row with its
reason; a store gives back the rows it holds without solving again."""

import math
import subprocess
import sys

import numpy as np
import pytest

from benchmarks import bench_backends as bb

OBJ_TOL, W_TOL = 1e-8, 1e-7
"""The conic survey's targets (``benchmarks.conic_survey``): objective relative, w absolute (|w| ~ 1)."""


@pytest.fixture
def in_process(monkeypatch):
    """Rows solved in this process (the fresh process of each row is tested once, below)."""
    monkeypatch.setattr(bb, "run_backend_row", lambda key, p, m, backend, limit, memory: bb.backend_row(
        key, p, m, backend, limit))


def test_two_backends_agree_and_the_store_gives_them_back(in_process, tmp_path, monkeypatch):
    store = tmp_path / "rows.jsonl"
    models = ((15, None), (23, 1.0), (27, None))
    rows = bb.bench_backends([200], models, ["piqp", "clarabel"], time_limit=60, store=str(store), progress=None)
    by = {(r["model"], r["backend"]): r for r in rows}
    # (27) is an SOCP: PIQP does not take it, so it has no row
    assert sorted(by) == sorted([("(15)", "piqp"), ("(15)", "clarabel"), ("(23) p=1", "piqp"),
                                 ("(23) p=1", "clarabel"), ("(27)", "clarabel")])
    assert all(r["status"] == "optimal" and r["certified"] for r in rows)
    for name in ("(15)", "(23) p=1"):
        a, b = by[(name, "piqp")], by[(name, "clarabel")]
        assert abs(a["objective"] - b["objective"]) <= OBJ_TOL * abs(a["objective"])
        assert np.abs(np.array(a["w"]) - np.array(b["w"])).max() <= W_TOL
    same = by[("(23) p=1", "piqp")]  # Corollary 1: (27) is (23) at p = 1
    assert abs(by[("(27)", "clarabel")]["objective"] - same["objective"]) <= OBJ_TOL * abs(same["objective"])
    # the table: PIQP is the default of these QPs (in bold), Clarabel's differences from it are what we computed
    table = bb.backends_table(rows)
    assert "| (15) | 200 | 70 | **piqp** | optimal | yes |" in table
    refs = bb.reference_rows(rows)
    assert refs[("(15)", 200)]["default"] == "piqp" and refs[("(27)", 200)]["default"] == "clarabel"

    # resumed: every row comes from the store, nothing is solved again
    monkeypatch.setattr(bb, "run_backend_row", lambda *a: pytest.fail("solved again"))
    with pytest.raises(ValueError, match="--resume"):
        bb.bench_backends([200], models, ["piqp", "clarabel"], time_limit=60, store=str(store), progress=None)
    again = bb.bench_backends([200], models, ["piqp", "clarabel"], time_limit=60, store=str(store), resume=True,
                              progress=None)
    assert [r["objective"] for r in again] == [r["objective"] for r in rows] and all(r["reused"] for r in again)

    # the command prints the same rows from the store (--no-run: nothing solved), the summary first
    done = subprocess.run([sys.executable, "-m", "benchmarks", "bench", "backends", "--sizes", "200", "--models",
                           "15", "23:1", "27", "--store", str(store), "--no-run", "--quiet",
                           "--time-limit", "60"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    pivot, full = done.stdout.split("| model | m | variables | piqp | clarabel |")[1].split("| model | m | variables |")
    assert f"| (15) | 200 | 70 | **{by[('(15)', 'piqp')]['solve']:.2f}** |" in pivot
    assert "| (27) | 200 |" in pivot and "| (15) | 200 | 70 | clarabel | optimal | yes |" in full


def test_a_refused_backend_is_a_row_with_its_reason():
    row = bb.backend_row(28, None, 200, "piqp", 60)
    assert row["status"] == "refused" and not row["certified"] and row["objective"] is None
    assert "piqp cannot take a SOCP" in row["message"]


def test_rows_not_run_say_why():
    dense = bb._skip_reason(16, 10_000, "piqp", "(16)", [])
    assert "dense m_c x m_c Gram block" in dense and "3.1e+06" in dense
    assert bb._skip_reason(16, bb.DENSE_DUAL_MAX_POINTS, "piqp", "(16)", []) == ""
    earlier = [{"model": "(15)", "backend": "scip", "m": 1000, "status": "timeout"}]
    assert bb._skip_reason(15, 10_000, "scip", "(15)", earlier) == "timeout at 1,000 points"
    assert bb._skip_reason(15, 10_000, "piqp", "(15)", earlier) == ""


def test_a_row_in_a_fresh_process_is_the_solve_here(monkeypatch):
    """The fresh process gives the row of this process (the same deterministic solve), with its peak memory; a process
    past its time is ended and is a timeout row."""
    row = bb.run_backend_row(23, math.inf, 200, "piqp", 60)
    here = bb.backend_row(23, math.inf, 200, "piqp", 60)
    assert row["status"] == "optimal" and row["certified"] and row["peak_mb"] > 0
    assert row["objective"] == pytest.approx(here["objective"], rel=1e-12)
    monkeypatch.setattr(bb, "BUILD_ALLOWANCE", 0.0)
    assert bb.run_backend_row(15, None, 200, "piqp", 0.01)["status"] == "timeout"


def test_parse_models():
    assert bb.parse_models(["15", "23:inf", "23D:2", "22:1", "27D"]) == (
        (15, None), (23, math.inf), ("23D", 2.0), (22, 1.0), ("27D", None))
    for bad in (["23"], ["27:1"], ["19"]):
        with pytest.raises(ValueError, match="give one of"):
            bb.parse_models(bad)
