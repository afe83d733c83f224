"""DAQP: a dual active-set method on the model's matrices (:mod:`tpm_models.solvers.matrices`)."""

from __future__ import annotations

import numpy as np
import pyomo.core as pyo

from tpm_models.qp import QPMatrices
from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.common import DENSE_QP_TOL, OPTIMALITY_TOL, Termination
from tpm_models.solvers.dense import MATRIX_SOLVERS, MatrixSolution
from tpm_models.solvers.matrices import dense_duals, load_values, qp_matrices


def daqp_matrices(qp: QPMatrices, time_limit: float | None = None, options: dict | None = None) -> MatrixSolution:
    """DAQP on the dense matrices ``qp``, with the settings of ``solve(model, "daqp")`` and then the user's
    ``options`` (keywords of ``daqp.solve``: ``primal_tol``, ``iter_limit``, ``time_limit``...)."""
    from ctypes import c_double, c_int

    import daqp

    n = len(qp.q)
    # DAQP takes simple bounds first (rows of the identity), then general rows
    A = np.vstack([qp.A, qp.G])
    upper = np.concatenate([qp.x_u, qp.b, qp.h_u])
    lower = np.concatenate([qp.x_l, qp.b, qp.h_l])
    sense = np.concatenate(
        [np.zeros(n), np.full(len(qp.b), 5), np.zeros(len(qp.h_l))]
    ).astype(c_int)  # 5 = equality (active, immutable)
    big = 1e30
    # full proximal regularisation (the Hessians are singular) run to a 1e-12 outer
    # tolerance: the default automatic mode left w of (15) 1e-6 off on Wine.
    settings = {"eps_prox": 1e-2, "eta_prox": DENSE_QP_TOL, "primal_tol": OPTIMALITY_TOL,
                "iter_limit": common.ITERATION_LIMIT, **({"time_limit": float(time_limit)} if time_limit else {}),
                **(options or {})}
    x, _, exitflag, info = daqp.solve(
        np.ascontiguousarray(qp.P, dtype=c_double), np.ascontiguousarray(qp.q, dtype=c_double),
        np.ascontiguousarray(A, dtype=c_double),
        np.ascontiguousarray(np.clip(upper, -big, big), dtype=c_double),
        np.ascontiguousarray(np.clip(lower, -big, big), dtype=c_double),
        sense, **settings,
    )
    names = {1: Termination.OPTIMAL, 2: Termination.OPTIMAL, -1: Termination.INFEASIBLE,
             -3: Termination.INFEASIBLE_OR_UNBOUNDED, -4: Termination.ITERATION_LIMIT}  # -3: a ray, no feasible point
    lam = np.asarray(info["lam"])[n:]
    # DAQP: L = f + lam'(Ax - bound); d min / d bound = -lam
    m_eq = len(qp.b)
    return MatrixSolution(names.get(int(exitflag), Termination.ERROR), np.array(x, dtype=float), -lam[:m_eq],
                          -lam[m_eq:], f"exitflag {int(exitflag)}")


def run_daqp(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None, prepared=None):
    """The ``daqp`` backend: :func:`daqp_matrices` on the model's dense matrices (refused with what to do when they
    would not fit: :func:`~tpm_models.solvers.matrices.check_dense_fits`), the values and duals loaded back."""
    qp = qp_matrices(model)
    sol = daqp_matrices(qp, time_limit, options)
    load_values(qp, sol.x)
    return sol.termination, dense_duals(qp, sol.eq_duals, sol.ineq_duals), sol.message


MATRIX_SOLVERS["daqp"] = daqp_matrices
register_backend("daqp", "daqp", {"LP", "QP"}, run_daqp, time_limit=False)  # DAQP has no time limit
