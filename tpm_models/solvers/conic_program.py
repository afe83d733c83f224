"""The conic program a Clarabel run takes, and its solution, as the reductions pass them
(:mod:`tpm_models.solvers.reductions`): :math:`\\min \\tfrac12 x^\\top Px + q^\\top x` s.t. :math:`Ax + s = b`,
:math:`s \\in` ``cones`` (:class:`~tpm_models.solvers.cones.Cone` s, rows in their order; ``P`` its upper triangle).
A :class:`~tpm_models.solvers.cones.ConicForm` is one with the map back to a model; this is the bare program."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from tpm_models.solvers.cones import Cone


@dataclass(frozen=True)
class ConicProgram:
    """:math:`\\min \\tfrac12 x^\\top Px + q^\\top x` s.t. :math:`b - Ax \\in` ``cones`` (module docstring)."""

    P: sp.csc_matrix
    q: np.ndarray
    A: sp.csc_matrix
    b: np.ndarray
    cones: list[Cone]

    @classmethod
    def of(cls, form: Any) -> ConicProgram:
        """The program of anything with ``P``, ``q``, ``A``, ``b`` and ``cones`` (a ``ConicForm``)."""
        return cls(form.P, np.asarray(form.q, dtype=float), form.A, np.asarray(form.b, dtype=float),
                   list(form.cones))

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, columns)`` of ``A``."""
        return self.A.shape

    def slack(self, x: np.ndarray) -> np.ndarray:
        """:math:`s = b - Ax`."""
        return self.b - self.A @ x


@dataclass(frozen=True)
class ConicSolution:
    """A primal-dual point of a :class:`ConicProgram`: ``x``, its slack ``s`` and the dual ``z``
    (:math:`Px + q + A^\\top z = 0`, :math:`z \\in \\mathcal K^*` at an optimum)."""

    x: np.ndarray
    s: np.ndarray
    z: np.ndarray
