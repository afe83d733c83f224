"""The rewrites of a conic program before Clarabel's run, each a reduction: :meth:`forward` maps a
:class:`~tpm_models.solvers.conic_program.ConicProgram` to the program the solver runs on, :meth:`back` maps that
program's solution to one of the program it was given (cvxpy's ``reductions/`` are the model). A reduction is used
once: ``forward`` keeps what ``back`` needs.

===============================  ==================================================================================
reduction                        rewrite
===============================  ==================================================================================
:class:`DropImpliedBounds`       the bound rows other rows imply left out (:func:`~tpm_models.solvers.powsoc.
                                 implied_bounds`): the same feasible set, their :math:`z = 0`
:class:`PowAsSoc`                power cones of a rational exponent as trees of second-order cones
                                 (:mod:`tpm_models.solvers.powsoc`), exact
:class:`MergeColumns`            columns that enter a block of rows in fixed ratios merged into one
                                 (:mod:`tpm_models.solvers.merged_columns`), exact
===============================  ==================================================================================

:func:`reduce` chains them forward, :func:`restore` back, last first. Which ones the Clarabel backend applies, and
in which order: :func:`tpm_models.solvers.backends.clarabel.reductions_for`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import scipy.sparse as sp

from tpm_models.solvers.conic_program import ConicProgram, ConicSolution
from tpm_models.solvers.merged_columns import MergedColumns, rank_one_columns
from tpm_models.solvers.powsoc import dual_of_power_form, implied_bounds, pow_as_soc_map, without_rows


class Reduction(Protocol):
    """A rewrite of a conic program and the map of its solution back (module docstring)."""

    def forward(self, program: ConicProgram) -> ConicProgram:
        """The program the solver runs on (``program`` itself when there is nothing to rewrite)."""

    def back(self, solution: ConicSolution) -> ConicSolution:
        """A solution of the program given to :meth:`forward` from one of the program it returned."""

    @property
    def note(self) -> str:
        """What was rewritten, for the solve's message (empty when nothing was)."""


class DropImpliedBounds:
    """Leave out the bound rows :math:`x_c \\ge 0` that a power cone and the rows beside it imply
    (:func:`~tpm_models.solvers.powsoc.implied_bounds`). Back: :math:`z = 0` on those rows, :math:`s = b - Ax` on the
    whole program. Where such a bound and the rows implying it are active together (near :math:`w_j = 0`) their
    multipliers are not unique, and the polish's readings give them the wrong signs
    (``docs/notes/bench-scale-history.md``, "Clarabel, the polish and the certificate")."""

    def __init__(self) -> None:
        self.program: ConicProgram | None = None
        self.kept: np.ndarray | None = None
        self.dropped = 0

    def forward(self, program: ConicProgram) -> ConicProgram:
        rows = implied_bounds(program.A, program.b, program.cones)
        if not rows.size:
            return program
        self.program, self.dropped = program, int(rows.size)
        A, b, cones, self.kept = without_rows(program.A, program.b, program.cones, rows)
        return ConicProgram(program.P, program.q, A, b, cones)

    def back(self, solution: ConicSolution) -> ConicSolution:
        if self.kept is None or self.program is None:  # set together by forward
            return solution
        z = np.zeros(self.program.shape[0])
        z[self.kept] = solution.z
        return ConicSolution(solution.x, self.program.slack(solution.x), z)

    @property
    def note(self) -> str:
        return f"; {self.dropped} implied bounds left out of Clarabel's run" if self.dropped else ""


class PowAsSoc:
    """Write the power cones of a rational exponent as second-order cones (:func:`~tpm_models.solvers.powsoc.
    pow_as_soc_map`): new columns and rows after the program's own. Back: the first columns, :math:`s = b - Ax`,
    and :math:`z_{1..m} + B^\\top z_{m+1..}` (:func:`~tpm_models.solvers.powsoc.dual_of_power_form`), which keeps the
    stationarity on the program's columns."""

    def __init__(self) -> None:
        self.program: ConicProgram | None = None
        self.map: sp.csr_matrix | None = None
        self.columns = 0

    def forward(self, program: ConicProgram) -> ConicProgram:
        soc, self.map = pow_as_soc_map(program)
        if self.map is None:
            return program
        self.program, self.columns = program, program.shape[1]
        return soc

    def back(self, solution: ConicSolution) -> ConicSolution:
        if self.map is None or self.program is None:  # set together by forward
            return solution
        x, z = dual_of_power_form(self.program, self.map, solution.x, solution.z)
        return ConicSolution(x, self.program.slack(x), z)

    @property
    def note(self) -> str:
        return f"; power cones written as second-order cones ({self.columns:,} columns)" if self.map is not None else ""


class MergeColumns:
    """Merge the columns of :func:`~tpm_models.solvers.merged_columns.rank_one_columns` (read once, at the first
    :meth:`forward`). Back: the program's own columns and rows (:meth:`~tpm_models.solvers.merged_columns.
    MergedColumns.point`); the solver's own :math:`s` is kept."""

    def __init__(self) -> None:
        self.merged: MergedColumns | None = None
        self.read = False

    def forward(self, program: ConicProgram) -> ConicProgram:
        if not self.read:
            self.merged, self.read = rank_one_columns(program.A), True
        if self.merged is None:
            return program
        return ConicProgram(*self.merged.form(program.P, program.q, program.A, program.b, program.cones))

    def back(self, solution: ConicSolution) -> ConicSolution:
        if self.merged is None:
            return solution
        return ConicSolution(*self.merged.point(solution.x, solution.s, solution.z))

    @property
    def note(self) -> str:
        return "; " + self.merged.note if self.merged is not None else ""


def reduce(program: ConicProgram, reductions: list[Reduction]) -> ConicProgram:
    """``program`` through every reduction's :meth:`~Reduction.forward`, in order."""
    for reduction in reductions:
        program = reduction.forward(program)
    return program


def restore(solution: ConicSolution, reductions: list[Reduction]) -> ConicSolution:
    """A solution of :func:`reduce`'s program mapped back through ``reductions``, the last first."""
    for reduction in reversed(reductions):
        solution = reduction.back(solution)
    return solution
