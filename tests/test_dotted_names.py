"""Every dotted name ``tpm_models.x.y`` that a docstring, a comment or a doc page cites resolves.

A module moved or a function renamed leaves its old dotted name behind in prose, where no
import fails. This test imports each cited name (a module, then attributes down the path) and
fails on the first that does not exist. Logger names (``logging.getLogger("tpm_models.x")``)
are names too, and count as resolved."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOTTED = re.compile(r"\btpm_models(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
LOGGER = re.compile(r"getLogger\(\s*[\"'](tpm_models[\w.]*)[\"']")


def sources(root: Path) -> list[Path]:
    """The package's modules, the docs pages (not the notes) and the README."""
    docs = [p for p in (root / "docs").rglob("*.md") if "notes" not in p.parts]  # notes: history, its time's names
    return sorted([*(root / "tpm_models").rglob("*.py"), *docs, root / "README.md"])


def resolves(name: str) -> bool:
    """True when ``name`` is an importable module or an attribute path below one."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            if not hasattr(obj, part):
                return False
            obj = getattr(obj, part)
        return True
    return False


def stale_names(files: list[Path], loggers: set[str]) -> dict[str, list[str]]:
    """Each cited dotted name that does not resolve, with the files that cite it."""
    stale: dict[str, list[str]] = {}
    for path in files:
        for match in DOTTED.finditer(path.read_text(encoding="utf-8")):
            name = match.group(0)
            if name not in loggers and not resolves(name):
                stale.setdefault(name, []).append(path.name)
    return stale


def logger_names(files: list[Path]) -> set[str]:
    return {m.group(1) for path in files if path.suffix == ".py" for m in LOGGER.finditer(path.read_text())}


def test_every_cited_dotted_name_resolves():
    files = sources(ROOT)
    assert len(files) > 50  # the package and its docs were found
    stale = stale_names(files, logger_names(files))
    assert not stale, "stale dotted names (moved or renamed): " + "; ".join(
        f"{name} in {', '.join(sorted(set(where)))}" for name, where in sorted(stale.items()))


def test_a_planted_stale_name_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("See :func:`tpm_models.models.robust.pnorm_epigraph` and `tpm_models.norms.gone_function`,\n"
                    "and the module ``tpm_models.solvers`` and the logger `tpm_models.pyros`.\n")
    stale = stale_names([page], {"tpm_models.pyros"})
    assert set(stale) == {"tpm_models.norms.gone_function"}
