"""The classifiers' shared base: the data checks of the scikit-learn contract (:class:`TPMClassifierBase`) and
the one-versus-all decision (18)/(20) from per-class distances (:class:`OneVsAllBase`)."""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from tpm_models.lazy import import_optional
from tpm_models.validation import check_features

# scikit-learn is the "learn" extra's: without it, importing an estimator says which extra to install
sklearn_base = import_optional("sklearn.base", "learn", "an estimator of tpm_models.learn")
BaseEstimator: Any = sklearn_base.BaseEstimator  # a class of the optional extra (Any to the type checker)
ClassifierMixin: Any = sklearn_base.ClassifierMixin
sklearn_multiclass = import_optional("sklearn.utils.multiclass", "learn", "an estimator of tpm_models.learn")
check_classification_targets = sklearn_multiclass.check_classification_targets
sklearn_validation = import_optional("sklearn.utils.validation", "learn", "an estimator of tpm_models.learn")
check_is_fitted = sklearn_validation.check_is_fitted
validate_data = sklearn_validation.validate_data

# --------------------------------------------------------------------------- shared base

LABEL_KINDS = "biuU"
"""NumPy dtype kinds (bool, integer, unsigned, str) whose 1-D arrays scikit-learn's ``type_of_target`` calls
``"binary"`` or ``"multiclass"`` in every case: ``fit`` checks the targets (``check_classification_targets``,
which rejects continuous or multi-output ``y``) only for the other kinds (float, object), where the check can
fail (it was the larger part of the data checks of a Wine fit)."""


def plain_fit_arrays(X: object, y: object) -> bool:
    """Whether ``(X, y)`` are inputs that scikit-learn's ``validate_data(est, X, y, dtype=np.float64,
    ensure_all_finite=False, ensure_min_samples=2)`` returns unchanged: exactly ``numpy.ndarray`` (no subclass,
    no data frame), ``X`` 2-D float64 with at least 2 rows and 1 column, ``y`` 1-D of a kind in
    :data:`LABEL_KINDS` (never NaN, never complex) and as long as ``X``. For them that call only sets
    ``n_features_in_`` and removes ``feature_names_in_`` (an array has no column names), which
    :meth:`TPMClassifierBase._validate_fit_data` does itself; every other input goes through ``validate_data``
    (its conversions and its messages). On a Wine fit the call was 0.2 ms, a tenth of the whole fit."""
    return (type(X) is np.ndarray and type(y) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
            and X.shape[0] >= 2 and X.shape[1] >= 1 and y.ndim == 1 and y.dtype.kind in LABEL_KINDS
            and len(y) == X.shape[0])


class TPMClassifierBase(ClassifierMixin, BaseEstimator):
    """Data checks shared by the classifiers (the parameter checks are in
    :mod:`tpm_models.learn.parameters`)."""

    def _validate_fit_data(self, X: object, y: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``X`` as a finite float array, ``classes_`` (sorted) and the class index of every row."""
        points: np.ndarray
        labels: np.ndarray
        if plain_fit_arrays(X, y):  # what validate_data does to them, without its 0.2 ms of generic checks
            points, labels = cast(np.ndarray, X), cast(np.ndarray, y)  # plain_fit_arrays checked they are
            self.n_features_in_ = points.shape[1]
            if hasattr(self, "feature_names_in_"):  # a refit on an array: the names of an earlier fit go
                del self.feature_names_in_
        else:
            points, labels = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=False,
                                           ensure_min_samples=2)
        points = check_features(points)  # our message for NaN / inf: where, and what to do
        if labels.dtype.kind not in LABEL_KINDS:  # 1-D integer, bool or string labels are classes already
            check_classification_targets(labels)
        classes, y_idx = np.unique(labels, return_inverse=True)
        return points, classes, y_idx

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "classes_")  # set last, by a fit that succeeded

    def _validate_predict_data(self, X: object) -> np.ndarray:
        check_is_fitted(self)
        checked = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=False)
        return check_features(checked)


class OneVsAllBase(TPMClassifierBase):
    """Decision (18)/(20) from per-class distances (:meth:`distances`)."""

    @staticmethod
    def _check_classes(classes: np.ndarray, name: str) -> None:
        if len(classes) < 2:
            raise ValueError(
                f"{name} needs at least two classes (one-versus-all needs points outside class c); "
                f"y has 1 class: {classes.tolist()}"
            )

    def distances(self, X: object) -> np.ndarray:
        """Distance to every class's hyperplane, shape ``(n_samples, n_classes)``.

        .. math::
            d_c(x) = \\frac{|\\langle w_c,\\varphi(x)\\rangle + \\theta_c|}{\\sqrt{\\langle w_c,w_c\\rangle}}

        (:math:`\\varphi(x) = x` for the linear models), column ``c`` for ``classes_[c]``;
        :math:`+\\infty` for a degenerate hyperplane (``degenerate_``, :data:`DEGENERATE_TOL`).
        """
        return self._distances(self._validate_predict_data(X))

    def decision_function(self, X: object) -> np.ndarray:
        """Scores of (18)/(20) in scikit-learn's convention.

        For :math:`C > 2` classes: :math:`-d_c(x)`, shape ``(n_samples, n_classes)``; the largest
        value is the predicted class. For two classes: :math:`d_0(x) - d_1(x)`, shape
        ``(n_samples,)``; positive means ``classes_[1]``.
        """
        d = self.distances(X)
        if d.shape[1] > 2:
            return -d
        tie = d[:, 0] == d[:, 1]  # both inf (both degenerate): a tie, 0, not inf - inf = nan
        return np.subtract(d[:, 0], d[:, 1], out=np.zeros(len(d)), where=~tie)

    def predict(self, X: object) -> np.ndarray:
        """(18)/(20): :math:`\\arg\\min_c d_c(x)`, the class of the nearest hyperplane (a tie: the
        first of ``classes_``). A degenerate hyperplane (``degenerate_``) is at distance
        :math:`+\\infty`: its class is never predicted unless every hyperplane is degenerate."""
        nearest = np.argmin(self.distances(X), axis=1)
        return self.classes_[nearest]

    def _distances(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError
