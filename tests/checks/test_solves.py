"""The shared solves of ``tpm-models check`` (:class:`tpm_models.checks.solves.Solves`): a ``"default"`` solve reads
its model once, runs the solver the registry names, and shares its entry with that solver asked by name."""

import pytest

from tpm_models import build, solve
from tpm_models.checks.solves import Solves
from tpm_models.solvers import program as program_module
from tpm_models.solvers.backends.registry import BACKENDS, DEFAULT, Backend, backend_for
from tpm_models.solvers.common import NoOptimalSolutionError, Termination
from tpm_models.solvers.compare import rel_gap

NU, ALPHA = 0.3, 1.0

SAME_SOLVER_TOL = 1e-12
"""Relative gap between two solves of the same model by the same solver from a cold start: the same arithmetic,
so the gap is rounding at most (the solvers' own tolerances are 1e-12 for PIQP, 1e-9 for the others)."""


@pytest.fixture
def readings(monkeypatch):
    """A counter of :class:`~tpm_models.solvers.program.Program` s made (each is one reading of a model)."""
    made = []
    init = program_module.Program.__init__

    def counted(self, model, bulk=True):
        made.append(model)
        init(self, model, bulk)

    monkeypatch.setattr(program_module.Program, "__init__", counted)
    return made


@pytest.mark.parametrize("eq", [15, 16])
def test_a_default_solve_reads_its_model_once_and_runs_the_registrys_default(iris, readings, eq):
    """One reading for the model's traits and its first (``"default"``) solve together (it was three: the traits,
    the name looked up, then the solve), a fresh one for each later solve; the solver that ran is the one the
    registry names for the model (:func:`backend_for`), and its optimum is that solver's by name on a fresh model."""
    X, y = iris
    solves = Solves(X, y)
    readings.clear()
    traits = solves.traits(eq, 1, NU, ALPHA)  # the class, read once per model before any solve
    result, _ = solves.solve(eq, 1, NU, ALPHA)
    assert len(readings) == 1
    other = next(n for n in ("clarabel", "piqp") if n != result.solver)
    solves.solve(eq, 1, NU, ALPHA, solver=other)
    assert len(readings) == 2
    fresh = build(eq, X, y, 1, NU, ALPHA)
    name = backend_for(fresh, "default", traits)[0].name
    assert result.solver == name and result.optimal
    truth = solve(fresh, name)
    assert rel_gap(result.objective, truth.objective) <= SAME_SOLVER_TOL


@pytest.mark.parametrize("default_first", [True, False])
def test_the_default_and_its_name_share_one_solve(iris, default_first):
    """``"default"`` and the default's name are one entry whichever is asked first: one solve, then the memory."""
    X, y = iris
    solves = Solves(X, y)
    name = backend_for(solves.model(16, 1, NU, ALPHA), "default")[0].name
    asked = ["default", name] if default_first else [name, "default"]
    first, _ = solves.solve(16, 1, NU, ALPHA, solver=asked[0])
    second, _ = solves.solve(16, 1, NU, ALPHA, solver=asked[1])
    assert second is first and first.solver == name
    assert (solves.solved, solves.reused) == (1, 1)


def test_a_failed_default_is_remembered_under_its_name_without_a_fallback(iris, monkeypatch):
    """The default's failure is the entry's (as that solver by name: no other default runs), raised again from
    memory, and kept under the failing solver's name."""
    X, y = iris

    def run(model, time_limit, options=None, prepared=None):
        return Termination.NUMERICAL_ERROR, None, "made to fail"

    monkeypatch.setitem(BACKENDS, "broken", Backend("broken", "numpy", frozenset({"LP", "QP"}), run))
    monkeypatch.setitem(DEFAULT, "QP", ("broken", "piqp"))
    solves = Solves(X, y)
    with pytest.raises(NoOptimalSolutionError, match="made to fail") as failed:
        solves.solve(15, 1, NU, ALPHA)
    assert failed.value.result.solver == "broken" and "fallback" not in failed.value.result.message
    with pytest.raises(NoOptimalSolutionError) as again:
        solves.solve(15, 1, NU, ALPHA, solver="broken")
    assert again.value is failed.value and solves.solved == 1


def test_a_program_serves_one_solve_of_its_own_model(iris):
    """``solve(model, program=...)`` takes the reading of that model not yet used by a solve, and refuses another
    model's reading or one a solve has used (a program holds that solve's certificate)."""
    X, y = iris
    model, other = build(15, X, y, 1, NU, ALPHA), build(15, X, y, 2, NU, ALPHA)
    with pytest.raises(ValueError, match="program"):
        solve(model, program=program_module.Program(other))
    reading = program_module.Program(model)
    first = solve(model, program=reading)
    assert rel_gap(first.objective, solve(build(15, X, y, 1, NU, ALPHA)).objective) <= SAME_SOLVER_TOL
    with pytest.raises(ValueError, match="program"):
        solve(model, program=reading)
