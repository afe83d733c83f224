"""DAQP: a dual active-set method on the model's matrices (:mod:`tpm_models.solvers.matrices`)."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.common import DENSE_QP_TOL, OPTIMALITY_TOL, Termination
from tpm_models.solvers.matrices import dense_duals, load_values, qp_matrices


def run_daqp(model: pyo.ConcreteModel, time_limit: float | None):
    from ctypes import c_double, c_int

    import daqp

    qp = qp_matrices(model)
    n = len(qp.variables)
    # DAQP takes simple bounds first (rows of the identity), then general rows
    A = np.vstack([qp.A, qp.G])
    upper = np.concatenate([qp.x_u, qp.b, qp.h_u])
    lower = np.concatenate([qp.x_l, qp.b, qp.h_l])
    sense = np.concatenate(
        [np.zeros(n), np.full(len(qp.b), 5), np.zeros(len(qp.h_l))]
    ).astype(c_int)  # 5 = equality (active, immutable)
    big = 1e30
    x, _, exitflag, info = daqp.solve(
        np.ascontiguousarray(qp.P, dtype=c_double), np.ascontiguousarray(qp.q, dtype=c_double),
        np.ascontiguousarray(A, dtype=c_double),
        np.ascontiguousarray(np.clip(upper, -big, big), dtype=c_double),
        np.ascontiguousarray(np.clip(lower, -big, big), dtype=c_double),
        sense,
        # full proximal regularisation (the Hessians are singular) run to a 1e-12 outer
        # tolerance: the default automatic mode left w of (15) 1e-6 off on Wine.
        eps_prox=1e-2, eta_prox=DENSE_QP_TOL, primal_tol=OPTIMALITY_TOL, iter_limit=common.ITERATION_LIMIT,
    )
    names = {1: Termination.OPTIMAL, 2: Termination.OPTIMAL, -1: Termination.INFEASIBLE,
             -3: Termination.UNBOUNDED, -4: Termination.ITERATION_LIMIT}
    termination = names.get(int(exitflag), Termination.ERROR)
    load_values(qp, np.asarray(x))
    lam = np.asarray(info["lam"])[n:]
    # DAQP: L = f + lam'(Ax - bound); d min / d bound = -lam
    m_eq = len(qp.b)
    duals = dense_duals(qp, -lam[:m_eq], -lam[m_eq:])
    return termination, duals, f"exitflag {int(exitflag)}"


register_backend("daqp", "daqp", {"LP", "QP"}, run_daqp)
