"""``linear-decomposition``: the QPs whose dual is a box and one equality, solved on that dual with :math:`w` explicit.

It takes a QP of the shape of :mod:`tpm_models.solvers.slack_form` ((15), (2), (3) and any model written the same
way; every other model it refuses before it runs, naming the part of the shape it lacks), solves the dual by
:func:`tpm_models.solvers.linear_dual.solve_linear_dual`, recovers and loads the primal point
(:meth:`~tpm_models.solvers.slack_form.SlackForm.point`) and returns the dual's :math:`\\lambda` as the rows' duals;
a QP whose dual has no point is ``UNBOUNDED``. ``options``: the keywords of ``solve_linear_dual`` (:data:`OPTIONS`;
any other raises ``ValueError``). No time limit.
"""

from __future__ import annotations

import warnings
from typing import Any

import pyomo.core as pyo

from tpm_models.solvers.backends.registry import package_version, register_backend
from tpm_models.solvers.common import Termination
from tpm_models.solvers.linear_dual import solve_linear_dual
from tpm_models.solvers.program import Program
from tpm_models.solvers.slack_form import SlackForm, slack_form
from tpm_models.solvers.working_sets import DecompositionError, DecompositionWarning

TOL = 1e-13
"""The backend's KKT gap, relative to :math:`\\nu\\kappa` (``solve_linear_dual``'s ``tol``): at the estimators' 1e-9
the certificate, which judges the duality gap relative to the objective, failed (3) on Iris (objective -3.5e-7)."""

OPTIONS = ("tol", "working_set", "outer_working_set", "max_outer", "accept_tol")
"""The settings ``solve(model, "linear-decomposition", options=...)`` takes (those of ``solve_linear_dual``)."""


def run_linear_decomposition(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
                             prepared: Any = None) -> tuple[Termination, dict | None, str]:
    """The backend (module docstring): ``prepared`` is the model's :class:`~tpm_models.solvers.slack_form.SlackForm`
    (read afresh when not given)."""
    form: SlackForm = slack_form(Program(model)) if prepared is None else prepared
    unknown = sorted(set(options or {}) - set(OPTIONS))
    if unknown:
        raise ValueError(f"linear-decomposition has no settings {unknown}; it takes {list(OPTIONS)}")
    if form.unbounded is not None:
        return Termination.UNBOUNDED, None, form.unbounded
    m = len(form.A_hat)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DecompositionWarning)
        try:
            result = solve_linear_dual(form.A_hat, form.g_hat / form.nu, form.nu, form.u * m,
                                       **{"tol": TOL, **(options or {})})
        except DecompositionError as exc:
            return Termination.ITERATION_LIMIT, None, str(exc)
    x, rule = form.point(result.lam, result.gradient, result.v)
    for var, value in zip(form.program.free, x):
        var.set_value(float(value), skip_validation=True)
    message = (f"{result.passes} passes, {result.iterations} subproblems on {m} rows, KKT gap {result.gap:.3g} "
               f"(tol {result.tol:.3g}); theta by {rule}")
    if caught:
        message += f"; {caught[0].message}"
    return Termination.OPTIMAL, form.duals(result.lam), message


def version() -> str:
    """This library's version (the method is its own) and DAQP's (its subproblems)."""
    return f"tpm-models {package_version('tpm-models')} (daqp {package_version('daqp')})"


register_backend("linear-decomposition", "daqp", {"QP"}, run_linear_decomposition, version, time_limit=False,
                 prepare=slack_form, shape="tpm_models.solvers.slack_form", accurate_point=True)
