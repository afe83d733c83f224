"""Section 5 and beyond: Table 3 under both selection protocols (:mod:`.table3`), other decision
functions (:mod:`.decisions`), the robust tables (:mod:`.robust`), the protocol ties
(:mod:`.ties`) and the run of every tie (:mod:`.checks_run`), parallel runs (:mod:`.parallel`), the results
store (:mod:`.store`) and what a report records about its run (:mod:`.run_info`). The ``tpm-models`` commands
that run them are in :mod:`tpm_models.cli`; the benchmarks and solver surveys are the repository's ``benchmarks/``.

The names re-exported from :mod:`.table3` are loaded on first access (a module ``__getattr__``, PEP 562), so that
importing one experiment (``tpm_models.experiments.store``) does not import Table 3's stack (scikit-learn,
pandas, the classifiers): a deferred import for load cost, not to dodge a cycle."""

from typing import TYPE_CHECKING

from tpm_models.lazy import lazy_attributes

if TYPE_CHECKING:  # the lazy names below, for type checkers and the architecture test
    from tpm_models.experiments.table3 import Protocol, RunResult, run_table3, summarize, write_table3

_LAZY = {name: "tpm_models.experiments.table3"
         for name in ("Protocol", "RunResult", "run_table3", "summarize", "write_table3")}
"""Names loaded on first access, with their module."""


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)


__all__ = ["Protocol", "RunResult", "run_table3", "summarize", "write_table3"]
