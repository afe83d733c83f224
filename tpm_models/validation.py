"""Input checks shared by every public boundary (builders, estimators, CLI).

Each check raises ``ValueError`` with a message that says what is wrong and
what to do about it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

MODEL_CLASSES = ("LP", "QP", "SOCP", "NLP", "semi-infinite")
"""What a model holds: the classes :func:`tpm_models.solvers.structure.model_class` reads from a Pyomo model
(:data:`SOLVABLE_CLASSES`), and ``"semi-infinite"``, which a model registered as (22) declares
(``model_class`` of :class:`tpm_models.models.registry.ModelInfo`) and no backend takes as written."""

SOLVABLE_CLASSES = MODEL_CLASSES[:4]
"""The model classes a backend may take (``register_backend(..., model_classes=...)``)."""


def check_features(X: np.ndarray, where: str = "X") -> np.ndarray:
    """Return ``X`` as a float array after checking it is 2-D, non-empty, real, dense and finite.

    A pandas ``DataFrame`` of numbers is taken (its values); a sparse matrix and complex numbers are refused with
    what to do (the models here are dense in ``X``)."""
    if hasattr(X, "tocsr") or hasattr(X, "sparse") and hasattr(getattr(X, "sparse", None), "to_dense"):
        shape = getattr(X, "shape", None)
        raise ValueError(f"{where}: a sparse matrix{f' of shape {shape}' if shape else ''} is not taken (the models "
                         "here build dense rows from X); pass X.toarray() if it fits in memory")
    if hasattr(X, "dtypes") and hasattr(X, "columns"):  # a pandas DataFrame: numbers only, said by column name
        text = [str(c) for c, t in zip(X.columns, X.dtypes) if getattr(t, "kind", "O") not in "biuf"]
        if text:
            raise ValueError(f"{where}: the columns {text} are not numbers; encode or drop them first")
        frame: Any = X  # a pandas DataFrame (duck-typed: pandas is not a dependency)
        X = frame.to_numpy()
    raw = np.asarray(X)
    if raw.dtype.kind == "c":
        raise ValueError(f"{where}: complex numbers are not taken (features are real); pass X.real or np.abs(X) "
                         "if that is what you mean")
    if raw.dtype == object:
        try:
            raw = raw.astype(float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: not an array of real numbers ({exc}); give a 2-D numeric array") from None
    try:
        X = np.asarray(raw, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: not an array of real numbers ({exc}); give a 2-D numeric array") from None
    if X.ndim != 2:
        raise ValueError(f"{where}: expected a 2-D array (points as rows), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{where}: empty array of shape {X.shape}")
    if not np.isfinite(X).all():
        bad = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(
            f"{where}: contains NaN or infinite values (first at row {bad[0]}, column {bad[1]}); "
            "remove or impute them first"
        )
    return X


def check_nu_alpha(nu: float, alpha: float, where: str = "") -> tuple[float, float]:
    """Check :math:`0 < \\nu \\le \\alpha` (both finite) (errata 6).

    :math:`\\nu \\le \\alpha` is necessary: the dual needs :math:`e^\\top\\lambda = \\nu` with
    :math:`0 \\le \\lambda \\le \\alpha/m`, and for :math:`\\nu > \\alpha` the primal is
    unbounded below (:math:`\\theta \\to -\\infty`). ``where`` (an estimator, a hyperplane's parameters) starts
    the message when given.
    """
    if where:
        try:
            return check_nu_alpha(nu, alpha)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    for name, value in (("nu", nu), ("alpha", alpha)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{name} must be a real number, got {value!r}")
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a finite number > 0, got {value}")
    if nu > alpha:
        raise ValueError(
            f"nu = {nu} > alpha = {alpha}: the dual is infeasible (e'lambda = nu with "
            "0 <= lambda <= alpha/m) and the primal is unbounded below; choose nu <= alpha"
        )
    return float(nu), float(alpha)


def check_free_tol(free_tol: object) -> float:
    """Check the relative tolerance of a free multiplier (:mod:`tpm_models.models.recovery`): a number in (0, 0.5)."""
    if isinstance(free_tol, bool) or not isinstance(free_tol, (int, float, np.integer, np.floating)) \
            or not 0.0 < free_tol < 0.5:
        raise ValueError(
            f"free_tol must be a number in (0, 0.5), the relative distance from the bounds of lambda "
            f"for a free multiplier (tpm_models.models.recovery); got {free_tol!r}. The default is "
            "tpm_models.models.recovery.FREE_TOL (1e-6)"
        )
    return float(free_tol)


def check_n_jobs(n_jobs: object, where: str = "n_jobs") -> int | None:
    """Check a number of joblib workers, scikit-learn's ``n_jobs``: None (one, or what the active
    ``joblib.parallel_config`` says, e.g. Dask), an integer >= 1, or a negative integer (-1: one per core, -2: all
    but one, joblib's meaning). 0, booleans and non-integers raise ``ValueError`` saying so."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)):
        raise ValueError(f"{where} must be None or an integer (>= 1 workers, or -1 for one per core); got {n_jobs!r}")
    if n_jobs == 0:
        raise ValueError(f"{where} = 0 runs nothing: give None (one worker, or the active joblib.parallel_config), "
                         "an integer >= 1, or -1 for one per core")
    return int(n_jobs)


def check_discrete_labels(y: np.ndarray, where: str = "y") -> None:
    """Refuse (``ValueError``) labels that are measurements, not classes: numbers that are not all whole (``0.37``;
    scikit-learn's "continuous" targets), NaN or infinite ones. Whole numbers stored as floats (``1.0``) are
    classes."""
    y = np.asarray(y)
    if y.dtype.kind == "f" or (y.dtype.kind == "O" and y.size
                               and all(isinstance(v, (float, np.floating)) for v in y.tolist())):
        values = y.astype(float)
        bad = ~np.isfinite(values)
        if bad.any():
            raise ValueError(f"{where}: label {values[bad][0]!r} (row {int(np.flatnonzero(bad)[0])}) is not a class; "
                             "every label must be a class name or number")
        whole = values == np.round(values)
        if not whole.all():
            i = int(np.flatnonzero(~whole)[0])
            raise ValueError(f"{where}: the labels are continuous (row {i}: {values[i]!r}, {len(np.unique(values))} "
                             "distinct values), not classes: a classifier needs class labels (a column of names "
                             "or whole numbers); is the label column the last one?")


def sorted_classes(y: np.ndarray, where: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(y, return_inverse=True)`` for labels of any kind: the classes in sorted order and the class number
    of each label. Labels of mixed kinds (numbers and strings) cannot be ordered: ``ValueError`` saying which kinds;
    strings have their surrounding blanks removed (``" x"`` and ``"x"`` are one class)."""
    y = np.asarray(y)
    if y.dtype.kind in "OUS":
        y = np.array([v.strip() if isinstance(v, str) else v for v in y.tolist()], dtype=object)
        kinds = sorted({"number" if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                        else type(v).__name__ for v in y.tolist()})
        if len(kinds) > 1:
            raise ValueError(f"{where}: labels of mixed kinds ({', '.join(kinds)}) cannot be ordered into classes; "
                             "make them all strings (y.astype(str)) or all numbers")
        if kinds == ["str"]:
            y = y.astype(str)
    check_discrete_labels(y, where)
    try:
        classes, inverse = np.unique(y, return_inverse=True)
    except TypeError as exc:
        raise ValueError(f"{where}: labels cannot be ordered into classes ({exc}); make them all strings or all "
                         "numbers") from None
    return classes, inverse.reshape(-1)


def check_labels(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Check that ``y`` is a 1-D label vector with one label per row of ``X``."""
    if hasattr(y, "to_numpy"):  # a pandas Series or one-column frame
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per point), got shape {y.shape}")
    if len(y) != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} points (rows) but y has {len(y)} labels")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinite labels")
    return y


def check_binary_labels(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Check binary labels: every ``y_i`` is +1 or -1 and both occur (Section 2.1)."""
    y = check_labels(X, y)
    values = set(np.unique(y).tolist())
    if not values <= {1, -1}:
        raise ValueError(
            f"binary models need labels in {{-1, +1}}, got {sorted(values, key=str)}; "
            "use tpm_models.one_vs_rest(y, k) to make class k positive and the rest negative"
        )
    if values != {1, -1}:
        raise ValueError("binary models need both a positive (+1) and a negative (-1) point")
    return y.astype(int)


def check_class(y: np.ndarray, c: object) -> None:
    """Check that class ``c`` has points and that some point is not in class ``c``."""
    y = np.asarray(y)
    if y.dtype.kind in "biuf" and np.any(y == c) and np.any(y != c):
        return  # numbers with c and another class: no sort of every label into its class (np.unique) needed
    present = sorted_classes(y)[0]
    if len(present) < 2:
        raise ValueError(f"need at least two classes, got {present.tolist()}")
    if not np.any(y == c):
        raise ValueError(f"class {c!r} has no points; classes present: {present.tolist()}")


def _first_existing(path: Path) -> Path:
    for parent in path.parents:
        if parent.exists():
            return parent
    return Path(".")


def check_output_path(path: str | os.PathLike, folder: bool = False) -> str:
    """Check that ``path`` can be written before any work is done, and return it.

    A file (``folder=False``) must not be an existing folder; a folder (``folder=True``) must not
    be an existing file. In both cases the nearest existing ancestor must be a folder that we may
    write in (a missing one is created on writing). Without this, a long run would end in a
    ``NotADirectoryError`` or ``FileExistsError`` after its work.
    """
    p = Path(path)
    if folder and p.exists() and not p.is_dir():
        raise ValueError(f"cannot write into {path}: it is a file, not a folder; choose another folder")
    if not folder and p.is_dir():
        raise ValueError(f"cannot write {path}: it is a folder; give a file name")
    base = p if folder and p.is_dir() else _first_existing(p)
    if not base.is_dir():
        raise ValueError(f"cannot write {path}: {base} is a file, not a folder; choose another path")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {path}: no permission to write in {base}")
    return str(path)


def finite_number(text: str, what: str = "the value", positive: bool = False) -> float:
    """``text`` read as a finite float (``nan``, ``inf`` refused, ``ValueError`` naming ``what``); with
    ``positive``, a number > 0 (a time limit of 0 or less is not "no limit")."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, got {text!r}")
    if positive and value <= 0:
        raise ValueError(f"{what} must be > 0, got {text!r} (leave the option out for no limit)")
    return value


def json_safe(value: object) -> object:
    """``value`` with every non-finite float (NaN, inf; numpy's too) replaced by ``None``, so that the JSON written
    is valid (``null``, never ``NaN``); numpy scalars and arrays become Python numbers and lists."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
