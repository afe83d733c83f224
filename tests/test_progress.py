"""Watchable work: the library's messages go through the ``tpm_models`` logger, ``-v`` shows them, ``--quiet``
silences them, and the progress bar is drawn on a terminal only.

Truths: what a process writes on its standard error, read from a pipe (not a terminal) and from a pseudo-terminal
(``pty``), and what a bar writes to a stream that says it is a terminal or not."""

import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios

import pytest

from tpm_models import progress
from tpm_models.experiments.parallel import Progress

TABLE3 = ["table3", "--dataset", "iris", "--kernel", "linear", "--runs", "2", "--no-store"]
STARTED = "tpm_models.experiments.table3.run: table3: 2 splits to compute"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream,drawn", [(io.StringIO(), False), (Terminal(), True)])
def test_the_bar_is_drawn_on_a_terminal_only(monkeypatch, stream, drawn):
    monkeypatch.setattr(progress, "BAR_DELAY", 0.0)
    bar = Progress(3, stream=stream, label="check", unit="group")
    for what in ("iris deterministic", "iris robust", "wine protocol"):
        bar.bar.refresh()
        bar.step(what)
    assert ("check" in stream.getvalue() and "2/3" in stream.getvalue() and "iris robust" in stream.getvalue()) \
        is drawn
    assert (stream.getvalue() == "") is not drawn


def test_quiet_turns_the_bar_off_on_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "BAR_DELAY", 0.0)
    stream = Terminal()
    bar = progress.progress_bar(2, "table3", enabled=False, stream=stream)
    bar.update(2)
    bar.close()
    assert stream.getvalue() == ""


def run(argv, tmp_path):
    done = subprocess.run([sys.executable, "-m", "tpm_models.cli", *argv, "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_verbose_logs_and_quiet_silences(tmp_path):
    """``-v``: the info line of the run; no flag: none; ``-v ... --quiet``: none. Standard error is a pipe here, so no
    bar is drawn in any of the three."""
    verbose = run(["-v", *TABLE3], tmp_path / "a")
    assert f"INFO {STARTED}" in verbose
    assert run(TABLE3, tmp_path / "b") == ""
    assert run(["-v", *TABLE3, "--quiet"], tmp_path / "c") == ""
    assert "\r" not in verbose and "split/s" not in verbose and "s/split" not in verbose


def test_the_bar_shows_counts_on_a_terminal(tmp_path):
    """Control of the above: the same run with standard error on a pseudo-terminal draws the bar with its counts."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    # every cell of Table 3 on Iris, 20 splits each: 3-4 s of splits here, well past the bar's delay (1 s); the
    # linear cell's 6 splits took under a second on a fast minute and ended before the bar was drawn
    runs = ["table3", "--dataset", "iris", "--runs", "20", "--no-store"]
    proc = subprocess.Popen([sys.executable, "-m", "tpm_models.cli", *runs, "--out-dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the process closed its end
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=300) == 0
    os.close(leader)
    text = seen.decode(errors="replace")
    assert "table3" in text and "/140 [" in text and "split" in text, text  # 7 cells of Iris x 20 splits


def test_verify_by_pyros_shows_a_bar_of_its_iterations(monkeypatch, capsys, caplog):
    """``tpm-models verify --method pyros``: a bar counts PyROS's iterations on a terminal, and PyROS's table stays
    out of the log without ``-v``. Truth: the iteration count PyROS itself returns (``res.iterations``), printed in
    the command's own table."""
    import re

    from tpm_models.cli import verify
    from tpm_models.cli.main import main

    monkeypatch.setattr(progress, "BAR_DELAY", 0.0)
    stream, drawn = Terminal(), verify.pyros_bar
    monkeypatch.setattr(verify, "pyros_bar", lambda enabled: drawn(enabled, stream=stream))
    code = main(["verify", "--model", "28", "--p", "2", "--eps", "0.02", "--nu", "0.3", "--alpha", "1",
                 "--method", "pyros", "--points-per-class", "10"])
    out = capsys.readouterr().out
    assert code == 0, out
    iterations = int(re.search(r"by pyros \(robust_optimal, (\d+) iterations\)", out).group(1))
    counts = [int(n) for n in re.findall(r"PyROS iterations: (\d+)it \[", stream.getvalue())]
    assert iterations >= 1 and max(counts) == iterations, stream.getvalue()
    assert not [r for r in caplog.records if r.name == verify.PYROS_LOGGER and r.levelno < 30]
