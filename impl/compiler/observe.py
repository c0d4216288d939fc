"""The refinement mapping from the compiler's artefacts to the spec's observables.

``observe_plan(graph, plan)`` gives the spec's PlanObservation: the typed
plan's fields plus the facts the block invariants need, all read from the
graph (who reads each tensor, which outputs are atomic, which inputs must be
contiguous, which tensors are workspaces or fixed), never from planner internals.
"""
from __future__ import annotations

import hashlib

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory.plan_types import MemoryPlan
from zcspec.impl.compiler.model_file.encode import HEADER, MAGIC, VERSION
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.passes.memcpy_addr_async import refreshable
from zcspec.spec.observables.model_file import (
    ArgSlot, BuildFacts, Header, LoadOutcome, ModelFileObservation, NodeInfo, SocProfile, Task, ZeroCopyEntry,
)
from zcspec.spec.observables.plan import (
    Alignment, Block, ContinuousGroup, PlacedTensor, PlanAttributes, PlanObservation,
)


def _consumers(graph: Graph, order: tuple[str, ...], planned: set[str]) -> dict[str, tuple[int, ...]]:
    step = {n: i for i, n in enumerate(order)}
    out: dict[str, tuple[int, ...]] = {}
    for t, readers in graph.consumers.items():
        if t in planned:
            out[t] = tuple(sorted({step[r] for r in readers if r in step}))
    return out


def _continuous_groups(graph: Graph, planned: set[str]) -> tuple[ContinuousGroup, ...]:
    groups = []
    for n in graph.nodes:
        kind = (ops.info(n.op_type) or ops.OpInfo(n.op_type)).continuous_input
        if kind and len(n.inputs) > 1 and all(t in planned for t in n.inputs):
            groups.append(ContinuousGroup(n.name, tuple(n.inputs), padding=(kind == "padding")))
    return tuple(groups)


def observe_plan(graph: Graph, plan: MemoryPlan) -> PlanObservation:
    """The spec's PlanObservation of ``plan``, made from ``graph``: a transcription of the plan's fields
    plus the facts the block invariants need, read from the graph."""
    tensors = tuple(PlacedTensor(t.name, t.region, t.offset, t.size, t.aligned_size, t.first, t.last, t.block,
                                    t.zero_copy, t.alias_of) for t in plan.tensors)
    planned = {t.name for t in tensors}
    blocks = tuple(Block(b.id, b.region, b.offset, b.size, b.zero_copy, tuple(b.tensors)) for b in plan.blocks)
    a = plan.attributes
    attributes = PlanAttributes(a.memory_size, a.zero_copy_memory_size, {x.tensor: x.is_zero_copy_block for x in a.inputs})
    atomic = tuple(t for n in graph.nodes if (ops.info(n.op_type) or ops.OpInfo(n.op_type)).atomic
                   for t in n.outputs if t in planned)
    block_align = plan.options.block_align
    return PlanObservation(
        order=tuple(plan.order), tensors=tensors, blocks=blocks, regions=dict(plan.regions),
        lower_bound=plan.lower_bound, naive=plan.naive, attributes=attributes,
        graph_inputs=tuple(t for t in graph.inputs if t in planned),
        graph_outputs=tuple(t for t in dict.fromkeys(graph.outputs) if t in planned),
        consumers=_consumers(graph, tuple(plan.order), planned),
        atomic=atomic,
        continuous_groups=_continuous_groups(graph, planned),
        workspaces={t.name: t.name.split("#ws")[0] for t in tensors if "#ws" in t.name},
        fixed=tuple(t.name for t in tensors if t.region in ("weight", "fixed")),
        alignment=Alignment(block={"feature_map": block_align, "zero_copy": block_align},
                            tensor=plan.options.size_align),
        batch_labels={t.name: t.batch for t in plan.tensors if t.batch},
    )


def _header(data: bytes):
    if len(data) < HEADER.size:
        return Header(data[:8].hex(), -1, MAGIC.hex(), (VERSION,), HEADER.size, len(data), "", "")
    magic, version, header_len, meta_len, blob_len, digest = HEADER.unpack_from(data)
    return Header(magic.hex(), version, MAGIC.hex(), (VERSION,), header_len + meta_len + blob_len, len(data),
                  digest.hex(), hashlib.sha256(data[HEADER.size:]).hexdigest())


def _nodes(graph: Graph, soc):
    producer = graph.producer
    consts = sorted({t for n in graph.nodes for t in n.inputs if t in graph.weight})
    out = [NodeInfo(w, "Const", has_task=False) for w in consts]
    for n in graph.nodes:
        srcs = tuple(dict.fromkeys(producer.get(t, t) for t in n.inputs))
        # A copy made for a continuous-input group is GE's HCCL-memcpy-pass MemcpyAsync (in
        # address-pointer mode, so refreshable), not one of MemcpyAddrAsyncPass's nodes.
        kind = "MemcpyAsync" if n.attr("_inserted_by") == "continuous_copies" else n.op_type
        out.append(NodeInfo(n.name, kind, srcs, supports_addr_refresh=refreshable(n, soc),
                            supports_input_refresh=refreshable(n, soc, side="input"),
                            view=ops.is_view(n), has_task=bool(ops.task_kinds(n))))
    return tuple(out)


def observe_model_file(data: bytes, graph: Graph | None = None, options=None):
    """The spec's ModelFileObservation of model bytes; ``graph`` (after the passes) and ``options``
    add the node and SoC facts the pass invariants need."""
    try:
        model, outcome = load_model(data), LoadOutcome(True)
    except ModelFormatError as e:
        model, outcome = None, LoadOutcome(False, str(e))
    tasks, table, regions = (), (), {}
    if model is not None:
        regions = dict(model.regions)
        tasks = tuple(Task(t.index, t.kind, tuple(ArgSlot(j, s.region, s.offset, s.nbytes) for j, s in enumerate(t.slots)))
                      for t in model.tasks.tasks)
        io = {(d.role, d.index): d.tensor for d in model.tasks.inputs + model.tasks.outputs}
        table = tuple(ZeroCopyEntry(z.task, z.slot, io[(z.role, z.index)], z.role, z.relative_offset)
                      for z in model.tasks.zero_copy)
    soc = options.profile if options is not None else None
    return ModelFileObservation(
        header=_header(data), load=outcome, regions=regions, tasks=tasks, zero_copy_table=table,
        nodes=_nodes(graph, soc) if graph is not None and soc is not None else (),
        soc=SocProfile(soc.name, soc.zero_copy) if soc is not None else None,
        build=BuildFacts(offline=bool(options.offline)) if options is not None else BuildFacts(),
    )
