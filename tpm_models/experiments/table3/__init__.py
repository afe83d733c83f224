"""Section 5 of the paper: the experiments of Table 3, on the fast path (:mod:`tpm_models.learn.fastqp`).

Protocol (the paper's, exactly):

* the whole data set is min-max scaled to [0, 1] (:func:`tpm_models.data.min_max_scale`);
* ``runs`` random stratified 75% / 25% splits; split ``k`` is
  ``stratified_split(y, split_seed(seed, k), test_size=0.25)``, ``seed`` recorded (default :data:`SEED`);
* grid :math:`\\alpha \\in \\{2^{-8},\\dots,2^{8}\\}` (:data:`ALPHAS`) :math:`\\times` :math:`\\nu/\\alpha \\in
  \\{0.1,\\dots,0.9\\}` (:data:`RATIOS`) :math:`\\times` (:math:`\\gamma` of the inhomogeneous polynomials or
  :math:`\\sigma` of the Gaussian kernel :math:`\\in \\{2^{-4},\\dots,2^{4}\\}`, :data:`KERNEL_PARAMS`), with
  :math:`\\nu_c = \\nu`, :math:`\\alpha_c = \\alpha` for every class; model (19) per class, recovery (20),
  decision (18)/(20);
* the best configuration is the one with the highest **training** accuracy; its test accuracy is the
  split's result; Table 3 gives the mean and the sample standard deviation (``ddof=1``) over the splits.

**A sound protocol beside it** (errata 11; ``Protocol(cv_folds=5)``, CLI ``--selection cv``): the same grid is
also scored by stratified k-fold cross-validation *inside* the training split (folds of split ``k`` seeded by
:func:`~tpm_models.experiments.table3.protocol.cv_seed`): every configuration is fitted on k-1 folds and
counted on the held-out one, the counts
summed over the k folds (every training point is held out once). The configuration with the best
cross-validated accuracy (ties: the same grid-order rules) is then the one fitted on the whole training
split, whose test accuracy is the result. A record of such a run keeps the training, cross-validation and
test counts of every configuration, so both selections (``"train"`` and ``"cv"``) are read from it.

**Grid order and ties** (the paper states no rule). Configurations are ordered :math:`\\alpha` (outer),
then :math:`\\nu/\\alpha`, then the kernel parameter (inner), each ascending. Rule ``first`` takes the first
configuration of that order among those with the best training accuracy, rule ``last`` the last one.
Every record keeps the training and test accuracy of every configuration, so both rules (and any other)
are applied after the fact, without solving again.

**Solving less, exactly** (both verified by tests, both switched off by ``shortcuts=False``):

* errata 7: for fixed :math:`\\nu/\\alpha` the solution is proportional to :math:`\\alpha` and (18)/(20) are
  invariant to that scale, so the 17 values of :math:`\\alpha` give identical predictions. One
  :math:`\\alpha` (:data:`ALPHA_SOLVED` = 1, a grid point) is solved per :math:`\\nu/\\alpha`, and its
  accuracies stand for all 17;
* errata 10: with :math:`k = \\gamma + x^\\top x'` every :math:`\\gamma` term cancels, so "inhom. linear" is
  computed once with the linear kernel and stands for every :math:`\\gamma`.

**Results store.** Every completed (data set, cell, split) is one JSON line with a SHA-256 of its
content (:class:`~tpm_models.experiments.table3.run.Table3Store`, the rules of
:mod:`tpm_models.experiments.store`). A run with ``resume=True`` reuses the records whose key and configuration
match and recomputes the rest; a corrupt or truncated line is set aside and its split recomputed.

**Parallelism.** Splits are independent tasks run by ``joblib.Parallel`` (``n_jobs`` processes). The
same code runs on Dask through joblib's backend mechanism: inside
``joblib.parallel_config(backend="dask")`` with a ``distributed.Client`` (CLI: ``--dask``).

**Modules.** :mod:`~tpm_models.experiments.table3.protocol` (seeds, splits, grid, cells, :class:`Protocol`),
:mod:`~tpm_models.experiments.table3.grid` (one split's grid, its record, the selection),
:mod:`~tpm_models.experiments.table3.run` (the run loop, the store, Dask),
:mod:`~tpm_models.experiments.table3.summary` (summaries, CSV, the terminal table) and
:mod:`~tpm_models.experiments.table3.report` (``table3.md``). Their public names are importable from here.
"""

from tpm_models.experiments.table3.grid import (
    RESULT_FIELDS,
    Selection,
    SplitTask,
    expand,
    grid_counts,
    has_cv,
    run_split,
    select,
    svc_counts,
)
from tpm_models.experiments.table3.protocol import (
    ALL_CELLS,
    ALPHA_SOLVED,
    ALPHAS,
    BASELINES,
    CELLS,
    CV_FOLDS,
    DATASETS,
    DECISIONS,
    KERNEL_PARAMS,
    PAPER_TABLE3,
    RATIOS,
    SEED,
    SELECTIONS,
    STORE_VERSION,
    SVC_C,
    TEST_SIZE,
    TIE_RULES,
    Cell,
    Protocol,
    check_cells,
    check_datasets,
    config_of,
    cv_folds,
    cv_seed,
    dataset_arrays,
    split_indices,
    split_seed,
)
from tpm_models.experiments.table3.report import COLUMN_TITLES, table3_markdown, write_table3
from tpm_models.experiments.table3.run import RunResult, Table3Store, dask_backend, run_table3, run_with_metadata
from tpm_models.experiments.table3.summary import (
    CSV_HEADER,
    PROTOCOLS,
    CellSummary,
    print_summary,
    summarize,
    write_csv,
)

__all__ = [
    "ALL_CELLS", "ALPHA_SOLVED", "ALPHAS", "BASELINES", "CELLS", "COLUMN_TITLES", "CSV_HEADER", "CV_FOLDS",
    "DATASETS", "DECISIONS", "KERNEL_PARAMS", "PAPER_TABLE3", "PROTOCOLS", "RATIOS", "RESULT_FIELDS", "SEED",
    "SELECTIONS", "STORE_VERSION", "SVC_C", "TEST_SIZE", "TIE_RULES", "Cell", "CellSummary", "Protocol",
    "RunResult", "Selection", "SplitTask", "Table3Store", "check_cells", "check_datasets", "config_of", "cv_folds",
    "cv_seed", "dask_backend", "dataset_arrays", "expand", "grid_counts", "has_cv", "print_summary", "run_split",
    "run_table3", "run_with_metadata", "select", "split_indices", "split_seed", "summarize", "svc_counts",
    "table3_markdown", "write_csv", "write_table3",
]
