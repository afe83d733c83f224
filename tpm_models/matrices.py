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

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from pyomo.repn import generate_standard_repn

from tpm_models.validation import check_nu_alpha


class NotAQPError(ValueError):
    """The model is not a QP with linear constraints; use an NLP/SOCP-capable solver."""


@dataclass
class QPMatrices:
    """A QP in matrix form; rows and columns keep references to the Pyomo components."""

    variables: list
    P: np.ndarray
    q: np.ndarray
    q0: float
    sense: int
    A: np.ndarray
    b: np.ndarray
    eq_constraints: list
    G: np.ndarray
    h_l: np.ndarray
    h_u: np.ndarray
    ineq_constraints: list
    x_l: np.ndarray
    x_u: np.ndarray

    def objective(self, x: np.ndarray) -> float:
        """The model's objective (in its own sense) at ``x``."""
        return self.sense * float(0.5 * x @ self.P @ x + self.q @ x + self.q0)


def _active_objective(model: pyo.ConcreteModel):
    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) != 1:
        raise ValueError(f"the model must have exactly one active objective, it has {len(objectives)}")
    return objectives[0]


def qp_matrices(model: pyo.ConcreteModel) -> QPMatrices:
    """Read ``model`` into :class:`QPMatrices` (raises :class:`NotAQPError` if it is not a QP)."""
    objective = _active_objective(model)
    variables = [v for v in model.component_data_objects(pyo.Var, descend_into=True) if not v.fixed]
    column = {id(v): k for k, v in enumerate(variables)}
    n = len(variables)

    repn = generate_standard_repn(objective.expr, quadratic=True)
    if repn.nonlinear_expr is not None:
        raise NotAQPError(f"objective of {model.name!r} is not quadratic")
    P, q = np.zeros((n, n)), np.zeros(n)
    for (u, v), coef in zip(repn.quadratic_vars, repn.quadratic_coefs):
        a, b = column[id(u)], column[id(v)]
        if a == b:
            P[a, a] += 2.0 * coef
        else:
            P[a, b] += coef
            P[b, a] += coef
    for v, coef in zip(repn.linear_vars, repn.linear_coefs):
        q[column[id(v)]] += coef
    sense = 1 if objective.sense == pyo.minimize else -1
    q0 = float(repn.constant)

    eq_rows, eq_rhs, eq_cons = [], [], []
    in_rows, in_lo, in_hi, in_cons = [], [], [], []
    for con in model.component_data_objects(pyo.Constraint, active=True, descend_into=True):
        crepn = generate_standard_repn(con.body, quadratic=False)
        if not crepn.is_linear():
            raise NotAQPError(f"constraint {con.name} of {model.name!r} is not linear")
        row = np.zeros(n)
        for v, coef in zip(crepn.linear_vars, crepn.linear_coefs):
            row[column[id(v)]] += coef
        shift = float(crepn.constant)
        lower = -np.inf if con.lower is None else float(pyo.value(con.lower)) - shift
        upper = np.inf if con.upper is None else float(pyo.value(con.upper)) - shift
        if con.equality:
            eq_rows.append(row)
            eq_rhs.append(lower)
            eq_cons.append(con)
        else:
            in_rows.append(row)
            in_lo.append(lower)
            in_hi.append(upper)
            in_cons.append(con)

    def bound(value, default):
        return default if value is None else float(pyo.value(value))

    return QPMatrices(
        variables=variables,
        P=sense * P,
        q=sense * q,
        q0=sense * q0,
        sense=sense,
        A=np.array(eq_rows).reshape(len(eq_rows), n),
        b=np.array(eq_rhs),
        eq_constraints=eq_cons,
        G=np.array(in_rows).reshape(len(in_rows), n),
        h_l=np.array(in_lo),
        h_u=np.array(in_hi),
        ineq_constraints=in_cons,
        x_l=np.array([bound(v.lb, -np.inf) for v in variables]),
        x_u=np.array([bound(v.ub, np.inf) for v in variables]),
    )


def dual_matrices(gram_own: np.ndarray, gram_other_own: np.ndarray, nu: float, alpha: float) -> QPMatrices:
    """The dual QP (4)/(5)/(12)/(13)/(16)/(19) in matrix form, from its two Gram blocks: the one source of truth.

    All six duals are one shape (``tpm_models._forms.dual``):

    .. math::
        \\max_\\lambda\\ -\\tfrac12\\lambda^\\top K_{oo}\\lambda + \\frac{\\nu}{m_o}e^\\top K_{\\bar oo}\\lambda
        \\quad\\text{s.t.}\\quad e^\\top\\lambda = \\nu,\\ \\ 0\\le\\lambda\\le\\frac{\\alpha}{m}

    with ``gram_own`` :math:`K_{oo} = K(X_{own}, X_{own})` and ``gram_other_own``
    :math:`K_{\\bar oo} = K(X_{other}, X_{own})`. Stored as :func:`qp_matrices` stores a maximisation
    (``sense = -1``, the minimisation of the negated objective):

    .. math::
        P = K_{oo},\\quad q = -\\frac{\\nu}{m_o}K_{\\bar oo}^\\top e,\\quad q_0 = 0,\\quad
        A = e^\\top,\\ b = \\nu,\\quad x_l = 0,\\ x_u = \\frac{\\alpha}{m}e,\\quad\\text{no rows } G.

    The Pyomo builders write their objective from these very numbers, and the estimators solve
    them directly (no Pyomo model): ``qp_matrices(build_dual_19(...))`` equals
    ``dual_matrices(...)``. ``variables`` and the constraint lists are empty (no Pyomo components).
    """
    nu, alpha = check_nu_alpha(nu, alpha)
    P = np.array(gram_own, dtype=float)
    G_oo = np.asarray(gram_other_own, dtype=float)
    m_own = P.shape[0]
    if P.shape != (m_own, m_own) or G_oo.ndim != 2 or G_oo.shape[1] != m_own or m_own == 0 or G_oo.shape[0] == 0:
        raise ValueError(f"Gram blocks of shapes {P.shape} and {G_oo.shape} do not fit the dual")
    return QPMatrices(
        variables=[],
        P=P,
        q=-(nu / G_oo.shape[0]) * G_oo.sum(axis=0),
        q0=0.0,
        sense=-1,
        A=np.ones((1, m_own)),
        b=np.array([nu]),
        eq_constraints=[],
        G=np.zeros((0, m_own)),
        h_l=np.zeros(0),
        h_u=np.zeros(0),
        ineq_constraints=[],
        x_l=np.zeros(m_own),
        x_u=np.full(m_own, alpha / m_own),
    )


def gram_blocks(kernel, X_own: np.ndarray, X_other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two Gram blocks of the duals, :math:`K(X_{own}, X_{own})` and :math:`K(X_{other}, X_{own})`
    (points as rows), computed as every dual builder and the estimators compute them."""
    return kernel.gram(X_own, X_own), kernel.gram(X_other, X_own)


def kernel_dual_matrices(kernel, X_own: np.ndarray, X_other: np.ndarray, nu: float, alpha: float) -> QPMatrices:
    """:func:`dual_matrices` of :func:`gram_blocks`: the dual QP of the points ``X_own`` against ``X_other``
    ((16)/(19) with :math:`X_c, X_{-c}`; (4)/(12) with :math:`X_+, X_-`; (5)/(13) with :math:`X_-, X_+`)."""
    return dual_matrices(*gram_blocks(kernel, X_own, X_other), nu, alpha)
