"""Issue 50 item 4: derive and solve a robust LP of ``rows`` uncertain rows x 100 variables, ours against RSOME's,
each in a fresh process, in one run.

The nominal LP is ``min c'x`` s.t. ``a_i'x <= 5`` (``rows`` rows), ``-1 <= x <= 1`` (data from
``numpy.random.default_rng(0)``, the same stream in both venvs), and every row gets its own perturbation:

* ``box``: ``(a_i + delta_i)'x <= 5``, ``|delta_ij| <= 0.1 a_ij`` (an LP);
* ``budget``: ``delta_i = d_i * z``, ``z in [0, 1]^n``, ``sum z <= 5``, ``d_i = 0.1 a_i`` (an LP);
* ``affine-l2``: ``(a_i + P_i u)'x <= 5``, ``|u|_2 <= 1``, ``P_i`` of ``n x 5`` (an SOCP);
* ``ellipsoid``: ``delta_i' S_i^-1 delta_i <= 1``, ``S_i = diag(0.1 a_i)^2`` (an SOCP).

Ours: build the nominal Pyomo model and the declarations, ``robust_counterpart``, ``solve`` (its default solver).
RSOME's (1.3, in the throwaway venv of ``benchmarks/rsome_battery.py``): ``ro.Model`` with one ``rvar`` a row and
``forall``, solved by SciPy's HiGHS (LPs) or ECOS (SOCPs), as in the battery. The parent prints, for each case, the
fresh process's wall time (interpreter start and imports included) and the time inside it (model, derivation,
solve), the ratio ours/RSOME, both objectives and ``os.getloadavg()``, and writes a CSV::

    python -m benchmarks.rsome_speed --rows 100 500 1000 --rsome-python /tmp/rsome/bin/python \\
        --out docs/results/rsome-speed.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SETS = ("box", "budget", "affine-l2", "ellipsoid")
N, K, GAMMA, RHS = 100, 5, 5.0, 5.0


def data(rows: int, n: int = N, k: int = K) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    c = -rng.random(n)
    A = rng.random((rows, n))
    P = rng.random((rows, n, k)) * 0.02
    return {"c": c, "A": A, "P": P}


# --------------------------------------------------------------------------- ours


def ours(kind: str, rows: int) -> dict[str, Any]:
    start = time.perf_counter()
    import pyomo.environ as pyo

    from tpm_models import robust_counterpart, solve
    from tpm_models.models.uncertainty import Box, Budget, Ellipsoid, NormBall, UncertainRow

    imported = time.perf_counter()
    d = data(rows)
    c, A, P = d["c"], d["A"], d["P"]
    m = pyo.ConcreteModel(f"{kind} {rows}")
    m.J = pyo.RangeSet(0, N - 1)
    m.x = pyo.Var(m.J, bounds=(-1, 1))
    m.obj = pyo.Objective(expr=sum(float(c[j]) * m.x[j] for j in m.J))
    m.row = pyo.Constraint(range(rows), rule=lambda m, i: sum(float(A[i, j]) * m.x[j] for j in m.J) <= RHS)
    x = [m.x[j] for j in m.J]
    if kind == "box":
        declared = [UncertainRow(m.row[i], x, Box(tuple(-0.1 * A[i]), tuple(0.1 * A[i]))) for i in range(rows)]
    elif kind == "budget":
        declared = [UncertainRow(m.row[i], x, Budget(tuple(0.1 * A[i]), GAMMA)) for i in range(rows)]
    elif kind == "affine-l2":
        declared = [UncertainRow(m.row[i], [sum(float(P[i, j, q]) * m.x[j] for j in range(N)) for q in range(K)],
                                 NormBall(2, 1.0)) for i in range(rows)]
    elif kind == "ellipsoid":
        declared = [UncertainRow(m.row[i], x, Ellipsoid(np.diag((0.1 * A[i]) ** 2).tolist(), 1.0))
                    for i in range(rows)]
    else:
        raise ValueError(kind)
    built = time.perf_counter()
    cp = robust_counterpart(m, declared, inplace=True)
    derived = time.perf_counter()
    r = solve(cp)
    solved = time.perf_counter()
    return {"objective": r.objective, "solver": r.solver, "import_s": imported - start, "build_s": built - imported,
            "derive_s": derived - built, "solve_s": solved - derived, "inside_s": solved - imported}


# --------------------------------------------------------------------------- RSOME's


def rsome(kind: str, rows: int) -> dict[str, Any]:
    start = time.perf_counter()
    import rsome as rso
    from rsome import eco_solver, lpg_solver, ro

    imported = time.perf_counter()
    d = data(rows)
    c, A, P = d["c"], d["A"], d["P"]
    model = ro.Model(f"{kind} {rows}")
    x = model.dvar(N)
    model.min(c @ x)
    model.st(x >= -1, x <= 1)
    for i in range(rows):
        if kind == "box":
            z = model.rvar(N)
            model.st(((A[i] + z) @ x <= RHS).forall(z >= -0.1 * A[i], z <= 0.1 * A[i]))
        elif kind == "budget":
            z = model.rvar(N)
            model.st(((A[i] + 0.1 * A[i] * z) @ x <= RHS).forall(z >= 0, z <= 1, z.sum() <= GAMMA))
        elif kind == "affine-l2":
            u = model.rvar(K)
            model.st(((A[i] + P[i] @ u) @ x <= RHS).forall(rso.norm(u, 2) <= 1))
        elif kind == "ellipsoid":
            u = model.rvar(N)
            model.st(((A[i] + (0.1 * A[i]) * u) @ x <= RHS).forall(rso.norm(u, 2) <= 1))
        else:
            raise ValueError(kind)
    built = time.perf_counter()
    solver = lpg_solver if kind in ("box", "budget") else eco_solver
    saved = os.dup(1)  # ECOS prints from C
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    try:
        model.solve(solver, display=False)
    finally:
        os.dup2(saved, 1)
        os.close(null)
        os.close(saved)
    solved = time.perf_counter()
    return {"objective": float(model.get()), "solver": solver.info, "import_s": imported - start,
            "build_s": built - imported, "derive_s": float("nan"), "solve_s": solved - built,
            "inside_s": solved - imported, "status": str(model.solution.status)}


# --------------------------------------------------------------------------- the parent


def child(side: str, kind: str, rows: int, python: str, timeout: float) -> dict[str, Any]:
    """One case in a fresh interpreter: its JSON line, with the process's wall time."""
    argv = [python, str(Path(__file__).resolve()), "--child", side, kind, str(rows)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout:g} s (killed)", "process_s": time.perf_counter() - start}
    wall = time.perf_counter() - start
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:] or ''}", "process_s": wall}
    out = json.loads(lines[-1])
    out["process_s"] = wall
    return out


FIELDS = ["set", "rows", "side", "objective", "solver", "process_s", "inside_s", "build_s", "derive_s", "solve_s",
          "import_s", "load1", "error"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=3, metavar=("SIDE", "SET", "ROWS"), help=argparse.SUPPRESS)
    ap.add_argument("--rows", type=int, nargs="+", default=[100, 500, 1000])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--rsome-python", default="/tmp/rsome/bin/python")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a fresh process may take")
    ap.add_argument("--out", default=None, help="CSV to write (appended per case)")
    args = ap.parse_args(argv)
    if args.child:
        side, kind, rows = args.child
        print(json.dumps((ours if side == "ours" else rsome)(kind, int(rows))))
        return 0
    rows_out = []
    timed_out: set = set()
    for kind in args.sets:
        for rows in args.rows:
            got = {}
            for side, python in (("ours", sys.executable), ("rsome", args.rsome_python)):
                if (side, kind) in timed_out:
                    got[side] = {"error": "skipped (timed out at fewer rows)"}
                    continue
                load = os.getloadavg()[0]
                got[side] = child(side, kind, rows, python, args.timeout)
                got[side]["load1"] = load
                if "error" in got[side] and "killed" in got[side]["error"]:
                    timed_out.add((side, kind))
                rows_out.append({"set": kind, "rows": rows, "side": side, **got[side]})
                if args.out:
                    write(args.out, rows_out)
            a, b = got["ours"], got["rsome"]
            ratio = (a["process_s"] / b["process_s"]) if "error" not in a and "error" not in b else float("nan")
            print(f"{kind:10} {rows:5} rows | ours {fmt(a)} | RSOME {fmt(b)} | ours/RSOME {ratio:.2f} | "
                  f"load {os.getloadavg()}", flush=True)
    return 0


def fmt(r: dict) -> str:
    if "error" in r:
        return r["error"]
    return (f"{r['process_s']:.2f} s process ({r['inside_s']:.2f} inside: build {r['build_s']:.2f}, derive "
            f"{r['derive_s']:.2f}, solve {r['solve_s']:.2f}) {r['solver'].split()[0]} obj {r['objective']:.10g}")


def write(path: str, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
