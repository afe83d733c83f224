"""PIQP: a dense interior point on the model's matrices (:mod:`tpm_models.solvers.matrices`). Default for LP and QP."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from tpm_models.qp import QPMatrices
from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.common import DENSE_QP_TOL, Termination
from tpm_models.solvers.dense import MATRIX_SOLVERS, MatrixSolution
from tpm_models.solvers.matrices import dense_duals, load_values, qp_matrices


def piqp_matrices(qp: QPMatrices) -> MatrixSolution:
    """PIQP (dense) on the matrices ``qp``, with the settings of ``solve(model, "piqp")``."""
    import piqp

    solver = piqp.DenseSolver()
    solver.settings.verbose = False
    solver.settings.eps_abs = DENSE_QP_TOL
    solver.settings.eps_rel = DENSE_QP_TOL
    solver.settings.check_duality_gap = True
    solver.settings.eps_duality_gap_abs = DENSE_QP_TOL
    solver.settings.eps_duality_gap_rel = DENSE_QP_TOL
    solver.settings.max_iter = common.ITERATION_LIMIT
    finite = lambda a: np.where(np.isfinite(a), a, np.sign(a) * 1e30)  # noqa: E731  PIQP's "infinity"
    solver.setup(
        np.asfortranarray(qp.P), qp.q,
        np.asfortranarray(qp.A) if len(qp.b) else None, qp.b if len(qp.b) else None,
        np.asfortranarray(qp.G) if len(qp.h_l) else None,
        finite(qp.h_l) if len(qp.h_l) else None, finite(qp.h_u) if len(qp.h_u) else None,
        finite(qp.x_l), finite(qp.x_u),
    )
    status = solver.solve()
    names = {
        piqp.PIQP_SOLVED: Termination.OPTIMAL,
        piqp.PIQP_MAX_ITER_REACHED: Termination.ITERATION_LIMIT,
        piqp.PIQP_PRIMAL_INFEASIBLE: Termination.INFEASIBLE,
        piqp.PIQP_DUAL_INFEASIBLE: Termination.UNBOUNDED,
        piqp.PIQP_NUMERICS: Termination.NUMERICAL_ERROR,
    }
    r = solver.result
    # PIQP: L = f + y'(Ax - b) + z_u'(Gx - h_u) - z_l'(Gx - h_l); d min / d b = -y, d/dh = z_l - z_u
    return MatrixSolution(names.get(status, Termination.ERROR), np.array(r.x, dtype=float), -np.asarray(r.y),
                          np.asarray(r.z_l) - np.asarray(r.z_u), str(status))


def run_piqp(model: pyo.ConcreteModel, time_limit: float | None):
    """The ``piqp`` backend: :func:`piqp_matrices` on the model's matrices, the values and duals loaded back."""
    qp = qp_matrices(model)
    sol = piqp_matrices(qp)
    load_values(qp, sol.x)
    return sol.termination, dense_duals(qp, sol.eq_duals, sol.ineq_duals), sol.message


MATRIX_SOLVERS["piqp"] = piqp_matrices
register_backend("piqp", "piqp", {"LP", "QP"}, run_piqp, time_limit=False)  # PIQP 0.7 has no time limit
