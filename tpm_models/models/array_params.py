"""Mutable parameters given one value per index at once: an indexed ``Param`` whose data are made in one pass.

The robust models hold one mutable radius :math:`\\varepsilon_i` a point (``eps[i]``, (21)): a user may change any of
them and solve again. ``Param(index, initialize=..., mutable=True)`` makes each ``ParamData`` through Pyomo's
per-index path (the index looked up in its set, the value set, then validated against the domain): about 0.9 µs a
point, 0.09 s of the build of (23)-(29) at :math:`10^5` points and 0.9 s at :math:`10^6`.

:class:`ArrayParam` is that ``Param`` (an ``IndexedParam``: its ``ctype``, mutable, ``within=Any``), whose
``ParamData`` are made in one pass from the values given, each the very object Pyomo makes: ``ParamData(component)``
with its index and value set as Pyomo's own ``Param._setitem_when_not_present`` sets them, without its test of the
value against the domain (``Any``: every value passes; the radii are checked by
:func:`~tpm_models.models.norms.check_radii`). After the build it is Pyomo's own ``Param``: ``eps[i] = 0.1`` sets
a value as before, ``clone()`` and ``pickle`` copy it (``tests/models/test_array_params.py`` compares it with
Pyomo's, item for item, and through the ``.lp`` writer). Measured (``docs/notes/bench-scale-history.md``): the build
of (28) at :math:`10^5` points 0.147 -> 0.106 s.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pyomo.core as pyo
from pyomo.core.base.param import IndexedParam, ParamData


class ArrayParam(IndexedParam):
    """``Param(index, mutable=True, within=Any)`` holding ``values[k]`` at the ``k``-th index of ``index`` (as many
    values as indices, each a number; kept as Python floats, one float object for all when they are all equal, as
    ``initialize=`` a number gives)."""

    def __init__(self, index: object, values: Sequence[float] | np.ndarray, *, doc: str | None = None) -> None:
        super().__init__(index, mutable=True, within=pyo.Any, doc=doc)
        self.values_given: Sequence[float] | np.ndarray | None = values

    def construct(self, data: object = None) -> None:
        if self._constructed:
            return
        super().construct(data)  # Pyomo's own construction (its index set, no value yet: no rule was given)
        given, self.values_given = np.asarray(self.values_given, dtype=float), None
        indices = list(self.index_set())
        if len(given) != len(indices):
            raise ValueError(f"ArrayParam {self.name}: {len(given)} values for {len(indices)} indices")
        same = len(given) and bool((given == given[0]).all())  # one float object, not one a point (24 MB at 10^6)
        values = itertools.repeat(float(given[0]), len(given)) if same else given.tolist()
        for index, value in zip(indices, values):
            made = ParamData(self)  # what Param's own path makes: ParamData(component), then its index and value
            made._index, made._value = index, value
            self._data[index] = made
