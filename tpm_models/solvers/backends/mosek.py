"""MOSEK (the paper's solver) through Pyomo's ``mosek_direct``, when ``mosek`` is installed and licensed. LP and QP
only: ``mosek_direct`` maps cones only from ``pyomo.kernel.conic`` constraints (an ``environ`` model's cone rows go
as quadratic constraints; its code read, not run: no licence on this machine)."""

from __future__ import annotations

import functools

import pyomo.core as pyo
from pyomo.opt import SolverFactory

from tpm_models.solvers import common
from tpm_models.solvers.backends.registry import register_backend
from tpm_models.solvers.pyomo_interfaces import legacy_runner, load_pyomo_solvers


@functools.cache
def mosek_licensed() -> bool:
    """MOSEK needs a licence: Pyomo's ``license_is_valid`` checks one out (once per process)."""
    load_pyomo_solvers()
    return bool(SolverFactory("mosek_direct").license_is_valid())


def mosek_refuses(model: pyo.ConcreteModel | None) -> str | None:
    """Why MOSEK cannot run here (no licence), or ``None``."""
    if not mosek_licensed():
        return ("mosek is installed but has no licence (MOSEKLM_LICENSE_FILE unset or no valid "
                "mosek.lic in ~/mosek; https://www.mosek.com/products/academic-licenses/)")
    return None


register_backend(
    "mosek", "mosek", {"LP", "QP"},
    legacy_runner("mosek_direct", lambda t: {
        "dparam.intpnt_co_tol_rel_gap": common.OPTIMALITY_TOL, "dparam.intpnt_qo_tol_rel_gap": common.OPTIMALITY_TOL,
        **({"dparam.optimizer_max_time": t} if t else {}),
    }),
    tee=True, refuses=mosek_refuses, ready=mosek_licensed,
)
