"""The ``tpm-models`` command line: the only place that parses arguments.

One module per command group, each with ``add_parsers(sub)``: :mod:`.models` (solve, models,
solvers), :mod:`.checks` (check), :mod:`.verify`, :mod:`.robustify`, :mod:`.export` (export, export-library),
:mod:`.plots` (plot), :mod:`.experiments` (table3, reproduce, robust-table, robust-kernel-table), :mod:`.lab`
(bench and the surveys: where to run them from a clone); every command's name, group and help in
:mod:`.commands` (a group is imported only to run one of its commands); shared options in :mod:`.options`;
:func:`main` in :mod:`.main`.
"""

from tpm_models.cli.main import main, parser

__all__ = ["main", "parser"]
