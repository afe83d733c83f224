"""MkDocs hook: inline code that names the package's objects links to the API reference.

On every page but the API reference itself, an inline code span that starts with a dotted
name in the package, such as `` `tpm_models.models.multiclass.build_primal_15` `` or
`` `tpm_models.models.shapes.dual_constant(X_other, nu)` ``, becomes a cross-reference to that
object's entry in ``api.md``. The links are *optional* autorefs: mkdocs-autorefs resolves
them after every page is rendered, and a name that has no entry (a private helper, an
attribute without a docstring) stays plain code without a warning. Code blocks are left
alone. Loaded by ``mkdocs.yml`` (``hooks``).
"""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^(\s*)(```|~~~)")
_CODE_SPAN = re.compile(r"(?<!`)`(tpm_models(?:\.[A-Za-z_]\w*)+)([^`\n]*)`(?!`)")


def link_names(markdown: str) -> str:
    """The page's Markdown with package names in inline code turned into optional autorefs."""

    def link(m: re.Match) -> str:
        name, rest = m.group(1), m.group(2)
        if rest and not rest.startswith("("):  # `tpm_models/x.py`, `tpm_models.x and y`: leave as is
            return m.group(0)
        code = html.escape(name + rest, quote=False)
        return f'<autoref identifier="{name}" optional><code>{code}</code></autoref>'

    out, fence = [], None
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(2)
        elif fence is not None and opened and opened.group(2) == fence:
            fence = None
        elif fence is None:
            line = _CODE_SPAN.sub(link, line)
        out.append(line)
    return "\n".join(out)


def on_page_markdown(markdown: str, page, **kwargs) -> str:
    if page.file.src_uri == "api.md":
        return markdown
    return link_names(markdown)
