"""The verifier's record and its report: :class:`Verification`, one of three verdicts (:data:`VERDICTS`), and the
table ``tpm-models verify`` prints (:meth:`Verification.table`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tpm_models.checks.verify.model import SemiInfiniteSolution

VERIFIED = "verified"
"""Verdict: the counterpart's optimum is the semi-infinite one and its point is robust (exit 0)."""
NOT_A_COUNTERPART = "not a counterpart"
"""Verdict: a measured fact contradicts the claim: a perturbation of the set that breaks the counterpart's point,
its objective that is not the worst case at its point, or optima that differ (the witness says how) (exit 1)."""
UNDECIDED = "could not decide"
"""Verdict: nothing contradicts the claim, but a solve it needs did not end: a licence limit, a time-out, a solver
failure, an unbounded or infeasible counterpart (:attr:`Verification.undecided` says which) (exit 3)."""
VERDICTS = (VERIFIED, NOT_A_COUNTERPART, UNDECIDED)




@dataclass
class Verification:
    """What :func:`tpm_models.checks.verify.verify` measured, in the style of Theorem 1,
    and its verdict (:attr:`verdict`, one of :data:`VERDICTS`)."""

    method: str
    counterpart: str
    verified: bool
    reasons: list[str]
    """What contradicts the claim (empty when verified or undecided)."""
    counterpart_objective: float | None
    semi_infinite: SemiInfiniteSolution
    gap: float
    """:func:`objective_gap` of the two optimal values (relative, with the floor :data:`OBJECTIVE_ATOL`)."""
    distance: float
    """:math:`\\|x_c-x_s\\|_2/\\max(\\|x_s\\|_2,1)` over the mapped first-stage variables."""
    violation: float
    """Worst violation of the counterpart's solution over the uncertainty sets."""
    violating_row: str
    violating_delta: np.ndarray | None
    """The :math:`\\delta` that attains :attr:`violation` (None if no uncertain row is violated)."""
    objective_at_counterpart: float
    """The semi-infinite objective at the counterpart's solution."""
    consistency: float
    """:func:`objective_gap` of the counterpart's objective and :attr:`objective_at_counterpart`."""
    counterpart_seconds: float
    tolerances: dict[str, float | None]
    witness: str = ""
    """When the counterpart excludes robust points: what it does with the semi-infinite optimum."""
    counterpart_values: dict = field(default_factory=dict)
    compared: list[str] = field(default_factory=list)
    """The first-stage variables :attr:`distance` is measured on."""
    undecided: list[str] = field(default_factory=list)
    """Why no verdict could be reached (a solve that did not end); empty when one was."""

    @property
    def verdict(self) -> str:
        """:data:`VERIFIED`, :data:`NOT_A_COUNTERPART` (:attr:`reasons`) or :data:`UNDECIDED` (:attr:`undecided`)."""
        if self.reasons:
            return NOT_A_COUNTERPART
        return UNDECIDED if self.undecided or not self.verified else VERIFIED

    def table(self) -> str:
        """The report as a table (what ``tpm-models verify`` prints)."""
        tol = self.tolerances
        si = self.semi_infinite

        def flag(value, t):
            if t is None or not np.isfinite(value):
                return "info" if t is None else "-"
            return "pass" if value <= t else "FAIL"

        lines = [f"counterpart {self.counterpart} vs the semi-infinite model by {self.method} ({si.message})",
                 f"{'measure':<42} {'value':>16} {'tolerance':>10}  result"]
        cp = math.nan if self.counterpart_objective is None else self.counterpart_objective
        lines.append(f"{'counterpart optimum':<42} {cp:>16.10g}")
        lines.append(f"{'semi-infinite optimum (' + self.method + ')':<42} {si.objective:>16.10g}")
        rows = [("relative gap of the optima, floor " + format(tol.get("atol") or 0, ".0e"), self.gap,
                 tol["objective"]),
                ("distance of first stage " + ",".join(self.compared), self.distance, tol["solution"]),
                ("worst violation over U (counterpart point)", self.violation, tol["violation"]),
                ("objective at counterpart point vs its value", self.consistency, tol["objective"])]
        for name, value, t in rows:
            tt = "-" if t is None else f"{t:.0e}"
            lines.append(f"{name:<42} {value:>16.3e} {tt:>10}  {flag(value, t)}")
        lines.append(f"{'route':<42} {si.termination + ', ' + format(si.seconds, '.2f') + ' s':>16}")
        if self.violation > (tol["violation"] or 0) and self.violating_row:
            d = "" if self.violating_delta is None else np.array2string(
                np.asarray(self.violating_delta), precision=4, threshold=8, max_line_width=200)
            lines.append(f"violating point: row {self.violating_row}" + (f", delta = {d}" if d else ""))
        if self.witness:
            lines.append(f"witness: {self.witness}")
        verdict = self.verdict
        if verdict == VERIFIED:
            text = "VERIFIED: a robust counterpart on this instance"
        elif verdict == NOT_A_COUNTERPART:
            text = "NOT a counterpart: " + "; ".join(self.reasons)
        else:
            text = "COULD NOT DECIDE: " + "; ".join(self.undecided or ["no measure contradicts it, none confirms it"])
        lines.append("verdict: " + text)
        return "\n".join(lines)

    __str__ = table


