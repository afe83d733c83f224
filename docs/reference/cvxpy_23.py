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
least residual. Then, where (23) is smooth in w away from w = 0 (eps = 0, or 1 < p' < inf, i.e. p in {1.5, 2, 3}),
the point is polished (polish_23): an interior point's w is off by about the square root of its gap (1e-6 at
1e-12 on (23) at p = 2), so Newton's method solves (23)'s own optimality conditions in (w, theta, lambda) on the
sets of points the interior point puts on, inside and outside the margin, and the polished point is kept only when
those conditions hold to POLISH_TOL with the signs they need (lambda in [0, alpha/m_c] on the margin, the
margin's sign off it). This is (23)'s reduced KKT system, written here from the paper's equation; the library's
polish (tpm_models.solvers.polish) works on a conic form's cone faces, a different system. At p in {1, inf} with
eps > 0, where ||w||_{p'} has kinks, (23) is a QP in (w, theta, xi, s) with s >= +-w_j (qp_polish_23): its
KKT system on the rows active at the interior point is solved exactly (least squares where it is singular), and
rows are moved in and out while a multiplier or a slack has the wrong sign (an active-set method started at the
interior point's active set). HiGHS's and DAQP's QP solvers (through cvxpy) were tried first: their w was up to
9e-8 and 5e-6 off where Clarabel, PIQP and Gurobi (through the library) agreed to 1e-11.

One row per instance: the objective, theta, w (space-separated, repr precision), Clarabel's status, the tolerance
of the run kept and its residual, and ``refined``: ``newton <KKT residual>`` (polished), ``qp <KKT residual>``
(the QP's polished point), or "" (Clarabel's point).
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


POLISH_TOL = 1e-13
"""The largest residual of (23)'s optimality conditions at a polished point kept."""

POLISH_MOVES: int | None = None
"""How many points with a wrong sign :func:`polish_23` moves between its sets a pass: ``None``, all of them (as
the Iris/Wine reference was made); ``k``, the ``k`` with the largest violation, for up to
``POLISH_PASSES_FEW_MOVES`` passes. At 10^5 points (``cvxpy_scale.py``) many points lie close to the margin (25 of
25,000 within 2.2e-7, 250 within 4.4e-6), and moving every one that a Newton step pushes across grew the process to
5 GB (a dense Newton matrix over most of the class) without finishing."""

POLISH_PASSES = 20
"""The most passes of :func:`polish_23` with ``POLISH_MOVES = None``."""

POLISH_PASSES_FEW_MOVES = 200
"""The most passes of :func:`polish_23` with ``POLISH_MOVES`` set (a pass moves only that many points)."""


def norm_parts(w: np.ndarray, q: float) -> tuple[float, np.ndarray, np.ndarray]:
    """||w||_q, its gradient and its Hessian (1 < q < inf, w != 0)."""
    N = float(np.sum(np.abs(w) ** q) ** (1.0 / q))
    g = np.sign(w) * (np.abs(w) / N) ** (q - 1.0)
    H = (q - 1.0) / N * (np.diag((np.abs(w) / N) ** (q - 2.0)) - np.outer(g, g))
    return N, g, H


def polish_23(Xc, Xo, nu, alpha, p, eps, w, theta):
    """(23)'s optimality conditions by Newton's method from (w, theta); (w, theta, residual) or None.

    With c = alpha/m_c, a = nu/m_{-c} sum_{-c} x_i, B = nu eps, N = ||w||_{p'}, r_i = x_i'w + theta - eps N:
    points with r_i < 0 have lambda_i = c (xi_i = -r_i > 0), r_i > 0 lambda_i = 0, and r_i = 0 (the set E)
    lambda_i in [0, c]; then  w + a + (B + eps sum_i lambda_i) grad N - sum_i lambda_i x_i = 0,
    nu - sum_i lambda_i = 0,  r_i = 0 (i in E). Sets are moved while a sign is wrong (at most 20 times).
    """
    q = conjugate(p)
    if not (eps == 0.0 or 1.0 < q < math.inf) or np.linalg.norm(w) <= 1e-6:
        return None  # w = 0 (nothing to gain from a hyperplane) is where ||w|| is not smooth
    if eps > 0 and q < 2.0 and np.min(np.abs(w)) <= 1e-6 * np.max(np.abs(w)):
        return None  # |w_j|^q is not twice differentiable at w_j = 0 for q < 2
    m, n = Xc.shape
    c = alpha / m
    a = nu / len(Xo) * Xo.sum(axis=0)
    B = nu * eps

    def parts(w):
        return norm_parts(w, q) if eps > 0 else (0.0, np.zeros(n), np.zeros((n, n)))

    N = parts(w)[0]
    r = Xc @ w + theta - eps * N
    scale = 1e-7 * max(1.0, float(np.max(np.abs(r))))
    E, L = np.abs(r) <= scale, r < -scale
    for _ in range(POLISH_PASSES if POLISH_MOVES is None else POLISH_PASSES_FEW_MOVES):
        wk, tk = w.copy(), float(theta)
        lam_E = np.full(int(E.sum()), c / 2)
        for _ in range(30):
            N, g, H = parts(wk)
            r = Xc @ wk + tk - eps * N
            lam = np.where(L, c, 0.0)
            lam[E] = lam_E
            total = float(lam.sum())
            F = np.concatenate([wk + a + (B + eps * total) * g - Xc.T @ lam, [nu - total], r[E]])
            if np.max(np.abs(F)) <= 1e-16:
                break
            XE = Xc[E]
            J = np.zeros((n + 1 + len(lam_E), n + 1 + len(lam_E)))
            J[:n, :n] = np.eye(n) + (B + eps * total) * H
            J[:n, n + 1:] = (eps * g[:, None] - XE.T)
            J[n, n + 1:] = -1.0
            J[n + 1:, :n] = XE - eps * g[None, :]
            J[n + 1:, n] = 1.0
            if not np.isfinite(J).all():
                return None
            step = np.linalg.lstsq(J, -F, rcond=None)[0]
            wk, tk, lam_E = wk + step[:n], tk + step[n], lam_E + step[n + 1:]
        N, g, H = parts(wk)
        r = Xc @ wk + tk - eps * N
        lam = np.where(L, c, 0.0)
        lam[E] = lam_E
        total = float(lam.sum())
        F = np.concatenate([wk + a + (B + eps * total) * g - Xc.T @ lam, [nu - total], r[E]])
        residual = float(np.max(np.abs(F)))
        wrong_low, wrong_high = E & (lam < -POLISH_TOL), E & (lam > c + POLISH_TOL)
        wrong_G = ~E & ~L & (r < -POLISH_TOL)
        wrong_L = L & (r > POLISH_TOL)
        if not (wrong_low.any() or wrong_high.any() or wrong_G.any() or wrong_L.any()):
            return (wk, tk, residual) if residual <= POLISH_TOL else None
        if POLISH_MOVES is not None:  # only the worst few: the violation of each, in the units of its condition
            lam_full = np.where(L, c, 0.0)
            lam_full[E] = lam_E
            violation = np.zeros(m)
            violation[wrong_low] = -lam_full[wrong_low]
            violation[wrong_high] = lam_full[wrong_high] - c
            violation[wrong_G] = -r[wrong_G]
            violation[wrong_L] = r[wrong_L]
            keep = np.zeros(m, dtype=bool)
            keep[np.argsort(-violation)[:POLISH_MOVES]] = True
            wrong_low, wrong_high, wrong_G, wrong_L = (v & keep for v in (wrong_low, wrong_high, wrong_G, wrong_L))
        E = (E & ~wrong_low & ~wrong_high) | wrong_G | wrong_L
        L = (L & ~wrong_L) | wrong_high
    return None


def qp_polish_23(Xc, Xo, nu, alpha, p, eps, w, theta):
    """(23) at p = 1 (one s >= |w_j|) or p = inf (s_j >= |w_j|, ||w||_1 = sum_j s_j) as the QP
    min 1/2 w'w + a'w + nu eps sum(s) + nu theta + c sum(xi) s.t. G x <= 0, x = (w, theta, xi, s);
    an active-set method from the interior point's active rows. (w, theta, residual) or None."""
    m, n = Xc.shape
    k = 1 if p == 1.0 else n
    c = alpha / m
    nv = n + 1 + m + k
    f = np.concatenate([nu / len(Xo) * Xo.sum(axis=0), [nu], np.full(m, c), np.full(k, nu * eps)])
    H = np.diag(np.concatenate([np.ones(n), np.zeros(1 + m + k)]))
    S = np.ones((n, 1)) if k == 1 else np.eye(n)  # s_j (or s) for w_j
    I_m = np.eye(m)
    G = np.vstack([
        np.hstack([-Xc, -np.ones((m, 1)), -I_m, eps * np.ones((m, k))]),  # margin
        np.hstack([np.zeros((m, n + 1)), -I_m, np.zeros((m, k))]),         # xi >= 0
        np.hstack([np.eye(n), np.zeros((n, 1 + m)), -S]),                  # w_j - s <= 0
        np.hstack([-np.eye(n), np.zeros((n, 1 + m)), -S]),                 # -w_j - s <= 0
    ])
    s0 = np.array([np.max(np.abs(w))]) if k == 1 else np.abs(w)
    xi0 = np.maximum(0.0, -(Xc @ w + theta - eps * s0.sum()))
    x = np.concatenate([w, [theta], xi0, s0])
    active = G @ x >= -1e-7 * max(1.0, float(np.max(np.abs(x))))
    for _ in range(50):
        GA = G[active]
        K = np.block([[H, GA.T], [GA, np.zeros((len(GA), len(GA)))]])
        sol = np.linalg.lstsq(K, np.concatenate([-f, np.zeros(len(GA))]), rcond=None)[0]
        x, lam = sol[:nv], sol[nv:]
        slack = G @ x
        residual = max(float(np.max(np.abs(H @ x + f + GA.T @ lam))), float(np.max(np.abs(slack[active]), initial=0)))
        worst_lam = int(np.argmin(lam)) if len(lam) else -1
        violated = np.where(~active & (slack > POLISH_TOL))[0]
        if len(lam) and lam[worst_lam] < -POLISH_TOL:
            active[np.where(active)[0][worst_lam]] = False
        elif len(violated):
            active[violated[np.argmax(slack[violated])]] = True
        else:
            return (x[:n], float(x[n]), residual) if residual <= POLISH_TOL else None
    return None


def objective_23(Xc, Xo, nu, alpha, p, eps, w, theta) -> float:
    N = float(np.linalg.norm(w, conjugate(p))) if eps > 0 else 0.0
    xi = np.maximum(0.0, -(Xc @ w + theta - eps * N))
    return float(0.5 * w @ w + nu / len(Xo) * np.sum(Xo @ w + eps * N) + nu * theta + alpha / len(Xc) * xi.sum())


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
        primal, dual = float(raw.obj_val), float(raw.obj_val_dual)
        residual = max(abs(primal - dual) / max(1.0, min(abs(primal), abs(dual))), raw.r_prim, raw.r_dual)
        if best is None or residual < best[0]:
            best = (residual, raw, tol)
    residual, raw, tol = best
    inverse[-1].solver_options = {}  # as problem.solve() would set it
    with warnings.catch_warnings():  # "may be inaccurate" for an AlmostSolved point: its residual is reported
        warnings.simplefilter("ignore")
        problem.unpack_results(raw, chain, inverse)
    w_value, theta_value, refined = np.asarray(w.value, dtype=float), float(theta.value), ""
    better = polish_23(Xc, Xo, nu, alpha, p, eps, w_value, theta_value)
    if better is not None:
        w_value, theta_value, refined = better[0], better[1], f"newton {better[2]:.1e}"
    elif eps > 0 and p in (1.0, math.inf):
        better = qp_polish_23(Xc, Xo, nu, alpha, p, eps, w_value, theta_value)
        if better is not None:
            w_value, theta_value, refined = better[0], better[1], f"qp {better[2]:.1e}"
    value = objective_23(Xc, Xo, nu, alpha, p, eps, w_value, theta_value) if refined else problem.value
    return value, theta_value, w_value, str(raw.status), tol, residual, refined


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
                        obj, theta, w, status, tol, residual, refined = solve_23(Xc, Xo, nu, alpha, p, eps)
                        rows.append({"dataset": name, "cls": int(c), "nu": nu, "alpha": alpha, "p": p, "eps": eps,
                                     "objective": repr(float(obj)), "theta": repr(float(theta)),
                                     "w": " ".join(repr(float(v)) for v in w), "status": status, "tol": tol,
                                     "residual": residual, "refined": refined,
                                     "seconds": time.perf_counter() - start})
                        print(name, c, nu, alpha, p, eps, status, obj, file=sys.stderr)
    pd.DataFrame(rows).to_csv(out, index=False)
    statuses = pd.Series([r["status"] for r in rows]).value_counts().to_dict()
    refined = pd.Series([r["refined"].split()[0] if r["refined"] else "none" for r in rows]).value_counts().to_dict()
    print(f"{len(rows)} instances -> {out}; statuses: {statuses}; refined: {refined}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(HERE / "cvxpy_23.csv"))
