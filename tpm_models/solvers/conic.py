"""A Pyomo model as a conic program in Clarabel's standard form (no solving here): :func:`conic_form`.

The standard form, its cones and the reading of the duals: :mod:`tpm_models.solvers.cones`; how each row and the
objective are recognised as cones: :mod:`tpm_models.solvers.conic_shapes`. Their names (``Cone``, ``ConicForm``,
``DualMap``, ``RowDuals``, ``NotConicError``, ``APEX_TOL``) are importable from here too.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp

from tpm_models.certify.tolerances import APEX_TOL, PSD_TOL
from tpm_models.solvers.cones import Cone, ConeKind, ConicForm, DualMap, NotConicError, RowDuals
from tpm_models.solvers.conic_rows import assemble
from tpm_models.solvers.conic_shapes import ShapeReader
from tpm_models.solvers.program import Program

__all__ = ["APEX_TOL", "PSD_TOL", "Cone", "ConicForm", "DualMap", "NotConicError", "RowDuals", "ShapeReader",
           "conic_form", "conic_program", "why_not_conic"]


def conic_form(model: pyo.ConcreteModel, program: Program | None = None, batched: bool = True) -> ConicForm:
    """``model`` in Clarabel's standard form (module docstring); :class:`NotConicError` if a row
    or the objective is not one of the recognised shapes. ``program``: the solve's reading of ``model`` (a fresh one if
    not given). ``batched``: the linear rows and the blocks of rows linear in one node are added as chunks of arrays;
    ``False`` adds every row by itself, one dictionary and one :class:`DualMap` a row (the same form: the reference of
    ``tests/solvers/test_conic_rows.py``)."""
    bld = ShapeReader(Program(model) if program is None else program, batched)
    sense, quad, lin, q0 = bld.objective()
    if batched:  # the rows not read as linear in model order, the linear rows between them as chunks
        others, positions = bld.linear.others, bld.linear.other_position.tolist()
        blocks = {b.start: b for b in bld.linear.atom_blocks}
        done, j = 0, 0
        while j < len(others):
            at = positions[j]
            bld.linear_rows(done, at - j)  # at - j: the linear rows before the j-th other row
            done = at - j
            block = blocks.get(j)
            if block is not None and bld.atom_block(block):  # its rows are consecutive in the model: no linear row
                j += len(block.constraints)                    # between them
                continue
            bld.constraint(others[j], linear=False)  # not a linear row: others and the linear rows are disjoint
            j += 1
        bld.linear_rows(done, len(bld.linear.constraints))
    else:
        for con in bld.model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
            bld.constraint(con)
    bld.bounds()
    n = bld.n + len(bld.aux_names)

    # rows in cone order: zero, nonneg, then the soc / pow blocks
    cones = []
    if len(bld.zero):
        cones.append(Cone(ConeKind.ZERO, len(bld.zero)))
    if len(bld.nonneg):
        cones.append(Cone(ConeKind.NONNEG, len(bld.nonneg)))
    block_start = []
    start = len(bld.zero) + len(bld.nonneg)
    for cone, block in bld.blocks:
        block_start.append(start)
        cones.append(cone)
        start += len(block)
    offset = {"zero": 0, "nonneg": len(bld.zero)}
    duals: dict[int, DualMap] = {}
    for dual, kind, local in bld.pending:
        if kind == "block":
            dual.cone_start = block_start[cast(int, dual.cone_start)]  # a block's dual: its block's index
        else:
            dual.rows += [(offset[kind] + r, f) for r, f in local]
        duals[id(dual)] = dual
    row_duals = []
    if bld.row_duals:
        row_duals.append(RowDuals(bld.linear.constraints, np.concatenate([o for _, o, _, _ in bld.row_duals]),
                                  np.concatenate([offset[kind] + r for kind, _, r, _ in bld.row_duals]),
                                  np.concatenate([f for _, _, _, f in bld.row_duals])))
    if bld.atom_duals[0]:
        cons, at, factor = bld.atom_duals
        row_duals.append(RowDuals(cons, np.arange(len(cons), dtype=np.int64),
                                  offset["nonneg"] + np.asarray(at, dtype=np.int64), np.asarray(factor, dtype=float)))
    A, b = assemble([bld.zero, bld.nonneg] + [block for _, block in bld.blocks], bld.linear.M, n)

    q = np.zeros(n)
    for c, a in lin.items():
        q[c] += sense * a
    pr, pc, pd = [], [], []
    for (i, j), a in quad.items():  # 1/2 x'Px: P_ii = 2a, P_ij = a (upper triangle)
        pr.append(i)
        pc.append(j)
        pd.append(sense * (2.0 * a if i == j else a))
    P = sp.csc_matrix((pd, (pr, pc)), shape=(n, n))
    if any(a < 0 or i != j for (i, j), a in quad.items()):  # else a nonnegative diagonal: convex
        cols = sorted({c for k in quad for c in k})
        sub = P[cols, :][:, cols].toarray()
        lam = np.linalg.eigvalsh(sub + np.triu(sub, 1).T)
        if lam.min() < -PSD_TOL * max(1.0, float(np.abs(lam).max())):
            raise NotConicError(f"the objective's quadratic part is not convex (eigenvalue {lam.min():.3g})")
    return ConicForm(bld.variables, len(bld.aux_names), P, q, sense * q0, sense, A, b, cones,
                     list(duals.values()), bld.aux_names, row_duals)


def conic_program(program: Program) -> ConicForm:
    """The conic form of ``program``'s model (:func:`conic_form`), built once per program and kept on it
    (``program.conic``); :class:`NotConicError`, also kept (``program.not_conic``), when it has none."""
    if program.not_conic is not None:
        raise NotConicError(program.not_conic)
    if program.conic is None:
        try:
            program.conic = conic_form(program.model, program)
        except NotConicError as exc:
            program.not_conic = str(exc)
            raise
    return cast(ConicForm, program.conic)  # Program.conic: typed object there (no import of cones: a cycle)


def why_not_conic(model: pyo.ConcreteModel, program: Program | None = None) -> str | None:
    """``None`` if :func:`conic_form` maps ``model``, else the reason it cannot (``program``: the solve's reading of
    ``model``, whose conic form, if built, is not built again)."""
    try:
        conic_program(Program(model) if program is None else program)
    except NotConicError as exc:
        return str(exc)
    return None
