"""What the atoms' canonicalisers share: tests of a Pyomo node, a short text of it for messages, and the reader's
interface they write through."""

from __future__ import annotations

import numbers
from typing import Protocol


def is_constant(e) -> bool:
    """A number, or an expression without an unfixed variable."""
    return isinstance(e, numbers.Number) or not e.is_potentially_variable() or e.is_fixed()


def is_variable(e) -> bool:
    """An unfixed variable."""
    return not isinstance(e, numbers.Number) and e.is_variable_type() and not e.fixed


def short(expr) -> str:
    """``expr`` as text, cut at 80 characters."""
    text = str(expr)
    return text if len(text) <= 80 else text[:77] + "..."


class Reader(Protocol):
    """What a canonicaliser reads and writes of :class:`~tpm_models.solvers.conic_shapes.ShapeReader`."""

    atoms: dict[tuple, int]
    nonneg: object
    concave: set[int]

    def new_col(self, name: str) -> int: ...
    def column(self, v) -> int: ...
    def nonnegative(self, v) -> bool: ...
    def add_block(self, cone, rows: list) -> int: ...
    def quadratic(self, expr, where: str) -> tuple[dict, dict, float]: ...
