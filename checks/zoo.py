"""The built-in zoo: the nine ONNX light models plus small graphs that each exercise a rule.

The light models exercise plain reuse at scale; the built-in graphs make sure
every rule of the spec has a case where its precondition holds (atomic clean, an atomic output,
continuous inputs, HCCL, views at offsets, in-place outputs, inputs passed
straight to outputs, outputs read by other nodes, workspaces, batches, inputs of different sizes,
streams (a continuous group with a piece from another stream), constants and variables as outputs, dynamic-batch branches,
the in-place refusals, interval reuse across streams, collectives in dynamic-batch branches). The
dynamic-batch graph (``dynamic_batch_graph``) has two branches joined by a Merge;
its branches share memory, so each execution chooses one (the runtimes' ``batch``)
and ``checks.execution`` runs every branch.
"""
from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from zcspec.checks.errors import UsageError
from zcspec.checks.models import load_graph
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.ir import Graph

LIGHT = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
         "squeezenet", "vgg19", "zfnet512")


def _atomic() -> Graph:
    b = GraphBuilder("atomic_clean")
    x = b.input("x", (8, 16))
    r = b.op("ReduceSum", [x], shape=(8, 1), axes=(1,), keepdims=1)
    s = b.op("ReduceSum", [b.op("Relu", [x])], shape=(1, 16), axes=(0,), keepdims=1)
    b.output(b.op("Relu", [r]), b.op("Neg", [s]))
    return b.build()


def _atomic_output() -> Graph:
    """An atomic (memset-cleaned) ReduceSum whose output is a graph output: where the SoC cannot refresh
    memset tasks (ascend310p) GE gives that output a MemcpyAddrAsync, where it can the output is zero copy."""
    b = GraphBuilder("atomic_output")
    x = b.input("x", (8, 16))
    b.output(b.op("ReduceSum", [x], shape=(8, 1), axes=(1,), keepdims=1), b.op("Relu", [x]))
    return b.build()


def _collectives() -> Graph:
    b = GraphBuilder("collectives")
    x, y = b.input("x", (4, 32)), b.input("y", (4, 32))
    a, c = b.op("Relu", [x]), b.op("Neg", [y])
    ar = b.op("HcomAllReduce", [a, c], outputs=[((4, 32), "float32"), ((4, 32), "float32")], reduction="sum")
    bc = b.op("HcomBroadcast", [b.op("Abs", [x])], reduction="sum")   # its output is a model output
    b.output(b.op("Add", list(ar)), bc)
    return b.build()


def _fused_collective() -> Graph:
    """A fused HcomAllReduce (continuous_output: its outputs in one block, never zero copy), both outputs model
    outputs and one read again: the compiler puts a copy before each NetOutput input."""
    b = GraphBuilder("fused_collective")
    x, y = b.input("x", (4, 32)), b.input("y", (4, 32))
    o0, o1 = b.op("HcomAllReduce", [b.op("Relu", [x]), b.op("Neg", [y])], name="fused_allreduce",
                  outputs=[((4, 32), "float32"), ((4, 32), "float32")], reduction="sum", continuous_output=True)
    b.output(b.op("Abs", [o0]), o0, o1)
    return b.build()


def _fused_broadcast() -> Graph:
    """A fused HcomBroadcast of three tensors of uneven sizes on its own stream, its outputs read on stream 0
    and not model outputs: one block of 512-aligned pieces, live until the last reader."""
    b = GraphBuilder("fused_broadcast")
    x = b.input("x", (3, 40))
    parts = [b.op("Relu", [x]), b.op("Slice", [x], shape=(1, 40), starts=(1,), ends=(2,), axes=(0,)),
             b.op("Neg", [x])]
    shapes = [((3, 40), "float32"), ((1, 40), "float32"), ((3, 40), "float32")]
    o0, o1, o2 = b.op("HcomBroadcast", parts, name="fused_broadcast", outputs=shapes, continuous_output=True,
                      stream=1)
    b.output(b.op("Add", [o0, o2]), b.op("Abs", [o1]))
    return b.build()


def _continuous_out_in() -> Graph:
    """Fused collectives' continuous outputs feeding HCCL continuous inputs (GE's ContinuousMemMng): ``ar``'s
    outputs 1 and 2 head ``ar2``'s inputs (one run in both: one block for the chain, no copy), while ``br``'s
    two outputs feed ``br2`` swapped, which no chain can lay out (mem_layout_conflict_util.cc
    ``IsSameOrPartialSame`` fails): the conflict pass copies an input."""
    b = GraphBuilder("continuous_out_in")
    x = b.input("x", (1, 100))
    f = ((1, 100), "float32")
    a = b.op("HcomAllReduce", [b.op("Relu", [x]), b.op("Abs", [x]), b.op("Neg", [x])], name="ar", outputs=[f] * 3,
             continuous_output=True)
    ar2 = b.op("HcomAllReduce", [a[1], a[2], b.op("Exp", [x])], name="ar2", outputs=[f] * 3)
    c = b.op("HcomAllReduce", [b.op("Sigmoid", [x]), b.op("Tanh", [x])], name="br", outputs=[f] * 2,
             continuous_output=True)
    br2 = b.op("HcomAllReduce", [c[1], c[0]], name="br2", outputs=[f] * 2)
    b.output(b.op("Neg", [a[0]]), *ar2, *br2)
    return b.build()


def _phony_concat() -> Graph:
    """A NoPadding concat of two computed pieces; and one of an outer-axis Slice of a graph input with the input
    itself: the user's buffer is never a piece (a copy after the Data), and the slice's piece, a NoPadding
    continuous output in the concat's input symbol, gets a copy too (GE's MemLayoutConflictOptimizer)."""
    b = GraphBuilder("phony_concat")
    x, y = b.input("x", (2, 24)), b.input("y", (4, 8))
    a, c = b.op("Relu", [x]), b.op("Neg", [x])
    s = b.op("Slice", [y], shape=(2, 8), starts=(2,), ends=(4,), axes=(0,))
    b.output(b.op("Sigmoid", [b.op("PhonyConcat", [a, c], shape=(4, 24), axis=0)]),
             b.op("Relu", [b.op("PhonyConcat", [s, y], shape=(6, 8), axis=0)]))
    return b.build()


def _split_views() -> Graph:
    """Outer-axis cuts that become views (axis 0 of (6, 40); axis 1 of (1, 4, 8), the first axis not 1)
    and one that must not (axis 1 of (2, 4, 8): its pieces are not contiguous, so a view there reads the
    wrong rows, which only the outputs show)."""
    b = GraphBuilder("split_views")
    x = b.input("x", (6, 40))
    top, rest = b.op("Split", [x], outputs=[((2, 40), "float32"), ((4, 40), "float32")], axis=0, split=(2, 4))
    sl = b.op("Slice", [x], shape=(3, 40), starts=(1,), ends=(4,), axes=(0,))
    one = b.op("Relu", [b.input("one", (1, 4, 8))])
    left, right = b.op("Split", [one], outputs=[((1, 1, 8), "float32"), ((1, 3, 8), "float32")], axis=1, split=(1, 3))
    two = b.op("Relu", [b.input("two", (2, 4, 8))])
    front, back = b.op("Split", [two], outputs=[((2, 2, 8), "float32"), ((2, 2, 8), "float32")], axis=1, split=(2, 2))
    b.output(b.op("Relu", [top]), b.op("Neg", [rest]), b.op("Abs", [sl]), b.op("Neg", [left]), b.op("Abs", [right]),
             b.op("Neg", [front]), b.op("Abs", [back]))
    return b.build()


def _inplace_and_passthrough() -> Graph:
    b = GraphBuilder("inplace_passthrough")
    x, k = b.input("x", (16, 16)), b.input("keep", (3, 5))
    r = b.op("Relu", [x])
    n = b.op("Neg", [r], _reuse_input=True)
    m = b.op("Sigmoid", [n])
    b.output(m, k, n)   # an input straight to an output; an output also read by another node
    return b.build()


def _inplace_pairs() -> Graph:
    """In place on an input other than 0: a ref on input 1 (``_reuse_input=1``), GE's optional pairs
    (``_inplace_ability``) whose first pair names a graph input (refused) so the second holds, and a pair
    on a broadcast input of another size (refused: ProcessInplace needs equal raw sizes)."""
    b = GraphBuilder("inplace_pairs")
    x, row = b.input("x", (6, 8)), b.input("row", (1, 8))
    a, c = b.op("Relu", [x]), b.op("Abs", [x])
    s = b.op("Sub", [a, c], _reuse_input=1)
    t = b.op("Add", [x, b.op("Neg", [s])], _inplace_ability=(0, 0, 0, 1))
    u = b.op("Mul", [b.op("Sigmoid", [row]), t], shape=(6, 8), _inplace_ability=(0, 0))
    b.output(u, b.op("Tanh", [t]))
    return b.build()


def _view_passthrough() -> Graph:
    # A model input reaches an output through a view only: the output's memory is the input's, so the
    # output is copied from the input's buffer (GE: davinci_model.cc GenOutputMemAllocations). It once compiled
    # into a model file
    # its own loader refused.
    b = GraphBuilder("view_passthrough")
    x = b.input("x", (4, 6))
    b.output(b.op("Reshape", [x], shape=(6, 4)), b.op("Identity", [b.op("Relu", [x])]))
    return b.build()


def _workspace_streams() -> Graph:
    # Dynamic-batch branches have a graph of their own (dynamic_batch_graph).
    b = GraphBuilder("workspace_streams")
    x = b.input("x", (8, 64))
    w = b.op("Relu", [x], _workspace_bytes=(4096,))
    s1 = b.op("Neg", [w], stream=1)
    s2 = b.op("Abs", [s1], stream=1)
    b.output(b.op("Add", [s2, b.op("Sigmoid", [w])]))
    return b.build()


def _sized_inputs() -> Graph:
    """Three inputs of different sizes, declared neither ascending nor descending (GE places input blocks
    by ascending size: LAYOUT-INPUTS-SORTED has nothing to judge with one input or equal sizes), and
    workspaces of different sizes on both streams, one node with two (MEM-WS-OWNER)."""
    b = GraphBuilder("sized_inputs")
    big, small, mid = b.input("big", (8, 32)), b.input("small", (2, 4)), b.input("mid", (4, 16))
    r = b.op("Relu", [big], _workspace_bytes=(2048, 512))
    s = b.op("Neg", [small], stream=1, _workspace_bytes=(96,))
    m = b.op("Abs", [mid], stream=1)
    t = b.op("Tanh", [m], _workspace_bytes=(1024,))
    b.output(b.op("Sigmoid", [r]), b.op("Add", [s, small]), b.op("Add", [t, mid]))
    return b.build()


def cross_stream_group() -> Graph:
    """A continuous group with a piece written on another stream: C (stream 1) depends only on the
    input, so it may run while stream 0 still computes D, which lives before the group's first step
    in the execution order (the bug an independent suite found: the group must begin where C may run)."""
    b = GraphBuilder("cross_stream_group")
    x = b.input("x", (4, 4))
    a = b.op("Neg", [x], name="A")
    q = b.op("Relu", [x], name="Q", stream=1)
    d = b.op("Add", [a, q], name="D")
    e = b.op("Neg", [d], name="E")
    piece = b.op("Relu", [e], name="B")
    c = b.op("Add", [x, x], name="C", stream=1)
    b.output(b.op("Relu", [b.op("PhonyConcat", [c, piece], name="K", shape=(8, 4), axis=0)], name="R"))
    return b.build()


def control_edge_back() -> Graph:
    """a:0 (stream 1) is read by b on stream 0; m on stream 1 follows b by a control edge only, which GE
    synchronises as a data edge (StreamAllocator::InsertSyncEvents): from m on, stream 1 may reuse a:0's
    memory (GetDiffStreamMaxLifeTime), and the runtimes must put their event on that control edge."""
    b = GraphBuilder("control_edge_back")
    x = b.input("x", (4, 64))
    a = b.op("Relu", [x], name="a", stream=1)
    bb = b.op("Neg", [a], name="b", stream=0)
    n = b.op("Neg", [b.op("Abs", [x], name="m", stream=1, control_inputs=("b",))], name="n", stream=1)
    b.output(b.op("Add", [bb, n], name="d", stream=1))
    return b.build()


def dynamic_batch_graph(labels: tuple[str, ...] = ("b1", "b2"), shape: tuple[int, ...] = (4, 64)) -> Graph:
    """x -> per branch label three ops (each branch computes something different) -> Merge -> Add(., x).

    As GE builds a dynamic-batch graph (multi_batch_pass.cc `MultiBatchPass::SetCaseLabel`): the branch nodes
    carry ``_batch_label``, the
    Merge joining them carries none and runs in every execution. Only one branch runs per execution,
    so the planner overlaps the branches' memory."""
    chains = (("Relu", "Neg", "Sigmoid"), ("Abs", "Sqrt", "Neg"), ("Tanh", "Abs", "Exp"))
    b = GraphBuilder("dynamic_batch")
    x = b.input("x", shape)
    ends = []
    for k, label in enumerate(labels):
        t = x
        for step, op in enumerate(chains[k % len(chains)]):
            t = b.op(op, [t], name=f"{label}_{step}", _batch_label=label)
        ends.append(t)
    merged = b.op("Merge", ends, name="merge", labels=tuple(labels))
    b.output(b.op("Add", [merged, x], name="out"))
    return b.build()


def _alias_guards() -> Graph:
    """The refusals of the alias analysis and the passes' corner cases, in one small graph: an in-place Mul on a
    weight (``_reuse_input``: refused, a weight is no feature map to overwrite); an in-place Abs on ``a`` while a
    reader of ``a`` on stream 1 may still run (refused: nothing orders them); an outer-axis Split view whose
    ``split`` is a numpy array, as a Python caller may pass one; and a fused HcomAllReduce whose pieces are
    model outputs, so the conflict pass copies them under names the Split already holds
    (``identity_0_NetOutput_MemLayoutConflict_0``: the pass must count past it), with an optional in-place pair
    GE refuses (a continuous-output node: RemoveOutRwConflicts); and an optional in-place pair GE keeps (a Tanh
    over the Add it alone reads, ``_inplace_ability``)."""
    b = GraphBuilder("alias_guards")
    x = b.input("x", (6, 40))
    w = b.weight("w", np.linspace(-1, 1, 240, dtype=np.float32).reshape(6, 40))
    r = b.op("Mul", [w, x], _reuse_input=True)
    top, rest = b.op("Split", [r], name="identity_0_NetOutput_MemLayoutConflict_0",
                     outputs=[((3, 40), "float32"), ((3, 40), "float32")], axis=0, split=np.array([3, 3]))
    a = b.op("Relu", [x])
    s1 = b.op("Neg", [a], stream=1)
    d = b.op("Abs", [a], _reuse_input=True)
    o0, o1 = b.op("HcomAllReduce", [s1, d], outputs=[((6, 40), "float32")] * 2, reduction="sum",
                  continuous_output=True, _inplace_ability=(0, 0))
    both = b.op("Add", [top, rest])
    b.output(o0, o1, b.op("Neg", [b.op("Tanh", [both], _inplace_ability=(0, 0))]))
    return b.build()


def _interval_window() -> Graph:
    """GE's level-2 interval reuse (``CanIntervalLifeReuse``) where the child block's span covers the parent's
    but none of its members lives near it: ``a`` and ``d`` share one block, whose span [Abs, Abs] covers the
    Concat's, yet neither is live while the Concat's output is. With a node on stream 1 the block list is not
    one-stream, so level 2 walks it in Python (ge_level2._interval), not with the compiled descent."""
    b = GraphBuilder("interval_window")
    x = b.input("x", (4, 64))
    r = b.op("Relu", [b.op("Abs", [x])])
    big = b.op("Concat", [x, x], shape=(8, 64), axis=0)
    t = b.op("Tanh", [x], stream=1)
    s = b.op("ReduceSum", [big], shape=(1, 64), axes=(0,), keepdims=1)
    b.output(b.op("Add", [b.op("Abs", [r]), t]), s)
    return b.build()


def _batch_collectives() -> Graph:
    """A dynamic-batch graph whose two branches each hold an HcomAllReduce of two inputs: a continuous block of
    a collective needs one offset in every batch (GE's SizeIndependentOfBatch), so each branch's block is
    wrapped and the larger branch's wrapper adopts the other's as a batch child (dynamic_batch_mem_assigner.cc
    ``ResizeDynamicBatchBlocks``); ``dynamic_batch`` has no such block."""
    b = GraphBuilder("batch_collectives")
    x = b.input("x", (4, 64))
    ends = []
    for label, op in (("b1", "Relu"), ("b2", "Neg")):
        t = b.op(op, [x], name=f"{label}_0", _batch_label=label)
        u = b.op("Abs", [t], name=f"{label}_1", _batch_label=label)
        h = b.op("HcomAllReduce", [t, u], name=f"{label}_2", outputs=[((4, 64), "float32")] * 2, reduction="sum",
                 _batch_label=label)
        ends.append(b.op("Add", list(h), name=f"{label}_3", _batch_label=label))
    merged = b.op("Merge", ends, name="merge", labels=("b1", "b2"))
    b.output(b.op("Add", [merged, x], name="out"))
    return b.build()


def _constants() -> Graph:
    b = GraphBuilder("constants")
    x = b.input("x", (4, 4))
    w = b.weight("table", np.arange(16, dtype=np.float32).reshape(4, 4))
    v = b.op("Variable", [], shape=(4, 4), dtype="float32")
    b.output(b.op("Add", [x, w]), w, b.op("Mul", [v, x]))
    return b.build()


def _single_op() -> Graph:
    """A single-op model of an op GE's graph passes remove (an Identity, a Reshape to its own shape): the
    Data feeds the NetOutput directly. In a single-op build (GE's ATTR_SINGLE_OP_SCENE,
    ``CompileOptions(single_op=True)``) MemcpyAddrAsyncPass gives the output a copy of its own, as offline."""
    b = GraphBuilder("single_op")
    b.output(b.input("x", (2, 3)))
    return b.build()


BUILT_IN: dict[str, Callable[[], Graph]] = {
    "atomic_clean": _atomic,
    "atomic_output": _atomic_output,
    "collectives": _collectives,
    "fused_collective": _fused_collective,
    "fused_broadcast": _fused_broadcast,
    "continuous_out_in": _continuous_out_in,
    "phony_concat": _phony_concat,
    "split_views": _split_views,
    "inplace_passthrough": _inplace_and_passthrough,
    "inplace_pairs": _inplace_pairs,
    "view_passthrough": _view_passthrough,
    "workspace_streams": _workspace_streams,
    "sized_inputs": _sized_inputs,
    "cross_stream_group": cross_stream_group,
    "control_edge_back": control_edge_back,
    "constants": _constants,
    "dynamic_batch": dynamic_batch_graph,
    "single_op": _single_op,
    "alias_guards": _alias_guards,
    "interval_window": _interval_window,
    "batch_collectives": _batch_collectives,
}


def zoo_names() -> tuple[str, ...]:
    return tuple(f"zoo:{m}" for m in LIGHT) + tuple(f"builtin:{n}" for n in BUILT_IN)


def load(name: str, shape_args=(), value_args=()) -> Graph:
    """A zoo graph by name (``zoo:resnet50``, a light model, or ``builtin:atomic_clean``), or a model file;
    ``shape_args``/``value_args`` are ``--shape``/``--value`` texts for an ONNX file's inputs."""
    if name.startswith("builtin:"):
        key = name.split(":", 1)[1]
        if key not in BUILT_IN:
            raise UsageError(f"no built-in graph {key!r}; known: {', '.join(BUILT_IN)}", file=name)
        return BUILT_IN[key]()
    graph = load_graph(name, shape_args, value_args)
    # A light model is named after its zoo entry, so the oracle knows to use its shipped reference.
    return attrs.evolve(graph, name=name[4:]) if name.startswith("zoo:") else graph
