"""Every ``tpm-models`` command: its name, its one-line help and its group, the module of :mod:`tpm_models.cli` that
defines its options (``add_parsers(sub)``) and runs it.

The command line imports a group only to run one of its commands (or to print that command's ``--help``):
``tpm-models --help`` lists every command from this table alone. Importing every group costs about 0.7 s (the
checks, the experiments and what they import), as much again as ``import tpm_models``.
A group adds each of its commands with :func:`add_command`, so the help is written here once.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Command:
    """A command's group (a module name under ``tpm_models.cli``) and its one-line help."""

    group: str
    help: str


COMMANDS: dict[str, Command] = {
    "solve": Command("models", "build model EQ on a data set and solve it"),
    "models": Command("models", "list the models by equation number"),
    "solvers": Command("models", "list the solver backends"),
    "check": Command("checks", "run every tie between the formulations"),
    "verify": Command("verify", "verify a registered robust counterpart against its semi-infinite model "
                                "(Theorem 1)"),
    "robustify": Command("robustify", "derive the robust counterpart of a model (conic duality), write it, "
                                      "optionally verify it"),
    "export": Command("export", "build model EQ on a data set and write it as .lp/.mps/.nl/.gms/.cbf/.ptf"),
    "export-library": Command("export", "regenerate the formulations/ instance library and its manifest"),
    "plot": Command("plots", "draw a figure (Figure 1, Iris regions, Table 3) as PNG and SVG"),
    "table3": Command("experiments", "the experiments of Section 5 (Table 3)"),
    "robust-table": Command("experiments", "robust vs deterministic, clean and adversarial test accuracy"),
    "robust-kernel-table": Command("experiments", "robust kernel model (23K) vs (19), clean and attacked "
                                                  "(certified / searched) accuracy"),
    "reproduce": Command("experiments", "the main job: every tie (check), then Table 3 (quick by default)"),
    "bench": Command("lab", "the benchmarks: in the repository's benchmarks/ folder (says what to run)"),
    "survey": Command("lab", "the QP solver survey: in the repository's benchmarks/ folder (says what to run)"),
    "robust-survey": Command("lab", "the robust solver survey: in benchmarks/ (says what to run)"),
    "conic-survey": Command("lab", "(23) against the cvxpy reference: in benchmarks/ (says what to run)"),
    "pyros-table": Command("lab", "(22) by PyROS: in benchmarks/ (says what to run)"),
}
"""Command name -> :class:`Command`, in the order of ``tpm-models --help`` (a group's commands together)."""

COMMAND_GROUPS = tuple(dict.fromkeys(c.group for c in COMMANDS.values()))
"""The groups, in the order of ``tpm-models --help``."""


def add_command(sub: Any, name: str) -> argparse.ArgumentParser:
    """The sub-parser of command ``name`` with its help from :data:`COMMANDS`, added to ``sub`` (the sub-parsers
    action of ``tpm-models``): what a group's ``add_parsers`` calls instead of ``sub.add_parser``."""
    return sub.add_parser(name, help=COMMANDS[name].help)
