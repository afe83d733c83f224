"""Boundary validation of the builders: bad input raises ValueError with a helpful message.

Exercised through ``tpm_models.build(eq, ...)`` for every equation, and through the direct
builders of ``tpm_models.models.binary`` / ``tpm_models.models.multiclass``. Small random data only.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest

import tpm_models
from tpm_models import Kernel, build, one_vs_rest
from tpm_models.models import binary, multiclass
from tpm_models.models.registry import group_keys, model_info

RNG = np.random.default_rng(0)
X = RNG.uniform(size=(12, 3))
Y = np.array([0, 1, 2] * 4)  # three classes, four points each
POLY = Kernel("hom-poly", degree=2)

LINEAR_EQS = [2, 3, 4, 5, 15, 16]
KERNEL_EQS = [10, 11, 12, 13, 19]
ALL_EQS = LINEAR_EQS + KERNEL_EQS
BINARY_EQS = [2, 3, 4, 5, 10, 11, 12, 13]
MULTICLASS_EQS = [15, 16, 19]
ROBUST_EQS = [22, 23, 26, 27, 28, 29]  # validated in test_robust.py


def _kernel_for(eq: int) -> Kernel | None:
    return POLY if eq in KERNEL_EQS else None


def _build(eq, X=X, y=Y, c=0, nu=0.5, alpha=1.0, kernel="auto"):
    return build(eq, X, y, c, nu, alpha, kernel=_kernel_for(eq) if kernel == "auto" else kernel)


def test_registry_covers_the_paper_models():
    assert sorted(group_keys("paper")) == sorted(ALL_EQS + ROBUST_EQS)
    for eq in BINARY_EQS:
        assert model_info(eq).family == "binary"
    for eq in MULTICLASS_EQS:
        assert model_info(eq).family == "multiclass"
    for eq in KERNEL_EQS:
        assert model_info(eq).kernel != "none"
    for eq in LINEAR_EQS:
        assert model_info(eq).kernel == "none"


# --------------------------------------------------------------------------- accepted input


@pytest.mark.parametrize("eq", ALL_EQS)
def test_valid_input_builds(eq):
    m = _build(eq)
    assert isinstance(m, pyo.ConcreteModel)


@pytest.mark.parametrize("eq", ALL_EQS)
def test_nu_equal_alpha_accepted(eq):
    m = _build(eq, nu=0.8, alpha=0.8)
    assert pyo.value(m.nu) == 0.8 and pyo.value(m.alpha) == 0.8


@pytest.mark.parametrize("eq", ALL_EQS)
def test_numpy_scalar_and_int_parameters_accepted(eq):
    m = _build(eq, nu=np.float64(0.25), alpha=2)
    assert pyo.value(m.nu) == 0.25 and pyo.value(m.alpha) == 2.0


# --------------------------------------------------------------------------- X


@pytest.mark.parametrize("eq", ALL_EQS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_X(eq, bad):
    Xb = X.copy()
    Xb[4, 2] = bad
    with pytest.raises(ValueError, match=r"NaN or infinite.*row 4, column 2"):
        _build(eq, X=Xb)


@pytest.mark.parametrize("eq", ALL_EQS)
@pytest.mark.parametrize("shape", [(12,), (12, 3, 1)])
def test_X_wrong_dimension(eq, shape):
    Xb = RNG.uniform(size=shape)
    with pytest.raises(ValueError, match="2-D"):
        _build(eq, X=Xb)


@pytest.mark.parametrize("eq", ALL_EQS)
def test_X_no_features(eq):
    with pytest.raises(ValueError, match="empty"):
        _build(eq, X=np.empty((12, 0)))


# --------------------------------------------------------------------------- y and c


@pytest.mark.parametrize("eq", ALL_EQS)
@pytest.mark.parametrize("m", [11, 13])
def test_y_length_mismatch(eq, m):
    y = np.array([0, 1, 2] * 5)[:m]
    with pytest.raises(ValueError, match=rf"12 points.*{m} labels"):
        _build(eq, y=y)


@pytest.mark.parametrize("eq", MULTICLASS_EQS)
def test_y_not_1d(eq):
    with pytest.raises(ValueError, match="1-D"):
        _build(eq, y=Y.reshape(4, 3))


@pytest.mark.parametrize("eq", MULTICLASS_EQS)
def test_y_nan_label(eq):
    y = Y.astype(float)
    y[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _build(eq, y=y)


@pytest.mark.parametrize("eq", ALL_EQS)
def test_only_one_class(eq):
    with pytest.raises(ValueError, match=r"every point|at least two classes"):
        _build(eq, y=np.zeros(12, dtype=int), c=0)


@pytest.mark.parametrize("eq", ALL_EQS)
@pytest.mark.parametrize("c", [5, "setosa", -1])
def test_class_without_points(eq, c):
    with pytest.raises(ValueError, match="has no points"):
        _build(eq, c=c)


@pytest.mark.parametrize("eq", ALL_EQS)
def test_string_labels_accepted(eq):
    y = np.array(["a", "b", "c"] * 4)
    assert isinstance(_build(eq, y=y, c="b"), pyo.ConcreteModel)


# --------------------------------------------------------------------------- nu, alpha


@pytest.mark.parametrize("eq", ALL_EQS)
@pytest.mark.parametrize(("nu", "alpha"), [(0.0, 1.0), (-0.5, 1.0), (0.5, 0.0), (0.5, -1.0), (-2.0, -1.0)])
def test_nonpositive_nu_alpha(eq, nu, alpha):
    with pytest.raises(ValueError, match="> 0"):
        _build(eq, nu=nu, alpha=alpha)


@pytest.mark.parametrize("eq", ALL_EQS)
@pytest.mark.parametrize(("nu", "alpha"), [(np.nan, 1.0), (0.5, np.inf), (np.inf, np.inf), (0.5, np.nan)])
def test_nonfinite_nu_alpha(eq, nu, alpha):
    with pytest.raises(ValueError, match="finite"):
        _build(eq, nu=nu, alpha=alpha)


@pytest.mark.parametrize("eq", ALL_EQS)
@pytest.mark.parametrize(("nu", "alpha"), [(1.5, 1.0), (1.0 + 1e-12, 1.0), (3, 2)])
def test_nu_greater_than_alpha(eq, nu, alpha):
    with pytest.raises(ValueError, match="nu <= alpha"):
        _build(eq, nu=nu, alpha=alpha)


@pytest.mark.parametrize("eq", ALL_EQS)
@pytest.mark.parametrize(
    ("nu", "alpha"), [("0.5", 1.0), (None, 1.0), (0.5, "1"), (True, 1.0), ([0.5], 1.0), (0.5, 1 + 0j)]
)
def test_non_numeric_nu_alpha(eq, nu, alpha):
    with pytest.raises(ValueError, match="must be a real number"):
        _build(eq, nu=nu, alpha=alpha)


# --------------------------------------------------------------------------- eq and kernel


@pytest.mark.parametrize("eq", [7, 99, 0, -2, 14, 17, "abc", None])
def test_unknown_equation(eq):
    with pytest.raises(ValueError, match="not a model of the paper"):
        build(eq, X, Y, 0, 0.5, 1.0)
    with pytest.raises(ValueError, match="not a model of the paper"):
        model_info(eq)


@pytest.mark.parametrize("eq", [2.5, 15.9])
def test_non_integral_equation_number(eq):
    with pytest.raises(ValueError, match="not a model of the paper"):
        build(eq, X, Y, 0, 0.5, 1.0)


@pytest.mark.parametrize("eq", KERNEL_EQS)
def test_kernel_model_without_kernel(eq):
    with pytest.raises(ValueError, match="needs a kernel"):
        _build(eq, kernel=None)


@pytest.mark.parametrize("eq", LINEAR_EQS)
@pytest.mark.parametrize(
    "kernel", [Kernel("gaussian", sigma=1.0), Kernel("hom-poly", degree=2), Kernel("sigmoid", a=1.0, b=0.0)]
)
def test_linear_model_with_nonlinear_kernel(eq, kernel):
    with pytest.raises(ValueError, match="linear model and takes no kernel"):
        _build(eq, kernel=kernel)


@pytest.mark.parametrize("eq", [10, 11])
@pytest.mark.parametrize("kernel", [Kernel("gaussian", sigma=1.0), Kernel("sigmoid", a=1.0, b=0.0)])
def test_feature_space_primal_needs_feature_map(eq, kernel):
    with pytest.raises(ValueError, match="no finite feature map"):
        _build(eq, kernel=kernel)


# --------------------------------------------------------------------------- direct builders

YB = np.where(Y == 0, 1, -1)
BINARY_BUILDERS = {
    2: binary.build_primal_2,
    3: binary.build_primal_3,
    4: binary.build_dual_4,
    5: binary.build_dual_5,
    10: binary.build_primal_10,
    11: binary.build_primal_11,
    12: binary.build_dual_12,
    13: binary.build_dual_13,
}
MULTICLASS_BUILDERS = {15: multiclass.build_primal_15, 16: multiclass.build_dual_16, 19: multiclass.build_dual_19}


def _direct_binary(eq, X=X, y=YB, nu=0.5, alpha=1.0):
    return BINARY_BUILDERS[eq](X, y, nu, alpha, **({"kernel": POLY} if eq in KERNEL_EQS else {}))


def _direct_multiclass(eq, X=X, y=Y, c=0, nu=0.5, alpha=1.0):
    return MULTICLASS_BUILDERS[eq](X, y, c, nu, alpha, **({"kernel": POLY} if eq in KERNEL_EQS else {}))


@pytest.mark.parametrize("eq", BINARY_EQS)
def test_binary_builder_valid(eq):
    assert isinstance(_direct_binary(eq), pyo.ConcreteModel)


@pytest.mark.parametrize("eq", BINARY_EQS)
@pytest.mark.parametrize(
    "y",
    [
        np.array([0, 1] * 6),
        np.array([1, 2] * 6),
        np.array([1, -1, 0] * 4),
        np.array(["+1", "-1"] * 6),
        np.array([1.0, -1.0, 0.5] * 4),
    ],
    ids=["0/1", "1/2", "1/-1/0", "strings", "1/-1/0.5"],
)
def test_binary_builder_labels_not_pm1(eq, y):
    with pytest.raises(ValueError, match=r"labels in \{-1, \+1\}"):
        _direct_binary(eq, y=y)


@pytest.mark.parametrize("eq", BINARY_EQS)
@pytest.mark.parametrize("sign", [1, -1])
def test_binary_builder_one_sign_only(eq, sign):
    with pytest.raises(ValueError, match="both a positive"):
        _direct_binary(eq, y=np.full(12, sign))


@pytest.mark.parametrize("eq", BINARY_EQS)
def test_binary_builder_bad_X_and_params(eq):
    Xb = X.copy()
    Xb[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _direct_binary(eq, X=Xb)
    with pytest.raises(ValueError, match="2-D"):
        _direct_binary(eq, X=X[:, 0])
    with pytest.raises(ValueError, match="empty"):
        _direct_binary(eq, X=np.empty((0, 3)), y=np.array([], dtype=int))
    with pytest.raises(ValueError, match="11 labels"):
        _direct_binary(eq, y=YB[:11])
    with pytest.raises(ValueError, match="nu <= alpha"):
        _direct_binary(eq, nu=2.0, alpha=1.0)
    with pytest.raises(ValueError, match="> 0"):
        _direct_binary(eq, nu=0.0)
    assert isinstance(_direct_binary(eq, nu=1.0, alpha=1.0), pyo.ConcreteModel)


@pytest.mark.parametrize("eq", MULTICLASS_EQS)
def test_multiclass_builder_boundaries(eq):
    assert isinstance(_direct_multiclass(eq), pyo.ConcreteModel)
    Xb = X.copy()
    Xb[5, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        _direct_multiclass(eq, X=Xb)
    with pytest.raises(ValueError, match="2-D"):
        _direct_multiclass(eq, X=X[None])
    with pytest.raises(ValueError, match="has no points"):
        _direct_multiclass(eq, c=9)
    with pytest.raises(ValueError, match="at least two classes"):
        _direct_multiclass(eq, y=np.ones(12, dtype=int), c=1)
    with pytest.raises(ValueError, match="nu <= alpha"):
        _direct_multiclass(eq, nu=1.1, alpha=1.0)
    with pytest.raises(ValueError, match="real number"):
        _direct_multiclass(eq, nu="half")


# --------------------------------------------------------------------------- one_vs_rest


def test_one_vs_rest_values():
    y = np.array(["a", "b", "a", "c", "b"])
    for k in ("a", "b", "c"):
        expected = [1 if v == k else -1 for v in y]
        assert one_vs_rest(y, k).tolist() == expected
    assert tpm_models.one_vs_rest is tpm_models.data.one_vs_rest


@pytest.mark.parametrize("k", [3, 7, "a"])
def test_one_vs_rest_missing_class(k):
    with pytest.raises(ValueError, match="has no points"):
        one_vs_rest(Y, k)


def test_one_vs_rest_class_covers_all_points():
    with pytest.raises(ValueError, match="every point is in class"):
        one_vs_rest(np.full(6, 2), 2)
