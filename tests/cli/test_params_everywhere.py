"""``--param`` on ``solve`` and ``export`` as on ``verify``, and every numeric parameter finite.

Truth: a plugin model whose builder needs a float (``scale``) and writes it as the objective's constant, read
back from the written ``.lp``; a refused parameter leaves no file.
"""

from __future__ import annotations

import sys

import pytest

from tpm_models.cli.main import main

PLUGIN = '''
import pyomo.environ as pyo
from tpm_models import register_model
from tpm_models.models.binary import build_primal_2


@register_model("SCALED2", family="binary", model_class="QP", summary="(2) plus a constant")
def build_scaled(X, y, nu, alpha, *, scale: float):
    m = build_primal_2(X, y, nu, alpha)
    m.k = pyo.Var(bounds=(scale, scale))
    m.obj.set_value(m.obj.expr + m.k)
    return m
'''
ARGS = ["--model", "SCALED2", "--dataset", "iris", "--class", "0", "--nu", "0.3", "--alpha", "1"]


@pytest.fixture
def plugin(tmp_path):
    from tpm_models.models.registry import REGISTRY

    path = tmp_path / "scaled_plugin.py"
    path.write_text(PLUGIN)
    yield str(path)
    REGISTRY.pop("SCALED2", None)
    sys.modules.pop("tpm_models_plugin_scaled_plugin", None)


def test_export_takes_param(plugin, tmp_path, capsys):
    out = tmp_path / "s.lp"
    assert main(["--plugin", plugin, "export", *ARGS, "--param", "scale=2.5", "--out", str(out)]) == 0, \
        capsys.readouterr().err
    assert "2.5 <= k <= 2.5" in out.read_text()


def test_solve_takes_param(plugin, capsys):
    assert main(["--plugin", plugin, "solve", *ARGS, "--param", "scale=0"]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_non_finite_param_is_refused_naming_it(plugin, tmp_path, capsys, value):
    out = tmp_path / "s.lp"
    assert main(["--plugin", plugin, "export", *ARGS, "--param", f"scale={value}", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--param scale={value}: must be a finite number" in err and not out.exists()


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_robustify_refuses_a_non_finite_gamma(tmp_path, capsys, value):
    out = tmp_path / "rc.lp"
    code = main(["robustify", "--model", "15", "--rows", "margin", "--vars", "w", "--set", "budget", "--eps", "0.02",
                 "--nu", "0.3", "--alpha", "1", "--param", f"gamma={value}", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and f"--param gamma={value}: must be a finite number" in err and not out.exists(), err


def test_robustify_names_the_parameter_and_the_file_it_cannot_read(tmp_path, capsys):
    bad = tmp_path / "shape.csv"
    bad.write_text("1,x\n2,3\n")
    code = main(["robustify", "--model", "15", "--rows", "margin", "--vars", "w", "--set", "ellipsoid", "--eps",
                 "0.02", "--nu", "0.3", "--alpha", "1", "--param", f"shape={bad}", "--out", str(tmp_path / "r.lp")])
    err = capsys.readouterr().err
    assert code == 2 and "--param shape=" in err and str(bad) in err, err
