"""Issue 50's case: a counterpart of a 200-variable LP with uncertain rows each under its own affine map of an l2 ball,
``(a_i + P_i u)'x <= b_i`` for all ``|u|_2 <= r``, ``P_i`` of n x k. Times the derivation and ``solve()`` of
``robust_counterpart``'s model (a cone on ``y = P_i'x``) and of the same counterpart written with the cone on the
affine expressions themselves (``sum_l (P_i'x)_l^2 <= t^2``, the shape the derivation wrote before: one dense
quadratic form in x a row), and prints both optima (they must agree).

    python scripts/affine_ball_bench.py --n 200 --rows 100 --k 5 [--skip-dense] [--apex]   (from the clone's root)

``--apex`` puts the maps on the second half of x only and leaves that half out of the objective and of the
rows' nominal part: the first half's cost makes the rows tight and the cones only eat slack, so the optimum has
P_i'x = 0 (the second half is 0 when the maps together have full rank, rows * k >= n / 2): every cone ends at its
apex; the certificate's level is printed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyomo.environ as pyo

from tpm_models import robust_counterpart, solve
from tpm_models.models.uncertainty import NormBall, UncertainRow


def nominal_lp(n: int, rows: int, k: int, apex: bool, seed: int = 0):
    """The nominal LP ``min c'x, A x <= b, -1 <= x <= 1`` and the maps ``P_i`` (``apex``: module docstring)."""
    rng = np.random.default_rng(seed)
    c = -rng.random(n)
    P = rng.random((rows, n, k)) * 0.1
    if apex:
        half = n // 2
        P[:, :half, :] = 0.0
        c[half:] = 0.0
    m = pyo.ConcreteModel("affine l2 balls")
    m.J = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.J, bounds=(-1, 1))
    m.obj = pyo.Objective(expr=sum(float(c[j]) * m.x[j] for j in m.J))
    A = rng.random((rows, n))
    if apex:
        A[:, n // 2:] = 0.0  # the second half only in the cones
    m.row = pyo.Constraint(range(rows), rule=lambda m, i: sum(float(A[i, j]) * m.x[j] for j in m.J) <= 5.0)
    return m, P


def declared(m, P, radius: float = 1.0) -> list:
    """One row per map: coefficients of u are ``P_i'x``."""
    n, k = P.shape[1:]
    return [UncertainRow(m.row[i], [sum(float(P[i, j, q]) * m.x[j] for j in range(n) if P[i, j, q])
                                    for q in range(k)], NormBall(2, radius))
            for i in range(len(P))]


def dense(m, P, radius: float = 1.0):
    """The same counterpart with the cone written on the affine expressions (the former shape)."""
    d = m.clone()
    n, k = P.shape[1:]
    d.t = pyo.Var(range(len(P)), domain=pyo.NonNegativeReals)
    for i in range(len(P)):
        d.row[i].set_value((None, d.row[i].body + radius * d.t[i], d.row[i].upper))
    d.cone = pyo.Constraint(range(len(P)), rule=lambda d, i: sum(
        sum(float(P[i, j, q]) * d.x[j] for j in range(n)) ** 2 for q in range(k)) <= d.t[i] ** 2)
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--skip-dense", action="store_true")
    ap.add_argument("--apex", action="store_true")
    args = ap.parse_args()
    m, P = nominal_lp(args.n, args.rows, args.k, args.apex)
    start = time.perf_counter()
    cp = robust_counterpart(m, declared(m, P))
    derive = time.perf_counter() - start
    start = time.perf_counter()
    r = solve(cp)
    took = time.perf_counter() - start
    level = (r.certificate or {}).get("level")
    print(f"derived: derive {derive:.2f} s, solve {took:.2f} s by {r.solver} ({r.termination.value}, certificate "
          f"{level}), objective {r.objective:.12g}")
    if not args.skip_dense:
        start = time.perf_counter()
        rd = solve(dense(m, P))
        took = time.perf_counter() - start
        print(f"dense:   solve {took:.2f} s by {rd.solver} ({rd.termination.value}), objective {rd.objective:.12g}")


if __name__ == "__main__":
    main()
