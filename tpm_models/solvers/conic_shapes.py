"""How the rows and the objective of a Pyomo model are recognised as cones (:class:`ShapeReader`), for
:func:`tpm_models.solvers.conic.conic_form` (the standard form and its data: :mod:`tpm_models.solvers.cones`).

The reader holds the form's state (its rows by cone, the epigraph columns of the distinct atoms); the atoms it
recognises are one module each (:mod:`tpm_models.solvers.atoms`), which write through it.

Rows recognised (how a cone is recognised)
------------------------------------------
A row is read by ``generate_standard_repn`` into linear, quadratic and nonlinear parts; it is
written first as :math:`g(x) \\le 0` (``body <= upper``: :math:`g = \\text{body} - \\text{upper}`;
``body >= lower``: :math:`g = \\text{lower} - \\text{body}`). Then:

1. **linear** rows: ``zero`` (equality) or ``nonneg`` (each finite side of an inequality).
2. **second-order cone rows** (the rows ``cone_t``, ``cone_u``, ``norm_r`` at p' = 2, ``ball``
   at p = 2, ``cone_tau``, ``cone_rho`` that the builders write, and a user's
   :math:`\\sum_k (x_k - a_k)^2 \\le y^2`):
   :math:`g = \\|Fx+g_0\\|_2^2 + c_0 - b\\,y^2` with :math:`b > 0`, :math:`c_0 \\ge 0`, a single
   variable :math:`y` with a negative square, bounded :math:`y \\ge 0`, in no other term. Then
   :math:`g \\le 0 \\iff (\\sqrt b\\,y,\\ Fx+g_0,\\ \\sqrt{c_0}) \\in \\mathrm{SOC}`.
   (This is :func:`tpm_models.solvers.structure.model_class`'s cone shape :math:`\\sum_k a_kx_k^2\\le b y^2`.)
3. **convex quadratic rows** :math:`x^\\top Qx + l^\\top x + c \\le 0`, :math:`Q \\succeq 0`
   (:math:`Q = F^\\top F`): with :math:`u = -(l^\\top x + c)`,
   :math:`\\|Fx\\|^2 \\le u \\iff (1+u,\\ 1-u,\\ 2Fx) \\in \\mathrm{SOC}` (a rotated cone).
4. **rows linear in convex atoms**: the nonlinear part must be a sum :math:`\\sum_k \\kappa_k
   \\phi_k(x)` of the atoms below with :math:`\\kappa_k > 0` in :math:`g` (so the row is convex);
   each atom is replaced by an epigraph variable :math:`\\tau_k \\ge \\phi_k(x)` (one per distinct
   atom, shared by all rows and the objective) and the row is linear in :math:`(x, \\tau)`:

   * ``sqrt(E)``, :math:`E` a convex quadratic :math:`\\|Fx+g_0\\|^2 + c_0` (``(23)``'s
     :math:`\\|w\\|_2` = ``sqrt(sum_j w_j**2)``): :math:`(\\tau, Fx+g_0, \\sqrt{c_0}) \\in \\mathrm{SOC}`;
   * the **perspective** ``a**q * r**(1-q)``, :math:`q > 1`, :math:`a, r \\ge 0` bounds
     (``perspective[j]`` of :func:`tpm_models.models.norms.add_pnorm_epigraph`,
     :math:`a_j^q r^{1-q} \\le z_j`): :math:`\\tau \\ge a^q r^{1-q} \\iff (\\tau, r, a) \\in
     \\mathcal K_{\\mathrm{pow}}(1/q)`, since :math:`\\tau^{1/q} r^{1-1/q} \\ge |a| \\iff \\tau
     r^{q-1} \\ge |a|^q`;
   * the **p-norm** ``(sum_j abs(x_j)**q)**(1/q)`` (or ``x_j**q`` with :math:`x_j \\ge 0`
     bounds), :math:`1 < q < \\infty`: the standard power-cone decomposition
     :math:`\\|x\\|_q \\le \\tau \\iff \\exists r_j \\ge 0:\\ \\sum_j r_j \\le \\tau,\\ (r_j, \\tau, x_j) \\in
     \\mathcal K_{\\mathrm{pow}}(1/q)`, i.e. :math:`|x_j| \\le r_j^{1/q}\\tau^{1-1/q}`.

   The builders' general-p rows are the first form: ``perspective[j]``
   :math:`a_j^q r^{1-q} \\le z_j` and :math:`\\sum_j z_j \\le r`, i.e. :math:`\\|a\\|_q \\le r` with
   :math:`z_j` in the role of the decomposition's :math:`r_j`; a user may write the second
   (``tests/solvers/test_clarabel.py`` ties the two).

The objective is :math:`\\tfrac12x^\\top Px + q^\\top x + \\sum_k\\kappa_k\\phi_k(x)` with
:math:`P\\succeq0` and :math:`\\kappa_k \\ge 0` (after the sign of a maximisation). Anything else
(an equality or ranged row that is not linear, a concave side, another function) raises
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
from tpm_models.solvers.atoms.terms import is_constant as _const
from tpm_models.solvers.atoms.terms import is_variable as _var
from tpm_models.solvers.atoms.terms import short as _short
from tpm_models.solvers.cones import Cone, ConeKind, DualMap, NotConicError
from tpm_models.solvers.conic_rows import RowList, SparseChunk, bound_rows, linear_rows, squares, summed
from tpm_models.solvers.expression_terms import atom_terms
from tpm_models.solvers.program import Program
from tpm_models.solvers.rows import AtomBlock


class ShapeReader:
    """A model read into the rows of its conic form, by cone kind (module docstring), with each constraint's
    :class:`~tpm_models.solvers.cones.DualMap`; :func:`tpm_models.solvers.conic.conic_form` assembles them."""

    def __init__(self, program: Program, batched: bool = True):
        self.model = program.model
        self.program = program
        self.batched = batched  # rows linear in atoms met before read as arrays (atom_row), else as dictionaries
        self.variables, self.col = program.columns  # not changed here
        self.n = program.n
        self.aux_names: list[str] = []
        self.atoms: dict[tuple, int] = {}  # atom key -> its epigraph column
        # expression node -> its epigraph column: (23) repeats one norm node in m_-c + m_c terms
        self.nodes: dict[int, tuple[object, int]] = {}
        # rows by cone kind: (dict col -> coef, constant) meaning s = constant + sum coef x, and chunks of rows
        # held as arrays (tpm_models.solvers.conic_rows)
        self.zero = RowList()
        self.nonneg = RowList()
        self.blocks: list[tuple[Cone, list]] = []  # soc / pow blocks
        self.pending: list[tuple[DualMap, str, list]] = []  # dual maps with (kind, local row ids)
        self.row_duals: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []  # chunks': (kind, owner, row, factor)
        self.atom_duals: tuple[list, list, list] = ([], [], [])  # atom_row's rows: (constraint, nonneg row, factor)
        self.linear = program.rows  # the builders' linear rows
        self._sides: tuple[list, list] | None = None  # self.linear's lower and upper sides (linear_constraint)
        self.atom_rows = program.atom_rows  # the others, linear in nodes
        self.signs = program.signs  # variables kept >= 0 by a row of their own (``y >= 0`` as a constraint)
        self.concave: set[int] = set()  # hypograph columns (tau <= a concave atom): allowed on the concave side

    def nonnegative(self, v: Any) -> bool:
        """``v >= 0`` by its bound or by a row of its own."""
        return (v.lb is not None and pyo.value(v.lb) >= 0) or id(v) in self.signs

    # ---------------------------------------------------------------- columns and rows
    def new_col(self, name: str) -> int:
        self.aux_names.append(name)
        return self.n + len(self.aux_names) - 1

    def column(self, v: Any) -> int:
        try:
            return self.col[id(v)]
        except KeyError:
            raise NotConicError(f"variable {v.name} is not a variable of the model") from None

    def add_block(self, cone: Cone, rows: list) -> int:
        self.blocks.append((cone, rows))
        return len(self.blocks) - 1

    # ---------------------------------------------------------------- atoms
    def decompose(self, expr: Any, coef: float, lin: dict, atoms: list, where: str) -> float:
        """Add ``coef * expr`` into linear terms ``lin`` and atoms ``(coef, column)``; return its constant."""
        if _const(expr):
            return coef * float(pyo.value(expr))
        if _var(expr):
            c = self.column(expr)
            lin[c] = lin.get(c, 0.0) + coef
            return 0.0
        if expr.is_named_expression_type():
            return self.decompose(expr.expr, coef, lin, atoms, where)
        if isinstance(expr, (ne.SumExpression, ne.LinearExpression)):
            return sum(self.decompose(a, coef, lin, atoms, where) for a in expr.args)
        if isinstance(expr, ne.NegationExpression):
            return self.decompose(expr.args[0], -coef, lin, atoms, where)
        if isinstance(expr, ne.MonomialTermExpression):
            return self.decompose(expr.args[1], coef * float(pyo.value(expr.args[0])), lin, atoms, where)
        if isinstance(expr, ne.DivisionExpression) and _const(expr.args[1]):
            return self.decompose(expr.args[0], coef / float(pyo.value(expr.args[1])), lin, atoms, where)
        if id(expr) in self.nodes:
            atoms.append((coef, self.nodes[id(expr)][1]))
            return 0.0
        if isinstance(expr, ne.ProductExpression):
            a, b = expr.args
            if _const(a):
                return self.decompose(b, coef * float(pyo.value(a)), lin, atoms, where)
            if _const(b):
                return self.decompose(a, coef * float(pyo.value(b)), lin, atoms, where)
        for epigraph in ATOMS:  # a convex atom (tpm_models.solvers.atoms), one module each
            column = epigraph(self, expr, where)
            if column is not None:
                return self.atom(expr, coef, column, atoms)
        raise NotConicError(f"{where}: {_short(expr)} is not a term Clarabel takes (tpm_models.solvers.atoms: "
                            "linear, quadratic, sqrt(quadratic), abs(affine), a**q * r**(1-q), "
                            "(sum_j abs(x_j)**q)**(1/q))")

    def atom(self, expr: Any, coef: float, column: int, atoms: list) -> float:
        """Record ``coef * tau`` for the atom node ``expr`` (kept alive in ``nodes``, so its id stays its own)."""
        self.nodes[id(expr)] = (expr, column)
        atoms.append((coef, column))
        return 0.0

    def quadratic(self, expr: Any, where: str) -> tuple[dict, dict, float]:
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

    # ---------------------------------------------------------------- one expression
    def parts(self, expr: Any, where: str) -> tuple[dict, dict, list, float]:
        """``(quadratic, linear, atoms, constant)`` of ``expr``."""
        repn = generate_standard_repn(expr, quadratic=True)
        quad: dict[tuple[int, ...], float] = {}  # (i, j), i <= j
        for (u, v), coef in zip(repn.quadratic_vars, repn.quadratic_coefs):
            key = tuple(sorted((self.column(u), self.column(v))))
            quad[key] = quad.get(key, 0.0) + float(coef)
        lin: dict[int, float] = {}
        for v, coef in zip(repn.linear_vars, repn.linear_coefs):
            lin[self.column(v)] = lin.get(self.column(v), 0.0) + float(coef)
        const = float(pyo.value(repn.constant))
        atoms: list[tuple[float, int]] = []
        if repn.nonlinear_expr is not None:
            const += self.decompose(repn.nonlinear_expr, 1.0, lin, atoms, where)
        return quad, lin, atoms, const

    def fast_parts(self, expr: Any, where: str, read: tuple | None = None) -> tuple[dict, dict, list, float] | None:
        """:meth:`parts` of an expression linear in nodes (:func:`~.expression_terms.atom_terms`; ``read``: that
        reading when the caller has it), each node a quadratic or an atom: an atom met before (``nodes``: (23)'s
        ``eps_i * norm_w`` in every margin row and 7,500 times in its objective at 10^4 points) is not walked again;
        ``None`` when a node is neither (then :meth:`parts` reads the whole expression)."""
        if read is None:
            read = atom_terms(expr, self.col)
            if read is None:
                return None
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
                degree = node.polynomial_degree()
                if degree == 2:
                    q2, l2, c2 = self.quadratic(node, where)
                    for k, a in q2.items():
                        quad[k] = quad.get(k, 0.0) + coef * a
                    for k, a in l2.items():
                        lin[k] = lin.get(k, 0.0) + coef * a
                    const += coef * c2
                elif degree is None and node.__class__ is not ne.SumExpression:
                    const += self.decompose(node, coef, lin, atoms, where)  # a new atom: walked once
                else:
                    return None
        except NotConicError:
            return None
        return quad, lin, atoms, const

    def linear_constraint(self, con: Any) -> bool:
        """A row read by :func:`tpm_models.solvers.rows.read_rows` (the builders' linear rows), added as
        :meth:`constraint` would add it, as ``((k, sign), constant)``: row ``k`` of the read rows' matrix times
        ``sign`` is its ``A`` row (:func:`tpm_models.solvers.conic.conic_form` gathers them in one sparse product);
        ``False`` when the body is not such a row."""
        k = self.linear.row_of.get(id(con))
        if k is None:
            return False
        if self._sides is None:  # the rows' sides as Python floats, once (numpy scalars are slow one at a time)
            self._sides = (self.linear.lower.tolist(), self.linear.upper.tolist())
        lower, upper = self._sides[0][k], self._sides[1][k]  # sides minus the body's constant
        dual = DualMap(con)
        if con.equality or lower == upper:
            self.zero.append(((k, 1.0), lower))  # s = rhs - body = 0: A = a, b = rhs - const
            self.pending.append((dual, "zero", [(len(self.zero) - 1, -1.0)]))
            return True
        if upper < math.inf:  # s = upper - body >= 0: A = a
            self.nonneg.append(((k, 1.0), upper))
            self.pending.append((dual, "nonneg", [(len(self.nonneg) - 1, -1.0)]))
        if lower > -math.inf:  # s = body - lower >= 0: A = -a
            self.nonneg.append(((k, -1.0), -lower))
            self.pending.append((dual, "nonneg", [(len(self.nonneg) - 1, 1.0)]))
        return True

    def linear_rows(self, k0: int, k1: int) -> None:
        """The read linear rows ``k0 <= k < k1`` (in model order, as :meth:`linear_constraint` would add them one
        by one) added as two chunks of arrays, their duals as arrays
        (:func:`tpm_models.solvers.conic_rows.linear_rows`)."""
        if k1 <= k0:
            return
        zero, nonneg, zero_duals, nonneg_duals = linear_rows(self.linear.lower, self.linear.upper,
                                                             self.linear.equality, k0, k1)
        for kind, rows, chunk, (owner, factor) in (("zero", self.zero, zero, zero_duals),
                                                    ("nonneg", self.nonneg, nonneg, nonneg_duals)):
            self.row_duals.append((kind, owner, len(rows) + np.arange(len(chunk), dtype=np.int64), factor))
            rows.add_chunk(chunk)

    def atom_row(self, con: Any, read: tuple) -> bool:
        """A one-sided row linear in atoms already met (``read``: its :func:`~.expression_terms.atom_terms`;
        (23)'s margin rows at p = 2, ``x_i'w + theta - eps_i * norm_w + xi_i >= 0``) added as :meth:`constraint`
        would add it, without its dictionaries: one ``nonneg`` row in a :class:`~tpm_models.solvers.conic_rows.
        SparseRun`, its dual as arrays. ``False`` when the row is not such a row (then :meth:`constraint` reads it)."""
        lower, _, upper = con.to_bounded_expression(True)
        if (lower is None) == (upper is None):
            return False
        orient, bound = (1.0, float(upper)) if upper is not None else (-1.0, float(lower))
        if not math.isfinite(bound):
            return False
        cols, coefs, const, terms = read
        taus, weights = [], []
        for coef, node in terms:
            known = self.nodes.get(id(node))
            if known is None or (orient * coef < 0) != (known[1] in self.concave):
                return False  # a new node, or a term on the wrong side: constraint() reads it (or says why not)
            taus.append(known[1])
            weights.append(orient * coef)
        # the row g = orient * (body - bound) <= 0 as s = -g >= 0: A = orient * (a, atoms' coefficients)
        self.nonneg.append_sparse(list(cols) + taus, [orient * a for a in coefs] + weights, -(orient * (const - bound)))
        self.atom_duals[0].append(con)
        self.atom_duals[1].append(len(self.nonneg) - 1)
        self.atom_duals[2].append(-orient)
        return True

    def atom_block(self, block: AtomBlock) -> bool:
        """The rows of ``block`` (:class:`~.rows.AtomBlock`: (23)'s margin rows at p = 2) added as
        :meth:`atom_row` would add them one by one, as one :class:`~tpm_models.solvers.conic_rows.SparseChunk` of
        ``nonneg`` rows, their duals as arrays; ``False`` (nothing added) unless every row is one-sided with a finite
        side and the node is an atom already met, on the side of the row that keeps the row convex (then each row is
        read by :meth:`constraint`)."""
        known = self.nodes.get(id(block.node))
        upper_side, lower_side = np.isfinite(block.upper), np.isfinite(block.lower)
        if known is None or not (upper_side != lower_side).all() or \
                np.isnan(block.upper).any() or np.isnan(block.lower).any():
            return False
        tau = known[1]
        orient = np.where(upper_side, 1.0, -1.0)
        bound = np.where(upper_side, block.upper, block.lower)
        weights = orient * block.atom
        if ((weights < 0) != (tau in self.concave)).any():
            return False
        # each row: its linear terms (times orient), then the epigraph column of the node (atom_row's order)
        k = len(block.constraints)
        counts = np.diff(block.indptr)
        indptr = block.indptr + np.arange(k + 1, dtype=np.int64)
        last = indptr[1:] - 1
        indices = np.empty(indptr[-1], dtype=np.int64)
        data = np.empty(indptr[-1])
        linear = np.ones(indptr[-1], dtype=bool)
        linear[last] = False
        indices[linear] = block.cols
        data[linear] = np.repeat(orient, counts) * block.coefs
        indices[last] = tau
        data[last] = weights
        first = len(self.nonneg)
        self.nonneg.add_chunk(SparseChunk(indptr, indices, data, -(orient * (0.0 - bound))))
        self.atom_duals[0].extend(block.constraints)
        self.atom_duals[1].extend(range(first, first + k))
        self.atom_duals[2].extend((-orient).tolist())
        return True

    def constraint(self, con: Any, linear: bool = True) -> None:
        """Add the row ``con`` (module docstring); ``linear=False``: ``con`` is known not to be one of the read linear
        rows (one of ``self.linear.others``), so it is not looked up among them."""
        if linear and self.linear_constraint(con):
            return
        read = self.atom_rows.get(id(con))
        if read is not None and self.batched and self.atom_row(con, read):
            return
        where = f"constraint {con.name}"
        fast = None if read is None else self.fast_parts(con.body, where, read)
        quad, lin, atoms, const = self.parts(con.body, where) if fast is None else fast
        lower = None if con.lower is None else float(pyo.value(con.lower))
        upper = None if con.upper is None else float(pyo.value(con.upper))
        dual = DualMap(con)
        if con.equality or (lower is not None and upper is not None and lower == upper):
            if quad or atoms:
                raise NotConicError(f"{where}: a nonlinear equality is not convex")
            # a Pyomo equality has both bounds
            self.zero.append(({c: -a for c, a in lin.items()}, cast(float, lower) - const))  # s = rhs - body = 0
            self.pending.append((dual, "zero", [(len(self.zero) - 1, -1.0)]))
            return
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
                self.nonneg.append(({c: -a for c, a in g_lin.items()}, -g_const))  # s = -g >= 0
                self.pending.append((dual, "nonneg", [(len(self.nonneg) - 1, -orient)]))
                continue
            g_quad = {k: orient * a for k, a in quad.items()}
            dual.orient, dual.quad, dual.lin = orient, g_quad, g_lin
            dual.cone_start = self.quadratic_row(g_quad, g_lin, g_const, where)
            dual.cone_dim = self.blocks[dual.cone_start][0].dim
            self.pending.append((dual, "block", []))

    def quadratic_row(self, quad: dict, lin: dict, const: float, where: str) -> int:
        """:math:`g(x) \\le 0` with a quadratic part: returns its block's index."""
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
                if c0 > 0:
                    rows.append(({}, math.sqrt(c0)))
                return self.add_block(Cone(ConeKind.SOC, len(rows)), rows)
        rotated = self.rotated_row(quad, lin, const, where)
        if rotated is not None:
            return rotated
        # convex quadratic: |Fx|^2 <= u = -(l'x + c): (1 + u, 1 - u, 2Fx) in SOC
        F, g0, c0 = squares(quad, {}, 0.0, where)
        u_lin = {c: -a for c, a in lin.items()}
        rows = [(dict(u_lin), 1.0 - const), ({c: -a for c, a in u_lin.items()}, 1.0 + const)]
        rows += [({c: 2.0 * a for c, a in row.items()}, 0.0) for row in F]
        return self.add_block(Cone(ConeKind.SOC, len(rows)), rows)

    def rotated_row(self, quad: dict, lin: dict, const: float, where: str) -> int | None:
        r""":math:`\|Fx+g_0\|^2 + c_0 - b\,t\,s \le 0` with :math:`b > 0`, :math:`t, s \ge 0` bounds, :math:`t, s`
        in no other term (``x**2 <= t*s``, ``x*y >= 1``): :math:`(bt + s,\ bt - s,\ 2(Fx+g_0),\ 2\sqrt{c_0})
        \in \mathrm{SOC}`, since :math:`(bt+s)^2 - (bt-s)^2 = 4bts`. ``None`` if the row is not of this shape."""
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
        if c0 > 0:
            rows.append(({}, 2.0 * math.sqrt(c0)))
        return self.add_block(Cone(ConeKind.SOC, len(rows)), rows)

    # ---------------------------------------------------------------- the whole model
    def objective(self):
        objectives = list(self.model.component_data_objects(pyo.Objective, active=True))
        if len(objectives) != 1:
            raise NotConicError(f"the model must have exactly one active objective, it has {len(objectives)}")
        obj = objectives[0]
        sense = 1 if obj.sense == pyo.minimize else -1
        terms = self.program.linear_objective  # a linear objective ((26)-(29)), read fast
        if terms is not None:
            return sense, {}, summed(terms[0], terms[1]), terms[2]
        read = self.program.objective_terms
        fast = None if read is None else self.fast_parts(obj.expr, "the objective", read)
        quad, lin, atoms, const = self.parts(obj.expr, "the objective") if fast is None else fast
        for coef, col in atoms:
            if (sense * coef < 0) != (col in self.concave):
                raise NotConicError("the objective has a convex or concave term with the wrong sign (not convex)")
            lin[col] = lin.get(col, 0.0) + coef
        return sense, quad, lin, const

    def bounds(self) -> None:
        """The variables' bounds, column by column (:func:`tpm_models.solvers.conic_rows.bound_rows`)."""
        zero, nonneg = bound_rows(*self.program.bounds)
        self.zero.add_chunk(zero)
        self.nonneg.add_chunk(nonneg)
