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
import io
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from tpm_models.lazy import import_optional
from tpm_models.validation import check_features, sorted_classes

# CSV files are read by the standard library's csv module (read_table), not pandas: the core install has no pandas.
# scikit-learn, for stratified_split, is the "learn" extra's (tpm_models.lazy.import_optional).

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
    label are removed (``" x"`` is ``"x"``). A column is read as whole numbers when every field is one, as real
    numbers when every field is a number or missing (:data:`MISSING`, read as NaN), and as text otherwise.

    A CSV is read right or refused (:func:`read_table`): its header must name as many columns as its rows hold; a
    first line of numbers only is data, not a header (refused, unless ``header=False``: the columns are then named
    ``x1..xn, label``); a file of one column whose first line holds another delimiter is refused with its name
    (``delimiter=`` reads it).
    """
    key = str(name_or_path)
    if key in SHIPPED:
        with resources.as_file(resources.files("tpm_models") / "datasets" / f"{key}.csv") as p:
            table = read_table(p)
        name = key
    else:
        path = Path(key)
        if not path.is_file():
            raise ValueError(
                f"data set {key!r} is neither a shipped set {SHIPPED} nor an existing CSV file"
            )
        table = read_table(path, header, delimiter)
        name = path.stem
    if table.n_rows == 0:
        raise ValueError(f"{key}: no data rows (only a header?)")
    if len(table.names) < 2:
        raise ValueError(f"{key}: need at least one feature column and a label column (last)")
    features = [column_values(c) for c in table.columns[:-1]]
    non_numeric = [n for n, c in zip(table.names, features) if c.dtype.kind not in "iuf"]
    if non_numeric:
        raise ValueError(f"{key}: feature columns must be numeric; not numeric: {non_numeric}")
    labels = column_values(table.columns[-1])
    if any(f.strip() in MISSING for f in table.columns[-1]):
        raise ValueError(f"{key}: the label column (last) has missing values")
    X = np.column_stack(features).astype(float)
    classes, y = sorted_classes(labels, where=f"{key}, label column")
    check_features(X, where=key)
    return Dataset(name, X, y.astype(int), classes, table.names[:-1])


MISSING = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
"""The fields read as a missing value (NaN in a column of numbers), blanks around them aside: pandas' default
``na_values``, so a file written by pandas or R reads the same."""


@dataclass(frozen=True)
class Table:
    """A CSV file as text: its column names and, for each column, its fields (one per data row)."""

    names: tuple[str, ...]
    columns: tuple[tuple[str, ...], ...]

    @property
    def n_rows(self) -> int:
        return len(self.columns[0]) if self.columns else 0


def column_values(fields: Sequence[str]) -> np.ndarray:
    """A column's fields as an array: ``int64`` when every field is a whole number, ``float`` when every field is a
    number or missing (:data:`MISSING`, NaN), else the fields as text (``object``, blanks kept)."""
    stripped = [f.strip() for f in fields]
    if stripped and all(_is_integer(f) for f in stripped):
        try:
            return np.array([int(f) for f in stripped], dtype=np.int64)
        except OverflowError:  # beyond int64: read as real numbers
            pass
    if all(f in MISSING or _is_number(f) for f in stripped):
        return np.array([np.nan if f in MISSING else float(f) for f in stripped], dtype=float)
    return np.array(list(fields), dtype=object)


def _is_integer(text: str) -> bool:
    digits = text[1:] if text[:1] in "+-" else text
    return digits.isascii() and digits.isdigit()


DELIMITERS = (";", "\t", "|", " ")
"""Delimiters :func:`read_table` names when a file read with another one has a single column."""


def _is_number(text: str) -> bool:
    if "_" in text:  # float() takes 1_000; a CSV reader does not
        return False
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


def _column_names(header: list[str]) -> tuple[str, ...]:
    """The header's names as a reader of CSV files gives them: a nameless column ``j`` is ``"Unnamed: j"``, a name
    seen before gets ``.1``, ``.2``, ... (as pandas names them)."""
    names: list[str] = []
    for j, name in enumerate(header):
        name = name or f"Unnamed: {j}"
        unique, k = name, 0
        while unique in names:
            k += 1
            unique = f"{name}.{k}"
        names.append(unique)
    return tuple(names)


def read_table(path: Path, header: bool = True, delimiter: str | None = None) -> Table:
    """A CSV file as a :class:`Table`, read right or refused with what to do (``ValueError``): a header with fewer or
    more names than the rows have fields, a first line of numbers (a file without a header: ``header=False``), a file
    of one column whose first line holds another delimiter (``delimiter=``), a row with another number of fields than
    the header (a short row is not filled with missing values). Blank lines are skipped. A first
    column without a name holding the row numbers ``0, 1, 2, ...`` (an index, as pandas' ``to_csv()`` writes it) is
    dropped (:func:`without_index_column`)."""
    sep = "," if delimiter is None else delimiter
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (a CSV: a header row, then one point per row)") from None
    lines = [line for line in text.splitlines(keepends=True)[:2] if line.strip()]
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
        reader = csv.reader(io.StringIO(text), delimiter=sep)
        rows = [(reader.line_num, row) for row in reader if row]
    except csv.Error as exc:
        raise ValueError(f"{path}: not a table with the same number of fields on every row ({exc})") from None
    if header:
        (_, names_row), rows = rows[0], rows[1:]
        names = _column_names(names_row)
    else:
        names = tuple(f"x{j + 1}" for j in range(len(first) - 1)) + ("label",)
    fields: list[list[str]] = []
    for line, row in rows:
        if len(row) != len(names):
            fields_of = f"{len(row)} field{'s' if len(row) != 1 else ''}"
            raise ValueError(f"{path}: not a table with the same number of fields on every row (line {line} has "
                             f"{fields_of}, the {'header' if header else 'first row'} {len(names)})")
        fields.append(row)
    table = Table(names, tuple(zip(*fields)) if fields else tuple(() for _ in names))
    if header and len(names) > 2 and first[0].strip() == "":
        table = without_index_column(table, path)
    return table


def without_index_column(table: Table, path: Path) -> Table:
    """``table`` without its first column when that column is an index, as pandas' ``to_csv()`` writes it: no name
    in the header and the row numbers ``0, 1, 2, ...``; a nameless first column holding anything else is refused
    (``ValueError``): it is neither a feature with a name nor an index."""
    column = column_values(table.columns[0])
    if column.dtype.kind in "iu" and np.array_equal(column, np.arange(table.n_rows)):
        return Table(table.names[1:], table.columns[1:])
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
    model_selection = import_optional("sklearn.model_selection", "learn", "a stratified split")
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must lie in (0, 1), got {test_size}")
    index = np.arange(len(y))
    train, test = model_selection.train_test_split(index, test_size=test_size, stratify=y, random_state=seed)
    return np.sort(train), np.sort(test)


def one_vs_rest(y: np.ndarray, k: object) -> np.ndarray:
    """Binary labels: +1 for class ``k``, -1 for every other class."""
    y = np.asarray(y)
    if not np.any(y == k):
        raise ValueError(f"class {k!r} has no points; classes present: {np.unique(y).tolist()}")
    if np.all(y == k):
        raise ValueError(f"every point is in class {k!r}; the negative set would be empty")
    return np.where(y == k, 1, -1)
