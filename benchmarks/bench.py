"""``python -m benchmarks bench``: how fast the fast path is, measured (never asserted).

* per-QP time of each dense QP solver on the QPs of Table 3 (19): DAQP one-shot (``daqp.solve``, as
  ``solve(model, "daqp")`` calls it), DAQP set up once and updated (the fast path), PIQP set up per QP,
  PIQP set up once and updated; and the Pyomo path ``solve(build_dual_19(...))`` for scale;
* one multiclass fit on an Iris training set (three QPs, recovery) on the fast path;
* every cell of Table 3: wall time, QPs solved, QPs per second, beside the paper's CPU time.

The machine's load average (``os.getloadavg``) is printed with every measurement: other jobs share it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from ctypes import c_int

import numpy as np

from tpm_models.experiments.table3 import (
    RATIOS,
    Protocol,
    dataset_arrays,
    grid_counts,
    split_indices,
)
from tpm_models.kernels import Kernel
from tpm_models.learn.fastqp import ClassDual, FastOneVsAll
from tpm_models.models import shapes
from tpm_models.solvers.backends.daqp import DAQP_SETTINGS
from tpm_models.solvers.common import DENSE_QP_TOL, ITERATION_LIMIT
from tpm_models.solvers.dispatch import solve

BENCH_KERNELS = (Kernel("linear"), Kernel("hom-poly", degree=2), Kernel("inhom-poly", degree=3, gamma=1.0),
                 Kernel("gaussian", sigma=0.25), Kernel("gaussian", sigma=4.0))


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def _class_blocks(dataset: str, split: int = 0):
    """The (19) blocks of every class and kernel of :data:`BENCH_KERNELS` on one training set."""
    X, y, _ = dataset_arrays(dataset)
    train, _ = split_indices(y, split, Protocol())
    yt = y[train]
    for kernel in BENCH_KERNELS:
        K = kernel.gram(X, X)
        for c in range(int(y.max()) + 1):
            own, other = train[yt == c], train[yt != c]
            yield kernel, c, K[np.ix_(own, own)], K[np.ix_(other, own)]


def _daqp_oneshot(K_own, K_other_own, ratios):
    import daqp

    m = K_own.shape[0]
    q1 = -K_other_own.sum(axis=0) / K_other_own.shape[0]
    A, sense = np.ones((1, m)), np.concatenate([np.zeros(m), [5]]).astype(c_int)
    for r in ratios:
        upper, lower = np.concatenate([np.full(m, 1.0 / m), [r]]), np.concatenate([np.zeros(m), [r]])
        _, _, flag, _ = daqp.solve(K_own, r * q1, A, upper, lower, sense, **DAQP_SETTINGS)
        assert flag > 0, flag


def _piqp_fresh(K_own, K_other_own, ratios):
    import piqp

    m = K_own.shape[0]
    q1 = -K_other_own.sum(axis=0) / K_other_own.shape[0]
    for r in ratios:
        s = piqp.DenseSolver()
        st = s.settings
        st.verbose, st.eps_abs, st.eps_rel, st.check_duality_gap = False, DENSE_QP_TOL, DENSE_QP_TOL, True
        st.eps_duality_gap_abs = st.eps_duality_gap_rel = DENSE_QP_TOL
        st.max_iter = ITERATION_LIMIT
        s.setup(np.asfortranarray(K_own), r * q1, np.ones((1, m), order="F"), np.array([r]), None, None, None,
                np.zeros(m), np.full(m, 1.0 / m))
        assert s.solve() == piqp.PIQP_SOLVED


def _class_dual(solver: str) -> Callable:
    def run(K_own, K_other_own, ratios):
        d = ClassDual(K_own, K_other_own, solver)
        for r in ratios:
            d.solve(r, 1.0)
    return run


def _pyomo(K_own, K_other_own, ratios):

    m, mo = K_own.shape[0], K_other_own.shape[0]
    own = ("X_c", list(range(1, m + 1)), "")
    other = ("X_minus_c", list(range(m + 1, m + mo + 1)), "")
    for r in ratios[:1]:  # one QP: the Pyomo path is ~1000x slower
        solve(shapes.dual("bench", K_own, K_other_own, own, other, r, 1.0), "daqp")


QP_METHODS: dict[str, Callable] = {
    "daqp one-shot (solve(model,'daqp') settings)": _daqp_oneshot,
    "daqp set up once + update (fast path)": _class_dual("daqp"),
    "piqp set up per QP": _piqp_fresh,
    "piqp set up once + update": _class_dual("piqp"),
    "pyomo build_dual_19 + solve(daqp)": _pyomo,
}


def per_qp_times(dataset: str = "iris", repeats: int = 5) -> dict[str, float]:
    """Median over ``repeats`` of the mean time per QP (s) of each method on 9 ratios x classes x kernels."""
    blocks = list(_class_blocks(dataset))
    ratios = list(RATIOS)
    out = {}
    for name, method in QP_METHODS.items():
        n = len(blocks) * (1 if method is _pyomo else len(ratios))
        times = []
        for _ in range(1 if method is _pyomo else repeats):
            start = time.perf_counter()
            for _, _, K_own, K_other_own in blocks:
                method(K_own, K_other_own, ratios)
            times.append((time.perf_counter() - start) / n)
        out[name] = float(np.median(times))
    return out


def pipeline_time(dataset: str = "iris", repeats: int = 5) -> float:
    """Median time (s) per QP of the experiments' whole pipeline on one split -- Gram matrix, (19) by the fast
    path for every class and nu/alpha, recovery (20), decision (18) on every point -- for :data:`BENCH_KERNELS`."""

    X, y, _ = dataset_arrays(dataset)
    train, test = split_indices(y, 0, Protocol())
    times = []
    for _ in range(repeats):
        start, qps = time.perf_counter(), 0
        for kernel in BENCH_KERNELS:
            qps += grid_counts(X, y, train, test, kernel, (1.0,), RATIOS).qps
        times.append((time.perf_counter() - start) / qps)
    return float(np.median(times))


def fit_time(repeats: int = 200) -> tuple[float, float]:
    """Median and minimum time (s) of one fast-path multiclass fit (linear, nu=0.5, alpha=1) on Iris split 0."""
    X, y, _ = dataset_arrays("iris")
    train, _ = split_indices(y, 0, Protocol())
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        FastOneVsAll(0.5, 1.0).fit(X[train], y[train])
        times.append(time.perf_counter() - start)
    return float(np.median(times)), float(np.min(times))

