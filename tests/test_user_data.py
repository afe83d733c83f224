"""A user's data read right or refused with a message (issue 26): CSV headers against rows, files without a header,
label blanks, delimiters, overflow; pandas frames, sparse and complex arrays, mixed labels. The truths are the
files' own contents, written here."""

from importlib import resources

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from tpm_models import build, load_dataset, min_max_scale
from tpm_models.cli import main
from tpm_models.data import SHIPPED
from tpm_models.validation import check_features, sorted_classes

ROWS = [(0.1, 0.2, 0.3, "a"), (0.4, 0.5, 0.6, "b"), (0.7, 0.8, 0.9, "a"), (0.2, 0.1, 0.5, "b")]


def write(path, header, rows=ROWS, sep=","):
    lines = ([sep.join(header)] if header else []) + [sep.join(map(str, r)) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_header_naming_one_column_too_few_is_refused(tmp_path):
    """pandas made the first column the index: a feature dropped, exit 0."""
    path = write(tmp_path / "short.csv", ["f2", "f3", "label"])
    with pytest.raises(ValueError, match="header names 3 columns but the first data row has 4 fields"):
        load_dataset(path)


def test_a_file_without_a_header_is_refused_or_read_with_no_header(tmp_path, capsys):
    """The first point became the header; now refused, and ``header=False`` / ``--no-header`` reads every point."""
    path = write(tmp_path / "bare.csv", None)
    with pytest.raises(ValueError, match="looks like a point, not a header.*--no-header"):
        load_dataset(path)
    d = load_dataset(path, header=False)
    assert d.X.shape == (4, 3) and d.feature_names == ("x1", "x2", "x3")
    np.testing.assert_array_equal(d.X, np.array([r[:3] for r in ROWS]))
    assert list(d.classes) == ["a", "b"] and d.y.tolist() == [0, 1, 0, 1]
    assert main(["solve", "--model", "15", "--dataset", str(path), "--nu", "0.1", "--alpha", "1"]) == 2
    assert "--no-header" in capsys.readouterr().err
    assert main(["solve", "--model", "15", "--dataset", str(path), "--no-header", "--nu", "0.1", "--alpha", "1",
                 "--solver", "piqp"]) == 0


def test_labels_with_blanks_are_one_class(tmp_path):
    rows = [(0.1, 0.2, " x"), (0.4, 0.5, "x"), (0.7, 0.8, "y "), (0.2, 0.1, "y")]
    d = load_dataset(write(tmp_path / "blanks.csv", ["f1", "f2", "label"], rows))
    assert list(d.classes) == ["x", "y"] and d.y.tolist() == [0, 0, 1, 1]


def test_another_delimiter_is_named_and_taken(tmp_path, capsys):
    path = write(tmp_path / "semi.csv", ["f1", "f2", "f3", "label"], sep=";")
    with pytest.raises(ValueError, match=r"first line holds ';': give the delimiter \(delimiter=';'"):
        load_dataset(path)
    d = load_dataset(path, delimiter=";")
    np.testing.assert_array_equal(d.X, np.array([r[:3] for r in ROWS]))
    assert main(["solve", "--model", "15", "--dataset", str(path), "--delimiter", ";", "--nu", "0.1", "--alpha", "1",
                 "--solver", "piqp"]) == 0
    capsys.readouterr()


def test_values_near_the_float_limit_are_too_large_to_scale(tmp_path):
    """1e308 and -1e308 span 2e308, which overflows: it was reported as NaN ("impute them")."""
    rows = [(1e308, 0.2, "a"), (-1e308, 0.5, "b"), (0.0, 0.8, "a")]
    d = load_dataset(write(tmp_path / "big.csv", ["f1", "f2", "label"], rows))
    with pytest.raises(ValueError, match="feature 0 .*too large to scale"):
        min_max_scale(d.X)


def test_a_pandas_frame_is_taken_and_its_text_columns_are_named():
    frame = pd.DataFrame({"a": [0.1, 0.5, 0.9], "b": [1, 2, 3]})
    np.testing.assert_array_equal(check_features(frame), np.array([[0.1, 1], [0.5, 2], [0.9, 3]]))
    with pytest.raises(ValueError, match=r"columns \['kind'\] are not numbers"):
        check_features(frame.assign(kind=["x", "y", "z"]))


def test_sparse_and_complex_features_are_refused_with_what_to_do():
    X = np.array([[0.1, 0.0], [0.0, 0.7], [0.3, 0.2]])
    with pytest.raises(ValueError, match=r"sparse matrix of shape \(3, 2\).*X.toarray\(\)"):
        build(15, sp.csr_matrix(X), np.array([0, 1, 0]), 0, 0.1, 1.0)
    with pytest.raises(ValueError, match="complex numbers are not taken"):
        build(15, X + 1j, np.array([0, 1, 0]), 0, 0.1, 1.0)


def test_mixed_labels_are_refused_with_their_kinds_and_one_kind_is_sorted():
    with pytest.raises(ValueError, match=r"labels of mixed kinds \(number, str\)"):
        sorted_classes(np.array([1, "a", 2], dtype=object))
    with pytest.raises(ValueError, match="mixed kinds"):
        build(15, np.array([[0.1, 0.2], [0.3, 0.1], [0.5, 0.9]]), np.array([1, "a", 1], dtype=object), 1, 0.1, 1.0)
    classes, y = sorted_classes(np.array(["b", " a", "b "], dtype=object))
    assert list(classes) == ["a", "b"] and y.tolist() == [1, 0, 1]


def test_a_csv_written_by_pandas_with_its_index_is_read_without_it(tmp_path):
    """``DataFrame.to_csv()`` (index kept) writes a nameless first column 0, 1, 2, ...: the index, not a feature.
    Truth: the same frame written with ``index=False``."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.random(12), "b": rng.random(12), "label": ["x", "y", "z"] * 4})
    frame.to_csv(tmp_path / "with_index.csv")
    frame.to_csv(tmp_path / "plain.csv", index=False)
    assert (tmp_path / "with_index.csv").read_text().startswith(",a,b,label")
    with_index, plain = load_dataset(tmp_path / "with_index.csv"), load_dataset(tmp_path / "plain.csv")
    assert with_index.X.shape == (12, 2) and np.array_equal(with_index.X, plain.X)
    assert np.array_equal(with_index.y, plain.y)


def test_a_nameless_first_column_that_is_not_an_index_is_refused(tmp_path):
    (tmp_path / "odd.csv").write_text(",a,label\n5,0.1,x\n7,0.2,y\n9,0.3,x\n")
    with pytest.raises(ValueError, match="first column has no name"):
        load_dataset(tmp_path / "odd.csv")


def test_continuous_labels_are_refused_by_the_command_line_as_by_the_estimator(tmp_path, capsys):
    """A CSV whose last column is a measurement (100 distinct floats) is not 100 one-point classes."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.random(100), "b": rng.random(100), "y": rng.random(100)})
    frame.to_csv(tmp_path / "reg.csv", index=False)
    with pytest.raises(ValueError, match="continuous"):
        sorted_classes(frame["y"].to_numpy())
    code = main(["solve", "--model", "16", "--dataset", str(tmp_path / "reg.csv"), "--class", "0", "--nu", "0.3",
                 "--alpha", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "continuous" in err and len(err.strip().splitlines()) == 1, err
    assert sorted_classes(np.array([1.0, 2.0, 1.0]))[0].tolist() == [1.0, 2.0]  # whole numbers are classes


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_sets_read_as_pandas_reads_them(name):
    """The reader is the standard library's csv module; the truth is pandas' read_csv of the same file."""
    with resources.as_file(resources.files("tpm_models") / "datasets" / f"{name}.csv") as path:
        frame = pd.read_csv(path)
    d = load_dataset(name)
    np.testing.assert_array_equal(d.X, frame.iloc[:, :-1].to_numpy(dtype=float))
    assert d.feature_names == tuple(frame.columns[:-1])
    labels = frame.iloc[:, -1].tolist()
    assert d.classes[d.y].tolist() == [v.strip() if isinstance(v, str) else v for v in labels]
    assert d.classes.dtype.kind == ("U" if pd.api.types.is_string_dtype(frame.iloc[:, -1]) else "i")


def test_quotes_missing_values_and_short_rows(tmp_path):
    """Quoted fields hold the delimiter; a missing value (NA, an empty field) is NaN, refused as such; a short row is
    refused with its line (not filled with missing values)."""
    (tmp_path / "quoted.csv").write_text('"a","b c",label\n"1",2,"x, y"\n3,4,z\n')
    d = load_dataset(tmp_path / "quoted.csv")
    assert d.feature_names == ("a", "b c") and d.classes.tolist() == ["x, y", "z"]
    np.testing.assert_array_equal(d.X, [[1, 2], [3, 4]])
    for field in ("NA", ""):
        (tmp_path / "gap.csv").write_text(f"a,b,label\n1,{field},x\n3,4,y\n")
        with pytest.raises(ValueError, match=r"NaN or infinite values \(first at row 0, column 1\)"):
            load_dataset(tmp_path / "gap.csv")
    (tmp_path / "nolabel.csv").write_text("a,b,label\n1,2,NA\n3,4,y\n")
    with pytest.raises(ValueError, match=r"label column \(last\) has missing values"):
        load_dataset(tmp_path / "nolabel.csv")
    (tmp_path / "short.csv").write_text("a,b,label\n1,2,x\n3,4,y\n5\n")
    with pytest.raises(ValueError, match="same number of fields on every row \\(line 4 has 1 field, the header 3\\)"):
        load_dataset(tmp_path / "short.csv")
