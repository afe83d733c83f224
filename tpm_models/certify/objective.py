"""The objective's value and gradient at a model's loaded point, for the certificate
(:mod:`tpm_models.certify.certificate`), read on its own: a linear objective ((26)-(29)) and a quadratic one (the
duals' sums of ``K_ij * lam_i * lam_j``) term by term, an objective linear in shared nodes ((23)'s
``sum_i eps_i * norm_w``, :func:`tpm_models.certify.gradients.objective_terms`) with each node differentiated once
(:func:`tpm_models.certify.gradients.forward`), anything else by :func:`tpm_models.certify.gradients.gradient`.

Like :mod:`tpm_models.certify.gradients`, it never uses the solve path's readers (:mod:`tpm_models.solvers`), so a
misreading of the objective there fails the certificate (``tests/solvers/test_components.py``).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pyomo.core.base.var import VarData
from pyomo.core.expr import numeric_expr as ne

from tpm_models.certify.gradients import Kink, NotDifferentiable, constant_value, forward, gradient, objective_terms
from tpm_models.certify.norm_apex import norm_apex


def _is_product(node: Any) -> bool:
    """``node`` is a product of two variables (``x**2``, ``x*y``, ``(c*x)*y``), what :func:`_quadratic` reads."""
    if node.__class__ is ne.PowExpression:
        v, e = node.args
        return e.__class__ in (int, float) and e == 2 and getattr(v, "is_variable_type", lambda: False)()
    if node.__class__ is ne.ProductExpression:
        return all(getattr(a.args[1] if a.__class__ is ne.MonomialTermExpression else a, "is_variable_type",
                           lambda: False)() for a in node.args)
    return False


def _atom_objective(read: tuple | None, col: dict, n: int, memo: dict, x: np.ndarray, apexes: list | None = None
                    ) -> tuple[float, np.ndarray] | Literal[False] | None:
    """Value and gradient of an objective linear in nodes (:func:`~tpm_models.certify.gradients.objective_terms`: (23)'s
    ``sum_i eps_i * norm_w`` and ``0.5 * w_j**2``), each distinct node differentiated once with its coefficients
    summed; ``None`` at a kink of a node, ``False`` when the objective is not read so (then :func:`gradient`).
    ``read``: the objective's :func:`~tpm_models.certify.gradients.objective_terms`. ``apexes``: as in
    :func:`atom_rows_gradient`, ``(apex, coefficient)`` appended for a norm at zero."""
    if read is None:
        return False
    cols, coefs = np.asarray(read[0], dtype=np.int64), np.asarray(read[1], dtype=float)
    grad = np.zeros(n)
    np.add.at(grad, cols, coefs)
    value = read[2] + float(coefs @ x[cols])
    weights: dict[int, list] = {}
    for c, node in read[3]:
        weights.setdefault(id(node), [node, 0.0])[1] += c
    at_zero = []  # handed to apexes only when the objective is read so
    for node, c in weights.values():
        try:
            v, g = forward(node, col, memo)
        except Kink:
            apex = norm_apex(node, col, x) if apexes is not None else None
            if apex is None:
                return None
            value += c * apex.value
            at_zero.append((apex, c))
            continue
        except (NotDifferentiable, ArithmeticError, ValueError):
            return False
        value += c * v
        for k, d in g.items():
            grad[k] += c * d
    if not (math.isfinite(value) and np.isfinite(grad).all()):
        return False
    if at_zero and apexes is not None:  # at_zero holds apexes only when apexes is given
        apexes.extend(at_zero)
    return value, grad


class _NotQuadratic(Exception):
    pass


def _product_factor(a: Any, col: dict) -> tuple[float, int] | None:
    """``(coefficient, column)`` of a factor ``x`` or ``c * x`` of a product node (a free variable of ``col``)."""
    coef = 1.0
    if a.__class__ is ne.MonomialTermExpression:
        c, a = a._args_
        coef = constant_value(c)
    if a.__class__ is not VarData or a.fixed:
        return None
    k = col.get(id(a))
    return None if k is None else (coef, k)


def _products(read: tuple, col: dict) -> tuple[list, list, list] | None:
    """The products of two variables :func:`_quadratic` would read, taken from the atoms of ``read``
    (:func:`~tpm_models.certify.gradients.objective_terms`: ``(c, x**2)``, ``(c, (a*x)*(b*y))``) in their order, without
    walking the objective a second time; ``None`` when an atom is another node or holds a fixed variable (then
    :func:`_quadratic`)."""
    rows, cols, coefs = [], [], []
    for c, node in read[3]:
        if node.__class__ is ne.PowExpression:
            v, e = node.args
            square = _product_factor(v, col) if v.__class__ is VarData and e.__class__ in (int, float) and e == 2 \
                else None
            if square is None:
                return None
            u, w, factor = square, square, 1.0
        elif node.__class__ is ne.ProductExpression:
            first, second = _product_factor(node.args[0], col), _product_factor(node.args[1], col)
            if first is None or second is None:
                return None
            u, w, factor = first, second, first[0] * second[0]
        else:
            return None
        rows.append(u[1])
        cols.append(w[1])
        coefs.append(c * factor)
    return rows, cols, coefs


def _quadratic(expr: Any, scale: float, col: dict, out: tuple[list, list, list, list, list]) -> float:
    """Add ``scale * expr`` to ``out = (rows, cols, coefs, linear cols, linear coefs)`` of a quadratic read term by
    term (the duals' objectives: sums of ``K_ij * lam_i * lam_j``); returns its constant. :class:`_NotQuadratic`
    for anything else (then :func:`tpm_models.certify.gradients.forward` reads it)."""
    kind = type(expr)
    if isinstance(expr, (int, float)):
        return scale * expr
    if kind is ne.SumExpression or kind is ne.LinearExpression:
        total = 0.0
        rows, cols, coefs = out[0], out[1], out[2]
        lin_cols, lin_coefs = out[3], out[4]
        for a in expr.args:
            if type(a) is VarData and not a.fixed:  # (23)'s sum_i xi_i, 10^4+ terms, read inline
                lin_cols.append(col[id(a)])
                lin_coefs.append(scale)
                continue
            if type(a) is ne.ProductExpression:  # the duals' K_ij * lam_i * lam_j, read inline
                m, v = a._args_
                if type(m) is ne.MonomialTermExpression and isinstance(v, VarData) and not v.fixed:
                    c, u = m._args_
                    if not u.fixed:
                        rows.append(col[id(u)])
                        cols.append(col[id(v)])
                        coefs.append(scale * constant_value(c))
                        continue
            total += _quadratic(a, scale, col, out)
        return total
    if kind is ne.MonomialTermExpression:
        coef, v = expr._args_
        coef = constant_value(coef)  # (23) at p != 2: (sum_i eps_i) * norm_w, 10^5 parameters
        if v.fixed:
            return scale * coef * v._value
        out[3].append(col[id(v)])
        out[4].append(scale * coef)
        return 0.0
    if kind is ne.NegationExpression:
        return _quadratic(expr.args[0], -scale, col, out)
    if kind is ne.ProductExpression:
        a, b = expr.args
        if isinstance(a, (int, float)) or not a.is_potentially_variable():
            return _quadratic(b, scale * constant_value(a), col, out)  # (23): sum_i eps_i, read in one pass
        if isinstance(b, (int, float)) or not b.is_potentially_variable():
            return _quadratic(a, scale * constant_value(b), col, out)
        if type(a) is ne.MonomialTermExpression and b.is_variable_type() and not b.fixed and not a._args_[1].fixed:
            coef, u = a._args_
            out[0].append(col[id(u)])
            out[1].append(col[id(b)])
            out[2].append(scale * constant_value(coef))
            return 0.0
        if a.is_variable_type() and b.is_variable_type() and not a.fixed and not b.fixed:
            out[0].append(col[id(a)])
            out[1].append(col[id(b)])
            out[2].append(scale)
            return 0.0
        raise _NotQuadratic
    if kind is ne.PowExpression:
        v, e = expr.args
        if isinstance(e, (int, float)) and e == 2 and v.is_variable_type() and not v.fixed:
            out[0].append(col[id(v)])
            out[1].append(col[id(v)])
            out[2].append(scale)
            return 0.0
        raise _NotQuadratic
    if not expr.is_potentially_variable():
        return scale * constant_value(expr)
    if expr.is_variable_type():
        if expr.fixed:
            return scale * expr._value
        out[3].append(col[id(expr)])
        out[4].append(scale)
        return 0.0
    if expr.is_named_expression_type():
        return _quadratic(expr.expr, scale, col, out)
    raise _NotQuadratic


def objective_gradient(model: Any, objective: Any, col: dict, n: int, memo: dict, x: np.ndarray,
                       apexes: list | None = None) -> tuple[float, np.ndarray] | None:
    """The objective's value and gradient at ``x``; ``None`` where it has no derivative. ``apexes``: when a list, a
    node of an objective linear in nodes that is a Euclidean norm at zero is left out of the gradient and ``(apex,
    coefficient)`` appended to it (:func:`_atom_objective`)."""
    read = objective_terms(objective.expr, col)
    if read is not None and not read[3]:  # a linear objective ((26)-(29)): read fast
        cols, coefs = np.asarray(read[0], dtype=int), np.asarray(read[1], dtype=float)
        grad = np.bincount(cols, weights=coefs, minlength=n).astype(float)  # np.add.at's sums, in the same order
        return float(read[2] + coefs @ x[cols]), grad
    products = None if read is None else _products(read, col)  # every node a product of two free variables
    if read is not None and products is None and not all(_is_product(node) for _, node in read[3]):
        # a node that is not a product of two variables ((23)'s eps-weighted norm): not a quadratic, read as linear
        # in its nodes (the term-by-term quadratic reading below would fail on that node)
        atoms = _atom_objective(read, col, n, memo, x, apexes)
        if atoms is not False:
            return atoms
    constant: float | None
    if read is not None and products is not None:  # the products read from the atoms, the linear part as read
        out: tuple[list, list, list, list, list] = (*products, read[0], read[1])
        constant = read[2]
    else:
        out = ([], [], [], [], [])
        try:
            constant = _quadratic(objective.expr, 1.0, col, out)
        except _NotQuadratic:
            constant = None
    if constant is not None:  # vectorised: f = c + l'x + sum_k a_k x_i x_j, grad = l + sum_k a_k (x_j e_i + x_i e_j)
        qi, qj = np.asarray(out[0], dtype=int), np.asarray(out[1], dtype=int)
        qa, li, la = np.asarray(out[2], dtype=float), np.asarray(out[3], dtype=int), np.asarray(out[4], dtype=float)
        grad = np.zeros(n)
        np.add.at(grad, li, la)
        np.add.at(grad, qi, qa * x[qj])
        np.add.at(grad, qj, qa * x[qi])
        return float(constant + np.sum(la * x[li]) + np.sum(qa * (x[qi] * x[qj]))), grad  # not BLAS (its threads)
    atoms = _atom_objective(read, col, n, memo, x, apexes)
    if atoms is not False:
        return atoms
    walked = gradient(objective.expr, col, memo)
    if walked is None:
        return None
    value, walked_cols, vals = walked
    grad = np.zeros(n)
    np.add.at(grad, np.asarray(walked_cols, dtype=int), np.asarray(vals, dtype=float))
    return value, grad
