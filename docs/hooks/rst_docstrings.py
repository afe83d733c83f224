"""Griffe extension for the API reference: the docstrings' reStructuredText markup as Markdown.

The package's docstrings use a few reStructuredText constructs (numpy-style sections aside).
mkdocstrings renders docstrings as Markdown, so before they are parsed this extension
rewrites, in the docstring text only (the source files are not touched):

* ``:math:`x``` -> ``$x$`` and a ``.. math::`` block -> ``$$ ... $$`` (rendered by
  ``pymdownx.arithmatex`` and KaTeX, like the pages);
* ``:func:`name```, ``:class:``, ``:data:``, ``:meth:``, ``:mod:``, ``:attr:``, ``:exc:``,
  ``:obj:`` -> the name as code;
* simple tables (rows between ``====  ====`` rules) -> Markdown tables;
* doctest lines (``>>>``, with their output) -> a fenced ``pycon`` block;
* a paragraph ending in ``::`` (an RST literal block follows) -> ending in ``:``.

Loaded by ``mkdocs.yml`` (``plugins.mkdocstrings.handlers.python.options.extensions``);
``tests/test_docs.py`` builds the site in strict mode with it.
"""

from __future__ import annotations

import re

import griffe

_RULE = re.compile(r"^(\s*)(=+)(\s+=+)+\s*$")
_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_CODE_ROLE = re.compile(r":(?:func|class|data|meth|mod|attr|exc|obj|const):`~?\.?([^`]+)`")
_SEGMENT = re.compile(r"\S+(?: \S+)*")  # text between runs of two or more blanks


def _columns(rule: str) -> list[int]:
    """Start positions of the ``=`` runs of a table rule."""
    return [m.start() for m in re.finditer(r"=+", rule)]


def _cells(line: str, starts: list[int]) -> list[str]:
    """Split a table row: segments separated by two or more blanks, each in the column whose
    start is the last one at or before the segment's start (text may overrun a column)."""
    cells = [""] * len(starts)
    for m in _SEGMENT.finditer(line):
        col = max(k for k, s in enumerate(starts) if s <= m.start() or k == 0)
        cells[col] = (cells[col] + " " + m.group(0)).strip()
    return cells


def _table_cell(text: str) -> str:
    """A Markdown table cell: ``|`` inside math becomes ``\\vert`` (``\\|`` ``\\Vert``), so
    that it does not split the row."""

    def math(m: re.Match) -> str:
        body = m.group(1).replace("\\|", "\\Vert ").replace("|", "\\vert ")
        return f":math:`{body}`"

    return _MATH_ROLE.sub(math, text).replace("|", "\\|")


def _tables(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        rule = _RULE.match(lines[i])
        if not rule:
            out.append(lines[i])
            i += 1
            continue
        indent, starts = rule.group(1), _columns(lines[i])
        rows: list[list[str]] = []
        header: list[list[str]] = []
        rules = 1
        i += 1
        while i < len(lines) and rules < 3:
            line = lines[i]
            if _RULE.match(line):
                rules += 1
                if rules == 2:
                    header, rows = rows, []
            elif line.strip():
                cells = _cells(line, starts)
                if rows and not cells[0]:  # a continuation line: first column empty
                    rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells)]
                else:
                    rows.append(cells)
            i += 1
        if not header:  # a table without a header rule: its first row heads it
            header, rows = rows[:1], rows[1:]
        head = header[0] if header else [""] * len(starts)
        out.append("")
        out.append(indent + "| " + " | ".join(_table_cell(c) for c in head) + " |")
        out.append(indent + "|" + "---|" * len(starts))
        out.extend(indent + "| " + " | ".join(_table_cell(c) for c in row) + " |" for row in rows)
        out.append("")
    return out


def _math_blocks(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped.startswith(".. math::"):
            out.append(lines[i])
            i += 1
            continue
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        body = [stripped[len(".. math::"):].strip()]
        i += 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > len(indent)):
            body.append(lines[i].strip())
            i += 1
        body = [b for b in body if b]
        out += ["", indent + "$$", *(indent + b for b in body), indent + "$$", ""]
    return out


def _doctests(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].lstrip().startswith(">>>"):
            out.append(lines[i])
            i += 1
            continue
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        out += ["", indent + "```pycon"]
        while i < len(lines) and lines[i].strip():
            out.append(lines[i])
            i += 1
        out += [indent + "```", ""]
    return out


def rst_to_markdown(text: str) -> str:
    """The docstring ``text`` with its reStructuredText markup rewritten (module docstring)."""
    lines = _doctests(_math_blocks(_tables(text.split("\n"))))
    lines = [re.sub(r"(\S)::$", r"\1:", line) for line in lines if line.strip() != "::"]
    text = "\n".join(lines)
    text = _MATH_ROLE.sub(lambda m: f"${m.group(1).strip()}$", text)
    return _CODE_ROLE.sub(lambda m: f"`{m.group(1)}`", text)


class RstDocstrings(griffe.Extension):
    """Rewrite every docstring's reStructuredText markup once the object tree is built."""

    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rst_to_markdown(obj.docstring.value)
