"""Verify a robust counterpart against its semi-infinite model: Theorem 1, for any model.

Theorem 1 says that the semi-infinite model (22) and the finite model (23) have the same
optimum. This package checks such a claim numerically for a model it is *told about*, not one
it builds: the user gives

* a **nominal** Pyomo model (one active objective, minimised);
* its **uncertain data**, as a list of :class:`UncertainRow` and :class:`UncertainTerm`. Both
  say "this part of the model is affine in a data vector :math:`d` that is perturbed to
  :math:`d+\\delta`, :math:`\\delta\\in\\mathcal U`", and give the coefficient vector
  :math:`a(x)` of :math:`\\delta` (Pyomo variables or linear expressions of them). For the paper's
  rows :math:`(x^i+\\delta^i)^\\top w + \\theta + \\xi_i \\ge 0`, :math:`d = x^i` and :math:`a(x) = w`:

  - an :class:`UncertainRow` is an inequality row whose body becomes
    :math:`\\mathrm{body}(x) + a(x)^\\top\\delta` and must hold for every :math:`\\delta\\in\\mathcal U`
    (the rows of (22));
  - an :class:`UncertainTerm` adds :math:`\\max_{\\delta\\in\\mathcal U} \\omega\\,a(x)^\\top\\delta` to the
    objective (the inner maxima of (22): :math:`\\omega = \\nu_c/m_{-c}`);
* an **uncertainty set** per row or term: :class:`NormBall` (the set (21),
  :math:`\\|\\delta\\|_p\\le\\varepsilon_i`, any :math:`p\\ge1`), :class:`Box`, :class:`Ellipsoid`,
  :class:`Polyhedron`, :class:`Budget`;
* the **counterpart**: another Pyomo model, and the map of the first-stage variables between
  the two (by component name: ``{"w": "w", "theta": "theta", "xi": "xi"}``; by default every
  variable of the nominal model, by its own name).

:func:`verify` then solves the semi-infinite model itself, by one of two independent routes,

(a) **cutting planes** (:func:`solve_cutting_planes`, :mod:`tpm_models.checks.verify.cutting_planes`): masters
    are the nominal model over finite scenario sets, solved by :func:`tpm_models.solvers.solve`; the separation is
    exact, by the support function of the set. For a norm ball it is the closed form (25)
    generalised: :math:`\\max_{\\|\\delta\\|_p\\le\\varepsilon} g^\\top\\delta = \\varepsilon\\|g\\|_{p'}`,
    :math:`1/p+1/p'=1`, attained at :func:`tpm_models.models.norms.worst_case_delta`; the worst
    :math:`\\delta` of a row :math:`a^\\top(x+\\delta)\\ge b` is the one that gives
    :math:`a^\\top x - \\varepsilon\\|a\\|_{p'}`;
(b) **PyROS** (:func:`solve_pyros`, :mod:`tpm_models.checks.verify.pyros`), with the matching PyROS set (box,
    axis-aligned ellipsoid for :math:`p=2`, the cross-polytope as a budget set for :math:`p=1`,
    ellipsoid, polyhedron, cardinality set); its verdict must be ``robust_optimal``,

and compares: both optimal values and their relative gap, the distance between the first-stage
solutions, the worst violation of the counterpart's solution over the uncertainty set with the
violating :math:`\\delta`, and the semi-infinite objective at the counterpart's solution against
the counterpart's own objective value. The verdict (:attr:`Verification.verified`) holds the
numbers to the named tolerances below. When the counterpart is too conservative (it excludes
robust points), no :math:`\\delta` violates its solution; the witness is then the semi-infinite
optimum, handed to the counterpart with the first-stage variables fixed
(:attr:`Verification.witness`).

Objective residuals are :math:`|a-b|/\\max(|a|,|b|,S)` (:func:`tpm_models.solvers.compare.rel_gap`), :math:`S`
the sum of the absolute values of the objective's terms (:func:`tpm_models.solvers.compare.objective_scale`).

=====================  =================================================================================
module                 holds
=====================  =================================================================================
``model``              the semi-infinite model (:class:`SemiInfinite`, its rows and terms as typed
                       records), the exact evaluation of a point, :class:`SemiInfiniteSolution`
``cutting_planes``     route (a): :func:`solve_cutting_planes`, each separation a :class:`Cut`
``pyros``              route (b): :func:`solve_pyros`, PyROS's subsolvers, backups and tolerances
``report``             :class:`Verification`, the three verdicts and the table ``tpm-models verify`` prints
``verdict``            :func:`verify_counterpart`, :func:`verify_model`, :func:`verify` and their tolerances
=====================  =================================================================================

The uncertainty sets and declarations (:class:`NormBall`, :class:`UncertainRow`, ...) live in the models layer
(:mod:`tpm_models.models.uncertainty`) and are re-exported here. ``from tpm_models.checks import verify`` gives the
function :func:`verify` (see :mod:`tpm_models.checks`); this package stays importable by its full name
(``from tpm_models.checks.verify import NormBall``).
"""

from tpm_models.checks.verify.cutting_planes import (
    CUT_TOL,
    MASTER_LARGE,
    MASTER_OPTIONS,
    MAX_ROUNDS,
    Cut,
    master_fallback,
    master_large_solvers,
    master_options,
    master_solvers,
    solve_cutting_planes,
    solve_master,
)
from tpm_models.checks.verify.model import (
    Evaluation,
    Round,
    RowOnClone,
    SemiInfinite,
    SemiInfiniteSolution,
    TermOnClone,
    body_value,
    evaluate_point,
    failure_summary,
    row_with,
    scenario_sum,
)
from tpm_models.checks.verify.pyros import (
    GUROBI_BACKUP_OPTIONS,
    PYROS_FEASIBILITY_TOL,
    PYROS_SETTINGS,
    PYROS_SUBSOLVER_NAMES,
    SCIP_LP_RETRY_FACTOR,
    SCIP_PYROS_FEASIBILITY_TOL,
    SCIP_PYROS_OPTIONS,
    SOPLEX_MIN_TOL,
    DropTimeAdjustmentWarning,
    PyrosSettings,
    counting,
    free_pyros_subsolvers,
    is_licence_refusal,
    pyros_logger,
    pyros_options,
    pyros_settings,
    pyros_subsolver,
    pyros_subsolvers,
    pyros_with_fallback,
    settings_of,
    solve_pyros,
    subsolver_available,
)
from tpm_models.checks.verify.report import NOT_A_COUNTERPART, UNDECIDED, VERDICTS, VERIFIED, Verification
from tpm_models.checks.verify.verdict import (
    OBJECTIVE_ATOL,
    OBJECTIVE_TOL,
    SOLUTION_TOL,
    VIOLATION_TOL,
    first_stage,
    uncertain_data,
    verify,
    verify_counterpart,
    verify_model,
    witness_at,
)
from tpm_models.models.uncertainty import (
    Box,
    Budget,
    Ellipsoid,
    NormBall,
    Polyhedron,
    SymmetricBudget,
    Uncertain,
    UncertainRow,
    UncertainTerm,
    UncertaintySet,
)
from tpm_models.solvers.compare import objective_scale, rel_gap

__all__ = [
    "CUT_TOL", "GUROBI_BACKUP_OPTIONS", "MASTER_LARGE", "MASTER_OPTIONS", "MAX_ROUNDS", "NOT_A_COUNTERPART",
    "OBJECTIVE_ATOL", "OBJECTIVE_TOL", "PYROS_FEASIBILITY_TOL", "PYROS_SETTINGS", "PYROS_SUBSOLVER_NAMES",
    "PyrosSettings",
    "SCIP_LP_RETRY_FACTOR", "SCIP_PYROS_FEASIBILITY_TOL", "SCIP_PYROS_OPTIONS", "SOLUTION_TOL", "SOPLEX_MIN_TOL",
    "UNDECIDED", "VERDICTS", "VERIFIED", "VIOLATION_TOL",
    "Box", "Budget", "Cut", "DropTimeAdjustmentWarning", "Ellipsoid", "Evaluation", "NormBall", "Polyhedron", "Round",
    "RowOnClone", "SemiInfinite", "SemiInfiniteSolution", "TermOnClone", "Uncertain", "UncertainRow",
    "UncertainTerm", "UncertaintySet", "Verification",
    "body_value", "counting", "evaluate_point", "failure_summary", "first_stage", "free_pyros_subsolvers",
    "is_licence_refusal", "master_fallback", "master_large_solvers", "master_options", "master_solvers",
    "objective_scale", "pyros_logger", "pyros_options", "pyros_settings", "pyros_subsolver", "pyros_subsolvers",
    "pyros_with_fallback", "rel_gap", "row_with", "settings_of", "subsolver_available",
    "scenario_sum", "solve_cutting_planes", "solve_master", "solve_pyros", "uncertain_data", "verify",
    "verify_counterpart", "verify_model", "witness_at", "SymmetricBudget",
]
