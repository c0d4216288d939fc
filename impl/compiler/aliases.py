"""Which tensors share memory: the one alias analysis, shared by the compiler's passes and the planner.

Tensors that share memory form a *symbol* (GE's ref mapping, graph_utils.cc
``GraphUtils::GetRefMapping``; block_mem_assigner.cc ``ApplyOutMemory``) whose *root* is the tensor that owns the memory:

- a view's outputs alias its input 0, at ``ops.view_offsets`` bytes into it
  (``ops.is_view``: no task, no memory; e.g. an outer-axis Split);
- a ref output (``ops.ref_outputs``, node attr ``_reuse_input``: True or an input index)
  shares its input's memory, but only when that is safe: the input's root is a
  feature-map tensor (not a graph input, weight or variable, not spanning a
  no-padding concat's other pieces and not one of those pieces), this node is the last reader of the
  symbol so far in the execution order, and every earlier reader is known to
  have run before it (same stream, or ordered by the events on data edges:
  ``memory.stream_order``; a reader on another stream with no path to this node
  could still be reading while it overwrites). Otherwise the output gets its own
  memory (our guard; GE trusts the passes that set the flag);
- an optional in-place pair (``ops.inplace_pairs``, node attr ``_inplace_ability``, flattened: GE's
  ``_output_inplace_ability``) shares its input's memory under the same guard and GE's own conditions
  (``mem_inplace.cc`` ``ProcessInplace``): output and input of equal raw size, and this node the last
  consumer of every output of the input's producer node; no pair on a node carrying GE's
  ``continuous_output`` attribute, whatever its output count (``RemoveOutRwConflicts``); no pair whose
  merge would make an anchor of one symbol conflict with one of the other by the conflict checker's
  table (``RemoveSymbolConflicts``, ``anchor_types.conflict_across``: a graph output with a continuous
  input or output, for instance); the first pair of an output that passes wins.

``aliases(graph, order)`` gives every tensor's root and offset in it; the
planner's lifetimes (``memory.lifetimes``) and the passes that must know whose
memory a tensor is (``passes.memcpy_addr_async``) both read it.
"""
from __future__ import annotations

from typing import Mapping

import attrs

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.anchor_types import conflict_across
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory import stream_order
from zcspec.impl.compiler.topology import execution_order


@attrs.frozen
class Aliases:
    """``root[t]``: the tensor whose memory ``t`` uses (``t`` itself for roots and weights);
    ``offset[t]``: where ``t`` starts inside it; ``members[r]``: the symbol of root ``r``, root first."""

    root: Mapping[str, str]
    offset: Mapping[str, int]
    members: Mapping[str, tuple[str, ...]]


def own_lifetimes(graph: Graph, step: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """Tensor -> (its producer's step, or 0 for a Data node; its last reader's step, or the last step
    for a graph output)."""
    last_step = len(step) - 1
    outputs = set(graph.outputs)
    consumers = graph.consumers
    own: dict[str, tuple[int, int]] = {}
    for n in graph.nodes:
        if not n.outputs:
            continue
        first = 0 if n.op_type == "Data" else step[n.name]
        for t in n.outputs:
            readers = consumers.get(t)
            last = max([step[c] for c in readers]) if readers else first
            own[t] = (first, last_step if t in outputs else max(last, first))
    return own


def _fixed_root(graph: Graph, root: str) -> bool:
    """Memory the planner must not let an in-place op overwrite: inputs, weights, variables."""
    if root in graph.weight:
        return True
    producer = graph.node[graph.producer[root]]
    return ops.info(producer.op_type).kind in ("data", "variable")


def _spans_others(graph: Graph, members) -> bool:
    """A no-padding concat's output covers its other pieces too: writing it in place would clobber them;
    and a piece of a no-padding concat is part of the concat's output, which outlives the piece's own
    readers: writing over the piece in place would change the concat's result."""
    def nopadding(name: str) -> bool:
        return ops.info(graph.node[name].op_type).continuous_input == "nopadding"
    return any((m in graph.producer and nopadding(graph.producer[m]))
               or any(nopadding(c) for c in graph.consumers.get(m, ())) for m in members)


def _readers_done(graph: Graph, members, name: str, step, clock) -> bool:
    """Whether every reader (with a task) of the symbol ``members`` before ``name`` is known to have
    run before ``name`` starts."""
    mine = clock[name]
    for m in members:
        for c in graph.consumers.get(m, ()):
            if c != name and c in step and step[c] < step[name] and ops.task_kinds(graph.node[c]):
                if mine.get(graph.node[c].stream, -1) < step[c]:
                    return False
    return True


def _same_size(graph: Graph, node, out_i: int, in_i: int) -> bool:
    """GE's ProcessInplace pairs only an output and an input of equal raw size (GetTensorSizeInBytes)."""
    return graph.desc[node.outputs[out_i]].nbytes == graph.desc[node.inputs[in_i]].nbytes


def _producer_done(graph: Graph, tensor: str, name: str, step, last_read) -> bool:
    """GE's ProcessInplace: the node is the last consumer of the input's producer node, of every output of it
    (a sibling output read later, or a graph output, keeps the node out of place)."""
    producer = graph.producer.get(tensor)
    if producer is None:
        return True
    return all(last_read.get(t, 0) <= step[name] for t in graph.node[producer].outputs)


def _with_views(graph: Graph, tensor: str) -> list[str]:
    """``tensor`` and the views of it (through views of views): GE's symbol of the tensor holds those
    already when ``RemoveSymbolConflicts`` looks at it."""
    out, todo = [], [tensor]
    while todo:
        t = todo.pop()
        if t in out:
            continue
        out.append(t)
        for c in graph.consumers.get(t, ()):
            n = graph.node[c]
            if ops.is_view(n) and n.inputs and n.inputs[0] == t:
                todo.extend(n.outputs)
    return out


def symbols(graph: Graph, order, own) -> tuple[dict[str, str], dict[str, list[str]], dict[str, int]]:
    root: dict[str, str] = {w: w for w in graph.weight}
    members: dict[str, list[str]] = {w: [w] for w in graph.weight}
    offset: dict[str, int] = {w: 0 for w in graph.weight}
    last_read = {r: own[r][1] for r in own}
    step = {name: i for i, name in enumerate(order)}
    known: list = []

    def clock():
        if not known:
            known.append(stream_order.known_before(graph, tuple(order)))
        return known[0]

    def safe(node, in_i: int) -> bool:
        """Whether ``node`` may write its input ``in_i``'s memory (the guard above)."""
        r = root[node.inputs[in_i]]
        symbol_last = max(last_read.get(m, 0) for m in members[r])
        return (not _fixed_root(graph, r) and not _spans_others(graph, members[r]) and symbol_last <= step[node.name]
                and _readers_done(graph, members[r], node.name, step, clock()))

    for name in order:
        node = graph.node[name]
        shared: dict[int, tuple[str, int]] = {}  # output index -> (input tensor, byte offset inside it)
        if ops.is_view(node) and node.inputs:
            shared = {i: (node.inputs[0], off) for i, off in enumerate(ops.view_offsets(node))}
        for out_i, in_i in ops.ref_outputs(node):   # a ref (GE: IsRefFromInput), under our guard
            if safe(node, in_i):
                shared[out_i] = (node.inputs[in_i], 0)
        pairs = () if node.attr("continuous_output", False) is True else ops.inplace_pairs(node)  # RemoveOutRwConflicts
        for out_i, in_i in pairs:   # optional in-place (GE: ProcessInplace): the first pair that passes
            if out_i not in shared and _same_size(graph, node, out_i, in_i) and safe(node, in_i) \
                    and _producer_done(graph, node.inputs[in_i], name, step, last_read) \
                    and not conflict_across(graph, members[root[node.inputs[in_i]]],
                                            _with_views(graph, node.outputs[out_i])):
                shared[out_i] = (node.inputs[in_i], 0)
        if not shared:   # most nodes: every output is a root of its own
            for t in node.outputs:
                root[t], offset[t] = t, 0
                members.setdefault(t, []).append(t)
            continue
        for i, t in enumerate(node.outputs):
            src, off = shared.get(i, (t, 0))
            r = root[src] if src != t else t
            root[t] = r
            offset[t] = offset.get(src, 0) + off if src != t else 0
            members.setdefault(r, []).append(t)
    return root, members, offset


def aliases(graph: Graph, order: tuple[str, ...] | None = None) -> Aliases:
    """The symbols of ``graph`` in ``order`` (default: the execution order)."""
    order = tuple(order) if order is not None else execution_order(graph)
    root, members, offset = symbols(graph, order, own_lifetimes(graph, {n: i for i, n in enumerate(order)}))
    return Aliases(root, offset, {r: tuple(m) for r, m in members.items()})
