"""What the library says while it works: the ``tpm_models`` logger and the progress bars of its long jobs.

* :data:`LOGGER` (``logging.getLogger("tpm_models")``): every message of the library (a module's own logger is a
  child, ``tpm_models.<module>``); the library configures no handler. The command line sets its level: warnings by
  default, ``-v`` info (what a job is doing), ``-vv`` debug (every step), a command's ``--quiet`` errors only.
* :func:`progress_bar`: a tqdm bar on standard error with the count done, the rate and the time left, for a job of
  known length (``check``'s groups of ties, Table 3's splits, the robust tables' tasks). It is off when standard
  error is not a terminal (a log file, a pipe, a test's capture) or when the caller asks (``--quiet``), and appears
  only after :data:`BAR_DELAY` seconds, so that a short job draws nothing. The time left is the mean time per step
  so far times the steps left (``smoothing=0``): a first step that includes the workers' start-up weighs as one
  step among all of them, not as the rate.
"""

from __future__ import annotations

import logging
from typing import IO

from tqdm import tqdm

LOGGER = logging.getLogger("tpm_models")
"""The library's logger; modules log through children of it (``logging.getLogger(__name__)``)."""

BAR_DELAY = 1.0
"""Seconds before a bar is drawn: a job shorter than this draws nothing."""


def progress_bar(total: int | None, label: str, unit: str = "step", enabled: bool = True,
                 stream: IO[str] | None = None) -> tqdm:
    """A progress bar of ``total`` steps (``None``: an open count, no time left) titled ``label`` on ``stream``
    (default standard error): off when
    ``enabled`` is false or the stream is not a terminal. ``bar.update()`` after each step, ``bar.close()`` at the
    end (or use it as a context manager)."""
    return tqdm(total=total, desc=label, unit=unit, file=stream, disable=None if enabled else True,
                smoothing=0, delay=BAR_DELAY, dynamic_ncols=True, leave=False)
