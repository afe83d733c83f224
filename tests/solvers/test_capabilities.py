"""The capability queries of the registry (``tpm_models.solvers.backends.registry``) and the modules that ask them.

Truths: the declarations of the registered backends (``register_backend(..., accurate_point=..., time_limit=...,
nonconvex=..., licence_limit=..., pyros=...)``), read field by field here; and fake backends put in a copy of the
registry, which the checks, the verifier's cutting planes and PyROS's subsolvers must then choose: no module outside
the registry decides by a solver's name.
"""

import numpy as np
import pyomo.environ as pyo
import pytest

from tpm_models.checks.robust import check_pyros, pyros_check_backend, reference_26_solver
from tpm_models.checks.verify import (
    MASTER_LARGE,
    PYROS_SETTINGS,
    PYROS_SUBSOLVER_NAMES,
    free_pyros_subsolvers,
    master_fallback,
    master_large_solvers,
    master_solvers,
    pyros_options,
    pyros_subsolver,
    pyros_subsolvers,
)
from tpm_models.solvers import ipopt as casadi_ipopt
from tpm_models.solvers.backends import registry
from tpm_models.solvers.backends.registry import BACKENDS, Backend, available_solvers

NOT_INSTALLED = "tpm_models_no_such_package"


def fake(name, classes=("LP", "QP", "SOCP", "NLP"), package="numpy", **capabilities):
    """A backend that is installed (``numpy`` imports) unless ``package`` says otherwise; never run here."""
    def run(model, time_limit, **kwds):
        raise AssertionError(f"the fake backend {name} was run")
    return Backend(name, package, frozenset(classes), run, **capabilities)


@pytest.fixture
def backends(monkeypatch):
    """``backends(drop=(...), add=(...))``: the registry with the backends named in ``drop`` left out and ``add``
    joined last, for this test only (a copy: the real table keeps its order)."""
    def replace(drop=(), add=()):
        table = {name: b for name, b in BACKENDS.items() if name not in drop}
        table.update({b.name: b for b in add})
        monkeypatch.setattr(registry, "BACKENDS", table)
    return replace


def test_accurate_solvers_are_the_installed_backends_that_declare_an_accurate_point():
    for kind in ("LP", "QP", "SOCP", "NLP"):
        declared = [n for n in available_solvers(kind) if BACKENDS[n].accurate_point and BACKENDS[n].shape is None]
        assert registry.accurate_solvers(kind) == declared
        assert registry.accurate_solvers(kind, time_limit=True) == [n for n in declared if BACKENDS[n].time_limit]
    for name in ("piqp", "daqp", "linear-decomposition"):  # accurate, but no time limit: never the masters' fallback
        assert BACKENDS[name].accurate_point and not BACKENDS[name].time_limit
        assert name not in registry.accurate_solvers("QP", time_limit=True)
    # accurate, but of one shape of model (its slack and norm shapes): never the reference of every NLP
    assert "linear-decomposition" in available_solvers("NLP")
    assert "linear-decomposition" not in registry.accurate_solvers("NLP")


def test_the_checks_reference_nlp_solver_and_the_masters_fallback_on_this_install():
    ipopt = "ipopt" in available_solvers("NLP")
    assert reference_26_solver() == ("ipopt" if ipopt else "default")
    assert master_fallback() == (["ipopt"] if ipopt else [])


def test_time_limited_defaults_drop_the_defaults_that_honour_no_time_limit_or_take_one_shape():
    for size in (0, registry.LARGE_MODEL, registry.HUGE_MODEL):
        table = registry.DEFAULT_HUGE if size >= registry.HUGE_MODEL else (
            registry.DEFAULT_LARGE if size >= registry.LARGE_MODEL else registry.DEFAULT)
        for kind, names in table.items():
            got = registry.time_limited_defaults(kind, size)
            assert got == [n for n in names if n in available_solvers(kind) and BACKENDS[n].time_limit
                           and BACKENDS[n].shape is None]
    if "clarabel" in available_solvers("QP"):  # PIQP honours no time limit; linear-decomposition takes one shape
        assert master_large_solvers(MASTER_LARGE) == ["clarabel"]


def test_pyros_backends_read_the_declarations():
    declared = [b.name for b in BACKENDS.values() if b.pyros is not None]
    assert declared == ["ipopt", "gurobi", "scip"]
    assert [b.name for b in registry.pyros_backends(global_only=True)] == ["gurobi", "scip"]  # nonconvex=True
    assert [b.name for b in registry.pyros_backends(free_only=True)] == ["ipopt", "scip"]  # no licence_limit
    assert pyros_subsolvers() == ("gurobi_direct", "scip")
    assert free_pyros_subsolvers() == (casadi_ipopt.PLUGIN_NAME, "scip")
    assert PYROS_SUBSOLVER_NAMES == {"default": None, **{n: BACKENDS[n].pyros for n in declared}}
    assert set(PYROS_SETTINGS) <= {BACKENDS[n].pyros for n in declared}  # settings only of declared subsolvers
    assert pyros_check_backend() is BACKENDS["gurobi"]


def test_a_fake_accurate_nlp_backend_is_the_reference_and_the_masters_fallback(backends):
    backends(drop=("ipopt",), add=(fake("one-shape", accurate_point=True, shape="a module of one shape"),
                                   fake("accurate", accurate_point=True),
                                   fake("no-limit", accurate_point=True, time_limit=False),
                                   fake("absent", package=NOT_INSTALLED, accurate_point=True)))
    # "one-shape" joined first but takes one shape of model only (linear-decomposition's norm shape is an NLP/SOCP)
    assert reference_26_solver() == "accurate"
    assert master_fallback() == ["accurate"]  # "no-limit" honours no time limit, "absent" is not installed
    backends(drop=("ipopt", "accurate", "no-limit", "absent", "one-shape", "linear-decomposition"))
    assert reference_26_solver() == "default" and master_fallback() == []


def test_a_fake_large_qp_default_takes_the_large_masters(backends, monkeypatch):
    large = pyo.ConcreteModel()
    large.x = pyo.Var(range(MASTER_LARGE))
    backends(drop=("ipopt",), add=(fake("big", classes=("QP",)), fake("rescue", accurate_point=True)))
    monkeypatch.setitem(registry.DEFAULT_LARGE, "QP", ("piqp", "big", "clarabel"))
    expected = ["big", "clarabel"] if "clarabel" in available_solvers("QP") else ["big"]
    assert master_large_solvers(MASTER_LARGE) == expected
    assert master_solvers(large, ["default"]) == [*expected, "rescue"]


def test_pyros_takes_its_subsolvers_from_the_declarations(backends):
    our_ipopt = fake("global-ipopt", nonconvex=True, pyros=casadi_ipopt.PLUGIN_NAME,
                     licence_limit=lambda exc: False)
    backends(drop=("gurobi", "scip"), add=(our_ipopt,))
    assert pyros_subsolvers() == (casadi_ipopt.PLUGIN_NAME,)
    assert free_pyros_subsolvers() == (casadi_ipopt.PLUGIN_NAME,)  # the real Ipopt's; the fake has a licence limit
    assert pyros_subsolver("global", None).name == casadi_ipopt.PLUGIN_NAME
    backends(drop=("gurobi", "scip", "global-ipopt"))
    with pytest.raises(RuntimeError, match="no global subsolver for PyROS"):
        pyros_subsolver("global", None)


def test_check_pyros_skips_when_its_subsolvers_backend_is_missing(backends):
    backends(drop=("gurobi",), add=(fake("licensed", package=NOT_INSTALLED, nonconvex=True, pyros="licensed"),))
    assert pyros_check_backend().name == "scip"  # the first global PyROS backend left, installed or not
    backends(drop=("gurobi", "scip"), add=(fake("licensed", package=NOT_INSTALLED, nonconvex=True, pyros="x"),))
    X, y = np.zeros((4, 2)), np.array([0, 0, 1, 1])
    (result,) = check_pyros(X, y, 0, 0.3, 1.0, 0.02)
    assert result.skipped and "needs licensed as subsolver" in result.note and NOT_INSTALLED in result.note



def test_a_local_subsolver_as_both_bypasses_local_separation(monkeypatch):
    """``PyrosSettings.local`` (declared by our Ipopt's settings only) decides PyROS's ``bypass_local_separation``:
    set with Ipopt as both subsolvers, not with Ipopt beside another, and not once the declaration is taken away."""
    ipopt = casadi_ipopt.PLUGIN_NAME
    assert PYROS_SETTINGS[ipopt].local and not any(s.local for n, s in PYROS_SETTINGS.items() if n != ipopt)
    assert pyros_options(ipopt, ipopt)[0].get("bypass_local_separation") is True
    assert "bypass_local_separation" not in pyros_options(ipopt, "scip")[0]
    monkeypatch.setitem(PYROS_SETTINGS, ipopt, PYROS_SETTINGS[ipopt]._replace(local=False))
    assert "bypass_local_separation" not in pyros_options(ipopt, ipopt)[0]


@pytest.mark.parametrize("package", sorted({b.package for b in BACKENDS.values()} | {"numpy", "pyomo", "tpm-models"}))
def test_package_version_is_importlib_metadatas(package):
    """The version every ``SolveResult`` reports, read from the ``METADATA`` headers without the email parser, is
    the one ``importlib.metadata.version`` parses (the truth), for every backend's package that is installed."""
    from importlib import metadata

    try:
        truth = metadata.version(package)
    except metadata.PackageNotFoundError:
        assert registry.package_version.__wrapped__(package) == "unknown"
        return
    assert registry.package_version.__wrapped__(package) == truth


def test_package_version_reads_the_headers_only(tmp_path, monkeypatch):
    """A ``Version:`` line in the description (after the empty line that ends the headers) is not the version;
    with no header at all, it is ``"unknown"``. Truth: ``importlib.metadata.version`` on the
    same made-up distributions (put on ``sys.path`` for this test only)."""
    from importlib import metadata

    for name, headers in [("tpm_fake_a", "Version: 1.2.3\n"), ("tpm_fake_b", "")]:
        info = tmp_path / f"{name}-0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\n{headers}\nVersion: 9.9.9\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert registry.package_version.__wrapped__("tpm_fake_a") == metadata.version("tpm_fake_a") == "1.2.3"
    # the truth has no version for it either; read as the headers' ``get``, since ``version()`` returns None
    # under the standard library's finder but raises KeyError under the importlib_metadata backport's
    assert metadata.metadata("tpm_fake_b").get("Version") is None
    assert registry.package_version.__wrapped__("tpm_fake_b") == "unknown"
