"""Run ``tpm-models`` commands in child processes that pause at a chosen point of a file write, so that a test can
deliver SIGINT, SIGTERM or SIGKILL exactly there (not by timing), or start a second run while the first holds its
lock. Used by ``tests/test_interrupted_writes.py``.

A *zygote* process imports the command line and every command group once, then forks one child per command (each
child a process of its own, with its own pid, its standard output and error in a log file, its signal handlers
the interpreter's defaults). A child runs :func:`tpm_models.cli.main.main` on its argv, with one of two pause
points patched in:

* ``how="rename"``: inside the safe writer, after the temporary file is written, synced and given its mode, just
  before it is renamed over the target whose file name is ``pause_on`` (``os.replace`` is wrapped; every other
  rename passes through);
* ``how="sync"``: in the ``nth`` ``os.fsync`` of the file named ``pause_on`` (a store's append: its bytes written,
  not yet synced).

At the pause the child writes its pid to a marker file and waits (for a signal, or for the test to release it);
the test waits for the marker, so the signal or the second run comes while the child is at that point for certain.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

ZYGOTE = textwrap.dedent(r"""
    import importlib, json, os, signal, sys, time, traceback

    cli = importlib.import_module("tpm_models.cli.main")  # the module (tpm_models.cli.main is also its function)

    cli.parser()  # every command group imported here, once, before any fork
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401  (plot's import, once)

    REAL_REPLACE, REAL_FSYNC = os.replace, os.fsync


    def pause(req):
        fd = os.open(req["marker"] + ".part", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        REAL_REPLACE(req["marker"] + ".part", req["marker"])
        deadline = time.monotonic() + 120  # never left behind if the test itself dies
        while not os.path.exists(req["release"]):
            if time.monotonic() > deadline:
                os._exit(99)
            time.sleep(0.01)


    def patch(req):
        name, how = req.get("pause_on"), req.get("how", "rename")
        if name and how == "rename":
            def replace(src, dst, *args, **kwargs):
                if os.path.basename(dst) == name:
                    pause(req)
                return REAL_REPLACE(src, dst, *args, **kwargs)
            os.replace = replace
        elif name and how == "sync":
            seen = [0]
            def fsync(fd):
                if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")) == name:
                    seen[0] += 1
                    if seen[0] == req["nth"]:
                        pause(req)
                return REAL_FSYNC(fd)
            os.fsync = fsync
        if req.get("stand_in_library"):
            # export-library's content (180 instances, minutes) replaced by small files; its writer is the real one
            import tpm_models.cli.export as cli_export
            from tpm_models.export.library import LibraryFile, write_library

            def generate_library(root, progress=None):
                files = [LibraryFile(path + ".gz", "lp", data.encode())
                         for path, data in req["stand_in_library"].items()]
                summary = write_library(root, [{"file": f.path} for f in files], files)
                return {**summary, "seconds": 0.0}
            cli_export.generate_library = generate_library


    def child(req):
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.chdir(req["cwd"])
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        patch(req)
        try:
            code = cli.main(req["argv"])
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        except BaseException:  # what the interpreter does with an exception nobody caught
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


    print(json.dumps({"ready": os.getpid()}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if "wait" in req:
            _, status = os.waitpid(req["wait"], 0)
            print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)
            continue
        pid = os.fork()
        if pid == 0:
            child(req)
        print(json.dumps({"pid": pid}), flush=True)
""")


@dataclass
class Child:
    """One command run by the zygote."""

    zygote: Zygote
    pid: int
    marker: Path
    release_file: Path
    log: Path
    code: int | None = None

    def paused(self, timeout: float = 120.0) -> None:
        """Wait until the child is at its pause point (``AssertionError`` with its log if it ended first)."""
        deadline = time.monotonic() + timeout
        while not self.marker.exists():
            ended = os.path.exists(f"/proc/{self.pid}") and Path(f"/proc/{self.pid}/stat").read_text().split()[2]
            if ended == "Z" or time.monotonic() > deadline:
                raise AssertionError(f"the child never reached its pause point: {self.log.read_text()[-2000:]}")
            time.sleep(0.01)
        assert int(self.marker.read_text()) == self.pid

    def signal(self, sig: int) -> None:
        os.kill(self.pid, sig)

    def release(self) -> None:
        self.release_file.write_text("")

    def wait(self) -> int:
        """The child's exit code (``-N``: killed by signal ``N``)."""
        if self.code is None:
            self.code = self.zygote.ask({"wait": self.pid})["code"]
        return self.code

    @property
    def output(self) -> str:
        return self.log.read_text()


class Zygote:
    """The zygote process (:data:`ZYGOTE`); :meth:`run` starts a command in a child of it."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.count = 0
        self.children: list[Child] = []
        self.proc = subprocess.Popen([sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(scratch / "zygote.err", "w"), text=True)  # noqa: SIM115
        first = self.proc.stdout.readline()
        assert first, (scratch / "zygote.err").read_text()
        assert "ready" in json.loads(first)

    def ask(self, request: dict) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer, (self.scratch / "zygote.err").read_text()
        return json.loads(answer)

    def run(self, argv: list[str], cwd: Path, pause_on: str | None = None, how: str = "rename", nth: int = 1,
            stand_in_library: dict[str, bytes] | None = None) -> Child:
        self.count += 1
        tag = self.scratch / f"child{self.count}"
        request = {"argv": [str(a) for a in argv], "cwd": str(cwd), "pause_on": pause_on, "how": how, "nth": nth,
                   "marker": f"{tag}.paused", "release": f"{tag}.release", "log": f"{tag}.log"}
        if stand_in_library is not None:
            request["stand_in_library"] = {path: data.decode() for path, data in stand_in_library.items()}
        pid = self.ask(request)["pid"]
        child = Child(self, pid, Path(f"{tag}.paused"), Path(f"{tag}.release"), Path(f"{tag}.log"))
        self.children.append(child)
        return child

    def close(self) -> None:
        """End the zygote; a child a failed test left paused is killed first (by its pid)."""
        for child in self.children:
            if child.code is None:
                child.signal(9)
                child.wait()
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
