"""A ``--plugin`` runs only when asked: after the whole command line parses, only as the value of the global
``--plugin``, one module per file name.

Truth: a plugin that, when run, writes a marker file; the marker's existence says whether it ran.
"""

from __future__ import annotations

import sys

import pytest

from tpm_models.cli.main import main

PLUGIN = "from pathlib import Path\nPath({marker!r}).write_text('ran')\n"


@pytest.fixture
def plugin(tmp_path):
    marker = tmp_path / "ran.txt"
    path = tmp_path / "p.py"
    path.write_text(PLUGIN.format(marker=str(marker)))
    yield path, marker
    sys.modules.pop("tpm_models_plugin_p", None)


@pytest.mark.parametrize("argv", [
    ["solve", "--model", "16", "--nu", "0.3", "--alpha", "1", "--plugin", "{P}"],  # after the command: not global
    ["solve", "--model", "16", "--dataset", "--plugin={P}"],  # the value of --dataset, not a plugin
    ["--plugin", "{P}", "solve", "--model", "16", "--nu", "0.3", "--no-such-option"],  # the line does not parse
])
def test_a_plugin_does_not_run_when_the_command_line_is_refused(plugin, capsys, argv):
    path, marker = plugin
    with pytest.raises(SystemExit) as info:
        main([a.replace("{P}", str(path)) for a in argv])
    assert info.value.code == 2
    assert not marker.exists()


def test_a_plugin_runs_when_asked(plugin, capsys):
    path, marker = plugin
    assert main(["--plugin", str(path), "models"]) == 0
    assert marker.read_text() == "ran"


def test_a_second_plugin_of_the_same_file_name_is_refused_clearly(plugin, tmp_path, capsys):
    path, marker = plugin
    other = tmp_path / "other"
    other.mkdir()
    second_marker = other / "ran.txt"
    (other / "p.py").write_text(PLUGIN.format(marker=str(second_marker)))
    assert main(["--plugin", str(path), "--plugin", str(other / "p.py"), "models"]) == 2
    err = capsys.readouterr().err
    assert "same file name" in err and str(path) in err and "rename one" in err
    assert marker.exists() and not second_marker.exists()
