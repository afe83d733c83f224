"""Reports regenerated over a user's edits: the hand-written discussion of ``table3.md`` survives a regeneration,
and a write interrupted by a signal leaves the old report whole (so the next regeneration still finds it).

Truth: the report's bytes before and after; the discussion text put between the markers by hand.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tpm_models.experiments.run_info import DISCUSSION_END, DISCUSSION_START, kept_discussion
from tpm_models.experiments.table3 import run_table3, write_table3

MINE = "My reading: the linear cell ties the paper.\n\nA second paragraph, with *markdown*."


def test_the_discussion_survives_regeneration(tmp_path):
    run = run_table3(["iris"], ["linear"], runs=1, progress=False)
    write_table3(run, tmp_path, "tpm-models table3")
    md = tmp_path / "table3.md"
    text = md.read_text()
    assert DISCUSSION_START in text and DISCUSSION_END in text
    head, rest = text.split(DISCUSSION_START, 1)
    md.write_text(head + DISCUSSION_START + "\n" + MINE + "\n" + DISCUSSION_END + rest.split(DISCUSSION_END, 1)[1])
    write_table3(run, tmp_path, "tpm-models table3")
    assert kept_discussion(md) == MINE
    write_table3(run, tmp_path, "tpm-models table3")  # and again
    assert kept_discussion(md) == MINE


KILLED = textwrap.dedent("""
    # table3.md written through the safe writer, with the signal sent half way through its content
    import os, signal, sys
    import tpm_models.experiments.table3.report as report
    from tpm_models.experiments.table3 import run_table3, write_table3
    from tpm_models.files import replacing

    def half_then_signal(path, text):
        with replacing(path) as fh:
            fh.write(text[: len(text) // 2])
            fh.flush()
            os.kill(os.getpid(), getattr(signal, sys.argv[2]))
            fh.write(text[len(text) // 2:])

    report.write_text = half_then_signal
    write_table3(run_table3(["iris"], ["linear"], runs=1, progress=False), sys.argv[1], "tpm-models table3")
""")


def test_a_signal_during_the_reports_write_leaves_the_old_report(tmp_path):
    run = run_table3(["iris"], ["linear"], runs=1, progress=False)
    write_table3(run, tmp_path, "tpm-models table3")
    md = tmp_path / "table3.md"
    text = md.read_text()
    head, rest = text.split(DISCUSSION_START, 1)
    md.write_text(head + DISCUSSION_START + "\n" + MINE + "\n" + DISCUSSION_END + rest.split(DISCUSSION_END, 1)[1])
    before = md.read_bytes(), md.stat().st_ino
    for sig in ("SIGTERM", "SIGINT", "SIGKILL"):
        proc = subprocess.run([sys.executable, "-c", KILLED, str(tmp_path), sig], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode != 0
        assert (md.read_bytes(), md.stat().st_ino) == before, (sig, proc.stderr[-500:])
    write_table3(run, tmp_path, "tpm-models table3")
    assert kept_discussion(md) == MINE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table3.csv", "table3.md"]
    # (the SIGKILL's temporary file was removed by the last write: the listing above holds no .tmp)
