"""Table 3's protocol: the seeds and splits, the grid, the cells (kernel columns, baselines, other decision
functions), the paper's numbers, and :class:`Protocol`, everything besides (data set, cell, split) that a
result depends on (:mod:`tpm_models.experiments.table3` states the protocol in full)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tpm_models.data import load_dataset, min_max_scale, stratified_split
from tpm_models.kernels import Kernel
from tpm_models.lazy import import_optional
from tpm_models.learn.fastqp import FAST_SOLVERS
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
        degree: dict[str, int] = {"degree": self.degree} if self.degree else {}
        grid: list[dict[str, Any]] = [{self.param: v} for v in KERNEL_PARAMS]  # sigma or gamma: a float each
        return [Kernel(self.kernel, **degree, **value) for value in grid]

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
    model_selection = import_optional("sklearn.model_selection", "learn", "the cross-validation folds of Table 3")
    folds = model_selection.StratifiedKFold(n_splits=k, shuffle=True, random_state=random_state)
    return [(train[a], train[b]) for a, b in folds.split(train, y[train])]

