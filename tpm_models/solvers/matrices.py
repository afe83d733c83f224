"""The matrices of a Pyomo QP, for the dense QP solvers and the fast paths.

:func:`qp_matrices` reads a model with one quadratic objective and linear
constraints into

.. math::
    \\min_x\\ \\tfrac12 x^\\top P x + q^\\top x + q_0
    \\quad\\text{s.t.}\\quad A x = b,\\quad h_l \\le G x \\le h_u,\\quad x_l \\le x \\le x_u .

A maximisation is stored as the minimisation of the negated objective
(``sense = -1``: the model's objective equals ``sense * (1/2 x'Px + q'x + q0)``).
Nothing is reformulated: the matrices are the model's coefficients.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp
from pyomo.repn import generate_standard_repn

from tpm_models.qp import QPMatrices
from tpm_models.solvers.common import ModelError
from tpm_models.solvers.program import Program
from tpm_models.solvers.rows import to_csr
from tpm_models.solvers.variables import set_values

DENSE_MAX_BYTES = 2 * 1024**3
"""Largest dense matrix (bytes) :func:`qp_matrices` allocates: a model past it is refused before the allocation
(:class:`DenseTooLargeError`); read it with :func:`sparse_qp_matrices` instead."""


class DenseTooLargeError(MemoryError):
    """A dense matrix of the model would not fit (:data:`DENSE_MAX_BYTES`); the message says what to do instead."""


def check_dense_fits(rows: int, cols: int, what: str = "the model's matrices") -> None:
    """Raise :class:`DenseTooLargeError` before a dense ``rows`` x ``cols`` array past :data:`DENSE_MAX_BYTES`."""
    size = 8.0 * rows * cols
    if size > DENSE_MAX_BYTES:
        raise DenseTooLargeError(
            f"{what} as a dense {rows} x {cols} array would take {size / 1024**3:.1f} GB (limit "
            f"{DENSE_MAX_BYTES / 1024**3:.0f} GB, tpm_models.solvers.matrices.DENSE_MAX_BYTES): use a sparse "
            "solver (solver='default' or 'clarabel', or 'piqp' which reads large models sparsely) or "
            "tpm_models.solvers.matrices.sparse_qp_matrices")


class NotAQPError(ValueError):
    """The model is not a QP with linear constraints; use an NLP/SOCP-capable solver."""


def qp_matrices(model: pyo.ConcreteModel) -> QPMatrices:
    """Read ``model`` into :class:`QPMatrices` (raises :class:`NotAQPError` if it is not a QP)."""
    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) != 1:
        raise ValueError(f"the model must have exactly one active objective, it has {len(objectives)}")
    variables = [v for v in model.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
    column = {id(v): k for k, v in enumerate(variables)}
    n = len(variables)
    cons = list(model.component_data_objects(pyo.Constraint, active=True, descend_into=True))
    check_dense_fits(max(n, len(cons)), n)
    pr, pc, pd, lc, la, q0 = _repn_objective(objectives[0].expr, column, model.name)
    P, q = np.zeros((n, n)), np.zeros(n)
    np.add.at(P, (np.asarray(pr, dtype=np.int64), np.asarray(pc, dtype=np.int64)), np.asarray(pd, dtype=float))
    np.add.at(q, np.asarray(lc, dtype=np.int64), np.asarray(la, dtype=float))  # in the terms' order, as written
    sense = 1 if objectives[0].sense == pyo.minimize else -1
    M, lower, upper = np.zeros((len(cons), n)), np.zeros(len(cons)), np.zeros(len(cons))
    for k, con in enumerate(cons):
        cols, coefs, lower[k], upper[k] = _repn_row(con, column, model.name)
        np.add.at(M[k], np.asarray(cols, dtype=np.int64), np.asarray(coefs, dtype=float))
    eq = np.array([bool(con.equality) for con in cons], dtype=bool)
    return QPMatrices(
        variables=variables, P=sense * P, q=sense * q, q0=sense * q0, sense=sense,
        A=M[eq], b=lower[eq], eq_constraints=[c for c, e in zip(cons, eq) if e],
        G=M[~eq], h_l=lower[~eq], h_u=upper[~eq], ineq_constraints=[c for c, e in zip(cons, eq) if not e],
        x_l=np.array([-np.inf if v.lb is None else float(pyo.value(v.lb)) for v in variables], dtype=float),
        x_u=np.array([np.inf if v.ub is None else float(pyo.value(v.ub)) for v in variables], dtype=float))


def sparse_qp_matrices(model: pyo.ConcreteModel, program: Program | None = None) -> QPMatrices:
    """:func:`qp_matrices` with ``P`` (full, symmetric), ``A`` and ``G`` as ``scipy.sparse`` CSR matrices (the same
    numbers, rows and columns; ``program``: the solve's reading of ``model``)."""
    program = Program(model) if program is None else program
    try:
        objective = program.objective
    except ModelError as exc:
        raise ValueError(str(exc)) from exc
    sense = 1 if objective.sense == pyo.minimize else -1
    P, q, q0 = _sparse_objective(program, objective)
    cons, M, lower, upper, equality = _sparse_rows(program)
    eq = np.flatnonzero(equality)
    ineq = np.flatnonzero(~equality)
    x_l, x_u = program.bounds
    return QPMatrices(
        variables=program.free, P=sense * P, q=sense * q, q0=sense * q0, sense=sense,
        A=M[eq], b=np.asarray(lower, dtype=float)[eq], eq_constraints=[cons[k] for k in eq],
        G=M[ineq], h_l=np.asarray(lower, dtype=float)[ineq], h_u=np.asarray(upper, dtype=float)[ineq],
        ineq_constraints=[cons[k] for k in ineq], x_l=x_l, x_u=x_u,
    )


def dense_qp_matrices(model: pyo.ConcreteModel, program: Program | None = None) -> QPMatrices:
    """:func:`sparse_qp_matrices` with ``P``, ``A`` and ``G`` made dense (:class:`DenseTooLargeError` past
    :data:`DENSE_MAX_BYTES`): the same numbers, rows and columns as :func:`qp_matrices`."""
    qp = sparse_qp_matrices(model, program)
    n = len(qp.q)
    check_dense_fits(max(n, qp.A.shape[0] + qp.G.shape[0]), n)
    dense = {name: cast(sp.csr_matrix, getattr(qp, name)).toarray() for name in ("P", "A", "G")}  # sparse as read
    return dataclasses.replace(qp, **dense)


def _sparse_objective(program: Program, objective: Any) -> tuple[sp.csr_matrix, np.ndarray, float]:
    """``(P, q, q0)`` of the objective as written (``P`` full and symmetric): from its products
    (:attr:`~tpm_models.solvers.program.Program.quadratic_objective`), else Pyomo's standard representation."""
    column, n = program.column, program.n
    read = program.quadratic_objective
    q = np.zeros(n)
    pr: np.ndarray | list  # P's entries (rows, columns, values): arrays from the products, else lists from the repn
    pc: np.ndarray | list
    pd: np.ndarray | list
    if read is not None:
        qi, qj, qa, lc, la, q0 = read
        square = qi == qj
        pr = np.concatenate([qi[square], qi[~square], qj[~square]])
        pc = np.concatenate([qi[square], qj[~square], qi[~square]])
        pd = np.concatenate([2.0 * qa[square], qa[~square], qa[~square]])
        np.add.at(q, lc, la)
    else:
        pr, pc, pd, lc_read, la_read, q0 = _repn_objective(objective.expr, column, program.model.name)
        np.add.at(q, np.asarray(lc_read, dtype=np.int64), np.asarray(la_read, dtype=float))
    P = sp.csr_matrix((np.asarray(pd, dtype=float), (pr, pc)), shape=(n, n))
    P.sum_duplicates()
    return P, q, q0


def _sparse_rows(program: Program) -> tuple:
    """``(constraints, M, lower, upper, equality)`` of every active row in model order: the linear rows as read
    (:attr:`~tpm_models.solvers.program.Program.rows`), a row only Pyomo's walker reads (linear through a fixed
    variable, ...) by its standard representation; :class:`NotAQPError` if one is not linear."""
    rows, column, n, model = program.rows, program.column, program.n, program.model
    if not rows.others:
        return rows.constraints, rows.M, rows.lower, rows.upper, rows.equality
    cons, lower, upper, equality = list(rows.constraints), list(rows.lower), list(rows.upper), list(rows.equality)
    indptr, cols, coefs = [0], [], []
    for con in rows.others:
        row_cols, row_coefs, lo, up = _repn_row(con, column, model.name)
        cols += row_cols
        coefs += row_coefs
        indptr.append(len(cols))
        lower.append(lo)
        upper.append(up)
        equality.append(bool(con.equality))
        cons.append(con)
    M = sp.vstack([rows.M, to_csr(indptr, cols, coefs, (len(rows.others), n))], format="csr")
    order = {id(c): k for k, c in enumerate(model.component_data_objects(pyo.Constraint, active=True,
                                                                         descend_into=True))}
    perm = np.argsort([order[id(c)] for c in cons], kind="stable")
    return [cons[k] for k in perm], M[perm], np.asarray(lower)[perm], np.asarray(upper)[perm], \
        np.asarray(equality)[perm]


def _repn_objective(expr: Any, column: dict, name: str) -> tuple[list, list, list, list, list, float]:
    """``(rows, columns, values)`` of ``P`` (full and symmetric, in the order of the terms), the columns and
    coefficients of ``q``, and ``q0`` of a quadratic objective by Pyomo's standard representation;
    :class:`NotAQPError` if it is not quadratic."""
    repn = generate_standard_repn(expr, quadratic=True)
    if repn.nonlinear_expr is not None:
        raise NotAQPError(f"objective of {name!r} is not quadratic")
    pr: list[int] = []
    pc: list[int] = []
    pd: list = []
    for (u, v), coef in zip(repn.quadratic_vars, repn.quadratic_coefs):
        a, b = column[id(u)], column[id(v)]
        pr += [a] if a == b else [a, b]
        pc += [a] if a == b else [b, a]
        pd += [2.0 * coef] if a == b else [coef, coef]
    return pr, pc, pd, [column[id(v)] for v in repn.linear_vars], list(repn.linear_coefs), float(repn.constant)


def _repn_row(con: Any, column: dict, name: str) -> tuple[list[int], list[float], float, float]:
    """A linear row's columns, coefficients and sides less its constant by Pyomo's standard representation;
    :class:`NotAQPError` if it is not linear."""
    repn = generate_standard_repn(con.body, quadratic=False)
    if not repn.is_linear():
        raise NotAQPError(f"constraint {con.name} of {name!r} is not linear")
    shift = float(repn.constant)
    return ([column[id(v)] for v in repn.linear_vars], [float(c) for c in repn.linear_coefs],
            -np.inf if con.lower is None else float(pyo.value(con.lower)) - shift,
            np.inf if con.upper is None else float(pyo.value(con.upper)) - shift)


def dense_duals(qp: QPMatrices, eq: np.ndarray, ineq: np.ndarray) -> dict:
    """Map multipliers of the minimised form (d/d rhs of the minimum) to the model's sense."""
    duals = {con: qp.sense * float(val) for con, val in zip(qp.eq_constraints, eq)}
    duals.update({con: qp.sense * float(val) for con, val in zip(qp.ineq_constraints, ineq)})
    return duals


def load_values(qp: QPMatrices, x: np.ndarray) -> None:
    """Load the solution ``x`` (in the order of ``qp.variables``) into the model."""
    set_values(qp.variables, x)
