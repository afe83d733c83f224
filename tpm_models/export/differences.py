"""The difference between two texts of one model file, blind to the last digits a CPU changes
(:func:`text_difference`)."""

from __future__ import annotations

import re

COEFFICIENT_RTOL = 1e-12
"""Relative tolerance of :func:`text_difference` on the numbers of a model file.

The coefficients are sums of products (Gram and kernel entries, ``X_{-c} e``, ``nu/m`` terms).
numpy's OpenBLAS picks its kernel per CPU (its ``DYNAMIC_ARCH`` build) and its SIMD ``exp`` per
instruction set, so the same sum comes out in another order on another CPU and differs in its
last digits, e.g. ``-0.952249491064367`` against ``-0.9522494910643668``. Every coefficient of the
library is a sum of at most n = 13 nonnegative terms (features min-max scaled to [0, 1], kernels
with nonnegative values), a fixed multiple of one, or the ``exp`` of one: no cancellation, so
its rounding error is relative to itself, at most ~n * 2**-52 ~ 3e-15. 1e-12 leaves a factor 300
of room and still catches any real change of a coefficient (the smallest a model change makes is
the ``nu/m`` of one point, ~1e-3 relative)."""


_NUMBER = re.compile(r"(?:(?<=^n)|(?<![\w.]))[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])", re.M)
"""A number standing alone in a model file: not part of a name (``w(1)``'s 1 is compared as a
number, which is exact for integers), with the ``n`` prefix of an ``.nl`` constant allowed."""


def text_difference(committed: bytes, fresh: bytes, rtol: float = COEFFICIENT_RTOL,
                    statements: bool = False) -> str | None:
    """The first difference between two texts of one model file, or ``None`` when they are equal.

    Everything but the numbers (names and their order, the sparsity pattern, senses, the
    writer's layout, line by line) must be equal to the character; the numbers of each line
    must satisfy ``|a - b| <= rtol * max(|a|, |b|, S)``, with ``S`` the largest magnitude on that
    line of the fresh text (a row's largest term where a writer puts a row on one line).
    :data:`COEFFICIENT_RTOL` says why a byte-for-byte comparison can only pass on the CPU that
    wrote the file.

    ``statements=True`` is for a writer that wraps long rows by the width of their number strings
    (Pyomo's GAMS writer): a last digit that differs between CPUs moves a line break there. The
    texts are then compared statement by statement (``;`` ends a GAMS statement), token by token,
    with ``S`` the largest magnitude of the statement: the tokens, names and their order are still
    equal to the character, only where a line breaks is free.
    """
    if committed == fresh:
        return None
    if statements:
        return _statement_difference(committed.decode("utf-8"), fresh.decode("utf-8"), rtol)
    old_lines, new_lines = committed.decode("utf-8").split("\n"), fresh.decode("utf-8").split("\n")
    if len(old_lines) != len(new_lines):
        return f"{len(old_lines)} lines, a fresh export has {len(new_lines)}"
    for k, (old, new) in enumerate(zip(old_lines, new_lines), start=1):
        if old == new:
            continue
        if _NUMBER.sub("#", old) != _NUMBER.sub("#", new):
            return f"line {k}: {old[:80]!r} is {new[:80]!r} in a fresh export"
        pairs = [(float(a), float(b), a, b) for a, b in zip(_NUMBER.findall(old), _NUMBER.findall(new))]
        scale = max(abs(b) for _, b, _, _ in pairs)
        for a, b, a_text, b_text in pairs:
            if a == b or abs(a - b) <= rtol * max(abs(a), abs(b), scale):
                continue
            return (f"line {k}: {a_text} is {b_text} in a fresh export "
                    f"(relative difference {abs(a - b) / max(abs(a), abs(b), scale):.1e} > {rtol:g})")
    return None


def _statement_difference(old: str, new: str, rtol: float) -> str | None:
    """:func:`text_difference` of two texts statement by statement, blind to where lines break."""
    old_statements, new_statements = old.split(";"), new.split(";")
    if len(old_statements) != len(new_statements):
        return f"{len(old_statements)} statements, a fresh export has {len(new_statements)}"
    for k, (a_statement, b_statement) in enumerate(zip(old_statements, new_statements), start=1):
        if a_statement == b_statement:
            continue
        if _NUMBER.sub("#", a_statement).split() != _NUMBER.sub("#", b_statement).split():
            return f"statement {k}: {' '.join(a_statement.split())[:80]!r} differs from a fresh export"
        pairs = [(float(a), float(b), a, b) for a, b in zip(_NUMBER.findall(a_statement),
                                                            _NUMBER.findall(b_statement))]
        scale = max(abs(b) for _, b, _, _ in pairs)
        for a, b, a_text, b_text in pairs:
            if a != b and abs(a - b) > rtol * max(abs(a), abs(b), scale):
                return (f"statement {k}: {a_text} is {b_text} in a fresh export "
                        f"(relative difference {abs(a - b) / max(abs(a), abs(b), scale):.1e} > {rtol:g})")
    return None
