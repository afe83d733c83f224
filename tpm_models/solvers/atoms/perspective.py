"""The perspective ``a**q * r**(1-q)``, :math:`q > 1`, :math:`a, r \\ge 0` (``perspective[j]`` of
:func:`tpm_models.models.norms.add_pnorm_epigraph`): :math:`\\tau \\ge a^q r^{1-q} \\iff (\\tau, r, a) \\in
\\mathcal K_{\\mathrm{pow}}(1/q)`, since :math:`\\tau^{1/q} r^{1-1/q} \\ge |a| \\iff \\tau r^{q-1} \\ge |a|^q`."""

from __future__ import annotations

from typing import Any

import pyomo.core as pyo
from pyomo.core.expr import numeric_expr as ne

from tpm_models.solvers.atoms.terms import Piece, Reader, is_constant, is_variable, short
from tpm_models.solvers.cones import ConeKind, NotConicError


def epigraph(reader: Reader, expr: Any, where: str) -> tuple[int, list[Piece]] | None:
    """:math:`\\tau`'s column and its cone (module docstring; none for a product met before) for a product of two
    powers, ``None`` for another node (a product with a constant factor is taken by the reader before the atoms)."""
    if not isinstance(expr, ne.ProductExpression):
        return None
    a, b = expr.args
    powers = []
    for f in (a, b):
        if isinstance(f, ne.PowExpression) and is_variable(f.args[0]) and is_constant(f.args[1]):
            powers.append((f.args[0], float(pyo.value(f.args[1]))))
        else:
            raise NotConicError(f"{where}: product {short(a)} * {short(b)} is not a**q * r**(1-q)")
    (x, ex), (r, er) = sorted(powers, key=lambda t: -t[1])
    if not (ex > 1.0 and abs(ex + er - 1.0) < 1e-12):
        raise NotConicError(f"{where}: {x.name}**{ex:g} * {r.name}**{er:g} is not a**q * r**(1-q) with q > 1")
    for v in (x, r):
        if not reader.nonnegative(v):
            raise NotConicError(f"{where}: the perspective a**q * r**(1-q) needs {v.name} >= 0 as a bound")
    a_col, r_col = reader.column(x), reader.column(r)
    key = ("pow", a_col, r_col, ex)
    if key in reader.atoms:
        return reader.atoms[key], []
    tau = reader.new_col(f"perspective atom {len(reader.atoms)}")
    reader.atoms[key] = tau
    return tau, [Piece(ConeKind.POW, [({tau: 1.0}, 0.0), ({r_col: 1.0}, 0.0), ({a_col: 1.0}, 0.0)], 1.0 / ex)]
