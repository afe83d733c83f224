"""The core install does its work without the extras, and a feature of an extra not installed says which extra
to install. "Not installed" is simulated: ``None`` in ``sys.modules`` (the import raises ``ModuleNotFoundError``), or
a fresh interpreter whose only site directory is this venv's with the extras' packages left out, as in a venv
where ``pip install tpm-models`` brought the core only."""

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tpm_models.cli import main
from tpm_models.lazy import MissingExtraError, import_optional

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("casadi", "pyscipopt", "gurobipy", "cplex", "xpress", "mosek", "dask", "distributed", "matplotlib",
          "cvxpy", "linopy", "sklearn", "scikit_learn", "pandas")
"""The top-level packages of every extra (ipopt, scip, commercial, mosek, dask, plot, bench, learn), and pandas,
which the library never needs (the test extra's, to write files as pandas writes them)."""


def _without(monkeypatch, package):
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, package, None)  # import raises ModuleNotFoundError(name=package)


def test_a_missing_package_names_its_extra(monkeypatch):
    _without(monkeypatch, "matplotlib")
    with pytest.raises(MissingExtraError, match=r'drawing a figure needs matplotlib, which is not installed: '
                                                r'pip install "tpm-models\[plot\]"'):
        import_optional("matplotlib.figure", "plot", "drawing a figure")


def test_a_broken_install_is_not_reported_as_a_missing_extra(tmp_path, monkeypatch):
    (tmp_path / "half_installed.py").write_text("import a_module_that_is_not_there_either\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as raised:
        import_optional("half_installed", "plot", "drawing a figure")
    assert not isinstance(raised.value, MissingExtraError)
    assert raised.value.name == "a_module_that_is_not_there_either"


def test_figures_without_matplotlib_say_install_the_plot_extra(monkeypatch, tmp_path, capsys):
    from tpm_models import plots

    _without(monkeypatch, "matplotlib")
    with pytest.raises(MissingExtraError, match=r'tpm-models\[plot\]'):
        plots.figure("fig1-linear")
    assert main(["plot", "fig1-linear", "--out", str(tmp_path / "fig")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ['tpm-models: error: drawing a figure needs matplotlib, which is not installed: '
                   'pip install "tpm-models[plot]"']
    assert not list(tmp_path.iterdir())


def test_dask_without_distributed_says_install_the_dask_extra(monkeypatch):
    from tpm_models.experiments.table3 import dask_backend

    _without(monkeypatch, "distributed")
    with pytest.raises(MissingExtraError, match=r'running on Dask \(--dask\) needs distributed.*tpm-models\[dask\]'):
        with dask_backend("local", n_workers=1):
            pass


CORE_WORK = textwrap.dedent("""
    import importlib.util, pathlib, sys, tempfile
    import tpm_models
    assert not [p for p in sys.argv[1:] if importlib.util.find_spec(p)], "an extra's package is importable"

    from tpm_models import available_solvers, build, load_dataset, min_max_scale, solve
    from tpm_models.checks import dual_constant, failures, run_checks, run_robust_checks
    from tpm_models.export import write
    from tpm_models.lazy import MissingExtraError
    import tpm_models.cli, tpm_models.experiments.table3  # the command line and the experiments import too

    d = load_dataset("iris")
    X, y = min_max_scale(d.X), d.y
    p = solve(build(15, X, y, c=1, nu=0.3, alpha=1.0), "highs")
    q = solve(build(16, X, y, c=1, nu=0.3, alpha=1.0), "piqp")
    r = solve(build(16, X, y, c=1, nu=0.3, alpha=1.0), "daqp")
    socp = solve(build(28, X, y, c=1, nu=0.3, alpha=1.0, p=2, eps=0.02))
    out = pathlib.Path(tempfile.mkdtemp())
    write(build(28, X, y, c=1, nu=0.3, alpha=1.0, p=2, eps=0.02), out / "m.nl")
    write(build(15, X, y, c=1, nu=0.3, alpha=1.0), out / "m.lp")
    try:
        from tpm_models.learn import TPMSVMOneVsAll
    except MissingExtraError as exc:
        print(exc, file=sys.stderr)
    try:
        tpm_models.stratified_split(y, seed=0)
    except MissingExtraError as exc:
        print(exc, file=sys.stderr)
    errors = tpm_models.cli.main(["table3", "--dataset", "iris", "--runs", "1", "--out", str(out / "t3")])
    print(sorted(available_solvers()))
    print(p.objective, q.objective + dual_constant(X[y != 1], nu=0.3), r.objective + dual_constant(X[y != 1], nu=0.3))
    print(socp.solver, socp.termination.value, errors)
    ties = run_checks(X, y, "iris", parameters=[(0.3, 1.0)], classes=[0])
    ties += run_robust_checks(X, y, "iris", pyros=False, classes=[0])
    print(len(ties), len(failures(ties)))
""")


def _core_site(tmp_path: Path) -> Path:
    """A site directory of links to every entry of this venv's but the extras' packages and their metadata."""
    site = tmp_path / "core-site"
    site.mkdir()
    for entry in Path(sysconfig.get_path("purelib")).iterdir():
        top = entry.name.split(".")[0].split("-")[0].lower()
        if top not in EXTRAS and not entry.name.endswith(".pth"):
            (site / entry.name).symlink_to(entry)
    return site


def test_the_core_builds_solves_checks_and_exports_without_any_extra_and_names_the_learn_extra(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(_core_site(tmp_path))])
    done = subprocess.run([sys.executable, "-S", "-c", CORE_WORK, *EXTRAS], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    solvers, objectives, socp, ties = done.stdout.strip().splitlines()[-4:]
    assert not {"ipopt", "scip", "gurobi", "cplex", "xpress", "mosek"} & set(eval(solvers))
    assert {"highs", "piqp", "daqp", "clarabel"} <= set(eval(solvers))
    primal, *duals = map(float, objectives.split())
    assert all(abs(primal - d) <= 1e-7 * abs(primal) for d in duals)  # strong duality (15)-(16), errata 1
    name, termination, table3_exit = socp.split()
    assert (name, termination, table3_exit) == ("clarabel", "optimal", "2")  # table3 refused: scikit-learn missing
    learn = 'needs sklearn, which is not installed: pip install "tpm-models[learn]"'
    assert done.stderr.count(learn) == 3, done.stderr  # the estimators, stratified_split, table3 (its one line)
    assert "an estimator of tpm_models.learn needs sklearn" in done.stderr and "a stratified split needs" in done.stderr
    measured, failed = map(int, ties.split())
    assert measured > 100 and failed == 0  # every tie of one class, (26) by Clarabel in place of Ipopt


def test_a_solver_not_installed_names_its_extra(monkeypatch):
    """``solve(model, "gurobi")`` without gurobipy: the message names the extra that brings it (pyproject.toml's
    ``commercial``), not the bare package."""
    import importlib.util

    from tpm_models import build, solve
    from tpm_models.solvers.backends.registry import BACKENDS
    from tpm_models.solvers.common import SolverUnavailableError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",  # Backend.installed's question: gurobipy is not found
                        lambda name, *rest: None if name == BACKENDS["gurobi"].package else real(name, *rest))
    X = np.array([[0.1, 0.2], [0.4, 0.1], [0.9, 0.8], [0.7, 0.9]])
    with pytest.raises(SolverUnavailableError, match=r'solver \'gurobi\' is not installed '
                                                     r'\(pip install "tpm-models\[commercial\]"\)'):
        solve(build(15, X, np.array([0, 0, 1, 1]), c=1, nu=0.3, alpha=1.0), "gurobi")


def test_every_extra_named_for_a_package_is_an_extra_of_pyproject():
    """Truth: pyproject.toml's own table of extras, and the packages listed in each."""
    import tomllib

    from tpm_models.lazy import EXTRA_OF

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for package, extra in EXTRA_OF.items():
        listed = {d.split(">")[0].split("=")[0].split("[")[0].strip().replace("-", "_") for d in extras[extra]}
        assert package in listed or {"sklearn": "scikit_learn"}.get(package) in listed, (package, extra, listed)
