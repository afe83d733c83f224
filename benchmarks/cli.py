"""``python -m benchmarks COMMAND``: the lab's commands (:data:`benchmarks.HELP`), its parser and :func:`main`."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from benchmarks import cli_bench, cli_surveys
from tpm_models.cli.main import logging_configured, silence_optional_solver_warnings
from tpm_models.lazy import MissingExtraError
from tpm_models.solvers.common import SolverUnavailableError


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m benchmarks``."""
    p = argparse.ArgumentParser(prog="python -m benchmarks",
                                description="The lab of tpm-models: benchmarks and solver surveys.")
    p.add_argument("-v", "--verbose", action="count", default=0, help="-v: info, -vv: debug (tpm_models.cli.main)")
    sub = p.add_subparsers(dest="command", required=True)
    cli_bench.add_parsers(sub)
    cli_surveys.add_parsers(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one lab command on ``argv`` (default ``sys.argv[1:]``); an error is one line on stderr."""
    silence_optional_solver_warnings()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser().parse_args(argv)
    args.command_line = shlex.join(["python", "-m", "benchmarks", *argv])
    try:
        with logging_configured(args.verbose, getattr(args, "quiet", False)):
            return args.func(args)
    except (ValueError, SolverUnavailableError, MissingExtraError) as exc:
        print(f"python -m benchmarks: error: {exc}", file=sys.stderr)
        return 2
