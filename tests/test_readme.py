"""The README's tour runs as written."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    namespace: dict = {}
    for code in blocks:  # the tour's blocks continue one another
        exec(compile(code, str(README), "exec"), namespace)
    out = capsys.readouterr().out.split("\n")
    primal, dual_plus_constant = map(float, out[0].split())
    assert abs(primal - dual_plus_constant) <= 1e-8 * abs(primal)  # strong duality, errata 1
    # Theorem 1 as the tour prints it: (28) and (22) by cutting planes
    assert abs(namespace["socp"].objective - namespace["cp"].objective) < 1e-8
