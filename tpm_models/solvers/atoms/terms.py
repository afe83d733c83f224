"""What the atoms' canonicalisers share: tests of a Pyomo node, a short text of it for messages, and the reader's
interface they write through."""

from __future__ import annotations

import numbers
from typing import Any, Protocol


def is_constant(e: Any) -> bool:
    """A number, or an expression without an unfixed variable."""
    return isinstance(e, numbers.Number) or not e.is_potentially_variable() or e.is_fixed()


def is_variable(e: Any) -> bool:
    """An unfixed variable."""
    return not isinstance(e, numbers.Number) and e.is_variable_type() and not e.fixed


def short(expr: Any) -> str:
    """``expr`` as text, cut at 80 characters."""
    text = str(expr)
    return text if len(text) <= 80 else text[:77] + "..."


class Rows(Protocol):
    """The rows of one cone kind a canonicaliser appends to (:class:`~tpm_models.solvers.conic_rows.RowList`)."""

    def append(self, row: tuple) -> None: ...


class Reader(Protocol):
    """What a canonicaliser reads and writes of :class:`~tpm_models.solvers.conic_shapes.ShapeReader`."""

    atoms: dict[tuple, int]
    concave: set[int]

    @property
    def nonneg(self) -> Rows: ...

    def new_col(self, name: str) -> int: ...
    def column(self, v: Any) -> int: ...
    def nonnegative(self, v: Any) -> bool: ...
    def add_block(self, cone: Any, rows: list) -> int: ...
    def quadratic(self, expr: Any, where: str) -> tuple[dict, dict, float]: ...
