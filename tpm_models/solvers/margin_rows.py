"""The margin rows of a conic form, each with a slack of its own: recognised, left out of a run where a point's side
is known, and put back (the working set of the ``working-set`` backend, :mod:`tpm_models.solvers.backends.working_set`).

A conic form (:mod:`tpm_models.solvers.cones`: rows :math:`s = b - Ax \\in \\mathcal K`) has *margin rows* when some
of its columns :math:`\\xi_i` are each in exactly two rows, both ``nonneg``: its bound :math:`\\xi_i \\ge 0` and one
row of its own, :math:`r_i(y) + c_i\\xi_i \\ge 0` with :math:`c_i > 0`, where :math:`y` are the form's other columns
(the *core*: :math:`w, \\theta` and the cones' columns) and :math:`r_i(y) = b_i - A_{i,y}y`; :math:`\\xi_i` costs
:math:`q_i \\ge 0` and is not in ``P``. The paper's margin rows are so: (15)'s, (23)'s for every p, (26)-(29)'s,
:math:`{x^i}^\\top w + \\theta - \\varepsilon_i\\|w\\|_{p'} + \\xi_i \\ge 0`, with per-point radii too.

At the optimum :math:`\\xi_i = \\max(0, -r_i(y))/c_i`, and the row's multiplier :math:`\\lambda_i \\in [0, u_i]`,
:math:`u_i = q_i/c_i`, is 0 where :math:`r_i > 0` and :math:`u_i` where :math:`r_i < 0`. So given a partition of the
rows into a working set :math:`W`, rows taken as loose (:math:`L`: left out) and rows taken as violated (:math:`U`:
left out, their cost :math:`u_i(-r_i(y))` kept, linear in :math:`y`), the form on :math:`y` and :math:`W`'s slacks
(:meth:`MarginRows.reduced`) is a relaxation of the whole (:math:`u_i\\max(0, -r_i) \\ge 0` and
:math:`\\ge -u_i r_i`). When its solution puts every row of :math:`L` at :math:`r_i \\ge 0` and of :math:`U` at
:math:`r_i \\le 0`, the whole form's point and duals (:meth:`MarginRows.whole`: :math:`\\xi` as above,
:math:`\\lambda_L = 0`, :math:`\\lambda_U = u`, the bounds' :math:`q_i - c_i\\lambda_i`) satisfy its KKT conditions
as the reduced one's do (``docs/derivations.md``, "A working set of margin rows").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tpm_models.solvers.cones import Cone, ConeKind, ConicForm
from tpm_models.solvers.matrices import NotAQPError
from tpm_models.solvers.reductions import ConicProgram, ConicSolution


@dataclass(frozen=True)
class MarginRows:
    """The margin rows of ``form`` (module docstring): ``rows`` (rows of the form), each one's ``slack`` column, its
    coefficient ``coef`` (:math:`c_i`), its ``bound`` row and :math:`u_i` (``u``); ``core``: the other columns; ``R``
    (CSR, :math:`A_{rows, core}`) and ``b_rows``: :math:`r(y) = b_{rows} - Ry`."""

    form: ConicForm
    rows: np.ndarray
    slack: np.ndarray
    coef: np.ndarray
    bound: np.ndarray
    u: np.ndarray
    core: np.ndarray
    R: sp.csr_matrix
    b_rows: np.ndarray

    def scores(self, y: np.ndarray) -> np.ndarray:
        """:math:`r_i(y)` of every margin row at the core point ``y``."""
        return self.b_rows - self.R @ y

    def reduced(self, W: np.ndarray, U: np.ndarray, weight: float = 1.0) -> ConicProgram:
        """The form on the core and the slacks of the rows ``W`` (indices into :attr:`rows`), the rows ``U`` taken as
        violated (their cost on :math:`y`), every other margin row left out; ``weight`` scales the costs of ``W``'s
        slacks (a sample standing for all the rows: the number of rows over the sample's)."""
        form = self.form
        keep_rows = self.kept_rows(W)
        cols = np.concatenate([self.core, self.slack[W]])
        A = sp.csc_matrix(form.A)[:, cols][keep_rows]
        q = np.asarray(form.q, dtype=float)[cols].copy()
        q[len(self.core):] *= weight
        if len(U):
            q[:len(self.core)] += self.R[U].T @ self.u[U]
        P = sp.csc_matrix(form.P)[:, cols][cols]  # the slacks are not in P: their rows and columns are 0
        return ConicProgram(P, q, sp.csc_matrix(A), np.asarray(form.b, dtype=float)[keep_rows],
                            kept_cones(form.cones, keep_rows))

    def kept_rows(self, W: np.ndarray) -> np.ndarray:
        """A mask of the form's rows that :meth:`reduced` keeps with the working set ``W``."""
        keep = np.ones(self.form.A.shape[0], dtype=bool)
        keep[self.rows], keep[self.bound] = False, False
        keep[self.rows[W]], keep[self.bound[W]] = True, True
        return keep

    def margin_duals(self, z: np.ndarray, W: np.ndarray) -> np.ndarray:
        """The duals of ``W``'s margin rows in the dual ``z`` of :meth:`reduced`'s program, as solved."""
        position = np.cumsum(self.kept_rows(W)) - 1
        return z[position[self.rows[W]]]

    def whole(self, reduced: ConicSolution, W: np.ndarray, U: np.ndarray) -> ConicSolution:
        """The whole form's point and duals of the reduced form's solution (module docstring): the core's values and
        the other rows' duals as solved, every slack :math:`\\max(0, -r_i)/c_i`, the margin rows' :math:`\\lambda`
        (``W``'s as solved, in :math:`[0, u]`) and the bounds' :math:`q_i - c_i\\lambda_i`."""
        form = self.form
        nrow, ncol = form.A.shape
        y = reduced.x[:len(self.core)]
        x = np.zeros(ncol)
        x[self.core] = y
        x[self.slack] = np.maximum(0.0, -self.scores(y)) / self.coef
        keep_rows = self.kept_rows(W)
        z = np.zeros(nrow)
        z[keep_rows] = reduced.z
        lam = np.zeros(len(self.rows))
        lam[U] = self.u[U]
        lam[W] = np.clip(z[self.rows[W]], 0.0, self.u[W])
        z[self.rows] = lam
        z[self.bound] = np.asarray(form.q, dtype=float)[self.slack] - self.coef * lam
        return ConicSolution(x, np.asarray(form.b, dtype=float) - form.A @ x, z)


def kept_cones(cones: list[Cone], keep_rows: np.ndarray) -> list[Cone]:
    """``cones`` with only the rows of ``keep_rows`` (a mask of the form's rows): a ``nonneg`` block shrunk (left
    out when empty); every other block must be kept whole."""
    out, start = [], 0
    for cone in cones:
        kept = int(keep_rows[start:start + cone.dim].sum())
        start += cone.dim
        if cone.kind is ConeKind.NONNEG:
            if kept:
                out.append(Cone(ConeKind.NONNEG, kept))
        elif kept != cone.dim:
            raise ValueError(f"a {cone.kind.value} block loses rows")
        else:
            out.append(cone)
    return out


def _nonneg_rows(form: ConicForm) -> np.ndarray:
    """A mask of the form's rows in ``nonneg`` blocks."""
    mask = np.zeros(form.A.shape[0], dtype=bool)
    start = 0
    for cone in form.cones:
        if cone.kind is ConeKind.NONNEG:
            mask[start:start + cone.dim] = True
        start += cone.dim
    return mask


def margin_rows(form: ConicForm) -> MarginRows:
    """The :class:`MarginRows` of ``form`` (module docstring), or :class:`NotAQPError` when it has none."""
    A = sp.csc_matrix(form.A)
    nrow, ncol = A.shape
    b = np.asarray(form.b, dtype=float)
    q = np.asarray(form.q, dtype=float)
    nonneg = _nonneg_rows(form)
    per_row = np.diff(sp.csr_matrix(A).indptr)
    counts = np.diff(A.indptr)
    in_P = np.zeros(ncol, dtype=bool)
    if form.P.nnz:
        Pc = sp.coo_matrix(form.P)
        in_P[Pc.row], in_P[Pc.col] = True, True
    candidates = np.flatnonzero((counts == 2) & ~in_P)
    first, second = A.indptr[candidates], A.indptr[candidates] + 1
    r0, r1 = A.indices[first], A.indices[second]
    v0, v1 = A.data[first], A.data[second]
    # which of the two rows is the bound x_j >= 0 (s = x_j: one entry -1, b = 0)
    is_bound0 = (per_row[r0] == 1) & (v0 == -1.0) & (b[r0] == 0.0)
    is_bound1 = (per_row[r1] == 1) & (v1 == -1.0) & (b[r1] == 0.0)
    bound = np.where(is_bound0, r0, r1)
    row = np.where(is_bound0, r1, r0)
    coef = -np.where(is_bound0, v1, v0)
    ok = (is_bound0 ^ is_bound1) & nonneg[r0] & nonneg[r1] & (coef > 0) & (q[candidates] >= 0)
    slack, row, bound, coef = candidates[ok], row[ok], bound[ok], coef[ok]
    # one slack a row: a row holding two candidates is no margin row (both are then core)
    once = np.bincount(row, minlength=nrow)[row] == 1
    slack, row, bound, coef = slack[once], row[once], bound[once], coef[once]
    if not len(slack):
        raise NotAQPError("its conic form has no margin rows (rows r(y) + c*xi >= 0 with a slack xi >= 0 of their own, "
                          "in no other row; tpm_models.solvers.margin_rows)")
    order = np.argsort(row)
    slack, row, bound, coef = slack[order], row[order], bound[order], coef[order]
    is_core = np.ones(ncol, dtype=bool)
    is_core[slack] = False
    core = np.flatnonzero(is_core)
    R = sp.csr_matrix(A[:, core][row])
    return MarginRows(form, row, slack, coef, bound, q[slack] / coef, core, R, b[row])
