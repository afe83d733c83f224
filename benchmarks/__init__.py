"""The lab: benchmarks, solver surveys and the reference tables behind the documentation's measurements.

Not part of the installed package (``pip install tpm-models`` does not ship it): run it from a clone of the
repository, at its root::

    python -m benchmarks bench scale --sizes 10000     # any command below; --help for its options
    python -m benchmarks.plot_scale                    # a page's figure from its committed CSV

It imports the library (``pip install -e ".[test]"``; ``bench builders`` and ``bench scale`` compare with linopy
and cvxpy: ``pip install -e ".[bench]"``) and only its public names. Benchmarks print numbers; nothing here
asserts a speed.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The clone's root, the folder that holds ``benchmarks/``."""


def child_env() -> dict[str, str]:
    """This process's environment with :data:`ROOT` first on ``PYTHONPATH``: a benchmark's fresh interpreter (each
    measured row runs in one) imports ``benchmarks`` from any working directory."""
    rest = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), rest]) if rest else str(ROOT)}


def run_fresh(module: str, call: str, timeout: float) -> dict:
    """``call`` (the text of a call of a function of ``benchmarks.<module>`` that returns a JSON-able dict) in a fresh
    interpreter (:func:`child_env`); its dict, or ``{"error": ...}``: ``"> N s"`` past ``timeout`` seconds, else the
    last line of its standard error."""
    code = (f"import json; from benchmarks.{module} import {call.split('(')[0]}; "
            f"print('RESULT' + json.dumps({call}))")
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                              env=child_env())
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout:.0f} s"}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT"):
            return json.loads(line[6:])
    return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:80]}


HELP = {
    "bench": "time the fast path (per-QP solver times, one fit, every cell of Table 3); 'bench builders': Pyomo "
             "builders beside linopy; 'bench estimators': fits beside SVC; 'bench scale', 'bench backends', "
             "'bench certificate', 'bench counterpart', 'bench dask', 'bench robust' (RobustTPMSVMOneVsAll at p=2 by "
             "(15) shrunk, beside the SOCP)",
    "survey": "every QP solver on the paper grid of dual (16), Iris and Wine (Markdown)",
    "robust-survey": "every robust model with every installed capable solver (Markdown)",
    "conic-survey": "(23) and its twins (26)-(29) against the cvxpy reference (Markdown)",
    "pyros-table": "(22) by PyROS on whole data sets vs (23), appended to a CSV",
}
"""Command name -> its one-line help, in the order of ``python -m benchmarks --help``."""
