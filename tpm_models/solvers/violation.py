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


def model_evaluates(model: pyo.ConcreteModel, program: Program | None = None) -> bool:
    """Whether every active row of ``model`` has a finite value at the loaded point: the linear rows always do
    (once the variables are finite), a row linear in nodes (:func:`atom_terms`) when each distinct node does
    (evaluated once), any other row by Pyomo's evaluation. ``program``: the solve's reading of ``model``."""
    program = Program(model) if program is None else program
    x = values_array(program.free)
    if not np.isfinite(x).all():
        return False
    rows, atom_rows = program.rows, program.atom_rows
    seen: set[int] = set()
    in_block = rows.in_blocks()
    try:
        for node in {id(block.node): block.node for block in rows.atom_blocks}.values():  # a block: its node once
            value = real_value(node)
            if value is None or not math.isfinite(value):
                return False
            seen.add(id(node))
        for con, blocked in zip(rows.others, in_block.tolist()):
            if blocked:
                continue
            read = atom_rows[id(con)]
            if read is None:
                value = real_value(con.body)
                if value is None or not math.isfinite(value):
                    return False
                continue
            for _, node in read[3]:
                if id(node) not in seen:
                    value = real_value(node)
                    if value is None or not math.isfinite(value):
                        return False
                    seen.add(id(node))
    except (ArithmeticError, ValueError, TypeError):
        return False
    return True
