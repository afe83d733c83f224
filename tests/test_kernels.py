"""Kernels of Table 1 (tpm_models.kernels) against the formulas written out here.

Truths: a double Python loop over points with the Table 1 formula, ``math.comb`` for the
dimension of the polynomial feature maps.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tpm_models import Kernel

# Positive data keep x.x' away from 0, so a relative tolerance is meaningful for every kernel.
_rng = np.random.default_rng(0)
A = _rng.uniform(0.05, 1.0, size=(7, 4))
B = _rng.uniform(0.05, 1.0, size=(5, 4))


def _dot(x, z) -> float:
    return sum(float(xi) * float(zi) for xi, zi in zip(x, z))


def _sqdist(x, z) -> float:
    return sum((float(xi) - float(zi)) ** 2 for xi, zi in zip(x, z))


FORMULAS = {
    "linear": lambda x, z, p: _dot(x, z),
    "hom-poly": lambda x, z, p: _dot(x, z) ** p["degree"],
    "inhom-poly": lambda x, z, p: (p["gamma"] + _dot(x, z)) ** p["degree"],
    "gaussian": lambda x, z, p: math.exp(-_sqdist(x, z) / (2.0 * p["sigma"] ** 2)),
    "sigmoid": lambda x, z, p: math.tanh(p["a"] * _dot(x, z) + p["b"]),
}

CASES = [
    ("linear", {}),
    ("hom-poly", {"degree": 1}),
    ("hom-poly", {"degree": 2}),
    ("hom-poly", {"degree": 3}),
    ("inhom-poly", {"degree": 1, "gamma": 0.0}),
    ("inhom-poly", {"degree": 2, "gamma": 0.5}),
    ("inhom-poly", {"degree": 3, "gamma": 2.0}),
    ("gaussian", {"sigma": 0.3}),
    ("gaussian", {"sigma": 1.0}),
    ("gaussian", {"sigma": 4.0}),
    ("sigmoid", {"a": 0.5, "b": 0.25}),
    ("sigmoid", {"a": 2.0, "b": 1.0}),
]


def _loop_gram(name, params, P, Q) -> np.ndarray:
    f = FORMULAS[name]
    return np.array([[f(p, q, params) for q in Q] for p in P])


@pytest.mark.parametrize(("name", "params"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_gram_equals_double_loop(name, params):
    k = Kernel(name, **params)
    for P, Q in ((A, B), (B, A), (A, A)):
        K = k.gram(P, Q)
        assert K.shape == (len(P), len(Q))
        np.testing.assert_allclose(K, _loop_gram(name, params, P, Q), rtol=1e-12, atol=0)


def test_gram_symmetric_and_gaussian_diagonal_one():
    k = Kernel("gaussian", sigma=0.7)
    K = k.gram(A, A)
    np.testing.assert_allclose(K, K.T, rtol=1e-14, atol=0)
    np.testing.assert_allclose(np.diag(K), 1.0, rtol=0, atol=1e-14)


def test_gram_single_points_as_1d():
    k = Kernel("inhom-poly", degree=2, gamma=1.0)
    K = k.gram(A[0], B[1])
    assert K.shape == (1, 1)
    assert K[0, 0] == pytest.approx((1.0 + _dot(A[0], B[1])) ** 2, rel=1e-12)


def test_gram_mixed_sign_data_linear_and_gaussian():
    rng = np.random.default_rng(1)
    P, Q = rng.normal(size=(6, 3)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(Kernel("linear").gram(P, Q), _loop_gram("linear", {}, P, Q), rtol=0, atol=1e-13)
    np.testing.assert_allclose(
        Kernel("gaussian", sigma=1.3).gram(P, Q), _loop_gram("gaussian", {"sigma": 1.3}, P, Q), rtol=1e-12, atol=0
    )


def test_gram_mismatched_feature_counts():
    with pytest.raises(ValueError, match="features"):
        Kernel("linear").gram(A, B[:, :3])


# --------------------------------------------------------------------------- feature maps

FMAP_CASES = (
    [("linear", {})]
    + [("hom-poly", {"degree": d}) for d in (1, 2, 3)]
    + [("inhom-poly", {"degree": d, "gamma": g}) for d in (1, 2, 3) for g in (0.0, 0.5, 2.0)]
)


@pytest.mark.parametrize(("name", "params"), FMAP_CASES, ids=[f"{n}-{p}" for n, p in FMAP_CASES])
def test_feature_map_reproduces_kernel(name, params):
    k = Kernel(name, **params)
    assert k.has_feature_map
    phiA, phiB = k.feature_map(A), k.feature_map(B)
    np.testing.assert_allclose(phiA @ phiB.T, _loop_gram(name, params, A, B), rtol=1e-10, atol=0)
    np.testing.assert_allclose(phiA @ phiB.T, k.gram(A, B), rtol=1e-10, atol=0)
    n = A.shape[1]
    d = params.get("degree", 1)
    if name == "linear":
        dim = n
    elif name == "hom-poly":
        dim = math.comb(n + d - 1, d)
    else:
        dim = math.comb(n + d, d)
    assert phiA.shape == (len(A), dim)
    assert phiB.shape == (len(B), dim)


@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_feature_map_dimension_other_n(n, d):
    X = np.random.default_rng(n * 10 + d).uniform(size=(3, n))
    assert Kernel("hom-poly", degree=d).feature_map(X).shape[1] == math.comb(n + d - 1, d)
    assert Kernel("inhom-poly", degree=d, gamma=1.0).feature_map(X).shape[1] == math.comb(n + d, d)


def test_linear_feature_map_is_identity_copy():
    phi = Kernel("linear").feature_map(A)
    assert np.array_equal(phi, A)
    assert phi is not A


@pytest.mark.parametrize("kernel", [Kernel("gaussian", sigma=1.0), Kernel("sigmoid", a=1.0, b=0.0)])
def test_no_feature_map(kernel):
    assert not kernel.has_feature_map
    with pytest.raises(ValueError, match="no finite feature map"):
        kernel.feature_map(A)


# --------------------------------------------------------------------------- parameter validation


@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        ("hom-poly", {"degree": 0}, "degree must be an integer >= 1"),
        ("hom-poly", {"degree": -2}, "degree must be an integer >= 1"),
        ("hom-poly", {"degree": 1.5}, "degree must be an integer >= 1"),
        ("inhom-poly", {"degree": 0, "gamma": 1.0}, "degree must be an integer >= 1"),
        ("inhom-poly", {"degree": 2.5, "gamma": 1.0}, "degree must be an integer >= 1"),
        ("inhom-poly", {"degree": 2, "gamma": -0.1}, "gamma must be >= 0"),
        ("gaussian", {"sigma": 0.0}, "sigma must be > 0"),
        ("gaussian", {"sigma": -1.0}, "sigma must be > 0"),
        ("gaussian", {"sigma": float("nan")}, "finite"),
        ("gaussian", {"sigma": float("inf")}, "finite"),
        ("hom-poly", {"degree": float("inf")}, "finite"),
        ("inhom-poly", {"degree": 2, "gamma": float("nan")}, "finite"),
        ("sigmoid", {"a": float("nan"), "b": 0.0}, "finite"),
        ("sigmoid", {"a": 1.0, "b": float("-inf")}, "finite"),
        ("hom-poly", {}, "needs the parameter 'degree'"),
        ("inhom-poly", {"degree": 2}, "needs the parameter 'gamma'"),
        ("inhom-poly", {"gamma": 1.0}, "needs the parameter 'degree'"),
        ("gaussian", {}, "needs the parameter 'sigma'"),
        ("sigmoid", {"a": 1.0}, "needs the parameter 'b'"),
        ("linear", {"degree": 2}, "takes no parameter 'degree'"),
        ("gaussian", {"sigma": 1.0, "gamma": 1.0}, "takes no parameter 'gamma'"),
        ("hom-poly", {"degree": 2, "gamma": 1.0}, "takes no parameter 'gamma'"),
        ("rbf", {}, "unknown kernel"),
        ("polynomial", {"degree": 2}, "unknown kernel"),
    ],
)
def test_invalid_parameters(name, params, match):
    with pytest.raises(ValueError, match=match):
        Kernel(name, **params)


@pytest.mark.parametrize(
    ("name", "params"),
    [("gaussian", {"sigma": "1.0"}), ("hom-poly", {"degree": "2"}), ("sigmoid", {"a": "1", "b": 0.0})],
)
def test_non_numeric_parameter_raises_value_error(name, params):
    with pytest.raises(ValueError):
        Kernel(name, **params)


def test_valid_boundaries_accepted():
    Kernel("inhom-poly", degree=1, gamma=0.0)
    Kernel("hom-poly", degree=2.0)  # integral float
    Kernel("gaussian", sigma=1e-3)
    Kernel("sigmoid", a=-1.0, b=-2.0)  # a, b are any reals


@pytest.mark.parametrize(("name", "params"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_gram_sum_equals_double_loop_sum(name, params):
    """e'K(P, Q)e without the matrix (the linear kernel's closed form, the others by blocks of 2 rows here) is the sum
    of the double loop's entries; 1e-12 relative: the same terms added in another order."""
    k = Kernel(name, **params)
    for P, Q in ((A, B), (B, A), (A, A)):
        truth = _loop_gram(name, params, P, Q).sum()
        for chunk in (None, 2):
            assert k.gram_sum(P, Q, chunk) == pytest.approx(truth, rel=1e-12, abs=1e-12)
