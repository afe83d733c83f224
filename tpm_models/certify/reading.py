"""The certificate's own reading of a model: every active row, the variables and the SOS constraints, read afresh
through Pyomo's machinery, never through the solve path's reader (:mod:`tpm_models.solvers.rows`) or its
:class:`~tpm_models.solvers.program.Program`.

So what the solve path misreads (a row dropped, a coefficient, a side or a cone read wrong) the certificate does not
read the same way: the backend then solved another model, and its point fails the certificate on this one.

==========================  ==================================================================================
what                        how it is read here
==========================  ==================================================================================
the components              :func:`tpm_models.solvers.components.read_components` (refused by name if not read)
the variables               ``component_data_objects(Var)`` of the model, unfixed ones as columns, and every
                            variable of another model a row holds (found by Pyomo's visitor) as one more column
a linear row                Pyomo's ``LinearRepnVisitor`` (the standard representation of Pyomo's writers):
                            coefficients, constant and sides, with mutable ``Param`` s and fixed variables at
                            their values
a row its builder recorded  the builder's own arrays (:mod:`tpm_models.models.row_blocks`: the numbers the row was
                            written from, kept only while the record still holds for the model as it is)
a nonlinear row             value and gradient by :mod:`tpm_models.certify.gradients` (forward differentiation of
                            the expression, else Pyomo's ``reverse_ad``)
``SOSConstraint``           its variables and weights, for the SOS conditions (:func:`sos_violation`)
==========================  ==================================================================================
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp
from pyomo.core.base.sos import SOSConstraint
from pyomo.core.expr import numeric_expr as ne
from pyomo.core.expr.visitor import identify_variables
from pyomo.repn.linear import LinearRepnVisitor
from pyomo.repn.util import FileDeterminism, FileDeterminism_to_SortComponents, VarRecorder

from tpm_models.certify.evaluation import pyomo_value
from tpm_models.certify.gradients import atom_block_gradient, atom_rows_gradient, gradient
from tpm_models.models.row_blocks import row_blocks

_VALUE = operator.attrgetter("value")


def real_value(expr: Any) -> float | None:
    """Pyomo's value of ``expr`` at the loaded point as a real number; ``None`` where it has none: an error, an unset
    variable, or a complex value (a negative base under a fractional power: Python's ``(-1e-20) ** -0.5`` is
    complex, and a perspective row ``a**q * r**(1-q)`` of an interior point's ``r`` 1e-20 below 0 gave one, which
    ``float()`` refused: (23) at p = 3, 10^5 points, class 2, nu = 1, eps = 0.1)."""
    try:
        value = pyo.value(expr, exception=False)
    except (ArithmeticError, ValueError, TypeError):
        return None
    if value is None or isinstance(value, complex):
        return None
    return float(value)


@dataclass
class CertificateRows:
    """Every active row, in model order: ``lower <= body <= upper`` with ``body = J x + constant`` for a linear
    row (its ``body`` NaN until the caller fills it from ``J``), ``body`` the row's value otherwise."""

    cons: list
    body: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    constant: np.ndarray
    J: sp.csr_matrix
    kinks: np.ndarray
    """The rows whose gradient does not exist at the point (their ``J`` rows are 0)."""
    norms: list = field(default_factory=list)
    """``(apex, rows, coefficients)``: a Euclidean norm at zero (:mod:`tpm_models.certify.norm_apex`) held by
    ``rows`` of a recorded block with those coefficients; their ``J`` rows are the rest of their gradient."""

    @property
    def smooth(self) -> bool:
        """Every row's gradient exists at the point."""
        return not self.kinks.any()


@dataclass
class _AtomRecord:
    """A recorded block of rows linear in one node, as :func:`tpm_models.certify.gradients.atom_block_gradient`
    reads it: row ``k`` is ``L[k] x + atom[k] * node``."""

    constraints: list
    indptr: np.ndarray
    cols: np.ndarray
    coefs: np.ndarray
    atom: np.ndarray
    node: object

    def linear(self, n: int) -> sp.csr_matrix:
        L = sp.csr_matrix((self.coefs, self.cols, self.indptr), shape=(len(self.constraints), n), copy=True)
        L.sum_duplicates()
        return L


def _value(con: Any) -> float:
    value = real_value(con.body)
    return math.inf if value is None else value


def model_columns(model: pyo.ConcreteModel) -> tuple[list, dict]:
    """The model's unfixed variables in model order and their columns ``{id(v): k}``, read afresh."""
    variables = [v for v in model.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
    return variables, {id(v): k for k, v in enumerate(variables)}


def _add_column(v: Any, variables: list, col: dict) -> None:
    if id(v) not in col and not v.fixed:
        col[id(v)] = len(variables)
        variables.append(v)


class _Reading:
    """The rows of a certificate as they are read: sides, constants, bodies, kinks and the Jacobian's triplets."""

    def __init__(self, cons: list):
        m = len(cons)
        self.cons, self.where = cons, {id(con): i for i, con in enumerate(cons)}
        self.lower, self.upper = np.full(m, -np.inf), np.full(m, np.inf)
        self.constant, self.body = np.zeros(m), np.full(m, np.nan)
        self.kinks, self.done = np.zeros(m, dtype=bool), np.zeros(m, dtype=bool)
        self.ri: list = []
        self.ci: list = []
        self.data: list = []
        self.norms: list = []

    def add(self, rows: np.ndarray, cols: Any, coefs: Any) -> None:
        """Jacobian entries ``(rows[k], cols[k]) = coefs[k]``."""
        self.ri.append(rows)
        self.ci.append(np.asarray(cols, dtype=np.int64))
        self.data.append(np.asarray(coefs, dtype=float))

    def kink(self, i: int) -> None:
        """Row ``i`` is not differentiable at the point: its body by Pyomo's evaluation."""
        self.body[i] = _value(self.cons[i])
        self.kinks[i] = True

    def gradients(self, at_rows: np.ndarray, values: np.ndarray, J: Any, status: np.ndarray, found_norms: list) -> None:
        """The bodies and Jacobian rows of ``at_rows`` read by a gradient reader (``status`` 0: read)."""
        for apex, local, coefs in found_norms:
            self.norms.append((apex, at_rows[local], coefs))
        ok = status == 0
        self.body[at_rows[ok]] = values[ok]
        coo = J.tocoo()
        keep = ok[coo.row]
        self.add(at_rows[coo.row[keep]], coo.col[keep], coo.data[keep])

    def rows(self, n: int) -> CertificateRows:
        m = len(self.cons)
        if self.ri:
            J = sp.csr_matrix((np.concatenate(self.data), (np.concatenate(self.ri), np.concatenate(self.ci))),
                              shape=(m, n))
        else:
            J = sp.csr_matrix((m, n))
        J.sum_duplicates()
        return CertificateRows(self.cons, self.body, self.lower, self.upper, self.constant, J, self.kinks, self.norms)


def read_rows(model: pyo.ConcreteModel, variables: list, col: dict, memo: dict) -> CertificateRows:
    """Every active row of ``model`` (module docstring), in model order. ``variables`` and ``col`` (from
    :func:`model_columns`) gain the variables of other models that rows hold; the values are read at the point
    loaded in the model once the rows are read (``memo``: the nodes' values and gradients, shared with the
    objective's)."""
    reading = _Reading(list(model.component_data_objects(pyo.Constraint, active=True, descend_into=True)))
    atom_records = _recorded_rows(model, reading, variables, col)
    nonlinear = _walked_rows(reading, variables, col)
    n = len(variables)
    x = np.array([v.value if v.value is not None else np.nan for v in variables], dtype=float)
    for at_rows, record in atom_records:
        found_norms: list = []
        values, J_atoms, status = atom_block_gradient(record, x, col, memo, n, found_norms)
        reading.gradients(at_rows, values, J_atoms, status, found_norms)
        for i in at_rows[status != 0].tolist():
            reading.kink(i)
    if nonlinear:  # rows linear in their nonlinear nodes, each distinct node differentiated once
        _node_rows(reading, nonlinear, x, col, memo, n)
    return reading.rows(n)


def _recorded_rows(model: pyo.ConcreteModel, reading: _Reading, variables: list, col: dict) -> list:
    """The rows of the builders' records (:func:`tpm_models.models.row_blocks.row_blocks`), where a record still
    holds for these very rows, read from its arrays; the blocks linear in a node returned as
    ``(rows, _AtomRecord)`` for their gradients."""
    atom_records: list[tuple[np.ndarray, _AtomRecord]] = []
    for block in row_blocks(model):
        at = [reading.where.get(id(r)) for r in block.rows]
        if not at or None in at or any(reading.done[cast(list[int], at)]):  # no None past `None in at`
            continue
        at_rows = np.asarray(at, dtype=np.int64)
        if not (np.diff(at_rows) == 1).all():
            continue
        for v in block.variables:
            _add_column(v, variables, col)
        read = block.read(block.rows, col)
        if read is None:
            continue
        cols, coefs, atoms = read
        if atoms is not None:
            atom_records.append((at_rows, _AtomRecord(block.rows, block.indptr, np.asarray(cols, dtype=np.int64),
                                                      np.asarray(coefs, dtype=float), np.asarray(atoms, dtype=float),
                                                      cast(Any, block.atom).expr)))  # typed object there
        else:
            reading.add(np.repeat(at_rows, np.diff(block.indptr)), cols, coefs)
        reading.lower[at_rows], reading.upper[at_rows] = block.lower, block.upper
        reading.done[at_rows] = True
    return atom_records


def _walked_rows(reading: _Reading, variables: list, col: dict) -> list[tuple]:
    """The other rows by Pyomo's ``LinearRepnVisitor``: the linear ones into ``reading``, the others returned as
    ``(row, linear columns, coefficients, constant, [(coefficient, node)])``."""
    visitor = LinearRepnVisitor({}, var_recorder=VarRecorder({}, FileDeterminism_to_SortComponents(
        FileDeterminism.ORDERED)))
    found = visitor.var_recorder.var_map
    seen = 0  # the visitor's variables already looked at (it adds each component's variables when it meets one)
    nonlinear: list[tuple] = []
    for i in np.flatnonzero(~reading.done).tolist():
        con = reading.cons[i]
        lo, up = con.lb, con.ub
        if lo is not None:
            reading.lower[i] = lo
        if up is not None:
            reading.upper[i] = up
        repn = visitor.walk_expression(con.body)
        if len(found) > seen:
            for v in list(found.values())[seen:]:
                _add_column(v, variables, col)
            seen = len(found)
        scale = float(repn.multiplier)
        if repn.nonlinear is not None:
            for v in identify_variables(repn.nonlinear, include_fixed=False):
                _add_column(v, variables, col)
            keys = list(repn.linear)
            nonlinear.append((i, [col[k] for k in keys], [scale * float(c) for c in repn.linear.values()],
                              scale * float(repn.constant), _node_terms(repn.nonlinear, scale)))
            continue
        reading.constant[i] = scale * float(repn.constant)
        if repn.linear:
            keys = list(repn.linear)
            reading.add(np.full(len(keys), i, dtype=np.int64), [col[k] for k in keys],
                        scale * np.fromiter(repn.linear.values(), dtype=float, count=len(keys)))
    return nonlinear


def _node_rows(reading: _Reading, nonlinear: list[tuple], x: np.ndarray, col: dict, memo: dict, n: int) -> None:
    """The rows linear in nodes: each distinct node differentiated once (:func:`atom_rows_gradient`); a node at a
    kink, a kinked row; a node the forward reader does not differentiate, by Pyomo's own (:func:`gradient`)."""
    at_rows = np.array([row[0] for row in nonlinear], dtype=np.int64)
    found_norms: list = []
    values, J_nodes, status = atom_rows_gradient([row[1:] for row in nonlinear], x, col, memo, n, found_norms)
    reading.gradients(at_rows, values, J_nodes, status, found_norms)
    for i in at_rows[status == 1].tolist():  # a node at a kink
        reading.kink(i)
    for i in at_rows[status == 2].tolist():
        read = gradient(reading.cons[i].body, col, memo)
        if read is None:
            reading.kink(i)
            continue
        reading.body[i], cols, coefs = read
        reading.add(np.full(len(cols), i, dtype=np.int64), cols, coefs)


def _node_terms(expr: Any, scale: float) -> list[tuple[float, object]]:
    """``scale * expr`` (the nonlinear part of a row, as Pyomo's visitor returns it) as ``[(coefficient, node)]``:
    a sum split into its terms, a constant factor or a negation taken out of each, so that a node shared by many
    rows (a named expression, the norm of (23)) is one node."""
    out: list[tuple[float, object]] = []
    stack = [(scale, expr)]
    while stack:
        c, e = stack.pop()
        kind = e.__class__
        if kind is ne.SumExpression or kind is ne.LinearExpression:
            stack.extend((c, a) for a in reversed(e.args))
        elif kind is ne.NegationExpression:
            stack.append((-c, e.args[0]))
        elif (kind is ne.ProductExpression or kind is ne.MonomialTermExpression) and \
                not getattr(e.args[0], "is_potentially_variable", lambda: False)():
            stack.append((c * float(pyo.value(e.args[0])), e.args[1]))
        elif kind is ne.DivisionExpression and not getattr(e.args[1], "is_potentially_variable", lambda: False)():
            stack.append((c / float(pyo.value(e.args[1])), e.args[0]))
        else:
            out.append((c, e))
    return out


OBJECTIVE_TOL = 1e-9
"""Largest difference, relative to :math:`\\max(1, |f|)`, between the certificate's objective value at the point and
Pyomo's own evaluation of the objective there (the two sum the same terms in other orders: 1e-16 a term)."""

DIRECTION_TOL = 1e-6
"""Largest difference, relative to :math:`\\max(1, \\|\\nabla f\\|_2, |f|)`, between the certificate's directional
derivative :math:`\\nabla f^\\top d` and Pyomo's central difference :math:`(f(x + hd) - f(x - hd)) / 2h` along a fixed
random unit direction: exact up to rounding for a linear or quadratic objective (1e-12 at :data:`STEP`), up to
:math:`h^2 |f'''| / 6` otherwise."""

STEP = 1e-4
"""The central difference's step :math:`h`, times :math:`\\max(1, \\|x\\|_\\infty)`."""

DIRECTION_MAX_COLUMNS = 20_000
"""Up to this many columns the objective's gradient is checked against Pyomo's central difference (the objective
evaluated at four more points, in the same walk as its value when :func:`joint_values` can); above, its value only
(one evaluation)."""


def objective_disagrees(objective: Any, variables: list, x: np.ndarray, f: float, grad: np.ndarray,
                        smooth: bool) -> str | None:
    """Why the certificate's objective (value ``f`` and gradient ``grad`` at ``x``, read by
    :mod:`tpm_models.certify.gradients`) is not the model's, judged by Pyomo's own evaluation of the objective
    expression; ``None`` when they agree (:data:`OBJECTIVE_TOL`, :data:`DIRECTION_TOL`) or Pyomo cannot evaluate it
    there (:func:`tpm_models.certify.evaluation.pyomo_value`: ``pyo.value``'s number, its leaves read in one pass).
    ``smooth``: no node of the objective at a kink (the central difference means something). The value and the
    central differences are one walk of the expression when :func:`joint_values` gives them, else one walk a point."""
    n = len(variables)
    direction = smooth and 0 < n <= DIRECTION_MAX_COLUMNS
    d = np.random.default_rng(0).standard_normal(n)
    if direction:
        d /= np.linalg.norm(d)
    h = STEP * max(1.0, float(np.abs(x).max(initial=0.0)))
    steps = (h, h / 100)  # a kink within h of the point bends the first difference, not a second, shorter one
    joint = joint_values(objective, variables, x, d, (0.0, h, -h, h / 100, -h / 100)) if direction else None
    try:
        value = joint[0] if joint else float(pyomo_value(objective.expr))
    except (ArithmeticError, ValueError):
        return None
    if not math.isfinite(value):
        return None
    if abs(value - f) > OBJECTIVE_TOL * max(1.0, abs(f)):
        return f"the objective read at the point ({f:.12g}) is not Pyomo's evaluation of it ({value:.12g})"
    if not direction:
        return None
    derivative = float(grad @ d)
    scale = DIRECTION_TOL * max(1.0, float(np.linalg.norm(grad)), abs(f))
    difference = math.nan
    for k, step in enumerate(steps):
        difference = (joint[1 + 2 * k] - joint[2 + 2 * k]) / (2 * step) if joint \
            else _central_difference(objective, variables, x, d, step)
        if not math.isfinite(difference) or abs(difference - derivative) <= scale:
            return None
    return (f"the objective's gradient read at the point is not Pyomo's: along a direction {derivative:.6g}, "
            f"Pyomo's central difference {difference:.6g}")


def joint_values(objective: Any, variables: list, x: np.ndarray, d: np.ndarray,
                 steps: tuple[float, ...]) -> list[float] | None:
    """Pyomo's evaluation of the objective at :math:`x + s d` for every ``s`` of ``steps`` in one walk of the
    expression (:func:`tpm_models.certify.evaluation.pyomo_value`): every variable holds the array of its values
    at the points, and each node applies to each entry the
    operation it applies to one float (the same IEEE operations, in the same order, as one walk a point). The
    variables' values are put back as they were. ``None`` unless the walk gives one finite float a point (a node
    that takes one float only, such as a function or a branch, or a point where Pyomo has no value): the caller
    then walks once a point, as before."""
    points = np.asarray(steps, dtype=float)
    try:
        with np.errstate(all="ignore"):
            for v, xv, dv in zip(variables, x.tolist(), d.tolist()):
                v.set_value(xv + points * dv, skip_validation=True)
            joint = pyomo_value(objective.expr)
        if isinstance(joint, np.ndarray) and joint.shape == points.shape and bool(np.all(np.isfinite(joint))):
            return [float(value) for value in joint]
        return None
    except Exception:  # noqa: BLE001  (a node that refuses an array: the caller walks once a point)
        return None
    finally:
        for v, xv in zip(variables, x.tolist()):
            v.set_value(xv, skip_validation=True)


def _central_difference(objective: Any, variables: list, x: np.ndarray, d: np.ndarray, h: float) -> float:
    """:math:`(f(x + hd) - f(x - hd)) / 2h` by Pyomo's evaluation (NaN where it has no value); the variables' values
    put back as they were."""
    sides = []
    try:
        for step in (h, -h):
            for v, xv, dv in zip(variables, x.tolist(), d.tolist()):
                v.set_value(xv + step * dv, skip_validation=True)
            sides.append(float(pyomo_value(objective.expr)))
    except (ArithmeticError, ValueError):
        return math.nan
    finally:
        for v, xv in zip(variables, x.tolist()):
            v.set_value(xv, skip_validation=True)
    return (sides[0] - sides[1]) / (2 * h)


def sos_violation(model: pyo.ConcreteModel, tol: float) -> tuple[float, str]:
    """The largest violation of an active SOS constraint at the point: for SOS1 the second-largest ``|x|`` of its
    variables (at most one may be nonzero); for SOS2 the largest ``|x|`` outside the best pair of neighbours in
    weight order (at most two, adjacent). Values within ``tol`` of zero count as zero. Returns it and the
    constraint's name (``0.0, ""`` without any)."""
    worst, name = 0.0, ""
    for con in model.component_data_objects(SOSConstraint, active=True, descend_into=True):
        pairs = list(con.get_items())
        if not pairs:
            continue
        pairs.sort(key=lambda vw: vw[1])
        values = np.abs(np.array([v.value if v.value is not None else np.inf for v, _ in pairs], dtype=float))
        values[values <= tol] = 0.0
        if con.level == 1:
            viol = float(np.sort(values)[-2]) if len(values) > 1 else 0.0
        else:
            best = 0.0
            for k in range(len(values)):
                outside = np.delete(values, [k, k + 1] if k + 1 < len(values) else [k])
                best_k = float(outside.max(initial=0.0))
                best = best_k if k == 0 else min(best, best_k)
            viol = best
        if viol > worst:
            worst, name = viol, con.name
    return worst, name
