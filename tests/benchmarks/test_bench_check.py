"""``python -m benchmarks bench check``: each run of ``tpm-models check`` timed from outside in a fresh process, the
ties and failures it printed read back, runs of another checkout in turn with this one's, and the table's medians.
Run on the generic ties of (15) on Iris (30 ties, about 2 s a run), not on the whole check."""

import statistics

import pytest

from benchmarks import ROOT
from benchmarks.bench_check import bench_check, check_table, run_check

SMALL = ("--model", "15")


def test_a_run_reports_its_ties_and_the_seconds_of_its_processes():
    run = run_check(("iris",), 1, extra=SMALL)
    assert run["status"] == 0 and (run["ties"], run["failed"]) == (30, 0)
    assert run["wall"] > 0 and run["cpu"] > 0  # the child's CPU seconds, counted once it ended
    assert run["code"] == str(ROOT)


def test_runs_alternate_with_another_checkout_and_the_table_has_each_codes_median():
    """``against`` this clone itself (a checkout of the same code): its run before each of ours; the median row of
    each code is the median of its runs' wall seconds."""
    runs = bench_check(("iris",), repeats=2, jobs=1, against=f"{ROOT}/", progress=None, extra=SMALL)
    assert [r["code"] for r in runs] == [f"{ROOT}/", str(ROOT)] * 2
    assert all(r["ties"] == 30 and r["failed"] == 0 for r in runs)
    table = check_table(runs).splitlines()
    assert len(table) == 2 + 4 + 2
    median = [line for line in table if line.startswith(f"| {ROOT} | median of 2 |")]
    assert median and float(median[0].split("|")[3]) == pytest.approx(
        statistics.median(r["wall"] for r in runs if r["code"] == str(ROOT)), abs=0.05)


def test_repeats_must_be_positive():
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        bench_check(repeats=0, progress=None)
