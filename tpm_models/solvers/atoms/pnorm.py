"""The p-norm ``(sum_j abs(x_j)**q)**(1/q)`` (or ``x_j**q`` with :math:`x_j \\ge 0` bounds), :math:`1 < q < \\infty`,
by the standard power-cone decomposition: :math:`\\|x\\|_q \\le \\tau \\iff \\exists r_j \\ge 0:\\
\\sum_j r_j \\le \\tau,\\ (r_j, \\tau, x_j) \\in \\mathcal K_{\\mathrm{pow}}(1/q)`,
i.e. :math:`|x_j| \\le r_j^{1/q}\\tau^{1-1/q}`."""

from __future__ import annotations

import math
from typing import Any

import pyomo.core as pyo
from pyomo.core.expr import numeric_expr as ne

from tpm_models.solvers.atoms.terms import Piece, Reader, is_constant, is_variable, short
from tpm_models.solvers.cones import ConeKind, NotConicError


def epigraph(reader: Reader, expr: Any, where: str) -> tuple[int, list[Piece]] | None:
    """:math:`\\tau`'s column and its rows and cones (module docstring; none for a norm met before) for a power of
    exponent in :math:`(0, 1)` read as a p-norm, ``None`` for another node."""
    if not (isinstance(expr, ne.PowExpression) and is_constant(expr.args[1])):
        return None
    e = float(pyo.value(expr.args[1]))
    if not 0.0 < e < 1.0:
        return None
    base, q = expr.args[0], 1.0 / e
    terms = base.args if isinstance(base, ne.SumExpression) else (base,)
    if isinstance(terms[0], ne.PowExpression) and is_constant(terms[0].args[1]):
        inner = float(pyo.value(terms[0].args[1]))  # the inner exponent, exactly (1 / (1/q) may round)
        if abs(inner - q) > 1e-12 * q:  # (sum_j |x_j|**p)**(1/q) with p != q is not a norm: no cone
            raise NotConicError(f"{where}: (sum_j abs(x_j)**{inner:g})**{1 / q:g} is not a p-norm: the outer "
                                f"exponent must be 1/{inner:g}")
        q = inner
    if not 1.0 < q < math.inf:
        raise NotConicError(f"{where}: a p-norm needs 1 < q < inf, got {q:g}")
    cols = [_column(reader, t, q, base, where) for t in terms]
    key = ("pnorm", tuple(cols), q)
    if key in reader.atoms:
        return reader.atoms[key], []
    tau = reader.new_col(f"p-norm atom {len(reader.atoms)}")
    parts = [reader.new_col(f"p-norm atom {len(reader.atoms)} r[{k}]") for k in range(len(cols))]
    reader.atoms[key] = tau
    row = {tau: 1.0}
    for r in parts:
        row[r] = -1.0
    cones = [Piece(ConeKind.POW, [({r: 1.0}, 0.0), ({tau: 1.0}, 0.0), ({c: 1.0}, 0.0)], 1.0 / q)
             for r, c in zip(parts, cols)]
    return tau, [Piece(ConeKind.NONNEG, [(row, 0.0)])] + cones  # tau - sum_j r_j >= 0, then the power cones


def _column(reader: Reader, t: Any, q: float, base: Any, where: str) -> int:
    """The column of :math:`x_j` in the term ``abs(x_j)**q`` (or ``x_j**q``, :math:`x_j \\ge 0`)."""
    if not (isinstance(t, ne.PowExpression) and is_constant(t.args[1])
            and abs(float(pyo.value(t.args[1])) - q) <= 1e-12 * q):
        raise NotConicError(f"{where}: {short(base)} is not sum_j abs(x_j)**{q:g}")
    x = t.args[0]
    if isinstance(x, ne.AbsExpression) and is_variable(x.args[0]):
        x = x.args[0]
    elif not (is_variable(x) and reader.nonnegative(x)):
        raise NotConicError(f"{where}: {short(t)}: write abs(x)**q, or bound x >= 0")
    return reader.column(x)
