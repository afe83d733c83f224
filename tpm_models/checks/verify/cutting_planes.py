"""Route (a) of the verifier: the semi-infinite model by cutting planes with exact separation.

The masters are the nominal model over finite scenario sets, solved by :func:`tpm_models.solvers.solve`; the
separation is exact, by the support function of each set (:meth:`tpm_models.checks.verify.model.SemiInfinite.row_worst`,
:meth:`~tpm_models.checks.verify.model.SemiInfinite.term_worst`). For a norm ball it is the closed form (25)
generalised: :math:`\\max_{\\|\\delta\\|_p\\le\\varepsilon} g^\\top\\delta = \\varepsilon\\|g\\|_{p'}`, attained at
:func:`tpm_models.models.norms.worst_case_delta`. Each round's separations are :class:`Cut` records.
What was measured to choose the tolerances is in ``docs/verify.md`` (section "Why the tolerances").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pyomo.environ as pyo

from tpm_models.checks.verify.model import (
    Round,
    RowOnClone,
    SemiInfinite,
    SemiInfiniteSolution,
    evaluate_point,
    row_with,
    scenario_sum,
)
from tpm_models.models.uncertainty import Uncertain
from tpm_models.solvers import NoOptimalSolutionError, SolveResult, solve
from tpm_models.solvers.backends.piqp import PIQP_DENSE_MAX
from tpm_models.solvers.backends.registry import accurate_solvers, backend_for, model_size, time_limited_defaults

log = logging.getLogger(__name__)

CUT_TOL = 1e-11
"""Largest worst-case violation (absolute) of an uncertain row or term that the cutting planes accept at their
last round: below it no cut is added and the point is returned."""

MAX_ROUNDS = 500
"""Most cutting-plane rounds before :func:`solve_cutting_planes` gives up."""

def master_fallback() -> list[str]:
    """Solvers :func:`solve_cutting_planes` tries, in order, on a master its ``"default"`` solver does not solve (a
    dense QP solver can stop at its iteration limit on a master late in the rounds): the installed QP backends that
    declare an accurate point and honour a time limit
    (:func:`~tpm_models.solvers.backends.registry.accurate_solvers`; Ipopt here: DAQP, accurate too, ran over 60 s on
    such a master, ``docs/verify.md``)."""
    return accurate_solvers("QP", time_limit=True)


MASTER_LARGE = 50_000
"""Variables from which the masters' ``"default"`` is Clarabel (:func:`master_large_solvers`), not the QP default
(PIQP below :data:`tpm_models.solvers.backends.registry.HUGE_MODEL`). Measured on (22) at :math:`p = 2`
(``docs/solvers.md``, "(22) by cutting planes"; a master of (22) has :math:`m + n + 1` variables): at
:math:`5 \\cdot 10^4` points PIQP's two masters took 1.4 and 2.0 s, Clarabel's 1.8 and 5.0 s; at
:math:`7.5 \\cdot 10^4` points PIQP's cutting planes had not ended after 240 s where Clarabel's masters took 8 and
15 s; at :math:`10^5` PIQP's second master had not returned after minutes. PIQP honours no time limit, so nothing
would end it: the threshold takes the safe side from the last size where PIQP was seen to finish."""

def master_large_solvers(size: int) -> list[str]:
    """The masters' solvers, in order, from :data:`MASTER_LARGE` variables on (then :func:`master_fallback`): the
    installed defaults of a QP of ``size`` variables that honour a time limit and take any QP
    (:func:`~tpm_models.solvers.backends.registry.time_limited_defaults`; Clarabel here: PIQP honours none)."""
    return time_limited_defaults("QP", size)


MASTER_OPTIONS: dict[str, dict] = {"piqp": {"reg_lower_limit": 1e-13}}
"""The masters' own settings, by solver (``solve(..., options=...)``, over the library's), on masters of at most
:data:`~tpm_models.solvers.backends.piqp.PIQP_DENSE_MAX` variables (PIQP's dense solver, where they were measured).
PIQP's regularisation floor ``reg_lower_limit`` (its default 1e-10) is 100 times the 1e-12 residuals it is asked
for (:data:`~tpm_models.solvers.common.DENSE_QP_TOL`), and on the late masters of (22) at :math:`p = 3`, Iris class
1 (``tpm-models check``: 155 variables, 150-765 rows, most of them cuts) it stalled for 2,133-7,061 iterations (18 s
for the 8 masters); at 1e-13 the same 8 masters took 10-321 iterations (0.8 s). Over the 24 runs of (22) by cutting
planes in ``tpm-models check --dataset iris wine`` the rounds were the same, the objectives within 1.1e-14 and ``w``
within 1.4e-10 of the runs at PIQP's default, and the 24 runs took 6.9 s instead of 21.8 s (their masters 2,121 PIQP
iterations instead of 18,362). The library's default stays for every other QP: at 1e-13 the check's 415 other PIQP
solves took 10% more iterations (4,548 against 4,136)."""


class Cut(NamedTuple):
    """One separation of a round: the worst violation of an uncertain row or term at the master's point and the
    :math:`\\delta` that attains it. ``row`` is set for a row, ``term`` (its index in ``SemiInfinite.terms``)
    for a term."""

    violation: float
    delta: np.ndarray
    row: RowOnClone | None = None
    term: int | None = None


def solve_cutting_planes(
    nominal: pyo.ConcreteModel, uncertain: Sequence[Uncertain], solver: str | Sequence[str] = "default",
    tol: float = CUT_TOL, max_rounds: int = MAX_ROUNDS,
) -> SemiInfiniteSolution:
    """The semi-infinite model by cutting planes: route (a) of :mod:`tpm_models.checks.verify`.

    The master is the nominal model with every uncertain row replaced by its copies at finite
    scenario sets (first :meth:`UncertaintySet.start`) and every uncertain term by an epigraph
    variable :math:`\\eta_k \\ge \\omega_k a_k(x)^\\top\\delta` over its scenarios (:math:`\\le` when
    the objective is maximised). Each round solves the
    master with :func:`tpm_models.solvers.solve` (``solver``: a name, or names tried in order on a master
    the first fails; ``"default"``: :func:`master_solvers`, then :func:`master_fallback`; each solver given its
    :data:`MASTER_OPTIONS`), separates every row and term exactly
    (support functions; (25) for norm balls) and adds the worst :math:`\\delta` where the violation
    exceeds ``tol`` (or the accuracy a set claims for its support, :attr:`UncertaintySet.support_accuracy`, when it
    is larger: a support computed by a conic solver). ``lower_bound`` is the last master's objective; ``objective``
    the semi-infinite objective at the final point.

    Raises :class:`tpm_models.solvers.NoOptimalSolutionError` if a master fails and ``RuntimeError``
    after ``max_rounds`` rounds with a violation above ``tol``.
    """
    start = time.perf_counter()
    si = SemiInfinite(nominal, uncertain)
    tol = max([tol, *(row.uncertainty.support_accuracy for row in si.rows),
               *(term.uncertainty.support_accuracy for term in si.terms)])
    m = si.model
    m.verify_cuts = pyo.ConstraintList(doc="the uncertain rows at their scenarios")
    m.verify_eta_cuts = pyo.ConstraintList(doc="eta_k >= weight_k a_k(x)'delta at the scenarios")
    m.verify_eta = pyo.Var(range(len(si.terms)), doc="eta_k: worst case of uncertain term k over its scenarios")
    for item in si.rows:
        item.row.deactivate()
        start_delta = item.uncertainty.start(len(item.coefficients))
        m.verify_cuts.add(row_with(item.row, scenario_sum(item.coefficients, start_delta)))
    for k, term in enumerate(si.terms):  # eta_k >= (minimised) or <= (maximised) the term at the scenarios
        start_delta = term.uncertainty.start(len(term.coefficients))
        m.verify_eta_cuts.add(si.sense * (m.verify_eta[k] - scenario_sum(term.coefficients, start_delta, term.weight))
                              >= 0)
    si.objective.set_value(si.nominal_objective + sum(m.verify_eta[k] for k in range(len(si.terms))))
    history = []
    options = master_options(m)
    solvers = master_solvers(m, [solver] if isinstance(solver, str) else list(solver), options)
    used = set()
    for rounds in range(1, max_rounds + 1):
        result = solve_master(m, solvers, options)
        used.add(result.solver)
        at_point: dict = {}  # the supports at this round's point, shared by rows and terms of the same set
        cuts = [Cut(*si.row_worst(item, at_point), row=item) for item in si.rows]
        for k, term in enumerate(si.terms):
            worst, d = si.term_worst(term, at_point)
            cuts.append(Cut(si.sense * (worst - m.verify_eta[k].value), d, term=k))
        violation = max((cut.violation for cut in cuts), default=0.0)
        master = result.objective
        if master is None:  # solve() returns only optimal results, which carry their objective
            raise RuntimeError(f"cutting-plane master: {result.solver} returned no objective")
        history.append(Round(rounds, master, violation))
        log.info("cutting plane round %d: master %.12g, worst violation %.3g", rounds, master, violation)
        if violation <= tol:
            values = {k: v for k, v in si.values().items() if k != "verify_eta"}
            ev = evaluate_point(nominal, uncertain, values)
            return SemiInfiniteSolution(
                "cutting-plane", ev.objective, values, ev.violation, master, rounds,
                time.perf_counter() - start, "optimal", f"{rounds} rounds, master solver {'/'.join(sorted(used))}",
                history,
            )
        for cut in cuts:
            if cut.violation <= tol:
                continue
            if cut.row is not None:
                m.verify_cuts.add(row_with(cut.row.row, scenario_sum(cut.row.coefficients, cut.delta)))
            elif cut.term is not None:
                term = si.terms[cut.term]
                m.verify_eta_cuts.add(si.sense * (m.verify_eta[cut.term]
                                                  - scenario_sum(term.coefficients, cut.delta, term.weight)) >= 0)
    raise RuntimeError(f"cutting planes did not reach a violation <= {tol:g} in {max_rounds} rounds "
                       f"(last {history[-1].violation:.3g}); raise max_rounds or tol")


def master_solvers(m: pyo.ConcreteModel, solvers: list[str], options: dict[str, dict] | None = None) -> list[str]:
    """The solvers the masters are tried with: ``solvers`` as given, unless it is ``["default"]``: then
    :func:`master_large_solvers` from :data:`MASTER_LARGE` variables (when one is installed), else the default
    of the master's class and size, first by its name when ``options`` (:func:`master_options`) holds settings for it
    (run with them), then as ``"default"`` (the library's, with its fallbacks); each followed by
    :func:`master_fallback`. The rounds add rows, not variables, so the first master's size and class hold for all
    (``m``: a master, with its objective)."""
    if solvers != ["default"]:
        return solvers
    size = model_size(m)
    large = master_large_solvers(size) if size >= MASTER_LARGE else []
    if large:
        solvers = large
    elif options:
        first = backend_for(m, "default")[0].name
        solvers = [first, "default"] if first in options else solvers
    return solvers + [s for s in master_fallback() if s not in solvers]


def master_options(m: pyo.ConcreteModel) -> dict[str, dict]:
    """:data:`MASTER_OPTIONS` for the master ``m`` if it has at most
    :data:`~tpm_models.solvers.backends.piqp.PIQP_DENSE_MAX` variables, else none."""
    return dict(MASTER_OPTIONS) if model_size(m) <= PIQP_DENSE_MAX else {}


def solve_master(m: pyo.ConcreteModel, solvers: Sequence[str], options: dict[str, dict] | None = None) -> SolveResult:
    """The master ``m`` by the first of ``solvers`` that solves it (each failure logged), each given its settings
    in ``options`` (by solver name; ``"default"`` none); the last one's
    :class:`~tpm_models.solvers.NoOptimalSolutionError` if none does."""
    for k, name in enumerate(solvers):
        try:
            return solve(m, name, options=(options or {}).get(name))
        except NoOptimalSolutionError as exc:
            if k == len(solvers) - 1:
                raise
            log.warning("cutting-plane master: %s failed (%s); trying %s", name, exc.result.termination.value,
                        solvers[k + 1])
    raise ValueError("no master solver given")
