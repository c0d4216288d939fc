"""Examples for the model-file and pass invariants."""
from __future__ import annotations

import attrs

from zcspec.spec.observables.model_file import ArgSlot, Cut, FileEdit, NodeInfo, SocProfile, Task, ZeroCopyEntry
from zcspec.spec.examples.build import GOOD_HEADER, Example, accepted, model_file, node, node_task, soc, task

_GRAPH_OK = (node("x", "Data"), node("c", "Const"), node("c_MemcpyAddrAsync_0", "MemcpyAddrAsync", "c"),
             node("relu", "Relu", "x"), node("out", "NetOutput", "relu", "c_MemcpyAddrAsync_0"))
_GRAPH_BAD = (node("x", "Data"), node("c", "Const"), node("relu", "Relu", "x"), node("out", "NetOutput", "relu", "c"))

_SUM_IN, _SUM_OUT = ArgSlot(0, "feature_map", 0, 64, "in", "x"), ArgSlot(1, "feature_map", 512, 32, "out", "s")
_CLEAN = Task(0, "memset", (ArgSlot(0, "feature_map", 512, 32, "out", "s"),), node="sum")
_SUM = (node("x", "Data"), node("sum", "ReduceSum", "x"), node("out", "NetOutput", "sum"))
# x in the I/O region at 512 and its view at x+256 (a Split's second half), both read by the split's kernels
_IO_NODES = (NodeInfo("x", "Data", out_tensors=("x",)), NodeInfo("a", "Relu", ("x",)), NodeInfo("b", "Relu", ("x",)),
             NodeInfo("out", "NetOutput", ("x",), in_tensors=("x",)))
_TWO_STREAMS = (NodeInfo("x", "Data"), NodeInfo("a", "Relu", ("x",)), NodeInfo("b", "Relu", ("x",), stream=1))
_IO_TASKS = (Task(0, "kernel", (ArgSlot(0, "zero_copy", 512, 256, "in", "x"),), node="a"),
             Task(1, "kernel", (ArgSlot(0, "zero_copy", 768, 256, "in", "x_half"),), node="b"))

def _cut_view(shape):
    """A Split of ``shape`` along axis 1 into halves, made a view (no task, its output aliases x)."""
    return attrs.evolve(node("split", "Split", "x", view=True),
                        cut=Cut(shape, (1,), (0,), (shape[1] // 2,), (1,)))


EXAMPLES = (
    Example("PASS-MEMCPY-ADDR-ASYNC",
            model_file(nodes=_GRAPH_OK, soc=soc(True)),
            model_file(nodes=_GRAPH_BAD, soc=soc(True)),
            culprit="'c' -> 'out'", why="a constant feeds the graph output directly on a SoC that supports zero-copy memcpy"),
    Example("PASS-LAYOUT-CONFLICT",
            model_file(nodes=(node("x", "Data"), node("identity_0_k_MemLayoutConflict_0", "Identity", "x"),
                              node("k", "Relu", "identity_0_k_MemLayoutConflict_0"), node("r", "Relu", "k"),
                              node("out", "NetOutput", "r")),
                       tasks=(node_task(0, "k", in_loop=True), node_task(1, "r")), soc=SocProfile("legacy"),
                       regions={"feature_map": 1024}),
            model_file(nodes=(node("x", "Data"), node("k", "Relu", "x"), node("r", "Relu", "k"),
                              node("out", "NetOutput", "r")),
                       tasks=(node_task(0, "k", in_loop=True), node_task(1, "r")), soc=SocProfile("legacy"),
                       regions={"feature_map": 1024}),
            culprit="'x' -> 'k'", why="the graph input feeds a kernel inside a loop, which legacy cannot refresh, "
                                      "with no copy in between"),
    Example("PASS-VIEW-CONTIGUOUS",
            model_file(nodes=(node("x", "Data"), _cut_view((1, 4, 8)), node("r", "Relu", "split"),
                              node("out", "NetOutput", "r"))),
            model_file(nodes=(node("x", "Data"), _cut_view((2, 4, 8)), node("r", "Relu", "split"),
                              node("out", "NetOutput", "r"))),
            culprit="node 'split'", why="a Split along axis 1 of a (2, 4, 8) input made a view: each of the 2 outer rows "
                                        "holds a piece of the output, apart from the other"),
    Example("PASS-VIEW-NOT-OUTPUT",
            model_file(nodes=(node("x", "Data"), _cut_view((1, 8)), node("r", "Reshape", "split", view=True),
                              node("k", "Relu", "r"), node("out", "NetOutput", "k"))),
            model_file(nodes=(node("x", "Data"), _cut_view((1, 8)), node("r", "Reshape", "split", view=True),
                              node("identity_0_out_MemLayoutConflict_0", "Identity", "r"),
                              node("out", "NetOutput", "identity_0_out_MemLayoutConflict_0"))),
            culprit="node 'split'", why="a Split made a view whose piece, through a Reshape and the conflict "
                                        "optimizer's copy, is the model's output: GE keeps such a Split's task"),
    Example("MF-WELL-FORMED",
            model_file(header=attrs.evolve(GOOD_HEADER, stored_checksum="0000"), load=accepted(False)),
            model_file(header=attrs.evolve(GOOD_HEADER, stored_checksum="0000"), load=accepted(True)),
            culprit="header", why="the stored checksum does not match the bytes, yet the file was loaded"),
    Example("MF-DETERMINED",
            model_file(edit=FileEdit(("plan", "blocks", 1, "size"), identical=None), load=accepted(False)),
            model_file(edit=FileEdit(("plan", "blocks", 1, "size"), identical=False), load=accepted(True)),
            culprit="model file plan.blocks.1.size",
            why="a block's size was changed and the file re-signed, yet it loaded to a different model"),
    Example("MF-SLOT-IN-REGION",
            model_file(regions={"feature_map": 1024}, tasks=(task(0, ("feature_map", 0, 512), ("feature_map", 512, 512)),)),
            model_file(regions={"feature_map": 1024}, tasks=(task(0, ("feature_map", 0, 512), ("feature_map", 768, 512)),)),
            culprit="task 0 slot 1", why="slot 1 reads 512 bytes from offset 768 of a 1024-byte region"),
    Example("MF-ATOMIC-CLEAN",
            model_file(nodes=_SUM, regions={"feature_map": 1024},
                       tasks=(_CLEAN, Task(1, "kernel", (_SUM_IN, _SUM_OUT), node="sum"))),
            model_file(nodes=_SUM, regions={"feature_map": 1024},
                       tasks=(Task(0, "kernel", (_SUM_IN, _SUM_OUT), node="sum"), attrs.evolve(_CLEAN, id=1))),
            culprit="task 0 slot 1", why="the ReduceSum's kernel runs before the memset that cleans its output"),
    Example("MF-ZERO-COPY-TABLE",
            model_file(nodes=_IO_NODES, regions={"zero_copy": 1024}, tasks=_IO_TASKS,
                       zero_copy_table=(ZeroCopyEntry(0, 0, "x", "input"), ZeroCopyEntry(1, 0, "x", "input", 256))),
            model_file(nodes=_IO_NODES, regions={"zero_copy": 1024}, tasks=_IO_TASKS,
                       zero_copy_table=(ZeroCopyEntry(0, 0, "x", "input"),)),
            culprit="task 1 slot 0", why="the view of x at +256 points into the I/O region, but the table misses it: "
                                         "the runtime leaves it at the model's placeholder"),
    Example("MF-TASK-ON-NODE-STREAM",
            model_file(nodes=_TWO_STREAMS, tasks=(Task(0, "kernel", node="a"), Task(1, "kernel", node="b", stream=1))),
            model_file(nodes=_TWO_STREAMS, tasks=(Task(0, "kernel", node="a"), Task(1, "kernel", node="b"))),
            culprit="task 1", why="node b is assigned stream 1, but its kernel runs on stream 0, unordered with "
                                  "stream 1's events"),
    Example("MF-SLOT-BYTES",
            model_file(regions={"feature_map": 64}, tasks=(task(0, ("feature_map", 0, 6, "in", "q")),), tensor_bytes={"q": 6}),
            model_file(regions={"feature_map": 64}, tasks=(task(0, ("feature_map", 0, 5, "in", "q")),), tensor_bytes={"q": 6}),
            culprit="task 0", why="q is 12 uint4 elements, 6 raw bytes, but the compiler counted 3 bits an element"),
)
