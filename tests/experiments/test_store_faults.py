"""The results store and ``table3``'s options under faults: locks by the real file, ``--fresh`` under the lock,
read-only stores and planted links refused, options that contradict each other refused.

Truth: the folder's files (bytes, mode, inode) before and after every refused command.
"""

from __future__ import annotations

import os
import stat

import pytest

from tpm_models.cli.main import main
from tpm_models.experiments.store import ResultStore, StoreLocked
from tpm_models.files import FileLock

TABLE3 = ["table3", "--dataset", "iris", "--kernel", "linear", "--runs", "1", "--quiet"]


def snapshot(folder):
    out = {}
    for entry in sorted(folder.rglob("*")):
        if entry.is_symlink():
            out[str(entry)] = "-> " + os.readlink(entry)
        elif entry.is_file():
            st = entry.stat()
            out[str(entry)] = (entry.read_bytes(), stat.S_IMODE(st.st_mode), st.st_ino)
    return out


def test_fresh_does_not_delete_a_store_another_run_writes(tmp_path, capsys):
    store = tmp_path / "t.jsonl"
    store.write_text("")
    with FileLock(store, "results store"):
        before = snapshot(tmp_path)
        assert main([*TABLE3, "--store", str(store), "--fresh"]) == 2
        assert snapshot(tmp_path) == before
    assert "being written by another run" in capsys.readouterr().err


def test_fresh_says_what_it_removed(tmp_path, capsys):
    store = ResultStore(tmp_path / "t.jsonl")
    store.path.write_text("")
    assert store.remove() == [store.path] and not store.path.exists()


def test_two_names_of_one_store_are_one_lock(tmp_path):
    real = tmp_path / "t.jsonl"
    real.write_text("")
    alias = tmp_path / "alias.jsonl"
    alias.symlink_to(real.name)
    first = ResultStore(real)
    first.lock()
    try:
        with pytest.raises(StoreLocked):
            ResultStore(alias).lock()
    finally:
        first.unlock()


def test_a_planted_link_at_the_lock_is_refused_and_its_target_kept(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    store = tmp_path / "t.jsonl"
    (tmp_path / "t.jsonl.lock").symlink_to(victim)
    before = snapshot(tmp_path)
    assert main([*TABLE3, "--store", str(store)]) == 2
    assert snapshot(tmp_path) == before
    assert "symbolic link" in capsys.readouterr().err


def test_a_read_only_store_is_refused_before_it_is_rewritten(tmp_path, capsys):
    store = tmp_path / "t.jsonl"
    store.write_text("")  # an empty store is a store
    os.chmod(store, 0o444)
    before = snapshot(tmp_path)
    assert main([*TABLE3, "--store", str(store), "--resume"]) == 2
    after = snapshot(tmp_path)
    after.pop(str(tmp_path / "t.jsonl.lock"))  # the library's own file
    assert after == before
    assert "read-only" in capsys.readouterr().err


@pytest.mark.parametrize("extra, says", [
    (["--store", "{D}/s.jsonl", "--no-store"], "--no-store contradicts --store"),
    (["--no-store", "--resume"], "--no-store contradicts --resume"),
    (["--no-store", "--fresh"], "--no-store contradicts --fresh"),
    (["--store", "{D}/s.jsonl", "--resume", "--fresh"], "--resume contradicts --fresh"),
    (["--store", "{D}/table3.csv", "--out-dir", "{D}"], "is a file the report writes"),
])
def test_options_that_contradict_each_other_are_refused(tmp_path, capsys, extra, says):
    (tmp_path / "table3.csv").write_text("the user's")
    before = snapshot(tmp_path)
    assert main([*TABLE3, *(a.replace("{D}", str(tmp_path)) for a in extra)]) == 2
    assert says in capsys.readouterr().err
    assert snapshot(tmp_path) == before


def test_a_record_with_a_null_field_is_set_aside_not_a_traceback(tmp_path, capsys):
    """A record whose checksum matches but whose ``test_correct`` is null (written by hand or by another tool) is
    not a record: resume moves it to ``<store>.dropped`` and recomputes its split."""
    import json

    from tpm_models.experiments.store import checksum

    store = tmp_path / "t.jsonl"
    two = [*TABLE3[:-2], "2", "--quiet"]  # --runs 2: two records, one of them kept whole
    assert main([*two, "--store", str(store)]) == 0
    first, second = store.read_text().splitlines()
    record = json.loads(first)
    record["result"]["test_correct"] = None
    record["sha256"] = checksum(record)
    store.write_text(json.dumps(record) + "\n" + second + "\n")
    capsys.readouterr()
    assert main([*two, "--store", str(store), "--resume"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "1 corrupt" in captured.out  # --quiet: the summary line says it
    assert "test_correct is null" in (tmp_path / "t.jsonl.dropped").read_text()


def test_a_planted_link_at_the_old_temporary_name_is_not_written_through(tmp_path, capsys):
    """The store's rewrite once opened ``<store>.tmp`` with "w", following a link planted there. The rewrite now
    writes a temporary file of its own (created exclusively, never through a link): the link and its target stay."""
    store = tmp_path / "t.jsonl"
    assert main([*TABLE3, "--store", str(store)]) == 0
    record = store.read_text()
    store.write_text(record + record[:30])  # a cut last line: the resume rewrites the store
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "t.jsonl.tmp").symlink_to(victim)
    assert main([*TABLE3, "--store", str(store), "--resume"]) == 0
    assert victim.read_text() == "precious" and os.readlink(tmp_path / "t.jsonl.tmp") == str(victim)
    assert store.read_text() == record
