"""One split of Table 3: the whole grid fitted on its training part and counted (training, test and, with
cross-validation, held-out correct predictions), its store record, and the selection of a configuration from a
record (:func:`select`: the best training or cross-validated accuracy, ties by grid order)."""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from tpm_models.experiments.counts import FALLBACK_QPS, GridCounts
from tpm_models.experiments.decisions import decision_grid_counts
from tpm_models.experiments.table3.protocol import (
    ALL_CELLS,
    ALPHA_SOLVED,
    ALPHAS,
    RATIOS,
    SELECTIONS,
    SVC_C,
    TIE_RULES,
    Cell,
    Protocol,
    cv_folds,
    cv_seed,
    split_indices,
)
from tpm_models.kernels import Kernel
from tpm_models.lazy import import_optional
from tpm_models.learn.fastqp import fit_classes, predict_rows
from tpm_models.models.recovery import FREE_TOL

RESULT_FIELDS = ("n_train", "n_test", "alphas_solved", "train_correct", "test_correct", "qps", "theta_rules")
"""The fields every record's ``result`` holds (``cv_correct`` and ``cv_folds`` only with held-out folds)."""


@dataclass(frozen=True)
class SplitTask:
    dataset: str
    cell: str
    split: int
    protocol: Protocol
    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    config: dict = field(repr=False)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.dataset, self.cell, self.split)



GRAM_CACHE = 64
"""Gram matrices a worker keeps (:func:`cached_gram`): a cell's kernels (9) for a few cells, at most 64 x 250 KB on
the paper's data sets."""

_grams: OrderedDict = OrderedDict()


def cached_gram(kernel: Kernel, X: np.ndarray) -> np.ndarray:
    """``kernel.gram(X, X)``, kept for the next split of the same cell: every split of a data set fits on the same
    Gram matrix (the splits only choose its rows and columns). Read-only; the :data:`GRAM_CACHE` most recently used
    are kept per process."""
    key = (kernel, X.shape, X.strides, X.dtype.str, X.tobytes())
    K = _grams.get(key)
    if K is None:
        K = kernel.gram(X, X)
        K.flags.writeable = False
        _grams[key] = K
        if len(_grams) > GRAM_CACHE:
            _grams.popitem(last=False)
    else:
        _grams.move_to_end(key)
    return K


@functools.lru_cache(maxsize=1024)
def _split(y_bytes: bytes, y_dtype: str, split: int, protocol: Protocol) -> tuple[np.ndarray, np.ndarray]:
    train, test = split_indices(np.frombuffer(y_bytes, dtype=y_dtype), split, protocol)
    train.flags.writeable = test.flags.writeable = False
    return train, test


def cached_split(y: np.ndarray, split: int, protocol: Protocol) -> tuple[np.ndarray, np.ndarray]:
    """:func:`split_indices`, computed once per process for each split of a data set (every cell of Table 3 uses
    the same splits; scikit-learn's ``train_test_split`` costs milliseconds). Read-only arrays."""
    y = np.ascontiguousarray(y)
    if y.dtype.hasobject:  # no bytes to key on
        return split_indices(y, split, protocol)
    return _split(y.tobytes(), y.dtype.str, split, protocol)


def grid_counts(
    X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray, kernel: Kernel,
    alphas: Sequence[float], ratios: Sequence[float], solver: str = "daqp", free_tol: float = FREE_TOL,
    folds: Sequence[tuple[np.ndarray, np.ndarray]] = (),
) -> GridCounts:
    """The grid on one split: fitted on ``train``, counted on ``train`` and ``test``; with ``folds``
    (:func:`cv_folds`) also fitted on each fold's fit part and counted on its held-out part."""
    K = cached_gram(kernel, X)
    alpha = np.repeat(np.asarray(alphas, dtype=float), len(ratios))
    nu = np.tile(np.asarray(ratios, dtype=float), len(alphas)) * alpha
    n_classes = int(y.max()) + 1
    planes, qps = fit_classes(K, train, y[train], n_classes, nu, alpha, solver, free_tol)
    correct = predict_rows(planes, K) == y[None, :]
    shape = (len(alphas), len(ratios))
    rules = Counter(r for p in planes for r in p.theta_rule)
    fallbacks = sum(p.fallbacks for p in planes)
    cv: np.ndarray | None = None
    if len(folds):
        cv = np.zeros(len(nu), dtype=int)
        for fit, held_out in folds:
            fold_planes, n = fit_classes(K, fit, y[fit], n_classes, nu, alpha, solver, free_tol)
            cv += (predict_rows(fold_planes, K[held_out]) == y[None, held_out]).sum(1)
            qps += n
            rules.update(r for p in fold_planes for r in p.theta_rule)
            fallbacks += sum(p.fallbacks for p in fold_planes)
        cv = cv.reshape(shape)
    rules[FALLBACK_QPS] = fallbacks
    return GridCounts(correct[:, train].sum(1).reshape(shape), correct[:, test].sum(1).reshape(shape), cv, qps,
                      rules)


def _folds(task: SplitTask, train: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    k = task.protocol.cv_folds
    return cv_folds(task.y, train, k, cv_seed(task.protocol.seed, task.split)) if k else []


def _record(task: SplitTask, train: np.ndarray, test: np.ndarray, start: float, **result: object) -> dict:
    result = {"n_train": len(train), "n_test": len(test), **result,
              "train_sha": hashlib.sha256(train.tobytes()).hexdigest()[:16]}
    return {"key": list(task.key), "config": task.config, "result": result,
            "timing": {"seconds": time.perf_counter() - start, "pid": os.getpid()}}


def run_split(task: SplitTask) -> dict:
    """Solve the whole grid of one (data set, cell, split) and return its store record."""
    start = time.perf_counter()
    cell, protocol = ALL_CELLS[task.cell], task.protocol
    train, test = cached_split(task.y, task.split, protocol)
    folds = _folds(task, train)
    if cell.family == "svc":
        return _run_svc_split(task, cell, train, test, folds, start)
    alphas = (ALPHA_SOLVED,) if protocol.shortcuts else ALPHAS
    kernels = cell.kernels()
    derived = None
    if protocol.shortcuts and cell.kernel == "inhom-poly" and cell.degree == 1:  # inhom-linear, vote-, maxdist-
        kernels, derived = [Kernel("linear")], "errata 10: computed with the linear kernel for every gamma"
    counts = grid_counts
    if cell.family in ("ovo-vote", "ovr-maxdist"):
        counts = functools.partial(decision_grid_counts, rule=cell.family)
    grids = [counts(task.X, task.y, train, test, kernel, alphas, RATIOS, protocol.solver, protocol.free_tol, folds)
             for kernel in kernels]

    def stacked(part: str) -> list:  # (alphas, ratios, params)
        arr = np.stack([getattr(g, part) for g in grids], axis=-1)
        return (np.repeat(arr, len(cell.params), axis=-1) if derived else arr).tolist()

    extra = {"cv_correct": stacked("cv"), "cv_folds": len(folds)} if folds else {}
    return _record(task, train, test, start, alphas_solved=list(alphas), derived=derived,
                   train_correct=stacked("train"), test_correct=stacked("test"), **extra,
                   qps=sum(g.qps for g in grids),
                   theta_rules=dict(sorted(sum((g.theta_rules for g in grids), Counter()).items())))


def svc_counts(X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray, kernel: Kernel,
               Cs: Sequence[float], folds: Sequence[tuple[np.ndarray, np.ndarray]] = (),
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """The baseline: correct training, test (and, with ``folds``, held-out) predictions of one-vs-rest SVC for
    every ``C``; the binary SVMs fitted.

    One-vs-rest as ``sklearn.multiclass.OneVsRestClassifier(SVC(kernel="precomputed", C=C))`` computes it (a
    binary SVC per class, class c against the rest, the largest decision value wins, the first class on a
    tie; a test checks the identity), without its per-fit overhead.
    """
    SVC = import_optional("sklearn.svm", "learn", "the SVC baseline of Table 3").SVC
    K = kernel.gram(X, X)
    classes = np.unique(y)

    def predict(on: np.ndarray, rows: np.ndarray, C: float) -> np.ndarray:
        K_on = K[np.ix_(on, on)]
        values = np.column_stack([SVC(kernel="precomputed", C=C).fit(K_on, (y[on] == c).astype(int))
                                  .decision_function(K[np.ix_(rows, on)]) for c in classes])
        return classes[np.argmax(values, axis=1)]

    tr, te, cv = [], [], []
    everything = np.arange(len(y))
    for C in Cs:
        correct = predict(train, everything, C) == y
        tr.append(int(correct[train].sum()))
        te.append(int(correct[test].sum()))
        cv.append(sum(int((predict(on, out, C) == y[out]).sum()) for on, out in folds))
    fits = len(Cs) * len(classes) * (1 + len(folds))
    return np.array(tr), np.array(te), (np.array(cv) if len(folds) else None), fits


def _run_svc_split(task: SplitTask, cell: Cell, train: np.ndarray, test: np.ndarray,
                   folds: list[tuple[np.ndarray, np.ndarray]], start: float) -> dict:
    counts = [svc_counts(task.X, task.y, train, test, kernel, SVC_C, folds) for kernel in cell.kernels()]

    def stacked(part: int) -> list:  # like the TPM grid: axis 0 = C (17 values), 1 = a single "ratio", 2 = sigma
        # part 0, 1 and (with folds) 2 of svc_counts' tuple are arrays of counts
        return np.stack([cast(np.ndarray, c[part]) for c in counts], axis=-1)[:, None, :].tolist()

    extra = {"cv_correct": stacked(2), "cv_folds": len(folds)} if folds else {}
    return _record(task, train, test, start, alphas_solved=list(SVC_C), derived="svc baseline",
                   train_correct=stacked(0), test_correct=stacked(1), **extra, qps=sum(c[3] for c in counts),
                   theta_rules={})


def _full_grid(result: dict, part: str) -> np.ndarray:
    counts = np.asarray(result[part])
    if counts.shape[0] == len(ALPHAS):
        return counts
    if counts.shape[0] != 1:
        raise ValueError(f"a record with {counts.shape[0]} alphas solved: expected 1 or {len(ALPHAS)}")
    return np.broadcast_to(counts, (len(ALPHAS),) + counts.shape[1:])


def expand(result: dict) -> tuple[np.ndarray, np.ndarray]:
    """Training and test correct counts over the full grid ``(len(ALPHAS), len(RATIOS), params)``; with the
    errata-7 shortcut the solved :math:`\\alpha`'s counts stand for every :math:`\\alpha`."""
    return _full_grid(result, "train_correct"), _full_grid(result, "test_correct")


def has_cv(result: dict) -> bool:
    """Whether a record holds cross-validation counts (a run with ``cv_folds > 0``)."""
    return "cv_correct" in result


@dataclass(frozen=True)
class Selection:
    """The configuration selected on one split."""

    index: tuple[int, int, int]  # positions in (ALPHAS, RATIOS, params)
    score: float  # the selection criterion of the selected configuration: training or cross-validated accuracy
    train_acc: float
    test_acc: float
    n_tied: int  # configurations sharing the best score (full grid)


def select(result: dict, rule: str = "first", by: str = "train") -> Selection:
    """The best training (``by="train"``, the paper's) or cross-validated (``by="cv"``) accuracy; ties broken
    by grid order (module docstring)."""
    if rule not in TIE_RULES:
        raise ValueError(f"unknown tie rule {rule!r}; choose one of {TIE_RULES}")
    if by not in SELECTIONS:
        raise ValueError(f"unknown selection {by!r}; choose one of {SELECTIONS}")
    if by == "cv" and not has_cv(result):
        raise ValueError("this record has no cross-validation counts: run with cv_folds >= 2 (--selection cv)")
    tr, te = expand(result)
    score = tr if by == "train" else _full_grid(result, "cv_correct")
    flat = score.reshape(-1)
    best = flat.max()
    tied = np.flatnonzero(flat == best)
    k = int(tied[0] if rule == "first" else tied[-1])
    first, second, third = (int(i) for i in np.unravel_index(k, tr.shape))
    index = (first, second, third)
    n_train = result["n_train"]  # the held-out folds partition the training split: n_train counts in all
    return Selection(index, 100.0 * best / n_train, 100.0 * tr.reshape(-1)[k] / n_train,
                     100.0 * te.reshape(-1)[k] / result["n_test"], len(tied))

