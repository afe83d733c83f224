"""Which backend ``solve(model)`` should run on an LP: each LP backend on one LP family at 10^2 to 10^6 variables.

    PYTHONPATH=. python scripts/lp_defaults.py                 # 10^2 .. 10^5 variables, every LP backend
    PYTHONPATH=. python scripts/lp_defaults.py --sizes 1000000

The LP: a transportation problem with ``k`` sources and ``k`` sinks (``k^2`` variables ``x_ij >= 0``, ``2k`` rows),
supplies and demands drawn so that supply exceeds demand by 10 %, costs uniform on [1, 10] (seed 0): feasible and
bounded, with a degenerate optimal face, as LPs users bring are. Each (backend, size) runs in a fresh process: build
the Pyomo model, ``solve(model, backend)``; the table prints the wall time of the solve (the build apart), whether it
was certified, and the objective's relative distance to the best one of the row. The machine's load is printed
first. Nothing here is asserted: the defaults in ``tpm_models.solvers.backends.registry`` cite these numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
import pyomo.core as pyo
from tpm_models.solvers import solve
k, backend = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
supply = rng.uniform(1, 2, k)
demand = rng.uniform(1, 2, k)
demand *= supply.sum() / demand.sum() / 1.1
cost = rng.uniform(1, 10, (k, k))
t = time.perf_counter()
m = pyo.ConcreteModel(name=f"transport {k}x{k}")
m.I = pyo.RangeSet(0, k - 1)
m.x = pyo.Var(m.I, m.I, bounds=(0, None))
m.supply = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, j] for j in m.I) <= float(supply[i]))
m.demand = pyo.Constraint(m.I, rule=lambda m, j: sum(m.x[i, j] for i in m.I) >= float(demand[j]))
m.obj = pyo.Objective(expr=sum(float(cost[i, j]) * m.x[i, j] for i in m.I for j in m.I))
built = time.perf_counter() - t
t = time.perf_counter()
r = solve(m, backend, raise_on_failure=False)
print(json.dumps({"seconds": time.perf_counter() - t, "build": built, "certified": r.certified,
                  "termination": r.termination.value, "objective": r.objective}))
"""


def run(k: int, backend: str, timeout: float) -> dict:
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, str(k), backend], capture_output=True, text=True,
                             timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"termination": f"over {timeout:.0f} s"}
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"termination": "crashed: " + out.stderr.strip()[-200:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 100_000],
                        help="numbers of variables (k^2, k rounded)")
    parser.add_argument("--backends", nargs="+", default=["highs", "piqp", "clarabel", "daqp"])
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'variables':>10} " + " ".join(f"{b:>24}" for b in args.backends))
    for size in args.sizes:
        k = max(2, round(size ** 0.5))
        rows = {b: run(k, b, args.timeout) for b in args.backends}
        best = min((r["objective"] for r in rows.values() if r.get("certified")), default=None)

        def cell(r: dict) -> str:
            if "seconds" not in r or r.get("objective") is None:
                return r.get("termination", "?")[:24]
            gap = abs(r["objective"] - best) / max(1.0, abs(best)) if best is not None else float("nan")
            return f"{r['seconds']:7.3f} s {'cert' if r['certified'] else r['termination'][:6]} {gap:7.1e}"

        print(f"{k * k:>10} " + " ".join(f"{cell(rows[b]):>24}" for b in args.backends), flush=True)


if __name__ == "__main__":
    main()
