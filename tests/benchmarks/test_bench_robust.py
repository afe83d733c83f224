"""Smoke test of ``python -m benchmarks bench robust`` (:mod:`benchmarks.bench_robust`) at 2,000 points: both fits
run in fresh processes, by the paths they name, to the same planes (the closed form against the SOCP (28) by
Clarabel: within 1e-6, as tests/learn/test_robust_shrunk.py holds them). Times are printed, never asserted."""

from __future__ import annotations

from benchmarks.bench_robust import bench_robust, robust_table


def test_bench_robust_runs_both_paths_to_the_same_planes():
    rows = bench_robust([2000], timeout=300, progress=None)
    (row,) = rows
    assert row["ours_backend"] == "shrunk-15" and row["socp_backend"] == "clarabel"
    assert row["dw"] <= 1e-6 and row["same"] >= 0.999
    table = robust_table(rows)
    assert "| 2,000 |" in table and "shrunk-15" in table
