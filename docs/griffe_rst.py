"""Griffe extension: render the reStructuredText bits of the docstrings as Markdown.

The docstrings are Google style with reStructuredText inline markup, which Markdown would
show verbatim. Before the docstrings are parsed this extension rewrites

* Sphinx roles (``:func:`name```, ``:class:`~pkg.mod.Name```, ``:mod:``, ``:meth:``,
  ``:attr:``, ``:data:``, ``:obj:``, ``:exc:``, ``:const:``) into a code span that links to
  the object's documentation when it has one. The target is resolved the way Sphinx does it:
  a full path as written, or a name looked up from the docstring's scope (``:func:`get```
  in ``nbo_jax.benchmarks`` is ``nbo_jax.benchmarks.get``); ``~`` shows the last component.
  The link is an *optional* cross-reference: a target that has no page (a private helper, an
  external library) is shown as code without a link and without a warning. Markdown
  cross-references (``[text][nbo_jax.x]``) stay strict.
* literal-block markers: a paragraph ending in ``::`` ends in ``:`` (``::`` alone on a line
  is dropped); the indented block below it is a Markdown code block already.
* continuation lines of a ``Raises:`` item written at the item's own indentation (Google
  style wants them indented further): they are indented, so that the parser keeps them as
  part of the description instead of dropping them. A line starts a new item only if it
  reads ``ExceptionName: ...`` (or ``TypeError / ValueError: ...``).

It changes only the text given to the docs renderer, never the source files.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(func|class|mod|meth|attr|data|obj|exc|const):`([^`]+)`")
_TITLED = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$")
_LITERAL_ALONE = re.compile(r"^(\s*)::\s*$", re.MULTILINE)
_LITERAL_SPACED = re.compile(r"(\S)\s+::[ \t]*$", re.MULTILINE)
_LITERAL_END = re.compile(r"(\S)::[ \t]*$", re.MULTILINE)


def _resolve(scope: griffe.Object, target: str) -> str | None:
    """Full path of ``target`` as seen from ``scope``, or None."""
    if target.startswith("nbo_jax"):
        return target
    head, _, rest = target.partition(".")
    for obj in (scope, scope.parent):
        if obj is None:
            continue
        try:
            path = obj.resolve(head)
        except Exception:  # NameResolutionError, alias resolution errors
            continue
        return f"{path}.{rest}" if rest else path
    return None


def _role_to_markdown(scope: griffe.Object, match: re.Match) -> str:
    text = match.group(2).strip()
    titled = _TITLED.match(text)
    if titled:
        title, target = titled.group("title"), titled.group("target").strip()
    else:
        target = text.lstrip("~").lstrip(".")
        title = target.rsplit(".", 1)[-1] if text.startswith("~") else target
    code = f"<code>{html.escape(title)}</code>"
    path = _resolve(scope, target)
    if path is None:
        return code
    return f'<autoref identifier="{html.escape(path)}" optional>{code}</autoref>'


_SECTION = re.compile(r"^(\s*)([A-Z][A-Za-z ]*):\s*$")
_RAISES_ITEM = re.compile(r"^[A-Z][\w.]*(?:\s*(?:/|,|or|and)\s*[A-Z][\w.]*)*\s*:(?:\s|$)")


def _indent_raises_continuations(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    item_indent: int | None = None  # indentation of the items of the current Raises section
    section_indent = 0
    for line in lines:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        section = _SECTION.match(line)
        if section and (item_indent is None or indent <= section_indent):
            item_indent = -1 if section.group(2) == "Raises" else None
            section_indent = indent
            out.append(line)
            continue
        if item_indent is not None and stripped:
            if indent <= section_indent:  # back at the section's level: the section is over
                item_indent = None
            elif item_indent == -1:  # the first item fixes the items' indentation
                item_indent = indent
            elif indent == item_indent and not _RAISES_ITEM.match(stripped):
                line = " " * 4 + line
        out.append(line)
    return "\n".join(out)


def rewrite(scope: griffe.Object, text: str) -> str:
    text = _indent_raises_continuations(text)
    text = _ROLE.sub(lambda m: _role_to_markdown(scope, m), text)
    text = _LITERAL_ALONE.sub(r"\1", text)
    text = _LITERAL_SPACED.sub(r"\1", text)
    return _LITERAL_END.sub(r"\1:", text)


class RstToMarkdown(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        seen: set[int] = set()

        def visit(obj: griffe.Object) -> None:
            if id(obj) in seen:
                return
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = rewrite(obj, obj.docstring.value)
            for member in obj.members.values():
                if not member.is_alias:
                    visit(member)

        visit(pkg)
