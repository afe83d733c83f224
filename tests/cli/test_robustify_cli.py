"""``tpm-models robustify`` from a plugin file: a user's nominal model made robust, written, read back, verified.

Truths: the robust soft-margin SVM under boxes written here by hand (the support of a box
:math:`|\\delta_j|\\le\\varepsilon` is :math:`\\varepsilon\\|w\\|_1`), solved by the library; the written ``.lp`` read
back by HiGHS's own reader and solved by HiGHS; the verifier's verdict (cutting planes)."""

import math

import numpy as np
import pyomo.environ as pyo
import pytest

from tpm_models import load_dataset, min_max_scale, solve
from tpm_models.cli import main

PLUGIN = '''
import numpy as np
import pyomo.environ as pyo

from tpm_models import register_model


@register_model("SVMR", family="binary", model_class="QP", summary="soft-margin linear SVM (a user's nominal model)")
def build_svm(X, y, nu, alpha):
    """min 1/2 |w|^2 + alpha/m sum xi  s.t.  y_i (x_i'w + b) >= 1 - xi_i, xi >= 0  (nu unused)."""
    m = pyo.ConcreteModel("soft-margin SVM")
    m.J = pyo.RangeSet(1, X.shape[1])
    m.I = pyo.RangeSet(1, X.shape[0])
    m.w = pyo.Var(m.J)
    m.b = pyo.Var()
    m.xi = pyo.Var(m.I, domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=0.5 * sum(m.w[j] ** 2 for j in m.J) + alpha / X.shape[0] * sum(m.xi[i] for i in m.I))
    m.fit = pyo.Constraint(m.I, rule=lambda m, i: float(y[i - 1]) * (
        sum(float(X[i - 1, j - 1]) * m.w[j] for j in m.J) + m.b) + m.xi[i] >= 1)
    return m
'''


def svm_by_hand(X, yb, alpha, eps):
    """The robust SVM under |delta_j| <= eps on every point: y_i (x_i'w + b) - eps |w|_1 >= 1 - xi_i."""
    m = pyo.ConcreteModel()
    n, k = X.shape[1], X.shape[0]
    m.w = pyo.Var(range(n))
    m.a = pyo.Var(range(n), domain=pyo.NonNegativeReals)
    m.b = pyo.Var()
    m.xi = pyo.Var(range(k), domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=0.5 * sum(m.w[j] ** 2 for j in range(n)) + alpha / k * sum(m.xi[i] for i in range(k)))
    m.abs1 = pyo.Constraint(range(n), rule=lambda m, j: m.a[j] >= m.w[j])
    m.abs2 = pyo.Constraint(range(n), rule=lambda m, j: m.a[j] >= -m.w[j])
    m.fit = pyo.Constraint(range(k), rule=lambda m, i: yb[i] * (sum(X[i, j] * m.w[j] for j in range(n)) + m.b)
                           - eps * sum(m.a[j] for j in range(n)) + m.xi[i] >= 1)
    return solve(m).objective


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    path = tmp_path_factory.mktemp("plugin") / "svm_plugin.py"
    path.write_text(PLUGIN)
    return str(path)


def test_robustify_a_plugin_model_writes_reads_back_and_verifies(plugin, tmp_path, capsys):
    import highspy

    out = tmp_path / "svm_box.lp"
    code = main(["--plugin", plugin, "robustify", "--model", "SVMR", "--dataset", "iris", "--class", "1",
                 "--nu", "0.1", "--alpha", "1", "--set", "box", "--eps", "0.03", "--rows", "fit", "--vars", "w",
                 "--out", str(out), "--verify"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "VERIFIED: a robust counterpart" in text and "counterpart  " in text and out.is_file()
    d = load_dataset("iris")
    X, yb = min_max_scale(d.X), np.where(d.y == 1, 1.0, -1.0)
    truth = svm_by_hand(X, yb, 1.0, 0.03)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for option in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
        h.setOptionValue(option, 1e-9)
    assert h.readModel(str(out)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert math.isclose(h.getInfo().objective_function_value, truth, rel_tol=1e-6)


@pytest.mark.parametrize("args", [["--set", "ellipsoid"], ["--set", "budget", "--param", "gamma=2"],
                                  ["--set", "ball", "--p", "3"]])
def test_robustify_other_sets_from_the_plugin_verified(plugin, tmp_path, capsys, args):
    out = tmp_path / "svm.nl"
    code = main(["--plugin", plugin, "robustify", "--model", "SVMR", "--dataset", "iris", "--class", "2",
                 "--nu", "0.1", "--alpha", "1", "--eps", "0.02", "--vars", "w", "--out", str(out), "--verify", *args])
    text = capsys.readouterr().out
    assert code == 0 and "VERIFIED" in text and out.stat().st_size > 0, text


def test_robustify_the_paper_declarations_under_a_budget_set(tmp_path, capsys):
    out = tmp_path / "rc.mps"
    code = main(["robustify", "--model", "15R", "--dataset", "wine", "--class", "0", "--nu", "0.3", "--alpha", "1",
                 "--set", "budget", "--param", "gamma=3", "--eps", "0.02", "--out", str(out), "--verify"])
    text = capsys.readouterr().out
    assert code == 0 and "VERIFIED" in text and "the uncertain data of (15R)" in text, text


@pytest.mark.parametrize("args,message", [
    (["--set", "ball"], "needs --p"),
    (["--set", "budget", "--param", "shape=1"], "has no number 'shape'"),
    (["--set", "box", "--rows", "nothing"], "no constraint 'nothing'"),
    (["--set", "box", "--vars", "v"], "no variable 'v'"),
    (["--set", "box", "--param", "gamma"], "NAME=VALUE"),
])
def test_robustify_bad_input_is_exit_2_with_a_message(plugin, tmp_path, capsys, args, message):
    code = main(["--plugin", plugin, "robustify", "--model", "SVMR", "--nu", "0.1", "--alpha", "1", "--eps", "0.02",
                 "--out", str(tmp_path / "x.lp"), *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err


PLAN_PLUGIN = '''
import numpy as np
import pyomo.environ as pyo

from tpm_models import register_model

HOURS = np.array([[2.0, 3.0, 1.0], [4.0, 1.0, 2.0], [3.0, 4.0, 2.0]])


@register_model("PLAN", family="binary", model_class="LP", summary="a production plan (data of its own)")
def build_plan(X, y, nu, alpha):
    """max 5 x0 + 4 x1 + 3 x2 s.t. HOURS x <= (50, 60, 70), x >= 0; the data, nu and alpha unused."""
    m = pyo.ConcreteModel("production plan")
    m.x = pyo.Var(range(3), domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=5 * m.x[0] + 4 * m.x[1] + 3 * m.x[2], sense=pyo.maximize)
    m.machine = pyo.Constraint(range(3), rule=lambda m, k: sum(float(HOURS[k, j]) * m.x[j] for j in range(3))
                               <= (50.0, 60.0, 70.0)[k])
    return m
'''


def test_robustify_a_plugin_lp_needs_no_paper_options(tmp_path, capsys):
    """No --nu, --alpha, --dataset; a maximised objective. The box |delta_kj| <= 0.3 on the hours, x >= 0: the worst
    case is every time + 0.3; that LP, written and solved here, against the written counterpart read back and solved
    by HiGHS."""
    import highspy

    path = tmp_path / "plan_plugin.py"
    path.write_text(PLAN_PLUGIN)
    out = tmp_path / "plan.lp"
    code = main(["--plugin", str(path), "robustify", "--model", "PLAN", "--set", "box", "--eps", "0.3",
                 "--out", str(out)])
    assert code == 0, capsys.readouterr()
    assert "3 uncertain rows" in capsys.readouterr().out
    hours = np.array([[2.0, 3.0, 1.0], [4.0, 1.0, 2.0], [3.0, 4.0, 2.0]]) + 0.3
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=5 * m.x[0] + 4 * m.x[1] + 3 * m.x[2], sense=pyo.maximize)
    m.machine = pyo.Constraint(range(3), rule=lambda m, k: sum(hours[k, j] * m.x[j] for j in range(3))
                               <= (50.0, 60.0, 70.0)[k])
    truth = solve(m).objective
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(out)) == highspy.HighsStatus.kOk
    h.run()
    assert math.isclose(h.getInfo().objective_function_value, truth, rel_tol=1e-7)


def test_robustify_a_paper_model_still_needs_nu_and_alpha(tmp_path, capsys):
    code = main(["robustify", "--model", "15", "--set", "box", "--eps", "0.02", "--out", str(tmp_path / "a.lp")])
    assert code == 2 and "--nu and --alpha" in capsys.readouterr().err
