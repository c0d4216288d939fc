"""Outer-axis Split and Slice become views: no task, outputs inside the input's memory.

A Split or a step-1 Slice along the outermost non-trivial axis of a dense tensor
cuts it into contiguous byte ranges, so each output can simply be an address
inside the input (GE's "relative offset" case, set_input_output_offset_pass.cc: one user buffer
split among several task addresses). The node gets ``_view=True`` and
``_view_offsets`` (bytes from the start of input 0, one per output); the
planner then places each output at its root's offset plus that, and
SetInputOutputOffsetPass records the relative offsets for model inputs.

A piece that is (or is viewed as) a graph output stays a copy: the user's output
buffer holds the piece alone. Only opset-9 attribute forms are rewritten (Split ``split``/``axis``, Slice
``starts``/``ends``/``axes``); a node with parameters as inputs is left alone.
"""
from __future__ import annotations


import attrs

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.ir import Graph, Node
from zcspec.impl.platform import dtypes

NAME = "outer_axis_views"


def _byte_rows(graph: Graph, tensor: str) -> bool:
    """Only whole-byte element types can be cut at element boundaries."""
    return dtypes.get(graph.desc[tensor].dtype).bits % 8 == 0


def _outer_axis(shape: tuple[int, ...]) -> int:
    """The first axis whose size is not 1: cutting along it keeps every piece contiguous."""
    return next((i for i, d in enumerate(shape) if d != 1), 0)


def _norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _split_offsets(graph: Graph, node: Node) -> tuple[int, ...] | None:
    if len(node.inputs) != 1 or not _byte_rows(graph, node.inputs[0]):
        return None
    shape = graph.desc[node.inputs[0]].shape
    axis = _norm_axis(int(node.attr("axis", 0)), len(shape))
    if axis != _outer_axis(shape):
        return None
    row = graph.desc[node.inputs[0]].nbytes // shape[axis]
    offsets, at = [], 0
    for out in node.outputs:
        offsets.append(at * row)
        at += graph.desc[out].shape[axis]
    return tuple(offsets)


def _slice_offset(graph: Graph, node: Node) -> tuple[int, ...] | None:
    if len(node.inputs) != 1 or not _byte_rows(graph, node.inputs[0]):
        return None
    shape = graph.desc[node.inputs[0]].shape
    axes = node.attr("axes") or tuple(range(len(node.attr("starts", ()))))
    starts = node.attr("starts", ())
    if len(axes) != 1 or len(starts) != 1 or node.attr("steps") not in (None, (1,)):
        return None
    axis = _norm_axis(int(axes[0]), len(shape))
    if axis != _outer_axis(shape):
        return None
    start = starts[0] + shape[axis] if starts[0] < 0 else starts[0]
    start = min(max(start, 0), shape[axis])
    return (start * (graph.desc[node.inputs[0]].nbytes // shape[axis]),)


def _reaches_output(graph: Graph, node: Node) -> bool:
    """Whether an output of ``node`` is a graph output, directly or through views.

    Such a piece cannot be a view: the user's output buffer holds the piece only, while
    the memory it would view (the whole input) must live somewhere the piece's producer
    writes in full."""
    outputs, todo, seen = set(graph.outputs), list(node.outputs), set()
    while todo:
        t = todo.pop()
        if t in outputs:
            return True
        seen.add(t)
        for reader in graph.consumers.get(t, ()):
            r = graph.node[reader]
            if ops.is_view(r) and r.inputs and r.inputs[0] == t:
                todo.extend(o for o in r.outputs if o not in seen)
    return False


def outer_axis_views(graph: Graph, options) -> Graph:
    changed = False
    nodes = []
    for n in graph.nodes:
        offsets = {"Split": _split_offsets, "Slice": _slice_offset}.get(n.op_type, lambda g, n: None)(graph, n)
        if offsets is not None and not n.attr("_view") and not _reaches_output(graph, n):
            n = n.with_attrs(_view=True, _view_offsets=offsets)
            changed = True
        nodes.append(n)
    return attrs.evolve(graph, nodes=nodes) if changed else graph


