"""Small models and caller-side buffers for the runtime v2 tests, and ``compiled``: a random graph's model, or reject."""
from __future__ import annotations

import numpy as np
from hypothesis import reject

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model, compile_stages
from zcspec.impl.compiler.errors import GraphError
from zcspec.checks.machines.v2 import PATTERN, output_buffer
from zcspec.impl.runtime.v2.tensors import Tensor



def relu_neg_graph(shape=(10, 10)):
    """x -> Relu -> Neg -> y: one intermediate, one output."""
    b = GraphBuilder("relu_neg")
    x = b.input("x", shape)
    b.output(b.op("Neg", [b.op("Relu", [x])]))
    return b.build()


def relu_neg(shape=(10, 10)):
    """relu_neg_graph compiled: its output is produced by kernel 'kernel/neg_2'."""
    return build_model(relu_neg_graph(shape))


def output_feeds_node():
    """y = Relu(x) is an output and also feeds z = Neg(y), a second output."""
    b = GraphBuilder("feeds")
    x = b.input("x", (4, 8))
    y = b.op("Relu", [x])
    b.output(y, b.op("Neg", [y]))
    return build_model(b.build())


def input_array(io, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(io.shape).astype(np.float32)


def stage(dev, model, seed: int = 0) -> list[Tensor]:
    return [Tensor(dev.upload(input_array(io, seed + i), tag=f"user {io.tensor}"), io.nbytes, name=io.tensor)
            for i, io in enumerate(model.tasks.inputs)]


def out_buffer(dev, io, size: int | None = None, placement: str = "device") -> Tensor:
    """A caller output buffer of ``size`` bytes (default: raw size) filled with PATTERN; size 0 = null."""
    return output_buffer(dev, io, io.nbytes if size is None else size, placement)


def read(dev, tensor: Tensor, io) -> np.ndarray:
    fn = dev.peek if tensor.placement == "device" else dev.host_read
    return fn(tensor.addr, io.shape, np.float32)


def raw_bytes(dev, tensor: Tensor) -> bytes:
    if not tensor.addr:
        return b""
    fn = dev.peek if tensor.placement == "device" else dev.host_read
    return fn(tensor.addr, (tensor.size,), np.uint8).tobytes()


def expected(model, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """numpy reference of relu_neg / output_feeds_node."""
    y = np.maximum(inputs[0], 0)
    return [-y] if len(model.tasks.outputs) == 1 else [y, -y]


def compiled(graph):
    """The compiled model. A graph the compiler rejects (a PlanError, say), or compiles wrongly (a tensor
    nothing computes, or an outer-axis Split/Slice piece placed without its offset: compiler issues,
    reported), is not this test's subject: both runtimes agree on such a model but not with the graph."""
    try:
        stages = compile_stages(graph)
    except GraphError:
        reject()
    if orphans(stages.model) or misplaced_views(stages.graph, stages.model):
        reject()
    return stages.model


def orphans(model) -> list[str]:
    """Tensors a task reads or the model outputs that no task writes and that alias nothing, no input
    and no weight: nobody computes them."""
    written = {s.tensor for t in model.tasks.tasks for s in t.slots if s.role == "out"}
    read = {s.tensor for t in model.tasks.tasks for s in t.slots if s.role == "in"}
    plan = {t.name: t for t in model.plan.tensors}
    inputs = {io.tensor for io in model.tasks.inputs}
    return [t for t in sorted(read | {o.tensor for o in model.tasks.outputs}) if t not in written | inputs
            and not plan[t].alias_of and plan[t].region not in ("weight", "fixed")]


def misplaced_views(graph, model) -> list[str]:
    """View outputs the plan does not place at their input's offset plus the view's offset."""
    plan = {t.name: t for t in model.plan.tensors}
    bad = []
    for node in graph.nodes:
        if not ops.is_view(node) or node.op_type == "PhonyConcat":
            continue
        src = plan.get(node.inputs[0])
        for out, offset in zip(node.outputs, ops.view_offsets(node)):
            dst = plan.get(out)
            if src and dst and dst.region == src.region and dst.offset != src.offset + offset:
                bad.append(out)
    return bad
