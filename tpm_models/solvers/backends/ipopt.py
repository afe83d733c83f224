"""Ipopt: the ``ipopt`` executable when it is on PATH, else the Ipopt library that the CasADi
wheel bundles (:mod:`tpm_models.solvers.ipopt`). The second default of SOCP and NLP (after Clarabel): the solver
of an NLP that Clarabel cannot map to its cones."""

from __future__ import annotations

import shutil
from typing import Any

import pyomo.core as pyo

from tpm_models.solvers import common
from tpm_models.solvers import ipopt as casadi_ipopt
from tpm_models.solvers.backends.registry import package_version, register_backend
from tpm_models.solvers.common import Termination
from tpm_models.solvers.pyomo_interfaces import legacy_runner

IPOPT_STATUS = {
    "Solve_Succeeded": Termination.OPTIMAL,
    "Infeasible_Problem_Detected": Termination.INFEASIBLE,
    # "Diverging_Iterates" is no proof of unboundedness (Ipopt diverges on bounded models too): an error
    "Maximum_Iterations_Exceeded": Termination.ITERATION_LIMIT,
    "Maximum_CpuTime_Exceeded": Termination.TIME_LIMIT,
    "Maximum_WallTime_Exceeded": Termination.TIME_LIMIT,
    # "Solved_To_Acceptable_Level" is deliberately not optimal: it relaxes every tolerance
}


def run_ipopt(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
              prepared: Any = None, tee: bool = False) -> tuple[Termination, dict | None, str]:
    """Ipopt with :data:`~tpm_models.solvers.ipopt.IPOPT_OPTIONS`, then the user's ``options`` (Ipopt's names);
    ``tee``: its log (``print_level`` 5) on standard output."""
    if shutil.which("ipopt"):  # an executable (idaes-pse, conda): Pyomo's .nl interface
        return legacy_runner("ipopt", lambda t: {
            **casadi_ipopt.IPOPT_OPTIONS, "max_iter": common.ITERATION_LIMIT, **({"max_cpu_time": t} if t else {}),
        })(model, time_limit, options, tee=tee)
    status, duals, message = casadi_ipopt.run(model, time_limit, common.ITERATION_LIMIT, options, tee)
    return IPOPT_STATUS.get(status, Termination.ERROR), duals, message


def ipopt_version() -> str:
    """The Ipopt library's own version, beside the casadi wheel's that bundles it."""
    major, minor, patch, _ = casadi_ipopt.ipopt_version()
    wheel = package_version("casadi")
    return f"{major}.{minor}.{patch} (casadi {wheel})" if major else f"unknown (casadi {wheel})"


register_backend("ipopt", "casadi", {"LP", "QP", "SOCP", "NLP"}, run_ipopt, version=ipopt_version, tee=True,
                 accurate_point=True, pyros=casadi_ipopt.PLUGIN_NAME)
