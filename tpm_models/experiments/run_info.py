"""What an experiment's report records about the run that produced it, and the hand-written part it keeps.

* :func:`command_line`: the command that produced a result, from the arguments the ``tpm-models`` command parsed
  (``sys.argv[1:]``), recorded once by :func:`tpm_models.cli.main.main`;
* :func:`run_metadata`: the machine, the versions of the packages that did the work (one that is not installed
  is named so, never an error: ``gurobipy`` is an optional extra), the load average before and after a run that
  computed anything, how many records a resumed run reused, and the date;
* :func:`peak_rss_mb`: the peak resident memory of this process alone (not of the process that started it);
* :data:`DISCUSSION_START` / :data:`DISCUSSION_END`: the markers of a report's hand-written discussion, which
  :func:`kept_discussion` reads back so that a regenerated report keeps it.
"""

from __future__ import annotations

import os
import platform
import resource
import shlex
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

DISCUSSION_START = "<!-- discussion: kept when the file is regenerated -->"
DISCUSSION_END = "<!-- end of discussion -->"

TABLE3_PACKAGES = ("numpy", "daqp", "piqp", "joblib")
"""The packages whose versions Table 3's report names (the fast path's solvers and the parallel loop)."""


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB: Linux's ``VmHWM`` (``/proc/self/status``: the high-water mark of the
    process's own memory image, which ``exec`` starts afresh), elsewhere ``ru_maxrss``.

    Not ``ru_maxrss`` on Linux: the kernel carries it over ``exec``, so a process started by a large one reports at
    least its parent's size. Measured here: a child that holds 75 MB, started by a process of 500 MB, reports
    526 MB by ``ru_maxrss`` and 75 MB by ``VmHWM`` (``tests/experiments/test_run_info.py``). A benchmark's child
    processes were started by a bench that holds the data and scikit-learn (178 MB at 10^4 points)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if platform.system() == "Darwin" else peak / 1024.0  # bytes on macOS, kB elsewhere


def command_line(argv: Sequence[str]) -> str:
    """``tpm-models`` and the arguments ``argv`` as a shell would take them back (quoted where needed)."""
    return " ".join(["tpm-models", shlex.join(argv)]) if argv else "tpm-models"


def package_versions(packages: Sequence[str]) -> str:
    """``"numpy 2.4.6, daqp 0.11.0"``; a package that is not installed reads ``"gurobipy not installed"``."""
    parts = []
    for name in packages:
        try:
            parts.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name} not installed")
    return ", ".join(parts)


def run_metadata(load_before: tuple[float, float, float], computed: int, reused: int = 0,
                 packages: Sequence[str] = TABLE3_PACKAGES) -> dict[str, str]:
    """The metadata lines of a report: machine and ``packages``, the load average before (``load_before``,
    ``os.getloadavg()`` when the run began) and now if the run ``computed`` anything, the records ``reused``
    from a store, the date."""
    after = os.getloadavg()
    meta = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
                       f"{package_versions(packages)}"}
    if computed:
        meta["load average (1, 5, 15 min) before / after"] = (f"{' '.join(f'{x:.2f}' for x in load_before)} / "
                                                              f"{' '.join(f'{x:.2f}' for x in after)}")
    if reused:
        meta["records reused from the store"] = (f"{reused} of {reused + computed}: their compute times "
                                                 "are those of the run that computed them")
    meta["date"] = time.strftime("%Y-%m-%d %H:%M %Z")
    return meta


def kept_discussion(path: str | Path) -> str | None:
    """The discussion written between the markers in the report at ``path`` (``None``: no file, or no markers)."""
    path = Path(path)
    if not path.exists():
        return None
    text = path.read_text()
    if DISCUSSION_START not in text or DISCUSSION_END not in text:
        return None
    return text.split(DISCUSSION_START, 1)[1].split(DISCUSSION_END, 1)[0].strip("\n")
