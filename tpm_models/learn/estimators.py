"""scikit-learn classifiers on the paper's models.

=========================  ============================================  ==========================
classifier                  trains (per hyperplane, one solve each)       decides by
=========================  ============================================  ==========================
:class:`TPMSVM`             duals (4)/(5), or (12)/(13) with a kernel;    (8), or (14) with a kernel
                            recovery (6)/(7)
:class:`TPMSVMOneVsAll`     dual (16), or (19) with a kernel, per class;  (18), or (20) with a kernel
                            recovery (17)/(20)
:class:`RobustTPMSVMOneVsAll`  (27)/(28)/(29) for :math:`p=1,2,\\infty`,    (18)
                            (26) otherwise, per class
=========================  ============================================  ==========================

The scikit-learn estimator contract
-----------------------------------
* ``__init__`` takes keyword arguments only and stores them unchanged;
* ``fit(X, y)`` validates the data (2-D, finite, as many labels as rows, a classification
  target) and every parameter (:math:`0<\\nu\\le\\alpha`, errata 6; the kernel's parameters of
  Table 1; :math:`p\\ge1`; :math:`\\varepsilon_i\\ge0`; the solver), raising a ``ValueError``
  that says what to do, then solves and returns ``self``;
* fitted state ends in ``_``: ``classes_`` (the labels, sorted), ``n_features_in_`` and the
  hyperplanes;
* labels may be of any type (strings, non-contiguous integers...): class ``c`` of the paper
  is ``classes_[c]``; for :class:`TPMSVM` the positive class :math:`\\mathcal X_+` (label +1
  of Section 2) is ``classes_[1]`` and the negative class ``classes_[0]``, so labels
  :math:`\\{-1,+1\\}` keep their meaning;
* ``decision_function`` follows scikit-learn: for two classes one value per point, positive
  for ``classes_[1]``; for :math:`C>2` classes one column per class, the largest wins.

:class:`TPMSVM` and :class:`TPMSVMOneVsAll` choose how to solve their duals by size and kernel (``backend="auto"``,
:data:`DENSE_MAX_POINTS`, :data:`LINEAR_DENSE_MAX_POINTS`): with the linear kernel beyond 100 points in the
largest class by :mod:`tpm_models.learn.linear_dual` (``backend="linear-decomposition"``: :math:`w` kept
explicitly, no kernel rows, the same QP and stopping rule as the decomposition's); otherwise up to 100 points per class
from the dense matrices (``backend="dense"``:
:func:`tpm_models.models.shapes.dual_matrices`, the very matrices the builders write, no Pyomo model, solved by
:func:`tpm_models.solvers.solve_matrices`: a backend of the registry that takes a QP in matrix form, PIQP by
default, with the settings and the checks of ``solve()``), beyond that by decomposition
(``backend="decomposition"``:
:mod:`tpm_models.learn.decomposition`, kernel rows on demand, nothing of size :math:`m\\times m`; the same
QP, its KKT gap below :data:`tpm_models.learn.decomposition.GAP_TOL` :math:`\\cdot\\,\\nu\\kappa`);
``backend="pyomo"`` builds the Pyomo dual and solves it through :func:`tpm_models.solvers.dispatch.solve`
with ``solver=`` (``"default"`` picks the default backend of the model's class). The robust
classifier's models (26)-(29) are SOCPs/NLPs and always go through Pyomo. Either way a solve that is
not verified optimal raises :class:`tpm_models.solvers.common.NoOptimalSolutionError` (the decomposition:
:class:`tpm_models.learn.decomposition.DecompositionError`), never returns a classifier.

The one-versus-all classifiers take ``n_jobs`` (scikit-learn's meaning): their classes are independent joblib
tasks (:mod:`tpm_models.learn.class_jobs`), in loky processes, threads or on a Dask cluster
(``joblib.parallel_config(backend="dask")``): the same planes to the last bit as ``n_jobs=1`` on the working-set
paths, and on the dense and Pyomo paths whenever the worker runs BLAS on as many threads as this process (else they
differ by the rounding of a product, about 1e-13).

>>> from tpm_models import load_dataset, min_max_scale
>>> from tpm_models.learn import TPMSVMOneVsAll
>>> d = load_dataset("iris")
>>> clf = TPMSVMOneVsAll(nu=0.3, alpha=1.0).fit(min_max_scale(d.X), d.classes[d.y])
>>> clf.classes_.tolist()
['setosa', 'versicolor', 'virginica']
"""
from tpm_models.learn.base import OneVsAllBase, TPMClassifierBase
from tpm_models.learn.binary import TPMSVM
from tpm_models.learn.one_vs_all import TPMSVMOneVsAll
from tpm_models.learn.parameters import (
    DENSE_MAX_POINTS,
    FIT_BACKENDS,
    LINEAR_DENSE_MAX_POINTS,
    DegenerateHyperplaneWarning,
    degenerate_planes,
    validate_kernel,
    validate_solver,
)
from tpm_models.learn.robust import ROBUST_EQUATION, RobustTPMSVMOneVsAll

__all__ = [
    "DENSE_MAX_POINTS",
    "FIT_BACKENDS",
    "LINEAR_DENSE_MAX_POINTS",
    "ROBUST_EQUATION",
    "DegenerateHyperplaneWarning",
    "OneVsAllBase",
    "RobustTPMSVMOneVsAll",
    "TPMClassifierBase",
    "TPMSVM",
    "TPMSVMOneVsAll",
    "degenerate_planes",
    "validate_kernel",
    "validate_solver",
]
