"""Graphs and readings the compiler-pass tests share: one graph with a case per MemcpyAddrAsync rule, and the
copies a pass inserted into a graph."""
from __future__ import annotations

import numpy as np

from zcspec.impl.compiler.builder import GraphBuilder


def io_graph():
    """One case per MemcpyAddrAsync rule, each on its own input and output."""
    b = GraphBuilder("io")
    a = b.input("a", (2, 2))
    h = b.input("h", (2, 2))
    l_in = b.input("l", (2, 2))
    d = b.input("d", (2, 2))
    red = b.op("ReduceSum", [a], name="reduce", shape=(2, 1), axes=(1,), keepdims=1)   # memset + kernel
    hc = b.op("HcomAllReduce", [h], name="allreduce", reduction="sum")                  # hccl
    loop = b.op("Relu", [l_in], name="loop_relu", _in_loop=True)                        # kernel in a loop
    w = b.weight("const", np.arange(4, dtype=np.float32).reshape(2, 2))
    b.output(red, hc, loop, w, d)
    return b.build()


def copies(graph):
    """(what the copy reads, what it writes) for every inserted copy (MemcpyAddrAsyncPass's or the conflict
    optimizer's), by role: "out" before the NetOutput, else "in"."""
    found = set()
    for n in graph.nodes:
        if n.op_type == "MemcpyAddrAsync":
            readers = graph.consumers.get(n.outputs[0], ())
            found.add(("out", n.outputs[0]) if "NetOutput" in readers else ("in", n.inputs[0]))
    return found
