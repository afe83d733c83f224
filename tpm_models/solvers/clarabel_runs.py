"""Clarabel's runs on a conic program given as matrices: :math:`\\min \\tfrac12 x^\\top Px + q^\\top x` s.t.
:math:`Ax + s = b`, :math:`s` in a product of zero, nonnegative, second-order and power cones. Its settings (each
constant with the measurement that chose it), the ladder of tolerances, the rescue run, the ``AlmostSolved`` points
taken or polished, and the polish of an optimal point (:func:`tpm_models.solvers.polish.polish`).

Two callers share :func:`clarabel_solve`: the backend of ``solve(model, "clarabel")``
(:mod:`tpm_models.solvers.backends.clarabel`, which builds the program from a Pyomo model, rewrites its power cones
and loads and certifies the point) and the estimators' dense adapter (:mod:`tpm_models.learn.fastconic`), which
builds it from arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tpm_models.solvers.common import GAP_FLOOR, Termination
from tpm_models.solvers.conic import Cone
from tpm_models.solvers.merged_columns import MERGE_COLUMNS, MergedColumns, rank_one_columns
from tpm_models.solvers.polish import Polished, polish

CLARABEL_TOL = 1e-12
"""Clarabel's ``tol_gap_abs``, ``tol_gap_rel``, ``tol_feas``, ``tol_infeas_abs`` and ``tol_infeas_rel`` of the
first run (its defaults are 1e-8). Most of this library's models stop ``AlmostSolved`` at 1e-12 (Clarabel's
iterates stall: its runs at 1e-12, 1e-11, 1e-10 and 1e-9 follow the same path and the tighter ones stop at the
same point), and that point is the best Clarabel reaches: see :data:`CLARABEL_ACCEPT_TOL`. A first run at 1e-8 was
measured at scale (``docs/bench-scale.md``, "Issue 24, Clarabel and the polish"): on the same path, it stops 0-2
iterations earlier (at 10^5 points (28) 21 against 22, (29) 15 against 16, (15) 17 against 19; 0.1-0.2 s of 2-3 s),
but (27) at 10^5 points then stops ``AlmostSolved`` short of 1e-8 (dual residual 3.7e-7) and its polish fails, as
the polish of the point at 1e-8 of (29) and of (26) at p = 1.5 on 10^4 points does (their points at 1e-12 are
polished): a whole run more and a failed polish (2.3 + 1.0 s on (27)) against 0.1-0.2 s saved elsewhere."""

CLARABEL_FEAS_TOL = 1e-9
"""Clarabel's ``tol_feas`` (its scaled primal and dual residuals) of the run at :data:`CLARABEL_TOL` on a form
without power cones ((15), (23) at p = 2, (27)-(29) and their duals) and on one whose power cones were written as
second-order cones (:data:`~tpm_models.solvers.backends.clarabel.POW_AS_SOC_COLUMNS`); the duality gap is still asked to
1e-12 (to :data:`CLARABEL_APEX_GAP_TOL` on the latter). At 1e-12 the residuals were the test no run met: Clarabel took
one more step, found its residuals no better, and returned the point before that step, ``AlmostSolved`` (the step
wasted, the same point). Measured (``docs/bench-scale.md``, "Issue 24, the collector, the refinement and the
certificate's objective"): on ``tpm-models bench scale``'s models at 10^4 points (28), (23) at p = 1.5, 2 and 3 one
iteration shorter, (26), (27), (29) as long, every point the same before the polish (its KKT residual to the digit) and
certified; at 10^5 points (23) at p = 2 and 3 21 -> 19 and 30 -> 28, (23) at p = 1.5 and (27) one fewer, the others as
long, every result certified with the same objective. Not on a form that keeps its power cones (below
:data:`~tpm_models.solvers.backends.clarabel.POW_AS_SOC_COLUMNS` columns): there (26) at p = 3 on 2,000 points with a
large ``eps`` (optimum :math:`w = 0`, at the cones' apex, where no polish is made) stopped two iterations earlier, its
objective 7.3e-13 for an optimum of 0 and its gap above the certificate's floor ("optimal, not certified",
``tests/solvers/test_certificate.py``)."""

CLARABEL_APEX_GAP_TOL = 1e-13
"""Clarabel's ``tol_gap_abs`` and ``tol_gap_rel`` of the run on a form whose power cones were written as second-order
cones, beside :data:`CLARABEL_FEAS_TOL`. There an optimum at :math:`w = 0` ((23), (26) with a large ``eps``) is at
the power cones' apex, where no polish is made: Clarabel's point is the answer, and its duality gap must stay under
the certificate's floor (``GAP_FLOOR``, 1e-12 absolute). Measured (``docs/bench-scale.md``, same section): the nine
optima at :math:`w = 0` of the scale benchmark's data on these forms ((23), (26) at p = 1.5 and 3 on 5*10^4 and
2*10^5 points, (23) at p = 3 on 10^5) end certified, or not, exactly as with 1e-12 for both, in 0-2 iterations fewer.
On the four such optima on 2,000 points (their power cones kept, so neither setting applies there), residuals at
1e-9 with the gap at 1e-12 left two of them "not certified", with the gap at 1e-13 none."""

CLARABEL_ACCEPT_TOL = 1e-8
"""An ``AlmostSolved`` point is taken as optimal when it meets 1e-8 (Clarabel's own default tolerances) by
Clarabel's own tests (:func:`meets`). Measured on the 936 models of ``tpm-models conic-survey``
(``docs/solvers.md``): the point where a run at 1e-12 stalls has a ``w`` closer to the reference than the point a
run at 1e-9 or 1e-8 reports ``Solved`` (an earlier stop on the same path), by up to a factor 400 (Iris class 0,
(26), p = 3: 3.5e-8 against 1.3e-5): an interior point's ``w`` error is about the square root of its gap on
(26)-(29), whose quadratic term is a cone."""

CLARABEL_TOLS: tuple[float, ...] = (CLARABEL_TOL, 1e-10, CLARABEL_ACCEPT_TOL)
"""The tolerances of the runs of :func:`clarabel_solve`, in turn while a run ends neither ``Solved`` nor with an
accepted ``AlmostSolved`` point (a numerical error, insufficient progress)."""

CLARABEL_REFINE_TOL = 1e-15
"""Clarabel's ``iterative_refinement_reltol`` and ``_abstol`` (defaults 1e-13, 1e-12): its KKT solves are refined
to this, so that the runs at :data:`CLARABEL_TOL` end ``Solved`` on the robust models and duals of Iris and Wine
(why: ``docs/solvers.md``, "Clarabel's settings")."""

CLARABEL_REFINE_LARGE = 10_000
"""From this many columns of the conic form on, Clarabel's own iterative refinement (1e-13 relative, 1e-12
absolute) instead of :data:`CLARABEL_REFINE_TOL`. Measured on the models of ``tpm-models bench scale`` at 10^5 points
(about 25,000 columns; Clarabel alone at 1e-12, CPU, two runs each, under the machine's lock, ``docs/bench-scale.md``):
(28) 1.56 -> 1.41 s, (27) 2.17 -> 1.97 s (and its point now meets 1e-8), (29) 2.63 -> 2.54 s, (23) at p = 2
1.37 -> 1.21 s, every one the same optimum after the polish (objective within 1e-11, ``w`` within 1e-16). Below,
the robust models of Iris and Wine need 1e-15 to end ``Solved`` (``docs/solvers.md``). Also on a form whose power
cones were written as second-order cones before the first run (from
:data:`~tpm_models.solvers.backends.clarabel.POW_AS_SOC_COLUMNS` columns): measured again on the tree of cones of
:func:`~tpm_models.solvers.powsoc.pow_as_soc_map` and with three Newton runs of the polish on the power cones
(:data:`~tpm_models.solvers.polish.POLISH_ATTEMPTS_HUGE`; ``docs/bench-scale.md``, "Issue 24, the collector, the
refinement and the certificate's objective"), Clarabel's run at 10^5 points (23) at p = 1.5 1.92 -> 1.87 s, at p = 3
2.12 -> 1.80 s, (26) at p = 3 1.90 -> 1.62 s, at 10^6 points (23) at p = 1.5 36.0 -> 30.4 s, the same iterations within
one, every point polished or certified as before. (Measured on the earlier tree, (26) at p = 1.5 on 10^5 points then
ended on its last-resort point 2.1e-7 from the optimum; it is now polished, to the same objective within 1e-12.) Not on
a form that keeps its power cones (all below :data:`~tpm_models.solvers.backends.clarabel.POW_AS_SOC_COLUMNS`
columns)."""

CLARABEL_KTRATIO_TOL = 1e-7
"""Clarabel's ``tol_ktratio`` (default 1e-6): the kappa/tau ratio under which it calls a point optimal
rather than a certificate of infeasibility."""

CLARABEL_STATIC_REG = 1e-9
"""Clarabel's ``static_regularization_constant`` (default 1e-8), the diagonal shift of its KKT system: at this
value the 120 robust models and duals of Iris and Wine (every class; (23), (26) at p = 1.5, 3; (27)-(29); (23D),
(27D)-(29D); eps 0 and 0.02) end ``Solved`` (why: ``docs/solvers.md``, "Clarabel's settings")."""

CLARABEL_RESCUE_REG = 1e-7
"""The static regularisation of one last run at :data:`CLARABEL_ACCEPT_TOL`, made only when every run of
:data:`CLARABEL_TOLS` failed; its point is accepted under the same test (:func:`meets`) as any other, so a rescue
never lowers the accuracy asked (the model that needs it, (26) at p = 1.5 on 10^4 points: ``docs/solvers.md``,
"Clarabel's settings")."""

CLARABEL_LAST_RESORT_TOL = 1e-6
"""When every run (:data:`CLARABEL_TOLS` and the rescue) stops short of :data:`CLARABEL_ACCEPT_TOL`, the best of
their ``AlmostSolved`` points (by :func:`almost_residual`: its scaled primal and dual residuals and its duality gap
relative to the objective) is taken when that is at most 1e-6 (the library's ``FEASIBILITY_TOL`` and
``KKT_TOL``, :mod:`tpm_models.solvers.common`) by the backend of ``solve()`` (not by the dense adapter
:mod:`tpm_models.learn.fastconic`, which has no certificate), and the message says so: it is then judged by the model's
certificate (:mod:`tpm_models.solvers.certificate`: feasibility, KKT conditions and a duality gap of at most
``GAP_TOL`` of the objective), as the points of every other backend are, instead of by Clarabel's 1e-8. Measured
(``docs/bench-scale.md``): (26) at p = 1.5 on 10^5 points, where no run meets 1e-8 (the cone
:math:`u \\ge \\|(t, v)\\|` near its ray at :math:`u \\approx v \\approx \\tfrac12`), the first run at 1e-12 stops with
a primal residual of 1.1e-7, a dual residual of 3.5e-9 and a gap of 1.1e-13; certified, its objective 2.5e-8
(relative) from cvxpy + Clarabel's optimum of (23) at p = 1.5 (the same optimum) and its w within 5e-10; the later
runs stop farther (2e-6 to 8e-6). Measured again on main 4dacf80 (why it differs from that run is not known):
that run stops at residuals 6.0e-10 and 4.0e-8, its point 3.5e-7 from the optimum, and the certificate's gap test
fails ("optimal, not certified"; ``docs/bench-scale.md``, "p = 1.5 and 10^6 points")."""

CLARABEL_POLISH_ALMOST_TOL = 1e-6
"""A run that stops ``AlmostSolved`` short of :data:`CLARABEL_ACCEPT_TOL`, with residuals (:func:`almost_residuals`)
at most 1e-6, is polished before the next run is made, inside ``solve()`` only (``judged_by_certificate``); when the
polish is accepted (a KKT point of the conic program to :data:`CLARABEL_POLISH_ALMOST_ACCEPT`, the 1e-8 that
Clarabel's point failed), that point is taken and the later runs are not made, and the message says so
(the model's certificate then judges it as any other point). At most one such polish per solve, on the first reading
of the faces only, and not on a form with power cones read as they are (below
:data:`~tpm_models.solvers.backends.clarabel.POW_AS_SOC_COLUMNS`). On a form whose power cones were written as
second-order cones up front, the point is polished on the power cones
(:func:`~tpm_models.solvers.backends.clarabel.on_power_cones`, two readings at most): with the implied bounds left out
(:data:`~tpm_models.solvers.backends.clarabel.DROP_IMPLIED_BOUNDS`), (26) at p = 1.5 stops short of 1e-8 at 10^4 points
(residuals 9.3e-8) and its point is polished there, one Clarabel run instead of four (before, with the bounds kept, that
polish failed and cost 0.36 s). Measured (``docs/bench-scale.md``): (27) on 10^5 points, whose runs at 1e-12 and 1e-10
stop at the same point (dual residual 2.7e-8) before the run at 1e-8 ends ``Solved``: two runs of about 2.2 s each are
saved, and the polished point is the same optimum."""

CLARABEL_LAST_RESORT_POLISH = True
"""When every run (:data:`CLARABEL_TOLS` and the rescue) stops short of :data:`CLARABEL_ACCEPT_TOL` and no point is
taken under :data:`CLARABEL_LAST_RESORT_TOL`, the ``AlmostSolved`` point of least residuals (at most
:data:`CLARABEL_POLISH_ALMOST_TOL`) is polished once more, accepted at a KKT residual of
:data:`CLARABEL_LAST_RESORT_TOL`, and that point is judged by the model's certificate (inside ``solve()`` only,
``judged_by_certificate``); the message says so. Measured on an AMD EPYC (``docs/bench-scale.md``, "Issue 24, the
columns merged for the solver's run"): (27) on 10^5 points of the scale benchmark's data, class 0, nu = 0.1,
eps = 0 (optimum w = 0): every run stops short of 1e-8, the polish reaches 1.04e-8 (1e-8 asked, so refused), and the
default fell back to Ipopt: 45-52 s, "optimal, not certified", objective 6.3e-9 for an optimum 0. Taken here:
certified, objective 5.6e-17, w within 5.5e-9 of 0."""

CLARABEL_POLISH_ALMOST_ACCEPT = CLARABEL_ACCEPT_TOL
"""The largest KKT residual of the polish of a point short of :data:`CLARABEL_ACCEPT_TOL`
(:data:`CLARABEL_POLISH_ALMOST_TOL`), where the polish of a ``Solved`` point asks
:data:`~tpm_models.solvers.polish.POLISH_ACCEPT` = 1e-11: that point is no alternative (it fails 1e-8), so a polished
point that meets the 1e-8 it failed, and is better than it, is taken; the model's certificate judges it as any
other. Measured (``docs/bench-scale.md``, "Issue 24, the optima at w = 0 with multipliers not unique"), on 10^5
points with nu = 0.1, at an optimum w = 0 where the multipliers are not unique and Clarabel stops at a dual residual
of 1.5e-8 to 1.4e-7 at every tolerance: the polish leaves the cone t >= |w|_2 slightly outside (w of 2e-10 to
1e-9, every other KKT condition to 1e-15), KKT residual 4.1e-10 ((28), class 0), 1.7e-9 ((27), class 0), 2.0e-9
((29), class 0), 7.8e-10 ((26) at p = 1.5, on the power cones). Refused at 1e-11, the default fell back to Ipopt
(25-43 s, 6.3e-9 above the optimum) or kept Clarabel's point, "optimal, not certified"; taken, each solve is
1.3-1.7 s and certified. The gate to try such a polish reads Clarabel's residuals only
(:func:`almost_residuals`): the gap of a point at an optimum 0 (1.45e-12 of an objective of 2.9e-12) is what the
polish mends."""

CLARABEL_MAX_ITER = 500
"""Iteration cap of Clarabel (default 200); it needs < 50 on this library's models."""


CLARABEL_POLISH = True
"""Polish every optimal point (:func:`tpm_models.solvers.polish.polish`). Measured on the 936 models of the conic
survey (``docs/solvers.md``): Clarabel's :math:`w` is within 1e-7 of the reference on 703 of them, the polished
:math:`w` on 933 (it is off by about the square root of the interior point's gap, 1e-6 at 1e-12, where the
quadratic term is a cone), for 1-3 ms per model. Not skipped when Clarabel's point is already a KKT point to 1e-12
(measured: a point of (23) on Iris at a KKT residual of 1.7e-13 has its w 1.1e-7 from the reference, and skipping the
polish below 1e-12 left 11 of the survey's 936 models inaccurate and 3 not certified), nor at scale ((28) on 10^5
points: Clarabel's point is 1.8e-7 (relative) from the polished optimum in objective; ``docs/bench-scale.md``)."""


@dataclass
class ClarabelRun:
    """One :func:`clarabel_solve`: Clarabel's primal-dual point (polished when ``polished.accepted``)."""

    x: np.ndarray
    s: np.ndarray
    z: np.ndarray
    status: str
    """Clarabel's status, or ``"Solved"`` for an accepted ``AlmostSolved`` point (:data:`CLARABEL_ACCEPT_TOL`)."""
    raw_status: str
    tol: float
    iterations: int
    obj_val: float
    obj_val_dual: float
    r_dual: float
    polished: Polished | None
    interior: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    """Clarabel's own ``(x, s, z)`` when ``x``, ``s``, ``z`` are polished (``s = b - Ax`` then)."""
    rescued: bool = False
    """Solved by the last run, at :data:`CLARABEL_RESCUE_REG`."""
    last_resort: float | None = None
    """The residual of the best ``AlmostSolved`` point, taken under :data:`CLARABEL_LAST_RESORT_TOL`."""
    last_polished: float | None = None
    """The KKT residual of the polished ``AlmostSolved`` point taken when no run met 1e-8
    (:data:`CLARABEL_LAST_RESORT_POLISH`)."""
    merged: MergedColumns | None = None
    """The columns merged for Clarabel's runs (:data:`~tpm_models.solvers.merged_columns.MERGE_COLUMNS`)."""

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
        if self.rescued:
            text += f" with static regularisation {CLARABEL_RESCUE_REG:g}"
        if self.last_polished is not None:
            text += (f"; no run met {CLARABEL_ACCEPT_TOL:g}: the point of least residuals polished to a KKT residual "
                     f"of {self.last_polished:.1e} <= {CLARABEL_LAST_RESORT_TOL:g}, judged by the model's certificate")
        if self.last_resort is not None:
            text += (f"; no run met {CLARABEL_ACCEPT_TOL:g}: the best point, residuals {self.last_resort:.1e} <= "
                     f"{CLARABEL_LAST_RESORT_TOL:g}, judged by the model's certificate")
        if self.polished is not None:
            text += ("; polished: " if self.polished.accepted else "; not polished: ") + self.polished.reason
        if self.merged is not None:
            text += "; " + self.merged.note
        return text


def clarabel_cone(cone: Cone):
    """Clarabel's cone object of one :class:`~tpm_models.solvers.conic.Cone`."""
    import clarabel

    if cone.kind == "zero":
        return clarabel.ZeroConeT(cone.dim)
    if cone.kind == "nonneg":
        return clarabel.NonnegativeConeT(cone.dim)
    if cone.kind == "soc":
        return clarabel.SecondOrderConeT(cone.dim)
    if cone.kind == "pow":
        return clarabel.PowerConeT(cone.alpha)
    raise ValueError(f"unknown cone kind {cone.kind!r}")


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


def clarabel_settings(tol: float, time_limit: float | None = None, options: dict | None = None,
                      columns: int = 0, feas_tol: float | None = None, gap_tol: float | None = None) -> dict:
    """The settings of one run of ``solve(model, "clarabel")`` at tolerance ``tol`` on a form of ``columns``
    columns: this module's constants (:data:`CLARABEL_REFINE_TOL` below :data:`CLARABEL_REFINE_LARGE` columns), then
    ``time_limit`` and the user's ``options`` (Clarabel's ``DefaultSettings`` names, e.g. ``max_iter``,
    ``tol_gap_rel``), which hold for every run of :data:`CLARABEL_TOLS`. ``feas_tol``: a looser ``tol_feas`` than
    ``tol`` (:data:`CLARABEL_FEAS_TOL`; ``None``: ``tol``); ``gap_tol``: a tighter duality gap than ``tol``
    (:data:`CLARABEL_APEX_GAP_TOL`; ``None``: ``tol``)."""
    gap = tol if gap_tol is None else min(tol, gap_tol)
    settings = {"verbose": False, "tol_gap_abs": gap, "tol_gap_rel": gap,
                "tol_feas": tol if feas_tol is None else max(tol, feas_tol), "tol_infeas_abs": tol,
                "tol_infeas_rel": tol, "tol_ktratio": CLARABEL_KTRATIO_TOL,
                "static_regularization_constant": CLARABEL_STATIC_REG, "max_iter": CLARABEL_MAX_ITER}
    if columns < CLARABEL_REFINE_LARGE:
        settings["iterative_refinement_reltol"] = settings["iterative_refinement_abstol"] = CLARABEL_REFINE_TOL
    if time_limit is not None:
        settings["time_limit"] = float(time_limit)
    return {**settings, **(options or {})}


@dataclass
class MergedSolution:
    """Clarabel's solution of a form with merged columns (:mod:`tpm_models.solvers.merged_columns`), its point
    mapped back to the original form's columns and rows; the rest is Clarabel's, of its run."""

    x: np.ndarray
    s: np.ndarray
    z: np.ndarray
    status: object
    iterations: int
    obj_val: float
    obj_val_dual: float
    r_prim: float
    r_dual: float


def _solve_at(P, q, A, b, cones, tol: float, time_limit: float | None, options: dict | None = None,
              columns: int = 0, feas_tol: float | None = None, gap_tol: float | None = None,
              merged: MergedColumns | None = None):
    """One Clarabel run on the form ``(P, q, A, b, cones)`` (``cones``: :class:`Cone` s); with ``merged``, on the
    form with those columns merged, its point mapped back (the merged form's copy here is let go once Clarabel
    holds its own)."""
    import clarabel

    settings = clarabel.DefaultSettings()
    for key, value in clarabel_settings(tol, time_limit, options, columns, feas_tol, gap_tol).items():
        if not hasattr(settings, key):
            raise ValueError(f"Clarabel has no setting {key!r} (clarabel.DefaultSettings)")
        setattr(settings, key, value)
    if merged is None:
        return clarabel.DefaultSolver(P, q, A, b, [clarabel_cone(c) for c in cones], settings).solve()
    Pm, qm, Am, bm, conesm = merged.form(P, q, A, b, cones)
    solver = clarabel.DefaultSolver(Pm, qm, Am, bm, [clarabel_cone(c) for c in conesm], settings)
    del Pm, qm, Am, bm
    solution = solver.solve()
    x, s, z = merged.point(solution.x, solution.s, solution.z)
    return MergedSolution(x, s, z, solution.status, int(solution.iterations), float(solution.obj_val),
                          float(solution.obj_val_dual), float(solution.r_prim), float(solution.r_dual))


def meets(solution, tol: float) -> bool:
    """Whether Clarabel's point meets ``tol`` by Clarabel's own tests: the duality gap, absolute or relative (to
    ``max(1, min(|primal|, |dual|))``), and its scaled primal and dual residuals."""
    p, d = float(solution.obj_val), float(solution.obj_val_dual)
    if not (np.isfinite(p) and np.isfinite(d)):
        return False
    gap = abs(p - d)
    return (gap <= tol or gap <= tol * max(1.0, min(abs(p), abs(d)))) and max(solution.r_prim, solution.r_dual) <= tol


def almost_residuals(solution) -> float | None:
    """The larger of Clarabel's scaled primal and dual residuals of an ``AlmostSolved`` point with finite objectives,
    else ``None``: the gate of the polish of such a point (:data:`CLARABEL_POLISH_ALMOST_TOL`), which mends the gap."""
    p, d = float(solution.obj_val), float(solution.obj_val_dual)
    if str(solution.status) != "AlmostSolved" or not (np.isfinite(p) and np.isfinite(d)):
        return None
    residual = max(float(solution.r_prim), float(solution.r_dual))
    return residual if np.isfinite(residual) else None


def almost_residual(solution) -> float | None:
    """The largest of Clarabel's scaled primal and dual residuals and the duality gap relative to the objective
    (0 at or below 1e-12 absolute, the certificate's ``GAP_FLOOR``) of an ``AlmostSolved`` point, else ``None``: the
    measure of :data:`CLARABEL_LAST_RESORT_TOL` (:func:`almost_residuals` and the gap)."""
    residuals = almost_residuals(solution)
    if residuals is None:
        return None
    p, d = float(solution.obj_val), float(solution.obj_val_dual)  # finite (almost_residuals)
    gap = abs(p - d)
    return max(residuals, 0.0 if gap <= GAP_FLOOR else gap / max(abs(p), abs(d)))


def clarabel_solve(P, q, A, b, cones: list[Cone], time_limit: float | None = None,
                   polish_point: bool = CLARABEL_POLISH, options: dict | None = None,
                   judged_by_certificate: bool = False, tols: tuple[float, ...] = CLARABEL_TOLS,
                   polish_almost: bool = False, columns: int = 0, almost=None,
                   feas_tol: float | None = None, gap_tol: float | None = None,
                   merge: bool = MERGE_COLUMNS) -> ClarabelRun:
    """Clarabel on :math:`\\min \\tfrac12 x^\\top Px + q^\\top x` s.t. :math:`Ax + s = b`, :math:`s \\in` ``cones``
    (``P`` upper triangular, ``P`` and ``A`` scipy CSC) with its settings (:func:`clarabel_settings`, the
    user's ``options`` over them), along :data:`CLARABEL_TOLS`;
    an optimal point (``"Solved"``, also for an ``AlmostSolved`` point that meets :data:`CLARABEL_ACCEPT_TOL`) is
    polished (:func:`tpm_models.solvers.polish.polish`) when ``polish_point``. The backend
    (``solve(model, "clarabel")``) and the dense adapter :mod:`tpm_models.learn.fastconic` share it.
    ``judged_by_certificate``: the caller certifies the point on the model (the backend does, through ``solve()``),
    so the best ``AlmostSolved`` point may be taken when no run meets 1e-8 (:data:`CLARABEL_LAST_RESORT_TOL`), and
    with ``polish_almost`` a point short of 1e-8 polished to a KKT point (:data:`CLARABEL_POLISH_ALMOST_TOL`).
    ``tols``: the tolerances of the runs before the rescue (:data:`CLARABEL_TOLS`;
    :data:`~tpm_models.solvers.backends.clarabel.SOC_FORM_TOLS`). ``columns``: the size that picks the iterative
    refinement (:data:`CLARABEL_REFINE_LARGE`; 0: always :data:`CLARABEL_REFINE_TOL`). ``almost(x, s, z, accept) ->
    Polished``: with ``polish_almost``, the polish of such a point on another form
    (:func:`~tpm_models.solvers.backends.clarabel.run_clarabel`: on the power cones of a form written as second-order
    cones); its accepted point is then left in ``polished`` for the caller, and ``x``, ``s``, ``z`` stay Clarabel's.
    ``feas_tol``, ``gap_tol``: :func:`clarabel_settings`'s, for every run before the rescue. ``merge``: each run is on
    the form with the columns of :func:`~tpm_models.solvers.merged_columns.rank_one_columns` merged, its point mapped
    back (:data:`~tpm_models.solvers.merged_columns.MERGE_COLUMNS`)."""
    merged = rank_one_columns(A) if merge else None
    rescued, last_resort, last_polished = False, None, None
    best: tuple[float, object, float] | None = None  # the best AlmostSolved point: (residual, solution, tol)
    near: tuple[float, object, float] | None = None  # the AlmostSolved point of least residuals (almost_residuals)
    early: Polished | None = None  # an AlmostSolved point short of 1e-8, polished (CLARABEL_POLISH_ALMOST_TOL)
    tried = not ((polish_point or almost is not None) and judged_by_certificate and polish_almost)

    def keep_best(sol, at: float) -> None:
        nonlocal best, near
        residual = almost_residual(sol)
        if residual is not None and (best is None or residual < best[0]):
            best = (residual, sol, at)
        residuals = almost_residuals(sol)
        if residuals is not None and (near is None or residuals < near[0]):
            near = (residuals, sol, at)

    def polish_almost_solved(sol, accept: float, attempts: int | None = None) -> Polished:
        """The polish of an ``AlmostSolved`` point (on ``almost``'s form when given), accepted at ``accept``."""
        point = tuple(np.asarray(v, dtype=float) for v in (sol.x, sol.s, sol.z))
        if almost is not None:
            return almost(*point, accept)
        return polish(P, q, A, b, cones, *point, attempts=attempts, accept=accept)

    for tol in tols:
        solution = _solve_at(P, q, A, b, cones, tol, time_limit, options, columns, feas_tol, gap_tol, merged)
        status = str(solution.status)
        if status == "Solved" or status == "AlmostSolved" and meets(solution, CLARABEL_ACCEPT_TOL):
            status = "Solved"
            break
        if status in ("PrimalInfeasible", "DualInfeasible", "MaxTime"):
            break
        keep_best(solution, tol)
        residual = almost_residuals(solution)
        if not tried and residual is not None and residual <= CLARABEL_POLISH_ALMOST_TOL:
            tried = True
            early = polish_almost_solved(solution, CLARABEL_POLISH_ALMOST_ACCEPT, attempts=1)
            if early.accepted:
                early.reason = f"short of {CLARABEL_ACCEPT_TOL:g} (residuals {residual:.1e}), " + early.reason
                status = "Solved"
                break
            early = None
    else:  # every tolerance failed: once more with a larger regularisation (CLARABEL_RESCUE_REG)
        rescue = {"static_regularization_constant": CLARABEL_RESCUE_REG, **(options or {})}
        tol = CLARABEL_ACCEPT_TOL
        again = _solve_at(P, q, A, b, cones, tol, time_limit, rescue, columns, merged=merged)
        if str(again.status) == "Solved" or str(again.status) == "AlmostSolved" and meets(again, tol):
            solution, status, rescued = again, "Solved", True
        else:
            keep_best(again, tol)
            if judged_by_certificate and best is not None and best[0] <= CLARABEL_LAST_RESORT_TOL:
                last_resort, solution, tol = best
                rescued = solution is again
                status = "Solved"
            elif CLARABEL_LAST_RESORT_POLISH and judged_by_certificate and polish_almost and near is not None \
                    and near[0] <= CLARABEL_POLISH_ALMOST_TOL and (polish_point or almost is not None):
                early = polish_almost_solved(near[1], CLARABEL_LAST_RESORT_TOL)
                if early.accepted:  # CLARABEL_LAST_RESORT_POLISH
                    _, solution, tol = near
                    rescued, last_polished, status = solution is again, early.residual_after, "Solved"
                else:
                    early = None
    run = ClarabelRun(np.asarray(solution.x, dtype=float), np.asarray(solution.s, dtype=float),
                      np.asarray(solution.z, dtype=float), status, str(solution.status), tol, int(solution.iterations),
                      float(solution.obj_val), float(solution.obj_val_dual), float(solution.r_dual), None)
    run.rescued, run.last_resort, run.merged, run.last_polished = rescued, last_resort, merged, last_polished
    if early is not None:
        run.polished = early
    elif status == "Solved" and polish_point:
        run.polished = polish(P, q, A, b, cones, run.x, run.s, run.z)
    if run.polished is not None and run.polished.accepted and not (early is not None and almost is not None):
        run.interior = (run.x, run.s, run.z)
        run.x, run.z = run.polished.x, run.polished.z
        run.s = b - A @ run.x
    return run
