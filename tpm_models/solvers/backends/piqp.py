"""PIQP: an interior point on the model's matrices (:mod:`tpm_models.solvers.matrices`). Default for LP and QP.

A model of at most :data:`PIQP_DENSE_MAX` variables is solved by PIQP's ``DenseSolver`` on
:func:`~tpm_models.solvers.matrices.qp_matrices` (the dense factorisation wins on the small duals: ~0.1 ms); a larger
one by its ``SparseSolver`` on :func:`~tpm_models.solvers.matrices.sparse_qp_matrices`, where nothing of size
rows x columns is dense (dense, (15) at 10^4 points took 10 s, and 10^5 points did not fit in 24 GB)."""

from __future__ import annotations

import numpy as np
import pyomo.core as pyo

from tpm_models.qp import QPMatrices
from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.common import DENSE_QP_TOL, Termination
from tpm_models.solvers.dense import MATRIX_SOLVERS, MatrixSolution
from tpm_models.solvers.matrices import dense_duals, load_values, qp_matrices, sparse_qp_matrices

PIQP_DENSE_MAX = 500
"""Most variables of a model that ``solve(model, "piqp")`` hands to PIQP's dense solver; above, the sparse one."""


def piqp_settings(time_limit: float | None = None, options: dict | None = None) -> dict:
    """The settings of ``solve(model, "piqp")``: :data:`~tpm_models.solvers.common.DENSE_QP_TOL` residuals and gap,
    :data:`~tpm_models.solvers.common.ITERATION_LIMIT`, then the user's ``options`` (PIQP's names). PIQP has no time
    limit: ``time_limit`` is not passed (cap ``max_iter`` instead)."""
    settings = {"verbose": False, "eps_abs": DENSE_QP_TOL, "eps_rel": DENSE_QP_TOL, "check_duality_gap": True,
                "eps_duality_gap_abs": DENSE_QP_TOL, "eps_duality_gap_rel": DENSE_QP_TOL,
                "max_iter": common.ITERATION_LIMIT}
    return {**settings, **(options or {})}


def piqp_matrices(qp: QPMatrices, time_limit: float | None = None, options: dict | None = None) -> MatrixSolution:
    """PIQP on the matrices ``qp``, with the settings of ``solve(model, "piqp")`` (:func:`piqp_settings`): its sparse
    solver when ``qp.P`` is a ``scipy.sparse`` matrix (:func:`~tpm_models.solvers.matrices.sparse_qp_matrices`), else
    its dense one."""
    import piqp
    import scipy.sparse as sp

    sparse = sp.issparse(qp.P)
    solver = piqp.SparseSolver() if sparse else piqp.DenseSolver()
    for key, value in piqp_settings(time_limit, options).items():
        if not hasattr(solver.settings, key):
            raise ValueError(f"PIQP has no setting {key!r} (see piqp's documentation, Settings)")
        setattr(solver.settings, key, value)
    finite = lambda a: np.where(np.isfinite(a), a, np.sign(a) * 1e30)  # noqa: E731  PIQP's "infinity"
    if sparse:
        matrix = lambda M: sp.csc_matrix(M)  # noqa: E731
        P = sp.triu(qp.P, format="csc")  # PIQP reads the upper triangle
    else:
        matrix = np.asfortranarray
        P = np.asfortranarray(qp.P)
    solver.setup(
        P, qp.q,
        matrix(qp.A) if len(qp.b) else None, qp.b if len(qp.b) else None,
        matrix(qp.G) if len(qp.h_l) else None,
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


def run_piqp(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None, prepared=None):
    """The ``piqp`` backend: :func:`piqp_matrices` on the model's matrices (dense up to :data:`PIQP_DENSE_MAX`
    variables, else sparse), the values and duals loaded back."""
    n = sum(1 for v in model.component_data_objects(pyo.Var, descend_into=True) if not v.fixed)
    qp = qp_matrices(model) if n <= PIQP_DENSE_MAX else sparse_qp_matrices(model)
    sol = piqp_matrices(qp, time_limit, options)
    load_values(qp, sol.x)
    return sol.termination, dense_duals(qp, sol.eq_duals, sol.ineq_duals), sol.message


MATRIX_SOLVERS["piqp"] = piqp_matrices
register_backend("piqp", "piqp", {"LP", "QP"}, run_piqp, time_limit=False)  # PIQP 0.7 has no time limit
