"""Rows written on demand: an indexed ``Constraint`` whose row expressions are made the first time they are read.

The margin rows of (2), (3), (10), (11), (15) and (23)-(29) are one row per point,
:math:`{x^i}^\\top w + \\theta - \\varepsilon_i\\|w\\|_{p'} + \\xi_i \\ge 0`, about :math:`n + 3` Pyomo objects each
(a monomial per feature). At :math:`10^6` points they were most of the model's memory (1.0-1.2 GB) and most of its
build (2-3.5 s), while the solve path reads them from their records in one numpy pass
(:mod:`tpm_models.models.row_blocks`) and never looks at them one by one.

:class:`LazyRows` is a ``Constraint`` (its ``ctype``; ``component_data_objects(Constraint)``, the writers, ``pprint``
and ``clone()`` see it as any other) whose row ``i`` is a :class:`LazyRowData`, and which holds a *row maker*: a
callable object with the numbers and the model's objects the rows are written from. The expression of row ``i`` is
made by ``maker(i)`` the first time anything reads it (``expr``, ``body``, ``lower``, ``upper``,
``to_bounded_expression``, its value) and kept from then on. It is the very expression the builder would have
written at once, node for node (``tests/models/test_builders.py`` compares them with the paper's rows written with
Pyomo's operators). This is the idea of Pyomo's own templatized constraints (``TemplateConstraintData``, which
regenerate a row from its rule) and of ``MatrixConstraint`` (rows from arrays), without their limits: the rows keep
the model's index, mutable parameters (``eps[i]``) and nonlinear terms, and any row can be given another expression.

``set_value`` (a user's own row, :func:`tpm_models.models.counterpart.robust_counterpart`) turns the row into an
ordinary ``ConstraintData`` holding that expression, so :func:`is_as_built` tells a row the builder wrote (made or
not yet) from one given another expression since.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from pyomo.core.base.constraint import ConstraintData, IndexedConstraint


class LazyRowData(ConstraintData):
    """One row of a :class:`LazyRows`: its expression is ``maker(position)`` of its component, made when first read."""

    __slots__ = ()  # ConstraintData's layout, so that set_value can make the row an ordinary ConstraintData

    def __init__(self, component: LazyRows, index: int) -> None:
        # ConstraintData's own initialisation, inlined (as Pyomo's TemplateConstraintData does): no expression yet
        # the four attributes are in the __slots__ of Pyomo's ConstraintData, which mypy reads as Any (no stubs), so it
        # sees this class's empty __slots__ only
        self._component = weakref.ref(component)  # type: ignore[misc]
        self._index = index  # type: ignore[misc]
        self._active = True  # type: ignore[misc]
        self._expr = None  # type: ignore[misc]

    @property
    def expr(self):
        """The row's relational expression (made by the component's row maker the first time it is read)."""
        if self._expr is None:
            self._expr = self.parent_component().maker(self._index)  # type: ignore[misc]  # a slot of ConstraintData
        return self._expr

    @property
    def made(self) -> bool:
        """Whether the row's expression has been made (read once) yet."""
        return self._expr is not None

    def to_bounded_expression(self, evaluate_bounds=False):
        self.expr  # noqa: B018 -- made before ConstraintData reads it (body, lower, upper, lb, ub, the value)
        return super().to_bounded_expression(evaluate_bounds)

    def set_value(self, expr: object) -> None:
        """Give the row another expression: it becomes an ordinary ``ConstraintData`` (not as built). An expression
        ``ConstraintData.set_value`` refuses leaves the row as it was (its expression still made on demand)."""
        ConstraintData.set_value(self, expr)
        self.__class__ = ConstraintData


class LazyRows(IndexedConstraint):
    """The rows ``self[i]``, ``i`` in ``index``, each the relational expression ``maker(i)``.

    ``maker`` must be a callable *object* (a module-level class, not a closure) holding the numbers and the Pyomo
    objects of the model the rows are written from: ``clone()`` and ``pickle`` then copy it with the model, and a
    clone's rows are made from the clone's variables and parameters."""

    _constructed: bool
    """Pyomo's flag (``IndexedComponent``): the rows are made."""

    def __init__(self, index: object, maker: Callable[[int], object], *, doc: str | None = None) -> None:
        super().__init__(index, doc=doc)
        self.maker = maker

    def construct(self, data: object = None) -> None:
        if self._constructed:
            return
        self._constructed = True
        for anonymous in self._anonymous_sets or ():  # an index given as a list: built first, as Constraint does
            anonymous.construct()
        self._data = {i: LazyRowData(self, i) for i in self.index_set()}


class RowTerms(NamedTuple):
    """A linear row as its maker writes it: ``lower <= LinearExpression([constant?] + terms) <= upper``, ``terms[t]``
    being ``variables[t]`` itself where ``coefs[t]`` is the int 1 and the monomial ``(coefs[t], variables[t])``
    elsewhere. ``coefs``, ``constant``, ``lower`` and ``upper`` are the very objects (int or float; ``None`` for a
    missing side) that the made row holds and ``to_bounded_expression(True)`` returns, so that a reader of the made
    row and a reader of these terms see the same numbers of the same types (``tests/models/test_lazy_rows.py``)."""

    lower: object
    coefs: list
    variables: list
    constant: object
    upper: object


def unmade_terms(con: object) -> RowTerms | None:
    """The :class:`RowTerms` of ``con`` when :func:`has_unmade_terms`, else ``None``; the row stays unmade, so a
    writer reads a large block of linear rows without making their expressions (:mod:`tpm_models.export.lp_text`)."""
    if not has_unmade_terms(con):
        return None
    return con.parent_component().maker.terms(con.index())  # type: ignore[attr-defined]


def has_unmade_terms(con: object) -> bool:
    """Whether ``con`` is a :class:`LazyRowData` not made yet whose maker tells its rows' terms (a method
    ``terms(i)`` returning :class:`RowTerms`): a linear row, by that contract."""
    return con.__class__ is LazyRowData and not con.made and \
        hasattr(con.parent_component().maker, "terms")


def is_as_built(rows: Sequence) -> bool:
    """True when every row of ``rows`` is a :class:`LazyRowData` (its expression made by its row maker, or not yet
    made), none given another expression since it was built."""
    return set(map(type, rows)) <= {LazyRowData}


def position(numbers: np.ndarray, i: int) -> int:
    """The position ``k`` of ``i`` in the increasing array ``numbers`` (a row maker's rows by their index: the
    points' numbers), found by bisection; a ``KeyError`` when ``i`` is not in it."""
    k = int(np.searchsorted(numbers, i))
    if k == len(numbers) or numbers[k] != i:
        raise KeyError(i)
    return k
