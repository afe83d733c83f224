"""Uncertain data declared from a few numbers: the sets a command line can name, and row-wise uncertainty.

``tpm-models robustify`` (and a user without a declaration function) says "a box of half-width 0.02" or "the rows
of ``margin`` in the coefficients of ``w``"; this module turns that into the
:class:`~tpm_models.models.uncertainty.UncertainRow` / :class:`~tpm_models.models.uncertainty.UncertainTerm`
declarations :func:`tpm_models.models.counterpart.robust_counterpart` and the verifier take:

* :func:`set_maker`: a set kind (:data:`SET_KINDS`) and its numbers -> a function ``(size, n) -> set``;
* :func:`with_sets`: a model's own declarations (the paper's :func:`~tpm_models.models.semi_infinite.uncertain_22`)
  with every set replaced by another kind of the same size (:func:`size_of`);
* :func:`declare_rows`: row-wise uncertainty on a nominal model's rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr.visitor import identify_variables

from tpm_models.models.uncertainty import (
    Box,
    Budget,
    Ellipsoid,
    NormBall,
    Polyhedron,
    Uncertain,
    UncertainRow,
    UncertainTerm,
    UncertaintySet,
)

SET_KINDS = ("ball", "box", "ellipsoid", "budget", "polyhedron")
"""The sets :func:`set_maker` makes: ``NormBall``, a symmetric ``Box``, ``Ellipsoid``, ``Budget``, ``Polyhedron``."""


def set_maker(kind: str, p: float | None = None, params: dict | None = None) -> Callable[[float, int], UncertaintySet]:
    """A function ``(radius, n) -> set`` of size ``radius`` in :math:`\\mathbb R^n`, for a declaration that gives only
    the size (the paper's :math:`\\varepsilon_i`; ``tpm-models robustify --set``):

    * ``ball``: ``NormBall(p, radius)`` (``p`` required);
    * ``box``: ``Box.symmetric(radius)``, :math:`|\\delta_j|\\le r`;
    * ``ellipsoid``: ``Ellipsoid(shape, radius)``, ``params["shape"]`` an :math:`n\\times n` matrix (default
      the identity: the :math:`\\ell_2` ball);
    * ``budget``: ``Budget(radius, gamma)``, ``params["gamma"]`` (default 1): at most :math:`\\Gamma`
      coordinates move up by :math:`r`;
    * ``polyhedron``: ``Polyhedron(A, radius * b)``, ``params["A"]``, ``params["b"]`` (default the cross-polytope
      :math:`\\|\\delta\\|_1\\le r` as its :math:`2^n` rows, :math:`n\\le 12`).
    """
    params = dict(params or {})
    if kind not in SET_KINDS:
        raise ValueError(f"the set must be one of {SET_KINDS}, got {kind!r}")
    allowed = {"ball": set(), "box": set(), "ellipsoid": {"shape"}, "budget": {"gamma"},
               "polyhedron": {"A", "b"}}[kind]
    unknown = set(params) - allowed
    if unknown:
        raise ValueError(f"the {kind} set takes {sorted(allowed) or 'no parameter'}, not {sorted(unknown)}")
    if kind == "ball":
        if p is None:
            raise ValueError("a ball needs p (1, 2, inf or any number >= 1)")
        return lambda r, n: NormBall(p, r)
    if kind == "box":
        return lambda r, n: Box.symmetric(r)
    if kind == "ellipsoid":
        def ellipsoid(r, n):
            shape = np.eye(n) if "shape" not in params else np.asarray(params["shape"], float)
            if shape.shape != (n, n):
                raise ValueError(f"the ellipsoid's shape is {shape.shape}, the perturbation has {n} coordinates")
            return Ellipsoid(shape.tolist(), r)
        return ellipsoid
    if kind == "budget":
        gamma = float(params.get("gamma", 1.0))
        return lambda r, n: Budget(r, gamma)

    def polyhedron(r, n):
        if "A" in params or "b" in params:
            if not ("A" in params and "b" in params):
                raise ValueError("a polyhedron needs both A and b")
            A, b = np.atleast_2d(np.asarray(params["A"], float)), np.asarray(params["b"], float).ravel()
        else:
            if n > 12:
                raise ValueError(f"the default polyhedron (the l_1 ball as 2^n rows) is for n <= 12, not {n}; "
                                 "give A and b")
            A = np.array(list(itertools.product((-1.0, 1.0), repeat=n)))
            b = np.ones(len(A))
        if A.shape[1] != n:
            raise ValueError(f"the polyhedron's A has {A.shape[1]} columns, the perturbation has {n} coordinates")
        return Polyhedron(A.tolist(), (r * b).tolist())
    return polyhedron


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
