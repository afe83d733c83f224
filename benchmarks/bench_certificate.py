"""What the certificate (:mod:`tpm_models.certify.certificate`) costs inside ``solve()``: a benchmark that prints
numbers (``docs/solvers.md``, "What the certificate costs"), never a test.

    python -m benchmarks bench certificate                    # Iris and Wine, the paper's models
    python -m benchmarks bench certificate --points 10000     # a synthetic set of that size

Each line: the model, its points, the wall time of ``solve()`` and the part of it spent in ``certify``.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.datasets import make_classification

from tpm_models.data import min_max_scale
from tpm_models.kernels import Kernel
from tpm_models.models.registry import build
from tpm_models.solvers import dispatch
from tpm_models.solvers.structure import model_traits

PAPER_MODELS: list[tuple[int, dict]] = [
    (15, {}), (16, {}), (19, {"kernel": Kernel("gaussian", sigma=1.0)}), (23, {"p": 2.0, "eps": 0.02}),
    (26, {"p": 1.5, "eps": 0.02}), (28, {"eps": 0.02}), (29, {"eps": 0.02}),
]
"""The models timed on Iris and Wine (class 1, nu = 0.3, alpha = 1)."""

LARGE_MODELS: list[tuple[int, dict]] = [(15, {}), (28, {"eps": 0.02}), (29, {"eps": 0.02})]
"""The models timed on a synthetic set (solved by Clarabel: the dense default is not for this size)."""


def synthetic(points: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``make_classification`` with 20 features and 4 classes, min-max scaled (the set of ``bench scale``)."""
    X, y = make_classification(n_samples=points, n_features=20, n_informative=10, n_classes=4, random_state=seed)
    return min_max_scale(X), y


def time_solves(X: np.ndarray, y: np.ndarray, models: list[tuple[int, dict]], solver: str,
                repeats: int) -> list[tuple[int, float, float, str]]:
    """``(eq, seconds per solve, seconds in certify per solve, certificate level)`` for each model."""
    spent = [0.0]
    certify = dispatch.certify

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return certify(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - start

    rows = []
    dispatch.certify = timed
    try:
        for eq, options in models:
            model = build(eq, X, y, 1, 0.3, 1.0, **options)
            traits = model_traits(model)
            spent[0] = 0.0
            start = time.perf_counter()
            for _ in range(repeats):
                result = dispatch.solve(model, solver, kind=traits)
            total = time.perf_counter() - start
            rows.append((eq, total / repeats, spent[0] / repeats, result.certificate["level"]))
    finally:
        dispatch.certify = certify
    return rows
