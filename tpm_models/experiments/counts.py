"""The correct-prediction counts of one split over the grid, as the Table 3 engine and the other decision
functions both return them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GridCounts:
    """Correct predictions of every :math:`(\\alpha, \\nu/\\alpha)`, each of shape ``(len(alphas), len(ratios))``."""

    train: np.ndarray  # on the training split, fitted on it
    test: np.ndarray  # on the test split, fitted on the training split
    cv: np.ndarray | None  # on the held-out folds, fitted on the other folds, summed over the folds
    qps: int
    theta_rules: Counter
