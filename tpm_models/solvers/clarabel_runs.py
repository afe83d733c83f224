"""Clarabel on a conic program (:class:`~tpm_models.solvers.reductions.ConicProgram`): its settings
(:class:`ClarabelSettings`), one run (:class:`Runner`, through the solve's :class:`~tpm_models.solvers.reductions.Chain`
of reductions), the retry policy (:class:`RetryPolicy`) and the polish of its points (:class:`Polisher`); each step and
setting: ``docs/solvers.md``, "The backend's pipeline" and "Clarabel's settings".

Two entries: :func:`pipeline_solve`, the pipeline of ``solve(model, "clarabel")`` on a model's conic form, and
:func:`clarabel_solve`, the retry policy on a program given as matrices, no certificate judging its point (the
estimators' :mod:`tpm_models.learn.fastconic`, and the tests).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import scipy.sparse as sp

from tpm_models.certify.tolerances import GAP_FLOOR
from tpm_models.solvers.common import Termination
from tpm_models.solvers.cones import Cone, ConeKind
from tpm_models.solvers.polish import Polished, polish
from tpm_models.solvers.powsoc import DropImpliedBounds, PowAsSoc, rational
from tpm_models.solvers.reductions import Chain, ConicProgram, ConicSolution, Reduction


@dataclass(frozen=True)
class ClarabelSettings:
    """The settings of the Clarabel backend's pipeline, given as ``solve(model, "clarabel", options={"settings":
    ClarabelSettings(...)})`` (why each value: ``docs/solvers.md``, "Clarabel's settings")."""

    ladder: tuple[float, ...] = (1e-12, 1e-10, 1e-8)
    """The tolerance (gap, feasibility, infeasibility) of each run in turn, until one ends with a point taken."""
    soc_ladder: tuple[float, ...] = (1e-12,)
    """The runs before the rescue on a program whose power cones are written as second-order cones up front."""
    feas_tol: float = 1e-9
    """Clarabel's ``tol_feas`` on a program without power cones."""
    apex_gap_tol: float = 1e-13
    """The duality gap asked on a program whose power cones are written as second-order cones (an optimum at their
    apex is not polished: its gap must stay under the certificate's floor, 1e-12)."""
    accept_tol: float = 1e-8
    """An ``AlmostSolved`` point that meets this by Clarabel's own tests (:func:`meets`) is taken as optimal; also
    the tolerance of the rescue run."""
    refine_tol: float = 1e-15
    """Clarabel's iterative refinement (relative and absolute) below :attr:`refine_large` columns."""
    refine_large: int = 10_000
    """From this many columns on, Clarabel's own refinement."""
    ktratio_tol: float = 1e-7
    """Clarabel's ``tol_ktratio``: under it a point is optimal, not a certificate of infeasibility."""
    static_reg: float = 1e-9
    """Clarabel's ``static_regularization_constant`` of every run but the rescue."""
    rescue_reg: float = 1e-7
    """The static regularisation of the rescue run, made when every run of the ladder failed."""
    max_iter: int = 500
    """Clarabel's iteration cap."""
    last_resort_tol: float = 1e-6
    """When no run meets :attr:`accept_tol`, the best ``AlmostSolved`` point within this (residuals and relative
    gap) is taken, for the model's certificate to judge (only where there is one)."""
    polish_almost_tol: float = 1e-6
    """An ``AlmostSolved`` point short of :attr:`accept_tol` with residuals within this is polished before the next
    run, and taken when the polish is accepted (only where a certificate judges it)."""
    polish_almost_accept: float = 1e-8
    """The largest KKT residual of that polish."""
    polish: bool = True
    """Polish every optimal point (:func:`~tpm_models.solvers.polish.polish`)."""
    last_resort_polish: bool = True
    """When no point is taken otherwise, polish the ``AlmostSolved`` point of least residuals, accepted at
    :attr:`last_resort_tol`, for the certificate to judge."""
    pin: bool = True
    """The polish pins the columns of active bounds at scale (:func:`~tpm_models.solvers.polish.polish`'s ``pin``)."""
    merge_columns: bool = True
    """Run on the program with its rank-one column blocks merged (:class:`~.reductions.MergeColumns`)."""
    drop_implied_bounds: bool = True
    """Leave out the implied bound rows (:class:`~.powsoc.DropImpliedBounds`) when the power cones are
    written as second-order cones up front."""
    pow_as_soc_columns: int = 2_000
    """From this many columns on, the power cones are written as second-order cones before the first run; below,
    only after a run on them failed."""
    forget_rows_large: int = 250_000
    """From this many rows on, the model's rows as read are let go before the run (the certificate reads them
    again)."""


DEFAULT_SETTINGS = ClarabelSettings()
"""The settings of ``solve(model, "clarabel")`` unless ``options["settings"]`` says otherwise."""


def split_options(options: dict | None) -> tuple[ClarabelSettings, dict]:
    """``options`` of ``solve(model, "clarabel", options=...)`` as the pipeline's settings (``options["settings"]``,
    else :data:`DEFAULT_SETTINGS`) and Clarabel's own (the rest, over the pipeline's in every run)."""
    rest = dict(options or {})
    settings = rest.pop("settings", DEFAULT_SETTINGS)
    if not isinstance(settings, ClarabelSettings):
        raise TypeError(f"options['settings'] must be a ClarabelSettings, not {type(settings).__name__}")
    return settings, rest


def clarabel_options(settings: ClarabelSettings, tol: float, columns: int = 0, feas_tol: float | None = None,
                     gap_tol: float | None = None, reg: float | None = None, time_limit: float | None = None,
                     options: dict | None = None) -> dict:
    """Clarabel's settings (``DefaultSettings`` names) of one run at tolerance ``tol`` on a program of ``columns``
    columns (0: always :attr:`~ClarabelSettings.refine_tol`), ``time_limit`` and the user's ``options`` over them.
    ``feas_tol``: a looser ``tol_feas``; ``gap_tol``: a tighter gap; ``reg``: the static regularisation (each
    ``None``: ``tol``, ``tol``, :attr:`~ClarabelSettings.static_reg`)."""
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
    return [made[c.kind](c) for c in cones]  # a Cone's kind is one of these (Cone's check)


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

STOPS = ("PrimalInfeasible", "DualInfeasible", "MaxTime")
"""Clarabel's statuses after which no other run is made."""


@dataclass(frozen=True)
class Attempt:
    """One Clarabel run: its point mapped back to the program given (:class:`Runner`) and Clarabel's readings."""

    point: ConicSolution
    status: str
    tol: float
    iterations: int
    obj_val: float
    obj_val_dual: float
    r_prim: float
    r_dual: float
    rescue: bool = False


def meets(attempt: Attempt, tol: float) -> bool:
    """Whether a run's point is taken as optimal at ``tol``: ``Solved``, or ``AlmostSolved`` and meeting ``tol`` by
    Clarabel's own tests (the duality gap, absolute or relative to ``max(1, min(|primal|, |dual|))``, and its scaled
    primal and dual residuals)."""
    if attempt.status == "Solved":
        return True
    p, d = float(attempt.obj_val), float(attempt.obj_val_dual)
    if attempt.status != "AlmostSolved" or not (np.isfinite(p) and np.isfinite(d)):
        return False
    gap = abs(p - d)
    return (gap <= tol or gap <= tol * max(1.0, min(abs(p), abs(d)))) and max(attempt.r_prim, attempt.r_dual) <= tol


def almost_residuals(attempt: Attempt) -> float | None:
    """The larger of Clarabel's scaled primal and dual residuals of an ``AlmostSolved`` point with finite objectives,
    else ``None``: the gate of the polish of such a point, which mends the gap."""
    p, d = float(attempt.obj_val), float(attempt.obj_val_dual)
    if str(attempt.status) != "AlmostSolved" or not (np.isfinite(p) and np.isfinite(d)):
        return None
    residual = max(float(attempt.r_prim), float(attempt.r_dual))
    return residual if np.isfinite(residual) else None


def almost_residual(attempt: Attempt) -> float | None:
    """:func:`almost_residuals` and the duality gap relative to the objective (0 at or below the certificate's
    ``GAP_FLOOR``): the measure of the last resort."""
    residuals = almost_residuals(attempt)
    if residuals is None:
        return None
    p, d = float(attempt.obj_val), float(attempt.obj_val_dual)
    gap = abs(p - d)
    return max(residuals, 0.0 if gap <= GAP_FLOOR else gap / max(abs(p), abs(d)))


class Runner:
    """Clarabel's runs on ``chain``'s program, each point mapped back through it to the program given.
    ``columns``: the size that picks the iterative refinement (0: always ``refine_tol``)."""

    def __init__(self, chain: Chain, settings: ClarabelSettings, time_limit: float | None = None,
                 options: dict | None = None, columns: int = 0):
        self.chain, self.settings, self.time_limit, self.options, self.columns = \
            chain, settings, time_limit, options, columns

    def __call__(self, tol: float, feas_tol: float | None = None, gap_tol: float | None = None,
                 rescue: bool = False) -> Attempt:
        import clarabel  # an optional extra: imported when a run is made

        settings = clarabel.DefaultSettings()
        reg = self.settings.rescue_reg if rescue else None
        for key, value in clarabel_options(self.settings, tol, self.columns, feas_tol, gap_tol, reg,
                                           self.time_limit, self.options).items():
            if not hasattr(settings, key):
                raise ValueError(f"Clarabel has no setting {key!r} (clarabel.DefaultSettings)")
            setattr(settings, key, value)
        run = self.chain.run_program()
        solver = clarabel.DefaultSolver(run.P, run.q, run.A, run.b, clarabel_cones(run.cones), settings)
        del run
        out = solver.solve()
        return Attempt(self.chain.back(out.x, out.s, out.z), str(out.status), tol, int(out.iterations),
                       float(out.obj_val), float(out.obj_val_dual), float(out.r_prim), float(out.r_dual), rescue)


class Polisher:
    """The polish of a point of ``program`` (the program given, before the reductions): :meth:`polish` for an
    ``AlmostSolved`` point short of the accepted tolerance, :meth:`optimal` for an optimal one. ``short_attempts``:
    the Newton runs of the ladder's polish of a point short (``None``: the polish's own limit). ``keep_own``: why an
    optimal point is kept as Clarabel's, not polished, or ``None`` (the backend's test at the power cones' apex)."""

    def __init__(self, program: ConicProgram, settings: ClarabelSettings = DEFAULT_SETTINGS,
                 short_attempts: int | None = None, keep_own: Callable[[ConicSolution], str | None] | None = None):
        self.program, self.settings, self.short_attempts, self.keep_own = program, settings, short_attempts, keep_own

    def polish(self, point: ConicSolution, accept: float | None = None, attempts: int | None = None) -> Polished:
        """:func:`~tpm_models.solvers.polish.polish` of ``point`` on :attr:`program`."""
        p = self.program
        kwargs = {} if accept is None else {"accept": accept}
        return polish(p.P, p.q, p.A, p.b, p.cones, point.x, point.s, point.z, attempts=attempts,
                      pin=self.settings.pin, **kwargs)

    def optimal(self, point: ConicSolution) -> Polished:
        """The polish of an optimal point, unless ``keep_own`` gives a reason not to make it."""
        reason = None if self.keep_own is None else self.keep_own(point)
        if reason is not None:
            return Polished(point.x, point.z, False, math.nan, math.nan, reason)
        return self.polish(point)


@dataclass
class ClarabelRun:
    """What :class:`RetryPolicy` returns: the point (polished when ``polished.accepted``) and how it was found."""

    x: np.ndarray
    s: np.ndarray
    z: np.ndarray
    status: str
    """Clarabel's status, or ``"Solved"`` for a point taken as optimal."""
    raw_status: str
    tol: float
    iterations: int
    obj_val: float
    obj_val_dual: float
    r_dual: float
    settings: ClarabelSettings
    polished: Polished | None = None
    interior: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    """Clarabel's own ``(x, s, z)`` when ``x``, ``s``, ``z`` are polished (``s = b - Ax`` then)."""
    rescued: bool = False
    last_resort: float | None = None
    """The residual of the best ``AlmostSolved`` point, taken under ``last_resort_tol``."""
    last_polished: float | None = None
    """The KKT residual of the polished ``AlmostSolved`` point taken as the last resort."""
    note: str = ""
    """What the runs were on (the merged columns, the reductions), for the message."""

    def take(self, polished: Polished, program: ConicProgram) -> None:
        """Use ``polished`` (a point of ``program``) when it is accepted."""
        self.polished = polished
        if polished.accepted:
            self.interior = (self.x, self.s, self.z)
            self.x, self.z = polished.x, polished.z
            self.s = program.b - program.A @ self.x

    def unpolish(self, why: str) -> None:
        """Go back to Clarabel's own point (the polished one failed a later test, ``why``)."""
        if self.interior is not None and self.polished is not None:
            self.x, self.s, self.z = self.interior
            self.polished.accepted = False
            self.polished.reason = why
            self.interior = None

    @property
    def message(self) -> str:
        text = f"{self.status} in {self.iterations} iterations at {self.tol:g} ({self.raw_status})"
        accept, last = self.settings.accept_tol, self.settings.last_resort_tol
        if self.rescued:
            text += f" with static regularisation {self.settings.rescue_reg:g}"
        if self.last_polished is not None:
            text += (f"; no run met {accept:g}: the point of least residuals polished to a KKT residual "
                     f"of {self.last_polished:.1e} <= {last:g}, judged by the model's certificate")
        if self.last_resort is not None:
            text += (f"; no run met {accept:g}: the best point, residuals {self.last_resort:.1e} <= "
                     f"{last:g}, judged by the model's certificate")
        if self.polished is not None:
            text += ("; polished: " if self.polished.accepted else "; not polished: ") + self.polished.reason
        return text + self.note


@dataclass(frozen=True)
class RunPlan:
    """What the retry policy asks of the runs on one program. ``ladder``: the tolerances before the rescue;
    ``feas_tol``, ``gap_tol``: :func:`clarabel_options`'s, for those runs; ``judged``: a certificate judges the point
    (so a point short of ``accept_tol`` may be taken: the last resort); ``polish_short``: with ``judged``, a point
    short of it may be polished and taken."""

    ladder: tuple[float, ...]
    feas_tol: float | None = None
    gap_tol: float | None = None
    judged: bool = False
    polish_short: bool = False


class RetryPolicy:
    """The runs of one solve, made with ``run`` and polished with ``polisher`` (none: no polish): the ladder
    (:meth:`ladder`), then the rescue run and the last resorts (:meth:`rescue`); a point taken as optimal and not
    polished yet is then polished (:meth:`Polisher.optimal`). The steps: ``docs/solvers.md``, "The backend's
    pipeline"."""

    def __init__(self, run: Runner, plan: RunPlan, settings: ClarabelSettings, polisher: Polisher | None = None):
        self.run, self.plan, self.settings, self.polisher = run, plan, settings, polisher
        self.best: tuple[float, Attempt] | None = None  # the best AlmostSolved point (almost_residual)
        self.near: tuple[float, Attempt] | None = None  # the AlmostSolved point of least residuals (almost_residuals)
        self.last: Attempt | None = None  # the ladder's last run

    def keep(self, attempt: Attempt) -> None:
        """Remember ``attempt`` when it is the best or the nearest ``AlmostSolved`` point so far."""
        residual, residuals = almost_residual(attempt), almost_residuals(attempt)
        if residual is not None and (self.best is None or residual < self.best[0]):
            self.best = (residual, attempt)
        if residuals is not None and (self.near is None or residuals < self.near[0]):
            self.near = (residuals, attempt)

    def solve(self) -> ClarabelRun:
        """The runs (class docstring)."""
        run = self.ladder()
        return self.rescue() if run is None else run

    def ladder(self) -> ClarabelRun | None:
        """The runs of the ladder until one's point is taken at ``accept_tol`` (:func:`meets`), or infeasible, or out
        of time; where a certificate judges, the first ``AlmostSolved`` point within ``polish_almost_tol`` polished
        and taken when accepted. ``None`` when each ended without a point taken."""
        short = self.polisher is not None and self.plan.judged and self.plan.polish_short
        for tol in self.plan.ladder:
            attempt = self.run(tol, self.plan.feas_tol, self.plan.gap_tol)
            if meets(attempt, self.settings.accept_tol):
                return self.outcome(attempt, "Solved")
            if attempt.status in STOPS:
                return self.outcome(attempt, attempt.status)
            self.keep(attempt)
            residual = almost_residuals(attempt)
            if short and self.polisher is not None and residual is not None \
                    and residual <= self.settings.polish_almost_tol:  # short: a polisher is given
                short = False  # one such polish per solve
                polished = self.polisher.polish(attempt.point, self.settings.polish_almost_accept,
                                                self.polisher.short_attempts)
                if polished.accepted:
                    polished.reason = f"short of {self.settings.accept_tol:g} (residuals {residual:.1e}), " + \
                                      polished.reason
                    return self.outcome(attempt, "Solved", polished)
        self.last = attempt
        return None

    def rescue(self) -> ClarabelRun:
        """The rescue run at ``accept_tol`` with ``rescue_reg``; then, where a certificate judges, the best
        ``AlmostSolved`` point within ``last_resort_tol`` or the nearest polished to it; else the ladder's last run."""
        accept = self.settings.accept_tol
        again = self.run(accept, rescue=True)
        if meets(again, accept):
            return self.outcome(again, "Solved")
        self.keep(again)
        judged = self.plan.judged
        if judged and self.best is not None and self.best[0] <= self.settings.last_resort_tol:
            run = self.outcome(self.best[1], "Solved")
            run.last_resort = self.best[0]
            return run
        if self.settings.last_resort_polish and judged and self.plan.polish_short and self.near is not None \
                and self.near[0] <= self.settings.polish_almost_tol and self.polisher is not None:
            polished = self.polisher.polish(self.near[1].point, self.settings.last_resort_tol)
            if polished.accepted:
                run = self.outcome(self.near[1], "Solved", polished)
                run.last_polished = polished.residual_after
                return run
        last = cast(Attempt, self.last)  # set by the ladder, run before the rescue
        run = self.outcome(last, last.status)
        run.tol = accept
        return run

    def outcome(self, attempt: Attempt, status: str, polished: Polished | None = None) -> ClarabelRun:
        """The :class:`ClarabelRun` of ``attempt`` with ``status``: with ``polished``, an accepted polished point;
        a point taken as optimal without one polished now."""
        p = attempt.point
        run = ClarabelRun(p.x, p.s, p.z, status, attempt.status, attempt.tol, attempt.iterations, attempt.obj_val,
                          attempt.obj_val_dual, attempt.r_dual, self.settings, rescued=attempt.rescue,
                          note=self.run.chain.note)
        if self.polisher is not None:  # a polished point is the polisher's
            if polished is None and status == "Solved":
                polished = self.polisher.optimal(p)
            if polished is not None:
                run.take(polished, self.polisher.program)
        return run


def rewritable(program: ConicProgram) -> bool:
    """Whether ``program`` has a power cone that :class:`~tpm_models.solvers.powsoc.PowAsSoc` writes."""
    # a pow cone has its alpha (Cone's check)
    return any(c.kind is ConeKind.POW and rational(cast(float, c.alpha)) is not None for c in program.cones)


def reductions_for(program: ConicProgram, settings: ClarabelSettings) -> list[Reduction]:
    """The reductions before the runs (the columns are merged in each run): from ``settings.pow_as_soc_columns``
    columns on, the implied bounds left out (read on the power cones, so first) and the power cones written as
    second-order cones; none below."""
    if program.A.shape[1] < settings.pow_as_soc_columns or not rewritable(program):
        return []
    return [DropImpliedBounds(), PowAsSoc()] if settings.drop_implied_bounds else [PowAsSoc()]


def pipeline_solve(program: ConicProgram, settings: ClarabelSettings = DEFAULT_SETTINGS,
                   time_limit: float | None = None, options: dict | None = None,
                   keep_own: Callable[[ConicSolution], str | None] | None = None) -> ClarabelRun:
    """The backend's pipeline on ``program``, a model's conic form whose point a certificate judges: the retry
    policy through :func:`reductions_for` and the merge of columns, the polish on ``program``'s own cones
    (``keep_own``: :class:`Polisher`'s, on a program whose power cones are written as second-order cones); a program
    that keeps its power cones and fails is solved again with them as second-order cones. ``options``: Clarabel's
    own settings, over ``settings``'; the run's note says what the runs were on."""
    reductions = reductions_for(program, settings)
    chain = Chain(program, reductions, settings.merge_columns)
    polisher: Polisher | None
    if reductions:  # its power cones written as second-order cones: polished on them
        plan = RunPlan(settings.soc_ladder, settings.feas_tol, settings.apex_gap_tol, judged=not any(
            c.kind is ConeKind.POW for c in chain.program.cones), polish_short=True)
        polisher, columns = Polisher(program, settings, keep_own=keep_own), chain.program.A.shape[1]
    elif any(c.kind is ConeKind.POW for c in program.cones):  # a failure is followed by the second-order-cone form
        plan, polisher, columns = RunPlan(settings.ladder), Polisher(program, settings), 0
    else:  # a point short of the accepted tolerance polished (one Newton run) and judged by the certificate
        plan = RunPlan(settings.ladder, settings.feas_tol, judged=True, polish_short=True)
        polisher, columns = Polisher(program, settings, short_attempts=1), program.A.shape[1]
    policy = RetryPolicy(Runner(chain, settings, time_limit, options, columns), plan, settings,
                         polisher if settings.polish else None)
    run = policy.solve()
    run.note += "".join(r.note for r in reversed(reductions))
    if CLARABEL_STATUS.get(run.status, Termination.ERROR) in (Termination.NUMERICAL_ERROR, Termination.ERROR) \
            and not reductions and rewritable(program):  # Clarabel's power cones stall at 10^4 points
        first = run.message
        runner = Runner(Chain(program, [PowAsSoc()], settings.merge_columns), settings, time_limit, options)
        polisher = Polisher(program, settings, keep_own=keep_own) if settings.polish else None
        run = RetryPolicy(runner, RunPlan(settings.ladder, judged=True), settings, polisher).solve()
        run.note += f"; power cones written as second-order cones after: {first}"
    return run


def clarabel_solve(P: sp.csr_matrix, q: np.ndarray, A: sp.csr_matrix, b: np.ndarray, cones: list[Cone],
                   time_limit: float | None = None, polish_point: bool = True,
                   options: dict | None = None, settings: ClarabelSettings = DEFAULT_SETTINGS) -> ClarabelRun:
    """Clarabel on :math:`\\min \\tfrac12 x^\\top Px + q^\\top x` s.t. :math:`Ax + s = b`, :math:`s \\in` ``cones``
    (``P`` upper triangular, ``P`` and ``A`` scipy CSC) by the retry policy, no certificate judging its point (no
    last resort); an optimal point polished when ``polish_point`` and ``settings.polish``. ``options``: Clarabel's
    own settings, over ``settings``' (:func:`clarabel_options`)."""
    program = ConicProgram(P, np.asarray(q, dtype=float), A, np.asarray(b, dtype=float), list(cones))
    polisher = Polisher(program, settings) if polish_point and settings.polish else None
    runner = Runner(Chain(program, [], settings.merge_columns), settings, time_limit, options)
    return RetryPolicy(runner, RunPlan(settings.ladder), settings, polisher).solve()
