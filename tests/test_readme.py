"""The README's tour runs as written."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, str(README), "exec"), {})
    out = capsys.readouterr().out.split("\n")
    primal, dual_plus_constant = map(float, out[0].split())
    assert abs(primal - dual_plus_constant) <= 1e-8 * abs(primal)  # strong duality, errata 1
