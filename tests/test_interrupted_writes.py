"""Every kind of write the command line does, interrupted by SIGINT, SIGTERM and SIGKILL in the middle of it, then
run again; and two runs on one store at once.

Each command runs in a process of its own (``tests/interrupt_harness.py``: a child that pauses inside the safe writer
after the temporary file is written and synced, before it is renamed over the target, or inside an append's sync),
and the signal is sent while it is paused there, so the point is reached for certain. The kinds of write: ``export``
and ``robustify`` files, the results store's appends and its rewrite (``table3``), ``export-library``'s files and
manifest, the reports ``table3.md``, ``table3.csv`` and ``robust.md``, and the figures of ``plot``.

Truth: the target's bytes and inode before the run (the old file) and the bytes an uninterrupted run writes (the new
file), the folder's listing, the store's records read back by :class:`Table3Store` (every line a record, each key
once) and the records of an uninterrupted run. After every signal the target is the whole old file (the pause is
before the rename: the new content never reached the target's name), SIGINT and SIGTERM leave nothing else behind
and end in one line with exit 130 and 143, SIGKILL leaves one temporary file; the next run succeeds, removes that
file, and writes the new content (the store: every finished record kept and reused).
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import shutil
import signal
import stat

import pytest

from tpm_models.cli.main import main
from tpm_models.experiments.run_info import DISCUSSION_END, DISCUSSION_START, kept_discussion
from tpm_models.experiments.table3 import Table3Store
from tpm_models.export.library import MANIFEST, LibraryFile, manifest_files, write_library

SIGNALS = [("SIGINT", 130), ("SIGTERM", 143), ("SIGKILL", -signal.SIGKILL)]
"""Each signal and the exit code it must end with: 128 + N for the two a run catches (as a shell reports them),
-9 (killed) for SIGKILL."""

EXPORT = ["export", "--model", "28", "--dataset", "iris", "--class", "0", "--nu", "0.3", "--alpha", "1", "--eps"]
ROBUSTIFY = ["robustify", "--model", "15", "--rows", "margin", "--vars", "w", "--set", "box", "--nu", "0.3",
             "--alpha", "1", "--eps"]
TABLE3 = ["table3", "--dataset", "iris", "--kernel", "linear", "--runs", "2", "--quiet"]
ROBUST = ["robust-table", "--dataset", "iris", "--runs", "1", "--p", "2", "--eps", "0.01", "--quiet"]
MINE = "My reading of the table, written by hand.\n\nIt must survive every regeneration."


def listing(folder):
    """Every file below ``folder`` (relative names) with its bytes and inode; a link's target."""
    out = {}
    for entry in sorted(folder.rglob("*")):
        name = str(entry.relative_to(folder))
        if entry.is_symlink():
            out[name] = "-> " + os.readlink(entry)
        elif entry.is_file():
            out[name] = (entry.read_bytes(), entry.stat().st_ino, stat.S_IMODE(entry.stat().st_mode))
    return out


def with_discussion(path, text=MINE):
    """The report at ``path`` with ``text`` written by hand between its discussion markers."""
    report = path.read_text()
    head, rest = report.split(DISCUSSION_START, 1)
    path.write_text(head + DISCUSSION_START + "\n" + text + "\n" + DISCUSSION_END + rest.split(DISCUSSION_END, 1)[1])


def interrupt(zygote, sig, argv, cwd, pause_on, expected=None, **how):
    """Run ``argv`` in ``cwd`` in a child, deliver ``sig`` when it is paused in the write of ``pause_on``; the child
    (its exit code checked against :data:`SIGNALS` or ``expected``; one line on stderr, no traceback, for a signal
    it catches)."""
    child = zygote.run(argv, cwd, pause_on=pause_on, **how)
    child.paused()
    child.signal(getattr(signal, sig))
    expected = dict(SIGNALS)[sig] if expected is None else expected
    assert child.wait() == expected, child.output
    if expected > 0:
        lines = [line for line in child.output.splitlines() if line.strip()]
        said = {"SIGINT": "tpm-models: interrupted", "SIGTERM": "tpm-models: terminated (SIGTERM)"}[sig]
        assert "Traceback" not in child.output and lines and lines[-1].startswith(said), child.output
    return child


def temporaries(folder):
    return sorted(p.name for p in folder.rglob("*.tmp"))


def check_after_signal(sig, folder, before, target, done=()):
    """The target is its old self; nothing but one temporary file (SIGKILL, which no process can catch) is new, or
    changed but the files ``done`` (written whole before the target, checked by the caller)."""
    after = listing(folder)
    assert after[target] == before[target], f"{target} changed"
    left = {name: v for name, v in after.items() if name not in done and (name not in before or before[name] != v)
            and not name.endswith(".lock")}  # the library's lock file, which stays, holds its last holder's pid
    if sig == "SIGKILL":
        assert len(left) == 1 and next(iter(left)).endswith(".tmp"), sorted(left)
    else:
        assert left == {}, sorted(left)


# ---------------------------------------------------------------- export and robustify


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    """The old and the new content of an ``export`` and a ``robustify`` target (eps 0.01 and 0.02)."""
    out = tmp_path_factory.mktemp("references")
    made = {}
    for name, argv in (("eq28.lp", EXPORT), ("rc.lp", ROBUSTIFY)):
        for eps in ("0.01", "0.02"):
            path = out / f"{eps}-{name}"
            assert main([*argv, eps, "--out", str(path)]) == 0
            made[name, eps] = path.read_bytes()
        assert made[name, "0.01"] != made[name, "0.02"]
    return made


@pytest.mark.parametrize("sig", [s for s, _ in SIGNALS])
@pytest.mark.parametrize("name, argv", [("eq28.lp", EXPORT), ("rc.lp", ROBUSTIFY)])
def test_an_interrupted_export_leaves_the_old_file(zygote, model_files, tmp_path, sig, name, argv):
    target = tmp_path / name
    target.write_bytes(model_files[name, "0.01"])
    os.chmod(target, 0o640)
    before = listing(tmp_path)
    interrupt(zygote, sig, [*argv, "0.02", "--out", name], tmp_path, name)
    check_after_signal(sig, tmp_path, before, name)
    assert main([*argv, "0.02", "--out", str(target)]) == 0
    assert target.read_bytes() == model_files[name, "0.02"] and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert temporaries(tmp_path) == []


# ---------------------------------------------------------------- the results store (table3)


def records_of(store):
    """The store's records by key (each key once: ``AssertionError`` otherwise), and its lines that are not
    records."""
    records, bad = Table3Store(store).check_recognised()
    keys = [tuple(r["key"]) for r in records]
    assert len(keys) == len(set(keys)), keys
    return {k: r for k, r in zip(keys, records)}, bad


def results(records):
    """What a table is computed from: every record's result (counts, integers), by key; the timing left out."""
    return {k: r["result"] for k, r in records.items()}


def table(path):
    """The rows of a ``table3.csv``, numbers parsed; the compute time (each run's own) left out. Compared exactly:
    both tables are computed by the same code from the same integer counts, so any difference is a wrong record."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))

    def value(text):
        try:
            return float(text)
        except ValueError:
            return text

    return [{k: value(v) for k, v in row.items() if k != "compute_s"} for row in rows]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted ``table3`` run (its store and report) and an older report of one split."""
    out = tmp_path_factory.mktemp("table3")
    store = out / "s.jsonl"
    assert main([*TABLE3, "--store", str(store), "--out-dir", str(out / "report")]) == 0
    older = out / "older"
    assert main([*TABLE3[:-2], "1", "--quiet", "--store", str(store), "--resume", "--out-dir", str(older)]) == 0
    with_discussion(older / "table3.md")
    records, bad = records_of(store)
    assert len(records) == 2 and not bad
    return {"store": store, "records": records, "table": table(out / "report" / "table3.csv"), "older": older}


@pytest.mark.parametrize("sig, code", [("SIGINT", 130), ("SIGTERM", -signal.SIGTERM), ("SIGKILL", -signal.SIGKILL)])
def test_an_interrupted_append_keeps_every_finished_record(zygote, reference, tmp_path, sig, code):
    """Paused in the sync of the second record's append (its bytes written): the store holds whole records only;
    the rerun reuses them and gives the table of an uninterrupted run. (SIGTERM ends the run at once outside a
    file's rewrite, as by default: nothing half-written can be left by it there.)"""
    interrupt(zygote, sig, [*TABLE3, "--store", "s.jsonl"], tmp_path, "s.jsonl", expected=code, how="sync", nth=2)
    records, bad = records_of(tmp_path / "s.jsonl")
    assert not bad and len(records) == 2  # both appends' bytes were written before the pause
    assert results(records) == {k: v for k, v in results(reference["records"]).items() if k in records}
    assert temporaries(tmp_path) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl", "s.jsonl.lock"]
    assert main([*TABLE3, "--store", str(tmp_path / "s.jsonl"), "--resume", "--out-dir", str(tmp_path / "o")]) == 0
    again, bad = records_of(tmp_path / "s.jsonl")
    assert not bad and results(again) == results(reference["records"])
    assert {k: r["timing"] for k, r in again.items()} == {k: r["timing"] for k, r in records.items()}  # reused
    assert table(tmp_path / "o" / "table3.csv") == reference["table"]


@pytest.mark.parametrize("sig", [s for s, _ in SIGNALS])
def test_an_interrupted_rewrite_of_the_store_leaves_the_old_store(zygote, reference, tmp_path, sig):
    """A store with a cut last line is rewritten on --resume (the line set aside first): interrupted just before
    the rename, the store is the old one, cut line included; the rerun rewrites it and keeps both records."""
    lines = reference["store"].read_text().splitlines()
    store = tmp_path / "s.jsonl"
    store.write_text(lines[0] + "\n" + lines[1] + "\n" + lines[1][:60])
    before = listing(tmp_path)
    interrupt(zygote, sig, [*TABLE3, "--store", "s.jsonl", "--resume"], tmp_path, "s.jsonl")
    after = listing(tmp_path)
    assert after["s.jsonl"] == before["s.jsonl"]
    new = sorted(set(after) - set(before))
    assert new == sorted(["s.jsonl.dropped", "s.jsonl.lock", *([n for n in new if n.endswith(".tmp")]
                                                              if sig == "SIGKILL" else [])]), new
    assert len(new) == 2 + (sig == "SIGKILL")
    assert main([*TABLE3, "--store", str(store), "--resume", "--out-dir", str(tmp_path / "o")]) == 0
    records, bad = records_of(store)
    assert not bad and results(records) == results(reference["records"])
    assert store.read_text().splitlines() == lines  # the two records, as written, once each
    assert temporaries(tmp_path) == []
    dropped = [json.loads(line) for line in (tmp_path / "s.jsonl.dropped").read_text().splitlines()]
    assert [(d["line"], d["text"]) for d in dropped] == [(3, lines[1][:60])]  # set aside once, by the first run
    assert table(tmp_path / "o" / "table3.csv") == reference["table"]


@pytest.mark.parametrize("sig", [s for s, _ in SIGNALS])
@pytest.mark.parametrize("name", ["table3.md", "table3.csv"])
def test_an_interrupted_report_leaves_the_old_report(zygote, reference, tmp_path, sig, name):
    """The report of a complete store regenerated over an older one (one split, a hand-written discussion): the
    file being written is the old one; the rerun writes the table of the uninterrupted run and keeps the
    discussion."""
    shutil.copy(reference["store"], tmp_path / "s.jsonl")
    shutil.copytree(reference["older"], tmp_path / "o")
    before = listing(tmp_path / "o")
    interrupt(zygote, sig, [*TABLE3, "--store", "s.jsonl", "--resume", "--out-dir", "o"], tmp_path, name)
    after = listing(tmp_path / "o")
    assert after[name] == before[name]
    if name == "table3.csv":  # table3.md is written first: it is the new one, whole, the discussion in it
        assert after["table3.md"] != before["table3.md"] and kept_discussion(tmp_path / "o" / "table3.md") == MINE
    check_after_signal(sig, tmp_path / "o", before, name, done=["table3.md"] if name == "table3.csv" else [])
    assert main([*TABLE3, "--store", str(tmp_path / "s.jsonl"), "--resume", "--out-dir", str(tmp_path / "o")]) == 0
    assert kept_discussion(tmp_path / "o" / "table3.md") == MINE
    assert table(tmp_path / "o" / "table3.csv") == reference["table"]
    assert temporaries(tmp_path) == []
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["table3.csv", "table3.md"]


# ---------------------------------------------------------------- robust.md, figures, export-library


def interrupt_each_signal(zygote, folders, argv, pause_on):
    """:func:`interrupt` with each signal at once, each in its own folder (``folders[sig]``): the three children
    run side by side, so a costly command is paid once in wall time."""
    children = {}
    for sig, _ in SIGNALS:
        children[sig] = zygote.run(argv, folders[sig], pause_on=pause_on)
    for sig, _ in SIGNALS:
        children[sig].paused()
        children[sig].signal(getattr(signal, sig))
    for sig, code in SIGNALS:
        assert children[sig].wait() == code, children[sig].output
        if code > 0:
            assert "Traceback" not in children[sig].output, children[sig].output


def copies(tmp_path, source):
    """A copy of the folder ``source`` per signal, ``tmp_path/<signal>``."""
    folders = {sig: tmp_path / sig for sig, _ in SIGNALS}
    for folder in folders.values():
        shutil.copytree(source, folder)
    return folders


def robust_numbers(path):
    """``robust.json``'s rows without the time (each run's own): accuracies of a fixed protocol."""
    return [{k: v for k, v in row.items() if k != "seconds"} for row in json.loads(path.read_text())]


def test_an_interrupted_robust_report_leaves_the_old_report(zygote, tmp_path):
    """``robust-table`` over its own older report with a hand-written discussion: ``robust.md`` is the old one after
    each signal; the next run keeps the discussion and writes the numbers of the uninterrupted run. (One rerun, in
    the SIGKILL's folder, the one with a file left behind: after SIGINT and SIGTERM the folder is as it was, bytes
    and inodes, so a run there is the uninterrupted one.)"""
    first = tmp_path / "first"
    assert main([*ROBUST, "--out-dir", str(first / "r")]) == 0
    with_discussion(first / "r" / "robust.md")
    folders = copies(tmp_path, first)
    before = {sig: listing(folder / "r") for sig, folder in folders.items()}
    interrupt_each_signal(zygote, folders, [*ROBUST, "--out-dir", "r"], "robust.md")
    for sig, folder in folders.items():
        check_after_signal(sig, folder / "r", before[sig], "robust.md")
    again = folders["SIGKILL"] / "r"
    assert main([*ROBUST, "--out-dir", str(again)]) == 0
    assert kept_discussion(again / "robust.md") == MINE
    assert robust_numbers(again / "robust.json") == robust_numbers(first / "r" / "robust.json")
    assert sorted(p.name for p in again.iterdir()) == ["robust.json", "robust.md"]


@pytest.fixture(scope="module")
def figures(reference, tmp_path_factory):
    """The figures of the uninterrupted run's table (``new``) and of the older table (``first``)."""
    out = tmp_path_factory.mktemp("figures")
    for name, table_csv in (("new", reference["store"].parent / "report" / "table3.csv"),
                            ("first", reference["older"] / "table3.csv")):
        assert main(["plot", "table3", "--csv", str(table_csv), "--out", str(out / name / "t3")]) == 0
    return out / "new", out / "first"


@pytest.mark.parametrize("name", ["t3.png", "t3.svg"])
def test_an_interrupted_figure_leaves_the_old_figure(zygote, reference, figures, tmp_path, name):
    """``plot table3`` over the figures of an older table: the figure being written is the old one, whole; the
    rerun writes the figures an uninterrupted run writes (byte for byte: the figures carry no date)."""
    csv_path = reference["store"].parent / "report" / "table3.csv"
    new, first = figures
    assert (first / name).read_bytes() != (new / name).read_bytes()
    folders = copies(tmp_path, first)
    before = {sig: listing(folder) for sig, folder in folders.items()}
    interrupt_each_signal(zygote, folders, ["plot", "table3", "--csv", str(csv_path), "--out", "t3"], name)
    for sig, folder in folders.items():  # the png is written first: with the svg's write stopped, it is the new one
        check_after_signal(sig, folder, before[sig], name, done=["t3.png"] if name == "t3.svg" else [])
        if name == "t3.svg":
            assert (folder / "t3.png").read_bytes() == (new / "t3.png").read_bytes()
    again = folders["SIGKILL"]
    assert main(["plot", "table3", "--csv", str(csv_path), "--out", str(again / "t3")]) == 0
    assert listing(again).keys() == {"t3.png", "t3.svg"}
    assert all((again / n).read_bytes() == (new / n).read_bytes() for n in ("t3.png", "t3.svg"))


OLD_LIBRARY = {"iris/eq15_c0.lp": b"min x_old\n", "wine/eq16_c1.lp": b"min y_old\n"}
NEW_LIBRARY = {"iris/eq15_c0.lp": b"min x_new\n"}
"""export-library's content, a stand-in (the real one is 180 instances, minutes): the new library changes one file
and no longer has the other, which its run removes (the old manifest lists it)."""


def stand_in_library(monkeypatch, content):
    import tpm_models.cli.export as cli_export

    def generate_library(root, progress=None):
        files = [LibraryFile(path + ".gz", "lp", data) for path, data in content.items()]
        return {**write_library(root, [{"file": f.path} for f in files], files), "seconds": 0.0}

    monkeypatch.setattr(cli_export, "generate_library", generate_library)


def library_content(root):
    """Every file the library's manifest lists, decompressed, and the manifest's listing."""
    listed = sorted(manifest_files(root))
    return listed, {path: gzip.decompress((root / path).read_bytes()) for path in listed if (root / path).exists()}


@pytest.mark.parametrize("sig", [s for s, _ in SIGNALS])
@pytest.mark.parametrize("name", ["eq15_c0.lp.gz", MANIFEST])
def test_an_interrupted_export_library_leaves_a_library_and_the_users_files(zygote, tmp_path, monkeypatch, sig,
                                                                            name):
    """Stopped in the write of the first library file or of the manifest (written last): the file being written is
    the old one; every file is whole, old or new; the user's ``thesis.tex`` beside them is untouched; the rerun
    writes the new library and its manifest."""
    root = tmp_path / "lib"
    stand_in_library(monkeypatch, OLD_LIBRARY)
    assert main(["export-library", "--root", str(root), "--quiet"]) == 0
    (root / "iris" / "thesis.tex").write_text("my thesis")
    before = listing(root)
    child = interrupt(zygote, sig, ["export-library", "--root", "lib", "--quiet"], tmp_path, name,
                      stand_in_library=NEW_LIBRARY)
    assert "Traceback" not in child.output
    after = listing(root)
    target = MANIFEST if name == MANIFEST else "iris/eq15_c0.lp.gz"
    assert after[target] == before[target] and after["iris/thesis.tex"] == before["iris/thesis.tex"]
    listed, content = library_content(root)
    assert listed == ["iris/eq15_c0.lp.gz", "wine/eq16_c1.lp.gz"]  # the old manifest
    for path, data in content.items():
        assert data in (OLD_LIBRARY[path[:-3]], NEW_LIBRARY.get(path[:-3])), path
    if name == MANIFEST:  # the files before it are done: the new file written, the one the library dropped removed
        assert content == {"iris/eq15_c0.lp.gz": b"min x_new\n"}
    check_after_signal(sig, root, before, target,
                       done=["iris/eq15_c0.lp.gz", "wine/eq16_c1.lp.gz"] if name == MANIFEST else [])
    stand_in_library(monkeypatch, NEW_LIBRARY)
    assert main(["export-library", "--root", str(root), "--quiet"]) == 0
    assert library_content(root) == (["iris/eq15_c0.lp.gz"], {"iris/eq15_c0.lp.gz": b"min x_new\n"})
    assert (root / "iris" / "thesis.tex").read_text() == "my thesis" and temporaries(root) == []
