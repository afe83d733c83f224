"""Adapters for the backends reached through Pyomo's own solver interfaces.

:func:`contrib_runner` drives the newer interface (``pyomo.contrib.solver``: HiGHS, SCIP), :func:`legacy_runner` the
``SolverFactory`` direct interfaces (Gurobi, CPLEX, Xpress, an ``ipopt`` executable). Each returns a
``run(model, time_limit, options=None, prepared=None, tee=False)`` for
:func:`tpm_models.solvers.backends.register_backend`: ``options`` (the solver's own names) go over the library's
settings. ``pyomo.environ``, which registers these solvers, is imported when one of them is first used
(:func:`load_pyomo_solvers`), not when :mod:`tpm_models` is.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pyomo.core as pyo
from pyomo.contrib.solver.common.factory import SolverFactory as ContribSolverFactory
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
from pyomo.opt import SolverFactory, SolverStatus
from pyomo.opt import TerminationCondition as LegacyTC

from tpm_models.solvers.common import Termination

log = logging.getLogger(__name__)

CONTRIB_TERMINATIONS = {
    TerminationCondition.convergenceCriteriaSatisfied: Termination.OPTIMAL,
    TerminationCondition.provenInfeasible: Termination.INFEASIBLE,
    TerminationCondition.locallyInfeasible: Termination.INFEASIBLE,
    TerminationCondition.unbounded: Termination.UNBOUNDED,
    TerminationCondition.infeasibleOrUnbounded: Termination.INFEASIBLE_OR_UNBOUNDED,
    TerminationCondition.iterationLimit: Termination.ITERATION_LIMIT,
    TerminationCondition.maxTimeLimit: Termination.TIME_LIMIT,
}
"""``pyomo.contrib.solver``'s stops as :class:`~tpm_models.solvers.common.Termination` s; any other is an error."""

LEGACY_TERMINATIONS = {
    LegacyTC.optimal: Termination.OPTIMAL, LegacyTC.infeasible: Termination.INFEASIBLE,
    LegacyTC.unbounded: Termination.UNBOUNDED, LegacyTC.infeasibleOrUnbounded: Termination.INFEASIBLE_OR_UNBOUNDED,
    LegacyTC.maxIterations: Termination.ITERATION_LIMIT, LegacyTC.maxTimeLimit: Termination.TIME_LIMIT,
}
"""The ``SolverFactory`` interfaces' stops likewise."""


def load_pyomo_solvers() -> None:
    """Import ``pyomo.environ``, which registers Pyomo's solver interfaces: called before any of them is looked up
    (why here: module docstring; ``docs/bench-scale.md``, "Import time")."""
    import pyomo.environ  # noqa: F401


@contextlib.contextmanager
def _fd_output_to_file(*_args, **_kwargs):
    """Send the process's stdout/stderr file descriptors to a temporary *file* while a solver's C code runs, in
    place of Pyomo's ``capture_output`` (a pipe drained by a Python thread, which PySCIPOpt's ``optimize()`` blocks
    by holding the GIL: a solver that prints more than a pipe holds would hang). A file never blocks."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


@contextlib.contextmanager
def _replaced(module: Any, name: str, value: Any) -> Iterator[None]:
    """``module.name`` set to ``value`` for the block, restored after it (``unittest.mock.patch.object`` without
    importing ``unittest.mock``, which imports ``asyncio``: 15-20 ms of every ``import tpm_models``)."""
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


def contrib_runner(pyomo_name: str, settings: Callable[[float | None], dict]) \
        -> Callable[..., tuple[Termination, dict | None, str]]:
    """Backends through Pyomo's newer solver interface (``pyomo.contrib.solver``)."""

    def run(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
            prepared: Any = None, tee: bool = False) -> tuple[Termination, dict | None, str]:
        load_pyomo_solvers()
        opt = ContribSolverFactory(pyomo_name)
        kwargs = {"load_solutions": False, "raise_exception_on_nonoptimal_result": False,
                  "solver_options": {**settings(time_limit), **(options or {})}}
        if time_limit is not None:
            kwargs["time_limit"] = time_limit
        if tee:  # the solver's log on standard output, as Pyomo's interface streams it
            kwargs["tee"] = True
        module = sys.modules[type(opt).__module__]
        no_pipe = _replaced(module, "capture_output", _fd_output_to_file) \
            if hasattr(module, "capture_output") and not tee else contextlib.nullcontext()
        with (contextlib.nullcontext() if tee else contextlib.redirect_stdout(io.StringIO())), no_pipe:
            res = opt.solve(model, **kwargs)
        tc = res.termination_condition
        termination = CONTRIB_TERMINATIONS.get(tc, Termination.ERROR)
        if termination is Termination.OPTIMAL and res.solution_status != SolutionStatus.optimal:
            termination = Termination.NUMERICAL_ERROR
        duals = None
        if res.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible):
            res.solution_loader.load_vars()
            try:
                duals = dict(res.solution_loader.get_duals())
            except Exception as exc:  # some interfaces give no duals for some classes
                log.debug("%s gave no duals: %s", pyomo_name, exc)
        return termination, duals, str(tc.name)

    return run


def legacy_runner(pyomo_name: str, settings: Callable[[float | None], dict], loud: dict | None = None) \
        -> Callable[..., tuple[Termination, dict | None, str]]:
    """Backends through Pyomo's direct (``SolverFactory``) interfaces, duals by suffix; ``loud``: the solver's
    settings that turn its log on, applied under ``tee`` (Gurobi's ``OutputFlag``)."""

    def run(model: pyo.ConcreteModel, time_limit: float | None, options: dict | None = None,
            prepared: Any = None, tee: bool = False) -> tuple[Termination, dict | None, str]:
        load_pyomo_solvers()
        opt = SolverFactory(pyomo_name)
        added = False
        rows = next(model.component_data_objects(pyo.Constraint, active=True, descend_into=True), None)
        own = model.component("dual")  # Pyomo's direct interfaces read duals into a Suffix of this very name
        read_duals = own is None or (isinstance(own, pyo.Suffix) and own.import_enabled())
        if own is None and rows is not None:  # Xpress raises for duals of a model without rows
            model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
            added = True
        try:
            with contextlib.nullcontext() if tee else contextlib.redirect_stdout(io.StringIO()):
                asked = {**settings(time_limit), **(loud or {} if tee else {}), **(options or {})}
                res = opt.solve(model, load_solutions=False, options=asked, tee=tee)
            tc = res.solver.termination_condition
            termination = LEGACY_TERMINATIONS.get(tc, Termination.ERROR)
            if termination is Termination.OPTIMAL and res.solver.status != SolverStatus.ok:
                termination = Termination.ERROR
            duals = None
            message = str(tc)
            if len(res.solution) > 0 and termination is not Termination.ERROR:  # an error's point: no values
                model.solutions.load_from(res)
                if read_duals and rows is not None:
                    duals = {con: model.dual.get(con) for con in model.component_data_objects(
                        pyo.Constraint, active=True, descend_into=True)}
                elif not read_duals:
                    message = (f"{message}; no duals: the model's own component 'dual' ({type(own).__name__}) holds "
                               f"the name {pyomo_name} reads duals into")
            return termination, duals, message
        finally:
            if added:
                model.del_component("dual")

    return run
