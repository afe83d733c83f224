"""Shared fixtures: the shipped data sets, min-max scaled as in Section 5."""

import warnings

import numpy as np
import pytest

from tpm_models import load_dataset, min_max_scale

warnings.filterwarnings("ignore", category=DeprecationWarning)


@pytest.fixture(scope="session")
def iris():
    d = load_dataset("iris")
    return min_max_scale(d.X), d.y


@pytest.fixture(scope="session")
def wine():
    d = load_dataset("wine")
    return min_max_scale(d.X), d.y


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
