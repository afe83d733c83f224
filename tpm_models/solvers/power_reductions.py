"""The reductions of a conic program with power cones (:class:`~tpm_models.solvers.reductions.Reduction` s), for
Clarabel's runs at scale (why and when: ``docs/solvers.md``, "Power cones as second-order cones")."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from tpm_models.solvers.powsoc import dual_of_power_form, implied_bounds, pow_as_soc_map, without_rows
from tpm_models.solvers.reductions import ConicProgram, ConicSolution


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
