"""A model evaluated at its loaded point: the violation of one row, and whether every active row has a value there
(each distinct node of the rows linear in nodes evaluated once)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyomo.core as pyo

from tpm_models.certify.reading import real_value
from tpm_models.solvers.program import Program
from tpm_models.solvers.variables import values_array


def row_violation(con: Any) -> float:
    """The violation of one constraint at the loaded point by Pyomo's evaluation of its body (absolute, 0 when it
    holds; ``inf`` where the body has no finite real value)."""
    body = real_value(con.body)
    if body is None or not math.isfinite(body):
        return math.inf
    worst = 0.0
    if con.lower is not None:
        worst = max(worst, pyo.value(con.lower) - body)
    if con.upper is not None:
        worst = max(worst, body - pyo.value(con.upper))
    return float(worst)


def _finite(node: Any) -> bool:
    """``node`` has a finite real value at the loaded point."""
    value = real_value(node)
    return value is not None and math.isfinite(value)


def model_evaluates(model: pyo.ConcreteModel, program: Program | None = None) -> bool:
    """Whether every active row of ``model`` has a finite value at the loaded point: a linear row when the variables
    are finite, a row linear in nodes when each distinct node is (evaluated once, in the rows' order), any other row
    by Pyomo's evaluation. ``program``: the solve's reading of ``model``."""
    program = Program(model) if program is None else program
    if not np.isfinite(values_array(program.free)).all():
        return False
    rows, atom_rows = program.rows, program.atom_rows
    nodes = {id(block.node): block.node for block in rows.atom_blocks}  # a block: its node once
    try:
        for con, blocked in zip(rows.others, rows.in_blocks().tolist()):
            if blocked:
                continue
            read = atom_rows[id(con)]
            if read is None:
                nodes[id(con)] = con.body  # a row not read as linear in nodes: evaluated whole
            else:
                for _, node in read[3]:
                    nodes.setdefault(id(node), node)
        return all(_finite(node) for node in nodes.values())
    except (ArithmeticError, ValueError, TypeError):
        return False
