"""Data sets of Section 5: loading, min-max scaling and stratified splits.

The shipped sets live in ``tpm_models/datasets`` (copies of the repository's
``data/`` folder, so an installed package finds them). Any CSV whose last
column is the label can be loaded the same way.

Row convention: the code stores points as **rows** (``X`` has shape
``(m, n)``); the paper stores them as columns, so the paper's :math:`X_c` is
``X[y == c].T`` here.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from tpm_models.validation import check_features

SHIPPED = ("iris", "wine", "digits", "penguins", "vehicle")
"""The data sets shipped in ``tpm_models/datasets`` (provenance, licences and checksums: its ``README.md``)."""


@dataclass(frozen=True)
class Dataset:
    """A labelled data set.

    Attributes
    ----------
    name : str
        A shipped name (:data:`SHIPPED`) or the CSV's file name.
    X : ndarray of shape (m, n)
        Features, one point per row.
    y : ndarray of shape (m,), int
        Class numbers ``0..C-1`` in sorted order of the original labels.
    classes : ndarray of shape (C,)
        The original label of each class number (``classes[y]`` gives the labels back).
    feature_names : tuple of str
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    feature_names: tuple[str, ...]

    @property
    def n_classes(self) -> int:
        return len(self.classes)


def load_dataset(name_or_path: str | Path) -> Dataset:
    """Load a shipped set (:data:`SHIPPED`) or a CSV file (header row, label column last).

    Labels may be of any type; classes are numbered ``0..C-1`` in sorted order
    of the label values (Iris: 0 setosa, 1 versicolor, 2 virginica; Wine:
    0, 1, 2 for cultivars 1, 2, 3; digits: the digit; penguins: 0 Adelie,
    1 Chinstrap, 2 Gentoo; vehicle: 0 bus, 1 opel, 2 saab, 3 van).
    """
    key = str(name_or_path)
    if key in SHIPPED:
        with resources.as_file(resources.files("tpm_models") / "datasets" / f"{key}.csv") as p:
            frame = pd.read_csv(p)
        name = key
    else:
        path = Path(key)
        if not path.is_file():
            raise ValueError(
                f"data set {key!r} is neither a shipped set {SHIPPED} nor an existing CSV file"
            )
        try:
            frame = pd.read_csv(path)
        except pd.errors.EmptyDataError:
            raise ValueError(f"{key}: the file is empty; expected a header row and data rows") from None
        name = path.stem
    if frame.shape[0] == 0:
        raise ValueError(f"{key}: no data rows (only a header?)")
    if frame.shape[1] < 2:
        raise ValueError(f"{key}: need at least one feature column and a label column (last)")
    features = frame.iloc[:, :-1]
    non_numeric = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    if non_numeric:
        raise ValueError(f"{key}: feature columns must be numeric; not numeric: {non_numeric}")
    labels = frame.iloc[:, -1].to_numpy()
    if pd.isna(labels).any():
        raise ValueError(f"{key}: the label column (last) has missing values")
    X = features.to_numpy(dtype=float)
    classes, y = np.unique(labels, return_inverse=True)
    check_features(X, where=key)
    return Dataset(name, X, y.astype(int), classes, tuple(str(c) for c in features.columns))


def min_max_scale(X: np.ndarray) -> np.ndarray:
    """Scale every feature to [0, 1]: ``(x - min) / (max - min)``.

    A constant feature (``max == min``) is mapped to 0 instead of dividing by zero.
    """
    X = check_features(X)
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = hi - lo
    return (X - lo) / np.where(span > 0, span, 1.0)


def stratified_split(
    y: np.ndarray, seed: int, test_size: float = 0.25
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of a stratified train/test split (Section 5: 75% / 25%).

    Class proportions are kept in both parts; the same ``seed`` gives the same split.
    """
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must lie in (0, 1), got {test_size}")
    index = np.arange(len(y))
    train, test = train_test_split(index, test_size=test_size, stratify=y, random_state=seed)
    return np.sort(train), np.sort(test)


def one_vs_rest(y: np.ndarray, k: object) -> np.ndarray:
    """Binary labels: +1 for class ``k``, -1 for every other class."""
    y = np.asarray(y)
    if not np.any(y == k):
        raise ValueError(f"class {k!r} has no points; classes present: {np.unique(y).tolist()}")
    if np.all(y == k):
        raise ValueError(f"every point is in class {k!r}; the negative set would be empty")
    return np.where(y == k, 1, -1)
