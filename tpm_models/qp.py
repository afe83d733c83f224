"""A quadratic program in matrix form: the data type shared by the models that write one (the duals'
matrices, :func:`tpm_models.models.shapes.dual_matrices`), the solvers that read one from a Pyomo model
(:func:`tpm_models.solvers.matrices.qp_matrices`) and the dense solvers and fast paths that solve one.

.. math::
    \\min_x\\ \\tfrac12 x^\\top P x + q^\\top x + q_0
    \\quad\\text{s.t.}\\quad A x = b,\\quad h_l \\le G x \\le h_u,\\quad x_l \\le x \\le x_u .

A maximisation is stored as the minimisation of the negated objective (``sense = -1``: the model's
objective equals ``sense * (1/2 x'Px + q'x + q0)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
