"""PIQP: a dense interior point on the model's matrices (:mod:`tpm_models.solvers.matrices`). Default for LP and QP."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.common import DENSE_QP_TOL, Termination
from tpm_models.solvers.matrices import dense_duals, load_values, qp_matrices


def run_piqp(model: pyo.ConcreteModel, time_limit: float | None):
    import piqp

    qp = qp_matrices(model)
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
    termination = names.get(status, Termination.ERROR)
    r = solver.result
    load_values(qp, r.x)
    # PIQP: L = f + y'(Ax - b) + z_u'(Gx - h_u) - z_l'(Gx - h_l); d min / d b = -y, d/dh = z_l - z_u
    duals = dense_duals(qp, -np.asarray(r.y), np.asarray(r.z_l) - np.asarray(r.z_u))
    return termination, duals, str(status)


register_backend("piqp", "piqp", {"LP", "QP"}, run_piqp)
