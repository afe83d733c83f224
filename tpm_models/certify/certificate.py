"""The certificate of a solve, computed on the Pyomo model as written (its expressions, never the backend's
matrices or cones).

A backend's word "optimal" is not a proof. :func:`certify` reads the point loaded into the model and the duals
the backend returned (mapped to the model's rows in the convention of :mod:`tpm_models.solvers.common`) and
measures, with :math:`J` the Jacobian of the rows' bodies and :math:`\\sigma = +1` (minimise) or :math:`-1`
(maximise):

=================  =====================================================================================
residual           what it measures
=================  =====================================================================================
``primal``         the largest violation of a row :math:`l_i \\le g_i(x) \\le u_i`, relative to the row's
                   size :math:`\\max(\\|\\nabla g_i(x)\\|_\\infty, |l_i - c_i|, |u_i - c_i|)` (:math:`c_i` the
                   row's constant; 1 where all are 0), of a bound relative to :math:`\\max(1, |l_j|)`, and of
                   an integer variable's integrality (absolute). So ``1e-12*x >= 1e-12`` at ``x = 0`` is
                   violated by 1, not by 1e-12.
``stationarity``   :math:`r = \\sigma(\\nabla f(x) - J^\\top y)` must be :math:`z_l - z_u` with
                   :math:`z_l \\ge 0` only on a finite lower bound and :math:`z_u \\ge 0` only on a finite
                   upper bound; the part of :math:`r` that is not, relative to :math:`\\max(1,
                   \\|\\nabla f(x)\\|_\\infty)`. The gradients are Pyomo's differentiation of the expressions
                   (``reverse_ad``; a linear row's coefficients are read directly).
``dual_sign``      a row's dual of the wrong sign for its active side (:math:`\\sigma y_i \\ge 0` on a
                   ``>=`` side, :math:`\\le 0` on a ``<=`` side), times :math:`\\|\\nabla g_i\\|_\\infty`,
                   relative to :math:`\\max(1, \\|\\nabla f(x)\\|_\\infty)`.
``complementarity``  :math:`\\sum_i |y_i|\\,\\mathrm{slack}_i + \\sum_j (z_{l,j}(x_j - l_j) + z_{u,j}(u_j - x_j))`
                   (the duality gap these multipliers prove), relative to :math:`\\max(1, |f(x)|)`.
=================  =====================================================================================

What it proves
--------------
``level == "kkt"``: the point is feasible and the KKT conditions hold to :data:`~tpm_models.certify.tolerances.KKT_TOL`
on a model classified convex (:func:`tpm_models.solvers.structure.model_traits`, or mapped to cones by
:func:`tpm_models.solvers.conic.why_not_conic`): for a convex model the KKT conditions are sufficient, so the
point is optimal to these residuals. ``"local"``: KKT holds but the model is not classified convex (a local
optimum). ``"feasible"``: no duals to check (a backend that gives none, a model with integer variables, a dual
NaN at a cone's apex that is not read as one (below), a row not differentiable at the point), or duals that meet the KKT
conditions only between
:data:`~tpm_models.certify.tolerances.KKT_TOL` and :data:`~tpm_models.certify.tolerances.KKT_FAIL_TOL`: the point is
feasible, its optimality is the backend's word. ``"failed"``: a scaled violation above
:data:`~tpm_models.certify.tolerances.FEASIBILITY_TOL`, or a KKT residual above ``KKT_FAIL_TOL``. Only ``"kkt"`` is
*certified*; ``"local"`` and ``"feasible"`` are "optimal, not certified".

A cone's apex
-------------
A quadratic row :math:`g(x) = (x - x_0)^\\top Q (x - x_0) \\le 0` with one negative eigenvalue of :math:`Q` (a
second-order cone written as ``sum(w[j]**2) <= t**2``, with ``t >= 0``) has no scalar multiplier at its apex
:math:`x = x_0`: :math:`\\nabla g(x_0) = 0`, and the conic backend's dual there (NaN in the model's convention,
:data:`~tpm_models.certify.tolerances.APEX_TOL`) is a vector of the dual cone. The optimum of (29) is such a point
(:math:`w = 0`, so :math:`t = \\|w\\|_2 = 0`). There the set is the cone's nappe
:math:`K_+ = \\{d : d^\\top Q d \\le 0\\}` on the side of an active bound of one of its variables (the bound must
hold on the whole nappe and exclude the other: :func:`apex_cone`), and its normal cone is :math:`Q K_+`. The
certificate takes as the row's multiplier the :math:`v = Qu`, :math:`u \\in K_+`, that cancels the stationarity
residual on the row's columns as far as it can (:math:`u = -Q^{-1}r` projected onto :math:`K_+`), and measures what
is left as any other residual: a point that is not optimal leaves a residual that no multiplier of the cone cancels,
and fails as before. Such a row without an active bound that picks the nappe, or whose :math:`Q` has another signature
or a zero eigenvalue, stays "a dual is missing or NaN".

The perspective rows :math:`c\\,a^q r^{1-q} - d\\,z \\le 0` of a :math:`q`-norm at their power cone's apex
(:math:`a = r = z = 0`, where :math:`r^{1-q}` has no derivative: (23) at p = 3 when its optimum is :math:`w = 0`) are
read the same way, their multipliers taken from the cones' normal cones together, as they share :math:`r`
(:mod:`tpm_models.certify.power_apex`).

A Euclidean norm :math:`\\sqrt{\\sum_k a_k x_k^2}` at zero, a node of rows and an objective read as linear in it
((23) at p = 2 when its optimum is :math:`w = 0`), is left out of their gradients; the Lagrangian's coefficient
:math:`K` on it times a subgradient (an ellipsoid at 0) cancels the stationarity residual on its columns as far as it
can (:mod:`tpm_models.certify.norm_apex`).
"""

from __future__ import annotations

import math
import operator
from dataclasses import asdict, dataclass, replace
from typing import Any, cast

import numpy as np
import pyomo.core as pyo
from pyomo.repn import generate_standard_repn

from tpm_models.certify.objective import objective_gradient
from tpm_models.certify.power_apex import PowerApexes, power_apexes
from tpm_models.certify.reading import model_columns, objective_disagrees, read_rows, sos_violation
from tpm_models.certify.tolerances import APEX_TOL, FEASIBILITY_TOL, GAP_FLOOR, GAP_TOL, KKT_FAIL_TOL, KKT_TOL, PSD_TOL

_VALUE = operator.attrgetter("value")


def active_objective(model: pyo.ConcreteModel) -> Any:
    """The one active objective of ``model`` (``ValueError`` unless there is exactly one; ``solve()`` refuses such a
    model before it reaches the certificate)."""
    objectives = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objectives) != 1:
        raise ValueError(f"the model has {len(objectives)} active objectives; the certificate needs exactly one")
    return objectives[0]


def integer_columns(variables: list) -> np.ndarray:
    """Which of ``variables`` have an integer or binary domain, each distinct domain object asked once (the
    builders' :math:`10^5` variables share a few)."""
    domains = list(map(operator.attrgetter("domain"), variables))
    discrete = {key: not v.is_continuous() for key, v in dict(zip(map(id, domains), variables)).items()}
    if not any(discrete.values()):
        return np.zeros(len(variables), dtype=bool)
    return np.array([discrete[id(d)] for d in domains], dtype=bool)


@dataclass
class Certificate:
    """The residuals of :func:`certify` (module docstring) and what they prove."""

    primal: float
    """Largest scaled violation of a row, bound or integrality (``inf`` if the point cannot be evaluated)."""
    stationarity: float | None = None
    complementarity: float | None = None
    dual_sign: float | None = None
    level: str = "feasible"
    """``"kkt"`` (certified optimal), ``"local"`` (KKT on a model not classified convex), ``"feasible"``
    (feasible, optimality not checked) or ``"failed"``."""
    why: str = ""
    """Why the certificate failed, or why it stops at ``"local"`` / ``"feasible"``."""
    worst_row: str = ""
    """The row or variable of the largest scaled violation."""
    absolute: float = math.inf
    """Largest absolute violation of a row or bound (``SolveResult.max_violation``)."""
    objective: float | None = None
    """The objective at the point, read with its gradient (``None`` if the point is infeasible or the objective
    is not differentiable there)."""

    @property
    def passed(self) -> bool:
        return self.level != "failed"

    @property
    def certified(self) -> bool:
        return self.level == "kkt"

    def residuals(self) -> str:
        """The residuals in one line (the message of a failed certificate)."""
        parts = [f"primal {self.primal:.2g}" + (f" ({self.worst_row})" if self.worst_row else "")]
        for name in ("stationarity", "complementarity", "dual_sign"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name} {value:.2g}")
        return ", ".join(parts)

    def to_dict(self) -> dict:
        out = {**asdict(self), "certified": self.certified}
        del out["objective"]  # SolveResult.objective
        return out


@dataclass
class ApexCone:
    """A quadratic row at its cone's apex (module docstring, "A cone's apex"): on its columns ``cols``,
    :math:`Q` oriented so that the row reads :math:`d^\\top Q d \\le 0` (``lam``, ``V``: its eigenvalues and
    eigenvectors, ``neg`` the index of the negative one), ``side`` (+1 or -1) the nappe :math:`\\pm\\eta_{neg} \\ge
    \\|\\eta_{rest}\\|` in the coordinates :math:`\\eta = |\\Lambda|^{1/2} V^\\top d`, and ``offset``
    :math:`x - x_0` on ``cols``."""

    cols: np.ndarray
    lam: np.ndarray
    V: np.ndarray
    neg: int
    side: float
    offset: np.ndarray

    def multiplier(self, r: np.ndarray) -> np.ndarray:
        """The :math:`v = Qu`, :math:`u \\in K_+`, nearest (in :math:`\\eta`) to cancelling ``r`` on ``cols``:
        :math:`u = -Q^{-1} r` projected onto the nappe."""
        root = np.sqrt(np.abs(self.lam))
        eta = -root * (self.V.T @ r) / self.lam  # u = -Q^{-1} r in eta = |lam|^(1/2) V'u
        a = self.side * eta[self.neg]
        rest = np.delete(eta, self.neg)
        norm = float(np.linalg.norm(rest))
        if norm > a:  # outside the nappe: its projection (0 when inside the opposite nappe)
            if norm <= -a:
                eta[:] = 0.0
            else:
                eta = eta * ((a + norm) / 2 / norm)
                eta[self.neg] = self.side * (a + norm) / 2
        u = self.V @ (eta / root)
        return self.V @ (self.lam * (self.V.T @ u))


def apex_cone(con: Any, gradient_row: np.ndarray, body: float, x: np.ndarray, col: dict, lb: np.ndarray,
              ub: np.ndarray) -> ApexCone | None:
    """``con`` read as a cone at its apex (module docstring, "A cone's apex"), or ``None`` when it is not one: its
    gradient at ``x`` above :data:`~tpm_models.certify.tolerances.APEX_TOL`, not a quadratic at one active side, a
    :math:`Q` without exactly one negative eigenvalue and no zero one, or no active bound that picks the nappe."""
    if float(np.linalg.norm(gradient_row)) >= APEX_TOL:
        return None
    lower, upper = con.lb, con.ub
    if (lower is None) == (upper is None):  # an equality or a free row: no cone
        return None
    bound = float(upper if upper is not None else lower)
    if abs(body - bound) > FEASIBILITY_TOL:
        return None
    repn = generate_standard_repn(con.body, quadratic=True)
    if repn.nonlinear_expr is not None or not repn.quadratic_vars:
        return None
    try:
        pairs = [(col[id(a)], col[id(b)], float(c)) for (a, b), c in zip(repn.quadratic_vars, repn.quadratic_coefs)]
    except KeyError:  # a fixed variable in a product
        return None
    cols = np.array(sorted({k for i, j, _ in pairs for k in (i, j)}))
    where = {c: k for k, c in enumerate(cols)}
    Q = np.zeros((len(cols), len(cols)))
    for i, j, c in pairs:
        Q[where[i], where[j]] += c / 2
        Q[where[j], where[i]] += c / 2
    if upper is None:  # g >= bound: -g <= -bound
        Q = -Q
    lam, V = np.linalg.eigh(Q)
    tol = PSD_TOL * max(1.0, float(np.abs(lam).max()))
    if np.sum(lam < -tol) != 1 or np.any(np.abs(lam) <= tol):
        return None
    neg = int(np.argmin(lam))
    T = V / np.sqrt(np.abs(lam))  # d = T eta
    for k, j in enumerate(cols):  # an active bound d_j >= 0 (or <= 0) that holds on one whole nappe
        for value, sign in ((lb[j], 1.0), (ub[j], -1.0)):
            if np.isfinite(value) and abs(x[j] - value) <= APEX_TOL * max(1.0, abs(value)):
                c = sign * T[k]
                if abs(c[neg]) > float(np.linalg.norm(np.delete(c, neg))):
                    grad_cols = np.asarray(gradient_row, dtype=float)[cols]
                    offset = np.linalg.solve(2 * (Q if upper is not None else -Q), grad_cols)
                    return ApexCone(cols, lam, V, neg, math.copysign(1.0, c[neg]), offset)
    return None


def _norm_terms(row_norms: list, objective_norms: list, y: np.ndarray, sigma: float) -> list:
    """Each Euclidean norm at zero of the rows and the objective with its Lagrangian coefficient
    :math:`K = \\sigma(c_f - \\sum_i y_i C_i)` (:mod:`tpm_models.certify.norm_apex`), one entry a node."""
    K: dict[int, list] = {}
    for apex, c in objective_norms:
        K.setdefault(id(apex.node), [apex, 0.0])[1] += sigma * c
    for apex, at, coefs in row_norms:
        K.setdefault(id(apex.node), [apex, 0.0])[1] -= sigma * float(np.sum(y[at] * coefs))
    return [(apex, k) for apex, k in K.values()]


# ------------------------------------------------------------------------------------------- the certificate


def certify(model: pyo.ConcreteModel, duals: dict | None, convex: bool,
            integers: bool = False, memo: dict | None = None) -> Certificate:
    """The certificate of the point loaded in ``model`` (module docstring) with ``duals`` (by constraint data, in
    :mod:`tpm_models.solvers.common`'s convention; ``None``: the backend gave none). ``convex``: the model is
    classified convex (KKT then proves optimality). ``integers``: the model has integer variables or SOS
    constraints (no KKT: the backend's branch and bound is the proof).

    The model is read afresh, on its own (:mod:`tpm_models.certify.reading`): every active row and
    variable, a variable of another model that a row holds as one more column. ``memo``: where the last
    certificate is kept (a solve's :class:`~tpm_models.solvers.program.Program`'s ``certificates``): a second
    certificate of the same point with the same duals is the first one, copied (the backend asked it already:
    :func:`tpm_models.solvers.backends.clarabel.apex_point_certified`)."""
    variables, col = model_columns(model)
    last = {} if memo is None else memo
    read = (list(map(_VALUE, variables)), None if duals is None else dict(duals), bool(convex), bool(integers))
    if last.get("read") == read:
        return replace(last["certificate"])
    cert = _certify(model, variables, duals, convex, integers, col)
    last["read"], last["certificate"] = read, replace(cert)
    return cert


def _bounds(variables: list) -> tuple[np.ndarray, np.ndarray]:
    both = np.array([v.bounds for v in variables], dtype=float).reshape(-1, 2)  # None -> NaN
    lb, ub = both[:, 0], both[:, 1]
    lb[np.isnan(lb)] = -math.inf
    ub[np.isnan(ub)] = math.inf
    return lb, ub


def _certify(model: pyo.ConcreteModel, variables: list, duals: dict | None, convex: bool,
             integers: bool, col: dict) -> Certificate:
    if any(v.value is None for v in variables):
        return Certificate(math.inf, level="failed", why="a variable has no value")
    memo: dict = {}  # every node's value and gradient at x, shared by the rows and the objective
    rows = read_rows(model, variables, col, memo)  # adds the columns of other models' variables that rows hold
    values = list(map(_VALUE, variables))
    if any(v is None for v in values):
        return Certificate(math.inf, level="failed", why="a variable has no value")
    x = np.array(values, dtype=float)
    if not np.isfinite(x).all():
        return Certificate(math.inf, level="failed", why="a variable is not finite")
    lb, ub = _bounds(variables)
    Jx = rows.J @ x
    linear = np.isnan(rows.body)
    rows.body[linear] = Jx[linear] + rows.constant[linear]
    if not np.isfinite(rows.body).all():
        return Certificate(math.inf, level="failed", why="a row cannot be evaluated at the point")
    row_norm = abs(rows.J).max(axis=1).toarray().ravel() if rows.J.nnz else np.zeros(len(rows.cons))
    cert = _primal(model, rows, variables, x, lb, ub, row_norm)
    if cert.primal > FEASIBILITY_TOL:
        cert.level, cert.why = "failed", f"the point violates {cert.worst_row} by {cert.primal:.2g} (relative to " \
            "its size)"
        return cert
    objective = active_objective(model)
    objective_norms: list = []  # (apex, coefficient): a Euclidean norm at zero in the objective
    read = objective_gradient(model, objective, col, len(x), memo, x, objective_norms)
    if read is not None:
        cert.objective = read[0]
        disagrees = objective_disagrees(objective, variables, x, read[0], read[1], not objective_norms)
        if disagrees is not None:  # the objective read is not the model's: nothing below would prove anything
            cert.level, cert.why = "failed", disagrees
            return cert
    if integers:
        cert.why = ("integer variables or SOS constraints: no KKT conditions (the backend's branch and bound is the "
                    "proof)")
        return cert
    if duals is None:
        cert.why = "the backend gave no duals"
        return cert
    multipliers = _multipliers(rows, duals, x, col, lb, ub)
    if isinstance(multipliers, str):
        cert.why = multipliers
        return cert
    if read is None:
        cert.why = "the objective is not differentiable at the point"
        return cert
    y, apexes, powers = multipliers
    sigma = 1.0 if objective.sense == pyo.minimize else -1.0
    norms = _norm_terms(rows.norms, objective_norms, y, sigma)
    gap = _kkt_residuals(cert, rows, read, y, sigma, apexes, powers, norms, x, lb, ub, row_norm)
    return _judged(cert, gap, read[0], convex, len(apexes) + int(rows.kinks.sum()), len(norms))


def _primal(model: Any, rows: Any, variables: list, x: np.ndarray, lb: np.ndarray, ub: np.ndarray,
            row_norm: np.ndarray) -> Certificate:
    """The primal part of the certificate: every row relative to its size (the largest of its gradient's entries and
    its sides), every bound relative to :math:`\\max(1, |\\text{bound}|)`, integrality and SOS conditions
    absolute; the worst of them named."""
    size = row_norm.copy() if rows.J.nnz else np.zeros(len(rows.cons))
    for side in (rows.lower, rows.upper):
        finite = np.isfinite(side)
        size[finite] = np.maximum(size[finite], np.abs(side[finite] - rows.constant[finite]))
    size[size == 0] = 1.0
    row_viol = np.maximum(np.maximum(rows.lower - rows.body, rows.body - rows.upper), 0.0) / size
    bound_viol = np.maximum(np.maximum(lb - x, x - ub), 0.0)
    bound_viol /= np.maximum(1.0, np.where(lb - x > 0, np.abs(lb), np.where(x - ub > 0, np.abs(ub), 1.0)))
    int_viol = np.abs(x - np.round(x)) * integer_columns(variables)
    absolute = max(float(np.maximum(rows.lower - rows.body, rows.body - rows.upper).max(initial=0.0)),
                   float(np.maximum(lb - x, x - ub).max(initial=0.0)), 0.0)
    worst, where = 0.0, ""
    for viol, names in ((row_viol, rows.cons), (bound_viol, variables), (int_viol, variables)):
        if viol.size and viol.max() > worst:
            k = int(viol.argmax())
            worst, where = float(viol[k]), names[k].name
    sos, sos_name = sos_violation(model, FEASIBILITY_TOL)
    if sos > worst:
        worst, where = sos, sos_name
    return Certificate(worst, worst_row=where, absolute=max(absolute, sos))


def _multipliers(rows: Any, duals: dict, x: np.ndarray, col: dict, lb: np.ndarray, ub: np.ndarray
                 ) -> tuple[np.ndarray, list[ApexCone], PowerApexes | None] | str:
    """The rows' multipliers ``y`` from the backend's ``duals``, with the rows at a cone's apex (``ApexCone`` s) and
    the perspective rows at their power cone's apex (``PowerApexes`` or ``None``) set apart (their multipliers are
    vectors of the cones' normal cones, added to the stationarity residual); or why the KKT conditions cannot be
    checked."""
    y = np.array(list(map(duals.get, rows.cons)), dtype=float).reshape(-1)  # a missing dual (None) -> NaN
    apexes: list[ApexCone] = []
    for i in np.flatnonzero(~np.isfinite(y) & ~rows.kinks):  # a cone's apex (module docstring) or a missing dual
        apex = apex_cone(rows.cons[i], rows.J[i].toarray().ravel(), float(rows.body[i]), x, col, lb, ub)
        if apex is None:
            return "a dual is missing or NaN (e.g. a cone's apex without an active bound that picks its nappe)"
        apexes.append(apex)
        y[i] = 0.0
    powers = None
    if not rows.smooth:  # perspective rows at their power cone's apex (tpm_models.certify.power_apex), or none
        powers = power_apexes([rows.cons[i] for i in np.flatnonzero(rows.kinks)], x, col)
        if powers is None:
            return "a row is not differentiable at the point"
        y[rows.kinks] = 0.0
    return y, apexes, powers


def _kkt_residuals(cert: Certificate, rows: Any, read: tuple, y: np.ndarray, sigma: float, apexes: list, powers: Any,
                   norms: list, x: np.ndarray, lb: np.ndarray, ub: np.ndarray, row_norm: np.ndarray) -> float:
    """Stationarity, dual signs and complementarity into ``cert``; returns the duality gap (absolute).

    Stationarity: :math:`r = \\sigma(\\nabla f - J^\\top y) = z_l - z_u`. A component :math:`r_j` of the sign of
    a finite bound is read as that bound's multiplier when it costs less as complementarity (:math:`z(x_j -`
    bound), relative to the objective) than as a stationarity error (:math:`|r_j|`, relative to the gradient): a
    backend's error in the duals is not taken for a multiplier of a bound the point is far from. Each component
    is relative to the largest term it sums: near a row not differentiable at its boundary (:math:`a^q r^{1-q}`
    as :math:`r \\to 0`) terms of 1e8 cancel, and their rounding is no stationarity error."""
    f, grad = read
    scale = max(1.0, float(np.abs(grad).max(initial=0.0)))
    r = sigma * (grad - rows.J.T @ y)
    apex_gap = 0.0
    for apex in apexes:  # each apex row's multiplier v in its normal cone, as far as it cancels r
        v = apex.multiplier(r[apex.cols])
        r[apex.cols] += v
        apex_gap += abs(float(v @ apex.offset))
    if powers is not None:
        v, gap = powers.multiplier(r, x, np.isfinite(lb) & (lb == 0) & (np.abs(x) <= APEX_TOL))
        r += v
        apex_gap += gap
    for apex, K in norms:  # a Euclidean norm at zero: K times a subgradient, as far as it cancels r
        v, gap = apex.multiplier(r, K, x)
        r[apex.cols] += v
        apex_gap += gap
    f_scale = max(1.0, abs(f))
    dist_l = np.where(np.isfinite(lb), x - np.where(np.isfinite(lb), lb, 0.0), np.inf)
    dist_u = np.where(np.isfinite(ub), np.where(np.isfinite(ub), ub, 0.0) - x, np.inf)
    as_bound = np.maximum(np.where(r > 0, dist_l, dist_u), 0.0) / f_scale <= 1.0 / scale
    z_l = np.where(as_bound & (r > 0), r, 0.0)
    z_u = np.where(as_bound & (r < 0), -r, 0.0)
    terms = abs(rows.J).T @ np.abs(y) if rows.J.nnz else np.zeros(len(x))
    column_scale = np.maximum(np.maximum(scale, np.abs(grad)), terms)
    cert.stationarity = float((np.abs(r - z_l + z_u) / column_scale).max(initial=0.0))
    # dual signs and complementarity, by the active side of each row
    sy = sigma * y
    has_lo, has_hi = np.isfinite(rows.lower), np.isfinite(rows.upper)
    equality = has_lo & has_hi & (rows.lower == rows.upper)
    lower_side = has_lo & ~equality & (~has_hi | (sy >= 0))
    upper_side = has_hi & ~equality & ~lower_side
    wrong = np.where(lower_side, np.maximum(-sy, 0.0), 0.0) + np.where(upper_side, np.maximum(sy, 0.0), 0.0)
    wrong += np.where(~has_lo & ~has_hi, np.abs(y), 0.0)  # a free row has no multiplier
    cert.dual_sign = float((wrong * np.maximum(row_norm, 1e-300)).max(initial=0.0)) / scale
    slack = np.where(lower_side, rows.body - rows.lower, 0.0) + np.where(upper_side, rows.upper - rows.body, 0.0)
    gap = float(np.sum(np.abs(y) * np.maximum(slack, 0.0)))  # not BLAS's dot: its threads wake up for one product
    gap += float((z_l * np.where(z_l > 0, np.maximum(dist_l, 0.0), 0.0)).sum())
    gap += float((z_u * np.where(z_u > 0, np.maximum(dist_u, 0.0), 0.0)).sum())
    gap += apex_gap
    cert.complementarity = gap / f_scale
    return gap


def _judged(cert: Certificate, gap: float, f: float, convex: bool, at_apex: int, norms: int) -> Certificate:
    """The certificate's level from its KKT residuals: failed past :data:`KKT_FAIL_TOL`, feasible only past
    :data:`KKT_TOL` or a duality gap past :data:`GAP_TOL` of the objective, else certified on a convex model and
    local otherwise."""
    # the three set by _kkt_residuals before this
    kkt = max(cast(float, cert.stationarity), cast(float, cert.dual_sign), cast(float, cert.complementarity))
    if kkt > KKT_FAIL_TOL:
        cert.level, cert.why = "failed", "the KKT conditions do not hold with the backend's duals"
    elif kkt > KKT_TOL:
        cert.why = f"the backend's duals meet the KKT conditions to {kkt:.1g} only (certified at {KKT_TOL:g})"
    elif gap > GAP_FLOOR and gap > GAP_TOL * abs(f):
        cert.why = (f"the duality gap {gap:.1g} is {gap / max(abs(f), 1e-300):.1g} of the objective {f:.3g} "
                    f"(certified at {GAP_TOL:g}): the objective is accurate to that only")
    elif convex:
        cert.level, cert.why = "kkt", "feasible, KKT conditions hold on a convex model" + (
            f" ({at_apex} row(s) at a cone's apex, with a multiplier of its normal cone)" if at_apex else "") + (
            f" ({norms} Euclidean norm(s) at zero, with a subgradient)" if norms else "")
    else:
        cert.level, cert.why = "local", "KKT conditions hold, but the model is not classified convex (a local optimum)"
    return cert
