"""``solve(model, tee=True)`` streams the backend's own log (its banner is the truth: text only the solver prints);
without it the backend runs silent; the command line's ``-v`` puts that log on standard error and leaves ``--json``
on standard output whole."""

from __future__ import annotations

import json
import subprocess
import sys

import pyomo.environ as pyo
import pytest

from tpm_models.solvers import BACKENDS, available_solvers, solve

BANNERS = {"clarabel": "Clarabel", "piqp": "PIQP", "highs": "HiGHS", "ipopt": "Ipopt", "gurobi": "Gurobi",
           "cplex": "CPXPARAM", "xpress": "Xpress"}
"""What each backend's own log prints (its name, in its banner): never printed by this library."""


def _qp() -> pyo.ConcreteModel:
    m = pyo.ConcreteModel(name="tee qp")
    m.x = pyo.Var(bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x >= 1)
    m.o = pyo.Objective(expr=m.x**2)
    return m


@pytest.mark.parametrize("name", sorted(BANNERS))
def test_tee_streams_the_backends_log_and_silence_is_the_default(name, capfd):
    if name not in available_solvers("QP"):
        pytest.skip(f"{name} is not installed")
    assert BACKENDS[name].tee
    quiet = solve(_qp(), name)
    out, err = capfd.readouterr()
    assert BANNERS[name].lower() not in (out + err).lower()  # control: silent without tee
    loud = solve(_qp(), name, tee=True)
    out, _ = capfd.readouterr()
    assert BANNERS[name].lower() in out.lower(), out[:500]
    assert loud.certified and quiet.certified and abs(loud.objective - 1.0) <= 1e-7  # x = 1: the same optimum


def test_a_backend_without_a_log_runs_silent_and_says_so(capfd, caplog):
    if "daqp" not in available_solvers("QP"):
        pytest.skip("daqp is not installed")
    assert not BACKENDS["daqp"].tee
    with caplog.at_level("INFO", logger="tpm_models"):
        r = solve(_qp(), "daqp", tee=True)
    assert r.certified and "daqp has no log to stream" in caplog.text


def test_the_command_lines_v_puts_the_log_on_stderr_and_keeps_json_whole():
    cmd = [sys.executable, "-m", "tpm_models.cli", "-v", "solve", "--model", "15", "--nu", "0.3", "--alpha", "1",
           "--solver", "clarabel", "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)  # nothing but the JSON on standard output
    assert out["termination"] == "optimal" and "Clarabel" in done.stderr
    quiet = subprocess.run(cmd[:3] + cmd[4:], capture_output=True, text=True, timeout=300)
    assert quiet.returncode == 0 and "Clarabel" not in quiet.stderr  # without -v: no solver log
