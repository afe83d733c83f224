"""The settings of the Clarabel backend: one frozen :class:`ClarabelSettings` for the pipeline (its reductions, its
runs' tolerances, its retry policy, its polish), and :func:`clarabel_options`, the settings of one Clarabel run
(Clarabel's ``DefaultSettings`` names) made from it. Why each value: ``docs/solvers.md``, "Clarabel's settings", and
``docs/bench-scale.md`` (the measurements at scale).

A user's ``options=`` of ``solve(model, "clarabel", options=...)`` are Clarabel's own settings, over these, for
every run; a :class:`ClarabelSettings` given there as ``options["settings"]`` replaces :data:`DEFAULT_SETTINGS`
(:func:`split_options`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tpm_models.solvers.common import Termination
from tpm_models.solvers.cones import Cone, ConeKind


@dataclass(frozen=True)
class ClarabelSettings:
    """The Clarabel backend's pipeline settings (module docstring); each field's contract below."""

    ladder: tuple[float, ...] = (1e-12, 1e-10, 1e-8)
    """The tolerance of each run in turn (gap, feasibility, infeasibility), while a run ends neither ``Solved`` nor
    with a point taken; the first is the one most models need, the last Clarabel's default."""
    soc_ladder: tuple[float, ...] = (1e-12,)
    """The runs before the rescue on a program whose power cones are written as second-order cones up front
    (:attr:`pow_as_soc_columns`): the later tolerances stop short there too, so they are skipped."""
    feas_tol: float = 1e-9
    """Clarabel's ``tol_feas`` on a program without power cones (its first run stops no later than a tighter one)."""
    apex_gap_tol: float = 1e-13
    """The duality gap asked on a program whose power cones are written as second-order cones: an optimum at the
    cones' apex is not polished, so its gap must stay under the certificate's floor (1e-12)."""
    accept_tol: float = 1e-8
    """An ``AlmostSolved`` point that meets this by Clarabel's own tests (:func:`~tpm_models.solvers.clarabel_runs.
    meets`) is taken as optimal; also the tolerance of the rescue run."""
    refine_tol: float = 1e-15
    """Clarabel's iterative refinement (relative and absolute) below :attr:`refine_large` columns: the small robust
    models end ``Solved`` only with it."""
    refine_large: int = 10_000
    """From this many columns on, Clarabel's own refinement (faster, the same optimum)."""
    ktratio_tol: float = 1e-7
    """Clarabel's ``tol_ktratio``: under it a point is optimal, not a certificate of infeasibility."""
    static_reg: float = 1e-9
    """Clarabel's ``static_regularization_constant`` of every run but the rescue."""
    rescue_reg: float = 1e-7
    """The static regularisation of the rescue run, made when every run of the ladder failed."""
    max_iter: int = 500
    """Clarabel's iteration cap (this library's models need fewer than 50)."""
    last_resort_tol: float = 1e-6
    """When no run meets :attr:`accept_tol`, the best ``AlmostSolved`` point within this (residuals and relative
    gap) is taken and judged by the model's certificate (only where there is one)."""
    polish_almost_tol: float = 1e-6
    """An ``AlmostSolved`` point short of :attr:`accept_tol` whose residuals are within this is polished before the
    next run; taken when the polish is accepted (only where a certificate judges it)."""
    polish_almost_accept: float = 1e-8
    """The largest KKT residual of that polish: the 1e-8 Clarabel's point failed (a ``Solved`` point's polish asks
    :data:`~tpm_models.solvers.polish.POLISH_ACCEPT`)."""
    polish: bool = True
    """Polish every optimal point (:func:`~tpm_models.solvers.polish.polish`): Clarabel's :math:`w` is off by about
    the square root of its gap where the objective is a cone."""
    last_resort_polish: bool = True
    """When no point is taken otherwise, polish the ``AlmostSolved`` point of least residuals once more, accepted at
    :attr:`last_resort_tol`, for the certificate to judge."""
    pin: bool = True
    """The polish pins the columns of active bounds at scale (:func:`~tpm_models.solvers.polish.polish`'s ``pin``):
    a Newton system of a third of the unknowns, the same point."""
    merge_columns: bool = True
    """Run on the program with its rank-one column blocks merged (:class:`~tpm_models.solvers.reductions.
    MergeColumns`): fewer entries per margin row, a much cheaper factorisation."""
    drop_implied_bounds: bool = True
    """Leave out the implied bound rows (:class:`~tpm_models.solvers.reductions.DropImpliedBounds`) when the power
    cones are written as second-order cones up front: their multipliers are not unique."""
    pow_as_soc_columns: int = 2_000
    """From this many columns on, power cones are written as second-order cones before the first run (Clarabel's
    power cones fail at that size); below, only after a run on them failed."""
    forget_rows_large: int = 250_000
    """From this many rows on, the model's rows as read are let go before the run (the certificate reads them
    again): a lower peak of memory at :math:`10^6` points."""


DEFAULT_SETTINGS = ClarabelSettings()
"""The settings of ``solve(model, "clarabel")`` unless ``options["settings"]`` says otherwise."""


def split_options(options: dict | None) -> tuple[ClarabelSettings, dict]:
    """``options`` as the pipeline's settings (``options["settings"]``, else :data:`DEFAULT_SETTINGS`) and Clarabel's
    own (the rest)."""
    rest = dict(options or {})
    settings = rest.pop("settings", DEFAULT_SETTINGS)
    if not isinstance(settings, ClarabelSettings):
        raise TypeError(f"options['settings'] must be a ClarabelSettings, not {type(settings).__name__}")
    return settings, rest


def clarabel_options(settings: ClarabelSettings, tol: float, columns: int = 0, feas_tol: float | None = None,
                     gap_tol: float | None = None, reg: float | None = None, time_limit: float | None = None,
                     options: dict | None = None) -> dict:
    """Clarabel's settings of one run at tolerance ``tol`` on a program of ``columns`` columns (0: always
    :attr:`~ClarabelSettings.refine_tol`), then ``time_limit`` and the user's ``options`` over them. ``feas_tol``: a
    looser ``tol_feas`` (``None``: ``tol``); ``gap_tol``: a tighter duality gap (``None``: ``tol``); ``reg``: the
    static regularisation (``None``: :attr:`~ClarabelSettings.static_reg`)."""
    gap = tol if gap_tol is None else min(tol, gap_tol)
    out = {"verbose": False, "tol_gap_abs": gap, "tol_gap_rel": gap,
           "tol_feas": tol if feas_tol is None else max(tol, feas_tol), "tol_infeas_abs": tol,
           "tol_infeas_rel": tol, "tol_ktratio": settings.ktratio_tol,
           "static_regularization_constant": settings.static_reg if reg is None else reg,
           "max_iter": settings.max_iter}
    if columns < settings.refine_large:
        out["iterative_refinement_reltol"] = out["iterative_refinement_abstol"] = settings.refine_tol
    if time_limit is not None:
        out["time_limit"] = float(time_limit)
    return {**out, **(options or {})}


def clarabel_cones(cones: Sequence[Cone]) -> list[Any]:
    """Clarabel's cone objects of the :class:`~tpm_models.solvers.cones.Cone` s ``cones``, in their order."""
    import clarabel  # an optional extra: imported when a run is made

    made = {ConeKind.ZERO: lambda c: clarabel.ZeroConeT(c.dim),
            ConeKind.NONNEG: lambda c: clarabel.NonnegativeConeT(c.dim),
            ConeKind.SOC: lambda c: clarabel.SecondOrderConeT(c.dim),
            ConeKind.POW: lambda c: clarabel.PowerConeT(c.alpha)}
    unknown = sorted({str(c.kind) for c in cones} - made.keys())
    if unknown:
        raise ValueError(f"unknown cone kind(s) {unknown}")
    return [made[c.kind](c) for c in cones]


CLARABEL_STATUS = {
    "Solved": Termination.OPTIMAL,
    # "AlmostSolved" met only Clarabel's reduced tolerances (5e-5): deliberately not optimal
    "AlmostSolved": Termination.NUMERICAL_ERROR,
    "PrimalInfeasible": Termination.INFEASIBLE,
    "DualInfeasible": Termination.INFEASIBLE_OR_UNBOUNDED,  # a ray of the dual's infeasibility: unbounded if feasible
    "AlmostPrimalInfeasible": Termination.NUMERICAL_ERROR,
    "AlmostDualInfeasible": Termination.NUMERICAL_ERROR,
    "MaxIterations": Termination.ITERATION_LIMIT,
    "MaxTime": Termination.TIME_LIMIT,
    "NumericalError": Termination.NUMERICAL_ERROR,
    "InsufficientProgress": Termination.NUMERICAL_ERROR,
}
"""Clarabel's ``SolverStatus`` (by name) -> :class:`Termination`; any other status is ``ERROR``."""
