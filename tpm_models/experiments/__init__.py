"""Section 5 and beyond: Table 3 under both selection protocols (:mod:`.table3`), other decision
functions (:mod:`.decisions`), the robust tables (:mod:`.robust`), the protocol ties
(:mod:`.ties`) and the run of every tie (:mod:`.checks_run`), parallel runs (:mod:`.parallel`), the results
store (:mod:`.store`) and what a report records about its run (:mod:`.run_info`), benchmarks (:mod:`.bench`) and
the solver surveys behind ``docs/solvers.md`` (:mod:`.survey`, :mod:`.robust_survey`, :mod:`.conic_survey`,
:mod:`.pyros_table`). The ``tpm-models`` commands that run them are in :mod:`tpm_models.cli`."""

from tpm_models.experiments.table3 import Protocol, RunResult, run_table3, summarize, write_table3

__all__ = ["Protocol", "RunResult", "run_table3", "summarize", "write_table3"]
