"""Square roots: of a convex quadratic :math:`E = \\|Fx+g_0\\|^2 + c_0` (``sqrt(E)`` or ``E**0.5``; (23)'s
:math:`\\|w\\|_2` = ``sqrt(sum_j w_j**2)``), :math:`\\tau \\ge \\sqrt E \\iff (\\tau, Fx+g_0, \\sqrt{c_0}) \\in
\\mathrm{SOC}`; of an affine :math:`e = a^\\top x + c` (``sqrt(e)``, concave), its hypograph :math:`\\tau \\le
\\sqrt e` as :math:`(e + 1,\\ e - 1,\\ 2\\tau) \\in \\mathrm{SOC}` (so :math:`\\tau^2 \\le e`, :math:`e \\ge 0`),
exact where the row needs :math:`\\tau` large (the atom on the concave side of its row, e.g.
``sqrt(e) >= abs(x)``: a point with some :math:`\\tau \\le \\sqrt e` has one with :math:`\\tau = \\sqrt e`)."""

from __future__ import annotations

import math
from typing import Any

import pyomo.core as pyo
from pyomo.core.expr import numeric_expr as ne
from pyomo.repn import generate_standard_repn

from tpm_models.solvers.atoms.terms import Piece, Reader, is_constant, squares
from tpm_models.solvers.cones import ConeKind, NotConicError


def epigraph(reader: Reader, expr: Any, where: str) -> tuple[int, list[Piece]] | None:
    """:math:`\\tau`'s column and its cone (module docstring; none for a root met before) for a square root,
    ``None`` for another node or for ``E**0.5`` of an ``E`` that is not a convex quadratic (then it may be a p-norm at
    :math:`q = 2`)."""
    if isinstance(expr, ne.UnaryFunctionExpression) and expr.getname() == "sqrt":
        if _is_affine(expr.args[0]):
            return _hypograph(reader, expr.args[0], where)
        return _of_quadratic(reader, expr.args[0], where)
    if isinstance(expr, ne.PowExpression) and is_constant(expr.args[1]) and float(pyo.value(expr.args[1])) == 0.5:
        try:
            return _of_quadratic(reader, expr.args[0], where)
        except NotConicError:  # (sum_j abs(x_j)**2)**0.5: the p-norm at q = 2
            return None
    return None


def _is_affine(arg: Any) -> bool:
    repn = generate_standard_repn(arg, quadratic=True)
    return repn.nonlinear_expr is None and not repn.quadratic_vars and bool(repn.linear_vars)


def _of_quadratic(reader: Reader, arg: Any, where: str) -> tuple[int, list[Piece]]:
    quad, lin, const = reader.quadratic(arg, where)
    key = ("sqrt", tuple(sorted(quad.items())), tuple(sorted(lin.items())), const)
    if key in reader.atoms:
        return reader.atoms[key], []
    F, g0, c0 = squares(quad, lin, const, where)
    tau = reader.new_col(f"sqrt atom {len(reader.atoms)}")
    reader.atoms[key] = tau
    rows = [({tau: 1.0}, 0.0)] + [(row, g) for row, g in zip(F, g0)]
    if c0 > 0:
        rows.append(({}, math.sqrt(c0)))
    return tau, [Piece(ConeKind.SOC, rows)]


def _hypograph(reader: Reader, arg: Any, where: str) -> tuple[int, list[Piece]]:
    _, lin, const = reader.quadratic(arg, where)
    key = ("sqrt hypograph", tuple(sorted(lin.items())), const)
    if key in reader.atoms:
        return reader.atoms[key], []
    tau = reader.new_col(f"sqrt hypograph {len(reader.atoms)}")
    reader.atoms[key] = tau
    reader.concave.add(tau)
    return tau, [Piece(ConeKind.SOC, [(dict(lin), const + 1.0), (dict(lin), const - 1.0), ({tau: 2.0}, 0.0)])]
