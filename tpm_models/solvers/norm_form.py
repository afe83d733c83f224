"""(15)'s shape with one Euclidean norm of one radius: recognised on a model's conic form, its dual's data, its primal
point and conic duals recovered ((23) at p = 2, (26) at p = 2, (28) with one :math:`\\varepsilon`).

The conic form (:mod:`tpm_models.solvers.cones`: rows :math:`s = b - Ax`, every row below with :math:`b = 0` unless
said) is of this shape when its columns are :math:`w` (free), one free :math:`\\theta`, slacks :math:`\\xi_i \\ge 0`,
one norm column :math:`\\tau` and the auxiliary columns of the gadgets below, and

* the rows with :math:`\\theta` (the margin rows) are nonneg rows
  :math:`a_i^\\top w + \\kappa\\theta + s_i\\xi_i + e_i\\tau \\ge 0` of (15)'s shape
  (:mod:`tpm_models.solvers.slack_form`), with one radius :math:`\\varepsilon = -e_i/\\kappa \\ge 0` for every row;
* the norm: :math:`\\tau` heads a second-order cone whose tails are the columns of :math:`w`, one each
  (:math:`\\tau \\ge \\|w\\|`), or columns :math:`a_j` with nonneg rows :math:`a_j - w_j \\ge 0`,
  :math:`a_j + w_j \\ge 0` (:math:`\\tau \\ge \\|a\\| \\ge \\|w\\|`); its cost :math:`q_\\tau \\ge 0`;
* the square: :math:`\\tfrac12 d\\|w\\|^2` in the objective (``P`` diagonal, one :math:`d > 0` on :math:`w`), or
  ``P = 0`` and the rotated cone :math:`c(u - v)`, :math:`u + v = 1` (a zero row), :math:`u \\ge \\|(t, v)\\|` with
  :math:`t` the head of a cone over :math:`w` (:math:`c(u - v) \\ge c\\,t^2 \\ge c\\|w\\|^2`, :math:`d = 2c`;
  :math:`t` may be :math:`\\tau`);
* every other row a lower bound of one column at 0; every cone row one column with coefficient 1 (a tail -1 too).

Then (``docs/derivations.md``, "One :math:`\\varepsilon`: (23) at :math:`p = 2` is (15) shrunk" and "Its duals on
the model as written") the dual is (15)'s on the margin rows with :math:`D = dI`, and with :math:`z = A_w^\\top\\lambda
- g` and :math:`\\sigma = q_\\tau + \\varepsilon h` (:math:`h` the cost of :math:`\\theta`),
:math:`w = (1 - \\sigma/\\|z\\|)_+ z/d`; :math:`\\tau = t = \\|w\\|`, :math:`a = |w|`, :math:`u, v = (1 \\pm t^2)/2`;
:math:`\\theta` by errata 5's rule on the scores :math:`a_i^\\top w + e_i\\tau`. The conic duals :math:`z` of every row
(:meth:`NormForm.conic_duals`) make the model's duals by the form's own map
(:meth:`~tpm_models.solvers.cones.ConicForm.dual_values`), as Clarabel's backend does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tpm_models.models.recovery import kkt_theta
from tpm_models.solvers.cones import ConeKind, ConicForm
from tpm_models.solvers.conic import conic_program
from tpm_models.solvers.matrices import NotAQPError, check_dense_fits
from tpm_models.solvers.program import Program
from tpm_models.solvers.slack_form import UNIFORM_TOL


@dataclass(frozen=True)
class Gadgets:
    """The rows that write :math:`\\tau \\ge \\|w\\|` and :math:`\\tfrac12 d\\|w\\|^2` (module docstring), as indices
    into the conic form: ``norm``: the norm cone's rows (head first); ``a``, ``a_plus``, ``a_minus``: the columns
    :math:`a_j` (in :math:`w`'s order) and the rows :math:`a_j - w_j`, :math:`a_j + w_j` (empty when the norm's tails
    are :math:`w`); ``square``: the rows of the cone over :math:`w` headed by :math:`t` (the norm's when ``t`` is
    :math:`\\tau`; ``None`` when the square is in ``P``); ``rotated``: the rows of :math:`u \\ge \\|(t, v)\\|`;
    ``rotated_cols``: their columns; ``equal``: the zero row :math:`u + v = 1` (with the coefficient ``equal_coef`` on
    both and on the right); ``t``, ``u``, ``v``: columns (-1 when absent); ``c``: the cost of :math:`u`; ``sign``: each
    cone row's coefficient (+1 or -1: :math:`s = \\pm x_j`), by row of the form."""

    norm: np.ndarray
    a: np.ndarray
    a_plus: np.ndarray
    a_minus: np.ndarray
    square: np.ndarray | None
    rotated: np.ndarray | None
    rotated_cols: np.ndarray | None
    equal: int
    equal_coef: float
    t: int
    u: int
    v: int
    c: float
    sign: np.ndarray


@dataclass(frozen=True)
class NormForm:
    """A conic form of the module's shape: the dual's data (as :class:`~tpm_models.solvers.slack_form.SlackForm`:
    ``A_hat`` dense, ``g_hat``, ``nu``, ``u``, ``scale`` :math:`= d^{-1/2}`) and the map back to the form's columns
    and rows."""

    form: ConicForm
    A_hat: np.ndarray
    g_hat: np.ndarray
    nu: float
    u: float
    scale: float
    margin: np.ndarray
    w: np.ndarray
    theta: int
    kappa: float
    slack: np.ndarray
    slack_coef: np.ndarray
    tau: int
    e: np.ndarray
    sigma: float
    eps: float
    gadgets: Gadgets
    unbounded: str | None

    def point(self, lam: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, str, bool]:
        """The primal point in the form's columns of the dual solution ``lam`` with ``v`` (:math:`\\hat A^\\top\\lambda
        - \\hat g`), the rule that chose :math:`\\theta`, and whether the plane is degenerate (:math:`w = 0`)."""
        g = self.gadgets
        z = v / self.scale
        norm_z = float(np.linalg.norm(z))
        degenerate = norm_z <= self.sigma
        w = np.zeros_like(z) if degenerate else (1.0 - self.sigma / norm_z) * z * self.scale**2
        x = np.zeros(self.form.A.shape[1])
        x[self.w] = w
        t = float(np.linalg.norm(w))
        x[self.tau] = t
        if len(g.a):
            x[g.a] = np.abs(w)
        if g.t >= 0:
            x[g.t], x[g.u], x[g.v] = t, 0.5 * (1.0 + t * t), 0.5 * (1.0 - t * t)
        scores = self.A_hat @ (w / self.scale) + self.e * t
        sign = 1 if self.kappa > 0 else -1
        theta, _, _, rule = kkt_theta(-scores / self.kappa, lam, self.u, sign)
        x[self.theta] = theta
        x[self.slack] = np.maximum(0.0, -(scores + self.kappa * theta)) / self.slack_coef
        return x, rule, degenerate

    def conic_duals(self, x: np.ndarray, lam: np.ndarray, v: np.ndarray, degenerate: bool) -> np.ndarray:
        """The conic duals :math:`z` of every row at the point ``x`` (:meth:`point`) of ``lam`` (derivation:
        ``docs/derivations.md``, "Its duals on the model as written"); a bound row's is 0 (bounds are no
        constraint's: the certificate finds their multipliers)."""
        g = self.gadgets
        zc = np.zeros(self.form.A.shape[0])
        zc[self.margin] = lam
        z = v / self.scale
        w = x[self.w]
        d = 1.0 / self.scale**2
        y = z if degenerate else z - d * w  # the norm's part of z: sigma * w / |w| off the apex
        zc[g.norm[0]] = self.sigma
        if len(g.a):
            zc[g.a_plus], zc[g.a_minus] = np.maximum(y, 0.0), np.maximum(-y, 0.0)
            zc[g.norm[1:]] = -g.sign[g.norm[1:]] * np.abs(y)
        else:
            zc[g.norm[1:]] = -g.sign[g.norm[1:]] * y
        if g.square is not None:
            zc[g.square[0]] += d * float(x[g.t])
            zc[g.square[1:]] += -g.sign[g.square[1:]] * d * w
            mu = 2.0 * g.c
            s_rot = g.sign[g.rotated] * x[g.rotated_cols]
            zc[g.rotated] = mu * np.concatenate([s_rot[:1], -s_rot[1:]])
            zc[g.equal] = (mu * float(x[g.u]) - g.c) / g.equal_coef
        return zc


def _single_columns(A: sp.csr_matrix, rows: np.ndarray, b: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Each of ``rows``' one column and coefficient sign (the row :math:`s = \\pm x_j`), or :class:`NotAQPError`."""
    counts = np.diff(A.indptr)[rows]
    if (counts != 1).any() or (b[rows] != 0).any():
        raise NotAQPError(f"a row of {what} is not one column with no constant")
    entries = A.data[A.indptr[rows]]
    if (np.abs(np.abs(entries) - 1.0) > UNIFORM_TOL).any():
        raise NotAQPError(f"a row of {what} has a coefficient other than 1 or -1")
    return A.indices[A.indptr[rows]], -np.sign(entries)


def _blocks(form: ConicForm) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The zero rows, the nonneg rows and each second-order cone's rows; :class:`NotAQPError` for another cone."""
    starts = np.cumsum([0] + [c.dim for c in form.cones])
    zero, nonneg, socs = [], [], []
    for k, cone in enumerate(form.cones):
        rows = np.arange(starts[k], starts[k + 1])
        if cone.kind is ConeKind.ZERO:
            zero.append(rows)
        elif cone.kind is ConeKind.NONNEG:
            nonneg.append(rows)
        elif cone.kind is ConeKind.SOC:
            socs.append(rows)
        else:
            raise NotAQPError(f"it has a {cone.kind.value} cone (this shape has second-order cones only)")
    empty = np.zeros(0, dtype=np.int64)
    return (np.concatenate(zero) if zero else empty), (np.concatenate(nonneg) if nonneg else empty), socs


def _lower_bounds(A: sp.csr_matrix, b: np.ndarray, nonneg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The nonneg rows of one column (``bound rows``) and the columns they bound; :class:`NotAQPError` unless each
    is :math:`x_j \\ge 0`."""
    rows = nonneg[np.diff(A.indptr)[nonneg] == 1]
    entries = A.data[A.indptr[rows]]
    if (entries != -1.0).any() or (b[rows] != 0).any():
        raise NotAQPError("a column has a bound other than x >= 0 (this shape's slacks and cones' heads have that "
                          "one only)")
    return rows, A.indices[A.indptr[rows]]


def _margin(M: sp.csr_matrix, theta: int, tau: int, slack: np.ndarray
            ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, float]:
    """The margin rows ``M`` (as :math:`\\ge 0` bodies): :math:`\\kappa`, :math:`e`, each row's slack column and
    coefficient, and the one radius :math:`\\varepsilon`; :class:`NotAQPError` naming what differs."""
    Mc = sp.csc_matrix(M)
    kappas = Mc[:, [theta]].toarray().ravel()
    kappa = float(kappas[0])
    if kappa == 0.0 or np.abs(kappas - kappa).max() > UNIFORM_TOL * abs(kappa):
        raise NotAQPError("the free column is not in every margin row with one coefficient")
    e = Mc[:, [tau]].toarray().ravel()
    radii = -e / kappa
    eps = float(radii.max())
    if radii.min() < 0:
        raise NotAQPError("a margin row has the norm with the sign of a reward, not of a radius (-eps*|w|)")
    if eps - radii.min() > UNIFORM_TOL * eps:
        raise NotAQPError(f"the margin rows' radii differ (eps from {radii.min():.6g} to {eps:.6g}): (15) shrunk "
                          "solves one radius for every point only; use clarabel (or ipopt) for per-point radii")
    block = Mc[:, slack]
    m = M.shape[0]
    if (np.diff(block.indptr) != 1).any() or len(slack) != m or len(np.unique(block.indices)) != m:
        raise NotAQPError("the bounded columns of the margin rows are not one slack a row")
    if (block.data <= 0).any():
        raise NotAQPError("a slack enters its row with a nonpositive coefficient")
    order = np.argsort(block.indices)
    return kappa, e, slack[order], block.data[order], eps


def _abs_rows(A: sp.csr_matrix, rows: np.ndarray, a: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows :math:`a_j - w_j \\ge 0` and :math:`a_j + w_j \\ge 0` among ``rows`` (two columns each), in ``w``'s
    order with ``a`` matched to them; :class:`NotAQPError` unless each :math:`w_j` has its :math:`a_j` so."""
    plus, minus = np.full(len(w), -1), np.full(len(w), -1)
    a_of = np.full(len(w), -1)
    w_at = {int(c): k for k, c in enumerate(w)}
    a_set = {int(c) for c in a}
    for r in rows.tolist():
        cols, vals = A.indices[A.indptr[r]:A.indptr[r + 1]], A.data[A.indptr[r]:A.indptr[r + 1]]
        pair = dict(zip(cols.tolist(), (-vals).tolist()))  # s = -A x: the row's body
        wa = [c for c in pair if c in w_at]
        aa = [c for c in pair if c in a_set]
        if len(pair) != 2 or len(wa) != 1 or len(aa) != 1 or pair[aa[0]] != 1.0 or abs(pair[wa[0]]) != 1.0:
            raise NotAQPError("a nonneg row outside the margin rows is not a_j - w_j >= 0 or a_j + w_j >= 0")
        k = w_at[wa[0]]
        target = plus if pair[wa[0]] < 0 else minus
        if target[k] >= 0 or a_of[k] not in (-1, aa[0]):
            raise NotAQPError("a column of w has two rows a_j - w_j >= 0 (or a_j + w_j), or two columns a_j")
        target[k], a_of[k] = r, aa[0]
    if (plus < 0).any() or (minus < 0).any():
        raise NotAQPError("a column of w has no rows a_j >= w_j, a_j >= -w_j under the norm's cone")
    return a_of, np.stack([plus, minus])


def _rotated(form: ConicForm, A: sp.csr_matrix, zero: np.ndarray, socs: list, heads: dict
             ) -> tuple[np.ndarray, int, float, int, int, int, float]:
    """The rotated cone :math:`c(u - v)`, :math:`u + v = 1`, :math:`u \\ge \\|(t, v)\\|`: its rows, the zero row and
    its coefficient, the columns ``t, u, v`` and :math:`c`; :class:`NotAQPError` when the square is not so."""
    if len(zero) != 1:
        raise NotAQPError(f"the objective has no squares and {len(zero)} equality rows (this shape writes "
                          "1/2|w|^2 as c(u - v) with one row u + v = 1)")
    r = int(zero[0])
    cols, vals = A.indices[A.indptr[r]:A.indptr[r + 1]], A.data[A.indptr[r]:A.indptr[r + 1]]
    if len(cols) != 2 or vals[0] != vals[1] or form.b[r] != vals[0]:
        raise NotAQPError("the equality row is not u + v = 1")
    for rows in socs:
        head, tails = heads[int(rows[0])], [heads[int(k)] for k in rows[1:]]
        if head in cols and len(tails) == 2:
            v = int(cols[1] if head == cols[0] else cols[0])
            if v not in tails:
                continue
            t = tails[0] if tails[1] == v else tails[1]
            c = float(form.q[head])
            if c <= 0 or form.q[v] != -c:
                raise NotAQPError("the rotated cone's u and v do not cost c(u - v), c > 0")
            return rows, r, float(vals[0]), t, head, v, c
    raise NotAQPError("no cone u >= |(t, v)| over the columns of u + v = 1 (the square 1/2|w|^2)")


def _ordered(rows: np.ndarray, heads: dict, cols: np.ndarray) -> np.ndarray:
    """A cone's rows, head first, then its tails in the order of ``cols`` (the tails' columns)."""
    row_of = {heads[int(k)]: int(k) for k in rows[1:]}
    return np.array([int(rows[0])] + [row_of[int(c)] for c in cols], dtype=np.int64)


def _square_and_norm(form: ConicForm, A: sp.csr_matrix, zero: np.ndarray, others: np.ndarray, socs: list,
                     heads: dict, tau: int, w: np.ndarray, signs: np.ndarray) -> tuple[Gadgets, float, list]:
    """The gadgets (module docstring) of the norm headed by ``tau`` over ``w``, :math:`d`, and the rows they use
    (besides the margin and bound rows; ``others``: the nonneg rows that are neither); :class:`NotAQPError` naming
    the part that is not of the shape."""
    diag = form.P.diagonal()
    if form.P.nnz and (sp.triu(form.P, 1).nnz or (np.abs(diag) > 0).sum() != len(w) or (diag[w] <= 0).any()):
        raise NotAQPError("the objective's squares are not of the columns of w alone, one coefficient each")
    norm = next(rows for rows in socs if heads[int(rows[0])] == tau)
    tails = np.array([heads[int(k)] for k in norm[1:]])
    used = [norm]
    a, plus_minus = np.zeros(0, dtype=np.int64), np.zeros((2, 0), dtype=np.int64)
    if len(tails) != len(w):
        raise NotAQPError(f"the norm's cone has {len(tails)} tails for {len(w)} columns of w")
    if set(tails.tolist()) != set(w.tolist()):
        if len(others) != 2 * len(w):
            raise NotAQPError(f"it has {len(others)} nonneg rows besides the margin rows and the bounds (this shape "
                              f"has none, or the {2 * len(w)} rows a_j >= w_j, a_j >= -w_j under the norm's cone)")
        a, plus_minus = _abs_rows(A, others, tails, w)
        if sorted(a.tolist()) != sorted(tails.tolist()):
            raise NotAQPError("the norm's cone is over columns other than w or a >= |w|")
        used.append(plus_minus.ravel())
    norm = _ordered(norm, heads, a if len(a) else w)
    if form.P.nnz:
        if len(zero):
            raise NotAQPError("it has an equality row besides the objective's squares")
        gad = Gadgets(norm, a, plus_minus[0], plus_minus[1], None, None, None, -1, 1.0, -1, -1, -1, 0.0, signs)
        return gad, float(diag[w[0]]), used
    rotated, equal, coef, t, u, v, c = _rotated(form, A, zero, socs, heads)
    square = next((rows for rows in socs if heads[int(rows[0])] == t), None)
    if square is None or sorted(heads[int(k)] for k in square[1:]) != sorted(w.tolist()):
        raise NotAQPError("the rotated cone's t does not head a cone over the columns of w")
    square = norm if t == tau else _ordered(square, heads, w)
    used += [rotated] + ([] if t == tau else [square])
    rotated_cols = np.array([heads[int(k)] for k in rotated], dtype=np.int64)
    gad = Gadgets(norm, a, plus_minus[0], plus_minus[1], square, rotated, rotated_cols, equal, coef, t, u, v, c, signs)
    return gad, 2.0 * c, used


def norm_form(program: Program) -> NormForm:
    """The :class:`NormForm` of the program's model (module docstring), read off its conic form
    (:func:`~tpm_models.solvers.conic.conic_program`, kept on the program), or :class:`NotAQPError` naming the first
    part of the shape it lacks."""
    form = conic_program(program)
    A, b, q = sp.csr_matrix(form.A), np.asarray(form.b, dtype=float), np.asarray(form.q, dtype=float)
    zero, nonneg, socs = _blocks(form)
    bound_rows, bounded_cols = _lower_bounds(A, b, nonneg)
    cone_rows = np.concatenate(socs) if socs else np.zeros(0, dtype=np.int64)
    cone_cols, signs_at = _single_columns(A, cone_rows, b, "a second-order cone")
    heads = dict(zip(cone_rows.tolist(), cone_cols.tolist()))
    signs = np.zeros(len(b))
    signs[cone_rows] = signs_at
    ncol = A.shape[1]
    in_cone = np.zeros(ncol, dtype=bool)
    in_cone[cone_cols] = True
    in_cone[A[zero].indices] = True
    bounded = np.zeros(ncol, dtype=bool)
    bounded[bounded_cols] = True
    squares = np.abs(form.P.diagonal()) > 0
    free = np.flatnonzero(~bounded & ~in_cone & ~squares)
    if len(free) != 1:
        raise NotAQPError(f"it has {len(free)} free columns outside the cones and the objective's squares (this "
                          "shape has one, theta)")
    theta = int(free[0])
    margin = sp.csc_matrix(form.A)[:, [theta]].indices
    margin.sort()
    if (b[margin] != 0).any():
        raise NotAQPError("a margin row has a nonzero right-hand side")
    M = -A[margin]
    in_margin = np.zeros(ncol, dtype=bool)
    in_margin[M.indices] = True
    norm_heads = [heads[int(rows[0])] for rows in socs if in_margin[heads[int(rows[0])]]]
    if len(norm_heads) != 1:
        raise NotAQPError(f"{len(norm_heads)} cones' heads are in the margin rows (this shape has one norm "
                          "eps*|w|_2 of one radius: (23), (26) and (28) at p = 2)")
    tau = norm_heads[0]
    cols = np.unique(M.indices)
    cols = cols[(cols != theta) & (cols != tau)]
    w, slack = cols[~bounded[cols]], cols[bounded[cols]]
    kappa, e, slack, slack_coef, eps = _margin(M, theta, tau, slack)
    others = np.setdiff1d(nonneg, np.concatenate([bound_rows, margin]))
    gadgets, d, used = _square_and_norm(form, A, zero, others, socs, heads, tau, w, signs)
    _check_accounted(len(b), [margin, bound_rows, zero, *used], ncol,
                     [w, slack, np.array([theta, tau]), gadgets.a, np.array([gadgets.t, gadgets.u, gadgets.v])])
    return _form_data(form, q, margin, M, w, theta, kappa, slack, slack_coef, tau, e, eps, gadgets, d)


def _check_accounted(rows: int, row_sets: list, cols: int, col_sets: list) -> None:
    """:class:`NotAQPError` when a row or a column of the form is outside the shape's parts."""
    seen = np.zeros(rows, dtype=bool)
    for r in row_sets:
        seen[np.asarray(r, dtype=np.int64)] = True
    if not seen.all():
        raise NotAQPError(f"{int((~seen).sum())} rows of its conic form are outside this shape (margin rows, "
                          "bounds x >= 0, the norm's and the square's cones)")
    used = np.zeros(cols, dtype=bool)
    for c in col_sets:
        c = np.asarray(c, dtype=np.int64)
        used[c[c >= 0]] = True
    if not used.all():
        raise NotAQPError(f"{int((~used).sum())} columns of its conic form are outside this shape")


def _form_data(form: ConicForm, q: np.ndarray, margin: np.ndarray, M: sp.csr_matrix, w: np.ndarray, theta: int,
               kappa: float, slack: np.ndarray, slack_coef: np.ndarray, tau: int, e: np.ndarray, eps: float,
               gadgets: Gadgets, d: float) -> NormForm:
    """The :class:`NormForm` of the recognised parts: the dual's data, checked as slack_form checks it."""
    aux = np.array([c for c in (*gadgets.a.tolist(), gadgets.t) if c >= 0 and c != tau], dtype=np.int64)
    if (q[aux] != 0).any() or q[tau] < 0:
        raise NotAQPError("a column of the norm's or the square's cones has a cost (or the norm a negative one)")
    bounds = q[slack] / slack_coef
    u = float(bounds.max())
    if bounds.min() < 0 or u - bounds.min() > UNIFORM_TOL * u:
        raise NotAQPError("the slacks' costs over their coefficients are not one nonnegative number")
    m = len(margin)
    check_dense_fits(m, len(w), "the margin rows' coefficients on w")
    scale = 1.0 / np.sqrt(d)
    A_hat = np.ascontiguousarray(sp.csc_matrix(M)[:, w].toarray() * scale)
    nu = float(q[theta]) / kappa
    unbounded = None
    if nu < 0 or nu > m * u * (1 + UNIFORM_TOL):
        unbounded = (f"its dual has no point (e'lam = {nu:.6g} with 0 <= lam <= {u:.6g} on {m} rows): the rows hold "
                     "at 0, and moving the free column with the slacks lowers the objective without end")
    elif nu == 0:
        raise NotAQPError("its dual's equality is e'lam = 0 (the free column has no cost)")
    sigma = float(q[tau]) + eps * float(q[theta])
    return NormForm(form, A_hat, q[w] * scale, nu, u, float(scale), margin, w, theta, kappa, slack, slack_coef, tau,
                    e, sigma, eps, gadgets, unbounded)
