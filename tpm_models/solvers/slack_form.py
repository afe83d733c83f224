"""QPs whose dual is a box and one equality: recognised in a program, their dual's data, their primal recovered.

A QP is of this shape when, after each row is written as :math:`\\ge` (a :math:`\\le` row negated),

.. math::
    \\min_{w,\\theta,\\xi}\\ \\tfrac12 w^\\top D w + g^\\top w + h\\,\\theta + \\sum_i c_i\\xi_i
    \\quad\\text{s.t.}\\quad a_i^\\top w + \\kappa\\,\\theta + s_i\\xi_i \\ge 0,\\ \\ \\xi_i \\ge 0,

with :math:`D` diagonal and positive (:math:`w` free), one free :math:`\\theta` with the same :math:`\\kappa \\ne 0` in
every row, one slack :math:`\\xi_i \\ge 0` of its own in each row (:math:`s_i > 0`), every right-hand side zero and
all :math:`u = c_i/s_i` equal: (15), (2), (3). Its dual, with :math:`\\hat a_i = D^{-1/2}a_i`,
:math:`\\hat g = D^{-1/2}g`, is :math:`\\min_\\lambda \\tfrac12\\|\\hat A^\\top\\lambda - \\hat g\\|^2` s.t.
:math:`e^\\top\\lambda = \\nu := h/\\kappa`, :math:`0 \\le \\lambda \\le u`, the QP of
:func:`tpm_models.solvers.linear_dual.solve_linear_dual`;
:math:`w = D^{-1/2}(\\hat A^\\top\\lambda - \\hat g)`, :math:`\\theta` by errata 5's rule on the scores
:math:`G_i = a_i^\\top w` (:func:`tpm_models.models.recovery.kkt_theta`) and
:math:`\\xi_i = \\max(0, -(G_i + \\kappa\\theta))/s_i`. When :math:`\\nu < 0` or :math:`\\nu > m u` the dual has no
point and the QP is unbounded: its rows hold at :math:`w = 0, \\theta = 0, \\xi = 0`, and the ray
:math:`\\kappa\\,d\\theta = -1, d\\xi = 1/s` (:math:`\\nu > mu`) or :math:`\\kappa\\,d\\theta = 1` (:math:`\\nu < 0`)
lowers the objective without end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp

from tpm_models.models.recovery import kkt_theta
from tpm_models.solvers.matrices import NotAQPError, check_dense_fits
from tpm_models.solvers.program import Program

UNIFORM_TOL = 1e-12
"""Relative spread of the bounds :math:`u_i = c_i/s_i` (and of the coefficients :math:`\\kappa`) taken as equal."""


@dataclass(frozen=True)
class SlackForm:
    """A QP of the module's shape, as its dual's data and the map back to the program's columns and rows.

    ``A_hat`` (:math:`m\\times k`, dense) and ``g_hat``: :math:`\\hat A`, :math:`\\hat g`; ``nu``, ``u``: the
    dual's :math:`\\nu` and bound; ``w``: the columns of :math:`w` and ``scale`` their :math:`D^{-1/2}`;
    ``theta`` and ``kappa``: :math:`\\theta`'s column and coefficient; ``slack`` and ``slack_coef``: each row's slack
    column and :math:`s_i`; ``row_sign``: +1 for a row written :math:`\\ge`, -1 for one negated; ``sense``: +1 for a
    minimisation; ``unbounded``: why the QP is unbounded (the dual has no point), else ``None``."""

    program: Program
    A_hat: np.ndarray
    g_hat: np.ndarray
    nu: float
    u: float
    w: np.ndarray
    scale: np.ndarray
    theta: int
    kappa: float
    slack: np.ndarray
    slack_coef: np.ndarray
    row_sign: np.ndarray
    sense: int
    unbounded: str | None

    def point(self, lam: np.ndarray, scores: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, str]:
        """The primal point (in the program's columns) of the dual solution ``lam``, its scores ``scores``
        (:math:`\\hat A v`) and ``v`` (:math:`\\hat A^\\top\\lambda - \\hat g`), and the rule that chose
        :math:`\\theta` (module docstring)."""
        x = np.zeros(self.program.n)
        x[self.w] = self.scale * v
        sign = 1 if self.kappa > 0 else -1
        theta, _, _, rule = kkt_theta(-scores / self.kappa, lam, self.u, sign)
        x[self.theta] = theta
        x[self.slack] = np.maximum(0.0, -(scores + self.kappa * theta)) / self.slack_coef
        return x, rule

    def duals(self, lam: np.ndarray) -> dict:
        """The rows' duals in the library's convention (d optimum / d right-hand side of the model as written):
        :math:`\\lambda_i` for a :math:`\\ge` row of a minimisation, :math:`-\\lambda_i` for a :math:`\\le` one, negated
        for a maximisation."""
        values = self.sense * self.row_sign * lam
        return {con: float(value) for con, value in zip(self.program.rows.constraints, values)}


def _objective(program: Program) -> tuple[np.ndarray, np.ndarray, int]:
    """``(d, q, sense)``: the diagonal of the minimised objective's Hessian and its linear coefficients."""
    read = program.quadratic_objective
    if read is None:
        raise NotAQPError("its objective is not a sum of squares and products of columns")
    qi, qj, qa, lc, la, _ = read
    if (qi != qj).any():
        raise NotAQPError("its objective multiplies two different columns (the dual of this shape needs a diagonal "
                          "Hessian)")
    sense = 1 if program.objective.sense == pyo.minimize else -1
    d, q = np.zeros(program.n), np.zeros(program.n)
    np.add.at(d, qi, 2.0 * sense * np.asarray(qa, dtype=float))
    np.add.at(q, lc, sense * np.asarray(la, dtype=float))
    if (d < 0).any():
        raise NotAQPError("its objective is not convex (a negative square)")
    return d, q, sense


def _rows(program: Program) -> tuple[sp.csc_matrix, np.ndarray]:
    """The rows as :math:`\\ge 0` rows (CSC) and each row's sign (+1 kept, -1 negated)."""
    rows = program.rows
    if rows.others:
        raise NotAQPError(f"its row {rows.others[0].name} is not linear")
    if rows.M.shape[0] == 0:
        raise NotAQPError("it has no rows")
    if rows.equality.any():
        raise NotAQPError("it has equality rows")
    lower, upper = np.asarray(rows.lower, dtype=float), np.asarray(rows.upper, dtype=float)
    at_least, at_most = np.isfinite(lower) & np.isposinf(upper), np.isneginf(lower) & np.isfinite(upper)
    if not (at_least | at_most).all():
        raise NotAQPError("a row has two sides or none")
    sign = np.where(at_least, 1.0, -1.0)
    if (np.where(at_least, lower, upper) != 0.0).any():
        raise NotAQPError("a row has a nonzero right-hand side (the dual of this shape has no linear term)")
    return sp.csc_matrix(sp.diags(sign) @ rows.M), sign


def _one_per_row(M: sp.csc_matrix, slack: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's slack column and its coefficient, or :class:`NotAQPError`."""
    block = M[:, slack]
    if (np.diff(block.indptr) != 1).any() or len(slack) != m:
        raise NotAQPError("the bounded columns outside the objective's squares are not one slack a row")
    rows, coefs = block.indices, block.data
    if len(np.unique(rows)) != m:
        raise NotAQPError("a row has two slack columns")
    if (coefs <= 0).any():
        raise NotAQPError("a slack enters its row with a nonpositive coefficient")
    order = np.argsort(rows)
    return slack[order], coefs[order]


def slack_form(program: Program) -> SlackForm:
    """The :class:`SlackForm` of the program's model (module docstring), read off the program (no matrix of the QP
    built for a model it refuses), or :class:`NotAQPError` naming the first part of the shape it lacks."""
    d, q, sense = _objective(program)
    M, row_sign = _rows(program)
    m = M.shape[0]
    x_l, x_u = program.bounds
    square = d > 0
    free = np.isneginf(x_l) & np.isposinf(x_u)
    if not free[square].all():
        raise NotAQPError("a column of the objective's squares has a bound")
    theta = np.flatnonzero(~square & free)
    slack = np.flatnonzero(~square & ~free)
    if len(theta) != 1:
        raise NotAQPError(f"it has {len(theta)} free columns outside the objective's squares (this shape has one)")
    if not ((x_l[slack] == 0.0) & np.isposinf(x_u[slack])).all():
        raise NotAQPError("a column outside the objective's squares has bounds other than [0, inf)")
    slack, slack_coef = _one_per_row(M, slack, m)
    kappas = M[:, theta].toarray().ravel()
    kappa = float(kappas[0])
    if kappa == 0.0 or np.abs(kappas - kappa).max() > UNIFORM_TOL * abs(kappa):
        raise NotAQPError("the free column is not in every row with one coefficient")
    bounds = q[slack] / slack_coef
    u = float(bounds.max())
    if bounds.min() < 0 or u - bounds.min() > UNIFORM_TOL * u:
        raise NotAQPError("the slacks' costs over their coefficients are not one nonnegative number")
    w = np.flatnonzero(square)
    check_dense_fits(m, len(w), "the rows' coefficients on the objective's squares")
    scale = 1.0 / np.sqrt(d[w])
    A_hat = np.ascontiguousarray(M[:, w].toarray() * scale)
    nu = float(q[theta[0]]) / kappa
    unbounded = None
    if nu < 0 or nu > m * u * (1 + UNIFORM_TOL):
        unbounded = (f"its dual has no point (e'lam = {nu:.6g} with 0 <= lam <= {u:.6g} on {m} rows): the rows hold at "
                     "0, and moving the free column with the slacks (module docstring) lowers the objective without "
                     "end")
    elif nu == 0:
        raise NotAQPError("its dual's equality is e'lam = 0 (the free column has no cost)")
    return SlackForm(program, A_hat, q[w] * scale, nu, u, w, scale, int(theta[0]), kappa, slack, slack_coef,
                     row_sign, sense, unbounded)
