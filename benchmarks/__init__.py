"""The lab: benchmarks, solver surveys and the reference tables behind the documentation's measurements.

Not part of the installed package (``pip install tpm-models`` does not ship it): run it from a clone of the
repository, at its root::

    python -m benchmarks bench scale --sizes 10000     # any command below; --help for its options
    python -m benchmarks.plot_scale                    # a page's figure from its committed CSV

It imports the library (``pip install -e ".[test]"``; ``bench builders`` and ``bench scale`` compare with linopy
and cvxpy: ``pip install -e ".[bench]"``) and only its public names. Benchmarks print numbers; nothing here
asserts a speed.
"""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The clone's root, the folder that holds ``benchmarks/``."""


def child_env() -> dict[str, str]:
    """This process's environment with :data:`ROOT` first on ``PYTHONPATH``: a benchmark's fresh interpreter (each
    measured row runs in one) imports ``benchmarks`` from any working directory."""
    rest = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), rest]) if rest else str(ROOT)}


HELP = {
    "bench": "time the fast path (per-QP solver times, one fit, every cell of Table 3); 'bench builders': Pyomo "
             "builders beside linopy; 'bench estimators': fits beside SVC; 'bench scale', 'bench backends', "
             "'bench certificate', 'bench counterpart'",
    "survey": "every QP solver on the paper grid of dual (16), Iris and Wine (Markdown)",
    "robust-survey": "every robust model with every installed capable solver (Markdown)",
    "conic-survey": "(23) and its twins (26)-(29) against the cvxpy reference (Markdown)",
    "pyros-table": "(22) by PyROS on whole data sets vs (23), appended to a CSV",
}
"""Command name -> its one-line help, in the order of ``python -m benchmarks --help``."""
