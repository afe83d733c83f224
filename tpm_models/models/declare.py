"""Uncertain data declared from a few numbers: the sets a command line can name, and row-wise uncertainty.

``tpm-models robustify`` (and a user without a declaration function) says "a box of half-width 0.02" or "the rows
of ``margin`` in the coefficients of ``w``"; this module turns that into the
:class:`~tpm_models.models.uncertainty.UncertainRow` / :class:`~tpm_models.models.uncertainty.UncertainTerm`
declarations :func:`tpm_models.models.counterpart.robust_counterpart` and the verifier take:

* :func:`make_set`: a set kind (:data:`SET_KINDS`) and its numbers by name -> the set; :func:`combine`: several
  sets -> their intersection or Cartesian product; :func:`set_maker`: a kind and its other numbers -> a function
  ``(size, n) -> set``;
* :func:`with_sets`: a model's own declarations (the paper's :func:`~tpm_models.models.semi_infinite.uncertain_22`)
  with every set replaced by another kind of the same size (:func:`size_of`);
* :func:`declare_rows`: row-wise uncertainty on a nominal model's rows;
* :func:`affine_row`, :func:`affine_term`: a row :math:`(a_0 + Au)^\\top x \\le b + \\beta^\\top u` or an objective
  term :math:`(c_0 + Au)^\\top x` as the user writes it, in the uncertain parameters :math:`u`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyomo.core as pyo
from numpy.typing import ArrayLike
from pyomo.core.expr.visitor import identify_variables

from tpm_models.models.composite_sets import CartesianProduct, FactorModel, Intersection, Scenarios, dimension
from tpm_models.models.uncertainty import (
    Box,
    Budget,
    Ellipsoid,
    NormBall,
    Polyhedron,
    SymmetricBudget,
    Uncertain,
    UncertainRow,
    UncertainTerm,
    UncertaintySet,
)

SET_KINDS = ("ball", "box", "ellipsoid", "budget", "cardinality", "symmetric-budget", "polyhedron", "scenarios",
             "factor")
"""The sets :func:`make_set` makes by name (``tpm-models robustify --set``): ``NormBall``, ``Box``, ``Ellipsoid``, the
one-sided ``Budget`` (also named ``cardinality``, PyROS's ``CardinalitySet``), ``SymmetricBudget``, ``Polyhedron``,
``Scenarios``, ``FactorModel``; several of them make an ``Intersection`` or a ``CartesianProduct``
(:func:`combine`)."""


@dataclass(frozen=True)
class SetKind:
    """What a set kind of :data:`SET_KINDS` takes: its numbers in the order they may be given without a name
    (``ball:2:0.02`` is p, then r), those given only by name, the one that is its size (what ``--eps`` gives; None:
    the set's data is its size), and the defaults."""

    positional: tuple[str, ...]
    named: tuple[str, ...] = ()
    size: str | None = None
    defaults: tuple[tuple[str, float], ...] = ()
    meaning: str = ""


KINDS: dict[str, SetKind] = {
    "ball": SetKind(("p", "r"), size="r", meaning="NormBall(p, r): |delta|_p <= r"),
    "box": SetKind(("r",), ("lower", "upper"), size="r",
                   meaning="Box: |delta_j| <= r, or lower <= delta <= upper (numbers or files)"),
    "ellipsoid": SetKind(("r",), ("shape",), size="r",
                         meaning="Ellipsoid(shape, r): delta' shape^-1 delta <= r^2 (shape default the identity)"),
    "budget": SetKind(("d", "gamma"), size="d", defaults=(("gamma", 1.0),),
                      meaning="Budget(d, gamma), one-sided: delta = d*z, z in [0,1]^n, sum z <= gamma"),
    "symmetric-budget": SetKind(("d", "gamma"), size="d", defaults=(("gamma", 1.0),),
                                meaning="SymmetricBudget(d, gamma): |delta_j| <= d_j, sum |delta_j|/d_j <= gamma"),
    "polyhedron": SetKind(("r",), ("A", "b"), size="r", defaults=(("r", 1.0),),
                          meaning="Polyhedron(A, r*b): A delta <= r b (default the l_1 ball of radius r, n <= 12)"),
    "scenarios": SetKind(("points",), meaning="Scenarios(points): one perturbation a row of a K x n table"),
    "factor": SetKind(("psi", "beta"), meaning="FactorModel(psi, beta): delta = psi xi, |xi| <= 1, |sum xi| <= "
                                               "beta F"),
}
KINDS["cardinality"] = SetKind(KINDS["budget"].positional, size="d", defaults=KINDS["budget"].defaults,
                               meaning="the one-sided budget (PyROS's CardinalitySet): " + KINDS["budget"].meaning)


def make_set(kind: str, values: dict, n: int) -> UncertaintySet:
    """The set ``kind`` (:data:`SET_KINDS`) of the numbers ``values`` (by the names of :data:`KINDS`: numbers or
    arrays) in :math:`\\mathbb R^n`; ``ValueError`` saying what is missing, unknown or wrong (the sets check their
    data: finite, a size >= 0, bounded and nonempty)."""
    if kind not in KINDS:
        raise ValueError(f"no set {kind!r}: the sets are {', '.join(SET_KINDS)}")
    spec = KINDS[kind]
    allowed = set(spec.positional) | set(spec.named)
    unknown = sorted(set(values) - allowed)
    if unknown:
        raise ValueError(f"the {kind} set takes {sorted(allowed)}, not {unknown}")
    v = {**dict(spec.defaults), **values}

    def need(*names):
        missing = [k for k in names if v.get(k) is None]
        if missing:
            raise ValueError(f"the {kind} set needs {' and '.join(missing)}")
        return [v[k] for k in names]

    def number(name):
        value = np.asarray(v[name], float)
        if value.ndim:
            raise ValueError(f"the {kind} set's {name} must be one number, not an array")
        return float(value)

    if kind == "ball":
        need("p", "r")
        uset: UncertaintySet = NormBall(number("p"), number("r"))
    elif kind == "box":
        if v.get("lower") is not None or v.get("upper") is not None:
            if v.get("r") is not None:
                raise ValueError("a box takes its half-width r or its bounds lower and upper, not both")
            lower, upper = need("lower", "upper")
            uset = Box(_vector(lower), _vector(upper))
        else:
            (r,) = need("r")
            uset = Box.symmetric(_vector(r))
    elif kind == "ellipsoid":
        need("r")
        shape = np.eye(n) if v.get("shape") is None else np.asarray(v["shape"], float)
        uset = Ellipsoid(shape.tolist(), number("r"))
    elif kind in ("budget", "cardinality", "symmetric-budget"):
        d, _ = need("d", "gamma")
        uset = (SymmetricBudget if kind == "symmetric-budget" else Budget)(_vector(d), number("gamma"))
    elif kind == "polyhedron":
        r = number("r")
        if v.get("A") is not None or v.get("b") is not None:
            A, b = need("A", "b")
            A, b = np.atleast_2d(np.asarray(A, float)), np.asarray(b, float).ravel()
        else:
            if n > 12:
                raise ValueError(f"the default polyhedron (the l_1 ball as 2^n rows) is for n <= 12, not {n}; "
                                 "give A and b")
            A = np.array(list(itertools.product((-1.0, 1.0), repeat=n)))
            b = np.ones(len(A))
        uset = Polyhedron(A.tolist(), (r * b).tolist())
    elif kind == "scenarios":
        (points,) = need("points")
        uset = Scenarios(np.atleast_2d(np.asarray(points, float)).tolist())
    else:
        psi, _ = need("psi", "beta")
        uset = FactorModel(np.asarray(psi, float).reshape(len(psi), -1).tolist(), number("beta"))
    return check_dimension(uset, n, kind)


def _vector(value):
    """A number as a float, an array as a tuple (the sets' scalar-or-vector fields)."""
    arr = np.asarray(value, float)
    return float(arr) if arr.ndim == 0 else tuple(arr.ravel().tolist())


def check_dimension(uset: UncertaintySet, n: int, what: str) -> UncertaintySet:
    """``uset`` if its data allow :math:`\\mathbb R^n`; else ``ValueError`` naming both dimensions."""
    dim = dimension(uset)
    if dim is not None and dim != n:
        raise ValueError(f"the {what} set is in R^{dim}, but the uncertain rows perturb {n} coefficients (choose them "
                         f"with --vars, or give data of {n} columns)")
    return uset


def combine(sets: Sequence[UncertaintySet], sizes: Sequence[int] | None = None) -> UncertaintySet:
    """One set of several: their :class:`~tpm_models.models.composite_sets.Intersection` (``sizes`` None), or their
    :class:`~tpm_models.models.composite_sets.CartesianProduct`, set :math:`i` on the next ``sizes[i]`` coordinates."""
    if sizes is not None:
        return CartesianProduct(list(sets), [int(k) for k in sizes])
    return sets[0] if len(sets) == 1 else Intersection(list(sets))


def set_maker(kind: str, p: float | None = None, params: dict | None = None) -> Callable[[float, int], UncertaintySet]:
    """A function ``(radius, n) -> set`` of size ``radius`` in :math:`\\mathbb R^n`, for a declaration that gives only
    the size (the paper's :math:`\\varepsilon_i`): :func:`make_set` of ``kind`` with its size (:attr:`SetKind.size`:
    a ball's or an ellipsoid's radius, a box's half-width, a budget's deviation, a polyhedron's scale) the radius,
    ``p`` a ball's norm and ``params`` its other numbers (``gamma``, ``shape``, ``A`` and ``b``, ...)."""
    params = dict(params or {})
    if kind not in KINDS:
        raise ValueError(f"the set must be one of {SET_KINDS}, got {kind!r}")
    if kind == "ball" and p is None:
        raise ValueError("a ball needs p (1, 2, inf or any number >= 1)")
    spec = KINDS[kind]
    fixed = {**params, **({"p": p} if kind == "ball" else {})}
    if spec.size is None:
        return lambda r, n: make_set(kind, fixed, n)
    return lambda r, n: make_set(kind, {**fixed, spec.size: r}, n)


def size_of(uset: UncertaintySet) -> float:
    """The size a declaration's set carries (:func:`with_sets` keeps it): a ball's or an ellipsoid's radius, a
    symmetric box's half-width (the largest), a budget set's largest deviation."""
    if isinstance(uset, (NormBall, Ellipsoid)):
        return float(uset.radius)
    if isinstance(uset, Box):
        return float(np.max(np.abs(np.r_[np.ravel(uset.lower), np.ravel(uset.upper)])))
    if isinstance(uset, Budget):
        return float(np.max(uset.deviation))
    raise ValueError(f"a {type(uset).__name__} carries no single size; declare the set itself")


def with_sets(uncertain: Sequence[Uncertain], make: Callable[[float, int], UncertaintySet]) -> list[Uncertain]:
    """The same declarations with every set replaced by ``make(size, n)`` (:func:`set_maker`), ``size`` the old set's
    (:func:`size_of`): the paper's rows and terms of (22) under a box, an ellipsoid, a budget set instead of (21)."""
    out: list[Uncertain] = []
    for spec in uncertain:
        new = make(size_of(spec.uncertainty), len(spec.coefficients))
        if isinstance(spec, UncertainRow):
            out.append(UncertainRow(spec.row, spec.coefficients, new, spec.label))
        else:
            out.append(UncertainTerm(spec.coefficients, new, spec.weight, spec.label))
    return out


def declare_rows(
    model: pyo.ConcreteModel, make: Callable[[float, int], UncertaintySet], radius: float,
    rows: Sequence[str] | None = None, variables: Sequence[str] | None = None,
) -> list[UncertainRow]:
    """Row-wise uncertainty: every inequality row of the components ``rows`` (default: every active inequality row)
    holds for every perturbation of its coefficients on the variables ``variables`` (their components, in index
    order; default: the variables of the row itself), :math:`\\delta` in ``make(radius, n)``. Rows without any of
    those variables are left out. ``ValueError`` for a name that is no constraint or variable of ``model``."""
    if rows is None:
        components = list(model.component_objects(pyo.Constraint, active=True))
    else:
        components = []
        for name in rows:
            comp = model.component(name)
            if comp is None or comp.ctype is not pyo.Constraint:
                known = [c.local_name for c in model.component_objects(pyo.Constraint)]
                raise ValueError(f"the model has no constraint {name!r}; it has {known}")
            components.append(comp)
    fixed = None
    if variables is not None:
        fixed = []
        for name in variables:
            var = model.component(name)
            if var is None or var.ctype is not pyo.Var:
                known = [v.local_name for v in model.component_objects(pyo.Var)]
                raise ValueError(f"the model has no variable {name!r}; it has {known}")
            fixed += list(var.values())
    out = []
    for comp in components:
        for row in comp.values():
            if not row.active or row.equality:
                continue
            present = list(identify_variables(row.body, include_fixed=False))
            if fixed is None:
                coefs = present
            else:
                ids = {id(v) for v in present}
                coefs = fixed if any(id(v) in ids for v in fixed) else []
            if coefs:
                out.append(UncertainRow(row, coefs, make(radius, len(coefs)), row.name))
    return out


def affine_row(row: object, x: Sequence, A: ArrayLike, uncertainty: UncertaintySet, beta: ArrayLike | None = None,
               label: str = "") -> UncertainRow:
    """The row :math:`(a_0 + Au)^\\top x \\le b + \\beta^\\top u` (or ``>=``, or ranged: both bounds move by
    :math:`\\beta^\\top u`) for every :math:`u` in ``uncertainty``, as an :class:`UncertainRow`: ``row`` is the
    nominal :math:`a_0^\\top x \\le b` of the model, ``x`` its variables (:math:`n`), ``A`` the :math:`n\\times L`
    map of :math:`u` into their coefficients, ``beta`` the :math:`L` weights of :math:`u` in the right-hand side
    (default 0). Moved to one side the row is :math:`a_0^\\top x + \\sum_l((A^\\top x)_l - \\beta_l)u_l \\le b`: the
    coefficient of :math:`u_l` is :math:`(A^\\top x)_l - \\beta_l`, an affine expression (``ValueError`` for shapes
    that do not match)."""
    M = _affine_map(x, A)
    b = np.zeros(M.shape[1]) if beta is None else np.asarray(beta, float).ravel()
    if b.shape != (M.shape[1],) or not np.isfinite(b).all():
        raise ValueError(f"beta must be {M.shape[1]} finite numbers (one a column of A), got {beta!r}")
    coefficients = [sum(float(M[j, k]) * x[j] for j in range(len(x)) if M[j, k] != 0) - float(b[k])
                    for k in range(M.shape[1])]
    return UncertainRow(row, coefficients, uncertainty, label)


def affine_term(x: Sequence, A: ArrayLike, uncertainty: UncertaintySet, weight: float = 1.0,
                label: str = "") -> UncertainTerm:
    """The objective term :math:`\\omega (Au)^\\top x` of an objective :math:`(c_0 + Au)^\\top x` whose nominal part
    :math:`c_0^\\top x` is in the model: an :class:`UncertainTerm` with coefficients :math:`A^\\top x` (its worst case
    over ``uncertainty``: the largest when minimised, the least when maximised)."""
    M = _affine_map(x, A)
    coefficients = [sum(float(M[j, k]) * x[j] for j in range(len(x)) if M[j, k] != 0) for k in range(M.shape[1])]
    return UncertainTerm(coefficients, uncertainty, weight, label)


def _affine_map(x: Sequence, A: ArrayLike) -> np.ndarray:
    M = np.asarray(A, float)
    if M.ndim == 1:
        M = M[:, None]
    if M.ndim != 2 or M.shape[0] != len(x) or M.shape[1] == 0:
        raise ValueError(f"A must be an n x L matrix, one row a variable of x ({len(x)}), got shape {np.shape(A)}")
    if not np.isfinite(M).all():
        raise ValueError("A must be finite (no nan or inf)")
    return M
