"""What a solve reads of a model, read once: :func:`one_reading` keeps the readings of
:mod:`tpm_models.solvers.rows` (the rows, the objective) and :mod:`tpm_models.solvers.variables` (the variables, their
bounds) for the length of one solve, which :func:`tpm_models.solvers.dispatch.solve` wraps in it; outside, every call
reads the model afresh (a model may change between solves)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable

_READINGS: dict | None = None
"""The readings kept inside :func:`one_reading` (``None`` outside)."""


@contextlib.contextmanager
def one_reading():
    """Inside, each reading of a model is made once (:func:`remembered`): :func:`tpm_models.solvers.dispatch.solve`
    wraps one solve in it (the class, the extraction, the certificate read the same rows and variables). Outside,
    every call reads the model afresh."""
    global _READINGS
    outer = _READINGS
    _READINGS = {} if outer is None else outer
    try:
        yield
    finally:
        _READINGS = outer


def remembered(key: Hashable, make: Callable):
    """``make()``, kept under ``key`` inside :func:`one_reading` (made once there); made afresh outside."""
    if _READINGS is None:
        return make()
    if key not in _READINGS:
        _READINGS[key] = make()
    return _READINGS[key]


def forget(key: Hashable) -> bool:
    """Drop what :func:`remembered` keeps under ``key`` (it is made again if asked for), so that a large reading is
    not held while it is not needed; whether there was one."""
    return _READINGS is not None and _READINGS.pop(key, None) is not None
