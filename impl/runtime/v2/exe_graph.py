"""The execution graph: kernel nodes in execution order, joined by data and control edges.

A lowered model (``lowering.lower``) is one :class:`ExeGraph`, GE's Main graph of the gert
executor. Each :class:`ExeNode` is one kernel call: ``type`` names the kernel
(``kernels.KERNELS``), ``inputs`` are data edges ``node:index`` to earlier nodes' outputs,
``after`` lists earlier nodes it must follow without reading their values (a FreeMemory
follows the last reader of its memory), ``attrs`` are constants. Nodes run in list order,
which is a topological order: ``validate`` checks that every edge points backwards.

Frozen values; passes return edited copies (``replace``, ``without``, ``moved_after``).
``dump()`` prints one node per line: index, type, name, inputs, control edges, attributes.
"""
from __future__ import annotations

import functools
from typing import Any, Iterable

import attrs

from zcspec.impl.runtime.v2.errors import ExeGraphError


@attrs.frozen
class Edge:
    """Output ``index`` of node ``node``."""

    node: str
    index: int = 0

    def __str__(self) -> str:
        return f"{self.node}:{self.index}"


def _freeze(items) -> tuple:
    pairs = items.items() if isinstance(items, dict) else items
    return tuple(sorted((str(k), tuple(v) if isinstance(v, list) else v) for k, v in pairs))


@attrs.frozen
class ExeNode:
    name: str
    type: str
    inputs: tuple[Edge, ...] = attrs.field(converter=tuple, default=())
    outputs: int = 1
    after: tuple[str, ...] = attrs.field(converter=tuple, default=())
    attrs: tuple = attrs.field(converter=_freeze, default=())

    def attr(self, key: str, default: Any = None) -> Any:
        return next((v for k, v in self.attrs if k == key), default)

    def with_attrs(self, **changes: Any) -> "ExeNode":
        merged = dict(self.attrs)
        merged.update(changes)
        return attrs.evolve(self, attrs=merged)

    def line(self, index: int) -> str:
        ins = ", ".join(map(str, self.inputs)) or "-"
        after = f"  after {', '.join(self.after)}" if self.after else ""
        shown = [(k, v) for k, v in self.attrs if k not in _HIDDEN]
        extra = f"  [{', '.join(f'{k}={v}' for k, v in shown)}]" if shown else ""
        return f"{index:4d}  {self.type:<26} {self.name:<32} <- {ins}{after}{extra}"


_HIDDEN = ("slots",)  # long tuples that would swamp a dump line


@attrs.frozen
class ExeGraph:
    name: str
    nodes: tuple[ExeNode, ...] = attrs.field(converter=tuple)

    @functools.cached_property
    def node(self) -> dict[str, ExeNode]:
        return {n.name: n for n in self.nodes}

    @functools.cached_property
    def position(self) -> dict[str, int]:
        return {n.name: i for i, n in enumerate(self.nodes)}

    @functools.cached_property
    def consumers(self) -> dict[str, tuple[str, ...]]:
        """Node name -> names of nodes with a data edge from it, in order."""
        out: dict[str, list[str]] = {}
        for n in self.nodes:
            for e in dict.fromkeys(e.node for e in n.inputs):
                out.setdefault(e, []).append(n.name)
        return {k: tuple(v) for k, v in out.items()}

    def of_type(self, *types: str) -> tuple[ExeNode, ...]:
        return tuple(n for n in self.nodes if n.type in types)

    def producer(self, edge: Edge) -> ExeNode:
        return self.node[edge.node]

    # -- edits (each returns a new graph) --------------------------------------------

    def replace(self, new: ExeNode, *, old: str | None = None) -> "ExeGraph":
        """``new`` in place of the node called ``old`` (default: ``new.name``)."""
        key = old or new.name
        return attrs.evolve(self, nodes=[new if n.name == key else n for n in self.nodes])

    def without(self, names: Iterable[str]) -> "ExeGraph":
        gone = set(names)
        kept = [attrs.evolve(n, after=[a for a in n.after if a not in gone]) for n in self.nodes if n.name not in gone]
        return attrs.evolve(self, nodes=kept)

    def moved_after(self, name: str, anchor: str) -> "ExeGraph":
        """The node ``name`` moved to just after ``anchor`` (its inputs must still come first)."""
        node = self.node[name]
        rest = [n for n in self.nodes if n.name != name]
        i = next(i for i, n in enumerate(rest) if n.name == anchor)
        return attrs.evolve(self, nodes=rest[:i + 1] + [node] + rest[i + 1:])

    # -- checks and printing ---------------------------------------------------------

    def validate(self) -> "ExeGraph":
        """This graph, or ExeGraphError naming the first node with a duplicate name or a forward/dangling edge."""
        seen: dict[str, ExeNode] = {}
        for n in self.nodes:
            if n.name in seen:
                raise ExeGraphError("duplicate node name", node=n.name)
            for e in n.inputs:
                src = seen.get(e.node)
                if src is None or not 0 <= e.index < src.outputs:
                    raise ExeGraphError(f"input {e} is not an output of an earlier node", node=n.name)
            for a in n.after:
                if a not in seen:
                    raise ExeGraphError(f"control edge from {a!r}, which is not an earlier node", node=n.name)
            seen[n.name] = n
        return self

    def dump(self) -> str:
        head = f"exe graph {self.name!r}: {len(self.nodes)} nodes"
        return "\n".join([head] + [n.line(i) for i, n in enumerate(self.nodes)])
