"""Measured gaps and times of ``tpm-models verify`` per route: the paper's counterparts and the robust binary (2).

    PYTHONPATH=. python scripts/verify_table.py            # prints the table of docs/verify.md ("Measured")

The robust (2) is the page's own module (the first code block of docs/verify.md, registered as ``2RP`` and the
wrong ``2RW``), imported from a temporary file as a user's ``--plugin`` would be. Every instance runs through
:func:`tpm_models.checks.robust.verify_model` at nu = 0.3, alpha = 1, eps = 0.02 on the scaled Iris and Wine,
every class: the cutting planes on every point, PyROS on the first 5 (Iris) or 2 (Wine) points of every class.
Per row: instances verified / run, the largest relative gap of the optima, the largest distance of w, the
largest worst-case violation of the counterpart's point, and the mean and largest time of the route (the
semi-infinite solve) and of the whole verification (counterpart solve included).
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tpm_models import load_dataset, min_max_scale
from tpm_models.checks.robust import verify_model

ROOT = Path(__file__).resolve().parents[1]
NU, ALPHA, EPS = 0.3, 1.0, 0.02
PYROS_POINTS = {"iris": 5, "wine": 2}
CASES = [(23, 1.0), (23, 2.0), (23, math.inf), (23, 1.5), (26, 3.0), (27, 1.0), (28, 2.0), (29, math.inf),
         ("2RP", 1.0), ("2RP", 2.0), ("2RP", math.inf), ("2RW", 2.0)]


def load_page_module() -> None:
    block = re.findall(r"^```python\n(.*?)^```", (ROOT / "docs" / "verify.md").read_text(), flags=re.S | re.M)[0]
    path = Path(tempfile.mkdtemp()) / "robust_2.py"
    path.write_text(block)
    spec = importlib.util.spec_from_file_location("robust_2", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["robust_2"] = module
    spec.loader.exec_module(module)


def main() -> None:
    load_page_module()
    data = {name: (min_max_scale(load_dataset(name).X), load_dataset(name).y) for name in ("iris", "wine")}
    print(f"{'model':<6} {'p':>4} {'route':<13} {'verified':>8} {'max gap':>9} {'max dist w':>10} {'max viol':>9} "
          f"{'route s mean/max':>17} {'total s mean/max':>17}")
    for eq, p in CASES:
        for method in ("cutting-plane", "pyros"):
            if method == "pyros" and p not in (1.0, 2.0, math.inf):
                continue
            n = ok = 0
            gaps, dists, viols, route, total = [], [], [], [], []
            for name, (X, y) in data.items():
                for c in np.unique(y):
                    per = PYROS_POINTS[name] if method == "pyros" else None
                    start = time.perf_counter()
                    v = verify_model(eq, X, y, c, NU, ALPHA, p, EPS, method=method, points_per_class=per)
                    total.append(time.perf_counter() - start)
                    route.append(v.semi_infinite.seconds)
                    n += 1
                    ok += v.verified
                    gaps.append(v.gap)
                    dists.append(v.distance)
                    viols.append(v.violation)
            print(f"{eq!s:<6} {p:>4g} {method:<13} {f'{ok}/{n}':>8} {max(gaps):>9.1e} {max(dists):>10.1e} "
                  f"{max(viols):>9.1e} {np.mean(route):>8.2f}/{max(route):<8.2f} "
                  f"{np.mean(total):>8.2f}/{max(total):<8.2f}", flush=True)


if __name__ == "__main__":
    main()
