"""A small document model and its two renderings: Markdown (docs/SPEC.md) and a standalone HTML page.

A document is a list of blocks: :class:`Heading`, :class:`Para` (inline
``**bold**``, `` `code` `` and ``[text](#anchor)`` only), :class:`Table`,
:class:`Code` and :class:`Picture` (an SVG: linked from Markdown, inlined in
HTML). Both renderings are deterministic, so "is the file current?" is a
string comparison.
"""
from __future__ import annotations

import re
from html import escape

import attrs


@attrs.frozen
class Heading:
    level: int
    text: str
    anchor: str = ""


@attrs.frozen
class Para:
    text: str


@attrs.frozen
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@attrs.frozen
class Code:
    text: str


@attrs.frozen
class Picture:
    path: str      # relative to the Markdown file
    svg: str = attrs.field(repr=False)
    alt: str = ""


def anchor(text: str) -> str:
    """GitHub's heading anchor: lower case, spaces to dashes, punctuation dropped."""
    return re.sub(r"[^a-z0-9 _-]", "", text.lower()).replace(" ", "-")


def to_markdown(blocks) -> str:
    out = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"{'#' * b.level} {b.text}")
        elif isinstance(b, Para):
            out.append(b.text)
        elif isinstance(b, Table):
            out.append("\n".join(["| " + " | ".join(b.header) + " |", "|" + "---|" * len(b.header)]
                                 + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in b.rows]))
        elif isinstance(b, Code):
            out.append("```\n" + b.text.rstrip("\n") + "\n```")
        elif isinstance(b, Picture):
            out.append(f"![{b.alt}]({b.path})")
    return "\n\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


_INLINE = re.compile(r"\*\*(.+?)\*\*|`([^`]+)`|\[([^\]]+)\]\(([^)]+)\)")


def _inline_html(text: str) -> str:
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(escape(text[pos:m.start()]))
        if m.group(1) is not None:
            out.append(f"<strong>{_inline_html(m.group(1))}</strong>")
        elif m.group(2) is not None:
            out.append(f"<code>{escape(m.group(2))}</code>")
        else:
            out.append(f'<a href="{escape(m.group(4))}">{_inline_html(m.group(3))}</a>')
        pos = m.end()
    out.append(escape(text[pos:]))
    return "".join(out)


_STYLE = """body{font-family:Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.45;color:#222}
code,pre{font-family:Menlo,Consolas,monospace;font-size:90%}pre{background:#f6f8fa;padding:.8em;overflow-x:auto}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 7px;font-size:90%;vertical-align:top}
th{background:#f0f0f0}h3{border-top:1px solid #ddd;padding-top:1em}svg{max-width:100%;height:auto}"""


def to_html(blocks, *, title: str) -> str:
    out = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
           f"<style>{_STYLE}</style></head><body>"]
    for b in blocks:
        if isinstance(b, Heading):
            ident = f' id="{escape(b.anchor or anchor(b.text))}"'
            out.append(f"<h{b.level}{ident}>{_inline_html(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            out.append(f"<p>{_inline_html(b.text)}</p>")
        elif isinstance(b, Table):
            head = "".join(f"<th>{_inline_html(h)}</th>" for h in b.header)
            rows = "".join("<tr>" + "".join(f"<td>{_inline_html(c)}</td>" for c in row) + "</tr>" for row in b.rows)
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        elif isinstance(b, Code):
            out.append(f"<pre>{escape(b.text.rstrip())}</pre>")
        elif isinstance(b, Picture):
            out.append(f'<figure>{b.svg.split("?>", 1)[-1]}</figure>')
    out.append("</body></html>\n")
    return "\n".join(out)
