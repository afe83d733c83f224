"""The ``tpm-models`` command: outputs checked against the API solved by another solver."""

import csv
import json
import os
import re
import subprocess
import sys
import warnings
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

import tpm_models
from tpm_models import Kernel, build, load_dataset, min_max_scale, solve
from tpm_models.cli import main
from tpm_models.solvers.backends.registry import BACKENDS, LARGE_MODEL
from tpm_models.solvers.compare import rel_gap


def run_json(capsys, *args):
    code = main(["solve", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_solve_json_15_against_highs(capsys):
    code, out = run_json(capsys, "--model", "15", "--dataset", "wine", "--class", "2", "--nu", "0.3", "--alpha", "1")
    assert code == 0
    assert {"objective", "termination", "solver", "seconds", "values"} <= set(out)
    assert out["termination"] == "optimal" and out["label"] == "3"  # class 2 = cultivar 3
    d = load_dataset("wine")
    truth = solve(build(15, min_max_scale(d.X), d.y, 2, 0.3, 1.0), "highs")
    assert rel_gap(out["objective"], truth.objective) < 1e-7
    assert len(out["values"]["w"]) == 13 and isinstance(out["values"]["theta"], float)
    assert len(out["values"]["xi"]) == 48
    np.testing.assert_allclose(out["values"]["w"], truth.values["w"], atol=1e-6)


def test_solve_json_19_gaussian_and_label_class(capsys):
    code, out = run_json(capsys, "--model", "19", "--dataset", "iris", "--class", "virginica", "--nu", "0.2",
                         "--alpha", "1", "--kernel", "gaussian", "--sigma", "0.5", "--solver", "daqp")
    assert code == 0 and out["class"] == 2 and out["solver"] == "daqp"
    d = load_dataset("iris")
    truth = solve(build(19, min_max_scale(d.X), d.y, 2, 0.2, 1.0, Kernel("gaussian", sigma=0.5)), "piqp")
    assert rel_gap(out["objective"], truth.objective) < 1e-7
    assert abs(sum(out["values"]["lam"]) - 0.2) < 1e-8  # e'lam = nu


def test_solve_binary_on_a_user_csv(capsys, tmp_path):
    rng = np.random.default_rng(1)
    X = rng.random((30, 2))
    labels = np.where(X[:, 0] > 0.5, "hi", "lo")
    path = tmp_path / "toy.csv"
    path.write_text("a,b,kind\n" + "".join(f"{x:.6f},{z:.6f},{k}\n" for (x, z), k in zip(X, labels)))
    code, out = run_json(capsys, "--model", "2", "--dataset", str(path), "--class", "lo", "--nu", "0.5",
                         "--alpha", "1", "--solver", "highs")
    assert code == 0 and out["dataset"] == "toy" and out["class"] == 1
    d = load_dataset(path)
    truth = solve(build(2, min_max_scale(d.X), d.y, 1, 0.5, 1.0), "piqp")
    assert rel_gap(out["objective"], truth.objective) < 1e-7


def test_solve_22_by_pyros_on_the_whole_iris_set(capsys):
    """``--method pyros`` (Ipopt plugin subsolvers, the default) on all 150 points = (29) by PIQP at p = inf:
    Theorem 1. PyROS resolves violations to 1e-8 (PYROS_FEASIBILITY_TOL); the objective is ~3e-2."""
    code, out = run_json(capsys, "--model", "22", "--method", "pyros", "--dataset", "iris", "--class", "0",
                         "--nu", "0.3", "--alpha", "1", "--p", "inf", "--eps", "0.02")
    assert code == 0 and out["termination"] == "robust_optimal" and "tpm_ipopt" in out["solver"]
    d = load_dataset("iris")
    truth = solve(build(23, min_max_scale(d.X), d.y, 0, 0.3, 1.0, p=float("inf"), eps=0.02), "piqp")
    assert rel_gap(out["objective"], truth.objective) < 1e-8


@pytest.mark.parametrize(
    "args,message",
    [
        (["--model", "15", "--nu", "2", "--alpha", "1"], "nu <= alpha"),
        (["--model", "15", "--nu", "-1", "--alpha", "1"], "nu must be a finite number > 0"),
        (["--model", "7", "--nu", "0.1", "--alpha", "1"], "not a model of the paper"),
        (["--model", "15", "--nu", "0.1", "--alpha", "1", "--class", "5"], "classes 0..2"),
        (["--model", "19", "--nu", "0.1", "--alpha", "1"], "needs --kernel"),
        (["--model", "19", "--nu", "0.1", "--alpha", "1", "--kernel", "gaussian"], "missing --sigma"),
        (["--model", "19", "--nu", "0.1", "--alpha", "1", "--kernel", "gaussian", "--sigma", "0"], "sigma must be > 0"),
        (["--model", "15", "--nu", "0.1", "--alpha", "1", "--kernel", "gaussian", "--sigma", "1"], "linear model"),
        (["--model", "15", "--nu", "0.1", "--alpha", "1", "--solver", "nope"], "unknown solver"),
        (["--model", "15", "--nu", "0.1", "--alpha", "1", "--dataset", "nope.csv"], "neither a shipped set"),
    ],
)
def test_bad_input_is_a_clear_error(capsys, args, message):
    assert main(["solve", *args]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow  # every tie of `tpm-models check` on Iris: 309 s measured (load 4-6 on 2 cores)
def test_check_jobs_2_measures_the_rows_of_jobs_1(tmp_path, capsys):
    """``check`` passes on Iris, and ``check --jobs 2`` (the groups of ties in two worker processes, each with its
    own models and solves) measures the same ties on the same instances, in the same order, as ``--jobs 1`` (all in
    this process). The truth is the sequential run; the report gives the wall time of every group. (One test, not
    two: each ``check`` of Iris takes about a minute.)"""
    rows, outs = {}, {}
    for jobs in (1, 2):
        path = tmp_path / f"jobs{jobs}.csv"
        code = main(["check", "--dataset", "iris", "--no-pyros", "--cross-solvers", "piqp", "highs", "ipopt",
                     "--quiet", "--jobs", str(jobs), "--csv", str(path)])
        outs[jobs] = capsys.readouterr().out
        assert code == 0, outs[jobs][-3000:]
        with open(path, newline="") as fh:
            table = list(csv.DictReader(fh))
        assert all(r["passed"] == "True" for r in table)
        rows[jobs] = [(r["tie"], r["instance"]) for r in table]
    assert rows[2] == rows[1]
    ties = {tie for tie, _ in rows[1]}
    assert {"strong duality (15)<->(16)", "(23K) eps=0 = (19) + constant", "(27D) strong duality with (27)",
            "kernel + 2.5: same predictions", "(25) oracle: |delta*|_p = eps"} <= ties
    for jobs in (1, 2):
        for group in ("deterministic", "protocol", "(25) oracle", "robust"):
            assert f"  {group} ties iris: " in outs[jobs]
        assert f"{len(rows[1])} ties, 0 failed" in outs[jobs] and f"--jobs {jobs})" in outs[jobs]
        assert "strong duality (15)<->(16)" in outs[jobs]
        assert "(22) cutting planes = (23)" in outs[jobs] and "(23) robust over U (exact separation)" in outs[jobs]


@pytest.mark.slow  # every tie of `tpm-models check` on Iris: 290 s measured (load 4-6 on 2 cores)
def test_check_command_as_the_main_job_runs_it():
    """``tpm-models check`` as ``make run`` runs it: a fresh process, every installed solver in the cross-solver ties
    and PyROS on. The Iris run alone: about 65 s. The narrower test above missed a failure that needed both
    (an Xpress solve, then PyROS with Gurobi: ``semi_infinite.GUROBI_BACKUP_OPTIONS``)."""
    out = subprocess.run([sys.executable, "-m", "tpm_models.cli", "check", "--dataset", "iris", "--quiet"],
                         capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert " 0 failed" in out.stdout
    pyros_rows = [line for line in out.stdout.splitlines() if line.startswith("(22) PyROS = (23)")]
    if find_spec("gurobipy") is not None:  # PyROS here needs Gurobi as subsolver
        assert pyros_rows and all(" pass " in line for line in pyros_rows), pyros_rows


def test_version_is_the_packages_and_the_changelogs_latest(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    printed = capsys.readouterr().out.strip()
    changelog = (Path(__file__).resolve().parents[2] / "CHANGELOG.md").read_text()
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", changelog, flags=re.M)
    assert released, "CHANGELOG.md names no released version"
    assert printed == f"tpm-models {released[0]}" == f"tpm-models {tpm_models.__version__}"


def test_help_opens_with_what_the_command_is_for_and_its_start_runs(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    description = text.split("positional arguments:")[0]
    assert "Build, solve, check and export the models of" in description
    assert "A Robust Twin Parametric Margin Support Vector Machine for Multiclass Classification" in description
    assert "the only place that parses arguments" not in text  # the developer's docstring
    start = re.search(r"'(tpm-models solve [^']+)'", text).group(1).split()[1:]
    assert main([*start, "--json"]) == 0  # the epilog's example runs as written
    assert json.loads(capsys.readouterr().out)["termination"] == "optimal"


@pytest.mark.skipif(find_spec("xpress") is None, reason="xpress is not installed (tpm-models[commercial])")
def test_xpress_warnings_are_silenced_on_the_command_line(tmp_path):
    """Xpress's DeprecationWarning (through Pyomo) and LicenseWarning, shown by Python's default filters in a
    plain process (the control), are not printed by the command; a worker process inherits the filters."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    control = subprocess.run([sys.executable, "-W", "default", "-c",
                              "import warnings, pyomo.environ as pyo; from tpm_models import build, load_dataset, "
                              "min_max_scale, solve; d = load_dataset('iris'); "
                              "solve(build(15, min_max_scale(d.X), d.y, c=0, nu=0.3, alpha=1.0), 'xpress')"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert control.returncode == 0 and "Using the Community license" in control.stderr
    done = subprocess.run([sys.executable, "-W", "default", "-m", "tpm_models.cli", "solve", "--model", "15",
                           "--dataset", "iris", "--class", "0", "--nu", "0.3", "--alpha", "1", "--solver", "xpress"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr and "Community license" not in done.stderr


def test_worker_processes_inherit_the_silenced_warnings(monkeypatch):
    from tpm_models.cli.main import silence_optional_solver_warnings

    warn = [sys.executable, "-c", "import warnings; warnings.warn('Using the Community license in this session')"]
    monkeypatch.setenv("PYTHONWARNINGS", "default")
    assert "Community license" in subprocess.run(warn, capture_output=True, text=True, timeout=60).stderr
    with warnings.catch_warnings():
        silence_optional_solver_warnings()  # what main() does first
        assert subprocess.run(warn, capture_output=True, text=True, timeout=60).stderr == ""
    assert os.environ["PYTHONWARNINGS"].startswith("default,")  # the user's filters are kept


def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "tpm_models.cli", "models"], capture_output=True, text=True)
    assert out.returncode == 0 and "(19)" in out.stdout


def test_solve_robust_28_json_against_another_solver(capsys):
    code, out = run_json(capsys, "--model", "28", "--dataset", "iris", "--class", "0", "--nu", "0.3",
                         "--alpha", "1", "--p", "2", "--eps", "0.02")
    assert code == 0 and out["solver"] == "clarabel" and out["p"] == "2"  # the default of SOCP
    assert {"w", "theta", "xi", "t", "u", "v"} <= set(out["values"])
    d = load_dataset("iris")
    truth = solve(build(28, min_max_scale(d.X), d.y, 0, 0.3, 1.0, p=2, eps=0.02), "scip")
    assert abs(out["objective"] - truth.objective) < 1e-8


def test_solve_22_cutting_plane_equals_the_socp(capsys):
    code, out = run_json(capsys, "--model", "22", "--dataset", "iris", "--class", "2", "--nu", "0.3",
                         "--alpha", "1", "--p", "inf", "--eps", "0.02")
    assert code == 0 and out["method"] == "cutting-plane" and out["max_violation"] <= 1e-11
    d = load_dataset("iris")
    truth = solve(build(29, min_max_scale(d.X), d.y, 2, 0.3, 1.0, eps=0.02), "ipopt")
    assert abs(out["objective"] - truth.objective) < 1e-8


@pytest.mark.parametrize(
    "args,message",
    [
        (["--model", "27", "--p", "2", "--eps", "0.1"], "takes p in"),
        (["--model", "23", "--p", "0.5", "--eps", "0.1"], "p must be >= 1"),
        (["--model", "23", "--p", "2", "--eps", "-0.1"], "eps must be >= 0"),
        (["--model", "23", "--p", "2"], "give --eps"),
        (["--model", "15", "--p", "2", "--eps", "0.1"], "apply to the robust models"),
        (["--model", "28", "--eps", "0.1", "--solver", "highs"], "highs cannot take a SOCP"),
        (["--model", "28", "--eps", "0.1", "--method", "pyros"], "--method applies to --model 22"),
        (["--model", "22", "--eps", "0.1", "--method", "pyros", "--solver", "piqp"], "--method pyros takes --solver"),
    ],
)
def test_robust_bad_input(capsys, args, message):
    assert main(["solve", *args, "--nu", "0.3", "--alpha", "1"]) == 2
    assert message in capsys.readouterr().err


MODEL_15 = ["--model", "15", "--dataset", "iris", "--class", "0", "--nu", "0.3", "--alpha", "1"]
WRITERS = {  # every command that writes, with PATH where it writes: a file (F) or a folder (D)
    "export": (["export", *MODEL_15, "--out", "{F}"]),
    "export-library": (["export-library", "--root", "{D}", "--quiet"]),
    "plot one": (["plot", "fig1-linear", "--out", "{F}"]),
    "plot all": (["plot", "all", "--out-dir", "{D}", "--csv", "{CSV}"]),
    "table3 store": (["table3", "--dataset", "iris", "--kernel", "linear", "--runs", "1", "--quiet", "--store", "{F}"]),
    "table3 out-dir": (["table3", "--dataset", "iris", "--kernel", "linear", "--runs", "1", "--quiet", "--no-store",
                        "--out-dir", "{D}"]),
    "reproduce": (["reproduce", "--dataset", "iris", "--runs", "1", "--no-checks", "--quiet", "--out-dir", "{D}"]),
    "robust-table records": (["robust-table", "--dataset", "iris", "--runs", "1", "--quiet", "--records", "{F}"]),
    "robust-table out-dir": (["robust-table", "--dataset", "iris", "--runs", "1", "--quiet", "--out-dir", "{D}"]),
    "robust-kernel-table": (["robust-kernel-table", "--dataset", "iris", "--runs", "1", "--quiet",
                             "--out-dir", "{D}"]),
    "check csv": (["check", "--dataset", "iris", "--no-robust", "--quiet", "--csv", "{F}"]),
}


@pytest.mark.parametrize("command,where", [
    (command, where) for command in sorted(WRITERS)
    for where in ("parent is a file", "folder is a file" if "{D}" in WRITERS[command] else "file is a folder")
])
def test_a_path_that_cannot_be_written_is_a_clear_error(tmp_path, capsys, command, where):
    """Found by trying (issue 15): a parent of --out that is a file ended in NotADirectoryError, an
    --out-dir that is a file in FileExistsError. Each command now says which path and why, before
    any work, and exits 2; nothing is written."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    folder = tmp_path / "folder"
    folder.mkdir()
    args = WRITERS[command]
    wants_folder = "{D}" in args
    if where == "parent is a file":
        target = blocker / "sub" / ("out" if wants_folder else "out.lp")
        reason = f"{blocker} is a file, not a folder"
    elif wants_folder:
        target, reason = blocker, "it is a file, not a folder"
    else:
        target, reason = folder, "it is a folder; give a file name"
    argv = [a.replace("{F}", str(target)).replace("{D}", str(target)).replace("{CSV}", str(blocker)) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tpm-models: error: cannot write") and str(target) in err and reason in err, err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "folder"] and not any(folder.iterdir())


def test_an_os_error_while_writing_is_a_message_not_a_traceback(tmp_path, capsys, monkeypatch):
    """The back stop: an OSError that no check foresaw (here the disk is full) names the path and exits 1."""
    import tpm_models.export.writers as export_module

    def full(path, data):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(export_module, "write_bytes", full)
    out = tmp_path / "eq15.lp"
    assert main(["export", *MODEL_15, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.strip().startswith(f"tpm-models: error: {out}: No space left on device; the file was left as it was")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("eps", ["0", "0.02"])
def test_a_solver_is_refused_before_running_whatever_eps(capsys, eps):
    """(23) at p = 2 holds a square root at every eps: HiGHS is refused before it runs, and no
    table is printed (at eps = 0 it used to be classed a QP, run, and print NaNs)."""
    code = main(["solve", "--model", "23", "--dataset", "iris", "--class", "0", "--nu", "0.3", "--alpha", "1",
                 "--p", "2", "--eps", eps, "--solver", "highs"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "highs cannot take a NLP" in err and "ipopt" in err


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_failed_solve_prints_no_values(capsys, monkeypatch, json_flag):
    """HiGHS capped at one iteration cannot solve (16): the command says so, exits 1, and shows
    no number that could be taken for a solution."""
    import tpm_models.solvers as S

    monkeypatch.setattr(S.common, "ITERATION_LIMIT", 1)
    code = main(["solve", "--model", "16", "--dataset", "wine", "--class", "1", "--nu", str(2**-7),
                 "--alpha", str(2**-6), "--solver", "highs", *json_flag])
    out, err = capsys.readouterr()
    assert code == 1 and "did not solve the model to optimality" in err
    if json_flag:
        payload = json.loads(out)
        assert payload["termination"] != "optimal" and payload["objective"] is None
        assert payload["values"] is None and payload["duals"] is None
    else:
        assert "lam" not in out and "objective" not in out and "nan" not in out.lower()


def test_verify_command_verifies_28_against_the_closed_form(capsys):
    """``tpm-models verify`` on (28): exit 0, and the printed optimum is (22)'s closed form (25) at (28)'s point
    solved by SCIP (a solver the verifier does not use)."""
    from tpm_models.models.semi_infinite import semi_infinite_objective

    code = main(["verify", "--model", "28", "--dataset", "iris", "--class", "2", "--nu", "0.3", "--alpha", "1",
                 "--eps", "0.02"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "VERIFIED" in out and "relative gap of the optima" in out
    d = load_dataset("iris")
    X = min_max_scale(d.X)
    truth = solve(build(28, X, d.y, 2, 0.3, 1.0, p=2, eps=0.02), "scip")
    closed = semi_infinite_objective(X, d.y, 2, 0.3, 1.0, 2.0, 0.02, truth.values["w"], truth.values["theta"])
    printed = float(next(line for line in out.splitlines() if line.startswith("semi-infinite optimum")).split()[-1])
    assert abs(printed - closed) <= 1e-8 * abs(closed)


@pytest.mark.skipif(find_spec("gurobipy") is None, reason="PyROS here uses Gurobi as subsolver")
def test_verify_command_by_pyros_on_a_subset(capsys):
    code = main(["verify", "--model", "27", "--dataset", "wine", "--class", "1", "--nu", "0.3", "--alpha", "1",
                 "--eps", "0.02", "--method", "pyros", "--solver", "gurobi", "--points-per-class", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "robust_optimal" in out and "VERIFIED" in out


def test_verify_command_exits_3_when_the_route_does_not_end(capsys):
    """A route that did not end is the third verdict, "could not decide" (exit 3), with its reason and the table:
    here PyROS with a time limit it cannot meet. Nothing contradicts (28): no violation is printed."""
    code = main(["verify", "--model", "28", "--dataset", "iris", "--nu", "0.3", "--alpha", "1", "--eps", "0.02",
                 "--method", "pyros", "--solver", "ipopt", "--time-limit", "1e-6"])
    captured = capsys.readouterr()
    assert code == 3, captured.out + captured.err
    assert "verdict: COULD NOT DECIDE: the pyros route ended time_out" in captured.out
    assert "violating point" not in captured.out and "Traceback" not in captured.err


PLUGIN = """
import pyomo.environ as pyo

from tpm_models import register_model
from tpm_models.checks.verify import NormBall, UncertainRow, UncertainTerm
from tpm_models.models.binary import build_primal_2


def uncertain(m, p, eps):  # (2) under (21): rows of X_plus, objective terms of X_minus, coefficients w
    w = [m.w[j] for j in m.J]
    return ([UncertainRow(m.margin[i], w, NormBall(p, eps), f"margin[{i}]") for i in m.X_plus]
            + [UncertainTerm(w, NormBall(p, eps), pyo.value(m.nu) / len(m.X_minus)) for i in m.X_minus])


def robust(X, y, nu, alpha, eps):  # p = inf: t >= |w|_1 = sum_j a_j
    m = build_primal_2(X, y, nu, alpha)
    m.name = f"CLI robust (2), radius {eps:g}"
    m.a = pyo.Var(m.J, domain=pyo.NonNegativeReals)
    m.a_ge = pyo.Constraint(m.J, rule=lambda m, j: m.a[j] - m.w[j] >= 0)
    m.a_ge_minus = pyo.Constraint(m.J, rule=lambda m, j: m.a[j] + m.w[j] >= 0)
    t = sum(m.a[j] for j in m.J)
    m.obj.set_value(m.obj.expr + nu * eps * t)
    for i in m.X_plus:
        m.margin[i].set_value(m.margin[i].body - eps * t >= 0)
    return m


@register_model("CLI2R", family="binary", model_class="QP", robust_p=(float("inf"),), nominal=2,
                uncertain=uncertain, compare=("w",), summary="robust (2), p = inf")
def build_cli_2r(X, y, nu, alpha, *, p, eps):
    return robust(X, y, nu, alpha, eps)


@register_model("CLI2H", family="binary", model_class="QP", robust_p=(float("inf"),), nominal=2,
                uncertain=uncertain, summary="robust (2), p = inf, radius halved: WRONG")
def build_cli_2h(X, y, nu, alpha, *, p, eps):
    return robust(X, y, nu, alpha, eps / 2)


@register_model("CLI2N", family="binary", model_class="QP", robust_p=(float("inf"),), summary="no nominal=")
def build_cli_2n(X, y, nu, alpha, *, p, eps):
    return robust(X, y, nu, alpha, eps)
"""


@pytest.fixture
def plugin_file(tmp_path):
    """A user's module registering a robust (2) (p = inf), a wrong one and one without counterpart data."""
    from tpm_models.models.registry import REGISTRY

    path = tmp_path / "cli_robust_plugin.py"
    path.write_text(PLUGIN)
    yield str(path)
    for key in ("CLI2R", "CLI2H", "CLI2N"):
        REGISTRY.pop(key, None)
    sys.modules.pop("tpm_models_plugin_cli_robust_plugin", None)


def closed_form_2_inf(X, y, c, nu, alpha, eps, w, theta):
    """(2) under (21) at p = inf by (25), written here: the worst cases move every term by eps |w|_1."""
    plus, minus = y == c, y != c
    r = eps * np.abs(w).sum()
    return (0.5 * w @ w + nu / minus.sum() * (X[minus] @ w + theta + r).sum()
            + alpha / plus.sum() * np.maximum(0.0, -(X[plus] @ w + theta - r)).sum())


def test_verify_a_users_robust_binary_from_a_plugin_file(capsys, plugin_file):
    """``tpm-models --plugin FILE verify --model CLI2R``: exit 0 by both routes; the printed semi-infinite optimum is
    the closed form (25) at the counterpart solved by HiGHS (a solver the verifier does not use)."""
    d = load_dataset("iris")
    X = min_max_scale(d.X)
    truth_model = None
    for method, extra in (("cutting-plane", []), ("pyros", ["--points-per-class", "3"])):
        code = main(["--plugin", plugin_file, "verify", "--model", "CLI2R", "--dataset", "iris", "--class", "2",
                     "--nu", "0.3", "--alpha", "1", "--eps", "0.02", "--method", method, *extra])
        out = capsys.readouterr().out
        assert code == 0, out
        assert "VERIFIED" in out and "CLI robust (2)" in out and f"by {method}" in out
        if method == "cutting-plane":
            Xd, yd = X, d.y
        else:
            assert "robust_optimal" in out
            keep = np.sort(np.concatenate([np.flatnonzero(d.y == k)[:3] for k in range(3)]))
            Xd, yd = X[keep], d.y[keep]
        truth_model = build("CLI2R", Xd, yd, 2, 0.3, 1.0, p="inf", eps=0.02)
        other = solve(truth_model, "highs")
        closed = closed_form_2_inf(Xd, yd, 2, 0.3, 1.0, 0.02, other.values["w"], other.values["theta"])
        assert abs(other.objective - closed) <= 1e-8 * abs(closed)
        printed = float(next(line for line in out.splitlines() if line.startswith("semi-infinite optimum")).split()[-1])
        # PYROS_FEASIBILITY_TOL 1e-8 leaves PyROS's optimum within ~1e-8 relative (docs/verify.md, Measured)
        assert abs(printed - closed) <= (1e-8 if method == "cutting-plane" else 1e-6) * abs(closed)


def test_verify_rejects_a_wrong_users_model_with_exit_1(capsys, plugin_file):
    """The radius halved: exit 1, "NOT a counterpart", a violating delta of the set (|delta|_inf = eps), and the
    counterpart's optimum below the true one (the closed form (25) at the right counterpart by HiGHS)."""
    code = main(["--plugin", plugin_file, "verify", "--model", "CLI2H", "--dataset", "iris", "--class", "2",
                 "--nu", "0.3", "--alpha", "1", "--eps", "0.02"])
    captured = capsys.readouterr()
    assert code == 1, captured.out + captured.err
    out = captured.out
    assert "NOT a counterpart" in out and "Traceback" not in captured.err
    line = next(line for line in out.splitlines() if line.startswith("violating point: row margin["))
    delta = np.array([float(x) for x in line.split("delta = [")[1].rstrip("]").split()])
    assert np.abs(delta).max() == pytest.approx(0.02, abs=1e-4)  # printed to 4 decimals
    d = load_dataset("iris")
    X = min_max_scale(d.X)
    right = solve(build("CLI2R", X, d.y, 2, 0.3, 1.0, p="inf", eps=0.02), "highs")
    truth = closed_form_2_inf(X, d.y, 2, 0.3, 1.0, 0.02, right.values["w"], right.values["theta"])
    printed = float(next(line for line in out.splitlines() if line.startswith("counterpart optimum")).split()[-1])
    assert printed < truth - 1e-6


def test_verify_refuses_a_model_without_counterpart_data(capsys, plugin_file):
    code = main(["--plugin", plugin_file, "verify", "--model", "CLI2N", "--nu", "0.3", "--alpha", "1", "--eps", "0.02"])
    err = capsys.readouterr().err
    assert code == 2 and "not a registered robust counterpart" in err and "CLI2R" in err and "23" in err


@pytest.mark.parametrize(
    "args,message",
    [
        (["--model", "15", "--eps", "0.02"], "not a registered robust counterpart"),
        (["--model", "23", "--eps", "0.02"], "give p"),
        (["--model", "27", "--p", "2", "--eps", "0.02"], "takes p in"),
        (["--model", "28"], "give --eps"),
        (["--model", "23", "--p", "1.5", "--eps", "0.02", "--method", "pyros"], "no l_p-ball"),
        (["--model", "28", "--eps", "0.02", "--method", "pyros", "--solver", "piqp"], "--method pyros takes --solver"),
        (["--model", "28", "--eps", "0.02", "--solver", "nope"], "unknown solver"),
        (["--model", "28", "--eps", "-1"], "eps must be >= 0"),
        (["--model", "28", "--eps", "0.02", "--points-per-class", "0"], "points per class must be >= 1"),
        (["--model", "28", "--eps", "0.02", "--class", "7"], "classes 0..2"),
    ],
)
def test_verify_bad_input(capsys, args, message):
    assert main(["verify", *args, "--nu", "0.3", "--alpha", "1"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def _page_section(title: str) -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "verify.md").read_text()
    start = text.index(title)
    return text[start:text.index("\n## ", start + 1)]


def test_an_ellipsoid_counterpart_with_its_matrix_from_a_file_verifies_from_the_cli(tmp_path, monkeypatch, capsys):
    """docs/verify.md, section 8, as written: a researcher's robust (2) under an ellipsoid whose matrix is a
    ``--param`` read from a .npy file verifies (exit 0), and ``--p`` reaches the builder as a number (its name
    formats it with :g). Truth: the semi-infinite objective of (2) under the ellipsoid in closed form (support
    eps |L'w|_2), written here with numpy, at the counterpart solved through the API by SCIP (a solver the
    verifier does not use), and the printed optimum equal to it."""
    import shlex

    from tpm_models.models.registry import REGISTRY

    section = _page_section("## 8. Your own parameters")
    plugin = section.split("```py\n")[1].split("```")[0]
    commands = [line[2:] for line in section.split("```console\n")[1].split("```")[0].splitlines()]
    (tmp_path / "ellipsoid_2.py").write_text(plugin)
    monkeypatch.chdir(tmp_path)
    try:
        assert commands[0].startswith("python -c ")
        exec(shlex.split(commands[0])[2], {})  # writes shape.npy
        argv = shlex.split(commands[1])
        assert argv[0] == "tpm-models"
        code = main(argv[1:] + ["--p", "2"])
        out = capsys.readouterr().out
        assert code == 0, out
        assert "VERIFIED" in out and "shape=array[4, 4]" in out and "(p=2 unused)" in out
        S = np.load(tmp_path / "shape.npy")
        L = np.linalg.cholesky(S)
        d = load_dataset("iris")
        X = min_max_scale(d.X)
        other = solve(build("2RE", X, d.y, 2, 0.3, 1.0, p="2", eps=0.02, shape=S), "scip")
        w, theta = other.values["w"], other.values["theta"]
        r = 0.02 * np.linalg.norm(L.T @ w)
        plus, minus = d.y == 2, d.y != 2
        closed = (0.5 * w @ w + 0.3 / minus.sum() * (X[minus] @ w + theta + r).sum()
                  + 1.0 / plus.sum() * np.maximum(0.0, -(X[plus] @ w + theta - r)).sum())
        assert abs(other.objective - closed) <= 1e-7 * abs(closed)
        printed = float(next(line for line in out.splitlines() if line.startswith("semi-infinite optimum")).split()[-1])
        assert abs(printed - closed) <= 1e-6 * abs(closed)
    finally:
        REGISTRY.pop("2RE", None)
        sys.modules.pop("tpm_models_plugin_ellipsoid_2", None)


@pytest.mark.parametrize(
    "param,message",
    [
        (["--param", "shape=missing.npy"], "no such file"),
        (["--param", "radius=1"], "takes no parameter 'radius'"),
        (["--param", "shape"], "write NAME=VALUE"),
        (["--param", "shape=bad.csv"], "not a numeric array"),
    ],
)
def test_a_bad_param_is_one_line(tmp_path, monkeypatch, capsys, param, message):
    from tpm_models.models.registry import REGISTRY

    plugin = _page_section("## 8. Your own parameters").split("```py\n")[1].split("```")[0]
    (tmp_path / "ellipsoid_2.py").write_text(plugin)
    (tmp_path / "bad.csv").write_text("a,b\n1,x\n")
    monkeypatch.chdir(tmp_path)
    try:
        code = main(["--plugin", "ellipsoid_2.py", "verify", "--model", "2RE", "--nu", "0.3", "--alpha", "1",
                     "--eps", "0.02", *param])
        err = capsys.readouterr().err
        assert code == 2 and message in err and "Traceback" not in err, err
    finally:
        REGISTRY.pop("2RE", None)
        sys.modules.pop("tpm_models_plugin_ellipsoid_2", None)


def test_build_hands_a_users_parameters_and_refuses_unknown_ones():
    """``build(KEY, ..., **params)``: the paper's builders take none (the message lists what the builder takes)."""
    d = load_dataset("iris")
    with pytest.raises(ValueError, match=r"\(15\) takes no parameter shape"):
        build(15, min_max_scale(d.X), d.y, 0, 0.3, 1.0, shape=np.eye(4))


BAD_PLUGIN = """
import pyomo.environ as pyo

from tpm_models import register_model
from tpm_models.checks.verify import NormBall, UncertainRow
from tpm_models.models.binary import build_primal_2


@register_model("BADNONE", family="binary", model_class="QP", summary="returns None")
def build_none(X, y, nu, alpha):
    return None


@register_model("BADDICT", family="binary", model_class="QP", summary="returns a dict")
def build_dict(X, y, nu, alpha):
    return {"w": 1.0}


@register_model("BADINF", family="binary", model_class="LP", summary="infeasible")
def build_infeasible(X, y, nu, alpha):
    m = pyo.ConcreteModel(name="an infeasible LP")
    m.x = pyo.Var(bounds=(0, 1))
    m.too_much = pyo.Constraint(expr=m.x >= 2)
    m.obj = pyo.Objective(expr=m.x)
    return m


@register_model("DUPN", family="binary", model_class="LP", summary="'a b' and 'a_b'")
def build_same_names(X, y, nu, alpha):
    m = pyo.ConcreteModel(name="two names")
    m.add_component("a b", pyo.Var(bounds=(0, 1)))
    m.add_component("a_b", pyo.Var(bounds=(0, 1)))
    m.both = pyo.Constraint(expr=m.component("a b") + m.component("a_b") >= 1)
    m.obj = pyo.Objective(expr=m.component("a b") + 2 * m.component("a_b"))
    return m


def junk(m, p, eps):
    return "hello"


def raising(m, p, eps):
    raise KeyError("no such point")


def one_argument(m):
    return []


def rows(m, p, eps):
    return [UncertainRow(m.margin[i], [m.w[j] for j in m.J], NormBall(p, eps)) for i in m.X_plus]


for key, function in (("BADU1", junk), ("BADU2", raising), ("BADU3", one_argument)):
    register_model(key, family="binary", model_class="QP", robust_p=(float("inf"),), nominal=2, uncertain=function,
                   summary="bad uncertain=")(lambda X, y, nu, alpha, *, p, eps: build_primal_2(X, y, nu, alpha))
"""

BAD_KEYS = ("BADNONE", "BADDICT", "BADINF", "DUPN", "BADU1", "BADU2", "BADU3")


@pytest.fixture
def bad_plugin(tmp_path):
    from tpm_models.models.registry import REGISTRY

    path = tmp_path / "bad_plugin.py"
    path.write_text(BAD_PLUGIN)
    yield str(path)
    for key in BAD_KEYS:
        REGISTRY.pop(key, None)
    sys.modules.pop("tpm_models_plugin_bad_plugin", None)


@pytest.mark.parametrize(
    "args,message",
    [
        (["solve", "--model", "BADNONE", "--nu", "0.1", "--alpha", "1"],
         "the builder build_none (bad_plugin) of (BADNONE) returned NoneType None"),
        (["solve", "--model", "BADDICT", "--nu", "0.1", "--alpha", "1"],
         "of (BADDICT) returned dict {'w': 1.0}"),
        (["export", "--model", "BADNONE", "--nu", "0.1", "--alpha", "1", "--out", "x.lp"], "returned NoneType"),
        (["check", "--model", "BADDICT", "--dataset", "iris", "--quiet"], "returned dict"),
        (["export", "--model", "DUPN", "--nu", "0.1", "--alpha", "1", "--out", "x.lp"],
         "'a b' and 'a_b' become the same name in a .lp file"),
        (["export", "--model", "DUPN", "--nu", "0.1", "--alpha", "1", "--out", "x.mps"], "same name in a .mps file"),
        (["verify", "--model", "BADU1", "--nu", "0.1", "--alpha", "1", "--eps", "0.02"],
         "uncertain= junk (bad_plugin) of (BADU1) returned str 'hello'"),
        (["verify", "--model", "BADU2", "--nu", "0.1", "--alpha", "1", "--eps", "0.02"],
         "uncertain= raising (bad_plugin) of (BADU2) failed: KeyError"),
        (["verify", "--model", "BADU3", "--nu", "0.1", "--alpha", "1", "--eps", "0.02"],
         "uncertain= one_argument (bad_plugin) of (BADU3) cannot be called as uncertain(nominal_model, p, eps)"),
    ],
)
def test_a_plugin_that_fails_is_one_line_naming_it(bad_plugin, tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(["--plugin", bad_plugin, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x.lp").exists() and not (tmp_path / "x.mps").exists()


def test_check_model_on_an_infeasible_plugin_model_is_a_failed_row(bad_plugin, capsys):
    """No NoOptimalSolutionError: the reference solve that ended infeasible is one failed row, exit 1."""
    code = main(["--plugin", bad_plugin, "check", "--model", "BADINF", "--dataset", "iris", "--quiet"])
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.err
    assert "FAIL" in captured.out and "ended infeasible, no optimum to compare with" in captured.out


def test_every_group_adds_exactly_its_commands_of_the_table():
    """The table that lists the commands without importing their groups (tpm_models.cli.commands) against the
    groups themselves: each group's add_parsers adds exactly the commands the table gives it, with the table's
    help, and the parser of one command prints the same top-level help as the whole parser."""
    import argparse
    import importlib

    from tpm_models.cli.commands import COMMAND_GROUPS, COMMANDS
    from tpm_models.cli.main import command_of, parser

    for group in COMMAND_GROUPS:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"tpm_models.cli.{group}").add_parsers(sub)
        assert list(sub.choices) == [n for n, c in COMMANDS.items() if c.group == group]
    whole = parser().format_help()  # every group's commands with the help they give themselves (add_command)
    assert parser([]).format_help() == whole == parser(["bench"]).format_help()  # stubs from the table alone
    assert all(" ".join(c.help.split()) in " ".join(whole.split()) for c in COMMANDS.values())
    assert command_of(["-v", "bench", "estimators", "--sizes", "10"]) == "bench" and command_of(["-h"]) is None


def test_help_and_one_command_import_only_what_they_need():
    """In a fresh interpreter (the truth: sys.modules), ``tpm-models --help`` imports no command group and
    ``tpm-models models`` only its own; the control ``bench --help`` does import the lab group."""
    code = ("import contextlib, io, json, sys\nfrom tpm_models.cli import main\n"
            "def run(argv):\n    with contextlib.redirect_stdout(io.StringIO()):\n        try:\n"
            "            main(argv)\n        except SystemExit:\n            pass\n"
            "    return [g for g in ('models', 'checks', 'experiments', 'lab', 'export') "
            "if 'tpm_models.cli.' + g in sys.modules]\n"
            "print(json.dumps([run(['--help']), run(['models']), run(['bench', '--help'])]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[], ["models"], ["models", "lab"]]


def test_output_to_a_closed_pipe_ends_quietly_with_the_shells_code():
    """``tpm-models models | head -1``: when the reader has gone, the command stops with exit code 141 (128 +
    SIGPIPE, what a shell reports) and writes nothing to stderr; before, it printed "tpm-models: error: Broken
    pipe" (exit 1). The pipe's read end is closed before the process starts, so every write fails: no race."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        run = subprocess.run([sys.executable, "-m", "tpm_models.cli", "models"], stdout=write_end,
                             stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert run.returncode == 141, run.stderr
    assert run.stderr == ""


def test_solvers_lists_each_backend_and_the_defaults_by_size(capsys):
    """``tpm-models solvers``: a line per backend; PIQP the default of QPs, linear-decomposition the default of the
    QPs, SOCPs and NLPs of its shapes from LARGE_MODEL variables (registry.DEFAULT_LARGE)."""
    assert main(["solvers"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert set(lines) == set(BACKENDS)
    assert "(default for LP, QP)" in lines["piqp"]
    assert f"(default for QP, SOCP, NLP from {LARGE_MODEL:,} variables, of its shape: tpm_models.solvers.slack_form, " \
        "tpm_models.solvers.norm_form)" in lines["linear-decomposition"]
