"""An independent reference for robust_counterpart: three robust problems beyond the paper, solved by RSOME.

RSOME (GPL-3.0) derives robust counterparts in its own modelling layer; the library never imports it. Run in a
throwaway environment::

    python3 -m venv /tmp/rsome-venv && /tmp/rsome-venv/bin/pip install rsome numpy gurobipy
    /tmp/rsome-venv/bin/python docs/reference/rsome_battery.py docs/reference/rsome_battery.csv

Each problem is written here from its statement, with data drawn from a fixed seed and written to the CSV so that
the tests (tests/models/test_counterpart.py) build the same nominal Pyomo models from it:

``lp_budget``  an LP with uncertain costs under a budget set (Bertsimas-Sim)::

    min  max_{z in Z} (c + d*z)'x   s.t.  A x <= b,  sum_j x_j >= D,  0 <= x <= 1,
    Z = {z in [0,1]^n : sum_j z_j <= Gamma}

``qp_polyhedron``  a QP with one uncertain row under a polyhedron::

    min  1/2 |x - x0|^2 + q'x   s.t.  (a + delta)'x <= beta  for all delta with P delta <= h,   sum_j x_j = 1

``socp_ellipsoid``  a portfolio with uncertain expected returns under an ellipsoid::

    min  max_{|u|_2 <= r} -(mu + L u)'x   s.t.  (mu + L u)'x >= R  for all |u|_2 <= r,
         |V x|_2 <= s,  sum_j x_j = 1,  x >= 0

(delta = L u with |u|_2 <= r is the ellipsoid delta' (L L')^{-1} delta <= r^2.) Three instances each (a radius,
budget or polyhedron scaled). Solved by Gurobi (its pip licence covers these sizes) through RSOME's interface with
tight tolerances; the CSV has one row per (problem, instance, field): the data, the optimal objective and x, as
space-separated numbers in repr precision.
"""

from __future__ import annotations

import csv
import sys

import numpy as np
import rsome as rso
from rsome import grb_solver as grb
from rsome import ro

PARAMS = {"FeasibilityTol": 1e-9, "OptimalityTol": 1e-9, "BarConvTol": 1e-12, "BarQCPConvTol": 1e-12,
          "NumericFocus": 3, "BarHomogeneous": 1}
"""Gurobi's tightest tolerances and most careful numerics. With the tolerances alone, Gurobi 13.0.3's barrier stopped
qp_polyhedron's instance 0 (RSOME writes the quadratic objective as a cone) at 0.0425928136, its own x worth
0.0425926311, 3e-6 above the optimum 0.0425925067 (at which four solvers through the library agree to 1e-15);
with these parameters it reports 0.0425925067."""


def lp_budget(rng: np.random.Generator, gamma: float) -> dict:
    n, k = 8, 3
    c = rng.uniform(1.0, 3.0, n)
    d = rng.uniform(0.2, 1.5, n)
    A = rng.uniform(0.0, 1.0, (k, n))
    b = A.sum(axis=1) * 0.6
    D = 3.0
    model = ro.Model()
    x = model.dvar(n)
    z = model.rvar(n)
    model.minmax((c + d * z) @ x, (z >= 0, z <= 1, z.sum() <= gamma))
    model.st(A @ x <= b, x.sum() >= D, x >= 0, x <= 1)
    model.solve(grb, display=False, params=PARAMS)
    return {"c": c, "d": d, "A": A.ravel(), "A_shape": np.array(A.shape), "b": b, "D": np.array([D]),
            "gamma": np.array([gamma]), "objective": np.array([model.get()]), "x": x.get()}


def qp_polyhedron(rng: np.random.Generator, scale: float) -> dict:
    n = 5
    x0 = rng.uniform(0.0, 1.0, n)
    q = rng.normal(0.0, 0.3, n)
    a = rng.uniform(0.5, 1.5, n)
    beta = 0.6 * float(a @ x0)
    # a bounded polytope: a box, a sum and two random cuts, scaled
    P = np.vstack([np.eye(n), -np.eye(n), np.ones((1, n)), rng.normal(0.0, 1.0, (2, n))])
    h = scale * np.r_[np.full(n, 0.3), np.full(n, 0.1), 0.5, np.full(2, 0.4)]
    model = ro.Model()
    x = model.dvar(n)
    delta = model.rvar(n)
    model.min(0.5 * rso.sumsqr(x - x0) + q @ x)
    model.st((((a + delta) @ x) <= beta).forall((P @ delta <= h,)))
    model.st(x.sum() == 1)
    model.solve(grb, display=False, params=PARAMS)
    return {"x0": x0, "q": q, "a": a, "beta": np.array([beta]), "P": P.ravel(), "P_shape": np.array(P.shape),
            "h": h, "objective": np.array([model.get()]), "x": x.get()}


def socp_ellipsoid(rng: np.random.Generator, r: float) -> dict:
    n = 6
    mu = rng.uniform(0.02, 0.12, n)
    L = np.tril(rng.normal(0.0, 0.02, (n, n))) + np.diag(rng.uniform(0.01, 0.04, n))
    V = rng.normal(0.0, 0.1, (n, n))
    s = 0.12
    R = 0.03
    model = ro.Model()
    x = model.dvar(n)
    u = model.rvar(n)
    uset = (rso.norm(u, 2) <= r,)
    model.minmax(-((mu + L @ u) @ x), uset)
    model.st((((mu + L @ u) @ x) >= R).forall(uset))
    model.st(rso.norm(V @ x, 2) <= s, x.sum() == 1, x >= 0)
    model.solve(grb, display=False, params=PARAMS)
    return {"mu": mu, "L": L.ravel(), "V": V.ravel(), "n": np.array([n]), "s": np.array([s]), "R": np.array([R]),
            "r": np.array([r]), "objective": np.array([model.get()]), "x": x.get()}


def main(out: str) -> None:
    rows = []
    for problem, make, sizes in (("lp_budget", lp_budget, (1.0, 2.5, 4.0)),
                                 ("qp_polyhedron", qp_polyhedron, (0.5, 1.0, 2.0)),
                                 ("socp_ellipsoid", socp_ellipsoid, (0.5, 1.0, 2.0))):
        for instance, size in enumerate(sizes):
            rng = np.random.default_rng(100 * len(rows) + instance)
            data = make(rng, size)
            print(problem, instance, size, repr(float(data["objective"][0])), file=sys.stderr)
            for field, value in data.items():
                rows.append((problem, instance, field, " ".join(repr(float(v)) for v in np.ravel(value))))
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["problem", "instance", "field", "values"])
        writer.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "rsome_battery.csv")
