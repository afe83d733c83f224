"""An independent reference for (23): cvxpy + Clarabel, written from the paper's equation, not from tpm_models.

Not part of the library (the library never imports cvxpy). Run in a throwaway environment::

    python3 -m venv /tmp/cvx && /tmp/cvx/bin/pip install cvxpy clarabel numpy pandas
    /tmp/cvx/bin/python docs/reference/cvxpy_23.py docs/reference/cvxpy_23.csv

It reads the shipped CSV files itself (header row, label column last, classes numbered in sorted
order of the labels), scales every feature to [0, 1] ((x - min) / (max - min)), and for Iris and Wine,
every class c, (nu, alpha) in {(0.2, 1), (0.5, 1), (0.9, 1), (1, 2)}, p in {1, 1.5, 2, 3, inf} and
eps in {0, 0.02, 0.1} (360 instances) solves Theorem 1's robust counterpart (23):

    min  1/2 ||w||_2^2 + nu/m_{-c} sum_{i in X_{-c}} (x_i'w + eps ||w||_{p'}) + nu theta + alpha/m_c sum_{i in X_c} xi_i
    s.t. x_i'w + theta - eps ||w||_{p'} >= -xi_i  (i in X_c),   xi >= 0,

with 1/p + 1/p' = 1, by Clarabel (called on cvxpy's problem data) at each of TOLS, keeping the point with the
least residual. One row per instance: the objective, theta, w (space-separated, repr precision), Clarabel's
status, the tolerance of the run kept and its residual.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from pathlib import Path

import cvxpy as cp
import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "tpm_models" / "datasets"
DATASETS = ("iris", "wine")
PARAMETERS = ((0.2, 1.0), (0.5, 1.0), (0.9, 1.0), (1.0, 2.0))
P_VALUES = (1.0, 1.5, 2.0, 3.0, math.inf)
EPS = (0.0, 0.02, 0.1)
TOLS = (1e-12, 1e-11, 1e-10, 1e-9)
"""Clarabel's gap and feasibility tolerances: each is run, and the point kept is the one with the least
residual (the largest of the relative duality gap and Clarabel's scaled primal and dual residuals)."""


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    frame = pd.read_csv(DATA / f"{name}.csv")
    X = frame.iloc[:, :-1].to_numpy(dtype=float)
    labels = frame.iloc[:, -1].to_numpy()
    y = np.searchsorted(np.unique(labels), labels)
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (X - lo) / span, y


def conjugate(p: float) -> float:
    if p == 1.0:
        return math.inf
    if math.isinf(p):
        return 1.0
    return p / (p - 1.0)


def solve_23(Xc: np.ndarray, Xo: np.ndarray, nu: float, alpha: float, p: float, eps: float):
    m_c, n = Xc.shape
    m_o = Xo.shape[0]
    w = cp.Variable(n)
    theta = cp.Variable()
    xi = cp.Variable(m_c)
    norm = cp.norm(w, conjugate(p))
    objective = (0.5 * cp.sum_squares(w) + nu / m_o * cp.sum(Xo @ w + eps * norm)
                 + nu * theta + alpha / m_c * cp.sum(xi))
    constraints = [Xc @ w + theta - eps * norm >= -xi, xi >= 0]
    problem = cp.Problem(cp.Minimize(objective), constraints)
    data, chain, inverse = problem.get_problem_data(cp.CLARABEL)
    solver = chain.solver_chain[-1] if hasattr(chain, "solver_chain") else chain.reductions[-1]
    best = None
    for tol in TOLS:
        opts = dict(tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol, tol_infeas_abs=tol, tol_infeas_rel=tol,
                    tol_ktratio=1e-9, max_iter=1000, static_regularization_constant=1e-9,
                    iterative_refinement_reltol=1e-15, iterative_refinement_abstol=1e-15,
                    iterative_refinement_max_iter=50)
        raw = solver.solve_via_data(data, False, False, opts)
        if str(raw.status) not in ("Solved", "AlmostSolved"):
            continue
        p, d = float(raw.obj_val), float(raw.obj_val_dual)
        residual = max(abs(p - d) / max(1.0, min(abs(p), abs(d))), raw.r_prim, raw.r_dual)
        if best is None or residual < best[0]:
            best = (residual, raw, tol)
    residual, raw, tol = best
    inverse[-1].solver_options = {}  # as problem.solve() would set it
    with warnings.catch_warnings():  # "may be inaccurate" for an AlmostSolved point: its residual is reported
        warnings.simplefilter("ignore")
        problem.unpack_results(raw, chain, inverse)
    return problem.value, float(theta.value), np.asarray(w.value, dtype=float), str(raw.status), tol, residual


def main(out: str) -> None:
    rows = []
    for name in DATASETS:
        X, y = load(name)
        for c in np.unique(y):
            Xc, Xo = X[y == c], X[y != c]
            for nu, alpha in PARAMETERS:
                for p in P_VALUES:
                    for eps in EPS:
                        start = time.perf_counter()
                        obj, theta, w, status, tol, residual = solve_23(Xc, Xo, nu, alpha, p, eps)
                        rows.append({"dataset": name, "cls": int(c), "nu": nu, "alpha": alpha, "p": p, "eps": eps,
                                     "objective": repr(float(obj)), "theta": repr(theta),
                                     "w": " ".join(repr(float(v)) for v in w), "status": status, "tol": tol,
                                     "residual": residual,
                                     "seconds": time.perf_counter() - start})
                        print(name, c, nu, alpha, p, eps, status, obj, file=sys.stderr)
    pd.DataFrame(rows).to_csv(out, index=False)
    statuses = pd.Series([r["status"] for r in rows]).value_counts().to_dict()
    print(f"{len(rows)} instances -> {out}; statuses: {statuses}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(HERE / "cvxpy_23.csv"))
