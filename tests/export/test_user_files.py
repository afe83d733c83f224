"""Nothing a user owns is damaged (issue 26): exports go to regular files only, follow a link on purpose, keep an
existing file's mode and give a new one the umask's. Truths: the file system's own answers (``os.stat``,
``os.readlink``) and the bytes written (read back)."""

import os
import stat

import pytest

from tpm_models import build, load_dataset, min_max_scale
from tpm_models.cli import main
from tpm_models.export.writers import model_text, write

EXPORT = ["export", "--model", "15", "--dataset", "iris", "--class", "0", "--nu", "0.3", "--alpha", "1"]


@pytest.fixture
def model():
    d = load_dataset("iris")
    return build(15, min_max_scale(d.X), d.y, 0, 0.3, 1.0)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_device_is_refused_and_left_alone(capsys):
    """``export --out /dev/full`` printed "wrote /dev/full", exit 0, and replaced the device node by a file."""
    before = os.stat("/dev/full")
    assert main([*EXPORT, "--out", "/dev/full"]) == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err and "Traceback" not in err
    after = os.stat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_a_link_is_followed_and_stays_a_link(tmp_path, model):
    target = tmp_path / "real.lp"
    target.write_text("old")
    link = tmp_path / "link.lp"
    link.symlink_to(target)
    write(model, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() == model_text(model, "lp")


def test_an_existing_files_mode_is_kept_and_a_new_file_gets_the_umasks(tmp_path, model):
    """An overwritten 0644 file became 0600, and new exports were 0600 under umask 022 (mkstemp's mode)."""
    old = tmp_path / "old.lp"
    old.write_text("old")
    os.chmod(old, 0o640)
    write(model, old)
    assert stat.S_IMODE(old.stat().st_mode) == 0o640
    mask = os.umask(0o022)
    try:
        new = write(model, tmp_path / "new.lp")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o644


def test_a_folder_is_refused(tmp_path, model):
    with pytest.raises(ValueError, match="it is a folder"):
        write(model, tmp_path, "lp")
