"""A Pyomo model as a conic program in Clarabel's standard form (no solving here): :func:`conic_form`.

The standard form, its cones and the reading of the duals: :mod:`tpm_models.solvers.cones`; how each row and the
objective are recognised as cones: :mod:`tpm_models.solvers.conic_shapes`. Their names (``Cone``, ``ConicForm``,
``DualMap``, ``NotConicError``, ``APEX_TOL``) are importable from here too.
"""

from __future__ import annotations

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp

from tpm_models.solvers.common import PSD_TOL
from tpm_models.solvers.cones import APEX_TOL, Cone, ConicForm, DualMap, NotConicError
from tpm_models.solvers.conic_shapes import ShapeReader

__all__ = ["APEX_TOL", "PSD_TOL", "Cone", "ConicForm", "DualMap", "NotConicError", "ShapeReader", "conic_form",
           "why_not_conic"]


def conic_form(model: pyo.ConcreteModel) -> ConicForm:
    """``model`` in Clarabel's standard form (module docstring); :class:`NotConicError` if a row
    or the objective is not one of the recognised shapes."""
    bld = ShapeReader(model)
    sense, quad, lin, q0 = bld.objective()
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        bld.constraint(con)
    bld.bounds()
    n = bld.n + len(bld.aux_names)

    # rows in cone order: zero, nonneg, then the soc / pow blocks
    rows, cones = [], []
    if bld.zero:
        cones.append(Cone("zero", len(bld.zero)))
        rows += bld.zero
    if bld.nonneg:
        cones.append(Cone("nonneg", len(bld.nonneg)))
        rows += bld.nonneg
    block_start = []
    for cone, block in bld.blocks:
        block_start.append(len(rows))
        cones.append(cone)
        rows += block
    offset = {"zero": 0, "nonneg": len(bld.zero)}
    duals: dict[int, DualMap] = {}
    for dual, kind, local in bld.pending:
        if kind == "block":
            dual.cone_start = block_start[dual.cone_start]
        else:
            dual.rows += [(offset[kind] + r, f) for r, f in local]
        duals[id(dual)] = dual

    data, ri, ci, b = [], [], [], np.zeros(len(rows))
    linear_at, linear_k, linear_sign = [], [], []  # ShapeReader.linear_constraint's rows: (k, sign)
    for r, (row, constant) in enumerate(rows):  # s = constant + row'x  ->  A = -row, b = constant
        b[r] = constant
        if row.__class__ is tuple:
            linear_at.append(r)
            linear_k.append(row[0])
            linear_sign.append(row[1])
            continue
        for c, a in row.items():
            if a != 0.0:
                ri.append(r)
                ci.append(c)
                data.append(-a)
    if linear_at:  # A's row r = sign * row k of the read rows' matrix, gathered in one product
        picked = bld.linear.M[np.asarray(linear_k, dtype=np.int64)]
        counts = np.diff(picked.indptr)
        ri = np.concatenate([np.asarray(ri, dtype=np.int64), np.repeat(np.asarray(linear_at, dtype=np.int64), counts)])
        ci = np.concatenate([np.asarray(ci, dtype=np.int64), picked.indices.astype(np.int64)])
        data = np.concatenate([np.asarray(data, dtype=float),
                               picked.data * np.repeat(np.asarray(linear_sign, dtype=float), counts)])
    A = sp.csc_matrix((data, (ri, ci)), shape=(len(rows), n))  # a repeated column's entries are summed
    A.eliminate_zeros()

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
                     list(duals.values()), bld.aux_names)


def why_not_conic(model: pyo.ConcreteModel) -> str | None:
    """``None`` if :func:`conic_form` maps ``model``, else the reason it cannot."""
    try:
        conic_form(model)
    except NotConicError as exc:
        return str(exc)
    return None
