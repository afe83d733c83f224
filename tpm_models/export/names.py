"""The names a ``.lp`` or ``.mps`` write checks for collisions (:func:`same_names`), made one indexed component at a
time (:func:`data_names`) as Pyomo makes them, so that two variables or rows that the file would give one symbol are
refused with both names before anything is written (:func:`tpm_models.export.writers.write`)."""

from __future__ import annotations

from collections.abc import Iterator

import pyomo.environ as pyo
from pyomo.core.base.component_namer import index_repr
from pyomo.core.base.label import alphanum_label_from_name, cpxlp_label_from_name


def data_names(model: pyo.ConcreteModel, kind: type) -> Iterator[str]:
    """The fully qualified names of ``model``'s active component data of ``kind`` (``pyo.Var`` or
    ``pyo.Constraint``), in ``component_data_objects`` order and, as it does, each datum once (a ``Reference`` yields
    the data it is the first to reach, under their own names), each name as ``ComponentData.getname(True)`` makes it,
    made from an indexed component's name and ``index_repr`` of each index (``tests/export/test_names.py``)."""
    seen: set[int] = set()
    for comp in model.component_objects(kind, active=True, descend_into=True):
        reference = comp.is_reference()
        base = comp.getname(True)
        items = comp.items() if comp.is_indexed() else [(None, comp)]
        for index, data in items:
            if id(data) in seen or not getattr(data, "active", True):
                continue
            seen.add(id(data))
            yield data.getname(True) if reference else base if index is None else base + index_repr(index)


def same_names(model: pyo.ConcreteModel, fmt: str) -> list[tuple[str, str]]:
    """Pairs of active variables or rows of ``model`` whose names become one symbol in an ``.lp`` or ``.mps`` file
    (Pyomo's labels replace the characters those formats forbid: ``a b`` and ``a_b`` are both ``a_b``)."""
    label = cpxlp_label_from_name if fmt == "lp" else alphanum_label_from_name
    seen: dict[str, str] = {}
    pairs = []
    for kind in (pyo.Var, pyo.Constraint):
        for name in data_names(model, kind):
            key = label(name)
            if key in seen and seen[key] != name:
                pairs.append((seen[key], name))
            seen.setdefault(key, name)
    return pairs
