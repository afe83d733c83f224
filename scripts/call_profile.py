"""How a solve walks through the library's modules: every call from one ``tpm_models`` module into another, counted.

Prints the calls that cross a module boundary (caller and callee both in ``tpm_models``, in different modules), the
distinct modules entered, and the re-entries (a call into a module entered before in the same solve), for one
``solve()`` of a paper model built on the scale benchmark's data. The model is built before profiling starts; only
the solve is traced.

    python scripts/call_profile.py --eq 28 --points 10000 [--solver default] [--list]   (from the clone's root)
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from benchmarks.bench_scale import scale_data
from tpm_models import build
from tpm_models.solvers import solve


def _module(frame) -> str | None:
    name = frame.f_globals.get("__name__", "")
    return name if name.startswith("tpm_models") else None


def profile(eq: int, points: int, solver: str) -> tuple[list[tuple[str, str, str]], object]:
    """The crossing calls ``(caller module, callee module, callee function)`` of one solve, in order, and its
    result."""
    X, y = scale_data(points)
    kwargs = {} if eq in (15, 16, 19) else {"eps": 0.02}
    if eq in (23, 26):
        kwargs["p"] = 2.0
    model = build(eq, X, y, 1, 0.3, 1.0, **kwargs)
    crossings: list[tuple[str, str, str]] = []

    def tracer(frame, event, arg):
        if event != "call":
            return
        callee = _module(frame)
        caller = _module(frame.f_back) if frame.f_back is not None else None
        if callee and caller and callee != caller:
            crossings.append((caller, callee, frame.f_code.co_name))

    sys.setprofile(tracer)
    try:
        result = solve(model, solver)
    finally:
        sys.setprofile(None)
    return crossings, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eq", type=int, default=28)
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--solver", default="default")
    parser.add_argument("--list", action="store_true", help="print every crossing call")
    args = parser.parse_args(argv)
    crossings, result = profile(args.eq, args.points, args.solver)
    seen: set[str] = set()
    reentries = 0
    for _, callee, _ in crossings:
        reentries += callee in seen
        seen.add(callee)
    edges = list(dict.fromkeys(crossings))  # each distinct call (caller module, callee module, function) once
    entered: set[str] = set()
    edge_reentries = 0
    for _, callee, _ in edges:
        edge_reentries += callee in entered
        entered.add(callee)
    print(f"({args.eq}) at {args.points:,} points, solver {result.solver}: {result.termination.value}, "
          f"objective {result.objective!r}")
    print(f"calls across modules: {len(crossings)}; modules entered: {len(seen)}; re-entries: {reentries}")
    print(f"distinct calls across modules: {len(edges)}; re-entries among them: {edge_reentries}")
    for module, count in Counter(c for _, c, _ in crossings).most_common():
        print(f"  {count:4d}  {module}")
    if args.list:
        for caller, callee, name in crossings:
            print(f"  {caller} -> {callee}.{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
