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
from tpm_models.solvers.merged_columns import rank_one_columns

PIQP_DENSE_MAX = 500
"""Most variables of a model that ``solve(model, "piqp")`` hands to PIQP's dense solver; above, the sparse one."""

PIQP_MAX_ITER = 100
"""The iteration cap (``max_iter``; at most :data:`~tpm_models.solvers.common.ITERATION_LIMIT`) of PIQP's sparse
solver (models above :data:`PIQP_DENSE_MAX` variables), where an iteration costs 24 ms at 10^5 points. Measured: 9-23
iterations on (15), (23) at p = 1 and inf of the scale benchmark at 10^4 and 10^5 points; four times that leaves
room for a slower run. On (15) at 10^5 points, class 2 against the rest, nu = 0.1, the dual residual reached 1.05e-12
at iteration 19 and stalled at 5.05e-12, above PIQP's 1e-12 test: the cap of 10,000 iterations took 237 s, then
Clarabel solved it; at this cap, 3.0 s, PIQP's point taken (:data:`PIQP_ACCEPT_TOL`) and certified. The dense
solver keeps ``ITERATION_LIMIT``: its iterations cost 50 us, and the four of the 415 QPs of ``tpm-models reproduce
--dataset iris wine`` that stall the same way (Iris duals of 155 variables; the others take 9-22 iterations) reach
PIQP's own test, at a gap of about 1e-13, after 1,445-5,965 iterations (0.1-0.3 s), where this cap would leave
them at 1e-10."""

PIQP_ACCEPT_TOL = 1e-9
"""A run stopped at its iteration cap whose primal residual, dual residual and duality gap (PIQP's, absolute: the
data are min-max scaled, rows of order one) are at most this is taken as optimal, and the certificate on the model
judges its point, as for any backend's; else it is an iteration limit (the default solver then falls back)."""


def piqp_settings(time_limit: float | None = None, options: dict | None = None, sparse: bool = False) -> dict:
    """The settings of ``solve(model, "piqp")``: :data:`~tpm_models.solvers.common.DENSE_QP_TOL` residuals and gap,
    :data:`~tpm_models.solvers.common.ITERATION_LIMIT` (:data:`PIQP_MAX_ITER` for the ``sparse`` solver), then the
    user's ``options`` (PIQP's names). PIQP has no time limit: ``time_limit`` is not passed (cap ``max_iter``
    instead)."""
    cap = min(common.ITERATION_LIMIT, PIQP_MAX_ITER) if sparse else common.ITERATION_LIMIT
    settings = {"verbose": False, "eps_abs": DENSE_QP_TOL, "eps_rel": DENSE_QP_TOL, "check_duality_gap": True,
                "eps_duality_gap_abs": DENSE_QP_TOL, "eps_duality_gap_rel": DENSE_QP_TOL, "max_iter": cap}
    return {**settings, **(options or {})}


def stalled_but_accurate(status, result) -> str | None:
    """Why a run stopped at its iteration cap (``status``) is taken as optimal (:data:`PIQP_ACCEPT_TOL`), or
    ``None``: not at the cap, a point that is not finite, or a residual above the tolerance."""
    import piqp

    info = getattr(result, "info", None)
    if status != piqp.PIQP_MAX_ITER_REACHED or info is None or not np.isfinite(np.asarray(result.x)).all():
        return None
    worst = max(abs(float(getattr(info, name, np.inf))) for name in ("primal_res", "dual_res", "duality_gap"))
    if not worst <= PIQP_ACCEPT_TOL:
        return None
    return (f"{status} after {getattr(info, 'iter', '?')} iterations, its residuals and gap {worst:.1e} <= "
            f"{PIQP_ACCEPT_TOL:g}: taken as optimal, judged by the certificate")


def piqp_matrices(qp: QPMatrices, time_limit: float | None = None, options: dict | None = None,
                  merge: bool = True) -> MatrixSolution:
    """PIQP on the matrices ``qp``, with the settings of ``solve(model, "piqp")`` (:func:`piqp_settings`): its sparse
    solver when ``qp.P`` is a ``scipy.sparse`` matrix (:func:`~tpm_models.solvers.matrices.sparse_qp_matrices`), on
    ``qp`` with the columns of ``G`` that enter a large block of rows in fixed ratios merged
    (:mod:`tpm_models.solvers.merged_columns`; the point mapped back) unless ``merge`` is false, else its dense
    one."""
    import piqp
    import scipy.sparse as sp

    sparse = sp.issparse(qp.P)
    solver = piqp.SparseSolver() if sparse else piqp.DenseSolver()
    for key, value in piqp_settings(time_limit, options, sparse).items():
        if not hasattr(solver.settings, key):
            raise ValueError(f"PIQP has no setting {key!r} (see piqp's documentation, Settings)")
        setattr(solver.settings, key, value)
    finite = lambda a: np.where(np.isfinite(a), a, np.sign(a) * 1e30)  # noqa: E731  PIQP's "infinity"
    merged = rank_one_columns(qp.G) if sparse and merge and len(qp.h_l) else None
    original, qp = qp, (qp if merged is None else merged.qp(qp))
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
        piqp.PIQP_DUAL_INFEASIBLE: Termination.INFEASIBLE_OR_UNBOUNDED,  # dual infeasible: unbounded if feasible
        piqp.PIQP_NUMERICS: Termination.NUMERICAL_ERROR,
    }
    r = solver.result
    termination, message = names.get(status, Termination.ERROR), str(status)
    accepted = stalled_but_accurate(status, r)
    if accepted is not None:
        termination, message = Termination.OPTIMAL, accepted
    if merged is not None:
        message += "; " + merged.note
    # PIQP: L = f + y'(Ax - b) + z_u'(Gx - h_u) - z_l'(Gx - h_l); d min / d b = -y, d/dh = z_l - z_u
    # (merged: the model's own columns and equality rows come first)
    n, m = len(original.q), len(original.b)
    return MatrixSolution(termination, np.array(r.x, dtype=float)[:n], -np.asarray(r.y)[:m],
                          np.asarray(r.z_l) - np.asarray(r.z_u), message)


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
