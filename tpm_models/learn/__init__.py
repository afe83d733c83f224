"""scikit-learn classifiers built on the models (:mod:`.estimators`, :mod:`.robust_kernel`) and the
dense fast paths of the experiments (:mod:`.fastqp` for the QPs of Section 5, :mod:`.fastconic` for (23))."""

from tpm_models.learn.estimators import TPMSVM, RobustTPMSVMOneVsAll, TPMSVMOneVsAll
from tpm_models.learn.robust_kernel import RobustKernelTPMSVMOneVsAll

__all__ = ["TPMSVM", "RobustKernelTPMSVMOneVsAll", "RobustTPMSVMOneVsAll", "TPMSVMOneVsAll"]
