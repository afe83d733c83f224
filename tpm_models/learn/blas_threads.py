"""BLAS on one thread for the scalable path's products, at the cost of two C calls.

The products of :mod:`tpm_models.learn.expansion` (a working set's kernel rows, one kernel block) are too small
for BLAS threads to pay, and once another process holds a core, two OpenBLAS threads make them several times
slower (at 1,000 points with the Gaussian kernel: a 30-40 ms fit instead of 8-15 ms, load about 1.5, the git log of
``docs/notes/bench-estimators.md``). ``threadpoolctl`` limits the threads, but it finds them by reading every library
the process has loaded (25-40 ms once tpm_models is imported, as long as such a fit).

:func:`one_blas_thread` therefore goes straight to OpenBLAS when numpy's BLAS is OpenBLAS (numpy's build
configuration says so), the only BLAS these products use. The library is found once per process
(:func:`_openblas_paths`: the wheel's ``numpy.libs`` directory listing, else ``/proc/self/maps``), and its
``openblas_get_num_threads``/``openblas_set_num_threads`` (under the prefixes and suffixes ``threadpoolctl``
knows too: ``scipy_openblas``, ``64_``) are called directly; the previous number is restored on exit. Any
other case (another BLAS, no library found, an entry point not found) falls back to ``threadpoolctl``, and the
caller decides by :func:`cheap_blas_limit` whether the limit is worth its price.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
from collections.abc import Callable, Iterator
from typing import cast

import numpy as np
from threadpoolctl import ThreadpoolController

OPENBLAS_PREFIXES = ("openblas", "scipy_openblas")
OPENBLAS_SUFFIXES = ("", "64_", "_64")
"""The names of OpenBLAS's ``<prefix>_get_num_threads<suffix>`` and ``<prefix>_set_num_threads<suffix>``
(upstream builds, the ``scipy-openblas`` wheels of numpy and scipy, 64-bit-integer builds)."""

ThreadControl = tuple[Callable[[], int], Callable[[int], None]]


def numpy_blas_is_openblas() -> bool:
    """Whether numpy was built against OpenBLAS (``numpy.show_config()``'s BLAS name)."""
    try:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
    except (AttributeError, KeyError, TypeError):
        return False
    return "openblas" in str(blas.get("name", "")).lower()


def _controls(path: str) -> ThreadControl | None:
    """``(get, set)`` of the OpenBLAS loaded from ``path`` (already loaded: ``RTLD_NOLOAD``), or None."""
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)
    except OSError:
        return None
    for prefix in OPENBLAS_PREFIXES:
        for suffix in OPENBLAS_SUFFIXES:
            get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                return get, put
    return None


def _openblas_paths() -> list[str]:
    """numpy's own OpenBLAS when numpy came as a wheel (``numpy.libs`` beside the package: one directory listing),
    else every OpenBLAS mapped into the process (``/proc/self/maps``, about 1 ms with tpm_models imported)."""
    wheel_libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    try:  # a listing, not glob's pattern (fnmatch compiles a regular expression: a third of a ms a process)
        found = sorted(os.path.join(wheel_libs, name) for name in os.listdir(wheel_libs)
                       if "openblas" in name and ".so" in name)
    except OSError:
        found = []
    if found:
        return found
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            return sorted({line.split(maxsplit=5)[-1] for line in maps.read().splitlines()
                           if "openblas" in line.rsplit("/", 1)[-1].lower()})  # address perms offset dev inode path
    except OSError:
        return []


@functools.cache
def openblas_controls() -> tuple[ThreadControl, ...] | None:
    """The thread controls of numpy's OpenBLAS (:func:`_openblas_paths`), found once per process; None when numpy's
    BLAS is not OpenBLAS or is not found loaded with an entry point we know (then :func:`one_blas_thread` uses
    ``threadpoolctl``)."""
    if not numpy_blas_is_openblas() or not hasattr(os, "RTLD_NOLOAD"):
        return None
    controls = [_controls(path) for path in _openblas_paths()]
    if not controls or any(c is None for c in controls):
        return None
    return tuple(cast(list[ThreadControl], controls))  # none is None (checked above)


def cheap_blas_limit() -> bool:
    """Whether :func:`one_blas_thread` costs microseconds (direct OpenBLAS calls), not ``threadpoolctl``'s search."""
    return openblas_controls() is not None


@functools.cache
def _threadpools() -> ThreadpoolController:
    """The process's BLAS thread pools, found once per process (``threadpoolctl`` reads every loaded library)."""
    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """A context in which every BLAS of the process runs on one thread; the previous numbers are restored on
    exit. Direct OpenBLAS calls when :func:`cheap_blas_limit`, else ``threadpoolctl``."""
    controls = openblas_controls()
    if controls is None:
        with _threadpools().limit(limits=1, user_api="blas"):
            yield
        return
    before = [get() for get, _ in controls]
    for _, put in controls:
        put(1)
    try:
        yield
    finally:
        for (_, put), n in zip(controls, before):
            put(n)
