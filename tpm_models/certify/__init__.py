"""The certificate of a solve: the model as written, read on its own, judged at the point a backend loaded.

A layer of its own, below the solve path (:mod:`tpm_models.solvers`) and above the models: it imports nothing of
the solve path (``tests/test_architecture.py`` fails on such an import), so its reading of the rows, the objective
and their gradients (Pyomo's ``LinearRepnVisitor``, ``reverse_ad`` and ``value``, the builders' records, and this
package's own walkers) cannot repeat a misreading of the solve path's. :func:`certify` is what ``solve()`` calls;
the tolerances it judges by are :mod:`tpm_models.certify.tolerances`.
"""

from tpm_models.certify.certificate import Certificate, certify

__all__ = ["Certificate", "certify"]
