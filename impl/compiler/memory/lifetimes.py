"""Lifetimes over the execution order, of tensors and of the symbols that share memory.

A tensor's memory must stay intact from its producer's step to its last
reader's step, inclusive (steps index ``zcspec.impl.compiler.topology.execution_order``).
Graph inputs live from step 0 and graph outputs to the last step. Which tensors
share memory (symbols, roots) is ``zcspec.impl.compiler.aliases``.

A root's span is the union of its symbol members' lifetimes. Per-node
workspaces (node attr ``_workspace_bytes``, a tuple of ints) are named
``<node>#ws<i>`` and live for their node's step only (ReleaseMemorys).
"""
from __future__ import annotations

from typing import Mapping

import attrs

from zcspec.impl.compiler.aliases import own_lifetimes, symbols
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.topology import execution_order


@attrs.frozen
class Workspace:
    name: str
    node: str
    index: int
    nbytes: int
    step: int


@attrs.frozen
class Lifetimes:
    """Lifetimes of one graph in one execution order.

    ``own[t]``: (first, last) of tensor ``t`` alone (not weights).
    ``root[t]``: the tensor whose memory ``t`` uses (``t`` itself for roots and weights).
    ``offset[t]``: where ``t`` starts inside its root's memory (a view's ``_view_offsets``).
    ``members[r]``: the symbol of root ``r``, root first, in creation order.
    ``span[r]``: (first, last) the root's memory must stay intact (union over members).
    """

    order: tuple[str, ...]
    step: Mapping[str, int]
    own: Mapping[str, tuple[int, int]]
    root: Mapping[str, str]
    offset: Mapping[str, int]
    members: Mapping[str, tuple[str, ...]]
    span: Mapping[str, tuple[int, int]]
    workspaces: tuple[Workspace, ...]

    @property
    def steps(self) -> int:
        return len(self.order)


def _workspaces(graph: Graph, order) -> tuple[Workspace, ...]:
    out = []
    for s, name in enumerate(order):
        sizes = graph.node[name].attr("_workspace_bytes", ())
        sizes = (sizes,) if isinstance(sizes, int) else sizes
        for i, nbytes in enumerate(sizes):
            if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 0:
                raise PlanError(f"node {name!r} attribute '_workspace_bytes' item {i} is {nbytes!r}; "
                                "expected a non-negative int", node=name, rule="workspace")
            if nbytes > 0:  # a size-0 workspace gets no block (GE: AssignWorkSpaceMemoryWithReuse)
                out.append(Workspace(f"{name}#ws{i}", name, i, nbytes, s))
    return tuple(out)


def lifetimes(graph: Graph, order: tuple[str, ...] | None = None) -> Lifetimes:
    """Lifetimes of every tensor of ``graph`` in ``order`` (default: the execution order)."""
    order = tuple(order) if order is not None else execution_order(graph)
    step = {name: i for i, name in enumerate(order)}
    own = own_lifetimes(graph, step)
    root, members, offset = symbols(graph, order, own)
    span = {}
    for r, ms in members.items():
        if r in graph.weight:
            span[r] = (0, len(order) - 1)
            continue
        span[r] = own[ms[0]] if len(ms) == 1 else (min(own[m][0] for m in ms), max(own[m][1] for m in ms))
    return Lifetimes(order, step, own, root, offset, {r: tuple(m) for r, m in members.items()}, span,
                     _workspaces(graph, order))
