"""Which reader reads which exported format, and to what optimum (the table of docs/formulations.md).

    PYTHONPATH=. python scripts/reader_table.py      # prints one line per (model, format, reader)

Iris class 0 at nu = 0.3, alpha = 1, eps = 0.02: (16) (a QP), (28) and (26) at p = 2 (SOCPs), (23D) at
p = 2 (a QP objective with a cone) and (23) at p = 3 (power cones). Each file is written by
``tpm_models.export.writers.write`` and handed to each reader's own file reader; the reader's optimum is
compared with ``solve()``'s, |a - b| / max(|a|, |b|, S) (S: the objective's terms at the optimum). The
solvers run at 1e-9 tolerances (Gurobi's barrier, CPLEX's QCP barrier, Xpress's barrier, SCIP's gap and
feasibility), ECOS through PICOS at 1e-9/1e-10, Clarabel on MOSEK's parse as in ``tests/test_cbf.py``
(whose reader helpers this imports). MOSEK has no licence here: it reads, and the problem it read is
solved by Clarabel (``.cbf``, ``.ptf``) or only described (``.lp``, ``.mps``: how it stores the terms).
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import warnings
from pathlib import Path

import pyomo.environ as pyo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import test_cbf as readers  # noqa: E402  (the reader helpers of the tests)

from tpm_models import build, load_dataset, min_max_scale, solve  # noqa: E402
from tpm_models.export.ripopt import run_ripopt  # noqa: E402
from tpm_models.export.writers import write  # noqa: E402
from tpm_models.solvers.compare import objective_scale, rel_gap  # noqa: E402


def gurobi(path):
    import gurobipy as gp

    env = gp.Env(params={"OutputFlag": 0})
    m = gp.read(path, env)
    for name in ("BarQCPConvTol", "BarConvTol", "FeasibilityTol", "OptimalityTol"):
        m.setParam(name, 1e-9)
    m.optimize()
    return m.ObjVal if m.Status == gp.GRB.OPTIMAL else f"status {m.Status}"


def cplex(path):
    import cplex as cpx

    c = cpx.Cplex()
    for stream in (c.set_log_stream, c.set_results_stream, c.set_warning_stream, c.set_error_stream):
        stream(None)
    c.parameters.barrier.qcpconvergetol.set(1e-9)
    c.read(path)
    c.solve()
    return c.solution.get_objective_value()


def xpress(path):
    import xpress as xp

    p = xp.problem()
    p.setControl("outputlog", 0)
    for name in ("barprimalstop", "bardualstop", "bargapstop"):
        p.setControl(name, 1e-9)
    p.readProb(path)
    p.optimize()
    return p.attributes.objval


def scip(path):
    import pyscipopt

    m = pyscipopt.Model()
    m.hideOutput()
    m.readProblem(path)
    for name, value in {"limits/gap": 1e-9, "numerics/feastol": 1e-9, "numerics/dualfeastol": 1e-9,
                        "limits/time": 60}.items():
        m.setParam(name, value)
    m.optimize()
    return m.getObjVal() if m.getStatus() == "optimal" else m.getStatus()


def highs(path):
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    if h.readModel(path) != highspy.HighsStatus.kOk:
        raise RuntimeError("readModel returned an error")
    h.run()
    return h.getInfo().objective_function_value


def mosek(path):
    if path.endswith((".cbf", ".ptf")):
        return readers.solve_mosek_parse(readers.mosek_parse(path))
    import mosek as msk

    with msk.Env() as env, env.Task() as task:
        task.readdata(path)
        quadratic_rows = sum(task.getnumqconknz(i) > 0 for i in range(task.getnumcon()))
        return (f"reads: {task.getnumvar()} columns, {task.getnumcon()} rows ({quadratic_rows} quadratic), "
                f"{task.getnumacc()} cones, {task.getnumqobjnz()} quadratic objective terms")


def picos(path):
    return readers.picos_optimum(path)[0]


def ripopt(path):
    return run_ripopt(path).objective


READERS = {"highs": (highs, ("lp", "mps")), "gurobi": (gurobi, ("lp", "mps")), "cplex": (cplex, ("lp", "mps")),
           "xpress": (xpress, ("lp", "mps")), "scip": (scip, ("lp", "mps", "nl", "cbf")),
           "mosek": (mosek, ("lp", "mps", "cbf", "ptf")), "picos": (picos, ("cbf",)), "ripopt": (ripopt, ("nl",))}
CASES = [(16, None), (28, 2.0), (26, 2.0), ("23D", 2.0), (23, 3.0)]


def main() -> None:
    warnings.filterwarnings("ignore")
    d = load_dataset("iris")
    X = min_max_scale(d.X)
    tmp = Path(tempfile.mkdtemp(prefix="reader-table-"))
    print("model | p | format | reader | |a - b| / max(|a|, |b|, S), or what happened")
    for eq, p in CASES:
        model = build(eq, X, d.y, 0, 0.3, 1.0, p=p, eps=0.02 if p else None)
        reference = solve(model).objective
        scale = objective_scale(model)
        maximise = next(model.component_data_objects(pyo.Objective, active=True)).sense == pyo.maximize
        for fmt in ("lp", "mps", "nl", "cbf", "ptf"):
            try:
                path = str(write(model, tmp / f"model.{fmt}"))
            except ValueError:
                print(f"({eq}) | {p} | {fmt} | (writer) | refused: the format cannot hold the model")
                continue
            for name, (read, formats) in READERS.items():
                if fmt not in formats:
                    continue
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        value = read(path)
                    if isinstance(value, str):
                        out = value
                    else:
                        value = -value if name == "ripopt" and maximise else value  # ripopt: the minimised -f
                        out = f"{rel_gap(value, reference, scale):.1e}"
                except Exception as exc:  # a reader's refusal is a result of this table
                    out = "refuses: " + " ".join(str(exc).split())[:120]
                print(f"({eq}) | {p} | {fmt} | {name} | {out}", flush=True)


if __name__ == "__main__":
    main()
