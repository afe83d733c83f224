"""How the rows and the objective of a Pyomo model are recognised as cones (:class:`ShapeReader`), for
:func:`tpm_models.solvers.conic.conic_form` (the standard form and its data: :mod:`tpm_models.solvers.cones`).

The reader reads one row (or the objective) at a time, first written as :math:`g(x) \\le 0`, and returns plain data:
the :class:`~.atoms.terms.Piece` s of rows and cones to add, its own last, with their duals' readings; it keeps only
the epigraph columns of the distinct atoms it has met (:mod:`tpm_models.solvers.atoms`, one module an atom). The
shapes recognised (linear rows, second-order cone rows :math:`\\|Fx+g_0\\|^2 + c_0 \\le b\\,y^2`, convex quadratic
and rotated-cone rows, rows linear in convex atoms on their convex side) and the objective's (convex quadratic plus
atoms of nonnegative weight): ``docs/solvers.md``, "How a row becomes a cone". Anything else raises
:class:`NotConicError` naming the row, before any solve.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr import numeric_expr as ne
from pyomo.repn import generate_standard_repn

from tpm_models.solvers.atoms import ATOMS
from tpm_models.solvers.atoms.terms import Piece, squares
from tpm_models.solvers.atoms.terms import is_constant as _const
from tpm_models.solvers.atoms.terms import is_variable as _var
from tpm_models.solvers.atoms.terms import short as _short
from tpm_models.solvers.cones import ConeKind, NotConicError
from tpm_models.solvers.expression_terms import VARIABLES, NotLinear, walk
from tpm_models.solvers.program import Program


def summed(cols: list, coefs: list) -> dict[int, float]:
    """``{column: sum of its coefficients}``, summed in the order of the terms (from 1,000 terms by ``np.bincount``,
    which adds them in the same order)."""
    if len(cols) < 1000:
        lin: dict[int, float] = {}
        for c, a in zip(cols, coefs):
            lin[c] = lin.get(c, 0.0) + a
        return lin
    index = np.asarray(cols, dtype=np.int64)
    present = np.unique(index)
    sums = np.bincount(index, weights=np.asarray(coefs, dtype=float))[present]
    return dict(zip(present.tolist(), sums.tolist()))


class ShapeReader:
    """A model's rows and objective read one at a time into the :class:`~.atoms.terms.Piece` s of its conic form
    (module docstring)."""

    def __init__(self, program: Program):
        self.model = program.model
        self.program = program
        self.variables, self.col = program.columns  # not changed here
        self.n = len(self.variables)
        self.aux_names: list[str] = []
        self.atoms: dict[tuple, int] = {}  # atom key -> its epigraph column
        # expression node -> its epigraph column: (23) repeats one norm node in m_-c + m_c terms
        self.nodes: dict[int, tuple[object, int]] = {}
        self.signs = program.signs  # variables kept >= 0 by a row of their own (``y >= 0`` as a constraint)
        self.concave: set[int] = set()  # hypograph columns (tau <= a concave atom): allowed on the concave side

    def nonnegative(self, v: Any) -> bool:
        """``v >= 0`` by its bound or by a row of its own."""
        return (v.lb is not None and pyo.value(v.lb) >= 0) or id(v) in self.signs

    def new_col(self, name: str) -> int:
        self.aux_names.append(name)
        return self.n + len(self.aux_names) - 1

    def column(self, v: Any) -> int:
        try:
            return self.col[id(v)]
        except KeyError:
            raise NotConicError(f"variable {v.name} is not a variable of the model") from None

    # ---------------------------------------------------------------- one expression
    def decompose(self, expr: Any, coef: float, lin: dict, atoms: list, pieces: list, where: str) -> float:
        """Add ``coef * expr`` into linear terms ``lin`` and atoms ``(coef, column)``, a new atom's epigraph into
        ``pieces``; return its constant."""
        if _const(expr):
            return coef * float(pyo.value(expr))
        if _var(expr):
            c = self.column(expr)
            lin[c] = lin.get(c, 0.0) + coef
            return 0.0
        if expr.is_named_expression_type():
            return self.decompose(expr.expr, coef, lin, atoms, pieces, where)
        if isinstance(expr, (ne.SumExpression, ne.LinearExpression)):
            return sum(self.decompose(a, coef, lin, atoms, pieces, where) for a in expr.args)
        if isinstance(expr, ne.NegationExpression):
            return self.decompose(expr.args[0], -coef, lin, atoms, pieces, where)
        if isinstance(expr, ne.MonomialTermExpression):
            return self.decompose(expr.args[1], coef * float(pyo.value(expr.args[0])), lin, atoms, pieces, where)
        if isinstance(expr, ne.DivisionExpression) and _const(expr.args[1]):
            return self.decompose(expr.args[0], coef / float(pyo.value(expr.args[1])), lin, atoms, pieces, where)
        if id(expr) in self.nodes:
            atoms.append((coef, self.nodes[id(expr)][1]))
            return 0.0
        if isinstance(expr, ne.ProductExpression):
            a, b = expr.args
            if _const(a):
                return self.decompose(b, coef * float(pyo.value(a)), lin, atoms, pieces, where)
            if _const(b):
                return self.decompose(a, coef * float(pyo.value(b)), lin, atoms, pieces, where)
        for epigraph in ATOMS:  # a convex atom (tpm_models.solvers.atoms), one module each
            read = epigraph(self, expr, where)
            if read is not None:
                pieces += read[1]
                self.nodes[id(expr)] = (expr, read[0])  # the node kept alive in nodes, so its id stays its own
                atoms.append((coef, read[0]))
                return 0.0
        raise NotConicError(f"{where}: {_short(expr)} is not a term Clarabel takes (tpm_models.solvers.atoms: "
                            "linear, quadratic, sqrt(quadratic), abs(affine), a**q * r**(1-q), "
                            "(sum_j abs(x_j)**q)**(1/q))")

    def quadratic(self, expr: Any, where: str, repn: Any = None) -> tuple[dict, dict, float]:
        """``(quadratic, linear, constant)`` of a quadratic ``expr`` (``repn``: its standard repn, if read)."""
        if repn is None:
            repn = generate_standard_repn(expr, quadratic=True)
            if repn.nonlinear_expr is not None:
                raise NotConicError(f"{where}: {_short(expr)} is not quadratic")
        quad: dict[tuple[int, ...], float] = {}  # (i, j), i <= j
        for (u, v), coef in zip(repn.quadratic_vars, repn.quadratic_coefs):
            key = tuple(sorted((self.column(u), self.column(v))))
            quad[key] = quad.get(key, 0.0) + float(coef)
        lin: dict[int, float] = {}
        for v, coef in zip(repn.linear_vars, repn.linear_coefs):
            lin[self.column(v)] = lin.get(self.column(v), 0.0) + float(coef)
        return quad, lin, float(pyo.value(repn.constant))

    def affine_square(self, node: Any) -> tuple[dict, dict, float] | None:
        """:meth:`quadratic` of a node ``(a'x + b)**2`` (the robust duals' :math:`-\\tfrac12\\sum_j w_j(\\lambda)^2`,
        (23D)): :math:`x^\\top aa^\\top x + 2b\\,a^\\top x + b^2` from the affine base's terms, the pairs
        :math:`i < j` as :math:`2a_ia_j`, without Pyomo's standard representation expanding the square term by term
        (most of a (23D) solve at 178 points); ``None`` for any other node (then :meth:`quadratic`)."""
        if node.__class__ is not ne.PowExpression:
            return None
        base, exponent = node.args
        if exponent.__class__ not in (int, float) or exponent != 2:
            return None
        if base.__class__ in VARIABLES:  # x_j**2 ((28)'s 1/2 ||w||^2 term by term): one pair, no walk
            c = self.col.get(id(base))
            return None if c is None else ({(c, c): 1.0}, {}, 0.0)
        cols: list[int] = []
        coefs: list[float] = []
        try:
            b = walk(base, 1.0, self.col, cols, coefs)
        except (NotLinear, KeyError, AttributeError, TypeError, ZeroDivisionError):
            return None
        lin = {k: a for k, a in summed(cols, coefs).items() if a != 0.0}
        index = np.array(sorted(lin), dtype=np.int64)
        a = np.array([lin[k] for k in index.tolist()], dtype=float)
        i, j = np.triu_indices(len(a))
        values = a[i] * a[j] * np.where(i == j, 1.0, 2.0)
        quad = dict(zip(zip(index[i].tolist(), index[j].tolist()), values.tolist()))
        return quad, ({k: 2.0 * b * v for k, v in lin.items()} if b else {}), b * b

    def parts(self, expr: Any, where: str, pieces: list) -> tuple[dict, dict, list, float]:
        """``(quadratic, linear, atoms, constant)`` of ``expr``, its new atoms' epigraphs into ``pieces``."""
        repn = generate_standard_repn(expr, quadratic=True)
        quad, lin, const = self.quadratic(expr, where, repn)
        atoms: list[tuple[float, int]] = []
        if repn.nonlinear_expr is not None:
            const += self.decompose(repn.nonlinear_expr, 1.0, lin, atoms, pieces, where)
        return quad, lin, atoms, const

    def fast_parts(self, expr: Any, where: str, read: tuple, pieces: list) -> tuple[dict, dict, list, float] | None:
        """:meth:`parts` of an expression linear in nodes (``read``: its :func:`~.expression_terms.atom_terms`), each
        node a quadratic or an atom (one met before, in ``nodes``, is not walked again); ``None`` when a node is
        neither (then :meth:`parts` reads the whole expression; the atoms met so far stay in ``pieces``)."""
        cols, coefs, const, terms = read
        quad: dict = {}
        atoms: list = []
        lin = summed(cols, coefs)
        try:
            for coef, node in terms:
                known = self.nodes.get(id(node))
                if known is not None:
                    atoms.append((coef, known[1]))
                    continue
                square = self.affine_square(node)
                degree = 2 if square is not None else node.polynomial_degree()
                if degree == 2:
                    q2, l2, c2 = square or self.quadratic(node, where)
                    for k, a in q2.items():
                        quad[k] = quad.get(k, 0.0) + coef * a
                    for k, a in l2.items():
                        lin[k] = lin.get(k, 0.0) + coef * a
                    const += coef * c2
                elif degree is None and node.__class__ is not ne.SumExpression:
                    const += self.decompose(node, coef, lin, atoms, pieces, where)  # a new atom: walked once
                else:
                    return None
        except NotConicError:
            return None
        return quad, lin, atoms, const

    def read(self, expr: Any, where: str, read: tuple | None, pieces: list) -> tuple[dict, dict, list, float]:
        """:meth:`fast_parts` of ``expr`` if it has a ``read`` that it takes, else :meth:`parts`."""
        fast = None if read is None else self.fast_parts(expr, where, read, pieces)
        return self.parts(expr, where, pieces) if fast is None else fast

    # ---------------------------------------------------------------- one row
    def constraint(self, con: Any, read: tuple | None = None) -> list[Piece]:
        """The pieces of the row ``con`` (module docstring; ``read``: its :func:`~.expression_terms.atom_terms`, if
        any): its new atoms' epigraphs, then its own rows, which carry its dual: an equality's ``zero`` row (factor
        -1), a ``nonneg`` row per finite side (factor ``-orient``), or a quadratic row's cone."""
        where = f"constraint {con.name}"
        pieces: list[Piece] = []
        quad, lin, atoms, const = self.read(con.body, where, read, pieces)
        lower = None if con.lower is None else float(pyo.value(con.lower))
        upper = None if con.upper is None else float(pyo.value(con.upper))
        if con.equality or (lower is not None and upper is not None and lower == upper):
            if quad or atoms:
                raise NotConicError(f"{where}: a nonlinear equality is not convex")
            # a Pyomo equality has both bounds; s = rhs - body = 0
            return pieces + [Piece(ConeKind.ZERO, [({c: -a for c, a in lin.items()}, cast(float, lower) - const)],
                                   dual=-1.0)]
        sides = [(o, v) for o, v in [(1.0, upper), (-1.0, lower)] if v is not None and math.isfinite(v)]
        if (quad or atoms) and len(sides) != 1:
            raise NotConicError(f"{where}: a nonlinear ranged row is not convex")
        for orient, bound in sides:
            # g = orient * (body - bound) <= 0
            g_lin = {c: orient * a for c, a in lin.items()}
            g_const = orient * (const - bound)
            for coef, col in atoms:
                if (orient * coef < 0) != (col in self.concave):
                    raise NotConicError(f"{where}: a {'concave' if col in self.concave else 'convex'} term on the "
                                        "wrong side (the row is not convex)")
                g_lin[col] = g_lin.get(col, 0.0) + orient * coef
            if not quad:
                pieces.append(Piece(ConeKind.NONNEG, [({c: -a for c, a in g_lin.items()}, -g_const)], dual=-orient))
                continue  # s = -g >= 0
            g_quad = {k: orient * a for k, a in quad.items()}
            rows = self.quadratic_row(g_quad, g_lin, g_const, where)
            pieces.append(Piece(ConeKind.SOC, rows, dual=(orient, g_quad, g_lin)))
        return pieces

    def quadratic_row(self, quad: dict, lin: dict, const: float, where: str) -> list:
        """:math:`g(x) \\le 0` with a quadratic part: the rows of its second-order cone."""
        negative = [k for k, a in quad.items() if a < 0]
        if len(negative) == 1 and negative[0][0] == negative[0][1]:
            y = negative[0][0]
            others = {k: a for k, a in quad.items() if k != negative[0]}
            y_var = self.variables[y] if y < self.n else None
            b = -quad[negative[0]]
            h = lin.get(y, 0.0) / (2 * b)  # -b y^2 + l_y y = -b (y - h)^2 + b h^2: a cone shifted by h
            shift_holds = y_var is not None and (
                (h == 0.0 and self.nonnegative(y_var)) or (y_var.lb is not None and pyo.value(y_var.lb) >= h)
                or (h < 0 and self.nonnegative(y_var)))
            if shift_holds and all(y not in k for k in others):
                rest = {c: a for c, a in lin.items() if c != y}
                F, g0, c0 = squares(others, rest, const + b * h * h, where)
                rows = [({y: math.sqrt(b)}, -math.sqrt(b) * h)] + list(zip(F, g0))
                return rows + [({}, math.sqrt(c0))] if c0 > 0 else rows
        rotated = self.rotated_row(quad, lin, const, where)
        if rotated is not None:
            return rotated
        # convex quadratic: |Fx|^2 <= u = -(l'x + c): (1 + u, 1 - u, 2Fx) in SOC
        F, g0, c0 = squares(quad, {}, 0.0, where)
        u_lin = {c: -a for c, a in lin.items()}
        rows = [(dict(u_lin), 1.0 - const), ({c: -a for c, a in u_lin.items()}, 1.0 + const)]
        return rows + [({c: 2.0 * a for c, a in row.items()}, 0.0) for row in F]

    def rotated_row(self, quad: dict, lin: dict, const: float, where: str) -> list | None:
        r""":math:`\|Fx+g_0\|^2 + c_0 - b\,t\,s \le 0` with :math:`b > 0`, :math:`t, s \ge 0` bounds, :math:`t, s`
        in no other term (``x**2 <= t*s``, ``x*y >= 1``): the rows of :math:`(bt + s,\ bt - s,\ 2(Fx+g_0),\
        2\sqrt{c_0}) \in \mathrm{SOC}`, since :math:`(bt+s)^2 - (bt-s)^2 = 4bts`. ``None`` if the row is not of this
        shape."""
        cross = [k for k, a in quad.items() if k[0] != k[1] and a < 0]
        if len(cross) != 1:
            return None
        t, s = cross[0]
        others = {k: a for k, a in quad.items() if k != cross[0]}
        if any(t in k or s in k for k in others) or t in lin or s in lin:
            return None
        for c in (t, s):
            v = self.variables[c] if c < self.n else None
            if v is None or not self.nonnegative(v):
                return None
        b = -quad[cross[0]]
        F, g0, c0 = squares(others, lin, const, where)
        rows = [({t: b, s: 1.0}, 0.0), ({t: b, s: -1.0}, 0.0)]
        rows += [({c: 2.0 * a for c, a in row.items()}, 2.0 * g) for row, g in zip(F, g0)]
        return rows + [({}, 2.0 * math.sqrt(c0))] if c0 > 0 else rows

    def objective(self) -> tuple[int, dict, dict, float, list[Piece]]:
        """``(sense, quadratic, linear, constant, pieces)`` of the one active objective (module docstring), its atoms'
        epigraph columns in the linear part and their cones in ``pieces``."""
        objectives = list(self.model.component_data_objects(pyo.Objective, active=True))
        if len(objectives) != 1:
            raise NotConicError(f"the model must have exactly one active objective, it has {len(objectives)}")
        obj = objectives[0]
        sense = 1 if obj.sense == pyo.minimize else -1
        read = self.program.objective_terms
        if read is not None and not read[3]:  # a linear objective ((26)-(29)), read fast
            return sense, {}, summed(read[0], read[1]), read[2], []
        pieces: list[Piece] = []
        quad, lin, atoms, const = self.read(obj.expr, "the objective", read, pieces)
        for coef, col in atoms:
            if (sense * coef < 0) != (col in self.concave):
                raise NotConicError("the objective has a convex or concave term with the wrong sign (not convex)")
            lin[col] = lin.get(col, 0.0) + coef
        return sense, quad, lin, const, pieces
