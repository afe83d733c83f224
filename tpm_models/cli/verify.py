"""``tpm-models verify``: a registered robust counterpart against its semi-infinite model, Theorem 1 style
(:func:`tpm_models.checks.verify.verify_model`): the paper's (23), (26)-(29) against (22), or a model a ``--plugin``
registers with ``nominal=`` and ``uncertain=``. Exit 0 verified, 1 not a counterpart, 3 could not decide (a solve
that did not end: the reason is printed), 2 bad input."""

from __future__ import annotations

import argparse
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import numpy as np

from tpm_models.checks.verify import NOT_A_COUNTERPART, UNDECIDED, VERIFIED, verify_model
from tpm_models.cli.commands import add_command
from tpm_models.cli.options import (
    add_data_options,
    add_param_option,
    class_of,
    dataset_from_args,
    model_key,
    own_parameters,
    seconds,
    typed_params,
)
from tpm_models.data import min_max_scale
from tpm_models.models.registry import model_info
from tpm_models.progress import progress_bar

EXIT_CODES = {VERIFIED: 0, NOT_A_COUNTERPART: 1, UNDECIDED: 3}
"""``tpm-models verify``'s exit code per verdict (2 is bad input, as for every command; docs/verify.md)."""


def cmd_verify(args: argparse.Namespace) -> int:
    """0 verified, 1 not a counterpart, 3 could not decide, 2 bad input."""
    data = dataset_from_args(args)
    c = class_of(data, args.class_)
    if args.eps is None:
        raise ValueError("give --eps (the radius of the uncertainty set (21))")
    info = model_info(args.model)
    params = typed_params(args.param, own_parameters(info), f"({info.key})")
    with pyros_bar(args.method == "pyros" and not args.quiet):
        v = verify_model(args.model, min_max_scale(data.X), data.y, c, args.nu, args.alpha, args.p, args.eps,
                         method=args.method, solver=args.solver, points_per_class=args.points_per_class,
                         time_limit=args.time_limit, **params)
    print(f"data       {data.name}, class {c} ({data.classes[c]}), nu={args.nu:g}, alpha={args.alpha:g}, "
          f"eps={args.eps:g}" + (f", first {args.points_per_class} points per class" if args.points_per_class else "")
          + "".join(f", {k}={_shown(x)}" for k, x in params.items()))
    print(v.table())
    return EXIT_CODES[v.verdict]


PYROS_LOGGER = "tpm_models.pyros"
"""The logger PyROS reports its progress to (:func:`tpm_models.checks.verify.pyros.pyros_logger`)."""

PYROS_ROW = re.compile(r"^\d+\*?\s")
"""An iteration's row of PyROS's progress table (``"4    -3.6602e-02  3.8306e-03 ..."``; ``*`` marks a row whose
separation was not exhaustive)."""


@contextmanager
def pyros_bar(enabled: bool, stream: IO[str] | None = None) -> Iterator[None]:
    """A progress bar of PyROS's iterations while the block runs (``enabled``: verify by PyROS, no ``--quiet``):
    the count done, the time and the rate, no time left (PyROS does not know how many iterations it needs). It is
    read from the rows of PyROS's table on :data:`PYROS_LOGGER`, which is opened to its info records for the
    count; a record below the level the logger had (its info unless ``-v``) is counted, not shown."""
    if not enabled:
        yield
        return
    logger = logging.getLogger(PYROS_LOGGER)
    level, shown_from = logger.level, logger.getEffectiveLevel()
    bar = progress_bar(None, "PyROS iterations", unit="it", stream=stream)

    def count(record: logging.LogRecord) -> bool:
        if PYROS_ROW.match(record.getMessage()):
            bar.update()
        return record.levelno >= shown_from

    logger.setLevel(min(shown_from, logging.INFO))
    logger.addFilter(count)
    try:
        yield
    finally:
        logger.removeFilter(count)
        logger.setLevel(level)
        bar.close()


def _shown(value: object) -> str:
    return f"array{list(np.shape(value))}" if isinstance(value, np.ndarray) else str(value)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """``verify``."""
    v = add_command(sub, "verify")
    v.add_argument("--model", type=model_key, required=True,
                   help="the counterpart: 23, 26, 27, 28, 29, or a model a --plugin registers with nominal= and "
                        "uncertain= (docs/verify.md)")
    v.add_argument("--dataset", default="iris", help="iris, wine or a CSV path (label column last)")
    add_data_options(v)
    v.add_argument("--class", dest="class_", default="0",
                   help="class number 0..C-1 (or a label) playing c, or positive for binary models")
    v.add_argument("--nu", type=float, required=True)
    v.add_argument("--alpha", type=float, required=True)
    v.add_argument("--p", help="norm of the uncertainty set (21): 1, 2, inf or any number >= 1 (implied for a model "
                   "that takes one p: 27-29)")
    v.add_argument("--eps", type=float, help="radius of the uncertainty set (21), >= 0")
    v.add_argument("--method", choices=("cutting-plane", "pyros"), default="cutting-plane",
                   help="how to solve the semi-infinite model")
    v.add_argument("--solver", default="default",
                   help="cutting planes: the masters' solver; pyros: default (Gurobi if installed, SCIP or our Ipopt "
                        "when its licence refuses a subproblem), gurobi, scip or ipopt")
    v.add_argument("--points-per-class", type=int, help="only the first points of every class (PyROS is slow)")
    v.add_argument("--time-limit", type=seconds, help="PyROS's time limit, seconds")
    v.add_argument("--quiet", action="store_true", help="no progress bar (PyROS's iterations)")
    add_param_option(v)
    v.set_defaults(func=cmd_verify)
