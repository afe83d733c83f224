"""The derivation at scale: :func:`tpm_models.models.counterpart.robust_counterpart` of (15) at :math:`10^5` points
against solving the counterpart. Measured, never asserted::

    python -m benchmarks bench counterpart --sizes 10000 100000 --p 2

On :func:`benchmarks.bench_builders.synthetic` data (three classes, ``n = 20``; class 0), per size:
the seconds to build the nominal (15), to declare its uncertain data (:func:`uncertain_22`), to derive the
counterpart in place (what ``build("15R", ...)`` does) and on a clone (the default), to build the hand-written
twin ((28) at p = 2), and to solve the derived counterpart and the twin by Clarabel, with their optima's
relative gap.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from benchmarks.bench_builders import BENCH_ALPHA, BENCH_EPS, BENCH_NU, synthetic
from tpm_models.models.counterpart import robust_counterpart
from tpm_models.models.norms import check_p
from tpm_models.models.registry import build
from tpm_models.models.semi_infinite import uncertain_22
from tpm_models.solvers.compare import objective_scale, rel_gap
from tpm_models.solvers.dispatch import solve

TWIN = {1.0: 27, 2.0: 28, math.inf: 29}


def _timed(f, *args, **kwargs):
    start = time.perf_counter()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - start


def bench_counterpart(sizes: Sequence[int] = (10_000, 100_000), p: float = 2.0, solver: str = "clarabel") -> list[dict]:
    """One row per size (module docstring)."""
    p = check_p(p)
    twin = TWIN.get(p, 26)
    rows = []
    for m in sizes:
        X, y = synthetic(m)
        nominal, t_nominal = _timed(build, 15, X, y, 0, BENCH_NU, BENCH_ALPHA)
        uncertain, t_declare = _timed(uncertain_22, nominal, p, BENCH_EPS)
        _, t_clone = _timed(robust_counterpart, nominal, uncertain)
        derived, t_inplace = _timed(robust_counterpart, nominal, uncertain, inplace=True)
        hand, t_twin = _timed(build, twin, X, y, 0, BENCH_NU, BENCH_ALPHA, p=p, eps=BENCH_EPS)
        rd = solve(derived, solver)
        rh = solve(hand, solver)
        rows.append({"points": m, "build (15) s": t_nominal, "declare s": t_declare,
                     "derive in place s": t_inplace, "derive on a clone s": t_clone,
                     "15R total s": t_nominal + t_declare + t_inplace, f"build ({twin}) s": t_twin,
                     f"solve 15R s ({solver})": rd.seconds, f"solve ({twin}) s ({solver})": rh.seconds,
                     "optima gap": rel_gap(rd.objective, rh.objective, objective_scale(hand))})
    return rows
