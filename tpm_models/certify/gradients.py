"""Values and gradients of a Pyomo model's expressions at its loaded point, for the certificate
(:mod:`tpm_models.certify.certificate`): forward differentiation with every node's result kept (:func:`forward`: the
builders share one node, the norm of (23), among thousands of terms and rows), linear bodies read term by term, rows
linear in shared nodes (:func:`objective_terms`) with each node differentiated once. A point where an expression has
no derivative raises :class:`Kink`. The objective's reading is :mod:`tpm_models.certify.objective`.

Every expression is read here, by this package's own code or Pyomo's (``reverse_ad``, ``value``), never by the solve
path's readers (:mod:`tpm_models.solvers`), so that a misreading there is not repeated here.
"""

from __future__ import annotations

import math
from typing import Any, Literal, NamedTuple

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp
from pyomo.common.numeric_types import native_numeric_types
from pyomo.core.base.param import ParamData
from pyomo.core.base.var import VarData
from pyomo.core.expr import numeric_expr as ne
from pyomo.core.expr.calculus.diff_with_pyomo import reverse_ad

from tpm_models.certify.norm_apex import AbsApex, NormApex, norm_apex
from tpm_models.certify.tolerances import FEASIBILITY_TOL
from tpm_models.models.row_blocks import param_values


def constant_value(c: Any) -> float:
    """The value of ``c``, a number or an expression without variables: a parameter's stored value and a flat sum of
    parameters ((23)-(29)'s :math:`\\sum_i \\varepsilon_i`, :math:`10^5` of them) read in one pass, anything else by
    Pyomo's ``value``."""
    cls = c.__class__
    if cls is float or cls is int:
        return float(c)
    if cls is ParamData:
        return float(c.value)
    if cls is ne.NPV_SumExpression and all(a.__class__ is ParamData for a in c.args):
        return float(sum(param_values(c.args)))
    return float(pyo.value(c))


class _Resume(NamedTuple):
    """The terms of a sum from ``start`` on, still to be read by :func:`objective_terms`."""

    args: Any
    start: int


def _variable_term(v: Any, c: float, col: dict, cols: list, coefs: list) -> float | None:
    """``c * v`` into ``cols``, ``coefs`` (returns 0.0), or its value when ``v`` is fixed; ``None`` when ``v`` is not
    a column of ``col``."""
    if v.fixed:
        return c * float(v.value)
    k = col.get(id(v))
    if k is None:
        return None
    cols.append(k)
    coefs.append(c)
    return 0.0


def objective_terms(expr: Any, col: dict) -> tuple[list[int], list[float], float, list[tuple[float, Any]]] | None:
    """``expr`` as ``constant + sum_k a_k x_k + sum_j c_j * node_j``: ``(columns, coefficients, constant,
    [(c_j, node_j)])``, sums, negations and constant factors taken apart, every other term a node (the same object
    wherever the model shares it: (23)'s norm); ``None`` when a variable is not a column of ``col``."""
    cols: list[int] = []
    coefs: list[float] = []
    nodes: list[tuple[float, Any]] = []
    const = 0.0
    stack: list[tuple[float, Any]] = [(1.0, expr)]
    while stack:
        c, e = stack.pop()
        kind = e.__class__
        if kind is _Resume or kind is ne.SumExpression or kind is ne.LinearExpression:
            # a sum's terms in order; its monomials and variables read here, the first other term walked (below)
            # before the rest of the sum resumes: the terms in the order of a walk of every term
            args, start = (e.args, e.start) if kind is _Resume else (e.args, 0)
            for k in range(start, len(args)):
                a = args[k]
                if a.__class__ is ne.MonomialTermExpression:
                    coef, v = a._args_
                    term = _variable_term(v, c * constant_value(coef), col, cols, coefs)
                elif a.__class__ is VarData:
                    term = _variable_term(a, c, col, cols, coefs)
                else:
                    if k + 1 < len(args):
                        stack.append((c, _Resume(args, k + 1)))
                    stack.append((c, a))
                    break
                if term is None:
                    return None
                const += term
        elif kind in native_numeric_types:
            const += c * float(e)
        elif kind is VarData or (hasattr(e, "is_variable_type") and e.is_variable_type()):
            term = _variable_term(e, c, col, cols, coefs)
            if term is None:
                return None
            const += term
        elif not e.is_potentially_variable():
            const += c * constant_value(e)
        elif kind is ne.NegationExpression:
            stack.append((-c, e.args[0]))
        elif (kind is ne.ProductExpression or kind is ne.MonomialTermExpression) and \
                not getattr(e.args[0], "is_potentially_variable", lambda: False)():
            stack.append((c * constant_value(e.args[0]), e.args[1]))
        elif e.is_named_expression_type():
            stack.append((c, e.expr))
        else:
            nodes.append((c, e))
    return cols, coefs, const, nodes


def linear_body(body: Any, col: dict) -> tuple[list[int], list[float], float, float] | None:
    """``(cols, coefs, constant, value at the point)`` of a body made of monomials, variables and constants only
    (how the builders write their rows: ``LinearExpression``), read without ``generate_standard_repn``; ``None``
    otherwise."""
    kind = type(body)
    if kind is not ne.LinearExpression and kind is not ne.SumExpression:
        return None
    cols, coefs, constant, value = [], [], 0.0, 0.0
    monomial = ne.MonomialTermExpression
    for a in body.args:
        kind = type(a)
        if kind is monomial:
            coef, v = a._args_
            coef = constant_value(coef)
        elif isinstance(a, (int, float)):
            constant += a
            continue
        elif a.is_variable_type():
            coef, v = 1.0, a
        elif not a.is_potentially_variable():
            constant += constant_value(a)
            continue
        else:
            return None
        x = v._value
        if v.fixed:
            constant += coef * x
            continue
        cols.append(col[id(v)])
        coefs.append(coef)
        value += coef * x
    return cols, coefs, constant, value + constant


class NotDifferentiable(ArithmeticError):
    """An expression with no derivative at the point (``abs`` or ``sqrt`` at 0), or a node this reader does not
    differentiate (then Pyomo's ``reverse_ad`` is asked)."""


class Kink(NotDifferentiable):
    """The point is where the expression has no derivative (``abs`` at 0, ``x**e`` with ``e < 1`` at 0 to the
    backend's accuracy): no other differentiator is asked, the row is not smooth there."""


_UNARY = {
    "sqrt": (math.sqrt, lambda a, v: 0.5 / v if v > 0 else math.inf),
    "exp": (math.exp, lambda a, v: v),
    "log": (math.log, lambda a, v: 1.0 / a),
}


def forward(expr: Any, col: dict, memo: dict) -> tuple[float, dict]:
    """The value and the (sparse) gradient of ``expr`` at the point, by forward differentiation with every node's
    result kept in ``memo`` (by node): the builders share one node (the norm of (23)) among thousands of terms and
    rows, which a tree walk (``generate_standard_repn``, ``reverse_ad``) would visit once per use."""
    if isinstance(expr, (int, float)):
        return float(expr), {}
    key = id(expr)
    hit = memo.get(key)
    if hit is not None:
        return hit[1], hit[2]
    if type(expr) is ne.LinearExpression:
        terms = linear_body(expr, col)
        if terms is not None:
            cols, coefs, _, value = terms
            grad: dict = {}
            for c, a in zip(cols, coefs):
                grad[c] = grad.get(c, 0.0) + a
            out = (value, grad)
            memo[key] = (expr, *out)  # the node is kept alive: its id cannot be reused by a temporary
            return out
    if not expr.is_potentially_variable():
        out = (constant_value(expr), {})
    elif expr.is_variable_type():
        out = (float(expr.value), {} if expr.fixed else {col[key]: 1.0})
    elif expr.is_named_expression_type():
        out = forward(expr.expr, col, memo)
    else:
        out = _node(expr, col, memo)
    memo[key] = (expr, *out)  # a row's body may be built on access: keeping it keeps its id its own
    return out


def _scaled(g: dict, c: float) -> dict:
    return {k: c * d for k, d in g.items()} if c != 1.0 else g


def _add(acc: dict, g: dict, c: float = 1.0) -> None:
    for k, d in g.items():
        acc[k] = acc.get(k, 0.0) + c * d


def _node(expr: Any, col: dict, memo: dict) -> tuple[float, dict]:
    kind = type(expr)
    if kind in (ne.SumExpression, ne.LinearExpression) or isinstance(expr, ne.SumExpression):
        total: float = 0.0
        grad: dict = {}
        for a in expr.args:
            v, g = forward(a, col, memo)
            total += v
            _add(grad, g)
        return total, grad
    if isinstance(expr, ne.NegationExpression):
        v, g = forward(expr.args[0], col, memo)
        return -v, _scaled(g, -1.0)
    if isinstance(expr, (ne.MonomialTermExpression, ne.ProductExpression)):
        (va, ga), (vb, gb) = (forward(a, col, memo) for a in expr.args)
        grad = _scaled(ga, vb)
        grad = dict(grad) if grad is ga else grad
        _add(grad, gb, va)
        return va * vb, grad
    if isinstance(expr, ne.DivisionExpression):
        (va, ga), (vb, gb) = (forward(a, col, memo) for a in expr.args)
        grad = dict(_scaled(ga, 1.0 / vb))
        _add(grad, gb, -va / vb**2)
        return va / vb, grad
    if isinstance(expr, ne.PowExpression):
        (va, ga), (ve, ge) = (forward(a, col, memo) for a in expr.args)
        value = va**ve
        if ge:
            raise NotDifferentiable("a variable exponent")
        if isinstance(value, complex):  # a negative base under a fractional power: no real value
            raise ArithmeticError(f"{va:g}**{ve:g} has no real value")
        if not ga:
            return value, {}
        if abs(va) <= FEASIBILITY_TOL and ve < 1:  # at x = 0 to the backend's accuracy: a derivative of
            raise Kink(f"x**{ve:g} at x = {va:.1g}")  # ~x**(ve-1) there says nothing about optimality
        return value, _scaled(ga, ve * va ** (ve - 1))
    if isinstance(expr, ne.AbsExpression):
        va, ga = forward(expr.args[0], col, memo)
        if abs(va) <= FEASIBILITY_TOL and ga:  # at its kink to the backend's accuracy (as sqrt and x**e below 1)
            raise Kink("abs at 0")
        return abs(va), _scaled(ga, 1.0 if va >= 0 else -1.0)
    if isinstance(expr, ne.UnaryFunctionExpression) and expr.getname() in _UNARY:
        f, df = _UNARY[expr.getname()]
        va, ga = forward(expr.args[0], col, memo)
        value = f(va)
        if not ga:
            return value, {}
        if expr.getname() == "sqrt" and abs(va) <= FEASIBILITY_TOL:  # at 0 to the backend's accuracy, as x**0.5
            raise Kink(f"sqrt at {va:.1g}")  # above: ~1/sqrt(x) there says nothing about optimality
        d = df(va, value)
        if not math.isfinite(d):
            raise Kink(f"{expr.getname()} at {va:g}")
        return value, _scaled(ga, d)
    raise NotDifferentiable(f"a {kind.__name__} node")


def gradient(expr: Any, col: dict, memo: dict) -> tuple[float, list[int], list[float]] | None:
    """The value of ``expr`` and its gradient by the model's unfixed variables (:func:`forward`, else Pyomo's
    ``reverse_ad``); ``None`` where it is not differentiable at the point (``abs`` at 0, ``sqrt`` at 0)."""
    try:
        value, grad = forward(expr, col, memo)
    except Kink:
        return None
    except NotDifferentiable:
        try:
            value, derivative = float(pyo.value(expr)), reverse_ad(expr)
        except Exception:  # noqa: BLE001  Pyomo's DifferentiationException, a ZeroDivisionError, a domain error
            return None
        grad = {col[id(v)]: float(d) for v, d in derivative.items() if id(v) in col}
    except (ArithmeticError, ValueError):  # a domain error: the row cannot be evaluated here
        return None
    if not (math.isfinite(value) and all(math.isfinite(d) for d in grad.values())):
        return None
    return value, list(grad), list(grad.values())


def atom_gradient(read: tuple, x: np.ndarray, col: dict, memo: dict
                  ) -> tuple[float, list[int], list[float]] | Literal[False] | None:
    """Value and gradient ``(value, columns, entries)`` of ``constant + a'x + sum_j c_j node_j``
    (:func:`objective_terms`) with each node's by :func:`forward` (kept in
    ``memo``); ``False`` at a kink of a node; ``None`` when a node is one :func:`forward` does not differentiate."""
    cols, coefs, const, atoms = read
    grad: dict = {}
    for c, a in zip(cols, coefs):
        grad[c] = grad.get(c, 0.0) + a
    value = const + float(np.dot(coefs, x[cols])) if cols else const
    for c, node in atoms:
        try:
            v, g = forward(node, col, memo)
        except Kink:
            return False
        except (NotDifferentiable, ArithmeticError, ValueError):
            return None
        value += c * v
        _add(grad, g, c)
    if not (math.isfinite(value) and all(math.isfinite(d) for d in grad.values())):
        return None
    return value, list(grad), list(grad.values())


def atom_rows_gradient(reads: list, x: np.ndarray, col: dict, memo: dict, n: int, apexes: list | None = None
                       ) -> tuple[np.ndarray, sp.csr_matrix, np.ndarray]:
    """:func:`atom_gradient` of many rows at once (``reads``: their
    :func:`objective_terms`; (23)'s
    margin rows at p = 2, ``x_i'w + theta - eps_i * norm_w + xi_i``, one per point, sharing one node): each distinct
    node differentiated once, the rows' values :math:`c + a^\top x + C v` and Jacobian :math:`L + C G` (:math:`L` the
    linear parts, :math:`C` the nodes' coefficients, :math:`v`, :math:`G` the nodes' values and gradients) as sparse
    products. Returns the values, the Jacobian's rows and each row's status: 0 read, 1 at a kink of a node
    (:func:`atom_gradient`'s ``False``), 2 not read so (a node :func:`forward` does not differentiate, or a value or
    derivative that is not finite: :func:`atom_gradient`'s ``None``).

    ``apexes``: when a list, a node at a kink that is a Euclidean norm at zero (:func:`tpm_models.certify.norm_apex.
    norm_apex`) is left out of the rows' Jacobian instead (their smooth parts: status 0), and ``(apex, rows,
    coefficients)`` is appended to it for the rows that hold it."""
    m = len(reads)
    indptr, cols, coefs, const = [0], [], [], np.empty(m)
    crow, cnode, ccoef = [], [], []
    nodes: dict[int, int] = {}
    node_list: list = []
    for i, (c_i, a_i, k_i, atoms) in enumerate(reads):
        cols.extend(c_i)
        coefs.extend(a_i)
        indptr.append(len(cols))
        const[i] = k_i
        for c, node in atoms:
            j = nodes.get(id(node))
            if j is None:
                j = nodes[id(node)] = len(node_list)
                node_list.append(node)
            crow.append(i)
            cnode.append(j)
            ccoef.append(c)
    L = sp.csr_matrix((np.asarray(coefs, dtype=float), np.asarray(cols, dtype=np.int64),
                       np.asarray(indptr, dtype=np.int64)), shape=(m, n))
    L.sum_duplicates()
    return _linear_in_nodes(L, const, np.asarray(crow, dtype=np.int64), np.asarray(cnode, dtype=np.int64),
                            np.asarray(ccoef, dtype=float), node_list, x, col, memo, n, apexes)


def atom_block_gradient(block: Any, x: np.ndarray, col: dict, memo: dict, n: int, apexes: list | None = None
                        ) -> tuple[np.ndarray, sp.csr_matrix, np.ndarray]:
    """:func:`atom_rows_gradient` of the rows of ``block`` (a :class:`~.rows.AtomBlock`: row ``k``
    is its linear terms plus ``atom[k] * node``) from its arrays, without a Python object a row: the same numbers
    (``apexes`` the same)."""
    m = len(block.constraints)
    L = block.linear(n)
    rows = np.arange(m, dtype=np.int64)
    return _linear_in_nodes(L, np.zeros(m), rows, np.zeros(m, dtype=np.int64), np.asarray(block.atom, dtype=float),
                            [block.node], x, col, memo, n, apexes)


def _linear_in_nodes(L: sp.csr_matrix, const: np.ndarray, crow: np.ndarray, cnode: np.ndarray, ccoef: np.ndarray,
                     node_list: list, x: np.ndarray, col: dict, memo: dict, n: int, apexes: list | None = None
                     ) -> tuple[np.ndarray, sp.csr_matrix, np.ndarray]:
    """Values :math:`c + Lx + Cv` and Jacobian :math:`L + CG` of rows linear in the nodes ``node_list`` (:math:`C`:
    ``ccoef`` at ``(crow, cnode)``), each node differentiated once, and each row's status
    (:func:`atom_rows_gradient`)."""
    m = L.shape[0]
    status = np.zeros(m, dtype=np.int8)
    value = np.zeros(len(node_list))
    gr: list[int] = []
    gc: list[int] = []
    gd: list[float] = []
    node_status = np.zeros(len(node_list), dtype=np.int8)
    at_zero: list[tuple[int, NormApex | AbsApex]] = []
    for j, node in enumerate(node_list):
        try:
            v, g = forward(node, col, memo)
        except Kink:
            apex = norm_apex(node, col, x) if apexes is not None else None
            if apex is None:
                node_status[j] = 1
            else:  # its value in the rows; its gradient left to the certificate (a subgradient)
                value[j] = apex.value
                at_zero.append((j, apex))
            continue
        except (NotDifferentiable, ArithmeticError, ValueError):
            node_status[j] = 2
            continue
        value[j] = v
        gr.extend([j] * len(g))
        gc.extend(g)
        gd.extend(g.values())
    np.maximum.at(status, crow, node_status[cnode])
    C = sp.csr_matrix((ccoef, (crow, cnode)), shape=(m, len(node_list)))
    G = sp.csr_matrix((np.asarray(gd, dtype=float), (np.asarray(gr, dtype=np.int64), np.asarray(gc, dtype=np.int64))),
                      shape=(len(node_list), n))
    with np.errstate(invalid="ignore", over="ignore"):
        values = const + L @ x + C @ value
        J = (L + C @ G).tocsr()
    bad = ~np.isfinite(values)
    finite = np.isfinite(J.data)
    if not finite.all():
        bad[np.repeat(np.arange(m), np.diff(J.indptr))[~finite]] = True
    status[(status == 0) & bad] = 2
    if at_zero and apexes is not None:  # at_zero holds apexes only when apexes is given
        Cc = C.tocsc()
        for j, apex in at_zero:
            rows, coefs = Cc.indices[Cc.indptr[j]:Cc.indptr[j + 1]], Cc.data[Cc.indptr[j]:Cc.indptr[j + 1]]
            smooth = status[rows] == 0
            apexes.append((apex, rows[smooth].astype(np.int64), coefs[smooth].astype(float)))
    return values, J, status
