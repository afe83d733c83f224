"""Two ``table3`` runs on one store at once, and ``--fresh`` while another run waits to start.

The first run is a child paused at a known point (``tests/interrupt_harness.py``: in the sync of its first record's
append, or right after ``--fresh`` removed the store), so the second run starts while the first holds the store's
lock for certain, not by timing. Truth: the second run's exit code and message, and the store read back by
:class:`Table3Store`: each key once, every record computed by the first run (its pid in the record's timing).
"""

from __future__ import annotations

import os

from tpm_models.cli.main import main
from tpm_models.experiments.store import ResultStore
from tpm_models.experiments.table3 import Table3Store

TABLE3 = ["table3", "--dataset", "iris", "--kernel", "linear", "--runs", "2", "--quiet"]
KEYS = {("iris", "linear", 0), ("iris", "linear", 1)}


def records_by_key(store):
    records, bad = Table3Store(store).check_recognised()
    assert not bad
    keys = [tuple(r["key"]) for r in records]
    assert len(keys) == len(set(keys)), keys  # each record once
    return dict(zip(keys, records))


def test_a_second_run_through_another_name_of_the_store_is_refused(zygote, tmp_path):
    """The store named through a linked folder and through a link to the file: one store, one lock (the real
    file's), so both second runs are refused, naming the real store and the first run's pid, and write nothing."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "linked").symlink_to("real")
    (real / "alias.jsonl").symlink_to("s.jsonl")
    first = zygote.run([*TABLE3, "--store", "real/s.jsonl"], tmp_path, pause_on="s.jsonl", how="sync", nth=1)
    first.paused()
    for name in ("linked/s.jsonl", "real/alias.jsonl"):
        second = zygote.run([*TABLE3, "--store", name, "--resume"], tmp_path)
        assert second.wait() == 2, second.output
        assert f"{os.path.realpath(real / 's.jsonl')} is being written by another run (pid {first.pid})" \
            in second.output, second.output
    first.release()
    assert first.wait() == 0, first.output
    records = records_by_key(real / "s.jsonl")
    assert set(records) == KEYS and {r["timing"]["pid"] for r in records.values()} == {first.pid}


def test_fresh_keeps_the_lock_from_the_removal_to_the_runs_end(zygote, tmp_path, monkeypatch, capsys):
    """A second run started right after ``--fresh`` removed the store (the store gone, so it needs no --resume) is
    refused: the lock taken for the removal is the run's own, held to its end. (Taken for the removal, released,
    then taken again by the run, it let the second run in: it wrote the store, and the first then found it.)"""
    store = tmp_path / "s.jsonl"
    assert main([*TABLE3, "--store", str(store)]) == 0
    old = records_by_key(store)
    second = {}
    real_remove = ResultStore.remove

    def remove_then_start_another(self):
        removed = real_remove(self)
        child = zygote.run([*TABLE3, "--store", "s.jsonl"], tmp_path)
        second["code"], second["output"] = child.wait(), child.output
        return removed

    monkeypatch.setattr(ResultStore, "remove", remove_then_start_another)
    capsys.readouterr()
    assert main([*TABLE3, "--store", str(store), "--fresh"]) == 0
    assert f"--fresh: removed {store}" in capsys.readouterr().out
    assert second["code"] == 2 and f"being written by another run (pid {os.getpid()})" in second["output"], second
    records = records_by_key(store)
    assert set(records) == KEYS and all(records[k]["sha256"] != old[k]["sha256"] for k in KEYS)  # computed again


def test_fresh_refuses_a_read_only_store(tmp_path, capsys):
    store = tmp_path / "s.jsonl"
    store.write_text("")
    os.chmod(store, 0o444)
    assert main([*TABLE3, "--store", str(store), "--fresh"]) == 2
    assert store.exists() and "read-only" in capsys.readouterr().err
