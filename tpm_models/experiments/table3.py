"""Section 5 of the paper: the experiments of Table 3, on the fast path (:mod:`tpm_models.learn.fastqp`).

Protocol (the paper's, exactly):

* the whole data set is min-max scaled to [0, 1] (:func:`tpm_models.data.min_max_scale`);
* ``runs`` random stratified 75% / 25% splits; split ``k`` is
  ``stratified_split(y, split_seed(seed, k), test_size=0.25)``, ``seed`` recorded (default :data:`SEED`);
* grid :math:`\\alpha \\in \\{2^{-8},\\dots,2^{8}\\}` (:data:`ALPHAS`) :math:`\\times` :math:`\\nu/\\alpha \\in
  \\{0.1,\\dots,0.9\\}` (:data:`RATIOS`) :math:`\\times` (:math:`\\gamma` of the inhomogeneous polynomials or
  :math:`\\sigma` of the Gaussian kernel :math:`\\in \\{2^{-4},\\dots,2^{4}\\}`, :data:`KERNEL_PARAMS`), with
  :math:`\\nu_c = \\nu`, :math:`\\alpha_c = \\alpha` for every class; model (19) per class, recovery (20),
  decision (18)/(20);
* the best configuration is the one with the highest **training** accuracy; its test accuracy is the
  split's result; Table 3 gives the mean and the sample standard deviation (``ddof=1``) over the splits.

**A sound protocol beside it** (errata 11; ``Protocol(cv_folds=5)``, CLI ``--selection cv``): the same grid is
also scored by stratified k-fold cross-validation *inside* the training split (folds of split ``k`` seeded by
:func:`cv_seed`): every configuration is fitted on k-1 folds and counted on the held-out one, the counts
summed over the k folds (every training point is held out once). The configuration with the best
cross-validated accuracy (ties: the same grid-order rules) is then the one fitted on the whole training
split, whose test accuracy is the result. A record of such a run keeps the training, cross-validation and
test counts of every configuration, so both selections (``"train"`` and ``"cv"``) are read from it.

**Grid order and ties** (the paper states no rule). Configurations are ordered :math:`\\alpha` (outer),
then :math:`\\nu/\\alpha`, then the kernel parameter (inner), each ascending. Rule ``first`` takes the first
configuration of that order among those with the best training accuracy, rule ``last`` the last one.
Every record keeps the training and test accuracy of every configuration, so both rules (and any other)
are applied after the fact, without solving again.

**Solving less, exactly** (both verified by tests, both switched off by ``shortcuts=False``):

* errata 7: for fixed :math:`\\nu/\\alpha` the solution is proportional to :math:`\\alpha` and (18)/(20) are
  invariant to that scale, so the 17 values of :math:`\\alpha` give identical predictions. One
  :math:`\\alpha` (:data:`ALPHA_SOLVED` = 1, a grid point) is solved per :math:`\\nu/\\alpha`, and its
  accuracies stand for all 17;
* errata 10: with :math:`k = \\gamma + x^\\top x'` every :math:`\\gamma` term cancels, so "inhom. linear" is
  computed once with the linear kernel and stands for every :math:`\\gamma`.

**Results store.** Every completed (data set, kernel cell, split) is one JSON line with a SHA-256 of its
content (:class:`ResultStore`). A run with ``resume=True`` reuses the records whose key and configuration
match and recomputes the rest; a corrupt or truncated line is reported, dropped and recomputed.

**Parallelism.** Splits are independent tasks run by ``joblib.Parallel`` (``n_jobs`` processes). The
same code runs on Dask through joblib's backend mechanism: inside
``joblib.parallel_config(backend="dask")`` with a ``distributed.Client`` (CLI: ``--dask``).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import math
import os
import stat
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from tpm_models.data import load_dataset, min_max_scale, stratified_split
from tpm_models.experiments.counts import GridCounts
from tpm_models.experiments.decisions import decision_grid_counts
from tpm_models.experiments.parallel import parallel_map
from tpm_models.kernels import Kernel
from tpm_models.learn.fastqp import FAST_SOLVERS, fit_classes, predict_rows
from tpm_models.models.recovery import FREE_TOL

SEED = 20240501
"""Seed of the splits: split ``k`` uses ``random_state = split_seed(SEED, k)``."""
TEST_SIZE = 0.25
ALPHAS: tuple[float, ...] = tuple(2.0**j for j in range(-8, 9))
RATIOS: tuple[float, ...] = tuple(round(0.1 * k, 1) for k in range(1, 10))
KERNEL_PARAMS: tuple[float, ...] = tuple(2.0**j for j in range(-4, 5))
ALPHA_SOLVED = 1.0
"""The :math:`\\alpha` solved for every :math:`\\nu/\\alpha` when the errata-7 shortcut is on."""
STORE_VERSION = 2  # 2: splits from SeedSequence([seed, k]) (1: seed + k)
DATASETS = ("iris", "wine")
TIE_RULES = ("first", "last")
SELECTIONS = ("train", "cv")
"""``train``: the paper's rule, the best training accuracy; ``cv``: the best k-fold cross-validated accuracy."""
CV_FOLDS = 5


@dataclass(frozen=True)
class Cell:
    """A column of Table 3: a kernel family and the name of its grid parameter (if any)."""

    name: str
    label: str
    kernel: str
    degree: int | None = None
    param: str | None = None  # "gamma" or "sigma"
    family: str = "tpm"  # "tpm": (19)/(20)/(18); "svc": the scikit-learn SVC baseline (one-vs-rest);
    # "ovo-vote" / "ovr-maxdist": the max-voting / max-distance rules over binary TPMSVMs
    # (tpm_models.experiments.decisions)

    def kernels(self) -> list[Kernel]:
        """One kernel per value of the grid parameter (one kernel if there is none)."""
        if self.param is None:
            return [Kernel(self.kernel, degree=self.degree)] if self.degree else [Kernel(self.kernel)]
        return [Kernel(self.kernel, degree=self.degree, **{self.param: v}) if self.degree
                else Kernel(self.kernel, **{self.param: v}) for v in KERNEL_PARAMS]

    @property
    def params(self) -> tuple[float | None, ...]:
        return KERNEL_PARAMS if self.param else (None,)


CELLS: dict[str, Cell] = {c.name: c for c in (
    Cell("linear", "linear", "linear"),
    Cell("hom-quadratic", "hom. quadratic", "hom-poly", 2),
    Cell("hom-cubic", "hom. cubic", "hom-poly", 3),
    Cell("inhom-linear", "inhom. linear", "inhom-poly", 1, "gamma"),
    Cell("inhom-quadratic", "inhom. quadratic", "inhom-poly", 2, "gamma"),
    Cell("inhom-cubic", "inhom. cubic", "inhom-poly", 3, "gamma"),
    Cell("gaussian", "Gaussian", "gaussian", None, "sigma"),
)}

PAPER_TABLE3: dict[tuple[str, str], tuple[float | None, float | None, float | None]] = {
    # (data set, cell): (mean test accuracy %, std %, CPU s) -- the paper's Table 3; None = "to be done"
    ("iris", "linear"): (92.08, 3.71, 101.27),
    ("iris", "hom-quadratic"): (75.27, 4.97, 673.58),
    ("iris", "hom-cubic"): (85.51, 4.55, 657.31),
    ("iris", "inhom-linear"): (91.76, 3.92, 4242.87),
    ("iris", "inhom-quadratic"): (91.62, 3.83, 6533.84),
    ("iris", "inhom-cubic"): (88.78, 5.40, 6658.95),
    ("iris", "gaussian"): (90.70, 4.71, 13051.45),
    ("wine", "linear"): (97.02, 2.28, 101.56),
    ("wine", "hom-quadratic"): (96.41, 2.69, 2059.08),
    ("wine", "hom-cubic"): (95.70, 2.85, 2119.25),
    ("wine", "inhom-linear"): (96.34, 2.70, 10768.81),
    ("wine", "inhom-quadratic"): (96.35, 2.24, 19982.60),
    ("wine", "inhom-cubic"): (None, None, None),
    ("wine", "gaussian"): (None, None, None),
}
"""The paper's Table 3 (MATLAB 2021b + MOSEK 9.1.9 on an Apple M1; 100 runs)."""

SVC_C: tuple[float, ...] = ALPHAS
"""The baseline's grid of the SVC penalty :math:`C` (the 17 values of the paper's :math:`\\alpha` grid)."""

BASELINES: dict[str, Cell] = {c.name: c for c in (
    Cell("svc-linear", "SVC linear", "linear", family="svc"),
    Cell("svc-gaussian", "SVC Gaussian", "gaussian", None, "sigma", family="svc"),
)}
"""scikit-learn ``OneVsRestClassifier(SVC(kernel="precomputed", C=C))`` on the same splits and Gram matrices,
grid :data:`SVC_C` (x :math:`\\sigma` for the Gaussian kernel: 153 configurations, as many as the linear
TPM grid), selected by the same rule (training accuracy; grid order C, then sigma). Not in the paper."""

DECISIONS: dict[str, Cell] = {c.name: c for rule, prefix, title in (
    ("ovo-vote", "vote", "max-voting"), ("ovr-maxdist", "maxdist", "max-distance")) for c in (
    Cell(f"{prefix}-{t.name}", f"{title} {t.label}", t.kernel, t.degree, t.param, family=rule) for t in CELLS.values())}
"""The other decision functions of :mod:`tpm_models.experiments.decisions` (max-voting over one-versus-one binary
TPMSVMs, max-distance over one-versus-rest ones), one cell per kernel cell of Table 3 (``vote-linear``, ...,
``maxdist-gaussian``), on the same grid, splits and selection. Not in the paper (it only names them)."""

ALL_CELLS: dict[str, Cell] = {**CELLS, **BASELINES, **DECISIONS}


@dataclass(frozen=True)
class Protocol:
    """Everything besides (data set, cell, split) that a result depends on."""

    seed: int = SEED
    test_size: float = TEST_SIZE
    solver: str = "daqp"
    free_tol: float = FREE_TOL
    shortcuts: bool = True
    cv_folds: int = 0
    """k of the cross-validation scores recorded beside the training ones (0: none, the paper's protocol)."""

    def __post_init__(self) -> None:
        if self.solver not in FAST_SOLVERS:
            raise ValueError(f"unknown solver {self.solver!r} for the experiments; choose one of {FAST_SOLVERS}")
        if not 0.0 < self.test_size < 1.0:
            raise ValueError(f"test_size must lie in (0, 1), got {self.test_size}")
        if not 0.0 < self.free_tol < 0.5:
            raise ValueError(f"free_tol must lie in (0, 0.5), got {self.free_tol}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")
        k = self.cv_folds
        if isinstance(k, bool) or not isinstance(k, int) or k < 0 or k == 1:
            raise ValueError(f"cv_folds must be 0 (no cross-validation) or an integer >= 2, got {k!r}")


def check_cells(names: Iterable[str]) -> list[Cell]:
    names = list(names)
    unknown = [n for n in names if n not in ALL_CELLS]
    if unknown:
        raise ValueError(f"unknown kernel cell(s) {unknown}; choose from {list(ALL_CELLS)}")
    if not names:
        raise ValueError("no kernel cell given")
    return [ALL_CELLS[n] for n in names]


def check_datasets(names: Iterable[str]) -> list[str]:
    names = list(names)
    if not names:
        raise ValueError("no data set given")
    for n in names:
        load_dataset(n)  # raises ValueError naming the shipped sets for an unknown name
    return names


def dataset_arrays(name: str) -> tuple[np.ndarray, np.ndarray, str]:
    d = load_dataset(name)
    X = min_max_scale(d.X)
    digest = hashlib.sha256(np.ascontiguousarray(X).tobytes() + np.ascontiguousarray(d.y).tobytes()).hexdigest()
    return X, d.y, digest[:16]


def config_of(dataset_sha: str, cell: Cell, protocol: Protocol) -> dict:
    """The configuration a record is valid for (compared as a whole on resume)."""
    fields = asdict(protocol)
    if not fields["cv_folds"]:
        del fields["cv_folds"]  # the paper's protocol: the records of stores written before cv_folds existed
    return {
        "data_sha": dataset_sha, "cell": asdict(cell), "alphas": list(ALPHAS), "ratios": list(RATIOS),
        "params": list(cell.params), **fields, "store_version": STORE_VERSION,
    }


# --------------------------------------------------------------------------- one split


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


def split_indices(y: np.ndarray, split: int, protocol: Protocol) -> tuple[np.ndarray, np.ndarray]:
    """Training and test positions of split number ``split`` (``random_state = split_seed(protocol.seed, split)``)."""
    return stratified_split(y, split_seed(protocol.seed, split), protocol.test_size)


def split_seed(seed: int, split: int) -> int:
    """The ``random_state`` of split ``split``: ``SeedSequence([seed, split])``'s first 32-bit word, so that two
    seeds give unrelated sequences of splits (``seed + k`` would share 99 of 100 splits between seeds 1 and 2)."""
    return int(np.random.SeedSequence([seed, split]).generate_state(1)[0])


def cv_seed(seed: int, split: int) -> int:
    """The ``random_state`` of the cross-validation folds inside split ``split``: ``SeedSequence([seed, split,
    1])``'s first word (unrelated to the split's own)."""
    return int(np.random.SeedSequence([seed, split, 1]).generate_state(1)[0])


def cv_folds(y: np.ndarray, train: np.ndarray, k: int, random_state: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``k`` stratified folds of the training points ``train``: (fit, held-out) positions into the whole set.

    scikit-learn's ``StratifiedKFold(k, shuffle=True, random_state)``; every training point is held out once.
    """
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=random_state)
    return [(train[a], train[b]) for a, b in folds.split(train, y[train])]


def grid_counts(
    X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray, kernel: Kernel,
    alphas: Sequence[float], ratios: Sequence[float], solver: str = "daqp", free_tol: float = FREE_TOL,
    folds: Sequence[tuple[np.ndarray, np.ndarray]] = (),
) -> GridCounts:
    """The grid on one split: fitted on ``train``, counted on ``train`` and ``test``; with ``folds``
    (:func:`cv_folds`) also fitted on each fold's fit part and counted on its held-out part."""
    K = kernel.gram(X, X)
    alpha = np.repeat(np.asarray(alphas, dtype=float), len(ratios))
    nu = np.tile(np.asarray(ratios, dtype=float), len(alphas)) * alpha
    n_classes = int(y.max()) + 1
    planes, qps = fit_classes(K, train, y[train], n_classes, nu, alpha, solver, free_tol)
    correct = predict_rows(planes, K) == y[None, :]
    shape = (len(alphas), len(ratios))
    rules = Counter(r for p in planes for r in p.theta_rule)
    fallbacks = sum(p.fallbacks for p in planes)
    cv = None
    if len(folds):
        cv = np.zeros(len(nu), dtype=int)
        for fit, held_out in folds:
            fold_planes, n = fit_classes(K, fit, y[fit], n_classes, nu, alpha, solver, free_tol)
            cv += (predict_rows(fold_planes, K[held_out]) == y[None, held_out]).sum(1)
            qps += n
            rules.update(r for p in fold_planes for r in p.theta_rule)
            fallbacks += sum(p.fallbacks for p in fold_planes)
        cv = cv.reshape(shape)
    rules["piqp fallback QPs"] = fallbacks
    return GridCounts(correct[:, train].sum(1).reshape(shape), correct[:, test].sum(1).reshape(shape), cv, qps,
                      rules)


def _folds(task: SplitTask, train: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    k = task.protocol.cv_folds
    return cv_folds(task.y, train, k, cv_seed(task.protocol.seed, task.split)) if k else []


def _record(task: SplitTask, train: np.ndarray, test: np.ndarray, start: float, **result) -> dict:
    result = {"n_train": len(train), "n_test": len(test), **result,
              "train_sha": hashlib.sha256(train.tobytes()).hexdigest()[:16]}
    return {"key": list(task.key), "config": task.config, "result": result,
            "timing": {"seconds": time.perf_counter() - start, "pid": os.getpid()}}


def run_split(task: SplitTask) -> dict:
    """Solve the whole grid of one (data set, cell, split) and return its store record."""
    start = time.perf_counter()
    cell, protocol = ALL_CELLS[task.cell], task.protocol
    train, test = split_indices(task.y, task.split, protocol)
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
    from sklearn.svm import SVC

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
        return np.stack([c[part] for c in counts], axis=-1)[:, None, :].tolist()

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
    index = tuple(int(i) for i in np.unravel_index(k, tr.shape))
    n_train = result["n_train"]  # the held-out folds partition the training split: n_train counts in all
    return Selection(index, 100.0 * best / n_train, 100.0 * tr.reshape(-1)[k] / n_train,
                     100.0 * te.reshape(-1)[k] / result["n_test"], len(tied))


# --------------------------------------------------------------------------- the store


def _checksum(record: dict) -> str:
    body = {k: record[k] for k in ("key", "config", "result", "timing")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


RECORD_FIELDS = {"key": list, "config": dict, "result": dict, "timing": dict}
"""A store record's fields and their types (with ``sha256``, its checksum)."""
RESULT_FIELDS = ("n_train", "n_test", "alphas_solved", "train_correct", "test_correct", "qps", "theta_rules")
"""The fields every record's ``result`` holds (``cv_correct`` and ``cv_folds`` only with held-out folds)."""


def record_problem(rec: object) -> str:
    """What is wrong with a line of a store, read as JSON ("" when it is a valid record): not an object, a missing
    field, a checksum that does not match. A record with a valid checksum but a missing field is refused too."""
    if not isinstance(rec, dict):
        return f"not a JSON object ({type(rec).__name__})"
    for name, kind in RECORD_FIELDS.items():
        if not isinstance(rec.get(name), kind):
            return f"no {name!r} field" if name not in rec else f"its {name!r} is not a {kind.__name__}"
    if len(rec["key"]) != 3:
        return f"its key {rec['key']!r} is not (data set, cell, split)"
    if rec.get("sha256") != _checksum(rec):
        return "its checksum does not match its content"
    missing = [f for f in RESULT_FIELDS if f not in rec["result"]]
    if missing:
        return f"its result has no {', '.join(missing)}"
    return ""


class StoreLocked(ValueError):
    """Another run writes to the store (its pid is in the message)."""


class ResultStore:
    """JSON lines, one record per (data set, cell, split), each with its SHA-256 (``"sha256"``).

    A file is recognised as a store before it is touched (:meth:`check_recognised`): empty, or at least one valid
    record. Lines that are not records (a run killed mid-line) are moved to ``<store>.dropped``, never deleted.
    While a run writes, the store is locked (:meth:`lock`: ``<store>.lock`` with the run's pid); a second run is
    refused with that pid."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock_fh = None

    def read(self) -> tuple[list[dict], int]:
        """The valid records, and the number of corrupt or truncated lines."""
        valid, bad = self._read()
        return valid, len(bad)

    def _read(self) -> tuple[list[dict], list[tuple[int, str, str]]]:
        """The valid records, and each other line: (line number, text, what is wrong)."""
        if not self.path.exists():
            return [], []
        valid, bad = [], []
        with self.path.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                line = raw.decode("utf-8", errors="replace").strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                    problem = record_problem(rec)
                except ValueError as exc:
                    problem = f"not JSON ({exc.__class__.__name__})"
                if problem:
                    bad.append((number, line, problem))
                else:
                    valid.append(rec)
        return valid, bad

    def check_recognised(self) -> tuple[list[dict], list[tuple[int, str, str]]]:
        """The store's records and its other lines, after checking it is a store: a file with lines of which none
        is a record (``notes.txt``) is refused (``ValueError``), and nothing is written to it."""
        if self.path.exists() and not self.path.is_file():
            raise ValueError(f"the results store {self.path} is not a regular file")
        valid, bad = self._read()
        if bad and not valid:
            number, _, problem = bad[0]
            raise ValueError(f"{self.path} is not a results store: none of its {len(bad)} line(s) is a record "
                             f"(line {number}: {problem}); it is left as it is: give another --store")
        return valid, bad

    def lock(self) -> None:
        """Hold ``<store>.lock`` (``fcntl.flock``) until :meth:`unlock`; ``StoreLocked`` with the holder's pid."""
        lock_path = self.path.with_name(self.path.name + ".lock")
        fh = open(lock_path, "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            fh.close()
            raise StoreLocked(f"the results store {self.path} is being written by another run (pid {holder}); wait "
                              "for it to end, or give another --store") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._lock_fh = fh

    def unlock(self) -> None:
        if self._lock_fh is not None:
            fcntl.flock(self._lock_fh, fcntl.LOCK_UN)
            self._lock_fh.close()
            self._lock_fh = None

    def set_aside(self, bad: Sequence[tuple[int, str, str]]) -> Path:
        """Append the lines that are not records to ``<store>.dropped`` (line number, problem, text): kept."""
        aside = self.path.with_name(self.path.name + ".dropped")
        with aside.open("a") as fh:
            for number, line, problem in bad:
                fh.write(json.dumps({"line": number, "problem": problem, "text": line}) + "\n")
        return aside

    def rewrite(self, records: Sequence[dict]) -> None:
        """Replace the file by ``records`` (atomically: a temporary file, then a rename; the file's mode kept)."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w") as fh:
            for rec in records:
                fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        if self.path.exists():
            os.chmod(tmp, stat.S_IMODE(self.path.stat().st_mode))
        os.replace(tmp, self.path)

    def append(self, record: dict) -> None:
        """Append one record, checksummed, flushed and synced to disk."""
        record = {**record, "sha256": _checksum(record)}
        with self.path.open("a") as fh:
            fh.write(json.dumps(record, separators=(",", ":")) + "\n")
            fh.flush()
            os.fsync(fh.fileno())


# --------------------------------------------------------------------------- a run


class Progress:
    """Progress lines with an ETA on stderr, at most one every ``every`` seconds (and the last one)."""

    def __init__(self, total: int, enabled: bool = True, every: float = 2.0, stream=None, label: str = "table3"):
        self.total, self.done, self.enabled, self.every, self.label = total, 0, enabled, every, label
        self.stream = stream or sys.stderr
        self.start = self.last = time.perf_counter()

    def step(self, what: str) -> None:
        self.done += 1
        now = time.perf_counter()
        if not self.enabled or (now - self.last < self.every and self.done < self.total):
            return
        self.last = now
        elapsed = now - self.start
        eta = elapsed / self.done * (self.total - self.done)
        print(f"{self.label}: {self.done}/{self.total} splits ({100 * self.done / self.total:.0f}%), "
              f"{elapsed:.1f} s elapsed, ETA {eta:.1f} s  [{what}]", file=self.stream, flush=True)


@dataclass
class RunResult:
    """Records by key, and what the run did."""

    records: dict[tuple[str, str, int], dict]
    computed: int
    reused: int
    corrupt: int
    stale: int
    wall_seconds: float
    datasets: list[str]
    cells: list[str]
    runs: int
    protocol: Protocol


def run_table3(
    datasets: Sequence[str] = DATASETS,
    cells: Sequence[str] = tuple(CELLS),
    runs: int = 100,
    protocol: Protocol | None = None,
    n_jobs: int | None = 1,
    store: str | Path | None = None,
    resume: bool = False,
    progress: bool = True,
) -> RunResult:
    """Run (or resume) the experiments of Table 3 for every (data set, cell, split ``0..runs-1``).

    ``n_jobs`` is joblib's (``None``: the active ``joblib.parallel_config``, e.g. Dask). With a ``store``,
    every finished split is appended to it at once; ``resume=True`` reuses its valid records of the same
    configuration, and without it an existing store is an error.
    """
    protocol = protocol or Protocol()
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    cell_specs = check_cells(cells)
    datasets = check_datasets(datasets)
    start = time.perf_counter()
    result_store = ResultStore(store) if store is not None else None
    have: dict[tuple[str, str, int], list[dict]] = {}
    corrupt = stale = 0
    tasks: list[SplitTask] = []
    out: dict[tuple[str, str, int], dict] = {}
    if result_store is not None:
        if result_store.path.exists() and not resume:
            raise ValueError(f"the results store {result_store.path} exists: pass resume=True (--resume) to reuse "
                             "its records, or remove it (--fresh)")
        records, bad = result_store.check_recognised()
        result_store.path.parent.mkdir(parents=True, exist_ok=True)
        result_store.lock()
        try:
            records, bad = result_store.check_recognised()  # again, now that no other run writes
            corrupt = len(bad)
            if bad:
                aside = result_store.set_aside(bad)
                print(f"table3: {corrupt} corrupt or truncated line(s) in {result_store.path} (a run stopped "
                      f"mid-line?): moved to {aside}, their splits are recomputed", file=sys.stderr)
                result_store.rewrite(records)
        except BaseException:
            result_store.unlock()
            raise
        for rec in records:
            have.setdefault(tuple(rec["key"]), []).append(rec)
    for name in datasets:
        X, y, sha = dataset_arrays(name)
        for cell in cell_specs:
            config = config_of(sha, cell, protocol)
            for split in range(runs):
                key = (name, cell.name, split)
                rec = next((r for r in have.get(key, []) if r["config"] == config), None)
                if rec is not None:
                    out[key] = rec
                    continue
                stale += key in have  # records of this split, but of another configuration
                tasks.append(SplitTask(name, cell.name, split, protocol, X, y, config))
    wanted = {(d, c.name, s) for d in datasets for c in cell_specs for s in range(runs)}
    reused = len(out)
    # the costliest cells first, so that the last tasks are short ones
    tasks.sort(key=lambda t: -len(ALL_CELLS[t.cell].params))
    bar = Progress(len(tasks), enabled=progress)
    try:
        for rec in parallel_map(run_split, ((t,) for t in tasks), n_jobs) if tasks else ():
            if result_store is not None:
                result_store.append(rec)
            key = tuple(rec["key"])
            out[key] = rec
            bar.step(f"{key[0]} {key[1]} split {key[2]}")
    except KeyboardInterrupt:
        written = len(out) - reused
        raise KeyboardInterrupt(f"{written} new record(s) written to {result_store.path}, complete; --resume goes on"
                                if result_store is not None else f"{written} split(s) computed, no store") from None
    finally:
        if result_store is not None:
            result_store.unlock()
    out = {k: out[k] for k in sorted(wanted)}
    return RunResult(out, len(tasks), reused, corrupt, stale, time.perf_counter() - start, list(datasets),
                     [c.name for c in cell_specs], runs, protocol)


@contextlib.contextmanager
def dask_backend(address: str = "local", n_workers: int = 2, processes: bool = True) -> Iterator[object]:
    """``joblib.parallel_config(backend="dask")`` with a ``distributed.Client``: of the scheduler at
    ``address``, or of a new ``distributed.LocalCluster`` for ``address="local"``."""
    import logging

    from distributed import Client, LocalCluster
    from joblib import parallel_config

    quiet = logging.getLogger("distributed")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the scheduler's and workers' INFO lines
    cluster = None
    if address == "local":
        where = {"host": "127.0.0.1"} if processes else {}  # threads talk in-process (inproc://), no host
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes, **where,
                               dashboard_address=None, scheduler_kwargs={"dashboard": False},
                               silence_logs=logging.ERROR)
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        with parallel_config(backend="dask"):
            yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        quiet.setLevel(level)


# --------------------------------------------------------------------------- Table 3


PROTOCOLS: dict[str, tuple[str, str]] = {
    "first": ("train", "first"), "last": ("train", "last"), "cv": ("cv", "first"), "cv-last": ("cv", "last"),
}
"""The columns of the results: (selection, tie rule). ``first``/``last`` are the paper's protocol under the two
tie rules; ``cv`` is the cross-validation protocol (tie rule ``first``), ``cv-last`` the same with ``last``."""


@dataclass(frozen=True)
class CellSummary:
    dataset: str
    cell: str
    runs: int
    mean: dict[str, float]  # by protocol column (PROTOCOLS)
    std: dict[str, float]
    seconds: float  # sum of the splits' compute time (one core)
    qps: int
    mean_tied: float  # mean number of configurations tied at the best training accuracy
    perfect_train: float  # fraction of splits whose best training accuracy is 100 %
    selected: dict[str, str]  # most frequent selected configuration, by protocol column
    theta_midpoint: float  # fraction of recovered surfaces whose theta is the KKT-interval midpoint
    acc: dict[str, tuple[float, ...]] = field(default_factory=dict)  # test accuracy of every split, by column
    distribution: dict[str, tuple[tuple[str, float], ...]] = field(default_factory=dict)
    """The selected configurations (alpha left out) and their frequencies, most frequent first, by column."""
    mean_tied_cv: float | None = None  # mean number of configurations tied at the best cross-validated accuracy

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(k for k in PROTOCOLS if k in self.mean)

    @property
    def paper(self) -> tuple[float | None, float | None, float | None]:
        return PAPER_TABLE3.get((self.dataset, self.cell), (None, None, None))

    def diff(self, rule: str) -> float | None:
        p = self.paper[0]
        return None if p is None else self.mean[rule] - p

    def z(self, rule: str) -> float | None:
        """Difference in standard errors: :math:`(\\bar a - \\bar b)/\\sqrt{s_a^2/n + s_b^2/100}`."""
        p_mean, p_std, _ = self.paper
        if p_mean is None:
            return None
        se = math.sqrt(self.std[rule] ** 2 / self.runs + p_std**2 / 100)
        return (self.mean[rule] - p_mean) / se if se > 0 else math.inf


def _describe(cell: Cell, index: tuple[int, int, int]) -> str:
    a, r, p = index
    if cell.family == "svc":
        text = f"C=2^{int(math.log2(SVC_C[a]))}"
    else:  # alpha changes no prediction (errata 7): it is left out
        text = f"nu/alpha={RATIOS[r]:g}"
    if cell.param:
        text += f", {cell.param}=2^{int(math.log2(KERNEL_PARAMS[p]))}"
    return text


def summarize(run: RunResult) -> list[CellSummary]:
    """One :class:`CellSummary` per (data set, cell) of the run; the ``cv`` columns when every record has them."""
    out = []
    for d in run.datasets:
        for c in run.cells:
            recs = [run.records[(d, c, s)] for s in range(run.runs)]
            cv = all(has_cv(r["result"]) for r in recs)
            mean, std, selected, distribution, sels = {}, {}, {}, {}, {}
            for column, (by, rule) in PROTOCOLS.items():
                if by == "cv" and not cv:
                    continue
                sels[column] = [select(r["result"], rule, by) for r in recs]
                acc = np.array([s.test_acc for s in sels[column]])
                mean[column] = float(acc.mean())
                std[column] = float(acc.std(ddof=1)) if len(acc) > 1 else 0.0
                # alpha is irrelevant with the shortcut (errata 7): report nu/alpha and the kernel parameter
                counts = Counter(_describe(ALL_CELLS[c], s.index) for s in sels[column])
                distribution[column] = tuple((k, v / len(recs)) for k, v in counts.most_common())
                selected[column] = distribution[column][0][0]
            rules = Counter()
            for r in recs:
                rules.update(r["result"]["theta_rules"])
            out.append(CellSummary(
                d, c, run.runs, mean, std,
                seconds=float(sum(r["timing"]["seconds"] for r in recs)),
                qps=int(sum(r["result"]["qps"] for r in recs)),
                mean_tied=float(np.mean([s.n_tied for s in sels["first"]])),
                perfect_train=float(np.mean([s.train_acc == 100.0 for s in sels["first"]])),
                selected=selected,
                theta_midpoint=rules.get("midpoint of KKT interval", 0) / max(1, sum(
                    v for k, v in rules.items() if not k.startswith("piqp"))),
                acc={column: tuple(x.test_acc for x in v) for column, v in sels.items()},
                distribution=distribution,
                mean_tied_cv=float(np.mean([s.n_tied for s in sels["cv"]])) if cv else None,
            ))
    return out


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "—" if x is None else format(x, spec)


CSV_HEADER = ("dataset", "kernel", "runs", "mean_first", "std_first", "mean_last", "std_last", "paper_mean",
              "paper_std", "diff_first", "z_first", "diff_last", "z_last", "compute_s", "paper_cpu_s", "qps",
              "mean_tied_configs", "frac_train_100", "selected_first", "selected_last", "frac_theta_midpoint",
              "mean_cv", "std_cv", "diff_cv", "z_cv", "mean_cv_last", "std_cv_last", "mean_tied_configs_cv",
              "selected_cv")
"""The columns of ``table3.csv``; the ``*_cv*`` ones are empty for a run without cross-validation."""


def write_csv(summaries: Sequence[CellSummary], path: str | Path) -> None:
    import csv

    def num(x: float | None, spec: str) -> str:
        return "" if x is None else format(x, spec)

    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_HEADER)
        for s in summaries:
            pm, ps, pc = s.paper
            cv = "cv" in s.mean
            w.writerow([s.dataset, s.cell, s.runs, f"{s.mean['first']:.4f}", f"{s.std['first']:.4f}",
                        f"{s.mean['last']:.4f}", f"{s.std['last']:.4f}", num(pm, ""), num(ps, ""),
                        num(s.diff("first"), ".4f"), num(s.z("first"), ".3f"), num(s.diff("last"), ".4f"),
                        num(s.z("last"), ".3f"), f"{s.seconds:.3f}", num(pc, ""), s.qps,
                        f"{s.mean_tied:.2f}", f"{s.perfect_train:.2f}", s.selected["first"], s.selected["last"],
                        f"{s.theta_midpoint:.4f}",
                        *([f"{s.mean['cv']:.4f}", f"{s.std['cv']:.4f}", num(s.diff("cv"), ".4f"),
                           num(s.z("cv"), ".3f"), f"{s.mean['cv-last']:.4f}", f"{s.std['cv-last']:.4f}",
                           f"{s.mean_tied_cv:.2f}", s.selected["cv"]] if cv else [""] * 8)])


DISCUSSION_START = "<!-- discussion: kept when the file is regenerated -->"
DISCUSSION_END = "<!-- end of discussion -->"
COLUMN_TITLES = {"first": "paper's protocol, first", "last": "paper's protocol, last", "cv": "CV",
                 "cv-last": "CV, last"}


def _flagged(s: CellSummary, column: str) -> str:
    """``diff (z)``, bold when |z| > 2; ``—`` where the paper has no number."""
    z = s.z(column)
    if z is None:
        return "—"
    text = f"{s.diff(column):+.2f} ({z:+.1f})"
    return f"**{text}**" if abs(z) > 2 else text


def table3_markdown(summaries: Sequence[CellSummary], run: RunResult, command: str, meta: dict,
                    discussion: str | None = None, experiments_link: str = "../experiments.md") -> str:
    """Table 3 beside the paper's under both selection protocols and tie rules, the SVC baseline, the other
    decision functions, times, the selected configurations and the per-cell diagnostics."""
    k = run.protocol.cv_folds
    cv = bool(summaries) and all("cv" in s.mean for s in summaries)
    lines = [
        "# Table 3 reproduced" + (", and a sound selection protocol beside it" if cv else ""),
        "",
        f"Produced by `{command}`",
        "",
        f"- protocol: {run.runs} stratified 75/25 splits (seed {run.protocol.seed}: split k uses "
        f"SeedSequence([{run.protocol.seed}, k])), whole data set "
        "min-max scaled, grid alpha in 2^-8..2^8 x nu/alpha in 0.1..0.9 x (gamma or sigma in 2^-4..2^4), "
        "mean ± sample std (ddof=1) of the test accuracy (%);",
        "- **paper's protocol**: the configuration with the best **training** accuracy; tie rule `first` / `last`: "
        "the first / last configuration in grid order (alpha, nu/alpha, kernel parameter) among those with the "
        f"best training accuracy ([experiments.md]({experiments_link}));",
        *([f"- **CV protocol**: the configuration with the best {k}-fold stratified cross-validated accuracy "
           "inside the training split (folds of split k seeded by SeedSequence([seed, k, 1])), same tie rules "
           "(`CV` = `first`), refitted on the whole training split and tested on the test split;"] if cv else []),
        f"- solver {run.protocol.solver} on the fast path; shortcuts (errata 7, 10): "
        f"{'on' if run.protocol.shortcuts else 'off'};",
        *(f"- {k}: {v}" for k, v in meta.items()),
        "- `diff (z)`: ours − paper, and z = (ours − paper) / sqrt(s_ours²/n + s_paper²/100); |z| > 2 is **bold**.",
        "",
        "## Test accuracy (%), ours beside the paper's",
        "",
    ]
    columns = [c for c in PROTOCOLS if cv or not c.startswith("cv")]
    header = ["data", "kernel", "paper"] + [COLUMN_TITLES[c] for c in columns] + [
        f"diff (z), {COLUMN_TITLES[c]}" for c in columns if c != "cv-last"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    tpm = [s for s in summaries if ALL_CELLS[s.cell].family == "tpm"]
    svc = [s for s in summaries if ALL_CELLS[s.cell].family == "svc"]
    for s in tpm:
        pm, ps, _ = s.paper
        paper = "to be done" if pm is None else f"{pm:.2f} ± {ps:.2f}"
        cells = [f"{s.mean[c]:.2f} ± {s.std[c]:.2f}" for c in columns]
        lines.append(f"| {s.dataset} | {CELLS[s.cell].label} | {paper} | " + " | ".join(cells) + " | "
                     + " | ".join(_flagged(s, c) for c in columns if c != "cv-last") + " |")
    if svc:
        lines += _baseline_markdown(tpm, svc, columns)
    others = [s for s in summaries if ALL_CELLS[s.cell].family in ("ovo-vote", "ovr-maxdist")]
    if others:
        lines += _decisions_markdown(tpm, others, columns)
    lines += _selected_markdown(summaries, columns)
    lines += [
        "",
        "## Time: our compute time beside the paper's CPU time",
        "",
        "`compute s` is the sum over the splits of each split's wall time in its worker (one core)"
        + (f", the {k} cross-validation fits included" if cv else "")
        + f"; the whole run took {run.wall_seconds:.1f} s of wall time ({run.computed} splits computed, "
        f"{run.reused} reused from the store).",
        "",
        "| data | kernel | QPs solved | compute s | QPs/s | paper CPU s |",
        "|---|---|---|---|---|---|",
    ]
    for s in summaries:
        pc = s.paper[2]
        lines.append(f"| {s.dataset} | {ALL_CELLS[s.cell].label} | {s.qps} | {s.seconds:.2f} | "
                     f"{s.qps / s.seconds if s.seconds > 0 else math.inf:.0f} | {_fmt(pc)} |")
    lines += [
        "",
        "## Diagnostics",
        "",
        "`tied` is the mean number of configurations (of the full grid, 17 alpha values included) sharing the "
        "best training accuracy" + (" (`tied, CV`: the best cross-validated accuracy)" if cv else "")
        + "; `train 100%` the fraction of splits whose best training accuracy is 100 %; "
        "`theta midpoint` the fraction of recovered surfaces whose theta is the midpoint of the KKT interval "
        "(errata 5).",
        "",
        "| data | kernel | tied | " + ("tied, CV | " if cv else "") + "train 100% | theta midpoint |",
        "|---|---|---|---|" + ("---|" if cv else "") + "---|",
    ]
    for s in summaries:
        tied_cv = f"{s.mean_tied_cv:.1f} | " if cv else ""
        lines.append(f"| {s.dataset} | {ALL_CELLS[s.cell].label} | {s.mean_tied:.1f} | {tied_cv}"
                     f"{s.perfect_train:.2f} | {s.theta_midpoint:.3f} |")
    lines += ["", "## Discussion", "", DISCUSSION_START, discussion or "(not written yet)", DISCUSSION_END, ""]
    return "\n".join(lines)


def _top(dist: tuple[tuple[str, float], ...], n: int = 3) -> str:
    text = "; ".join(f"{name} ({100 * f:.0f}%)" for name, f in dist[:n])
    return text + (f"; {len(dist) - n} more" if len(dist) > n else "")


def _selected_markdown(summaries: Sequence[CellSummary], columns: Sequence[str]) -> list[str]:
    """The distribution of the selected configurations over the splits, by protocol column."""
    shown = [c for c in columns if c != "cv-last"]
    lines = [
        "",
        "## Selected configurations",
        "",
        "The configurations selected over the splits, most frequent first, with the fraction of splits (alpha is "
        "left out: it changes no prediction, errata 7; on a tie `first` takes the smallest alpha, `last` the "
        "largest).",
        "",
        "| data | kernel | " + " | ".join(COLUMN_TITLES[c] for c in shown) + " |",
        "|---|---|" + "---|" * len(shown),
    ]
    for s in summaries:
        lines.append(f"| {s.dataset} | {ALL_CELLS[s.cell].label} | "
                     + " | ".join(_top(s.distribution[c]) for c in shown) + " |")
    return lines


def _baseline_markdown(tpm: Sequence[CellSummary], svc: Sequence[CellSummary], columns: Sequence[str]) -> list[str]:
    """The SVC baseline under the same protocols, and the paired differences TPM − SVC on the same splits."""
    lines = [
        "",
        "## Baseline: scikit-learn SVC (one-vs-rest) on the same splits",
        "",
        "`OneVsRestClassifier(SVC(kernel='precomputed', C))` on the same Gram matrices, C in 2^-8..2^8 (x sigma in "
        "2^-4..2^4 for the Gaussian kernel), selected by the same protocols and tie rules (grid order C, then "
        "sigma) on the same splits and folds. Not in the paper.",
        "",
        "| data | baseline | " + " | ".join(COLUMN_TITLES[c] for c in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for b in svc:
        lines.append(f"| {b.dataset} | {ALL_CELLS[b.cell].label} | "
                     + " | ".join(f"{b.mean[c]:.2f} ± {b.std[c]:.2f}" for c in columns) + " |")
    names = list(dict.fromkeys(b.cell for b in svc))
    paired = [c for c in ("first", "cv") if c in columns]
    lines += [
        "",
        "Paired difference TPM − SVC on the same splits, mean ± standard error, under "
        + " and ".join(f"`{COLUMN_TITLES[c]}`" for c in paired) + " (**bold**: more than 2 standard errors):",
        "",
        "| data | TPM kernel | " + " | ".join(f"{COLUMN_TITLES[c]}: − {ALL_CELLS[n].label}"
                                              for c in paired for n in names) + " |",
        "|---|---|" + "---|" * (len(paired) * len(names)),
    ]
    for s in tpm:
        cols = []
        for c in paired:
            for n in names:
                b = next((x for x in svc if x.dataset == s.dataset and x.cell == n), None)
                if b is None or len(b.acc[c]) != len(s.acc[c]):
                    cols.append("—")
                    continue
                d = np.array(s.acc[c]) - np.array(b.acc[c])
                se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else 0.0
                text = f"{d.mean():+.2f} ± {se:.2f}"
                cols.append(f"**{text}**" if se > 0 and abs(d.mean()) > 2 * se else text)
        lines.append(f"| {s.dataset} | {CELLS[s.cell].label} | " + " | ".join(cols) + " |")
    return lines


def _decisions_markdown(tpm: Sequence[CellSummary], others: Sequence[CellSummary], columns: Sequence[str]
                        ) -> list[str]:
    """The other decision functions (:data:`DECISIONS`) under the same protocols, and the paired differences
    rule − (18)/(20) with the same kernel on the same splits."""
    lines = [
        "",
        "## Other decision functions on the same splits",
        "",
        "Max-voting over one-versus-one binary TPMSVMs (2)-(3)/(12)-(13) and max-distance over one-versus-rest ones, "
        "decision (8)/(14) per binary model (`tpm_models.experiments.decisions`), same grid (alpha, nu/alpha, "
        "kernel parameter), "
        "protocols, tie rules, splits and folds. Not in the paper, which only names them.",
        "",
        "| data | rule | " + " | ".join(COLUMN_TITLES[c] for c in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for s in others:
        lines.append(f"| {s.dataset} | {ALL_CELLS[s.cell].label} | "
                     + " | ".join(f"{s.mean[c]:.2f} ± {s.std[c]:.2f}" for c in columns) + " |")
    paired = [c for c in ("first", "cv") if c in columns]
    lines += [
        "",
        "Paired difference rule − one-versus-all (18)/(20) with the same kernel, on the same splits, mean ± standard "
        "error, under " + " and ".join(f"`{COLUMN_TITLES[c]}`" for c in paired)
        + " (**bold**: more than 2 standard errors; — : that (18)/(20) cell is not in the run):",
        "",
        "| data | rule | " + " | ".join(f"{COLUMN_TITLES[c]}: − (18)/(20)" for c in paired) + " |",
        "|---|---|" + "---|" * len(paired),
    ]
    for s in others:
        base = next((b for b in tpm if b.dataset == s.dataset and b.cell == s.cell.split("-", 1)[1]), None)
        cols = []
        for c in paired:
            if base is None or len(base.acc[c]) != len(s.acc[c]):
                cols.append("—")
                continue
            d = np.array(s.acc[c]) - np.array(base.acc[c])
            se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else 0.0
            text = f"{d.mean():+.2f} ± {se:.2f}"
            cols.append(f"**{text}**" if se > 0 and abs(d.mean()) > 2 * se else text)
        lines.append(f"| {s.dataset} | {ALL_CELLS[s.cell].label} | " + " | ".join(cols) + " |")
    return lines


def _experiments_link(out: Path) -> str:
    """The relative link from a table written to ``out`` to ``experiments.md`` of the ``docs`` folder holding it
    (``../experiments.md`` from ``docs/results``, ``../../experiments.md`` one folder deeper); outside ``docs``,
    ``../experiments.md``."""
    out = out.resolve()
    for folder in (out, *out.parents):
        if folder.name == "docs" and (folder / "experiments.md").is_file():
            return Path(os.path.relpath(folder / "experiments.md", out)).as_posix()
    return "../experiments.md"


def write_table3(run: RunResult, out_dir: str | Path, command: str, meta: dict | None = None) -> list[CellSummary]:
    """Write ``table3.md`` and ``table3.csv`` to ``out_dir``; a discussion already in ``table3.md`` is kept."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summaries = summarize(run)
    md = out / "table3.md"
    discussion = None
    if md.exists():
        text = md.read_text()
        if DISCUSSION_START in text and DISCUSSION_END in text:
            discussion = text.split(DISCUSSION_START, 1)[1].split(DISCUSSION_END, 1)[0].strip("\n")
    md.write_text(table3_markdown(summaries, run, command, meta or {}, discussion, _experiments_link(out)))
    write_csv(summaries, out / "table3.csv")
    return summaries


def print_summary(summaries: Sequence[CellSummary], rule: str = "first", stream=None, selection: str = "train"
                  ) -> None:
    """Table 3 on the terminal: the paper's number, ours under the paper's protocol (tie rule ``rule``, then the
    other rule) and, for a cross-validation run, ours under the CV protocol."""
    stream = stream or sys.stdout
    other = "last" if rule == "first" else "first"
    cv = selection == "cv" and all("cv" in s.mean for s in summaries)
    cv_rule = "cv" if rule == "first" else "cv-last"
    width = max([16, *(len(s.cell) for s in summaries)])
    print(f"{'data':<5} {'kernel':<{width}} {'paper':>14} {'ours (' + rule + ')':>15} {'z':>6} "
          f"{'ours (' + other + ')':>15}" + (f" {'ours (CV, ' + rule + ')':>17} {'z':>6}" if cv else "")
          + f" {'compute s':>9} {'paper CPU s':>11}", file=stream)
    for s in summaries:
        pm, ps, pc = s.paper
        paper = ("to be done" if pm is None else f"{pm:.2f} ± {ps:.2f}") if s.cell in CELLS else "not in paper"
        line = (f"{s.dataset:<5} {s.cell:<{width}} {paper:>14} {s.mean[rule]:>7.2f} ± {s.std[rule]:<5.2f} "
                f"{_fmt(s.z(rule), '+.2f'):>6} {s.mean[other]:>7.2f} ± {s.std[other]:<5.2f}")
        if cv:
            line += f" {s.mean[cv_rule]:>9.2f} ± {s.std[cv_rule]:<5.2f} {_fmt(s.z(cv_rule), '+.2f'):>6}"
        print(line + f" {s.seconds:>9.2f} {_fmt(pc):>11}", file=stream)


# --------------------------------------------------------------------------- the commands


def run_metadata(run: RunResult, load_before: tuple[float, float, float]) -> dict:
    import platform
    from importlib import metadata

    versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("numpy", "daqp", "piqp", "joblib"))
    after = os.getloadavg()
    meta = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {versions}"}
    if run.computed:
        meta["load average (1, 5, 15 min) before / after"] = (f"{' '.join(f'{x:.2f}' for x in load_before)} / "
                                                              f"{' '.join(f'{x:.2f}' for x in after)}")
    if run.reused:
        meta["records reused from the store"] = (f"{run.reused} of {run.reused + run.computed}: their compute times "
                                                 "are those of the run that computed them")
    meta["date"] = time.strftime("%Y-%m-%d %H:%M %Z")
    return meta

