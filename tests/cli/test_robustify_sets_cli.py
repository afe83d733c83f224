"""``tpm-models robustify --set SPEC``: every set the library has, each with its own numbers, from the command line,
written and read back; several ``--set`` as their intersection or (``--product``) Cartesian product; the form of
before unchanged; bad specs refused with what is wrong and the form to write.

Truths: a production plan (maximise profit, x >= 0, three machines) whose hours move in the set. For a polytope
the robust LP is the plan's rows at every vertex of the set (vertices enumerated here: every 3 active facets), solved
by scipy's HiGHS; the counterpart written to ``.lp`` is read back and solved by HiGHS's own reader. With x >= 0 the
budgets' worst case is the Gamma largest deviations (pairs of products for Gamma = 2). For the sets with a cone,
the verifier's cutting planes (``--verify``)."""

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from tpm_models.cli import main

PLUGIN = '''
import numpy as np
import pyomo.environ as pyo

from tpm_models import register_model

HOURS = np.array([[2.0, 3.0, 1.0], [4.0, 1.0, 2.0], [3.0, 4.0, 2.0]])


@register_model("PLANS", family="binary", model_class="LP", summary="a production plan (data of its own)")
def build_plan(X, y, nu, alpha):
    """max 5 x0 + 4 x1 + 3 x2 s.t. HOURS x <= (50, 60, 70), x >= 0; the data, nu and alpha unused."""
    m = pyo.ConcreteModel("production plan")
    m.x = pyo.Var(range(3), domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=5 * m.x[0] + 4 * m.x[1] + 3 * m.x[2], sense=pyo.maximize)
    m.machine = pyo.Constraint(range(3), rule=lambda m, k: sum(float(HOURS[k, j]) * m.x[j] for j in range(3))
                               <= (50.0, 60.0, 70.0)[k])
    return m
'''
HOURS = np.array([[2.0, 3.0, 1.0], [4.0, 1.0, 2.0], [3.0, 4.0, 2.0]])
CAPACITY = np.array([50.0, 60.0, 70.0])
PROFIT = np.array([5.0, 4.0, 3.0])
SCENARIOS = np.array([[0.3, -0.1, 0.2], [-0.2, 0.4, 0.1], [0.1, 0.1, -0.3]])
PSI = np.array([[0.3, 0.0], [0.1, 0.2], [0.0, 0.4]])
POLY_A = np.vstack([np.eye(3), -np.eye(3), np.ones((1, 3))])
POLY_B = np.r_[np.full(3, 0.2), np.full(3, 0.1), 0.3]

LP_TOL = 1e-7
"""HiGHS on the written file (feasibility 1e-7) against HiGHS on the LP over the vertices: relative, on an optimum
of about 90."""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sets")
    (folder / "plan_sets_plugin.py").write_text(PLUGIN)
    np.savetxt(folder / "P.csv", SCENARIOS, delimiter=",")
    np.savetxt(folder / "PSI.csv", PSI, delimiter=",")
    np.save(folder / "A.npy", POLY_A)
    np.save(folder / "b.npy", POLY_B)
    np.save(folder / "S.npy", np.diag([0.04, 0.09, 0.01]))
    np.savetxt(folder / "P2.csv", SCENARIOS[:, :2], delimiter=",")
    return folder


def vertices(A, b):
    """The vertices of {A delta <= b} in R^3: every 3 active rows."""
    out = []
    for rows in itertools.combinations(range(len(b)), 3):
        M = A[list(rows)]
        if abs(np.linalg.det(M)) > 1e-12:
            v = np.linalg.solve(M, b[list(rows)])
            if np.all(A @ v <= b + 1e-10):
                out.append(v)
    return np.array(out)


def plan_over(deltas) -> float:
    """The plan robust over finitely many perturbations of every machine's hours (the vertices of the set)."""
    rows = np.array([HOURS[k] + d for k in range(3) for d in deltas])
    res = linprog(-PROFIT, A_ub=rows, b_ub=np.repeat(CAPACITY, len(deltas)), bounds=[(0, None)] * 3, method="highs")
    assert res.status == 0
    return -float(res.fun)


def box(lo, up):
    return np.vstack([np.eye(3), -np.eye(3)]), np.r_[up, -np.asarray(lo)]


def two_of(d):
    """The worst cases of a budget of Gamma = 2 with deviations d on x >= 0: two products up (pairs), and one."""
    return [d * (np.eye(3)[i] + np.eye(3)[j]) for i, j in itertools.combinations(range(3), 2)]


TRUTHS = {
    "box:0.3": lambda: [np.full(3, 0.3)],
    "ball:inf:0.3": lambda: [np.full(3, 0.3)],
    "ball:p=1:r=0.3": lambda: list(0.3 * np.eye(3)),
    "box:lower=-0.1:upper=0.2": lambda: [np.full(3, 0.2)],
    "budget:0.3:2": lambda: two_of(0.3),
    "cardinality:d=0.3:gamma=2": lambda: two_of(0.3),
    "symmetric-budget:0.3:2": lambda: two_of(0.3),
    "scenarios:P.csv": lambda: list(SCENARIOS),
    "polyhedron:A=A.npy:b=b.npy": lambda: vertices(POLY_A, POLY_B),
    "polyhedron:0.3": lambda: list(0.3 * np.eye(3)),  # the l_1 ball
    "factor:PSI.csv:0.5": lambda: [PSI @ xi for xi in ([1, 0], [0, 1], [-1, 0], [0, -1], [1, -1], [-1, 1])],
    "box:0.15 --set polyhedron:A=A.npy:b=b.npy": lambda: vertices(np.vstack([POLY_A, box(-0.15 * np.ones(3),
                                                                                          0.15 * np.ones(3))[0]]),
                                                                  np.r_[POLY_B, np.full(6, 0.15)]),
    "box:0.3 --set budget:0.2:1 --product 2 1": lambda: [np.array([0.3, 0.3, z]) for z in (0.0, 0.2)],
}


def highs_optimum(path) -> float:
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


def args_of(spec: str) -> list[str]:
    """``box:0.3 --set ball:2:0.1 --product 2 1`` as the arguments after --set."""
    return ["--set", *spec.split()]


@pytest.mark.parametrize("spec", list(TRUTHS))
def test_every_set_from_the_command_line_equals_the_lp_over_its_vertices(files, capsys, monkeypatch, spec):
    monkeypatch.chdir(files)
    out = files / "plan.lp"
    code = main(["--plugin", "plan_sets_plugin.py", "robustify", "--model", "PLANS", *args_of(spec), "--out", str(out)])
    text = capsys.readouterr()
    assert code == 0, text
    assert "3 uncertain rows" in text.out and "set " + spec.split(":")[0] in text.out
    truth = plan_over(TRUTHS[spec]())
    assert highs_optimum(out) == pytest.approx(truth, rel=LP_TOL)
    assert truth < 98.3  # the nominal plan's 98.33: every set costs something


CONES = ["ball:2:0.3", "ellipsoid:0.3:shape=S.npy", "ellipsoid:0.3 --set box:0.2", "scenarios:P.csv --set ball:2:0.3",
         "factor:PSI.csv:0.5 --set ellipsoid:0.25", "box:0.3 --set ellipsoid:0.2 --product 2 1",
         "symmetric-budget:0.3:1.5 --set ball:2:0.35"]


@pytest.mark.parametrize("spec", CONES)
def test_sets_with_a_cone_are_verified_by_cutting_planes(files, capsys, monkeypatch, spec):
    monkeypatch.chdir(files)
    code = main(["--plugin", "plan_sets_plugin.py", "robustify", "--model", "PLANS", *args_of(spec),
                 "--out", str(files / "plan.nl"), "--verify"])
    text = capsys.readouterr().out
    assert code == 0 and "VERIFIED: a robust counterpart" in text, text


@pytest.mark.parametrize("old,new", [
    (["--set", "box", "--eps", "0.3"], ["--set", "box:0.3"]),
    (["--set", "ball", "--p", "2", "--eps", "0.02"], ["--set", "ball:2:0.02"]),
    (["--set", "budget", "--param", "gamma=2", "--eps", "0.3"], ["--set", "budget:0.3:2"]),
    (["--set", "polyhedron", "--param", "A=A.npy", "--param", "b=b.npy", "--eps", "1"],
     ["--set", "polyhedron:A=A.npy:b=b.npy"]),
])
def test_the_form_of_before_writes_the_same_model(files, capsys, monkeypatch, old, new):
    monkeypatch.chdir(files)
    head = ["--plugin", "plan_sets_plugin.py", "robustify", "--model", "PLANS"]
    assert main([*head, *old, "--out", "old.lp"]) == 0
    assert main([*head, *new, "--out", "new.lp"]) == 0
    capsys.readouterr()
    assert (files / "old.lp").read_text() == (files / "new.lp").read_text()


def test_the_paper_declarations_under_a_symmetric_budget_verified(tmp_path, capsys):
    code = main(["robustify", "--model", "15R", "--dataset", "iris", "--class", "1", "--nu", "0.3", "--alpha", "1",
                 "--set", "symmetric-budget:0.02:2", "--out", str(tmp_path / "rc.lp"), "--verify"])
    text = capsys.readouterr().out
    assert code == 0 and "VERIFIED" in text and "symmetric-budget:d=0.02:gamma=2" in text, text


@pytest.mark.parametrize("fmt", ["lp", "mps", "nl", "gms", "cbf", "ptf"])
def test_a_composite_counterpart_is_exported_in_every_format(files, capsys, monkeypatch, fmt):
    monkeypatch.chdir(files)
    code = main(["--plugin", "plan_sets_plugin.py", "robustify", "--model", "PLANS", "--set", "scenarios:P.csv",
                 "--set", "ellipsoid:0.4", "--out", f"plan.{fmt}"])
    assert code == 0, capsys.readouterr()
    assert (files / f"plan.{fmt}").stat().st_size > 500


@pytest.mark.parametrize("args,message", [
    (["--set", "foo:1"], "no set 'foo'; the sets are ball, box"),
    (["--set", "box:abc"], "'abc' is neither a number nor a file"),
    (["--set", "box:nan"], "nan is not a number"),
    (["--set", "box:-0.1"], "half-widths must be a number or a vector of numbers >= 0"),
    (["--set", "ball:2:inf"], "must be finite and >= 0"),
    (["--set", "ball:2"], "the ball set needs r; the form is ball:P:R"),
    (["--set", "ball:0.5:1"], "p must be >= 1"),
    (["--set", "box:0.1:0.2"], "too many numbers for the box set; the form is box:R"),
    (["--set", "box:width=1"], "the box set has no number 'width'"),
    (["--set", "box::0.1"], "an empty item"),
    (["--set", "box:r=0.1:r=0.2"], "r is given twice"),
    (["--set", "box:0.1", "--eps", "0.2"], "its r is given twice"),
    (["--set", "scenarios:P.csv", "--eps", "1"], "carries its own size"),
    (["--set", "box:0.1", "--set", "ball:2:1", "--eps", "1"], "give each set its own numbers"),
    (["--set", "box:0.1", "--set", "ball:2:1", "--product", "2", "2"], "the sizes add up to 4"),
    (["--set", "box:0.1", "--set", "ball:2:1", "--product", "3"], "one size a --set"),
    (["--set", "scenarios:P2.csv"], "is in R^2, but the uncertain rows perturb 3 coefficients"),
    (["--set", "factor:PSI.csv:1.5"], r"in [0, 1]"),
    (["--set", "box:lower=0.5:upper=1", "--set", "ellipsoid:0.1"], "empty"),
    (["--set", "box", "--eps", "-1"], "must be finite and >= 0"),
    (["--set", "box"], "the box set needs r"),
    (["--set", "ball", "--eps", "0.1"], "needs --p"),
])
def test_a_bad_set_is_exit_2_with_what_is_wrong(files, capsys, monkeypatch, args, message):
    monkeypatch.chdir(files)
    code = main(["--plugin", "plan_sets_plugin.py", "robustify", "--model", "PLANS", *args, "--out", "x.lp"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err


def test_solve_says_where_its_objective_comes_from(files, capsys, monkeypatch):
    """'as printed in the paper' for the paper's models only: a counterpart derived here, a dual derived here and
    a user's model say what they are."""
    common = ["--dataset", "iris", "--class", "0", "--nu", "0.3", "--alpha", "1"]
    notes = {}
    for key, extra in (("15", []), ("15R", ["--p", "2", "--eps", "0.02"]), ("28D", ["--eps", "0.02"])):
        assert main(["solve", "--model", key, *common, *extra]) == 0
        notes[key] = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("objective"))
    monkeypatch.chdir(files)
    assert main(["--plugin", "plan_sets_plugin.py", "solve", "--model", "PLANS", *common]) == 0
    notes["PLANS"] = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("objective"))
    assert "(as printed in the paper)" in notes["15"]
    assert "as printed" not in notes["15R"] and "robust counterpart of (15) derived" in notes["15R"]
    assert "as printed" not in notes["28D"] and "dual derived here; opt(28) = this" in notes["28D"]
    assert "as printed" not in notes["PLANS"] and "registered by the user" in notes["PLANS"]


UNBOUNDED = '''
import pyomo.environ as pyo
from tpm_models import register_model


@register_model("UNBOUNDEDS", family="binary", model_class="LP", summary="an unbounded LP")
def build(X, y, nu, alpha):
    """max x0 + x1 s.t. x0 - x1 <= 1, x >= 0: x = (t, t) improves without end."""
    m = pyo.ConcreteModel("unbounded")
    m.x = pyo.Var(range(2), domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    m.cap = pyo.Constraint(expr=m.x[0] - m.x[1] <= 1)
    return m
'''


def test_robustify_verify_says_when_the_nominal_model_is_unbounded(tmp_path, capsys):
    (tmp_path / "unbounded_sets_plugin.py").write_text(UNBOUNDED)
    code = main(["--plugin", str(tmp_path / "unbounded_sets_plugin.py"), "robustify", "--model", "UNBOUNDEDS",
                 "--set", "box:0.1", "--out", str(tmp_path / "u.lp"), "--verify"])
    text = capsys.readouterr().out
    assert code == 1 and "COULD NOT DECIDE" in text and "the nominal model is unbounded" in text, text


NO_DATA = '''
import pyomo.environ as pyo
from tpm_models import register_model


@register_model("NODATAS", family="binary", model_class="LP", summary="a plan with data of its own")
def build():
    """max x0 + x1 s.t. x0 + 2 x1 <= 4, x >= 0: no data, nu or alpha."""
    m = pyo.ConcreteModel("plan")
    m.x = pyo.Var(range(2), domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=m.x[0] + m.x[1], sense=pyo.maximize)
    m.cap = pyo.Constraint(expr=m.x[0] + 2 * m.x[1] <= 4)
    return m
'''


def test_a_builder_without_data_arguments_is_robustified(tmp_path, capsys):
    """def build(): no (X, y, nu, alpha). Truth: under |delta_j| <= 0.1 with x >= 0 the row is 1.1 x0 + 2.1 x1 <= 4,
    whose optimum is x0 = 4 / 1.1 (closed form); the written file read back by HiGHS."""
    (tmp_path / "no_data_sets_plugin.py").write_text(NO_DATA)
    out = tmp_path / "plan.lp"
    code = main(["--plugin", str(tmp_path / "no_data_sets_plugin.py"), "robustify", "--model", "NODATAS",
                 "--set", "box:0.1", "--out", str(out), "--verify"])
    text = capsys.readouterr().out
    assert code == 0 and "VERIFIED" in text, text
    assert highs_optimum(out) == pytest.approx(4 / 1.1, rel=LP_TOL)
