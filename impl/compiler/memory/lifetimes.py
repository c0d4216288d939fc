"""Lifetimes over the execution order, and which tensors share memory (symbols).

A tensor's memory must stay intact from its producer's step to its last
reader's step, inclusive (steps index ``zcspec.impl.compiler.topology.execution_order``).
Graph inputs live from step 0 and graph outputs to the last step. Tensors that
share memory form a *symbol* (GE's ref mapping, ge-facts.md 0 and 2.3.1) whose
*root* is the tensor that owns the memory:

- a view's outputs alias its input 0, at ``ops.view_offsets`` bytes into it
  (``ops.is_view``: no task, no memory; e.g. an outer-axis Split);
- an in-place output (``ops.ref_outputs``, node attr ``_reuse_input=True``)
  shares its input's memory, but only when that is safe: the input's root is a
  feature-map tensor (not a graph input, weight or variable, and not spanning a
  no-padding concat's other pieces) and this node is the last reader of the
  symbol so far. Otherwise the output gets its own
  memory (our guard; GE trusts the passes that set the flag).

A root's span is the union of its symbol members' lifetimes. Per-node
workspaces (node attr ``_workspace_bytes``, a tuple of ints) are named
``<node>#ws<i>`` and live for their node's step only (2.2.5).
"""
from __future__ import annotations

from typing import Mapping

import attrs

from zcspec.impl.compiler import ops
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


def _own_lifetimes(graph: Graph, step: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    last_step = len(step) - 1
    outputs = set(graph.outputs)
    own: dict[str, tuple[int, int]] = {}
    for n in graph.nodes:
        for t in n.outputs:
            first = 0 if n.op_type == "Data" else step[n.name]
            readers = [step[c] for c in graph.consumers.get(t, ())]
            last = max(readers, default=first)
            own[t] = (first, last_step if t in outputs else max(last, first))
    return own


def _fixed_root(graph: Graph, root: str) -> bool:
    """Memory the planner must not let an in-place op overwrite: inputs, weights, variables."""
    if root in graph.weight:
        return True
    producer = graph.node[graph.producer[root]]
    return ops.info(producer.op_type).kind in ("data", "variable")


def _spans_others(graph: Graph, members) -> bool:
    """A no-padding concat's output covers its other pieces too: writing it in place would clobber them."""
    return any(ops.info(graph.node[graph.producer[m]].op_type).continuous_input == "nopadding"
               for m in members if m in graph.producer)


def _symbols(graph: Graph, order, own) -> tuple[dict[str, str], dict[str, list[str]], dict[str, int]]:
    root: dict[str, str] = {w: w for w in graph.weight}
    members: dict[str, list[str]] = {w: [w] for w in graph.weight}
    offset: dict[str, int] = {w: 0 for w in graph.weight}
    last_read = {r: own[r][1] for r in own}
    step = {name: i for i, name in enumerate(order)}
    for name in order:
        node = graph.node[name]
        shared: dict[int, tuple[str, int]] = {}  # output index -> (input tensor, byte offset inside it)
        if ops.is_view(node) and node.inputs:
            shared = {i: (node.inputs[0], off) for i, off in enumerate(ops.view_offsets(node))}
        for out_i, in_i in ops.ref_outputs(node):
            r = root[node.inputs[in_i]]
            symbol_last = max(last_read.get(m, 0) for m in members[r])
            if not _fixed_root(graph, r) and not _spans_others(graph, members[r]) and symbol_last <= step[name]:
                shared[out_i] = (node.inputs[in_i], 0)
        for i, t in enumerate(node.outputs):
            src, off = shared.get(i, (t, 0))
            r = root[src] if src != t else t
            root[t] = r
            offset[t] = offset.get(src, 0) + off if src != t else 0
            members.setdefault(r, []).append(t)
    return root, members, offset


def _workspaces(graph: Graph, order) -> tuple[Workspace, ...]:
    out = []
    for s, name in enumerate(order):
        sizes = graph.node[name].attr("_workspace_bytes", ())
        sizes = (sizes,) if isinstance(sizes, int) else sizes
        for i, nbytes in enumerate(sizes):
            if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 0:
                raise PlanError(f"node {name!r} attribute '_workspace_bytes' item {i} is {nbytes!r}; "
                                "expected a non-negative int", node=name, rule="workspace")
            if nbytes > 0:  # a size-0 workspace gets no block (ge-facts.md 2.5.14)
                out.append(Workspace(f"{name}#ws{i}", name, i, nbytes, s))
    return tuple(out)


def lifetimes(graph: Graph, order: tuple[str, ...] | None = None) -> Lifetimes:
    """Lifetimes of every tensor of ``graph`` in ``order`` (default: the execution order)."""
    order = tuple(order) if order is not None else execution_order(graph)
    step = {name: i for i, name in enumerate(order)}
    own = _own_lifetimes(graph, step)
    root, members, offset = _symbols(graph, order, own)
    span = {}
    for r, ms in members.items():
        if r in graph.weight:
            span[r] = (0, len(order) - 1)
            continue
        span[r] = (min(own[m][0] for m in ms), max(own[m][1] for m in ms))
    return Lifetimes(order, step, own, root, offset, {r: tuple(m) for r, m in members.items()}, span,
                     _workspaces(graph, order))
