"""PIQP: an interior point on the model's matrices (:mod:`tpm_models.solvers.matrices`). Default for LP and QP.

A model of at most :data:`PIQP_DENSE_MAX` variables is solved by PIQP's ``DenseSolver`` on
:func:`~tpm_models.solvers.matrices.dense_qp_matrices`, a larger one by its ``SparseSolver`` on
:func:`~tpm_models.solvers.matrices.sparse_qp_matrices`, where nothing of size rows x columns is dense."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pyomo.core as pyo

from tpm_models.qp import QPMatrices
from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.common import DENSE_QP_TOL, Termination
from tpm_models.solvers.dense import MatrixSolution, WarmStart
from tpm_models.solvers.matrices import dense_duals, dense_qp_matrices, load_values, sparse_qp_matrices
from tpm_models.solvers.program import Program
from tpm_models.solvers.reductions import rank_one_columns

PIQP_DENSE_MAX = 500
"""Most variables of a model that ``solve(model, "piqp")`` hands to PIQP's dense solver; above, the sparse one."""

PIQP_MAX_ITER = 100
"""The iteration cap (``max_iter``; at most :data:`~tpm_models.solvers.common.ITERATION_LIMIT`) of PIQP's sparse
solver (models above :data:`PIQP_DENSE_MAX` variables); the dense solver keeps ``ITERATION_LIMIT`` (the
measurements: ``docs/solvers.md``, "Defaults chosen from these numbers")."""

PIQP_ACCEPT_TOL = 1e-9
"""A run stopped at its iteration cap whose primal and dual residuals and duality gap (PIQP's, absolute) are at most
this is taken as optimal, its point judged by the certificate as any backend's; else it is an iteration limit."""


def piqp_settings(options: dict | None = None, sparse: bool = False) -> dict:
    """The settings of ``solve(model, "piqp")``: :data:`~tpm_models.solvers.common.DENSE_QP_TOL` residuals and gap,
    :data:`~tpm_models.solvers.common.ITERATION_LIMIT` (:data:`PIQP_MAX_ITER` for the ``sparse`` solver), then the
    user's ``options`` (PIQP's names; it has no time limit: cap ``max_iter`` instead)."""
    cap = min(common.ITERATION_LIMIT, PIQP_MAX_ITER) if sparse else common.ITERATION_LIMIT
    settings = {"verbose": False, "eps_abs": DENSE_QP_TOL, "eps_rel": DENSE_QP_TOL, "check_duality_gap": True,
                "eps_duality_gap_abs": DENSE_QP_TOL, "eps_duality_gap_rel": DENSE_QP_TOL, "max_iter": cap}
    return {**settings, **(options or {})}


def stalled_but_accurate(status: Any, result: Any) -> str | None:
    """Why a run stopped at its iteration cap (``status``) is taken as optimal (:data:`PIQP_ACCEPT_TOL`), or
    ``None``: not at the cap, a point that is not finite, or a residual above the tolerance."""
    import piqp

    if status != piqp.PIQP_MAX_ITER_REACHED:
        return None
    info = getattr(result, "info", None)
    if info is None or not np.isfinite(np.asarray(result.x)).all():
        return None
    worst = max(abs(float(getattr(info, name, np.inf))) for name in ("primal_res", "dual_res", "duality_gap"))
    if not worst <= PIQP_ACCEPT_TOL:
        return None
    return (f"{status} after {getattr(info, 'iter', '?')} iterations, its residuals and gap {worst:.1e} <= "
            f"{PIQP_ACCEPT_TOL:g}: taken as optimal, judged by the certificate")


def finite(a: np.ndarray) -> np.ndarray:
    """``a`` with its infinite entries as PIQP's "infinity", :math:`\\pm 10^{30}` (``a`` itself when all are
    finite)."""
    return a if np.isfinite(a).all() else np.where(np.isfinite(a), a, np.sign(a) * 1e30)


def piqp_vectors(qp: QPMatrices) -> dict:
    """The right-hand sides and bounds of ``qp`` as PIQP's ``setup`` and ``update`` take them: ``None`` for no rows,
    infinite bounds as :func:`finite`."""
    rows = len(qp.h_l) > 0
    return {"b": qp.b if len(qp.b) else None, "h_l": finite(qp.h_l) if rows else None,
            "h_u": finite(qp.h_u) if rows else None, "x_l": finite(qp.x_l), "x_u": finite(qp.x_u)}


def piqp_setup(qp: QPMatrices, options: dict | None = None) -> Any:
    """PIQP's solver set up (not yet solved) on ``qp``, with :func:`piqp_settings`: its ``SparseSolver`` when
    ``qp.P`` is a ``scipy.sparse`` matrix (the upper triangle of ``P``, CSC), else its ``DenseSolver`` (Fortran
    order). An unknown setting in ``options`` raises ``ValueError``."""
    import piqp
    import scipy.sparse as sp

    sparse = sp.issparse(qp.P)
    solver = piqp.SparseSolver() if sparse else piqp.DenseSolver()
    known = solver.settings
    for key, value in piqp_settings(options, sparse).items():
        if options and key in options and not hasattr(known, key):
            raise ValueError(f"PIQP has no setting {key!r} (see piqp's documentation, Settings)")
        setattr(known, key, value)
    matrix = sp.csc_matrix if sparse else np.asfortranarray
    solver.setup(sp.triu(qp.P, format="csc") if sparse else np.asfortranarray(qp.P), qp.q,
                 A=matrix(qp.A) if len(qp.b) else None, G=matrix(qp.G) if len(qp.h_l) else None, **piqp_vectors(qp))
    return solver


@functools.cache
def piqp_terminations() -> dict:
    """PIQP's statuses as :class:`~tpm_models.solvers.common.Termination` s (built once); any other is an error."""
    import piqp

    return {
        piqp.PIQP_SOLVED: Termination.OPTIMAL,
        piqp.PIQP_MAX_ITER_REACHED: Termination.ITERATION_LIMIT,
        piqp.PIQP_PRIMAL_INFEASIBLE: Termination.INFEASIBLE,
        piqp.PIQP_DUAL_INFEASIBLE: Termination.INFEASIBLE_OR_UNBOUNDED,  # dual infeasible: unbounded if feasible
        piqp.PIQP_NUMERICS: Termination.NUMERICAL_ERROR,
    }


@functools.cache
def piqp_status_text(status: Any) -> str:
    """``str(status)`` of a PIQP status, once per status (the binding's ``__str__`` costs 6 us, a fit's dual on Wine
    about 200 us)."""
    return str(status)


def piqp_matrices(qp: QPMatrices, options: dict | None = None, warm: WarmStart | None = None,
                  merge: bool = True) -> MatrixSolution:
    """PIQP on the matrices ``qp`` (the ``matrix_run`` of the ``piqp`` backend: the contract of
    :func:`tpm_models.solvers.dense.solve_matrices`), set up by :func:`piqp_setup`. Sparse ``qp``: the columns of
    ``G`` that enter a large block of rows in fixed ratios merged (:mod:`tpm_models.solvers.reductions`; the
    point mapped back) unless ``merge`` is false. Dense ``qp`` with ``warm``
    (:class:`~tpm_models.solvers.dense.WarmStart`): the solver kept there is updated (``q``, ``b``, ``h``, bounds)
    when it was set up on the same ``P``, ``A``, ``G``, else set up and kept."""
    import scipy.sparse as sp

    sparse = sp.issparse(qp.P)
    merged = rank_one_columns(qp.G) if sparse and merge and len(qp.h_l) else None
    original, qp = qp, (qp if merged is None else merged.qp(qp))
    if warm is not None and not sparse and warm.holds(qp):
        solver = warm.solver
        solver.update(c=qp.q, **piqp_vectors(qp))
    else:
        solver = piqp_setup(qp, options)
        if warm is not None and not sparse:
            warm.keep(solver, qp)
    status = solver.solve()
    r = solver.result
    termination, message = piqp_terminations().get(status, Termination.ERROR), piqp_status_text(status)
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


def piqp_program(program: Program) -> QPMatrices:
    """The matrices PIQP solves, read from the solve's ``program``: dense up to :data:`PIQP_DENSE_MAX` variables
    (:func:`~tpm_models.solvers.matrices.dense_qp_matrices`), else sparse."""
    if program.n <= PIQP_DENSE_MAX:
        return dense_qp_matrices(program.model, program)
    return sparse_qp_matrices(program.model, program)


def run_piqp(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
             prepared: Any = None, tee: bool = False) -> tuple[Termination, dict | None, str]:
    """The ``piqp`` backend: :func:`piqp_matrices` on the model's matrices (``prepared``: :func:`piqp_program`),
    the values and duals loaded back."""
    qp = piqp_program(Program(model)) if prepared is None else prepared
    sol = piqp_matrices(qp, {**(options or {}), "verbose": True} if tee else options)
    load_values(qp, sol.x)
    return sol.termination, dense_duals(qp, sol.eq_duals, sol.ineq_duals), sol.message


register_backend("piqp", "piqp", {"LP", "QP"}, run_piqp, time_limit=False,  # PIQP 0.7 has no time limit
                 prepare=piqp_program, matrix_run=piqp_matrices, tee=True, accurate_point=True)
