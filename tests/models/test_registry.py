"""The front door of the models (issue 16): register_model, build() with one signature, and the generic
ties of any registered model. Truths: the omitted constant computed here from the data (errata 1), and
a deliberately wrong registration that the dual-gap tie must catch."""

from __future__ import annotations

import numpy as np
import pytest

from tpm_models import Kernel, build, model_info, register_model, solve
from tpm_models.checks import TOL, check_model_cross_solver, check_model_dual_gap
from tpm_models.models.multiclass import build_dual_16
from tpm_models.models.registry import REGISTRY, all_models, group_keys

NU, ALPHA = 0.3, 1.0


@pytest.fixture
def registry():
    """Registrations made by a test are removed after it."""
    before = set(REGISTRY)
    yield
    for key in set(REGISTRY) - before:
        del REGISTRY[key]


def test_every_paper_model_is_registered_with_one_signature():
    keys = set(all_models())
    assert {2, 3, 4, 5, 10, 11, 12, 13, 15, 16, 19, 22, 23, 26, 27, 28, 29} <= keys
    assert {"23D", "27D", "28D", "29D", "23K"} <= keys
    for key, info in all_models().items():
        assert info.family in ("binary", "multiclass") and info.role in ("primal", "dual"), key
        if info.role == "dual" and info.primal is not None:
            assert model_info(info.primal).role == "primal"
    # (27)-(29) used to take (eps, p) and (23) (p, eps): now both by keyword, in any order
    assert model_info(28).options(p=None, eps=0.02) == {"p": 2.0, "eps": 0.02}
    with pytest.raises(ValueError, match="takes p in"):
        model_info(28).options(p=1, eps=0.02)
    with pytest.raises(ValueError, match="takes no p or eps"):
        model_info(15).options(p=2, eps=0.02)
    with pytest.raises(ValueError, match="needs a kernel"):
        model_info(19).options()


def test_a_registered_model_is_reached_by_build_and_solve(registry, iris):
    X, y = iris

    @register_model("16T", family="multiclass", model_class="QP", role="dual", primal=15, summary="(16) again")
    def build_again(X, y, c, nu, alpha):
        return build_dual_16(X, y, c, nu, alpha)

    assert model_info("16t").builder is build_again  # keys are case-blind
    mine, paper = solve(build("16T", X, y, 1, NU, ALPHA)), solve(build(16, X, y, 1, NU, ALPHA))
    assert abs(mine.objective - paper.objective) <= 1e-9 * abs(paper.objective)
    with pytest.raises(ValueError, match="registered already"):
        register_model("16T", family="multiclass", model_class="QP", summary="twice")(build_again)
    with pytest.raises(ValueError, match="family='ternary'"):
        register_model("X1", family="ternary", model_class="QP", summary="?")


@pytest.mark.parametrize("eq,kernel,p", [(16, None, None), (4, None, None), (5, None, None),
                                         (12, Kernel("hom-poly", degree=2), None), ("23D", None, 2.0),
                                         ("28D", None, None)])
def test_the_dual_gap_tie_closes_for_the_registered_duals(iris, eq, kernel, p):
    X, y = iris
    eps = 0.02 if model_info(eq).robust_p is not None else None
    rows = check_model_dual_gap(eq, X, y, 1, NU, ALPHA, kernel=kernel, p=p, eps=eps)
    assert len(rows) == 1 and rows[0].passed and rows[0].residual <= TOL, rows


def test_the_dual_gap_tie_catches_a_wrong_constant(registry, iris):
    """(16) registered without its omitted constant: the tie must fail, by the size of the constant
    computed here from the data (errata 1: -1/2 (nu/m_-c)^2 |X_-c e|^2)."""
    X, y = iris
    register_model("16W", family="multiclass", model_class="QP", role="dual", primal=15,
                   summary="(16) with the constant forgotten")(build_dual_16)
    row = check_model_dual_gap("16W", X, y, 1, NU, ALPHA)[0]
    assert not row.passed
    other = X[y != 1]
    constant = -0.5 * (NU / len(other)) ** 2 * float(np.sum(other.sum(axis=0) ** 2))
    primal = solve(build(15, X, y, 1, NU, ALPHA))
    assert row.residual > 100 * TOL and abs(constant) > 100 * TOL * abs(primal.objective)


def test_the_cross_solver_tie_of_a_registered_model(iris):
    X, y = iris
    rows = check_model_cross_solver(28, X, y, 0, NU, ALPHA, eps=0.02, solvers=["ipopt", "clarabel", "scip"])
    assert len(rows) >= 2 and all(r.passed for r in rows), rows


def test_the_paper_counterparts_name_their_uncertain_data_without_the_checks():
    """Issue 28: the uncertainty declarations live in the models layer. In a fresh interpreter, right after
    ``import tpm_models`` (no checks module imported), (23) and (26)-(29) are verifiable, and the sets are the same
    classes the checks layer imports."""
    import subprocess
    import sys

    code = ("import sys, tpm_models\n"
            "from tpm_models import model_info\n"
            "print(all(model_info(k).verifiable for k in (23, 26, 27, 28, 29)),"
            " any(name.startswith('tpm_models.checks') for name in sys.modules))\n"
            "from tpm_models.checks.verify import NormBall, UncertainRow\n"
            "from tpm_models.models import uncertainty\n"
            "print(NormBall is uncertainty.NormBall and UncertainRow is uncertainty.UncertainRow)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False", "True"], out


def test_one_registry_whose_groups_partition_it(registry):
    """One registry (REGISTRY) with a group per entry; group_keys(g) are its keys of group g, a key registered from
    outside shows in the user group only."""
    from tpm_models.models.registry import GROUPS

    groups = {g: group_keys(g) for g in GROUPS}
    assert set().union(*groups.values()) == set(REGISTRY) == set(all_models())
    assert sum(len(keys) for keys in groups.values()) == len(REGISTRY)  # a partition
    assert 15 in groups["paper"] and "28D" in groups["dual"] and "28D" not in groups["paper"]
    assert all(REGISTRY[k].group == "paper" for k in groups["paper"])
    users_before = set(groups["user"])  # plugins other tests of this process registered

    @register_model("VIEW1", family="multiclass", model_class="QP", role="dual", summary="(16) again")
    def again(X, y, c, nu, alpha):
        return build_dual_16(X, y, c, nu, alpha)

    assert set(group_keys("user")) - users_before == {"VIEW1"} and "VIEW1" not in group_keys("dual")
    with pytest.raises(ValueError, match="not one of"):
        group_keys("users")


def test_the_registry_key_is_named_key():
    info = model_info("28d")
    assert info.key == "28D" and model_info(15).key == 15 and not hasattr(info, "eq")


def test_one_vocabulary_of_model_classes():
    """The registry and the backends' table read one MODEL_CLASSES; a backend may not claim "semi-infinite"."""
    from tpm_models.models import registry
    from tpm_models.solvers import backends
    from tpm_models.validation import MODEL_CLASSES, SOLVABLE_CLASSES

    assert registry.MODEL_CLASSES is MODEL_CLASSES is backends.MODEL_CLASSES
    assert set(SOLVABLE_CLASSES) == set(MODEL_CLASSES) - {"semi-infinite"}
    with pytest.raises(ValueError, match="not ones a backend takes"):
        backends.register_backend("nobody", "nopackage", {"semi-infinite"}, run=lambda *a: None)
    assert "nobody" not in backends.BACKENDS
