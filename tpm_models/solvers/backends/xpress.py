"""Xpress through Pyomo's ``xpress_direct``; the pip wheel's Community licence is size-limited."""

from __future__ import annotations

import math

from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.pyomo_interfaces import legacy_runner

TOO_MANY_ROWS_AND_COLUMNS = "?120 "
"""How Xpress's error 120 begins (``xpress.SolverError`` carries no code but its message's number): the Community
licence's limit of 5,000 rows plus columns."""

register_backend(
    "xpress", "xpress", {"LP", "QP", "SOCP"},
    legacy_runner("xpress_direct", lambda t: {
        "bargapstop": common.OPTIMALITY_TOL, "barprimalstop": common.OPTIMALITY_TOL,
        "bardualstop": common.OPTIMALITY_TOL, "miprelstop": common.MIP_GAP,
        **({"maxtime": -int(math.ceil(t))} if t else {}),
    }),
    tee=True, integers=True, sos=True,
    licence_limit=lambda exc: type(exc).__name__ == "SolverError" and str(exc).startswith(TOO_MANY_ROWS_AND_COLUMNS),
)
