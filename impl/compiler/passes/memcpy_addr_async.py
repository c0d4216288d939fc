"""MemcpyAddrAsyncPass: put a refreshable copy where a model I/O address cannot be refreshed.

A MemcpyAddrAsync task keeps its source and destination addresses in its
argument table, so the runtime can point them at the user's buffers on every
execution (ge-facts.md 5.3.3). The pass inserts one where a model input or
output would otherwise be bound to a task whose arguments the SoC cannot
refresh, so the refresh lands on the copy instead:

1. the SoC has no zero-copy capability: the pass does nothing, the runtime
   copies all I/O (5.3.2);
2. a node reads a model input (a Data output, or a view of one) and one of its
   task kinds cannot be refreshed on this SoC (``SocProfile.can_refresh``; node
   attribute ``_in_loop=True`` marks a task inside a loop subgraph): the copy
   goes between the input and all such readers (one copy per input tensor);
3. a node writes a model output (directly or through views) and cannot be
   refreshed: the copy goes between it and the NetOutput;
4. a weight (Const) feeds the NetOutput: always a copy, since the output must
   land in the user's buffer and weights are read-only (5.3.4b);
5. a Data feeds the NetOutput directly: a copy only for offline (ATC) builds
   (5.3.4b; otherwise runtime v1 copies that output, 6.4.4).

Inserted nodes are named ``<source>_MemcpyAddrAsync_<n>`` (5.3.5) and take the
stream of the node they serve. zcspec has no StreamMerge or RefData, so GE's
rules 5.3.4a and 5.3.4c appear here as rules 2 and 3 for any task kind.
"""
from __future__ import annotations

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.aliases import aliases
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.passes.graph_edit import (
    fresh_name,
    insert_after_tensor,
    insert_before_output,
    model_input_tensors,
)

NAME = "memcpy_addr_async"
OP = "MemcpyAddrAsync"


def refreshable(node, soc, *, side: str = "output") -> bool:
    """Whether every task of ``node`` that references its ``side`` ("input"/"output") can be refreshed.

    An atomic-clean (memset) task only references outputs.
    """
    in_loop = bool(node.attr("_in_loop", False))
    kinds = [k for k in ops.task_kinds(node) if side == "output" or k != "memset"]
    return all(soc.can_refresh(kind, in_loop=in_loop) for kind in kinds)


def _stuck_input_readers(graph: Graph, soc) -> dict[str, tuple[str, ...]]:
    """Model-input tensor -> the non-refreshable nodes (with tasks) that read it."""
    inputs = model_input_tensors(graph)
    stuck: dict[str, list[str]] = {}
    for n in graph.nodes:
        if n.op_type == OP or not ops.task_kinds(n) or refreshable(n, soc, side="input"):
            continue
        for t in dict.fromkeys(n.inputs):
            if t in inputs:
                stuck.setdefault(t, []).append(n.name)
    return {t: tuple(v) for t, v in stuck.items()}


def _outputs_needing_copy(graph: Graph, soc, offline: bool) -> list[str]:
    out: list[str] = []
    roots = aliases(graph).root
    for t in dict.fromkeys(graph.outputs):
        root = roots.get(t, t)
        producer = graph.producer.get(root)
        if root in graph.weight:
            out.append(t)
        elif root in graph.inputs:
            if offline:
                out.append(t)
        elif producer is not None:
            node = graph.node[producer]
            if node.op_type != OP and ops.task_kinds(node) and not refreshable(node, soc):
                out.append(t)
    return out


def memcpy_addr_async(graph: Graph, options) -> Graph:
    soc = options.profile
    if not soc.zero_copy:
        return graph
    roots = aliases(graph).root
    for tensor, readers in _stuck_input_readers(graph, soc).items():
        name = fresh_name(graph, f"{roots.get(tensor, tensor)}_{OP}")
        stream = graph.node[readers[0]].stream
        graph = insert_after_tensor(graph, tensor, readers, OP, name, stream=stream)
    for tensor in _outputs_needing_copy(graph, soc, options.offline):
        src_node = graph.producer.get(tensor)
        stream = graph.node[src_node].stream if src_node else 0
        stem = src_node if src_node and graph.node[src_node].op_type != "Data" else tensor
        graph = insert_before_output(graph, tensor, OP, fresh_name(graph, f"{stem}_{OP}"), stream=stream)
    return graph
