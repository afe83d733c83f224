"""``tpm-models bench`` and the solver surveys: the lab's commands, which are not part of the installed package.

They live in the repository's ``benchmarks/`` folder; each command here only says what to run from a clone, and
exits with status 2 having run nothing."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from tpm_models.cli.commands import COMMANDS, add_command

LAB_COMMANDS = tuple(name for name, command in COMMANDS.items() if command.group == "lab")
"""The commands of the lab (``bench``, ``survey``, ``robust-survey``, ``conic-survey``, ``pyros-table``)."""

def where_to_run(command: str, words: list[str]) -> str:
    """What to run, from a clone, in place of ``tpm-models COMMAND WORDS``."""
    line = shlex.join(["python", "-m", "benchmarks", command, *words])
    return (f"tpm-models {command} is a benchmark of the repository, not of the installed package: from a clone of "
            f"the repository, at its root, run\n    pip install -e \".[test,bench]\"\n    {line}")


def cmd_lab(args: argparse.Namespace) -> int:
    """Say what to run in place of a lab command; run nothing."""
    words = args.argv[args.argv.index(args.command) + 1:]
    print(f"tpm-models: {where_to_run(args.command, words)}", file=sys.stderr)
    return 2


def add_parsers(sub: Any) -> None:
    """Register the lab's commands: each takes any words (the command line passes them on unread) and says where
    they run."""
    for name in LAB_COMMANDS:
        p = add_command(sub, name)
        p.add_argument("words", nargs="*", help="the command's options, for python -m benchmarks")
        p.set_defaults(func=cmd_lab)
