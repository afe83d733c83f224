"""The one way the library writes a file (``tpm_models.files``), under faults.

Truth: the file system itself, read before and after (bytes, mode, inode, the folder's listing). Signals are sent
by the writing process to itself at chosen points of the write (after the temporary file is made, mid-content,
just before the rename), so each point is reached for certain, not by timing.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tpm_models.files import FileLock, FileRefused, Locked, create_exclusive, replacing, write_text


def snapshot(folder: Path) -> dict[str, tuple[bytes, int, int] | str]:
    """Every entry of ``folder``: a file's bytes, mode and inode; a link's target."""
    out = {}
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink():
            out[entry.name] = "-> " + os.readlink(entry)
        elif entry.is_file():
            st = entry.stat()
            out[entry.name] = (entry.read_bytes(), stat.S_IMODE(st.st_mode), st.st_ino)
    return out


def test_a_new_file_gets_the_umask_mode_and_the_content(tmp_path):
    old = os.umask(0o027)
    try:
        write_text(tmp_path / "a.txt", "hello\n")
    finally:
        os.umask(old)
    assert (tmp_path / "a.txt").read_bytes() == b"hello\n"
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_an_existing_file_keeps_its_mode_and_is_replaced_whole(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    os.chmod(target, 0o604)
    before = target.stat().st_ino
    write_text(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o604
    assert target.stat().st_ino != before  # a rename, not a rewrite in place


def test_a_link_is_followed_and_stays_a_link(tmp_path):
    real = tmp_path / "real.lp"
    real.write_text("old")
    link = tmp_path / "link.lp"
    link.symlink_to(real.name)
    write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == "real.lp" and real.read_text() == "new"


def test_a_read_only_file_is_refused_and_left_as_it_is(tmp_path):
    target = tmp_path / "mine.lp"
    target.write_text("the user's")
    os.chmod(target, 0o444)
    before = snapshot(tmp_path)
    with pytest.raises(FileRefused, match="read-only"):
        write_text(target, "ours")
    assert snapshot(tmp_path) == before


def test_an_error_inside_the_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "table3.csv"
    target.write_text("old,content\n")
    before = snapshot(tmp_path)
    with pytest.raises(RuntimeError), replacing(target) as fh:
        fh.write("half")
        raise RuntimeError("the writer failed")
    assert snapshot(tmp_path) == before


WRITER = textwrap.dedent("""
    import os, signal, sys
    from tpm_models.files import replacing
    target, sig, point = sys.argv[1], getattr(signal, sys.argv[2]), sys.argv[3]
    with replacing(target) as fh:
        if point == "opened":
            os.kill(os.getpid(), sig)
        fh.write("x" * 100000)
        if point == "half":
            fh.flush()
            os.kill(os.getpid(), sig)
        fh.write("y" * 100000)
        if point == "before-rename":
            fh.flush()
            os.kill(os.getpid(), sig)
""")


@pytest.mark.parametrize("point", ["opened", "half", "before-rename"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_signal_during_a_write_leaves_the_old_file(tmp_path, sig, point):
    """At each point of a write, each signal: the target holds its old bytes (mode and inode too); SIGINT and
    SIGTERM leave no temporary file; a SIGKILL's temporary file is removed by the next write beside it."""
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "table3.md"
    target.write_text("# my notes\n")
    before = snapshot(folder)
    proc = subprocess.run([sys.executable, "-c", WRITER, str(target), sig, point], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode != 0, proc.stderr
    if sig == "SIGKILL":
        assert proc.returncode == -signal.SIGKILL
        left = set(p.name for p in folder.iterdir()) - {"table3.md"}
        assert len(left) == 1 and next(iter(left)).endswith(".tmp")
        assert snapshot(folder)["table3.md"] == before["table3.md"]
        write_text(folder / "table3.md", "# my notes\n")  # the next write removes the dead writer's temporary
        assert [p.name for p in folder.iterdir()] == ["table3.md"]
    else:
        assert snapshot(folder) == before, proc.stderr


def test_a_live_writers_temporary_is_not_removed(tmp_path):
    """Only a dead writer's temporary file is removed: one of this (live) process's pid stays."""
    target = tmp_path / "a.txt"
    live = tmp_path / f".a.txt.{os.getpid()}.0123abcd.tmp"
    live.write_text("being written")
    write_text(target, "x")
    assert live.read_text() == "being written"


def test_a_library_file_is_never_made_through_a_planted_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    lock = tmp_path / "store.jsonl.lock"
    lock.symlink_to(victim)
    before = snapshot(tmp_path)
    with pytest.raises(FileRefused, match="symbolic link"):
        create_exclusive(lock)
    with pytest.raises(FileRefused, match="symbolic link"):
        FileLock(tmp_path / "store.jsonl").acquire()
    assert snapshot(tmp_path) == before


def test_the_lock_goes_by_the_real_file(tmp_path):
    """Two names of one file (a link) take one lock: the second is refused, naming the holder's pid."""
    store = tmp_path / "store.jsonl"
    store.write_text("")
    alias = tmp_path / "alias.jsonl"
    alias.symlink_to(store.name)
    with FileLock(store):
        with pytest.raises(Locked, match=f"pid {os.getpid()}"):
            FileLock(alias).acquire()
    with FileLock(alias):  # released: taken again
        pass


def test_the_lock_is_refused_to_another_process(tmp_path):
    store = tmp_path / "s.jsonl"
    store.write_text("")
    with FileLock(store):
        proc = subprocess.run([sys.executable, "-c", "import sys; from tpm_models.files import FileLock, Locked\n"
                               "try:\n FileLock(sys.argv[1]).acquire()\nexcept Locked as e:\n print(e); sys.exit(3)",
                               str(store)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3 and f"pid {os.getpid()}" in proc.stdout


def test_a_full_disk_leaves_the_old_file_and_no_temporary(small_disk):
    target = small_disk / "table3.csv"
    target.write_text("old\n")
    before = snapshot(small_disk)
    with pytest.raises(OSError) as info:
        write_text(target, "z" * 1_000_000)
    assert info.value.errno == 28 and info.value.filename == str(target)  # ENOSPC, naming the file
    assert snapshot(small_disk) == before


def test_concurrent_writers_leave_one_whole_file(tmp_path):
    """Two processes write one file 40 times each (each its own 200 KB content) while this one reads it: every read
    is one writer's whole content, and no temporary file is left."""
    target = tmp_path / "shared.csv"
    target.write_text("a" * 200_000)
    code = ("import sys\nfrom tpm_models.files import write_text\n"
            "for _ in range(40):\n    write_text(sys.argv[1], sys.argv[2] * 200_000)\n")
    writers = [subprocess.Popen([sys.executable, "-c", code, str(target), letter]) for letter in "bc"]
    while any(w.poll() is None for w in writers):
        data = target.read_text()
        assert len(data) == 200_000 and len(set(data)) == 1, (len(data), set(data))
    assert [w.wait() for w in writers] == [0, 0]
    assert target.read_text() in ("b" * 200_000, "c" * 200_000)
    assert [p.name for p in tmp_path.iterdir()] == ["shared.csv"]
