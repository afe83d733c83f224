"""An independent reference for (23) at a user's size: ``cvxpy_23.py``'s solve and polish on the data of issue 24.

Not part of the library (the library never imports cvxpy). Run in a throwaway environment::

    python3 -m venv /tmp/ref-venv && /tmp/ref-venv/bin/pip install cvxpy clarabel numpy pandas scikit-learn
    /tmp/ref-venv/bin/python docs/reference/cvxpy_scale.py docs/reference/cvxpy_scale.csv 10000 100000

The data are written here from the issue, not from tpm_models: scikit-learn's ``make_classification`` (m points,
20 features, 10 informative, 4 classes, ``random_state=0``), every feature scaled to [0, 1], class 1 against the
rest; nu = 0.3, alpha = 1, eps = 0.02, p in {1, 1.5, 2, 3, inf}. Each instance is (23) solved by
``cvxpy_23.solve_23`` (Clarabel through cvxpy at several tolerances, the least residual kept, then polished on
(23)'s own optimality conditions, moving one point a pass between its sets, ``cvxpy_23.POLISH_MOVES = 1``; its QP
polish at p in {1, inf} builds dense matrices of the number of points, so above ``QP_POLISH_MAX`` points of the
class (``QP_POLISH_MAX_INF`` at p = inf, whose active set changes far more often) it is skipped and Clarabel's
point is the reference, said in ``refined``). (26)-(29) have (23)'s optimum at the same p (Corollary 1), so one
reference serves them all.

Each row is written to the CSV as soon as it is solved, and a rerun skips the rows the CSV already holds (an
interrupted run resumes); each row's progress goes to stderr.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cvxpy_23  # noqa: E402  (the solve and polish of the Iris/Wine reference, beside this file)

NU, ALPHA, EPS, CLASS = 0.3, 1.0, 0.02, 1
P_VALUES = (1.0, 1.5, 2.0, 3.0, math.inf)
QP_POLISH_MAX = 6000
QP_POLISH_MAX_INF = 1000


def scale_data(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(n_samples=m, n_features=20, n_informative=10, n_classes=4, random_state=seed)
    lo, hi = X.min(axis=0), X.max(axis=0)
    return (X - lo) / np.where(hi > lo, hi - lo, 1.0), y


def main(out: str, sizes: list[int]) -> None:
    cvxpy_23.POLISH_MOVES = 1  # many points close to the margin at 10^5 points: one move a pass (cvxpy_23)
    qp_polish = cvxpy_23.qp_polish_23
    rows = pd.read_csv(out).to_dict("records") if Path(out).exists() else []
    done = {(int(r["m"]), float(r["p"])) for r in rows}
    for m in sizes:
        X, y = scale_data(m)
        Xc, Xo = X[y == CLASS], X[y != CLASS]
        for p in P_VALUES:
            if (m, p) in done:
                print(m, p, "already in", out, file=sys.stderr)
                continue
            limit = QP_POLISH_MAX_INF if p == math.inf else QP_POLISH_MAX
            # dense in the number of points: not above the limit
            cvxpy_23.qp_polish_23 = qp_polish if len(Xc) <= limit else (lambda *args: None)
            start = time.perf_counter()
            obj, theta, w, status, tol, residual, refined = cvxpy_23.solve_23(Xc, Xo, NU, ALPHA, p, EPS)
            rows.append({"m": m, "p": p, "objective": repr(float(obj)), "theta": repr(float(theta)),
                         "w": " ".join(repr(float(v)) for v in w), "status": status, "tol": tol,
                         "residual": residual, "refined": refined, "seconds": time.perf_counter() - start})
            pd.DataFrame(rows).to_csv(out, index=False)  # kept row by row: a rerun resumes
            print(m, p, status, obj, refined or "not refined", f"{time.perf_counter() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(HERE / "cvxpy_scale.csv"),
         [int(a) for a in sys.argv[2:]] or [10_000, 100_000])
