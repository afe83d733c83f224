"""``export-library`` touches only the library's own files (``tpm_models.export.library.write_library``).

Truth: the folder's listing and every file's bytes before and after; the library's content is a stand-in (two
small files), since which files the library holds is not what is tested here.
"""

from __future__ import annotations

import gzip

import pytest

from tpm_models.export.library import MANIFEST, LibraryFile, manifest_files, write_library
from tpm_models.files import FileLock, Locked

FILES = [LibraryFile("iris/eq15_c0.lp", "lp", b"min x\n"), LibraryFile("wine/eq16_c1.lp", "lp", b"min y\n")]


def library(files=FILES):
    return [LibraryFile(f.path + ".gz", f.fmt, f.content) for f in files], [{"file": f.path + ".gz"} for f in files]


def test_a_users_files_beside_the_library_survive_a_regeneration(tmp_path):
    files, rows = library()
    write_library(tmp_path, rows, files)
    (tmp_path / "iris" / "thesis.tex").write_text("my thesis")
    (tmp_path / "wine" / "notes.md").write_text("my notes")
    summary = write_library(tmp_path, rows, files)
    assert (tmp_path / "iris" / "thesis.tex").read_text() == "my thesis"
    assert (tmp_path / "wine" / "notes.md").read_text() == "my notes"
    assert summary["removed"] == []
    assert gzip.decompress((tmp_path / "iris" / "eq15_c0.lp.gz").read_bytes()) == gzip.decompress(
        gzip.compress(b"min x\n"))


def test_only_a_file_the_old_manifest_lists_is_removed_and_named(tmp_path):
    files, rows = library()
    write_library(tmp_path, rows, files)
    assert manifest_files(tmp_path) == {"iris/eq15_c0.lp.gz", "wine/eq16_c1.lp.gz"}
    fewer, fewer_rows = library(FILES[:1])
    summary = write_library(tmp_path, fewer_rows, fewer)
    assert summary["removed"] == [tmp_path / "wine" / "eq16_c1.lp.gz"]
    assert not (tmp_path / "wine" / "eq16_c1.lp.gz").exists() and (tmp_path / "iris" / "eq15_c0.lp.gz").exists()


def test_a_file_of_the_librarys_name_that_it_did_not_write_is_refused(tmp_path):
    """No manifest lists ``iris/eq15_c0.lp.gz`` and it holds something else: the user's; nothing is written."""
    (tmp_path / "iris").mkdir()
    mine = tmp_path / "iris" / "eq15_c0.lp.gz"
    mine.write_bytes(b"mine")
    files, rows = library()
    with pytest.raises(ValueError, match="not listed in"):
        write_library(tmp_path, rows, files)
    assert mine.read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["iris", "manifest.csv.lock"]


def test_a_library_another_run_writes_is_refused_before_anything_is_written(tmp_path):
    files, rows = library()
    with FileLock(tmp_path / MANIFEST), pytest.raises(Locked):
        write_library(tmp_path, rows, files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.csv.lock"]


@pytest.mark.parametrize("text", [
    "name,score\nalice,3\n",  # a user's table that happens to be called manifest.csv
    "file\nthesis.tex\n",  # one column named file: not the library's manifest, and what it lists is not removed
])
def test_a_manifest_csv_that_is_not_the_librarys_is_refused_and_kept(tmp_path, text):
    """``export-library --root DIR`` replaced a user's ``DIR/manifest.csv`` (and would remove what it listed)."""
    (tmp_path / MANIFEST).write_text(text)
    (tmp_path / "thesis.tex").write_text("my thesis")
    files, rows = library()
    with pytest.raises(ValueError, match="is not the library's manifest"):
        write_library(tmp_path, rows, files)
    assert (tmp_path / MANIFEST).read_text() == text and (tmp_path / "thesis.tex").read_text() == "my thesis"
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST, "manifest.csv.lock", "thesis.tex"]


def test_a_manifest_listing_a_file_outside_the_library_removes_nothing(tmp_path):
    """A manifest of the library's columns that lists ``../outside.txt``: refused, the file outside kept."""
    root = tmp_path / "lib"
    files, rows = library()
    write_library(root, rows, files)
    outside = tmp_path / "outside.txt"
    outside.write_text("mine")
    manifest = (root / MANIFEST).read_text()
    (root / MANIFEST).write_text(manifest + "../outside.txt" + "," * (manifest.splitlines()[0].count(",")) + "\n")
    with pytest.raises(ValueError, match="not below"):
        write_library(root, rows, files)
    assert outside.read_text() == "mine"
