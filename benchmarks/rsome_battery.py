"""RSOME's side of issue 50's battery (:mod:`benchmarks.robust_battery`): every case written in RSOME's own language
(``ro.Model``, ``dvar``, ``rvar``, ``forall``, ``minmax``/``maxmin``) and solved by ECOS, the optima and times
written to a CSV. It runs in a throwaway venv that has RSOME and no Pyomo or ``tpm_models`` (the module it reads
is numbers only)::

    python3 -m venv /tmp/rsome && /tmp/rsome/bin/pip install rsome ecos numpy scipy
    /tmp/rsome/bin/python benchmarks/rsome_battery.py --out docs/results/rsome-battery.csv   (from the clone's root)

A set is written as RSOME's documentation writes it: a box, a norm ball (``rso.norm``), an ellipsoid as
``delta = L u``, ``|u|_2 <= r`` (``S = LL'``: the form that also holds a degenerate one), a budget set
``delta = d * z``, ``0 <= z <= 1``, ``sum z <= Gamma``, a polyhedron ``A delta <= b``, scenarios as their hull
(``delta = P'lambda``, ``lambda`` in the simplex), a factor model ``delta = Psi xi``, an intersection as one ``rvar``
that every member's constraints hold, a Cartesian product as one ``rvar`` a slice.

The LPs go to RSOME's interface to SciPy's ``linprog`` (HiGHS, feasibility tolerances 1e-7), the SOCPs to its
interface to ECOS at ECOS's defaults (RSOME 1.3 passes it no options: feasibility, absolute and relative gap 1e-8).
ECOS 2.0.14 ends in a segmentation fault on RSOME's model of ``production-budget`` (its budget sets dualised into
more equality rows than columns), so it does not take the LPs.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a file from the throwaway venv: benchmarks.robust_battery is numbers only
    sys.path.insert(0, str(ROOT))

from benchmarks.robust_battery import Case, SetSpec, cases  # noqa: E402


@contextlib.contextmanager
def quiet_fd() -> Any:
    """ECOS prints from C: silence file descriptor 1 while it runs."""
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(null)
        os.close(saved)


def realise(model: Any, spec: SetSpec, k: int) -> tuple[list[tuple[slice, Any]], list]:
    """``delta`` in R^k as RSOME random variables: pieces ``(slice, expression)`` and the set's constraints."""
    import rsome as rso

    q = spec.params
    if spec.kind == "box":
        z = model.rvar(k)
        return [(slice(0, k), z)], [z >= q["lower"], z <= q["upper"]]
    if spec.kind == "ball":
        z = model.rvar(k)
        return [(slice(0, k), z)], [rso.norm(z, q["p"]) <= q["r"]]
    if spec.kind == "ellipsoid":
        vals, vecs = np.linalg.eigh(q["S"])
        keep = vals > 1e-12 * max(1.0, vals.max())
        L = vecs[:, keep] * np.sqrt(vals[keep])
        u = model.rvar(int(keep.sum()))
        return [(slice(0, k), L @ u)], [rso.norm(u, 2) <= q["r"]]
    if spec.kind == "budget":
        z = model.rvar(k)
        return [(slice(0, k), q["d"] * z)], [z >= 0, z <= 1, z.sum() <= q["gamma"]]
    if spec.kind == "polyhedron":
        z = model.rvar(k)
        return [(slice(0, k), z)], [q["A"] @ z <= q["b"]]
    if spec.kind == "scenarios":
        P = q["P"]
        lam = model.rvar(P.shape[0])
        return [(slice(0, k), P.T @ lam)], [lam >= 0, lam.sum() == 1]
    if spec.kind == "factor":
        psi, beta = q["psi"], q["beta"]
        F = psi.shape[1]
        xi = model.rvar(F)
        return [(slice(0, k), psi @ xi)], [xi >= -1, xi <= 1, xi.sum() <= beta * F, xi.sum() >= -beta * F]
    if spec.kind == "intersection":
        z = model.rvar(k)
        constraints: list = []
        for member in spec.members:
            pieces, cons = realise(model, member, k)
            constraints += cons + [z == pieces[0][1]]
        return [(slice(0, k), z)], constraints
    if spec.kind == "product":
        out, constraints, start = [], [], 0
        for member, size in zip(spec.members, q["sizes"]):
            pieces, cons = realise(model, member, size)
            out += [(slice(start + sl.start, start + sl.stop), e) for sl, e in pieces]
            constraints += cons
            start += size
        return out, constraints
    raise ValueError(spec.kind)


def rsome_model(case: Case) -> Any:
    """``case`` as an RSOME robust model."""
    import rsome as rso
    from rsome import ro

    model = ro.Model(case.name)
    x = model.dvar(case.n)
    deltas: dict = {}
    perturbation: dict = {}
    for u in case.uncertain:
        key = u.group or id(u)
        if key not in deltas:
            deltas[key] = realise(model, u.uset, len(u.m0))
        pieces, cons = deltas[key]
        term = sum((u.M[sl] @ x + u.m0[sl]) @ e for sl, e in pieces)
        perturbation[u.target] = (term, tuple(cons))
    objective = case.c @ x
    if "obj" in perturbation:
        term, zset = perturbation["obj"]
        (model.minmax if case.sense == "min" else model.maxmin)(objective + term, *zset)
    else:
        (model.min if case.sense == "min" else model.max)(objective)
    for r in case.rows:
        body = r.a @ x
        if r.name not in perturbation:
            if r.lower is not None and r.lower == r.upper:
                model.st(body == r.lower)
                continue
            if r.lower is not None:
                model.st(body >= r.lower)
            if r.upper is not None:
                model.st(body <= r.upper)
            continue
        term, zset = perturbation[r.name]
        if r.lower is not None:
            model.st((body + term >= r.lower).forall(*zset))
        if r.upper is not None:
            model.st((body + term <= r.upper).forall(*zset))
    for cone in case.cones:
        model.st(rso.norm(cone.G @ x + cone.g0, 2) <= cone.h @ x + cone.h0)
    lo, up = np.isfinite(case.lb), np.isfinite(case.ub)
    if lo.any():
        model.st(x[np.flatnonzero(lo)] >= case.lb[lo])
    if up.any():
        model.st(x[np.flatnonzero(up)] <= case.ub[up])
    return model


FIELDS = ["case", "sets", "forms", "kind", "rsome_objective", "status", "rsome_seconds", "solver", "rsome"]


def main(argv: list[str] | None = None) -> int:
    from importlib.metadata import version

    from rsome import eco_solver, lpg_solver

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "rsome-battery.csv"))
    ap.add_argument("--cases", nargs="*", help="names (default: every case)")
    args = ap.parse_args(argv)
    rows = []
    for case in cases():
        if args.cases and case.name not in args.cases:
            continue
        start = time.perf_counter()
        model = rsome_model(case)
        solver = eco_solver if case.kind == "SOCP" else lpg_solver
        with quiet_fd():
            model.solve(solver, display=False)
        took = time.perf_counter() - start
        status = str(model.solution.status)
        try:
            value = float(model.get())
        except Exception:  # no solution: RSOME raises on get()
            value = float("nan")
        rows.append({"case": case.name, "sets": case.sets(), "forms": case.forms(), "kind": case.kind,
                     "rsome_objective": repr(value), "status": status, "rsome_seconds": f"{took:.4f}",
                     "solver": solver.info, "rsome": version("rsome")})
        print(f"{case.name:36} {value:.12g}  {status}  {took:.3f} s")
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out} ({len(rows)} cases; load {os.getloadavg()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
