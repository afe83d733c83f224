"""``abs(a'x + c)``: :math:`\\tau \\ge |a^\\top x + c|` as two ``nonneg`` rows :math:`\\tau - (a^\\top x + c) \\ge 0`,
:math:`\\tau + a^\\top x + c \\ge 0`."""

from __future__ import annotations

from typing import Any

from pyomo.core.expr import numeric_expr as ne

from tpm_models.solvers.atoms.terms import Piece, Reader, short
from tpm_models.solvers.cones import ConeKind, NotConicError


def epigraph(reader: Reader, expr: Any, where: str) -> tuple[int, list[Piece]] | None:
    """:math:`\\tau`'s column and the rows to add for an ``abs`` node (module docstring; none for one met before),
    ``None`` for another node."""
    if not isinstance(expr, ne.AbsExpression):
        return None
    arg = expr.args[0]
    quad, lin, const = reader.quadratic(arg, where)
    if quad:
        raise NotConicError(f"{where}: abs({short(arg)}) of a nonlinear expression is not a term Clarabel takes")
    key = ("abs", tuple(sorted(lin.items())), const)
    if key in reader.atoms:
        return reader.atoms[key], []
    tau = reader.new_col(f"abs atom {len(reader.atoms)}")
    reader.atoms[key] = tau
    return tau, [Piece(ConeKind.NONNEG, [({tau: 1.0, **{c: -a for c, a in lin.items()}}, -const),
                                         ({tau: 1.0, **lin}, const)])]
