"""``abs(a'x + c)``: :math:`\\tau \\ge |a^\\top x + c|` as two ``nonneg`` rows :math:`\\tau - (a^\\top x + c) \\ge 0`,
:math:`\\tau + a^\\top x + c \\ge 0`."""

from __future__ import annotations

from typing import Any

from pyomo.core.expr import numeric_expr as ne

from tpm_models.solvers.atoms.terms import Reader, short
from tpm_models.solvers.cones import NotConicError


def epigraph(reader: Reader, expr: Any, where: str) -> int | None:
    """:math:`\\tau`'s column for an ``abs`` node (module docstring), ``None`` for another node."""
    if not isinstance(expr, ne.AbsExpression):
        return None
    arg = expr.args[0]
    quad, lin, const = reader.quadratic(arg, where)
    if quad:
        raise NotConicError(f"{where}: abs({short(arg)}) of a nonlinear expression is not a term Clarabel takes")
    key = ("abs", tuple(sorted(lin.items())), const)
    if key not in reader.atoms:
        tau = reader.new_col(f"abs atom {len(reader.atoms)}")
        reader.nonneg.append(({tau: 1.0, **{c: -a for c, a in lin.items()}}, -const))
        reader.nonneg.append(({tau: 1.0, **lin}, const))
        reader.atoms[key] = tau
    return reader.atoms[key]
