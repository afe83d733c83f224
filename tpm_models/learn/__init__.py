"""scikit-learn classifiers built on the models (:mod:`.estimators`, :mod:`.robust_kernel`) and the
dense fast path of the Section 5 experiments (:mod:`.fastqp`)."""

from tpm_models.learn.estimators import TPMSVM, RobustTPMSVMOneVsAll, TPMSVMOneVsAll
from tpm_models.learn.robust_kernel import RobustKernelTPMSVMOneVsAll

__all__ = ["TPMSVM", "RobustKernelTPMSVMOneVsAll", "RobustTPMSVMOneVsAll", "TPMSVMOneVsAll"]
