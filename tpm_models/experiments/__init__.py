"""Section 5 and beyond: Table 3 under both selection protocols (:mod:`.table3`), other decision
functions (:mod:`.decisions`), the robust tables (:mod:`.robust`), the protocol ties
(:mod:`.ties`) and the run of every tie (:mod:`.checks_run`), parallel runs (:mod:`.parallel`), the results
store (:mod:`.store`) and what a report records about its run (:mod:`.run_info`), benchmarks (:mod:`.bench`) and
the solver surveys behind ``docs/solvers.md`` (:mod:`.survey`, :mod:`.robust_survey`, :mod:`.conic_survey`,
:mod:`.pyros_table`). The ``tpm-models`` commands that run them are in :mod:`tpm_models.cli`.

The names re-exported from :mod:`.table3` are loaded on first access (a module ``__getattr__``, PEP 562), so that
importing one experiment (``tpm_models.experiments.bench_scale``) does not import Table 3's stack (scikit-learn,
pandas, the classifiers): a deferred import for load cost (issue 24), not to dodge a cycle."""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the lazy names below, for type checkers and the architecture test
    from tpm_models.experiments.table3 import Protocol, RunResult, run_table3, summarize, write_table3

_LAZY = {name: "tpm_models.experiments.table3"
         for name in ("Protocol", "RunResult", "run_table3", "summarize", "write_table3")}
"""Names loaded on first access, with their module."""


def __getattr__(name: str) -> object:
    """The lazy names of :data:`_LAZY`, imported on first access (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["Protocol", "RunResult", "run_table3", "summarize", "write_table3"]
