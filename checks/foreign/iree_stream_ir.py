"""The stream IR of one function, as IREE prints it around its layout pass: ops in a tree of regions.

The printer puts one op per line; an op whose line opens more braces than it closes (an execute, a
concurrent block, a dispatch with its bindings, a pack with its slices, a loop) owns the lines up to
the matching closing brace as its region, and a ``} else {`` line starts the op's next region. Names
are looked up through the regions that enclose an op, since the printer reuses a name in sibling
regions (the bodies of two loops both define ``%15``). Nothing here knows IREE's semantics beyond the
shape of the ops the readers take (iree_mlir.py, iree_host.py).
"""
from __future__ import annotations

import re
from typing import Iterator

import attrs

from zcspec.checks.errors import UsageError

_NAME = r"%[\w.$-]+"
_VALUE = r"%[\w.$-]+(?:#\d+)?"
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_RESULTS = re.compile(rf"^({_NAME}(?::\d+)?(?:, {_NAME}(?::\d+)?)*) = ")
_OP = re.compile(r"^(?:[^=]+ = )?([a-z_][\w.]*)")
_CONSTANT = re.compile(rf"^{_NAME} = arith\.constant (-?\d+) : index")
_ARITH = re.compile(rf"^{_NAME} = arith\.(addi|muli) ({_VALUE}), ({_VALUE}) : index")
_BINDING = re.compile(rf"\b(ro|wo|rw) ({_NAME})\[({_VALUE}) for ({_VALUE})\]")
_FILL = re.compile(rf"stream\.cmd\.fill [^,]+, ({_NAME})\[({_VALUE}) for ({_VALUE})\]")
_COPY = re.compile(rf"stream\.cmd\.copy ({_NAME})\[({_VALUE})\], ({_NAME})\[({_VALUE})\], ({_VALUE})")
_CAPTURE = re.compile(rf"({_VALUE}) as ({_NAME}):")


class IreeDumpError(UsageError):
    """A dump this reader cannot take; the message names the file and what is wrong."""


class Op:
    """One printed op: its line in the file, its text, and its regions (lists of ops)."""

    __slots__ = ("line", "text", "regions")

    def __init__(self, line: int, text: str):
        self.line, self.text, self.regions = line, text, []

    @property
    def name(self) -> str:
        m = _OP.match(self.text)
        return m.group(1) if m else ""

    @property
    def results(self) -> list[str]:
        """The values the op defines: ``%x``, or ``%x#0`` ... for ``%x:n``."""
        m = _RESULTS.match(self.text)
        if m is None:
            return []
        out = []
        for part in m.group(1).split(", "):
            name, _, count = part.partition(":")
            out += [f"{name}#{i}" for i in range(int(count))] if count else [name]
        return out

    def walk(self) -> Iterator["Op"]:
        """This op and every op nested in it, in the order they are printed."""
        yield self
        for region in self.regions:
            for op in region:
                yield from op.walk()


def parse_function(lines: list[str], first_line: int, path: str) -> Op:
    """The ``util.func`` of one dump section (``first_line``: the file's line number of ``lines[0]``);
    IreeDumpError naming the line where the braces stop balancing."""
    root = Op(0, "")
    root.regions.append([])
    stack = [root.regions[0]]
    owners = [root]
    for i, raw in enumerate(lines):
        text = raw.strip()
        if not text or text.startswith("//"):
            continue
        bare = _STRING.sub('""', text)
        if bare.startswith("}"):
            if len(stack) == 1:
                raise IreeDumpError(f"line {first_line + i}: a closing brace with no region open", file=path)
            stack.pop()
            owner = owners.pop()
            if bare[1:].count("{") > bare[1:].count("}"):          # } else {
                owner.regions.append([])
                stack.append(owner.regions[-1])
                owners.append(owner)
            continue
        op = Op(first_line + i, text)
        stack[-1].append(op)
        if bare.count("{") > bare.count("}"):
            op.regions.append([])
            stack.append(op.regions[-1])
            owners.append(op)
    if len(stack) != 1 or not root.regions[0] or not root.regions[0][0].text.startswith("util.func"):
        raise IreeDumpError(f"line {first_line}: the dump of a function does not close its braces or does not "
                            "start with util.func", file=path)
    return root.regions[0][0]


@attrs.frozen
class Scope:
    """The ops of one region and the scope of the region around it: where a name is looked up."""

    ops: tuple[Op, ...]
    parent: "Scope | None" = None
    defs: dict = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "defs", {r: op for op in self.ops for r in op.results})

    def find(self, name: str) -> Op | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.defs:
                return scope.defs[name]
            scope = scope.parent
        return None

    def value(self, expr: str) -> int | None:
        """The integer ``expr`` names: an index constant, or a sum or product of such; None otherwise."""
        op = self.find(expr)
        if op is None:
            return None
        if m := _CONSTANT.match(op.text):
            return int(m.group(1))
        if m := _ARITH.match(op.text):
            a, b = self.value(m.group(2)), self.value(m.group(3))
            return None if a is None or b is None else a + b if m.group(1) == "addi" else a * b
        return None

    def sum_of(self, expr: str) -> tuple[str, int]:
        """``expr`` as (a value, bytes added to it) through ``arith.addi`` of a constant: ``%2#3`` for
        ``%2#3`` itself, (``%2#3``, 128) for ``%8 = arith.addi %2#3, %c128``."""
        op = self.find(expr)
        m = _ARITH.match(op.text) if op is not None else None
        if m is None or m.group(1) != "addi":
            return expr, 0
        for base, other in ((m.group(2), m.group(3)), (m.group(3), m.group(2))):
            if (c := self.value(other)) is not None:
                root, delta = self.sum_of(base)
                return root, delta + c
        return expr, 0


def scoped(ops: list[Op], parent: Scope | None = None) -> Iterator[tuple[Op, Scope]]:
    """Every op under ``ops`` with the scope its operands are looked up in, in printed order."""
    scope = Scope(tuple(ops), parent)
    for op in ops:
        yield op, scope
        for region in op.regions:
            yield from scoped(region, scope)


@attrs.frozen
class Access:
    """One command's access to a resource of an execute region: the region's argument, the offset and
    length expressions, and the mode (``ro``, ``wo`` or ``rw``; a fill and a copy's target write)."""

    resource: str
    offset: str
    length: str
    mode: str
    line: int


def accesses(op: Op) -> list[Access]:
    """The accesses of a command and of every op nested in it (a dispatch's bindings)."""
    out = []
    for sub in op.walk():
        out += [Access(m.group(2), m.group(3), m.group(4), m.group(1), sub.line) for m in _BINDING.finditer(sub.text)]
        if m := _FILL.search(sub.text):
            out.append(Access(m.group(1), m.group(2), m.group(3), "wo", sub.line))
        if m := _COPY.search(sub.text):
            out += [Access(m.group(1), m.group(2), m.group(5), "ro", sub.line),
                    Access(m.group(3), m.group(4), m.group(5), "wo", sub.line)]
    return out


def steps(execute: Op) -> list[tuple[Op, list[Access]]]:
    """The steps of an execute region: each top-level command (a ``stream.cmd.concurrent`` block, whose
    commands run together, is one) with its accesses."""
    body = execute.regions[0] if execute.regions else []
    return [(op, accesses(op)) for op in body if op.name.startswith("stream.cmd.")]


def captures(execute: Op) -> list[tuple[str, str]]:
    """(value, region argument) for each resource an execute takes: ``%3 as %arg3``."""
    head = execute.text.split(" with(", 1)
    return [(m.group(1), m.group(2)) for m in _CAPTURE.finditer(head[1])] if len(head) == 2 else []


def operands_after(op: Op, marker: str) -> list[str]:
    """The comma-separated values after ``marker`` and before the `` : `` of the types (an await's
    ``=> %3, %4 : ...``, a yield's ``scf.yield %a, %b : ...``)."""
    head = op.text.split(marker, 1)
    if len(head) != 2:
        return []
    values = head[1].split(" : ", 1)[0]
    return [v.strip() for v in values.split(",") if v.strip()]
