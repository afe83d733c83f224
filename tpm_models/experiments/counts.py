"""The correct-prediction counts of one split over the grid, as the Table 3 engine and the other decision
functions both return them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

FALLBACK_QPS = "piqp fallback QPs"
"""The key of ``GridCounts.theta_rules`` that counts the QPs the dense fits handed to their fallback solver
(``docs/experiments.md``), not a rule of :math:`\theta`: the stored records keep this name."""


@dataclass(frozen=True)
class GridCounts:
    """Correct predictions of every :math:`(\\alpha, \\nu/\\alpha)`, each of shape ``(len(alphas), len(ratios))``."""

    train: np.ndarray  # on the training split, fitted on it
    test: np.ndarray  # on the test split, fitted on the training split
    cv: np.ndarray | None  # on the held-out folds, fitted on the other folds, summed over the folds
    qps: int
    theta_rules: Counter
