"""The ``tpm-models`` command: the only place that parses arguments.

    tpm-models solve --model 16 --dataset iris --class 0 --nu 0.5 --alpha 1 --json
    tpm-models check --dataset iris wine
    tpm-models models
    tpm-models solvers
    tpm-models export --model 28 --dataset iris --class 0 --nu 0.3 --alpha 1 --eps 0.02 --out eq28.lp
    tpm-models verify --model 28 --dataset iris --class 0 --nu 0.3 --alpha 1 --eps 0.02 --method pyros
    tpm-models robustify --model 15 --rows margin --vars w --set box --eps 0.02 --nu 0.3 --alpha 1 --out rc.lp --verify
    tpm-models export-library                 # regenerate formulations/ (tpm_models.export.library)
    tpm-models table3 --runs 100 --jobs 2     # Section 5 (tpm_models.experiments.table3)
    tpm-models reproduce                      # check + Table 3

The benchmarks and solver surveys are the repository's ``benchmarks/`` (``python -m benchmarks``), not the package's.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import logging
import os
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from tpm_models import __version__
from tpm_models.cli.commands import COMMAND_GROUPS, COMMANDS
from tpm_models.cli.options import load_plugins
from tpm_models.experiments.run_info import command_line
from tpm_models.files import Terminated
from tpm_models.lazy import MissingExtraError
from tpm_models.solvers.common import SolverUnavailableError

if TYPE_CHECKING:  # the groups, imported by name when a command runs (parser): here for type checkers and the
    # layer test (tests/test_architecture.py) only
    from tpm_models.cli import checks, experiments, export, lab, models, plots, robustify, verify  # noqa: F401

EXIT_INTERRUPTED = 130
"""The exit code after Ctrl-C (128 + SIGINT, as a shell reports it)."""
EXIT_TERMINATED = 143
"""The exit code after a SIGTERM that came during a file's write (128 + SIGTERM, as a shell reports it); outside a
write SIGTERM ends the process at once, as by default."""
EXIT_BROKEN_PIPE = 141
"""The exit code when the reader of the output went away (``tpm-models solvers | head``): 128 + SIGPIPE, as a
shell reports a command killed by it."""


DESCRIPTION = ("Build, solve, check and export the models of \"A Robust Twin Parametric Margin Support Vector Machine "
               "for Multiclass Classification\" (De Leone, Maggioni, Spinelli), and reproduce its experiments.")
"""What ``tpm-models --help`` opens with: what the command is for, in a user's words."""
EPILOG = ("Start with 'tpm-models models' (the paper's equations) and 'tpm-models solve --model 16 --dataset iris "
          "--class 0 --nu 0.5 --alpha 1'; 'tpm-models COMMAND --help' for a command's options.")
"""What ``tpm-models --help`` ends with: where to start."""


OPTIONAL_SOLVER_WARNINGS = (
    "Deprecated in Xpress",  # Pyomo's xpress_direct calls xpress.getversion, deprecated in Xpress 9.9
    "Using the Community license",  # Xpress's LicenseWarning on every process that initialises it
)
"""The starts of the warnings optional solvers' packages raise on every use, which say nothing about the run; the
command line silences them (:func:`silence_optional_solver_warnings`)."""


def silence_optional_solver_warnings() -> None:
    """Ignore :data:`OPTIONAL_SOLVER_WARNINGS` in this process and, through ``PYTHONWARNINGS``, in the worker
    processes it starts (``--jobs``). Matched by the message's start and any category, so that no solver's package
    is imported to name its warning class."""
    for start in OPTIONAL_SOLVER_WARNINGS:
        warnings.filterwarnings("ignore", message=re.escape(start))
    given = [f for f in os.environ.get("PYTHONWARNINGS", "").split(",") if f]
    ours = [f"ignore:{start}" for start in OPTIONAL_SOLVER_WARNINGS]
    os.environ["PYTHONWARNINGS"] = ",".join(given + [f for f in ours if f not in given])


@contextlib.contextmanager
def logging_configured(verbose: int, quiet: bool = False) -> Iterator[None]:
    """The library's messages (the ``tpm_models`` logger) on stderr while a command runs: warnings by default, info
    with ``-v``, debug with ``-vv``; errors only under a command's ``--quiet`` (which also turns its progress bar
    off). Other packages' loggers (Pyomo's, the solvers') show their errors, and with ``-vv`` their info too. On
    exit the ``tpm_models`` logger's level and the root logger's level and handlers are as they were, so a command
    run in-process (``main([...])`` from Python or a test) leaves no logging set for what runs after it."""
    library, root = logging.getLogger("tpm_models"), logging.getLogger()
    level, root_level, root_handlers = library.level, root.level, list(root.handlers)
    logging.basicConfig(level=logging.INFO if verbose >= 2 else logging.ERROR,
                        format="%(levelname)s %(name)s: %(message)s")
    library.setLevel(logging.ERROR if quiet else {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG))
    try:
        yield
    finally:
        library.setLevel(level)
        for handler in [h for h in root.handlers if h not in root_handlers]:
            root.removeHandler(handler)
        root.setLevel(root_level)


def parser(commands: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``tpm-models`` argument parser: every command group adds its own sub-commands.

    ``commands``: only the groups of these commands are imported and add their options
    (:data:`tpm_models.cli.commands.COMMANDS`); every other command is listed with its help and no options, so
    ``tpm-models --help`` reads the same. ``None``: every group (the whole parser)."""
    p = argparse.ArgumentParser(prog="tpm-models", description=DESCRIPTION, epilog=EPILOG, allow_abbrev=False)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="say what the work is doing on stderr (-v: info, -vv: every step and the solvers' details)")
    p.add_argument("--plugin", action="append", default=[], metavar="MODULE_OR_FILE",
                   help="import a module or a .py file that registers models (tpm_models.register_model) "
                        "before the command runs; repeatable")
    sub = p.add_subparsers(dest="command", required=True)
    wanted = set(COMMAND_GROUPS) if commands is None else {COMMANDS[c].group for c in commands if c in COMMANDS}
    for group in COMMAND_GROUPS:
        if group in wanted:
            importlib.import_module(f"tpm_models.cli.{group}").add_parsers(sub)
        else:
            for name in (n for n, c in COMMANDS.items() if c.group == group):
                sub.add_parser(name, help=COMMANDS[name].help)
    return p


def command_of(argv: Sequence[str]) -> str | None:
    """The command named on the command line ``argv``: its first word that is neither an option nor the value of
    the global ``--plugin``, or ``None``."""
    words = iter(argv)
    for word in words:
        if word == "--plugin":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _silence_stdout() -> None:
    """Point standard output at ``os.devnull``, so that the interpreter's last flush of what could not be written
    raises no second ``BrokenPipeError`` at exit (Python's documentation, "Note on SIGPIPE")."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture): nothing is flushed to a pipe
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tpm-models`` on ``argv`` (default ``sys.argv[1:]``); every error is one line on stderr and a non-zero
    exit, never a traceback. The command line is recorded here, once, as ``args.command_line`` (the reports that
    say what produced them write it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    silence_optional_solver_warnings()
    if sys.stdout is None:  # started with standard output closed (>&-): say so once, on stderr if it is open
        _say("tpm-models: error: standard output is closed; nothing was run (give it a file: > out.txt)")
        return 1
    command = command_of(argv)
    # the whole command line is parsed (and refused, exit 2) before any plugin runs; a plugin is only the value of
    # the global --plugin (before the command), never a word elsewhere that looks like one
    whole = parser([command] if command else [])
    if command in COMMANDS and COMMANDS[command].group == "lab":  # its options are the lab's: passed on unread
        args = whole.parse_known_args(argv)[0]
    else:
        args = whole.parse_args(argv)
    args.argv = argv
    try:
        load_plugins(args.plugin)
    except ValueError as exc:
        print(f"tpm-models: error: {exc}", file=sys.stderr)
        return 2
    args.command_line = command_line(argv)
    try:
        with logging_configured(args.verbose, getattr(args, "quiet", False)):
            code = args.func(args)
        sys.stdout.flush()  # a closed pipe is found here, not in the interpreter's flush at exit
        return code
    except (ValueError, SolverUnavailableError, MissingExtraError) as exc:
        print(f"tpm-models: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C: what was measured is written (the command says where), one line
        said = f": {exc}" if str(exc) else ""
        print(f"\ntpm-models: interrupted{said}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated as exc:  # SIGTERM during a write: the file is left as it was, one line
        _say(f"\ntpm-models: {exc}")
        return EXIT_TERMINATED
    except BrokenPipeError:  # the reader stopped reading (| head): nothing is wrong, nothing to say
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except MemoryError:  # one line: what ran out, and that no file was left half-written
        _say("tpm-models: error: out of memory; every file written so far is whole and no file was left "
             "half-written (a smaller data set, or a machine or limit with more memory)")
        return 1
    except OSError as exc:  # a file that could not be read or written: say which and why, no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        kept = ("; the file was left as it was (the library writes a temporary file and renames it): free some "
                "space and run again") if exc.errno == errno.ENOSPC else ""
        _say(f"tpm-models: error: {where}{exc.strerror or exc}{kept}")
        return 1


def _say(line: str) -> None:
    """``line`` on standard error, if there is one to write to."""
    if sys.stderr is not None:
        try:
            print(line, file=sys.stderr)
        except OSError:
            pass
