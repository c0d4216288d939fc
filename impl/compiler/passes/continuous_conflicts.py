"""Give every continuous-input consumer inputs that no other continuous group claims.

A continuous-input node (HCCL collectives, PhonyConcat) needs its inputs laid
out back to back in one block (ge-facts.md 2.5.6-2.5.8). One tensor cannot sit
in two such blocks, nor twice in one, so where a tensor (or a view of it)
feeds a second continuous group, a copy is inserted and that group reads the
copy, as GE's HCCL memcpy passes do. The copy is a MemcpyAddrAsync: its
addresses sit in its argument table, so it stays refreshable.
"""
from __future__ import annotations

import attrs

from impl.compiler import ops
from impl.compiler.ir import Graph, Node
from impl.compiler.passes.graph_edit import alias_root, fresh_name

NAME = "continuous_conflicts"
OP = "MemcpyAddrAsync"


def _continuous(node: Node) -> bool:
    info = ops.info(node.op_type)
    return info is not None and info.continuous_input is not None


def continuous_conflicts(graph: Graph, options) -> Graph:
    claimed: set[str] = set()
    nodes: list[Node] = []
    tensors = list(graph.tensors)
    taken_graph = graph
    changed = False
    for n in graph.nodes:
        if not _continuous(n):
            nodes.append(n)
            continue
        inputs = list(n.inputs)
        for i, t in enumerate(n.inputs):
            root = alias_root(graph, t)
            if root in claimed:
                name = fresh_name(taken_graph, f"{n.name}_{OP}")
                copy = f"{name}:0"
                nodes.append(Node(name, OP, (t,), (copy,), (), n.stream))
                tensors.append(attrs.evolve(graph.desc[t], name=copy))
                taken_graph = attrs.evolve(taken_graph, nodes=taken_graph.nodes + (nodes[-1],),
                                           tensors=taken_graph.tensors + (tensors[-1],))
                inputs[i] = copy
                changed = True
            else:
                claimed.add(root)
        nodes.append(attrs.evolve(n, inputs=tuple(inputs)))
    return attrs.evolve(graph, nodes=nodes, tensors=tensors) if changed else graph
