"""Data sets of Section 5: loading, min-max scaling and stratified splits.

The shipped sets live in ``tpm_models/datasets`` (copies of the repository's
``data/`` folder, so an installed package finds them). Any CSV whose last
column is the label can be loaded the same way.

Row convention: the code stores points as **rows** (``X`` has shape
``(m, n)``); the paper stores them as columns, so the paper's :math:`X_c` is
``X[y == c].T`` here.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tpm_models.validation import check_features, sorted_classes

if TYPE_CHECKING:
    import pandas as pd

# pandas (about 0.6 s) and sklearn.model_selection (about 2 s) are imported by the functions that use them
# (load_dataset, read_table, stratified_split), not here: ``import tpm_models`` and ``build()`` + ``solve()`` do not
# need them, and paid 2.4 s of a 3.2 s import for them. A deferred import for load cost, not for a cycle.

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


def load_dataset(name_or_path: str | Path, header: bool = True, delimiter: str | None = None) -> Dataset:
    """Load a shipped set (:data:`SHIPPED`) or a CSV file (a header row, the label column last).

    Labels may be of any type; classes are numbered ``0..C-1`` in sorted order
    of the label values (Iris: 0 setosa, 1 versicolor, 2 virginica; Wine:
    0, 1, 2 for cultivars 1, 2, 3; digits: the digit; penguins: 0 Adelie,
    1 Chinstrap, 2 Gentoo; vehicle: 0 bus, 1 opel, 2 saab, 3 van). Blanks around a
    label are removed (``" x"`` is ``"x"``).

    A CSV is read right or refused (:func:`read_table`): its header must name as many columns as its rows hold; a
    first line of numbers only is data, not a header (refused, unless ``header=False``: the columns are then named
    ``x1..xn, label``); a file of one column whose first line holds another delimiter is refused with its name
    (``delimiter=`` reads it).
    """
    import pandas as pd  # deferred for load cost: see the note at the imports

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
        frame = read_table(path, header, delimiter)
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
    classes, y = sorted_classes(labels, where=f"{key}, label column")
    check_features(X, where=key)
    return Dataset(name, X, y.astype(int), classes, tuple(str(c) for c in features.columns))


DELIMITERS = (";", "\t", "|", " ")
"""Delimiters :func:`read_table` names when a file read with another one has a single column."""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _looks_like_a_point(first: list[str], rest: list[str], sep: str) -> bool:
    """The first line is a point, not a header: its feature fields are numbers (not the column numbers ``0..n-1`` or
    ``1..n``), and its last field is of the kind of the next line's label (both numbers, or both not)."""
    features, label = first[:-1], first[-1]
    if not features or not all(_is_number(f) for f in features):
        return False
    if [f.strip() for f in features] in ([str(j) for j in range(len(features))],
                                         [str(j + 1) for j in range(len(features))]):
        return False
    if not rest:
        return _is_number(label)
    following = next(csv.reader([rest[0]], delimiter=sep))
    return _is_number(label) == _is_number(following[-1]) if following else True


def read_table(path: Path, header: bool = True, delimiter: str | None = None) -> pd.DataFrame:
    """A CSV file as a frame, read right or refused with what to do (``ValueError``): a header with fewer or more
    names than the rows have fields (pandas would make the first column the index, or drop a feature), a first line
    of numbers (a file without a header: ``header=False``), a file of one column whose first line holds another
    delimiter (``delimiter=``)."""
    import pandas as pd  # deferred for load cost: see the note at the imports

    sep = "," if delimiter is None else delimiter
    try:
        with open(path, newline="") as fh:
            lines = [line for line in (fh.readline() for _ in range(2)) if line.strip()]
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (a CSV: a header row, then one point per row)") from None
    if not lines:
        raise ValueError(f"{path}: the file is empty; expected a header row and data rows")
    first = next(csv.reader([lines[0]], delimiter=sep))
    if len(first) == 1:
        other = next((d for d in DELIMITERS if d != sep and d in lines[0].strip()), None)
        if other is not None:
            shown = {"\t": "a tab", " ": "a blank"}.get(other, repr(other))
            raise ValueError(f"{path}: one column when read with {sep!r}, and its first line holds {shown}: "
                             f"give the delimiter (delimiter={other!r}, --delimiter {other!r})")
    if header and _looks_like_a_point(first, lines[1:2], sep):
        raise ValueError(f"{path}: the first line ({lines[0].strip()[:60]}) is numbers only, so it looks like a "
                         "point, not a header: add a header row (feature names, then the label's), or read it "
                         "with header=False (--no-header)")
    if header and len(lines) > 1:
        row = next(csv.reader([lines[1]], delimiter=sep))
        if len(row) != len(first):
            raise ValueError(f"{path}: the header names {len(first)} columns but the first data row has "
                             f"{len(row)} fields: fix the header (feature names, then the label's)")
    try:
        frame = pd.read_csv(path, sep=sep, header=0 if header else None, index_col=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: the file is empty; expected a header row and data rows") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        why = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a table with the same number of fields on every row ({why})") from None
    if not header:
        frame.columns = [f"x{j + 1}" for j in range(frame.shape[1] - 1)] + ["label"]
    elif frame.shape[1] > 2 and first[0].strip() in ("", "Unnamed: 0"):
        frame = without_index_column(frame, path)
    return frame


def without_index_column(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``frame`` without its first column when that column is an index, as pandas' ``to_csv()`` writes it: no name
    in the header and the row numbers ``0, 1, 2, ...``; a nameless first column holding anything else is refused
    (``ValueError``): it is neither a feature with a name nor an index."""
    column = frame.iloc[:, 0]
    numbers = np.arange(len(frame))
    if column.dtype.kind in "iu" and np.array_equal(column.to_numpy(), numbers):
        return frame.iloc[:, 1:]
    raise ValueError(f"{path}: the first column has no name in the header and is not an index (0, 1, 2, ...): "
                     "name it, or write the file without it (pandas: to_csv(index=False))")


def min_max_scale(X: np.ndarray) -> np.ndarray:
    """Scale every feature to [0, 1]: ``(x - min) / (max - min)``.

    A constant feature (``max == min``) is mapped to 0 instead of dividing by zero. A feature whose span overflows
    (values near 1e308) is refused: "too large to scale", with the column.
    """
    X = check_features(X)
    lo, hi = X.min(axis=0), X.max(axis=0)
    with np.errstate(over="ignore", invalid="ignore"):
        span = hi - lo
    if not np.isfinite(span).all():
        j = int(np.flatnonzero(~np.isfinite(span))[0])
        raise ValueError(f"feature {j} (0-based) spans {lo[j]:.3g} to {hi[j]:.3g}: too large to scale (its range "
                         "overflows a float); divide the column by a power of 10 first")
    return (X - lo) / np.where(span > 0, span, 1.0)


def stratified_split(
    y: np.ndarray, seed: int, test_size: float = 0.25
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of a stratified train/test split (Section 5: 75% / 25%).

    Class proportions are kept in both parts; the same ``seed`` gives the same split.
    """
    from sklearn.model_selection import train_test_split  # deferred for load cost: see the note at the imports

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
