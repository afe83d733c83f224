"""Smoke test of ``python -m benchmarks bench dask`` (:mod:`benchmarks.bench_dask`) at 4,000 points: its cluster of
worker processes (not threads, as in ``tests/learn/test_class_jobs.py``) fits the four classes as Dask tasks, and
the planes are the in-process fit's to the last bit. Its times and memory are printed, never asserted."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed", reason="bench dask needs distributed (the dask extra)")


def test_bench_dask_fits_on_worker_processes_the_same_planes():
    from benchmarks.bench_dask import bench_dask

    lines: list[str] = []
    row = bench_dask(4000, worker_memory_limit="1GB", progress=lines.append)
    assert row["same_bits"] is True and row["max_coef_difference"] == 0.0
    assert row["dask_tasks"] == ["batch_of_linear_plane_task_1_calls"]  # the classes ran as the cluster's tasks
    assert row["here_accuracy"] == row["dask_accuracy"]
    assert len(row["worker_mb"]) == 2 and all(mb["VmHWM"] > 0 for mb in row["worker_mb"].values())
    assert row["worker_limit_mb"] == [pytest.approx(1e9 / 2**20)] * 2  # the bound given is the bound Dask applies
    assert any(line.startswith("  worker ") for line in lines)
