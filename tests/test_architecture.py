"""The package's shape holds (issue 16): layers that import only downwards, no import cycle, no private
name taken from another module, no import hidden inside a function.

Truth: the source itself, read with ``ast`` (every ``import`` statement, at any depth). The layers, from
the top down (``docs/architecture.md``)::

    cli -> plots -> experiments -> learn -> checks -> export -> solvers -> certify -> models
        -> kernels, data, validation
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tpm_models"
LAYERS = ("base", "models", "certify", "solvers", "export", "checks", "learn", "experiments", "plots", "cli")
"""From the bottom up: a module may import its own layer and the layers before it."""
BASE = {"kernels", "data", "validation", "qp", "datasets", "lazy", "collector", "files", "progress"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def layer(module: str) -> int | None:
    """The rank of ``module``'s layer; ``None`` for the package root (the public facade)."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    top = parts[1]
    return LAYERS.index("base" if top in BASE else top)


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> list[tuple[str, str | None, ast.AST, bool]]:
    """(imported module, imported name or None, node, inside a function) for every package import."""
    tree = ast.parse(MODULES[module].read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def in_function(node: ast.AST) -> bool:
        while node in parents:
            node = parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return True
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                return False
        return False

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("tpm_models"):
                    out.append((_resolve(a.name), None, node, in_function(node)))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tpm_models"):
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in MODULES:
                    out.append((full, None, node, in_function(node)))
                else:
                    out.append((_resolve(node.module), a.name, node, in_function(node)))
    return out


EDGES = {m: imports(m) for m in MODULES}


def test_the_layers_are_the_documented_ones():
    tops = {m.split(".")[1] for m in MODULES if "." in m}
    assert tops == set(LAYERS[1:]) | BASE - {"datasets"}, tops


def test_no_upward_import():
    upward = [f"{m} imports {target} ({LAYERS[layer(m)]} -> {LAYERS[layer(target)]})"
              for m, edges in EDGES.items() for target, _, _, _ in edges
              if layer(m) is not None and layer(target) is not None and layer(target) > layer(m)]
    assert upward == []


def test_no_import_cycle():
    graph = {m: {t for t, _, _, _ in edges if t != m and not t.startswith(m + ".")} for m, edges in EDGES.items()}
    # a package's __init__ re-exporting its own modules is not a cycle (edges parent -> child are dropped above)
    index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    assert cycles == []


def test_no_private_name_across_modules():
    private = [f"{m} imports {t}.{name}" for m, edges in EDGES.items() for t, name, _, _ in edges
               if name and name.startswith("_") and not name.startswith("__") and t != m]
    assert private == []


def test_no_package_import_inside_a_function():
    hidden = [f"{m}:{node.lineno} imports {t}" for m, edges in EDGES.items() for t, _, node, local in edges if local]
    assert hidden == []


MODULE_LINES, FUNCTION_LINES = 500, 80
"""The largest module and function of the package (issue 48: a reader can hold either in view)."""


def oversized() -> list[str]:
    """Every module of the package over :data:`MODULE_LINES` lines and every function over :data:`FUNCTION_LINES`."""
    out = []
    for module, path in MODULES.items():
        text = path.read_text()
        if len(text.splitlines()) > MODULE_LINES:
            out.append(f"{module}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > FUNCTION_LINES:
                    out.append(f"{module}.{node.name}: {length} lines")
    return out


def test_no_module_over_500_lines_and_no_function_over_80():
    assert oversized() == []


def test_no_module_state_rebound_and_no_module_switch():
    """No ``global`` statement (module state rebound by a function) and no module-level ``NAME = True/False`` (a
    switch a test would flip: a setting belongs to a settings object, ``ClarabelSettings``)."""
    found = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        found += [f"{module}:{n.lineno} global {', '.join(n.names)}"
                  for n in ast.walk(tree) if isinstance(n, ast.Global)]
        for node in tree.body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                found.append(f"{module}:{node.lineno} {ast.unparse(node).split('=')[0].strip()} = {value.value}")
    assert found == []


@pytest.mark.parametrize("bad", ["upward", "cycle"])
def test_the_checks_catch_a_bad_shape(bad, monkeypatch):
    """The test must be able to fail: a model that imports the command line is an upward import and,
    with the command line importing the models, a cycle."""
    fake = ("tpm_models.cli.main", None, ast.parse("import tpm_models.cli.main").body[0], False)
    monkeypatch.setitem(EDGES, "tpm_models.models.registry", EDGES["tpm_models.models.registry"] + [fake])
    with pytest.raises(AssertionError):
        (test_no_upward_import if bad == "upward" else test_no_import_cycle)()


CONE_KIND_NAMES = {"zero", "nonneg", "soc", "pow"}
"""The values of ``ConeKind``, written out (the test does not import the package it reads)."""


def _string_kind_tests(tree: ast.AST) -> list[int]:
    """Lines where a ``.kind`` (or a name ``kind``) is compared with a cone kind's name as a string: ``kind ==
    "soc"``, ``c.kind in ("soc", "pow")``."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        left = node.left
        if not ((isinstance(left, ast.Attribute) and left.attr == "kind") or
                (isinstance(left, ast.Name) and left.id == "kind")):
            continue
        for right in node.comparators:
            items = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
            if any(isinstance(i, ast.Constant) and i.value in CONE_KIND_NAMES for i in items):
                lines.append(node.lineno)
    return lines


def test_cone_kinds_are_tested_as_the_enum_not_as_strings():
    """In the solve path a cone's kind is a :class:`tpm_models.solvers.cones.ConeKind` and is tested as one
    (``c.kind is ConeKind.POW``): a misspelt string would be silently unequal, a misspelt member is an
    ``AttributeError`` (issue 48, "cone kinds typed")."""
    found = {str(path.relative_to(PACKAGE.parent)): lines for path in (PACKAGE / "solvers").rglob("*.py")
             if (lines := _string_kind_tests(ast.parse(path.read_text())))}
    assert found == {}
