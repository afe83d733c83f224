"""DAQP: a dual active-set method on the model's matrices (:mod:`tpm_models.solvers.matrices`).

DAQP is a dependency of the package, imported with this module (1 ms, once): the decomposition of
:mod:`tpm_models.learn` calls it for every working set, and a first fit at 10^3 points takes about 10 ms."""

from __future__ import annotations

from typing import Any

import daqp
import numpy as np
import pyomo.core as pyo

from tpm_models.qp import QPMatrices
from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.common import DENSE_QP_TOL, OPTIMALITY_TOL, Termination
from tpm_models.solvers.dense import MatrixSolution, WarmStart
from tpm_models.solvers.matrices import dense_duals, load_values, qp_matrices

DAQP_SETTINGS = {"eps_prox": 1e-2, "eta_prox": DENSE_QP_TOL, "primal_tol": OPTIMALITY_TOL,
                 "iter_limit": common.ITERATION_LIMIT}
"""The settings of every DAQP run: full proximal regularisation (the Hessians are singular) to a ``DENSE_QP_TOL``
outer tolerance (the default automatic mode left w of (15) 1e-6 off on Wine)."""

DAQP_EQUALITY = 5
"""DAQP's ``sense`` of a row that holds with equality (active and immutable)."""

DAQP_TERMINATIONS = {1: Termination.OPTIMAL, 2: Termination.OPTIMAL, -1: Termination.INFEASIBLE,
                     -3: Termination.INFEASIBLE_OR_UNBOUNDED, -4: Termination.ITERATION_LIMIT}
"""DAQP's exit flags (1 optimal, 2 soft optimal; -3: a ray, no feasible point); any other is an error."""

DAQP_INFINITY = 1e30
"""DAQP's infinite bound: larger bounds are clipped to it."""


def daqp_bounds(qp: QPMatrices) -> tuple[np.ndarray, np.ndarray]:
    """The upper and lower bounds of ``qp``'s rows as DAQP takes them: the simple bounds first (rows of the
    identity), then the equality rows (both bounds ``b``) and the rows ``G``; clipped to :data:`DAQP_INFINITY`."""
    upper = np.concatenate([qp.x_u, qp.b, qp.h_u])
    lower = np.concatenate([qp.x_l, qp.b, qp.h_l])
    if not (np.maximum.reduce(upper, initial=-np.inf) <= DAQP_INFINITY
            and np.minimum.reduce(lower, initial=np.inf) >= -DAQP_INFINITY):
        upper, lower = np.clip(upper, -DAQP_INFINITY, DAQP_INFINITY), np.clip(lower, -DAQP_INFINITY, DAQP_INFINITY)
    return upper, lower


def daqp_arrays(qp: QPMatrices) -> tuple[np.ndarray, ...]:
    """``qp`` as DAQP takes it, ``(H, f, A, bupper, blower, sense)`` (C-ordered doubles, :func:`daqp_bounds`, the
    rows ``A`` then ``G``; numpy's own dtypes: a ``ctypes`` type as dtype costs 10 us a conversion)."""
    n = len(qp.q)
    upper, lower = daqp_bounds(qp)
    sense = np.concatenate([np.zeros(n), np.full(len(qp.b), DAQP_EQUALITY), np.zeros(len(qp.h_l))]).astype(np.intc)
    return (np.ascontiguousarray(qp.P, dtype=np.float64), np.ascontiguousarray(qp.q, dtype=np.float64),
            np.ascontiguousarray(np.vstack([qp.A, qp.G]), dtype=np.float64), upper, lower, sense)


def daqp_matrices(qp: QPMatrices, options: dict | None = None, warm: WarmStart | None = None) -> MatrixSolution:
    """DAQP on the dense matrices ``qp`` (the ``matrix_run`` of the ``daqp`` backend: the contract of
    :mod:`tpm_models.solvers.dense`), with :data:`DAQP_SETTINGS` and then ``options`` (DAQP's names). With a
    :class:`~tpm_models.solvers.dense.WarmStart`: the ``daqp.Model`` kept there is updated (``q``, bounds) and started
    from its last working set, else a fresh one set up and kept (the iterates of ``daqp.solve``)."""
    if warm is not None and warm.holds(qp):
        upper, lower = daqp_bounds(qp)
        warm.solver.update(f=np.ascontiguousarray(qp.q, dtype=np.float64), bupper=upper, blower=lower)
        x, _, exitflag, info = warm.solver.solve()
    else:
        settings = {**DAQP_SETTINGS, "iter_limit": common.ITERATION_LIMIT, **(options or {})}  # the limit as it is now
        arrays = daqp_arrays(qp)
        if warm is None:
            x, _, exitflag, info = daqp.solve(*arrays, **settings)
        else:
            model = daqp.Model()
            unknown = set(settings) - set(model.settings)
            if unknown:
                raise ValueError(f"DAQP has no settings {sorted(unknown)} (see DAQP's documentation, parameters)")
            model.settings = settings
            flag, _ = model.setup(*arrays)
            if flag < 0:
                return MatrixSolution(Termination.ERROR, np.full(len(qp.q), np.nan), np.zeros(0), np.zeros(0),
                                      f"setup exitflag {int(flag)}")
            warm.keep(model, qp, arrays)
            x, _, exitflag, info = model.solve()
    lam = np.asarray(info["lam"])[len(qp.q):]
    # DAQP: L = f + lam'(Ax - bound); d min / d bound = -lam
    m_eq = len(qp.b)
    return MatrixSolution(DAQP_TERMINATIONS.get(int(exitflag), Termination.ERROR), np.array(x, dtype=float),
                          -lam[:m_eq], -lam[m_eq:], f"exitflag {int(exitflag)}")


def run_daqp(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
             prepared: Any = None) -> tuple[Termination, dict | None, str]:
    """The ``daqp`` backend: :func:`daqp_matrices` on the model's dense matrices, the values and duals loaded back
    (``time_limit`` is always ``None``: DAQP has none)."""
    qp = qp_matrices(model)
    sol = daqp_matrices(qp, options)
    load_values(qp, sol.x)
    return sol.termination, dense_duals(qp, sol.eq_duals, sol.ineq_duals), sol.message


register_backend("daqp", "daqp", {"LP", "QP"}, run_daqp, time_limit=False,  # DAQP has no time limit
                 matrix_run=daqp_matrices, accurate_point=True)
