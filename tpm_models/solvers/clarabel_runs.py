"""Clarabel's runs on a conic program (:class:`~tpm_models.solvers.conic_program.ConicProgram`): one run
(:class:`Runner`, its columns merged for the run and its point mapped back through the reductions), the retry
policy (:class:`RetryPolicy`: the ladder of tolerances, the rescue run, the last resorts) and the polish of its points
behind one interface (:class:`Polisher`).

Two callers: the backend of ``solve(model, "clarabel")`` (:mod:`tpm_models.solvers.backends.clarabel`, which builds
the program from a model, picks its reductions and loads the point) and :func:`clarabel_solve`, the same on a program
given as matrices (the estimators' dense adapter :mod:`tpm_models.learn.fastconic`, and the tests).

The retry policy, in order (the settings: :class:`~tpm_models.solvers.clarabel_settings.ClarabelSettings`):

1. a run at each tolerance of the ladder, until one ends ``Solved`` or ``AlmostSolved`` meeting ``accept_tol``
   (:func:`meets`), or infeasible, or out of time; where a certificate judges the point, the first ``AlmostSolved``
   point within ``polish_almost_tol`` is polished and, when the polish is accepted, taken;
2. else one rescue run at ``accept_tol`` with ``rescue_reg``;
3. else, where a certificate judges the point, the best ``AlmostSolved`` point within ``last_resort_tol``, or the one
   of least residuals polished to ``last_resort_tol`` (``last_resort_polish``).

:func:`meets` is Clarabel's own test of its full tolerances, asked at ``accept_tol``: Clarabel's reduced tolerances
(``reduced_tol_*``) cannot take its place, since the points that fail them must stay ``AlmostSolved`` for steps 1
and 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import scipy.sparse as sp

from tpm_models.certify.tolerances import GAP_FLOOR
from tpm_models.solvers.clarabel_settings import DEFAULT_SETTINGS, ClarabelSettings, clarabel_cones, clarabel_options
from tpm_models.solvers.cones import Cone
from tpm_models.solvers.conic_program import ConicProgram, ConicSolution
from tpm_models.solvers.polish import Polished, polish
from tpm_models.solvers.reductions import MergeColumns, Reduction, restore

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
    """Whether Clarabel's point meets ``tol`` by Clarabel's own tests: the duality gap, absolute or relative (to
    ``max(1, min(|primal|, |dual|))``), and its scaled primal and dual residuals."""
    p, d = float(attempt.obj_val), float(attempt.obj_val_dual)
    if not (np.isfinite(p) and np.isfinite(d)):
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
    """Clarabel's runs on ``program`` (the reduced one), each point mapped back through ``reductions`` to the program
    they were given. With ``settings.merge_columns`` each run is on the program with its columns merged
    (:class:`~tpm_models.solvers.reductions.MergeColumns`, read once), that copy let go once Clarabel holds its own.
    ``columns``: the size that picks the iterative refinement (0: always ``refine_tol``)."""

    def __init__(self, program: ConicProgram, reductions: list[Reduction], settings: ClarabelSettings,
                 time_limit: float | None = None, options: dict | None = None, columns: int = 0):
        self.program, self.reductions, self.settings = program, reductions, settings
        self.time_limit, self.options, self.columns = time_limit, options, columns
        self.merge = MergeColumns() if settings.merge_columns else None

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
        run = self.program if self.merge is None else self.merge.forward(self.program)
        solver = clarabel.DefaultSolver(run.P, run.q, run.A, run.b, clarabel_cones(run.cones), settings)
        del run
        out = solver.solve()
        point = ConicSolution(*(np.asarray(v, dtype=float) for v in (out.x, out.s, out.z)))
        if self.merge is not None:
            point = self.merge.back(point)
        return Attempt(restore(point, self.reductions), str(out.status), tol, int(out.iterations),
                       float(out.obj_val), float(out.obj_val_dual), float(out.r_prim), float(out.r_dual), rescue)

    @property
    def note(self) -> str:
        """The merged columns, for the message."""
        return "" if self.merge is None else self.merge.note


class Polisher:
    """The polish of a point of ``program`` (the program given, before the reductions): :meth:`short` for an
    ``AlmostSolved`` point short of the accepted tolerance, :meth:`optimal` for an optimal one. ``short_attempts``:
    the Newton runs of the first polish of a point short (``None``: the polish's own limit). A backend that must
    check where the polish lands (the power cones' apex) overrides :meth:`optimal`."""

    def __init__(self, program: ConicProgram, settings: ClarabelSettings = DEFAULT_SETTINGS,
                 short_attempts: int | None = None):
        self.program, self.settings, self.short_attempts = program, settings, short_attempts

    def polish(self, point: ConicSolution, accept: float | None = None, attempts: int | None = None) -> Polished:
        """:func:`~tpm_models.solvers.polish.polish` of ``point`` on :attr:`program`."""
        p = self.program
        kwargs = {} if accept is None else {"accept": accept}
        return polish(p.P, p.q, p.A, p.b, p.cones, point.x, point.s, point.z, attempts=attempts,
                      pin=self.settings.pin, **kwargs)

    def short(self, point: ConicSolution, accept: float, first: bool) -> Polished:
        """The polish of an ``AlmostSolved`` point, accepted at ``accept``; ``first``: the one of the ladder."""
        return self.polish(point, accept, self.short_attempts if first else None)

    def optimal(self, point: ConicSolution) -> Polished:
        """The polish of an optimal point."""
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
    """What the runs were on (the merged columns)."""

    def take(self, polished: Polished, program: ConicProgram) -> None:
        """Use ``polished`` (a point of ``program``) when it is accepted."""
        self.polished = polished
        if polished.accepted:
            self.interior = (self.x, self.s, self.z)
            self.x, self.z = polished.x, polished.z
            self.s = program.slack(self.x)

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
    ``feas_tol``, ``gap_tol``: :func:`~tpm_models.solvers.clarabel_settings.clarabel_options`'s, for those runs;
    ``judged``: a certificate judges the point (so a point short of ``accept_tol`` may be taken: the last resort);
    ``polish_short``: with ``judged``, a point short of it may be polished and taken."""

    ladder: tuple[float, ...]
    feas_tol: float | None = None
    gap_tol: float | None = None
    judged: bool = False
    polish_short: bool = False


class RetryPolicy:
    """The runs of one solve (module docstring): :meth:`solve` makes them with ``run``, polishes with ``polisher``
    (none: no polish)."""

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
        """The runs, then the polish of an optimal point that is not polished yet."""
        run = self.ladder()
        if run is None:
            run = self.rescue()
        if run.status == "Solved" and run.polished is None and self.polisher is not None:
            run.take(self.polisher.optimal(ConicSolution(run.x, run.s, run.z)), self.polisher.program)
        return run

    def ladder(self) -> ClarabelRun | None:
        """Step 1: the runs of the ladder; ``None`` when each ended without a point taken."""
        short = self.polisher is not None and self.plan.judged and self.plan.polish_short
        for tol in self.plan.ladder:
            attempt = self.run(tol, self.plan.feas_tol, self.plan.gap_tol)
            if attempt.status == "Solved" or attempt.status == "AlmostSolved" and meets(attempt,
                                                                                      self.settings.accept_tol):
                return self.outcome(attempt, "Solved")
            if attempt.status in STOPS:
                return self.outcome(attempt, attempt.status)
            self.keep(attempt)
            residual = almost_residuals(attempt)
            if short and self.polisher is not None and residual is not None \
                    and residual <= self.settings.polish_almost_tol:  # short: a polisher is given
                short = False  # one such polish per solve
                polished = self.polisher.short(attempt.point, self.settings.polish_almost_accept, first=True)
                if polished.accepted:
                    polished.reason = f"short of {self.settings.accept_tol:g} (residuals {residual:.1e}), " + \
                                      polished.reason
                    return self.outcome(attempt, "Solved", polished)
        self.last = attempt
        return None

    def rescue(self) -> ClarabelRun:
        """Steps 2 and 3: the rescue run, then the last resorts; else the ladder's last run, as it ended."""
        accept = self.settings.accept_tol
        again = self.run(accept, rescue=True)
        if again.status == "Solved" or again.status == "AlmostSolved" and meets(again, accept):
            return self.outcome(again, "Solved")
        self.keep(again)
        judged = self.plan.judged
        if judged and self.best is not None and self.best[0] <= self.settings.last_resort_tol:
            run = self.outcome(self.best[1], "Solved")
            run.last_resort = self.best[0]
            return run
        if self.settings.last_resort_polish and judged and self.plan.polish_short and self.near is not None \
                and self.near[0] <= self.settings.polish_almost_tol and self.polisher is not None:
            polished = self.polisher.short(self.near[1].point, self.settings.last_resort_tol, first=False)
            if polished.accepted:
                run = self.outcome(self.near[1], "Solved", polished)
                run.last_polished = polished.residual_after
                return run
        last = cast(Attempt, self.last)  # set by the ladder, run before the rescue
        run = self.outcome(last, last.status)
        run.tol = accept
        return run

    def outcome(self, attempt: Attempt, status: str, polished: Polished | None = None) -> ClarabelRun:
        """The :class:`ClarabelRun` of ``attempt`` with ``status`` (and an accepted ``polished`` point)."""
        p = attempt.point
        run = ClarabelRun(p.x, p.s, p.z, status, attempt.status, attempt.tol, attempt.iterations, attempt.obj_val,
                          attempt.obj_val_dual, attempt.r_dual, self.settings, rescued=attempt.rescue,
                          note=self.run.note)
        if polished is not None and self.polisher is not None:  # a polished point is the polisher's
            run.take(polished, self.polisher.program)
        return run


def clarabel_solve(P: sp.csr_matrix, q: np.ndarray, A: sp.csr_matrix, b: np.ndarray, cones: list[Cone],
                   time_limit: float | None = None, polish_point: bool = True,
                   options: dict | None = None, settings: ClarabelSettings = DEFAULT_SETTINGS) -> ClarabelRun:
    """Clarabel on :math:`\\min \\tfrac12 x^\\top Px + q^\\top x` s.t. :math:`Ax + s = b`, :math:`s \\in` ``cones``
    (``P`` upper triangular, ``P`` and ``A`` scipy CSC) by the retry policy, no certificate judging its point (no
    last resort); an optimal point polished when ``polish_point`` and ``settings.polish``. ``options``: Clarabel's
    own settings, over ``settings``' (:func:`~tpm_models.solvers.clarabel_settings.clarabel_options`)."""
    program = ConicProgram(P, np.asarray(q, dtype=float), A, np.asarray(b, dtype=float), list(cones))
    polisher = Polisher(program, settings) if polish_point and settings.polish else None
    runner = Runner(program, [], settings, time_limit, options)
    return RetryPolicy(runner, RunPlan(settings.ladder), settings, polisher).solve()
