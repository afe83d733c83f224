"""scikit-learn classifiers built on the models (:mod:`.estimators`, :mod:`.robust_kernel`), the
dense fast paths of the experiments (:mod:`.fastqp` for the QPs of Section 5, :mod:`.fastconic` for (23)) and
the scalable path of the estimators (:mod:`.decomposition`: the duals by decomposition, no :math:`m\\times m`
array)."""

from tpm_models.learn.estimators import TPMSVM, RobustTPMSVMOneVsAll, TPMSVMOneVsAll
from tpm_models.learn.robust_kernel import RobustKernelTPMSVMOneVsAll

__all__ = ["TPMSVM", "RobustKernelTPMSVMOneVsAll", "RobustTPMSVMOneVsAll", "TPMSVMOneVsAll"]
