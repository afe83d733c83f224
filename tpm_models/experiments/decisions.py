"""Other decision functions the paper names (Section 6): max-voting and max-distance, on the fast path.

The paper only names them ("other decision functions (max voting, max distance)"); the definitions used
here are ours, built from its binary model only. For a set :math:`A` of points labelled +1 and a set
:math:`B` labelled -1, :math:`g_{AB}` is the binary TPMSVM (2)-(3) (kernel: (12)-(13)) with
:math:`X_+ = A`, :math:`X_- = B`, :math:`\\nu_\\pm = \\nu`, :math:`\\alpha_\\pm = \\alpha`, read before the
sign of (8) (kernel: (14)):

.. math::
    g_{AB}(x) = \\frac{\\langle w_+,\\varphi(x)\\rangle+\\theta_+}{\\sqrt{\\langle w_+,w_+\\rangle}}
              + \\frac{\\langle w_-,\\varphi(x)\\rangle+\\theta_-}{\\sqrt{\\langle w_-,w_-\\rangle}}

(a hyperplane with :math:`w = 0`, :data:`tpm_models.models.recovery.DEGENERATE_TOL`, is left out of the sum, as
:meth:`tpm_models.learn.estimators.TPMSVM.decision_function` does). With classes :math:`1..C`:

* **max-voting, one-versus-one** (``"ovo-vote"``): :math:`g_{ij}` for every pair :math:`i < j` with
  :math:`A = X_i`, :math:`B = X_j`, and :math:`g_{ji} = -g_{ij}`. Pair :math:`(i, j)` votes for :math:`i`
  when :math:`g_{ij}(x) \\ge 0` (the tie rule of :func:`tpm_models.models.binary.predict_8`), else for :math:`j`.
  The class with most votes :math:`V_c(x)` wins; among classes tied on votes, the largest score
  :math:`S_c(x) = \\sum_{j\\ne c} g_{cj}(x)`; then the lowest class.
* **max-distance, one-versus-rest** (``"ovr-maxdist"``): :math:`g_c = g_{X_c X_{-c}}` for every class
  :math:`c`; :math:`f(x) = \\operatorname{arg\\,max}_c g_c(x)`, ties to the lowest class.

**One QP structure for both hyperplanes (the mirror identity).** Substituting
:math:`(w,\\theta,\\xi) \\to (-w,-\\theta,\\xi)` turns (3) with :math:`(X_+, X_-) = (A, B)` into (2) with
:math:`(X_+, X_-) = (B, A)`; its dual (5)/(13) is (4)/(12) with the sets swapped, which is (19) with
own = :math:`B` and other = :math:`A`; (7) is minus (6), and the :math:`\\theta` rule follows
(:func:`tpm_models.models.recovery.kkt_theta` with ``sign=-1`` flips the KKT interval). So, writing
:math:`d_{A|B}` for the signed distance to the (19)-type surface of :math:`A` against :math:`B` (solved by
:class:`tpm_models.learn.fastqp.ClassDual`, recovered by :func:`tpm_models.learn.fastqp.recover_planes`),

.. math::
    H_+^{AB} = \\text{surface}(A|B),\\qquad H_-^{AB} = -\\,\\text{surface}(B|A)
    \\ \\ (\\lambda_- = \\lambda_{B|A},\\ w_- = -w_{B|A},\\ \\theta_- = -\\theta_{B|A}),\\qquad
    g_{AB} = d_{A|B} - d_{B|A},

hence :math:`g_{BA} = -g_{AB}` exactly: which class of a pair is :math:`X_+` does not matter. The tests
check the planes against ``build_dual_4``/``build_dual_5`` (``12``/``13``) solved by PIQP and
``recover_plus``/``recover_minus``.

**Errata 7 holds.** For fixed :math:`\\nu/\\alpha`, :math:`(w,\\theta,\\xi) = \\alpha(w',\\theta',\\xi')` turns
(2)/(3) into :math:`\\alpha^2` times the problem at :math:`(\\nu/\\alpha, 1)`, so the planes scale with
:math:`\\alpha` and every term :math:`(\\langle w,\\varphi(x)\\rangle+\\theta)/\\|w\\|` of :math:`g` is invariant:
votes, scores and both predictions depend on :math:`\\nu/\\alpha` only. **Errata 10 holds** for the same
reason as for (19): each surface is a (19)-type QP with :math:`e^\\top\\lambda = \\nu` fixed.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

import numpy as np

from tpm_models.experiments.counts import FALLBACK_QPS, GridCounts
from tpm_models.kernels import Kernel
from tpm_models.learn.fastqp import ClassDual, Planes, recover_planes
from tpm_models.models.recovery import FREE_TOL
from tpm_models.validation import check_features, check_labels, check_nu_alpha

RULES = ("ovo-vote", "ovr-maxdist")
"""The decision rules: max-voting over one-versus-one binary TPMSVMs, max-distance over one-versus-rest ones."""


def surface(
    K: np.ndarray, own: np.ndarray, other: np.ndarray, nu: Sequence[float] | np.ndarray,
    alpha: Sequence[float] | np.ndarray, solver: str = "daqp", free_tol: float = FREE_TOL,
) -> tuple[Planes, int]:
    """The (19)-type surface of the points ``own`` against ``other`` (positions in the Gram matrix ``K``) for
    every :math:`(\\nu_j, \\alpha_j)`, and the QPs solved. (4)/(12) with :math:`X_+` = own, :math:`X_-` = other;
    also (5)/(13) with :math:`X_-` = own, :math:`X_+` = other, up to the sign of :math:`(w,\\theta)`."""
    if len(own) == 0 or len(other) == 0:
        raise ValueError(f"a binary TPMSVM needs points on both sides; got {len(own)} and {len(other)}")
    dual = ClassDual(K[np.ix_(own, own)], K[np.ix_(other, own)], solver)
    lam = np.column_stack([dual.solve(v, a) for v, a in zip(nu, alpha)])
    return dataclasses.replace(recover_planes(K, own, other, lam, nu, alpha, free_tol),
                               fallbacks=dual.fallbacks), dual.qps


def signed_distance(p: Planes, K_rows: np.ndarray) -> np.ndarray:
    """:math:`(\\langle w,\\varphi(x)\\rangle+\\theta)/\\sqrt{\\langle w,w\\rangle}`, shape ``(rows, k)``; 0 for a
    degenerate column (left out of (8)/(14))."""
    norm = np.sqrt(np.where(p.degenerate, 1.0, p.w_w))
    return np.where(p.degenerate, 0.0, (p.w_phi(K_rows) + p.theta) / norm)


@dataclass(frozen=True)
class BinaryPlanes:
    """One binary TPMSVM (2)-(3)/(12)-(13) for ``k`` parameter columns: :math:`H_+` = ``plus``,
    :math:`H_-` = ``-mirror`` (module docstring: ``mirror`` is the surface of :math:`X_-` against :math:`X_+`)."""

    plus: Planes
    mirror: Planes

    @property
    def lam_plus(self) -> np.ndarray:
        """:math:`\\lambda_+` of (4)/(12), shape ``(m_+, k)``."""
        return self.plus.lam

    @property
    def lam_minus(self) -> np.ndarray:
        """:math:`\\lambda_-` of (5)/(13), shape ``(m_-, k)``."""
        return self.mirror.lam

    @property
    def theta_plus(self) -> np.ndarray:
        return self.plus.theta

    @property
    def theta_minus(self) -> np.ndarray:
        """:math:`\\theta_-` of (7): minus the mirror's."""
        return -self.mirror.theta

    def w_phi_minus(self, K_rows: np.ndarray) -> np.ndarray:
        """:math:`\\langle w_-,\\varphi(x)\\rangle` of (7) for Gram rows, shape ``(rows, k)``."""
        return -self.mirror.w_phi(K_rows)

    def decision(self, K_rows: np.ndarray) -> np.ndarray:
        """(8)/(14) before the sign, :math:`g(x) = d_+(x) + d_-(x) = d_{+|-}(x) - d_{-|+}(x)`, shape ``(rows, k)``."""
        return signed_distance(self.plus, K_rows) - signed_distance(self.mirror, K_rows)


def fit_binary(
    K: np.ndarray, plus: np.ndarray, minus: np.ndarray, nu: Sequence[float] | np.ndarray,
    alpha: Sequence[float] | np.ndarray, solver: str = "daqp", free_tol: float = FREE_TOL,
) -> tuple[BinaryPlanes, int]:
    """The binary TPMSVM with :math:`X_+` = the points ``plus``, :math:`X_-` = ``minus`` (positions in ``K``)
    for every :math:`(\\nu_j, \\alpha_j)`, :math:`\\nu_\\pm = \\nu_j`, :math:`\\alpha_\\pm = \\alpha_j`; and the QPs
    solved (two per column)."""
    p, n_p = surface(K, plus, minus, nu, alpha, solver, free_tol)
    m, n_m = surface(K, minus, plus, nu, alpha, solver, free_tol)
    return BinaryPlanes(p, m), n_p + n_m


@dataclass(frozen=True)
class RuleFit:
    """The binary TPMSVMs of one rule (:data:`RULES`), for ``k`` parameter columns.

    ``binaries``: for ``"ovo-vote"`` keyed ``(i, j)``, ``i < j``, with :math:`X_+` = class ``i``,
    :math:`X_-` = class ``j``; for ``"ovr-maxdist"`` keyed ``c``, :math:`X_+` = class ``c``, :math:`X_-` = the rest.
    """

    rule: str
    n_classes: int
    binaries: dict
    qps: int

    @property
    def fallbacks(self) -> int:
        return sum(b.plus.fallbacks + b.mirror.fallbacks for b in self.binaries.values())

    @property
    def theta_rules(self) -> Counter:
        return Counter(r for b in self.binaries.values() for p in (b.plus, b.mirror) for r in p.theta_rule)

    def votes(self, K_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``"ovo-vote"``: votes :math:`V_c(x)` and scores :math:`S_c(x) = \\sum_{j\\ne c} g_{cj}(x)`, each of
        shape ``(rows, k, C)``."""
        if self.rule != "ovo-vote":
            raise ValueError(f"votes are those of the rule 'ovo-vote', not {self.rule!r}")
        first = next(iter(self.binaries.values())).plus
        shape = (K_rows.shape[0], len(first.theta), self.n_classes)
        votes, scores = np.zeros(shape, dtype=int), np.zeros(shape)
        for (i, j), b in self.binaries.items():
            g = b.decision(K_rows)
            votes[..., i] += g >= 0.0
            votes[..., j] += g < 0.0
            scores[..., i] += g
            scores[..., j] -= g
        return votes, scores

    def values(self, K_rows: np.ndarray) -> np.ndarray:
        """``"ovr-maxdist"``: :math:`g_c(x)`, shape ``(rows, k, C)``."""
        if self.rule != "ovr-maxdist":
            raise ValueError(f"the values g_c are those of the rule 'ovr-maxdist', not {self.rule!r}")
        return np.stack([self.binaries[c].decision(K_rows) for c in range(self.n_classes)], axis=-1)

    def predict(self, K_rows: np.ndarray) -> np.ndarray:
        """The class number for each Gram row and each parameter column, shape ``(k, rows)``."""
        if self.rule == "ovr-maxdist":
            return np.argmax(self.values(K_rows), axis=-1).T  # ties: the lowest class
        votes, scores = self.votes(K_rows)
        tied = votes == votes.max(axis=-1, keepdims=True)
        return np.argmax(np.where(tied, scores, -np.inf), axis=-1).T  # then the largest score, then the lowest


def fit_rule(
    rule: str, K: np.ndarray, train: np.ndarray, y_train: np.ndarray, n_classes: int,
    nu: Sequence[float] | np.ndarray, alpha: Sequence[float] | np.ndarray, solver: str = "daqp",
    free_tol: float = FREE_TOL,
) -> RuleFit:
    """Every binary TPMSVM of ``rule`` on the points ``train`` (positions in the Gram matrix ``K``, class
    numbers ``y_train`` in ``0..n_classes-1``), for every :math:`(\\nu_j, \\alpha_j)`.

    ``"ovo-vote"`` solves the surface of every ordered pair (:math:`C(C-1)` QPs per column), ``"ovr-maxdist"``
    those of every class against the rest and back (:math:`2C`); each QP is set up once and re-solved along the
    parameter list (warm starts, :class:`tpm_models.learn.fastqp.ClassDual`).
    """
    if rule not in RULES:
        raise ValueError(f"unknown decision rule {rule!r}; choose one of {RULES}")
    members = [train[y_train == c] for c in range(n_classes)]
    binaries: dict[int | tuple[int, int], BinaryPlanes] = {}
    qps = 0
    if rule == "ovo-vote":
        surfaces = {}
        for i in range(n_classes):
            for j in range(n_classes):
                if i != j:
                    surfaces[i, j], n = surface(K, members[i], members[j], nu, alpha, solver, free_tol)
                    qps += n
        binaries = {(i, j): BinaryPlanes(surfaces[i, j], surfaces[j, i])
                    for i in range(n_classes) for j in range(i + 1, n_classes)}
    else:
        for c in range(n_classes):
            binaries[c], n = fit_binary(K, members[c], train[y_train != c], nu, alpha, solver, free_tol)
            qps += n
    return RuleFit(rule, n_classes, binaries, qps)


def decision_grid_counts(
    X: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray, kernel: Kernel,
    alphas: Sequence[float], ratios: Sequence[float], solver: str = "daqp", free_tol: float = FREE_TOL,
    folds: Sequence[tuple[np.ndarray, np.ndarray]] = (), *, rule: str = "ovo-vote",
) -> GridCounts:
    """:func:`~tpm_models.experiments.table3.grid_counts` for the rule ``rule``: the grid
    :math:`\\alpha \\times \\nu/\\alpha`
    fitted on ``train`` and counted on ``train`` and ``test``; with ``folds`` also fitted on each fold's fit part
    and counted on its held-out part (summed)."""
    K = kernel.gram(X, X)
    alpha = np.repeat(np.asarray(alphas, dtype=float), len(ratios))
    nu = np.tile(np.asarray(ratios, dtype=float), len(alphas)) * alpha
    n_classes = int(y.max()) + 1
    shape = (len(alphas), len(ratios))
    fitted = fit_rule(rule, K, train, y[train], n_classes, nu, alpha, solver, free_tol)
    correct = fitted.predict(K) == y[None, :]
    qps, rules, fallbacks = fitted.qps, fitted.theta_rules, fitted.fallbacks
    cv: np.ndarray | None = None
    if len(folds):
        cv = np.zeros(len(nu), dtype=int)
        for fit, held_out in folds:
            f = fit_rule(rule, K, fit, y[fit], n_classes, nu, alpha, solver, free_tol)
            cv += (f.predict(K[held_out]) == y[None, held_out]).sum(1)
            qps, fallbacks = qps + f.qps, fallbacks + f.fallbacks
            rules.update(f.theta_rules)
        cv = cv.reshape(shape)
    rules[FALLBACK_QPS] = fallbacks
    return GridCounts(correct[:, train].sum(1).reshape(shape), correct[:, test].sum(1).reshape(shape), cv, qps,
                      rules)


# --------------------------------------------------------------------------- classifiers


class _FastRuleClassifier:
    """A rule of :data:`RULES` on the fast path: ``fit(X, y)``, ``predict(X)``; labels of any type
    (``classes_``, sorted, class ``c`` is ``classes_[c]``)."""

    rule = ""

    def __init__(self, nu: float = 0.5, alpha: float = 1.0, kernel: Kernel | None = None, solver: str = "daqp",
                 free_tol: float = FREE_TOL):
        self.nu, self.alpha = check_nu_alpha(nu, alpha)
        self.kernel = kernel or Kernel()
        self.solver = solver
        self.free_tol = free_tol

    def fit(self, X: np.ndarray, y: np.ndarray) -> Self:
        X = check_features(X)
        y = check_labels(X, y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes; y has {self.classes_.tolist()}")
        start = time.perf_counter()
        self.X_ = X
        K = self.kernel.gram(X, X)
        self.fit_ = fit_rule(self.rule, K, np.arange(len(X)), y_idx, len(self.classes_), [self.nu], [self.alpha],
                             self.solver, self.free_tol)
        self.fit_seconds_ = time.perf_counter() - start
        return self

    def _rows(self, X: np.ndarray) -> np.ndarray:
        return self.kernel.gram(check_features(X), self.X_)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The predicted labels (module docstring)."""
        return self.classes_[self.fit_.predict(self._rows(X))[0]]


class OneVsOneTPMSVM(_FastRuleClassifier):
    """Max-voting over one-versus-one binary TPMSVMs (2)-(3)/(12)-(13), decision (8)/(14) per pair (module
    docstring); :meth:`votes` gives :math:`V_c(x)` and :math:`S_c(x)`.

    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.1], [1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> OneVsOneTPMSVM(nu=0.3).fit(X, ["a", "a", "b", "b", "c", "c"]).predict([[0.95, 0.0]]).tolist()
    ['b']
    """

    rule = "ovo-vote"

    def votes(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:math:`V_c(x)` and :math:`S_c(x)`, each of shape ``(len(X), C)``."""
        votes, scores = self.fit_.votes(self._rows(X))
        return votes[:, 0, :], scores[:, 0, :]


class MaxDistanceTPMSVM(_FastRuleClassifier):
    """Max-distance over one-versus-rest binary TPMSVMs (2)-(3)/(12)-(13): :math:`\\arg\\max_c g_c(x)` with
    :math:`g_c` the value of (8)/(14) of class :math:`c` against the rest (module docstring).

    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.1], [1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> MaxDistanceTPMSVM(nu=0.3).fit(X, ["a", "a", "b", "b", "c", "c"]).predict([[0.0, 0.95]]).tolist()
    ['c']
    """

    rule = "ovr-maxdist"

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """:math:`g_c(x)`, shape ``(len(X), C)``; the largest wins."""
        return self.fit_.values(self._rows(X))[:, 0, :]
