"""Small pure helpers passes share: a fresh node name, inserting a node on an edge."""
from __future__ import annotations

import attrs

from zcspec.impl.compiler.ir import Graph, Node


def fresh_name(graph: Graph, stem: str) -> str:
    taken = set(graph.node) | set(graph.desc)
    n = 0
    while f"{stem}_{n}" in taken:
        n += 1
    return f"{stem}_{n}"


def insert_after_tensor(
    graph: Graph, tensor: str, readers: tuple[str, ...], op_type: str, name: str, *, stream: int, **attrs_: object
) -> Graph:
    """Insert ``name`` (``op_type``, 1 in 1 out) reading ``tensor``; ``readers`` read its copy instead.

    The new tensor is named after the node (``<name>:0``) with ``tensor``'s desc,
    and the node goes right before the first reader so the stable order keeps it close.
    """
    copy = f"{name}:0"
    desc = graph.desc[tensor]
    new = Node(name, op_type, (tensor,), (copy,), attrs_, stream)
    nodes = []
    for n in graph.nodes:
        if n.name in readers:
            if new not in nodes:
                nodes.append(new)
            n = attrs.evolve(n, inputs=tuple(copy if t == tensor else t for t in n.inputs))
        nodes.append(n)
    return attrs.evolve(graph, nodes=nodes, tensors=graph.tensors + (attrs.evolve(desc, name=copy),))


def insert_before_output(graph: Graph, tensor: str, op_type: str, name: str, *, stream: int, **attrs_: object) -> Graph:
    """Make ``name`` write graph output ``tensor``: its producer writes ``<name>:src`` instead.

    The output keeps its name (users bind buffers by it); every other reader of
    the old tensor reads the renamed source, so nothing waits on the copy.
    A weight source is renamed the same way; a graph input cannot be (it is the
    input's name), so then the output gets the copy's name (``<name>:0``); the model's I/O
    table still calls that output by the caller's name (``IoDesc.name``, taskgen.generate_tasks).
    """
    if tensor in graph.inputs:
        return insert_after_tensor(graph, tensor, (graph.netoutput.name,), op_type, name, stream=stream, **attrs_)
    src = f"{name}:src"
    producer = graph.producer.get(tensor)
    out = graph.netoutput.name
    copy = Node(name, op_type, (src,), (tensor,), attrs_, stream)
    nodes = [] if producer is not None else [copy]
    for n in graph.nodes:
        if n.name == producer:
            n = attrs.evolve(n, outputs=tuple(src if t == tensor else t for t in n.outputs))
        elif n.name != out:
            n = attrs.evolve(n, inputs=tuple(src if t == tensor else t for t in n.inputs))
        nodes.append(n)
        if n.name == producer:
            nodes.append(copy)
    weights = tuple(attrs.evolve(w, name=src) if w.name == tensor else w for w in graph.weights)
    tensors = graph.tensors + (attrs.evolve(graph.desc[tensor], name=src),)
    return attrs.evolve(graph, nodes=nodes, tensors=tensors, weights=weights)
