"""``linear-decomposition``: models whose dual is a box and one equality, solved on that dual with :math:`w` explicit.

It takes a QP of the shape of :mod:`tpm_models.solvers.slack_form` ((15), (2), (3) and any model written the same
way), and a conic model of that shape with one Euclidean norm of one radius, :mod:`tpm_models.solvers.norm_form`
((23) and (26) at p = 2, (28), with one :math:`\\varepsilon`); every other model it refuses before it runs, naming
the part of the shapes it lacks. It solves the dual by :func:`tpm_models.solvers.linear_dual.solve_linear_dual`,
recovers and loads the primal point (:meth:`~tpm_models.solvers.slack_form.SlackForm.point`, or
:meth:`~tpm_models.solvers.norm_form.NormForm.point`: (15)'s :math:`w` shrunk) and returns the rows' duals (the
dual's :math:`\\lambda`; on the norm's shape every constraint's, read off the conic duals by the form's map); a
model whose dual has no point is ``UNBOUNDED``. ``options``: the keywords of ``solve_linear_dual`` (:data:`OPTIONS`;
any other raises ``ValueError``). No time limit.
"""

from __future__ import annotations

import warnings
from typing import Any

import pyomo.core as pyo

from tpm_models.solvers.backends.registry import package_version, register_backend
from tpm_models.solvers.common import Termination
from tpm_models.solvers.linear_dual import solve_linear_dual
from tpm_models.solvers.matrices import NotAQPError
from tpm_models.solvers.norm_form import NormForm, norm_form
from tpm_models.solvers.program import Program
from tpm_models.solvers.slack_form import SlackForm, slack_form
from tpm_models.solvers.variables import set_values
from tpm_models.solvers.working_sets import DecompositionError, DecompositionWarning

TOL = 1e-13
"""The backend's KKT gap, relative to :math:`\\nu\\kappa` (``solve_linear_dual``'s ``tol``): at the estimators' 1e-9
the certificate, which judges the duality gap relative to the objective, failed (3) on Iris (objective -3.5e-7)."""

OPTIONS = ("tol", "working_set", "outer_working_set", "max_outer", "accept_tol")
"""The settings ``solve(model, "linear-decomposition", options=...)`` takes (those of ``solve_linear_dual``)."""


def decomposition_form(program: Program) -> SlackForm | NormForm:
    """``prepare`` of the backend: the program's :class:`~tpm_models.solvers.slack_form.SlackForm`, or, for a model
    with rows that are not linear, its :class:`~tpm_models.solvers.norm_form.NormForm`; :class:`NotAQPError` with
    why it is neither."""
    try:
        return slack_form(program)
    except NotAQPError as exc:
        if not program.rows.others:
            raise
        try:
            return norm_form(program)
        except NotAQPError as conic:
            raise NotAQPError(f"{exc}; nor is it (15) with one norm of one radius (tpm_models.solvers.norm_form): "
                              f"{conic}") from conic


def run_linear_decomposition(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
                             prepared: Any = None) -> tuple[Termination, dict | None, str]:
    """The backend (module docstring): ``prepared`` is the model's :func:`decomposition_form` (read afresh when not
    given)."""
    form: SlackForm | NormForm = decomposition_form(Program(model)) if prepared is None else prepared
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
    message = (f"{result.passes} passes, {result.iterations} subproblems on {m} rows, KKT gap {result.gap:.3g} "
               f"(tol {result.tol:.3g})")
    if isinstance(form, NormForm):
        x, rule, degenerate = form.point(result.lam, result.v)
        duals = form.form.dual_values(x, form.conic_duals(x, result.lam, result.v, degenerate))
        variables = form.form.variables
        message += f"; (15)'s w shrunk by the norm's {form.sigma:.6g}" + (" to 0" if degenerate else "")
    else:
        x, rule = form.point(result.lam, result.gradient, result.v)
        duals, variables = form.duals(result.lam), form.program.free
    set_values(variables, x)
    message += f"; theta by {rule}"
    if caught:
        message += f"; {caught[0].message}"
    return Termination.OPTIMAL, duals, message


def version() -> str:
    """This library's version (the method is its own) and DAQP's (its subproblems)."""
    return f"tpm-models {package_version('tpm-models')} (daqp {package_version('daqp')})"


register_backend("linear-decomposition", "daqp", {"QP", "SOCP", "NLP"}, run_linear_decomposition, version,
                 time_limit=False, prepare=decomposition_form,
                 shape="tpm_models.solvers.slack_form, tpm_models.solvers.norm_form",
                 accurate_point=True)
