"""The data of a conic program in Clarabel's standard form: its cones, the program, and how each constraint's dual
is read off a solution (no reading of a model, no solving here; :mod:`tpm_models.solvers.conic` builds a
:class:`ConicForm` from a Pyomo model).

The form is :math:`\\min_x \\tfrac12 x^\\top P x + q^\\top x + q_0` s.t. :math:`Ax + s = b`, :math:`s \\in \\mathcal K`
(``P`` its upper triangle; a maximisation stored negated, ``sense = -1``), :math:`\\mathcal K` a product of ``zero``
(:math:`\\{0\\}^d`), ``nonneg`` (:math:`\\mathbb R_+^d`), ``soc`` (:math:`s_0 \\ge \\|s_{1:}\\|_2`) and ``pow``
(:math:`s_0^\\alpha s_1^{1-\\alpha} \\ge |s_2|`, :math:`s_0, s_1 \\ge 0`) blocks. The columns are the model's
unfixed variables (``component_data_objects`` order), then the epigraph columns; a row :math:`s = c + a^\\top x` is
stored as :math:`b = c`, :math:`A = -a`; a bound :math:`l \\le x_j \\le u` is the ``nonneg`` rows :math:`x_j - l`,
:math:`u - x_j`.

Duals (:class:`DualMap`; the library's convention, the derivative of the optimum in the model's sense with respect to
the row's bound), off Clarabel's :math:`(x, z)` with :math:`Px + q + A^\\top z = 0`: a linear row's is
``sense * sum(factor * z[row])`` (factor -1 for a ``<=`` side or an equality, +1 for a ``>=`` side); a quadratic row
:math:`g(x) \\le 0` has :math:`\\mu = \\langle A_b^\\top z_b, \\nabla g(x)\\rangle / \\|\\nabla g(x)\\|^2` (its block's
part of the stationarity projected on :math:`\\nabla g`), its dual ``sense * (-orient) * mu``, NaN where
:math:`\\|\\nabla g(x)\\| <` ``APEX_TOL`` (the apex: no multiplier need exist). Why the projection:
``docs/solvers.md``, "Clarabel and MOSEK" (Duals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import scipy.sparse as sp

from tpm_models.certify.tolerances import APEX_TOL
from tpm_models.solvers.matrices import NotAQPError


class NotConicError(NotAQPError):
    """The model has a row (or objective) that :func:`conic_form` cannot map to Clarabel's cones."""


class ConeKind(StrEnum):
    """The kinds of cone of the standard form (module docstring); each equals its name as a string."""

    ZERO = "zero"
    NONNEG = "nonneg"
    SOC = "soc"
    POW = "pow"


@dataclass(frozen=True)
class Cone:
    """One block of :math:`\\mathcal K`: its :class:`ConeKind` (given as the kind or its name), its dimension, and
    ``alpha`` in :math:`(0, 1)` for ``pow`` (only there)."""

    kind: ConeKind
    dim: int
    alpha: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "kind", ConeKind(self.kind))  # ValueError for a kind that is not one
        if (self.kind is ConeKind.POW) != (self.alpha is not None) or \
                (self.alpha is not None and not 0.0 < self.alpha < 1.0):
            wants = "alpha in (0, 1)" if self.kind is ConeKind.POW else "no alpha"
            raise ValueError(f"a {self.kind.value} cone takes {wants}, got alpha={self.alpha!r}")


@dataclass
class DualMap:
    """How one constraint's dual is read off Clarabel's :math:`(x, z)` (module docstring)."""

    constraint: object
    rows: list[tuple[int, float]] = field(default_factory=list)
    """Linear rows: ``(row, factor)``; dual = ``sense * sum(factor * z[row])``."""
    cone_start: int | None = None
    """A quadratic row: the first row of its cone block (``cone_dim`` rows)."""
    cone_dim: int = 0
    quad: dict = field(default_factory=dict)
    """A quadratic row's :math:`g(x) = x^\\top Qx + l^\\top x + c \\le 0`: ``{(i, j): Q_ij}`` (i <= j) ..."""
    lin: dict = field(default_factory=dict)
    """... and ``{j: l_j}`` (columns of the conic form)."""
    orient: float = 1.0


@dataclass
class RowDuals:
    """The duals of many linear rows read at once (the builders' rows, one :class:`DualMap` each would be 10^6
    objects at 10^6 points): ``constraints[k]``'s dual is ``sense * sum(factor[i] * z[row[i]])`` over the entries
    ``i`` with ``owner[i] == k``, in entry order (0 for a row without entries: both sides infinite)."""

    constraints: list
    owner: np.ndarray
    row: np.ndarray
    factor: np.ndarray

    def values(self, z: np.ndarray) -> np.ndarray:
        """Each constraint's ``sum(factor * z[row])`` (before the sense), summed in entry order."""
        return np.bincount(self.owner, weights=self.factor * z[self.row], minlength=len(self.constraints))

    def maps(self) -> list[DualMap]:
        """The same as one :class:`DualMap` per constraint."""
        out = [DualMap(c) for c in self.constraints]
        for k, r, f in zip(self.owner.tolist(), self.row.tolist(), self.factor.tolist()):
            out[k].rows.append((r, f))
        return out


@dataclass
class ConicForm:
    """A model in Clarabel's form (module docstring); rows ordered as ``cones``."""

    variables: list
    n_aux: int
    P: sp.csc_matrix
    q: np.ndarray
    q0: float
    sense: int
    A: sp.csc_matrix
    b: np.ndarray
    cones: list[Cone]
    duals: list[DualMap]
    aux_names: list[str]
    row_duals: list[RowDuals] = field(default_factory=list)
    """The duals of the rows read in bulk (the others: ``duals``)."""

    @classmethod
    def from_parts(cls, variables: list, aux_names: list[str], objective: tuple, A: sp.csc_matrix, b: np.ndarray,
                   cones: list[tuple], duals: list[tuple], row_duals: list[tuple]) -> ConicForm:
        """The form of plain parts, its typed members made here: ``objective`` is ``(P, q, q0, sense)``, each of
        ``cones``, ``duals`` and ``row_duals`` the fields of a :class:`Cone`, a :class:`DualMap` and a
        :class:`RowDuals` in their order."""
        P, q, q0, sense = objective
        return cls(variables, len(aux_names), P, q, q0, sense, A, b, [Cone(*c) for c in cones],
                   [DualMap(*d) for d in duals], aux_names, [RowDuals(*r) for r in row_duals])

    def dual_maps(self) -> list[DualMap]:
        """Every constraint's :class:`DualMap`: those of ``row_duals``, then ``duals``."""
        return [d for rows in self.row_duals for d in rows.maps()] + list(self.duals)

    def dual_values(self, x: np.ndarray, z: np.ndarray) -> dict:
        """Duals by constraint data, in :mod:`tpm_models.solvers`' convention (module docstring)."""
        out: dict = {}
        for rows in self.row_duals:
            out.update(zip(rows.constraints, (self.sense * rows.values(z)).tolist()))
        for d in self.duals:
            if d.cone_start is None:
                value = sum(f * z[r] for r, f in d.rows)
            else:
                block = slice(d.cone_start, d.cone_start + d.cone_dim)
                z_block = np.zeros(len(z))
                z_block[block] = z[block]
                contribution = self.A.T @ z_block  # A_b'z_b without slicing rows of the CSC matrix A (a copy of A)
                grad = np.zeros(len(x))
                for (i, j), a in d.quad.items():
                    grad[i] += a * x[j]
                    grad[j] += a * x[i]
                for j, a in d.lin.items():
                    grad[j] += a
                # the products on the row's own columns only (grad is 0 elsewhere): a dot product of all the form's
                # columns goes to BLAS, whose threads wake up for each one (ms when the other core is busy)
                cols = np.array(sorted({c for k in d.quad for c in k} | set(d.lin)), dtype=np.int64)
                norm2 = float(np.sum(grad[cols] * grad[cols]))
                value = math.nan if norm2 < APEX_TOL**2 else \
                    -d.orient * float(np.sum(contribution[cols] * grad[cols])) / norm2
            out[d.constraint] = self.sense * float(value)
        return out
