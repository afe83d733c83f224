"""``import tpm_models`` and ``from tpm_models import build, solve`` load neither pandas nor scikit-learn (issue 24):
they cost about 2.4 s of a 3.2 s import and only the classifiers and the stratified splits need scikit-learn; the
CSV reader needs neither (the standard library's csv module).

Truth: ``sys.modules`` of a fresh interpreter (a subprocess, so that no other test has imported them already), and
for the lazy names (PEP 562 ``__getattr__``) the object in the module that defines them. The controls (the
classifier or the CSV loader used in the same kind of process does load them) show the check can fail.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "sklearn")
LAZY_PACKAGES = ("tpm_models", "tpm_models.learn", "tpm_models.experiments")


def loaded_after(code: str, modules: tuple[str, ...] = HEAVY) -> dict[str, bool]:
    """Which of ``modules`` a fresh interpreter holds in ``sys.modules`` after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {modules!r}}}))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", ["import tpm_models", "from tpm_models import build, solve",
                                  "from benchmarks.bench_scale import tpm_row",
                                  "import tpm_models.learn.fastqp",
                                  "from tpm_models import load_dataset; load_dataset('iris')"])
def test_the_import_loads_neither_pandas_nor_sklearn(code):
    assert loaded_after(code) == {"pandas": False, "sklearn": False}


@pytest.mark.parametrize(("code", "needed"), [
    ("from tpm_models import TPMSVMOneVsAll", "sklearn"),
    ("import pandas", "pandas"),
    ("from tpm_models import stratified_split; stratified_split([0, 1] * 4, seed=0)", "sklearn"),
])
def test_the_probe_sees_them_when_they_are_used(code, needed):
    """Control: the same probe reports the module once the name that needs it is used (scikit-learn may bring
    pandas along; only the module the name needs is asserted)."""
    assert loaded_after(code)[needed] is True


def type_checking_names(package: str) -> dict[str, str]:
    """Name -> module of the ``if TYPE_CHECKING:`` imports of ``package``'s ``__init__.py``."""
    tree = ast.parse(Path(importlib.import_module(package).__file__).read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    out.update({a.asname or a.name: stmt.module for a in stmt.names})
    return out


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_name_resolves_and_is_listed(package):
    module = importlib.import_module(package)
    lazy = module._LAZY
    assert lazy, package
    # the architecture test reads the TYPE_CHECKING imports: they must name the same modules as the lazy table
    assert type_checking_names(package) == lazy
    for name, where in lazy.items():
        assert getattr(module, name) is getattr(importlib.import_module(where), name), name
        assert name in module.__all__ and name in dir(module), name
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018


# pyomo.environ imports every Pyomo plugin package (0.5-1 s of a process's start, docs/bench-scale.md); the models and
# the default solvers (PIQP, Clarabel, DAQP, Ipopt through casadi) need only pyomo.core, and the backends reached
# through Pyomo's own solver interfaces import it when first used (pyomo_interfaces.load_pyomo_solvers).
IRIS_MODEL = ("from tpm_models import build, load_dataset, solve\n"
              "data = load_dataset('iris')\n"
              "model = build({eq}, data.X, data.y, 1, 0.3, 1.0{extra})\n")


@pytest.mark.parametrize(("eq", "extra"), [(15, ""), (23, ", eps=0.02, p=2.0"), (27, ", eps=0.02")])
def test_build_and_default_solve_do_not_load_pyomo_environ(eq, extra):
    code = IRIS_MODEL.format(eq=eq, extra=extra) + "assert solve(model).certified\n"
    assert loaded_after(code, ("pyomo.environ", "pyomo.core")) == {"pyomo.environ": False, "pyomo.core": True}


@pytest.mark.parametrize("solver", ["highs", "gurobi"])
def test_a_pyomo_interface_backend_loads_pyomo_environ_itself(solver):
    """Control: a backend reached through Pyomo's ``SolverFactory`` (HiGHS: ``pyomo.contrib.solver``; Gurobi: the
    direct interface) works in a process where nothing imported ``pyomo.environ``, and gives the default solver's
    optimum (another solver: the truth here) of (15) on Iris, class 1."""
    from tpm_models.solvers.backends import BACKENDS

    if not BACKENDS[solver].available():
        pytest.skip(f"{solver} is not installed here")
    code = (IRIS_MODEL.format(eq=15, extra="") + "ours = solve(model).objective\n"
            "assert 'pyomo.environ' not in __import__('sys').modules\n"
            f"theirs = solve(model, {solver!r}).objective\n"
            "assert abs(theirs - ours) <= 1e-6 * max(1.0, abs(ours)), (theirs, ours)\n")
    assert loaded_after(code, ("pyomo.environ",)) == {"pyomo.environ": True}


def test_a_built_model_writes_itself_without_pyomo_environ(tmp_path):
    """Pyomo's writers are registered by ``tpm_models.models`` (``pyomo.repn.plugins.load()``), as
    ``pyomo.environ`` would: ``model.write`` works in a process that never imported it, and writes (15)'s
    objective and its rows (the truth: the LP format's section names and the model's row count)."""
    target = tmp_path / "m15.lp"
    code = (IRIS_MODEL.format(eq=15, extra="") + f"model.write({str(target)!r})\n"
            "rows = sum(1 for _ in model.component_data_objects(__import__('pyomo.core').core.Constraint))\n"
            f"open({str(tmp_path / 'rows.txt')!r}, 'w').write(str(rows))\n")
    assert loaded_after(code, ("pyomo.environ",)) == {"pyomo.environ": False}
    text = target.read_text()
    assert "\nmin \n" in text and "\ns.t.\n" in text and text.rstrip().endswith("end")
    rows = int((tmp_path / "rows.txt").read_text())
    assert rows > 0 and text.count(":") >= rows  # every row is written with its label


# Pyomo imports scipy.stats, scipy.integrate and scipy.spatial (0.5-1 s) as soon as any scipy module is imported (its
# import hook for scipy; tpm_models.lazy.defer_pyomo_scipy_extras turns it off), and scipy.optimize is 0.25-0.45 s
# more; a build and a default solve use none of them.
SCIPY_EXTRAS = ("scipy.stats", "scipy.integrate", "scipy.spatial", "scipy.optimize")


@pytest.mark.parametrize(("eq", "extra"), [(15, ""), (23, ", eps=0.02, p=1.5"), (28, ", eps=0.02")])
def test_build_and_default_solve_load_no_scipy_module_they_do_not_use(eq, extra):
    code = IRIS_MODEL.format(eq=eq, extra=extra) + "assert solve(model).certified\n"
    assert loaded_after(code, ("scipy.sparse",) + SCIPY_EXTRAS) == {
        "scipy.sparse": True, **dict.fromkeys(SCIPY_EXTRAS, False)}


@pytest.mark.parametrize("first", ["import pyomo.core", "import pyomo.environ"])
def test_the_probe_sees_pyomo_load_scipy_stats_without_tpm_models(first):
    """Control: in this Pyomo, importing scipy after Pyomo loads scipy.stats (the hook the library turns off is
    there), so the check above can fail."""
    assert loaded_after(f"{first}\nimport scipy.sparse", ("scipy.stats",)) == {"scipy.stats": True}


def test_pyomo_still_resolves_its_scipy_and_its_callback_after_tpm_models():
    """Pyomo's deferred ``scipy`` is left as Pyomo documents it: resolved, with its callback (which imports
    scipy.stats), when Pyomo first uses it. Truth: the normal distribution's cdf at 0 is 1/2."""
    code = ("import tpm_models, scipy.sparse, sys\n"
            "assert 'scipy.stats' not in sys.modules\n"
            "from pyomo.common.dependencies import scipy, scipy_available\n"
            "assert bool(scipy_available)\n"
            "assert scipy.stats.norm.cdf(0.0) == 0.5\n")
    assert loaded_after(code, ("scipy.stats", "scipy.spatial")) == {"scipy.stats": True, "scipy.spatial": True}


def test_scipy_imported_before_tpm_models_is_no_error():
    """A user's process that imported scipy (and so Pyomo's callback ran on Pyomo's import) still builds and
    solves; the library then has nothing to turn off."""
    code = ("import scipy.sparse\nimport pyomo.core\nfrom tpm_models.lazy import defer_pyomo_scipy_extras\n"
            "assert defer_pyomo_scipy_extras() is False\n" + IRIS_MODEL.format(eq=28, extra=", eps=0.02")
            + "assert solve(model).certified\n")
    assert loaded_after(code, ("scipy.stats",)) == {"scipy.stats": True}


def test_the_support_lp_imports_scipy_optimize_on_first_use():
    """The polyhedral set's support LP (the one user of scipy.optimize) loads it when first solved, through
    :class:`tpm_models.lazy.LazyModule`. Truth: the support of the box [-1, 2] x [0, 3] written as A d <= b in
    the direction (1, -1) is 2 - 0 = 2, at the vertex (2, 0)."""
    code = ("import sys\nimport numpy as np\nfrom tpm_models.models.uncertainty import Polyhedron, optimize\n"
            "assert 'scipy.optimize' not in sys.modules\n"
            "P = Polyhedron(np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]]), np.array([2.0, 1, 3, 0]))\n"
            "value, delta = P.support([1.0, -1.0])\n"
            "assert abs(value - 2.0) <= 1e-9 and np.abs(delta - [2.0, 0.0]).max() <= 1e-9, (value, delta)\n"
            "import scipy.optimize\nassert optimize.linprog is scipy.optimize.linprog\n")
    assert loaded_after(code, ("scipy.optimize",)) == {"scipy.optimize": True}
