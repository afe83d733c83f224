"""A user's store and a run's measurements survive (issue 26): a file that is not a results store is refused, never
truncated or deleted; records with a valid checksum but a missing field are set aside, not a traceback; a store is
locked while a run writes (a second run is refused with the first one's pid); Ctrl-C in ``check`` writes the ties
measured so far and ends with one line and exit 130; ``--runs 0`` / ``--jobs 0`` are refused before any work."""

import csv
import json
import os

import pytest

import tpm_models.experiments.checks_run as checks_run
from tpm_models.cli import main
from tpm_models.experiments.store import checksum
from tpm_models.experiments.table3 import Table3Store

NOTES = "my notes\nline two\n"
TABLE3 = ["table3", "--dataset", "iris", "--kernel", "linear", "--runs", "1", "--quiet"]


def a_record(split: int = 0, **result) -> dict:
    rec = {"key": ["iris", "linear", split], "config": {"x": 1},
           "result": {"n_train": 112, "n_test": 38, "alphas_solved": [1.0], "train_correct": [[1]],
                      "test_correct": [[1]], "qps": 3, "theta_rules": {}, **result},
           "timing": {"seconds": 0.1, "pid": 1}}
    return {**rec, "sha256": checksum(rec)}


@pytest.mark.parametrize("flag", ["--resume", "--fresh"])
def test_a_file_that_is_not_a_store_is_refused_and_left_as_it_is(tmp_path, capsys, flag):
    """``table3 --store notes.txt --resume`` deleted the lines of notes.txt; ``--fresh`` deleted the file."""
    notes = tmp_path / "notes.txt"
    notes.write_text(NOTES)
    assert main([*TABLE3, "--store", str(notes), flag]) == 2
    err = capsys.readouterr().err
    assert "is not a results store" in err and "Traceback" not in err
    assert notes.read_text() == NOTES


def test_a_record_with_a_valid_checksum_but_a_missing_field_is_set_aside_not_a_traceback(tmp_path):
    good, bad = a_record(0), a_record(1)
    del bad["result"]["qps"]
    bad["sha256"] = checksum(bad)  # the checksum is valid: the field is missing from what it covers
    assert Table3Store.problem(good) == "" and Table3Store.problem(bad) == "its result has no qps"
    store = tmp_path / "store.jsonl"
    store.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    records, others = Table3Store(store).check_recognised()
    assert records == [good] and [(n, p) for n, _, p in others] == [(2, "its result has no qps")]
    aside = Table3Store(store).set_aside(others)
    assert json.loads(aside.read_text())["text"] == json.dumps(bad)  # kept, not deleted


def test_a_store_is_locked_while_a_run_writes(tmp_path, capsys):
    store = tmp_path / "store.jsonl"
    first = Table3Store(store)
    first.lock()
    try:
        assert main([*TABLE3, "--store", str(store), "--resume"]) == 2
        err = capsys.readouterr().err
        assert f"being written by another run (pid {os.getpid()})" in err and "Traceback" not in err
    finally:
        first.unlock()
    second = Table3Store(store)
    second.lock()  # free again
    second.unlock()


def test_ctrl_c_in_check_writes_the_ties_so_far_and_exits_130(tmp_path, capsys, monkeypatch):
    """Ctrl-C threw away every tie already measured (the --csv file was never written) and printed a traceback.
    Truth: the rows of the groups that ended before the interrupt, as the command's own run of them returned."""
    calls = []
    real = checks_run.run_check_task

    def interrupted_third(task, *args):
        calls.append(task)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(task, *args)

    monkeypatch.setattr(checks_run, "run_check_task", interrupted_third)
    path = tmp_path / "ties.csv"
    code = main(["check", "--dataset", "iris", "--no-robust", "--cross-solvers", "piqp", "--quiet", "--jobs", "1",
                 "--csv", str(path)])
    err = capsys.readouterr().err
    assert code == 130 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "interrupted" in err and str(path) in err
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    expected = [r for task in calls[:2] for r in real(task, "default", ("piqp",), True)[0]]
    assert [(r["tie"], r["instance"]) for r in rows] == [(r.tie, r.instance) for r in expected]
    assert f"{len(expected)} ties measured in 2 of" in err


@pytest.mark.parametrize("args,message", [
    (["reproduce", "--runs", "0"], "argument --runs: must be >= 1, got 0"),
    (["reproduce", "--jobs", "0"], "argument --jobs: must be >= 1 worker process (or -1: one per core), got 0"),
    (["table3", "--jobs", "0"], "argument --jobs: must be >= 1 worker process"),
    (["robust-table", "--runs", "0"], "argument --runs: must be >= 1"),
])
def test_runs_and_jobs_are_refused_before_any_work(capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_reproduce_checks_table3s_arguments_before_the_check_phase(tmp_path, capsys, monkeypatch):
    """``--folds 1`` with ``--selection cv`` was refused only after every tie had run."""
    import tpm_models.cli.experiments as cli_experiments

    def no_checks(*args, **kwargs):
        raise AssertionError("the check phase ran before the arguments were checked")

    monkeypatch.setattr(cli_experiments, "check_ties", no_checks)
    assert main(["reproduce", "--selection", "cv", "--folds", "1", "--out-dir", str(tmp_path / "r")]) == 2
    assert "cv_folds must be 0 (no cross-validation) or an integer >= 2" in capsys.readouterr().err


def test_ctrl_c_in_table3_keeps_the_complete_records_and_exits_130(tmp_path, capsys, monkeypatch):
    """Ctrl-C after the first split: one line, exit 130, the store holds that split's complete record, and
    ``--resume`` reuses it (computes only the other)."""
    import tpm_models.experiments.table3.run as table3_run

    real = table3_run.parallel_map

    def interrupted_after_one(fn, tasks, n_jobs):
        for k, rec in enumerate(real(fn, tasks, n_jobs)):
            if k == 1:
                raise KeyboardInterrupt
            yield rec

    monkeypatch.setattr(table3_run, "parallel_map", interrupted_after_one)
    store = tmp_path / "t3.jsonl"
    args = ["table3", "--dataset", "iris", "--kernel", "linear", "--runs", "2", "--quiet", "--store", str(store)]
    assert main(args) == 130
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "1 new record(s) written" in err and "Traceback" not in err
    records, others = Table3Store(store).check_recognised()
    assert len(records) == 1 and not others
    monkeypatch.setattr(table3_run, "parallel_map", real)
    assert main([*args, "--resume"]) == 0
    assert "1 splits computed, 1 reused" in capsys.readouterr().out
