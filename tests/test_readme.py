"""The README's tour runs as written, and prints what it says."""

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 3
    namespace: dict = {}
    for code in blocks:  # the tour's blocks continue one another
        exec(compile(code, str(README), "exec"), namespace)
    out = capsys.readouterr().out.split("\n")
    primal, dual_plus_constant = map(float, out[0].split())
    assert abs(primal - dual_plus_constant) <= 1e-8 * abs(primal)  # strong duality, errata 1
    # the constant by hand: -1/2 (nu/m_-c)^2 ||sum of the other classes' points||^2
    X, y, q = namespace["X"], namespace["y"], namespace["q"]
    other = X[y != 1]
    kappa = -0.5 * (0.3 / len(other)) ** 2 * np.sum(other.sum(axis=0) ** 2)
    assert abs(primal - (q.objective + kappa)) <= 1e-8 * abs(primal)
    # Theorem 1 as the tour prints it: (28) and (22) by cutting planes
    socp, cp = map(float, out[1].split())
    assert abs(socp - cp) <= 1e-7 * abs(cp)
    assert abs(namespace["socp"].objective - namespace["cp"].objective) < 1e-8
    # Clarabel's point of (28), polished, as the comment says
    assert "polished: KKT residual" in out[2] and "not polished" not in out[2]
    # the classifier's line is the comment beside it
    assert out[3] == "['setosa' 'versicolor' 'virginica']"
