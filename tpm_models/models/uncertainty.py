"""Uncertainty sets and the uncertain data of a model: what a robust counterpart is robust against.

A nominal Pyomo model is made robust by saying which of its parts are affine in data that may move:

* an :class:`UncertainRow` is an inequality row whose body becomes :math:`\\mathrm{body}(x) + a(x)^\\top\\delta`
  and must hold for every :math:`\\delta\\in\\mathcal U` (the rows of (22));
* an :class:`UncertainTerm` adds :math:`\\max_{\\delta\\in\\mathcal U} \\omega\\,a(x)^\\top\\delta` to the objective
  (the inner maxima of (22): :math:`\\omega = \\nu_c/m_{-c}`);

each with its set :math:`\\mathcal U`: :class:`NormBall` (the set (21), any :math:`p\\ge1`), :class:`Box`,
:class:`Ellipsoid`, :class:`Budget`, :class:`Polyhedron`. Every set knows its support function
:math:`\\sigma_{\\mathcal U}(g) = \\max_{\\delta\\in\\mathcal U} g^\\top\\delta` and a maximiser
(:meth:`UncertaintySet.support`), and the matching PyROS set.

The declarations are read by two services: :func:`tpm_models.models.counterpart.robust_counterpart` derives the
counterpart model from them (a model transformation, this layer), and :func:`tpm_models.checks.verify.verify`
solves the semi-infinite model they define to check a counterpart (the checks layer). They live here, in the
models layer, so that a model's registration can name its uncertain data (``register_model(...,
uncertain=...)``) without the checks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.core as pyo

from tpm_models.lazy import LazyModule
from tpm_models.models.norms import check_p, conjugate, norm, worst_case_delta

optimize = LazyModule("scipy.optimize")
"""``scipy.optimize``, imported on the first support LP (:class:`tpm_models.lazy.LazyModule`: 0.25-0.45 s of an import
that building any model would otherwise pay)."""

SUPPORT_LP_TOL = 1e-10
"""HiGHS's primal and dual feasibility tolerances in the support LP of a :class:`Polyhedron` (its default is
1e-7): the cutting planes of the verifier separate to 1e-11 with this support."""

def finite_array(data: Any, what: str) -> np.ndarray:
    """``data`` as a float array, ``ValueError`` naming ``what`` unless every entry is a finite number."""
    try:
        arr = np.asarray(data, float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numbers, got {data!r}") from None
    if not np.isfinite(arr).all():
        raise ValueError(f"{what} must be finite (no nan or inf): an uncertainty set is bounded; bound every "
                         "coordinate by a finite number")
    return arr


def size_number(value: Any, what: str) -> float:
    """``value`` as a float, ``ValueError`` unless it is a finite number >= 0."""
    try:
        r = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"the size of {what} must be a number, got {value!r}") from None
    if not (math.isfinite(r) and r >= 0):
        raise ValueError(f"the size of {what} must be finite and >= 0 (0: no uncertainty), got {value}")
    return r


def least_eigenvalue(S: np.ndarray) -> float:
    """The least eigenvalue of the symmetric ``S``, or a number of the same sign when ``S`` is definite: the
    diagonal of a diagonal matrix, a positive number when Cholesky succeeds (definite), else ``eigvalsh``'s. A row
    a point's ellipsoid declares it (:math:`10^3` rows of :math:`100\times100`: 25 s of ``eigvalsh`` under load,
    0.2 s this way)."""
    diagonal = np.diag(S)
    if not np.any(S - np.diag(diagonal)):
        return float(diagonal.min())
    try:
        np.linalg.cholesky(S)
        return 1.0
    except np.linalg.LinAlgError:
        return float(np.linalg.eigvalsh(S).min())


class UncertaintySet:
    """A convex compact set :math:`\\mathcal U` of perturbations :math:`\\delta\\in\\mathbb R^n`.

    :meth:`support` is the exact separation oracle: :math:`\\max_{\\delta\\in\\mathcal U} g^\\top\\delta`
    and a maximiser. :meth:`pyros_set` is the matching PyROS set."""

    def support(self, g: np.ndarray) -> tuple[float, np.ndarray]:
        raise NotImplementedError

    def start(self, n: int) -> np.ndarray:
        """A point of the set: the first scenario of the cutting planes."""
        return np.zeros(n)

    def is_point(self) -> bool:
        """The set is one point (no uncertainty: the row is nominal at :meth:`start`)."""
        return False

    def pyros_set(self, n: int) -> Any:
        raise ValueError(f"PyROS has no uncertainty set for {self}")

    @property
    def support_accuracy(self) -> float:
        """The absolute accuracy of :meth:`support` (0: a closed form or a vertex of an LP, exact to rounding); the
        cutting planes accept a violation up to it (:func:`tpm_models.checks.verify.solve_cutting_planes`)."""
        return 0.0


@dataclass(frozen=True)
class NormBall(UncertaintySet):
    """The set (21): :math:`\\{\\delta : \\|\\delta\\|_p \\le \\varepsilon\\}`, any :math:`p\\in[1,\\infty]`.

    Support (25): :math:`\\varepsilon\\|g\\|_{p'}`, attained at :func:`tpm_models.models.norms.worst_case_delta`.
    PyROS: a box for :math:`p=\\infty`, an axis-aligned ellipsoid with equal half-lengths for
    :math:`p=2`; for :math:`p=1` :func:`solve_pyros` writes :math:`\\delta = d^+-d^-` with
    :math:`(d^+,d^-)` in the budget set :math:`\\{d\\ge0:\\sum d\\le\\varepsilon\\}`, whose image is exactly the
    :math:`\\ell_1` ball. Other :math:`p` have no PyROS set."""

    p: float
    radius: float

    def __post_init__(self):
        object.__setattr__(self, "p", check_p(self.p))
        size_number(self.radius, "a norm ball")

    def support(self, g):
        g = np.asarray(g, float)
        return self.radius * norm(g, conjugate(self.p)), worst_case_delta(g, self.p, self.radius)

    def is_point(self):
        return self.radius == 0

    def pyros_set(self, n):
        from pyomo.contrib import pyros

        if self.p == 2.0:
            return pyros.AxisAlignedEllipsoidalSet(center=[0.0] * n, half_lengths=[self.radius] * n)
        if math.isinf(self.p):
            return pyros.BoxSet(bounds=[[-self.radius, self.radius]] * n)
        if self.p == 1.0:
            return pyros.BudgetSet(budget_membership_mat=[[1] * (2 * n)], rhs_vec=[self.radius])
        raise ValueError(f"PyROS has no l_p-ball uncertainty set for p = {self.p:g}; use the cutting planes")


@dataclass(frozen=True)
class Box(UncertaintySet):
    """:math:`\\{\\delta : l \\le \\delta \\le u\\}` (``lower``, ``upper``: scalars or vectors). Support
    :math:`\\sum_j \\max(g_jl_j, g_ju_j)`; PyROS ``BoxSet``. :meth:`symmetric` makes :math:`|\\delta_j|\\le r_j`."""

    lower: float | Sequence[float]
    upper: float | Sequence[float]

    def __post_init__(self):
        lo, up = finite_array(self.lower, "a box's lower bounds"), finite_array(self.upper, "a box's upper bounds")
        if lo.ndim > 1 or up.ndim > 1:
            raise ValueError("a box's bounds must be scalars or vectors")
        if lo.ndim and up.ndim and lo.shape != up.shape:
            raise ValueError(f"a box's lower and upper bounds differ in length ({lo.size} and {up.size})")
        if (lo > up).any():
            raise ValueError("a box needs lower <= upper in every coordinate (swap the bounds that are reversed)")

    @classmethod
    def symmetric(cls, radius: float | Sequence[float]) -> Box:
        r = finite_array(radius, "a box's half-widths")
        if r.ndim > 1 or (r < 0).any():
            raise ValueError(f"a box's half-widths must be a number or a vector of numbers >= 0, got {radius!r}")
        return cls(tuple(np.atleast_1d(-r)) if r.ndim else -float(r), tuple(np.atleast_1d(r)) if r.ndim else float(r))

    def bounds(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The bounds :math:`(l, u)` as length-``n`` vectors (``ValueError`` unless :math:`l \\le u`)."""
        lo = np.broadcast_to(np.asarray(self.lower, float), (n,))
        up = np.broadcast_to(np.asarray(self.upper, float), (n,))
        if (lo > up).any():
            raise ValueError("a box needs lower <= upper")
        return lo, up

    def support(self, g):
        g = np.asarray(g, float)
        lo, up = self.bounds(len(g))
        delta = np.where(g >= 0, up, lo)
        return float(g @ delta), delta

    def start(self, n):
        lo, up = self.bounds(n)
        return np.clip(np.zeros(n), lo, up)

    def is_point(self):
        return bool(np.all(np.asarray(self.lower, float) == np.asarray(self.upper, float)))

    def pyros_set(self, n):
        from pyomo.contrib import pyros

        lo, up = self.bounds(n)
        return pyros.BoxSet(bounds=[[float(a), float(b)] for a, b in zip(lo, up)])


@dataclass(frozen=True)
class Ellipsoid(UncertaintySet):
    """:math:`\\{\\delta : \\delta^\\top\\Sigma^{-1}\\delta \\le r^2\\}`, :math:`\\Sigma` positive definite
    (``shape``). Support :math:`r\\sqrt{g^\\top\\Sigma g}` at :math:`\\delta = r\\Sigma g/\\sqrt{g^\\top\\Sigma g}`;
    PyROS ``EllipsoidalSet`` (scale :math:`r^2`)."""

    shape: Sequence[Sequence[float]]
    radius: float = 1.0

    def __post_init__(self):
        S = finite_array(self.shape, "an ellipsoid's shape matrix")
        if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] == 0:
            raise ValueError(f"an ellipsoid's shape matrix must be square (n x n), got shape {S.shape}")
        if not np.allclose(S, S.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(S).max()))):
            raise ValueError("an ellipsoid's shape matrix must be symmetric (give (S + S')/2)")
        if least_eigenvalue(S) < -1e-12 * max(1.0, float(np.abs(S).max())):
            raise ValueError("an ellipsoid's shape matrix must be positive semidefinite: {delta' S^-1 delta <= r^2} "
                             "is not a bounded convex set otherwise")
        size_number(self.radius, "an ellipsoid")

    def support(self, g):
        g = np.asarray(g, float)
        S = np.asarray(self.shape, float)
        value = float(np.sqrt(max(g @ S @ g, 0.0)))
        if value == 0:
            return 0.0, np.zeros(len(g))
        return self.radius * value, self.radius * (S @ g) / value

    def is_point(self):
        return self.radius == 0

    def pyros_set(self, n):
        from pyomo.contrib import pyros

        return pyros.EllipsoidalSet(center=[0.0] * n, shape_matrix=np.asarray(self.shape, float).tolist(),
                                    scale=self.radius**2)


@dataclass(frozen=True)
class Budget(UncertaintySet):
    """The **one-sided** budget, PyROS's cardinality set:
    :math:`\\{\\delta = \\hat d \\odot z : z\\in[0,1]^n,\\ \\sum_j z_j\\le\\Gamma\\}` (``deviation``
    :math:`\\hat d\\ge0`, ``gamma`` :math:`\\Gamma`): at most :math:`\\Gamma` coordinates deviate, upwards only.
    Support: the :math:`\\lfloor\\Gamma\\rfloor` largest positive :math:`g_j\\hat d_j`, plus the fraction of the
    next; PyROS ``CardinalitySet``. ``tpm-models robustify --set budget:D:GAMMA`` (or ``cardinality:D:GAMMA``).
    The symmetric budget of Bertsimas and Sim (a coordinate moves either way) is :class:`SymmetricBudget`."""

    deviation: float | Sequence[float]
    gamma: float

    def __post_init__(self):
        d = finite_array(self.deviation, "a budget set's deviations")
        if d.ndim > 1 or (d < 0).any():
            raise ValueError("a budget set's deviations must be a scalar or a vector of numbers >= 0 (a coordinate "
                             "that may move down is a Box or a symmetric budget)")
        size_number(self.gamma, "a budget set's gamma")

    def support(self, g):
        g = np.asarray(g, float)
        d = np.broadcast_to(np.asarray(self.deviation, float), g.shape)
        gain = g * d
        z = np.zeros(len(g))
        left = float(self.gamma)
        for j in np.argsort(-gain, kind="stable"):
            if gain[j] <= 0 or left <= 0:
                break
            z[j] = min(1.0, left)
            left -= z[j]
        return float(gain @ z), d * z

    def is_point(self):
        return self.gamma == 0 or not np.any(np.asarray(self.deviation, float))

    def pyros_set(self, n):
        from pyomo.contrib import pyros

        d = np.broadcast_to(np.asarray(self.deviation, float), (n,))
        return pyros.CardinalitySet(origin=[0.0] * n, positive_deviation=d.tolist(), gamma=float(self.gamma))


@dataclass(frozen=True)
class SymmetricBudget(UncertaintySet):
    """The **symmetric** budget of Bertsimas and Sim:
    :math:`\\{\\delta : |\\delta_j|\\le\\hat d_j,\\ \\sum_j|\\delta_j|/\\hat d_j\\le\\Gamma\\}` (``deviation``
    :math:`\\hat d\\ge0`, ``gamma`` :math:`\\Gamma`; a coordinate with :math:`\\hat d_j = 0` does not move): at most
    :math:`\\Gamma` coordinates deviate, either way. It is the image of the one-sided :class:`Budget` on
    :math:`(\\delta^+,\\delta^-)` under :math:`\\delta=\\delta^+-\\delta^-`, so its support is that budget's at
    :math:`(g,-g)`: the :math:`\\lfloor\\Gamma\\rfloor` largest :math:`|g_j|\\hat d_j` plus the fraction of the
    next, and its counterpart :math:`\\min\\{\\Gamma\\lambda+\\sum_j\\mu_j : \\lambda+\\mu_j\\ge\\hat d_j|a_j|,\\
    \\lambda,\\mu\\ge0\\}`. PyROS has no such set: :meth:`pyros_set` writes it as a ``PolyhedralSet`` (the box and
    the :math:`2^n` rows of the weighted :math:`\\ell_1` constraint, :math:`n\\le12`).
    ``tpm-models robustify --set symmetric-budget:D:GAMMA``."""

    deviation: float | Sequence[float]
    gamma: float

    def __post_init__(self):
        d = finite_array(self.deviation, "a symmetric budget set's deviations")
        if d.ndim > 1 or (d < 0).any():
            raise ValueError("a symmetric budget set's deviations must be a scalar or a vector of numbers >= 0")
        size_number(self.gamma, "a symmetric budget set's gamma")

    def one_sided(self, n: int) -> Budget:
        """The one-sided :class:`Budget` on :math:`(\\delta^+,\\delta^-)\\in\\mathbb R^{2n}` whose image this set is."""
        d = np.broadcast_to(np.asarray(self.deviation, float), (n,))
        return Budget(tuple(np.r_[d, d].tolist()), float(self.gamma))

    def support(self, g):
        g = np.asarray(g, float)
        value, lifted = self.one_sided(len(g)).support(np.r_[g, -g])
        return value, lifted[: len(g)] - lifted[len(g):]

    def is_point(self):
        return self.gamma == 0 or not np.any(np.asarray(self.deviation, float))

    def pyros_set(self, n):
        from pyomo.contrib import pyros

        if n > 12:
            raise ValueError(f"PyROS has no symmetric budget set; as a polyhedron it has 2^{n} rows: verify by "
                             "cutting planes")
        d = np.broadcast_to(np.asarray(self.deviation, float), (n,))
        inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0), 0.0)
        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=n)))
        A = np.vstack([np.eye(n), -np.eye(n), signs * inv])
        b = np.r_[d, d, np.full(len(signs), float(self.gamma))]
        return pyros.PolyhedralSet(lhs_coefficients_mat=A.tolist(), rhs_vec=b.tolist())


@dataclass(frozen=True)
class Polyhedron(UncertaintySet):
    """:math:`\\{\\delta : A\\delta \\le b\\}`, nonempty and bounded. No closed form: the support is the LP
    :math:`\\max g^\\top\\delta` s.t. :math:`A\\delta\\le b`, solved by HiGHS's dual simplex through
    :func:`scipy.optimize.linprog` (a vertex, feasible to :data:`SUPPORT_LP_TOL`); PyROS ``PolyhedralSet``.

    Checked when made: an empty set is refused, and so is an unbounded one (:meth:`check_bounded`: :math:`2n` LPs,
    once for the same data) unless ``bounded=False``: a member of an
    :class:`~tpm_models.models.composite_sets.Intersection` may be unbounded alone (a slab cut by a box), the
    intersection being checked instead. ``ValueError`` when a support LP says the set is empty or unbounded in the
    direction asked."""

    A: Sequence[Sequence[float]]
    b: Sequence[float]
    bounded: bool = True

    def __post_init__(self):
        finite_array(self.A, "a polyhedron's A")
        finite_array(self.b, "a polyhedron's b")
        A, b = self.arrays()
        key = (A.shape, A.tobytes(), b.tobytes())
        if (key, self.bounded) in _CHECKED_POLYHEDRA:
            return
        if self.bounded:
            self.check_bounded()
        else:
            self.support(np.zeros(A.shape[1]))  # nonempty (ValueError otherwise)
        _CHECKED_POLYHEDRA.add((key, self.bounded))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """:math:`(A, b)` as float arrays, checked: :math:`A` is (rows, n), :math:`b` has one entry a row."""
        A, b = np.atleast_2d(np.asarray(self.A, float)), np.asarray(self.b, float).ravel()
        if A.shape[0] != b.shape[0]:
            raise ValueError(f"a polyhedron needs one b per row of A: A has {A.shape[0]} rows, b {b.shape[0]} entries")
        if not (np.isfinite(A).all() and np.isfinite(b).all()):
            raise ValueError("a polyhedron's A and b must be finite")
        return A, b

    def check_bounded(self) -> None:
        """``ValueError`` unless the set is nonempty and bounded: :math:`\\max\\pm\\delta_j` finite for every
        :math:`j` (:math:`2n` support LPs). Its LP dual is then feasible and bounded, as a counterpart needs."""
        n = self.arrays()[0].shape[1]
        for j in range(n):
            for sign in (1.0, -1.0):
                self.support(sign * np.eye(n)[j])

    def support(self, g):
        g = np.asarray(g, float)
        A, b = self.arrays()
        if A.shape[1] != len(g):
            raise ValueError(f"a polyhedron in R^{A.shape[1]} cannot perturb {len(g)} coefficients")
        res = optimize.linprog(-g, A_ub=A, b_ub=b, bounds=[(None, None)] * len(g), method="highs-ds",
                               options={"primal_feasibility_tolerance": SUPPORT_LP_TOL,
                                        "dual_feasibility_tolerance": SUPPORT_LP_TOL})
        if res.status == 2:
            raise ValueError("the polyhedral uncertainty set {delta : A delta <= b} is empty")
        if res.status == 3:
            raise ValueError("the polyhedral uncertainty set {delta : A delta <= b} is unbounded: bound every "
                             "coordinate (add rows to A)")
        if res.status != 0:
            raise RuntimeError(f"the support LP of a polyhedral set failed: {res.message}")
        delta = np.asarray(res.x, float)
        return float(g @ delta), delta

    def start(self, n):
        return self.support(np.zeros(n))[1]

    def pyros_set(self, n):
        from pyomo.contrib import pyros

        return pyros.PolyhedralSet(lhs_coefficients_mat=np.asarray(self.A, float).tolist(),
                                   rhs_vec=np.asarray(self.b, float).tolist())


_CHECKED_POLYHEDRA: set = set()
"""The data of the polyhedra already checked nonempty (and bounded): a row-wise declaration makes one set a row."""


# --------------------------------------------------------------------------- the uncertain data


@dataclass
class UncertainRow:
    """An inequality row affine in perturbed data: for every :math:`\\delta\\in\\mathcal U`,
    ``lower <= body(x) + a(x)'delta <= upper``.

    ``row`` is a Constraint data of the nominal model (``model.margin[i]``), ``coefficients``
    :math:`a(x)` one Pyomo variable or linear expression per coordinate of :math:`\\delta`
    (``[model.w[j] for j in model.J]`` for the rows of (22): :math:`(x^i+\\delta^i)^\\top w + \\theta + \\xi_i \\ge 0`).
    """

    row: object
    coefficients: Sequence
    uncertainty: UncertaintySet
    label: str = ""


@dataclass
class UncertainTerm:
    """A term :math:`\\max_{\\delta\\in\\mathcal U} \\omega\\,a(x)^\\top\\delta` added to the nominal objective
    (``weight`` :math:`\\omega`): the nominal objective holds :math:`\\omega\\,a(x)^\\top d` for the data
    :math:`d`, the semi-infinite one its worst case over :math:`d+\\delta`. The inner maxima of (22):
    :math:`\\omega = \\nu_c/m_{-c}`, :math:`a(x) = w`, one term per point of :math:`\\mathcal X_{-c}`."""

    coefficients: Sequence
    uncertainty: UncertaintySet
    weight: float = 1.0
    label: str = ""


Uncertain = UncertainRow | UncertainTerm


def nominal_objective(nominal: pyo.ConcreteModel, maximise: bool = False) -> pyo.Objective:
    """The objective of a nominal model that a counterpart is derived from or verified against: its one active
    objective, which must minimise unless ``maximise`` (``ValueError`` otherwise, saying what to do)."""
    objectives = list(nominal.component_data_objects(pyo.Objective, active=True))
    if len(objectives) != 1:
        raise ValueError(f"the nominal model needs exactly one active objective, has {len(objectives)}")
    if objectives[0].sense != pyo.minimize and not maximise:
        raise ValueError("the nominal model must minimise (negate a maximised objective)")
    return objectives[0]
