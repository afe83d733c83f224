"""Records of the linear rows a builder writes from arrays, so that a reader takes a whole block in one numpy pass.

A builder that writes a block of rows from arrays (the margin rows :math:`{x^i}^\\top w + \\theta + \\xi_i \\ge 0`
of (2), (3), (10), (11), (15); :math:`{x^i}^\\top w + \\theta - \\varepsilon_i\\|w\\|_{p'} + \\xi_i \\ge 0` of
(23)-(29) where the norm is linear) knows each row as the same numbers it wrote, and records them with
:func:`record_rows` after the component is built:

.. math::
    \\text{lower}_k \\le \\sum_{t \\in \\text{row } k} a_t\\, v_{\\text{slot}_t} \\le \\text{upper}_k ,
    \\qquad a_t = \\text{coefs}_t \\text{ or } a_t = \\text{factor} \\cdot \\text{value}(\\text{param}),

in CSR form over a list of variables (``indptr``, ``slots``, ``coefs``, the terms in the order they are written), a
term whose coefficient is a mutable ``Param`` (:math:`-\\varepsilon_i`) being named by its position, its parameter
and its factor, so that its value is read when the rows are read, never cached.

A record is only a promise of the builder about the rows *as built*. :meth:`RowBlock.read` keeps it only when it
still holds for the model as it is now: the rows are the ones recorded, in order, active, each holding the very
relational expression it was built with (``con.set_value`` replaces it, and Pyomo's expressions are immutable; rows
written on demand, :mod:`tpm_models.models.lazy_rows`, are not made to be checked), the
named expressions it reads through unchanged, every variable still a column (not fixed, not deleted), and every
parameter a number. Anything else returns ``None`` and the reader (:func:`tpm_models.solvers.rows.read_rows`) reads
those rows by walking their expressions, as it reads every row nobody recorded. The records live on the model
(:func:`row_blocks`), so they follow it through ``clone()`` (the clone's rows, expressions and variables in them)
and are checked again there.

``tests/solvers/test_bulk_rows.py`` checks, on every registered builder and after each kind of user change, that the
rows read from the records are exactly the rows read by the walk.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyomo.core as pyo
from pyomo.core.base.param import ParamData

from tpm_models.models.lazy_rows import LazyRows, is_as_built

ATTRIBUTE = "tpm_row_blocks"
"""The model's attribute holding its records (a list of :class:`RowBlock`; read it through :func:`row_blocks`)."""

_EXPR = operator.attrgetter("expr")
_ACTIVE = operator.attrgetter("active")
_NUMBER_TYPES = frozenset((float, int))
_STORED = operator.attrgetter("_value")


def param_values(params: Sequence) -> list:
    """The current values of the mutable parameters ``params`` (``p.value`` of each), read in one pass: the value a
    ``ParamData`` stores (``_value``, what its ``value`` returns once set) for a list of ``ParamData`` only, else
    ``p.value`` one at a time (``value`` is two Python calls a parameter: 10^5 of them are (23)-(29)'s eps_i). A value
    that is not a number (``None``, unset, an expression) is returned as stored, for the caller to refuse."""
    if set(map(type, params)) <= {ParamData}:
        return list(map(_STORED, params))
    return [p.value for p in params]


@dataclass(eq=False)
class RowBlock:
    """The rows ``rows[k]``: ``lower[k] <= sum_t coef_t * variables[slots[t]] <= upper[k]``, ``t`` in
    ``indptr[k]:indptr[k+1]`` (``-inf``/``inf`` for a missing side, constants already moved to the sides), with
    ``coef_t = param_factor[q] * params[param_of[q]].value`` at ``t = param_at[q]`` and ``coefs[t]`` elsewhere."""

    rows: list
    """The constraint data objects, in the order the model iterates them."""
    exprs: list | None
    """Each row's relational expression as built (``con.expr``), or ``None`` for rows written on demand
    (:mod:`tpm_models.models.lazy_rows`): their expressions are made when read, and
    :func:`~tpm_models.models.lazy_rows.is_as_built` tells that none was given another one."""
    variables: list
    """The block's columns (Pyomo variables); ``slots`` index this list."""
    indptr: np.ndarray
    slots: np.ndarray
    coefs: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    equality: bool
    params: list
    """Mutable parameters whose current value (times ``param_factor``) is a term's coefficient, each once."""
    param_at: np.ndarray
    param_of: np.ndarray
    param_factor: np.ndarray
    named: list
    """``(named expression, its expression as built)`` for each named expression the rows read through."""
    atom: object = None
    """A named expression each row holds once as a term ``atom_factor * params[atom_param_of[k]].value * atom.expr``
    beside its linear terms ((23)'s margin rows at p = 2: ``-eps_i * norm_w``), or ``None``: the rows are linear."""
    atom_param_of: np.ndarray | None = None
    atom_factor: float = 1.0

    def as_built(self) -> bool:
        """True while every row holds the expression it was built with (made on demand or not yet made)."""
        if self.exprs is None:
            return is_as_built(self.rows)
        return all(map(operator.is_, map(_EXPR, self.rows), self.exprs))

    def read(self, rows: Sequence, column: Mapping[int, int]) -> tuple[np.ndarray, np.ndarray, list | None] | None:
        """``(columns, coefficients, atom coefficients)`` of every linear term (CSR order, ``indptr``) for ``rows``, the
        model's active rows at the block's place now, with columns by ``column[id(var)]``, and each row's coefficient
        of :attr:`atom` (``None`` without one); ``None`` unless the record still holds (the same rows, active, with
        their expressions as built, the named expressions unchanged, every variable a column, every parameter a
        number)."""
        if len(rows) != len(self.rows) or not all(map(operator.is_, rows, self.rows)):
            return None
        if not all(map(_ACTIVE, rows)) or not self.as_built():
            return None
        if not all(e.expr is built for e, built in self.named):
            return None
        try:
            cols = np.array([column[id(v)] for v in self.variables], dtype=np.int64)
        except KeyError:  # a fixed or deleted variable: not a column
            return None
        coefs, atoms = self.coefs, None
        if self.params:
            values = param_values(self.params)
            if not set(map(type, values)) <= _NUMBER_TYPES:  # None, unset, an expression...: the walk decides
                return None
            numbers = np.array(values, dtype=float)
            if len(self.param_at):
                coefs = coefs.copy()
                coefs[self.param_at] = self.param_factor * numbers[self.param_of]
            if self.atom is not None:
                atoms = (self.atom_factor * numbers[self.atom_param_of]).tolist()
        return cols[self.slots], coefs, atoms


Indices = Sequence[int] | np.ndarray
"""Positions given as a sequence or an array of integers."""


def record_rows(component: pyo.Constraint, variables: list, indptr: Indices, slots: Indices,
                coefs: Sequence[float] | np.ndarray, lower: float | Sequence[float] | np.ndarray,
                upper: float | Sequence[float] | np.ndarray, *, equality: bool = False, params: Sequence = (),
                param_at: Indices = (), param_of: Indices = (), param_factor: Sequence[float] | np.ndarray = (),
                named: Sequence = (), atom: object = None, atom_param_of: Indices = (),
                atom_factor: float = 1.0) -> RowBlock:
    """Record the rows of the built constraint ``component`` (every row it holds, in its order) as the arrays they were
    written from (:class:`RowBlock`; ``lower``, ``upper``: one number for every row, or one per row) on the model that
    holds it. The caller promises that the arrays are its rows' terms, in the order written (an ``atom`` term, a
    named expression that is also in ``named``, where the walk meets it among them), that every coefficient that can
    change after the build (a mutable ``Param``) is named in ``params``, and that the sides are numbers, not
    parameters (they are kept as recorded)."""
    rows = list(component.values())
    indptr = np.asarray(indptr, dtype=np.int64)
    slots = np.asarray(slots, dtype=np.int64 if len(variables) > np.iinfo(np.int32).max else np.int32)
    coefs = np.asarray(coefs, dtype=float)
    k = len(rows)
    if indptr.shape != (k + 1,) or indptr[0] != 0 or indptr[-1] != len(slots) or len(coefs) != len(slots):
        raise ValueError(f"the record of {component.name} does not fit its {k} rows")
    if len(slots) and (slots.min() < 0 or slots.max() >= len(variables)):
        raise ValueError(f"the record of {component.name} names a variable outside its list")
    param_at, param_of = np.asarray(param_at, dtype=np.int64), np.asarray(param_of, dtype=np.int64)
    if len(param_of) != len(param_at) or len(param_factor) != len(param_at) or \
            (len(param_of) and (param_of.min() < 0 or param_of.max() >= len(params))):
        raise ValueError(f"the record of {component.name} does not fit its {len(params)} parameters")
    atom_rows = None
    if atom is not None:
        atom_rows = np.asarray(atom_param_of, dtype=np.int64)
        if atom_rows.shape != (k,) or all(e is not atom for e in named) or \
                (k and (atom_rows.min() < 0 or atom_rows.max() >= len(params))):
            raise ValueError(f"the record of {component.name}: its atom needs one parameter a row and to be named")
    exprs = None if isinstance(component, LazyRows) else [r.expr for r in rows]  # not made to be recorded
    block = RowBlock(rows, exprs, list(variables), indptr, slots, coefs,
                     np.broadcast_to(np.asarray(lower, dtype=float), (k,)).copy(),
                     np.broadcast_to(np.asarray(upper, dtype=float), (k,)).copy(), bool(equality), list(params),
                     param_at, param_of, np.asarray(param_factor, dtype=float), [(e, e.expr) for e in named], atom,
                     atom_rows, float(atom_factor))
    model = component.model()
    blocks = getattr(model, ATTRIBUTE, None)
    if blocks is None:
        blocks = []
        setattr(model, ATTRIBUTE, blocks)
    blocks.append(block)
    return block


def row_blocks(model: pyo.Block) -> list[RowBlock]:
    """The records of the model that holds ``model`` (a model or one of its blocks), in the order recorded."""
    return getattr(model.model(), ATTRIBUTE, None) or []


def discard_replaced(model: pyo.Block) -> int:
    """Drop the records of ``model`` that can never hold again: a row of the block deleted from its component or given
    another expression (``set_value``, as :func:`tpm_models.models.counterpart.robust_counterpart` does to the rows it
    makes robust), so that their arrays are not kept for nothing (keeping one would only cost memory: a record is
    checked at every read). A deactivated row is kept (it may be activated again). Returns how many were dropped."""
    blocks = row_blocks(model)
    # parent_component() None: the row was deleted from its component
    keep = [b for b in blocks if b.as_built() and all(r.parent_component() is not None for r in b.rows)]
    dropped = len(blocks) - len(keep)
    blocks[:] = keep
    return dropped
