"""Section 5 and beyond: Table 3 under both selection protocols (:mod:`.table3`), other decision
functions (:mod:`.decisions`), the robust tables (:mod:`.robust`), the protocol ties
(:mod:`.ties`), parallel runs (:mod:`.parallel`), benchmarks (:mod:`.bench`) and the solver
surveys behind ``docs/solvers.md`` (:mod:`.survey`, :mod:`.robust_survey`, :mod:`.pyros_table`)."""

from tpm_models.experiments.table3 import Protocol, RunResult, run_table3, summarize, write_table3

__all__ = ["Protocol", "RunResult", "run_table3", "summarize", "write_table3"]
