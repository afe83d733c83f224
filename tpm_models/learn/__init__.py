"""scikit-learn classifiers built on the models (:mod:`.estimators`, :mod:`.robust_kernel`), the
dense fast paths of the experiments (:mod:`.fastqp` for the QPs of Section 5, :mod:`.fastconic` for (23)) and
the scalable path of the estimators (:mod:`.decomposition`: the duals by decomposition, no :math:`m\\times m`
array).

The classifiers are loaded on first access (a module ``__getattr__``, PEP 562), so that importing a module of this
package that does not need scikit-learn (:mod:`.fastqp`, :mod:`.fastconic`) does not import it: a deferred import
for load cost, not to dodge a cycle."""

from typing import TYPE_CHECKING

from tpm_models.lazy import lazy_attributes

if TYPE_CHECKING:  # the lazy names below, for type checkers and the architecture test
    from tpm_models.learn.estimators import TPMSVM, RobustTPMSVMOneVsAll, TPMSVMOneVsAll
    from tpm_models.learn.robust_kernel import RobustKernelTPMSVMOneVsAll

_LAZY = {
    "TPMSVM": "tpm_models.learn.estimators",
    "TPMSVMOneVsAll": "tpm_models.learn.estimators",
    "RobustTPMSVMOneVsAll": "tpm_models.learn.estimators",
    "RobustKernelTPMSVMOneVsAll": "tpm_models.learn.robust_kernel",
}
"""Names loaded on first access, with their module."""


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)


__all__ = ["TPMSVM", "RobustKernelTPMSVMOneVsAll", "RobustTPMSVMOneVsAll", "TPMSVMOneVsAll"]
