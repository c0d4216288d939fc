"""Mutation sites in impl/'s module-level tables: the op facts, the SoC profiles, the dtype sizes.

A table is a module-level assignment whose value is more than a scalar (a dict, tuple, list or set
literal, a call building records: ``OPS = _ops(OpInfo("Conv", inputs=(2, 3)), ...)``). GE's decisions
live in such data as much as in code (a planner that consults a rule table is the design), so a table
is mutated as logic is, with two operators:

- ``table-drop``: one entry left out: a dict's key and value, an element of a tuple, list or set, a
  record among a call's positional records (every argument a call or a ``*`` unpacking), or a keyword
  argument of any call inside the table (the field falls back to its default);
- ``table-value``: one number or flag inside the table changed: True/False flipped, an int k to k+1
  and k-1, a float c to 2c. Strings are left alone, as everywhere.

Left alone: ``__all__``, and anything inside an f-string. An entry's removal keeps every line number
of the module (the lines it took become blank lines inside the brackets), and a site whose splice would
not parse to exactly the table without that entry (a one-element set would become a dict) is not made.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

SKIPPED_TABLES = ("__all__",)

# A splice: (node, operator, replacement text, detail) for mutator.file_sites to turn into a Mutation.
Site = tuple[ast.AST, str, str, str]


def table_sites(tree: ast.Module, segment: Callable[[ast.AST], str],
                constant_mutations: Callable[[ast.Constant], Iterator]) -> Iterator[Site]:
    """Every table site of the module ``tree``; ``segment(node)`` is a node's source text,
    ``constant_mutations`` the mutator's own for a number or flag."""
    for statement in tree.body:
        value = table_value(statement)
        if value is None:
            continue
        for node in _walk(value):
            if isinstance(node, ast.Constant) and not isinstance(node.value, (str, bytes)):
                for constant, _operator, replacement in constant_mutations(node):
                    yield constant, "table-value", replacement, ""
            for i, entry in enumerate(_entries(node)):
                dropped = _without(node, i, segment)
                if dropped is not None:
                    yield node, "table-drop", dropped, f"drop {_clip(_entry_text(node, entry, segment), 50)} of " \
                                                       f"{_clip(segment(node), 40)}"


def table_value(statement: ast.stmt) -> ast.AST | None:
    """The value of a module-level table assignment (None for anything else: a scalar constant, a
    plain name or call with no literal in it, ``__all__``)."""
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
        return None
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    if any(isinstance(t, ast.Name) and t.id in SKIPPED_TABLES for t in targets):
        return None
    value = statement.value
    scalar = (ast.Constant, ast.UnaryOp, ast.BinOp, ast.operator, ast.unaryop)
    if all(isinstance(n, scalar) for n in ast.walk(value)):
        return None   # a scalar constant: the logic operators mutate it
    return value


def _walk(value: ast.AST) -> Iterator[ast.AST]:
    """The table's nodes, not looking inside f-strings."""
    todo = [value]
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.JoinedStr):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def _entries(node: ast.AST) -> list[ast.AST]:
    """The droppable entries of a container node, in source order (a dict's entry as its value)."""
    if isinstance(node, ast.Dict):
        return [v for k, v in zip(node.keys, node.values) if k is not None]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return list(node.elts)
    if isinstance(node, ast.Call):
        records = len(node.args) >= 2 and all(isinstance(a, (ast.Call, ast.Starred)) for a in node.args)
        return (list(node.args) if records else []) + list(node.keywords)
    return []


def _entry_text(node: ast.AST, entry: ast.AST, segment: Callable[[ast.AST], str]) -> str:
    """An entry as a reader names it: a dict's with its key."""
    if isinstance(node, ast.Dict):
        key = next(k for k, v in zip(node.keys, node.values) if v is entry)
        return f"{segment(key)}: {segment(entry)}"
    return segment(entry)


def _spans(node: ast.AST) -> list[tuple[ast.AST, ast.AST, ast.AST]]:
    """(first node, last node, the entry) of every comma-separated item of ``node``, in source order."""
    if isinstance(node, ast.Dict):
        return [(k if k is not None else v, v, v) for k, v in zip(node.keys, node.values)]
    if isinstance(node, ast.Call):
        items = sorted([*node.args, *node.keywords], key=lambda n: (n.lineno, n.col_offset))
        return [(n, n, n) for n in items]
    return [(n, n, n) for n in node.elts]


def _without(node: ast.AST, index: int, segment: Callable[[ast.AST], str]) -> str | None:
    """``node``'s source text with its ``index``-th entry (of ``_entries``) left out, or None when the
    splice would not parse to exactly that."""
    entry = _entries(node)[index]
    spans = _spans(node)
    at = next(i for i, (_, _, e) in enumerate(spans) if e is entry)
    text = segment(node)
    origin = _position(node)
    first, last = _offset(text, origin, spans[at][0], start=True), _offset(text, origin, spans[at][1], start=False)
    if at + 1 < len(spans):
        cut = (first, _offset(text, origin, spans[at + 1][0], start=True))
    elif at > 0:
        cut = (_offset(text, origin, spans[at - 1][1], start=False), last)
    else:
        cut = (first, last)
    removed = text[cut[0]:cut[1]]
    dropped = text[:cut[0]] + "\n" * removed.count("\n") + text[cut[1]:]
    expected = _expected_without(text, node, entry)
    for candidate in (dropped, _with_trailing_comma(dropped)):
        if candidate and _parses_to(candidate, expected):
            return candidate
    return None


def _position(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _offset(text: str, origin: tuple[int, int], node: ast.AST, *, start: bool) -> int:
    """Character offset in ``text`` (the source of a node starting at ``origin``) of ``node``'s start or end.
    ast's columns count UTF-8 bytes; the offset counts characters."""
    line, col = (node.lineno, node.col_offset) if start else (node.end_lineno, node.end_col_offset)
    lines = text.split("\n")
    row = line - origin[0]
    head = lines[row].encode("utf-8")
    column = col - (origin[1] if row == 0 else 0)
    return sum(len(s) + 1 for s in lines[:row]) + len(head[:column].decode("utf-8"))


def _expected_without(text: str, node: ast.AST, entry: ast.AST) -> str:
    """ast.dump of the container parsed from ``text`` with ``entry`` (by its position) removed."""
    parsed = ast.parse(f"(\n{text}\n)", mode="eval").body
    index = _entries(node).index(entry)
    if isinstance(parsed, ast.Dict):
        keep = [i for i, k in enumerate(node.keys) if not (k is not None and node.values[i] is entry)]
        parsed.keys = [parsed.keys[i] for i in keep]
        parsed.values = [parsed.values[i] for i in keep]
    elif isinstance(parsed, ast.Call):
        n_args = len(_entries(node)) - len(node.keywords)
        if index < n_args:
            del parsed.args[index]
        else:
            del parsed.keywords[index - n_args]
    else:
        del parsed.elts[index]
    return ast.dump(parsed)


def _parses_to(text: str, expected: str) -> bool:
    try:
        return ast.dump(ast.parse(f"(\n{text}\n)", mode="eval").body) == expected
    except SyntaxError:
        return False


def _with_trailing_comma(text: str) -> str:
    """A one-element tuple's text needs its comma: ``(a)`` -> ``(a,)``."""
    body = text.rstrip()
    return body[:-1].rstrip() + ",)" if body.endswith(")") and not body[:-1].rstrip().endswith(",") else ""


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."
