"""The results page of issue 50's battery: every case of :mod:`benchmarks.robust_battery` derived by
``robust_counterpart`` and solved by ``solve`` here, beside RSOME's optimum (``docs/results/rsome-battery.csv``, made
by ``benchmarks/rsome_battery.py`` in a throwaway venv) and the closed form::

    python -m benchmarks.battery_table --out docs/results/rsome-battery.md     (from the clone's root)
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import time
from pathlib import Path

from benchmarks import ROOT
from benchmarks.robust_battery import cases, pyomo_model

RSOME_CSV = ROOT / "docs" / "results" / "rsome-battery.csv"


def g(x: float | None) -> str:
    return "" if x is None else f"{x:.12g}"


def e(x: float | None) -> str:
    return "" if x is None else f"{x:.1e}"


def measure() -> list[dict]:
    from tpm_models import robust_counterpart, solve

    with RSOME_CSV.open(newline="") as f:
        ref = {row["case"]: row for row in csv.DictReader(f)}
    out = []
    for case in cases():
        start = time.perf_counter()
        nominal, declared = pyomo_model(case)
        result = solve(robust_counterpart(nominal, declared))
        took = time.perf_counter() - start
        theirs = float(ref[case.name]["rsome_objective"])
        ours = float(result.objective)
        closed = case.closed
        out.append({"case": case, "ours": ours, "solver": result.solver, "seconds": took, "rsome": theirs,
                    "rsome_solver": ref[case.name]["solver"].split()[0],
                    "rsome_seconds": ref[case.name]["rsome_seconds"],
                    "d_rsome": abs(ours - theirs), "d_closed": None if closed is None else abs(ours - closed),
                    "rsome_closed": None if closed is None else abs(theirs - closed)})
    return out


def page(rows: list[dict]) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    worst_r = max(r["d_rsome"] / max(1.0, abs(r["rsome"])) for r in rows)
    closed = [r for r in rows if r["d_closed"] is not None]
    worst_c = max(r["d_closed"] / max(1.0, abs(r["case"].closed)) for r in closed)
    worst_rc = max(r["rsome_closed"] / max(1.0, abs(r["case"].closed)) for r in closed)
    apart = [r["case"].name for r in closed if r["rsome_closed"] / max(1.0, abs(r["case"].closed)) > 1e-6]
    agreement = ("RSOME and the closed forms agree to 1e-6 on every case that has one." if not apart else
                 f"RSOME and the closed form disagree on {', '.join(apart)}.")
    lines = [
        "# The robust battery against RSOME",
        "",
        f"{len(rows)} robust LPs and SOCPs from RSOME's and PyROS's documentation examples (portfolios, knapsack",
        "relaxations, production plans, a static inventory plan, a Chebyshev fit, and one case per set of the two",
        "catalogues), defined once as data in `benchmarks/robust_battery.py`. Each is derived here by",
        "`robust_counterpart` and solved by `solve`, and written in RSOME's own language by",
        "`benchmarks/rsome_battery.py` (RSOME 1.3.1; LPs by SciPy's HiGHS, SOCPs by ECOS 2.0.14 at its defaults, 1e-8)",
        "in a throwaway venv with neither Pyomo nor this library. `tests/models/test_robust_battery.py` holds every",
        "row to a relative 1e-6 against RSOME and against the closed form.",
        "",
        "Made by:",
        "",
        "    python3 -m venv /tmp/rsome && /tmp/rsome/bin/pip install rsome ecos numpy scipy",
        "    /tmp/rsome/bin/python benchmarks/rsome_battery.py --out docs/results/rsome-battery.csv",
        "    .venv/bin/python -m benchmarks.battery_table --out docs/results/rsome-battery.md",
        "",
        f"Measured {now}, load {load} on 2 cores shared. Worst relative difference: ours against RSOME",
        f"{worst_r:.1e}, ours against the closed forms {worst_c:.1e}, RSOME against the closed forms {worst_rc:.1e}",
        "(RSOME's SOCPs carry ECOS's 1e-8 tolerances). " + agreement,
        "Every case is derived and solved by both sides; the differences below are absolute.",
        "",
        "| case | sets | forms | class | ours | solver | RSOME | RSOME's solver | closed form | ours vs RSOME "
        "| ours vs closed | RSOME vs closed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        c = r["case"]
        lines.append(f"| `{c.name}` | {c.sets()} | {c.forms()} | {c.kind} | {g(r['ours'])} | {r['solver']} | "
                     f"{g(r['rsome'])} | {r['rsome_solver']} | {g(c.closed)} | {e(r['d_rsome'])} | "
                     f"{e(r['d_closed'])} | {e(r['rsome_closed'])} |")
    lines += ["", "The closed forms and where each case comes from:", "",
              "| case | source | closed form |", "|---|---|---|"]
    for r in rows:
        c = r["case"]
        note = c.note.replace("|", "\\|")  # a norm's bars are not the table's
        lines.append(f"| `{c.name}` | {c.source} | {note} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "rsome-battery.md"))
    args = ap.parse_args(argv)
    text = page(measure())
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
