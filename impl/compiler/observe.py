"""The refinement mapping from the compiler's artefacts to the spec's observables.

``observe_plan(graph, plan)`` gives the spec's PlanObservation: the typed
plan's fields plus the facts the block invariants need, all read from the
graph (who reads each tensor, which outputs are atomic, which inputs must be
contiguous, which tensors are workspaces or fixed), never from planner internals.

What an op type implies (atomic outputs, continuous inputs, whether its node runs a task) and a
tensor's raw bytes are the spec's to say (spec/op_facts.py, spec/dtypes.py): this module hands them
the graph's op types, attributes, shapes and dtypes and never asks impl's op or dtype tables, which
are what the planner decides by. Alias roots are the plan's own ``alias_of`` chains as written.
"""
from __future__ import annotations

import hashlib

from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory.plan_types import MemoryPlan
from zcspec.impl.compiler.model_file.encode import HEADER, MAGIC, VERSION
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.spec import dtypes, op_facts
from zcspec.spec.observables.model_file import (
    ArgSlot, BuildFacts, Cut, FileEdit, Header, LoadOutcome, ModelFileObservation, NodeInfo, SocProfile, Task,
    ZeroCopyEntry,
)
from zcspec.spec.observables.plan import (
    Block, ContinuousGroup, ContinuousOutputs, PlacedTensor, PlanAttributes, PlanObservation, alias_root,
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
        kind = op_facts.continuous_input(n.op_type)
        if kind and n.inputs and all(t in planned for t in n.inputs):
            groups.append(ContinuousGroup(n.name, tuple(n.inputs), padding=(kind == "padding")))
    return tuple(groups)


def _continuous_outputs(graph: Graph, planned: set[str]) -> tuple[ContinuousOutputs, ...]:
    """Nodes carrying GE's ``continuous_output`` attribute, with their outputs in order (the spec
    applies GE's two-or-more-outputs rule itself)."""
    return tuple(ContinuousOutputs(n.name, tuple(n.outputs)) for n in graph.nodes
                 if n.attr("continuous_output", False) is True and n.outputs and all(t in planned for t in n.outputs))


def _workspaces(graph: Graph, planned: set[str]) -> dict[str, str]:
    """Workspace tensor -> the node that declares it (node attribute ``_workspace_bytes``, one
    tensor ``<node>#ws<i>`` per non-empty entry, as the plan contract names them)."""
    out = {}
    for n in graph.nodes:
        sizes = n.attr("_workspace_bytes", ())
        for i, nbytes in enumerate((sizes,) if isinstance(sizes, int) else sizes):
            if f"{n.name}#ws{i}" in planned:
                out[f"{n.name}#ws{i}"] = n.name
    return out


def _nbytes(graph: Graph, name: str, ws: dict[str, str]) -> int | None:
    """A tensor's raw bytes from its desc's shape and dtype by the spec's dtype table (a workspace's are
    the node's declared count)."""
    if name in ws:
        node = graph.node[ws[name]]
        sizes = node.attr("_workspace_bytes", ())
        return ((sizes,) if isinstance(sizes, int) else tuple(sizes))[int(name.rsplit("#ws", 1)[1])]
    desc = graph.desc.get(name)
    return None if desc is None else dtypes.nbytes(desc.shape, desc.dtype, tensor=name)


def _set_size(graph: Graph, name: str) -> int | None:
    """The size the graph sets for a tensor (``TensorDesc.size``), read from the graph, never the planner."""
    desc = graph.desc.get(name)
    return None if desc is None else desc.size


def observe_plan(graph: Graph, plan: MemoryPlan, soc: str | None = None) -> PlanObservation:
    """The spec's PlanObservation of ``plan``, made from ``graph``: a transcription of the plan's fields
    plus graph facts (who writes and reads each tensor, op types, which outputs are atomic, which
    inputs must be contiguous, declared workspaces, raw tensor bytes and set sizes, the stream of each node that runs a
    task and the control edges). ``soc`` names the SoC the plan
    was made for; the spec derives the granularities from it. Nothing here is the planner's verdict
    about itself: not its options, not its alignment."""
    planned = {t.name for t in plan.tensors}
    ws = _workspaces(graph, planned)
    tensors = tuple(PlacedTensor(t.name, t.region, t.offset, t.size, t.aligned_size, t.first, t.last, t.block,
                                 t.zero_copy, t.alias_of, _nbytes(graph, t.name, ws), _set_size(graph, t.name))
                    for t in plan.tensors)
    blocks = tuple(Block(b.id, b.region, b.offset, b.size, b.zero_copy, tuple(b.tensors)) for b in plan.blocks)
    a = plan.attributes
    attributes = PlanAttributes(a.memory_size, a.zero_copy_memory_size,
                                {x.tensor: x.is_zero_copy_block for x in a.inputs},
                                {x.tensor: x.basic_offset for x in a.inputs + a.outputs})
    atomic = tuple(t for n in graph.nodes if op_facts.atomic(n.op_type) for t in n.outputs if t in planned)
    steps = set(plan.order)
    return PlanObservation(
        order=tuple(plan.order), tensors=tensors, blocks=blocks, regions=dict(plan.regions),
        lower_bound=plan.lower_bound, naive=plan.naive, attributes=attributes,
        graph_inputs=tuple(t for t in graph.inputs if t in planned),
        graph_outputs=tuple(t for t in dict.fromkeys(graph.outputs) if t in planned),
        consumers=_consumers(graph, tuple(plan.order), planned),
        atomic=atomic,
        continuous_groups=_continuous_groups(graph, planned),
        continuous_outputs=_continuous_outputs(graph, planned),
        workspaces=ws,
        fixed=tuple(t for t in graph.weight if t in planned),
        batch_labels={t.name: t.batch for t in plan.tensors if t.batch},
        soc=soc,
        netoutput_inputs=tuple(t for t in graph.outputs if t in planned),
        node_types={n.name: n.op_type for n in graph.nodes if n.name in steps},
        producers={t: p for t, p in graph.producer.items() if t in planned and p in steps},
        streams={n.name: n.stream for n in graph.nodes
                 if n.name in steps and op_facts.runs_task(n.op_type, dict(n.attrs))},
        stream_labels={n.name: n.stream for n in graph.nodes if n.name in steps and n.op_type != "NetOutput"
                       and not op_facts.runs_task(n.op_type, dict(n.attrs))},
        control={n.name: tuple(n.control_inputs) for n in graph.nodes if n.name in steps and n.control_inputs},
        refs=_refs(graph, planned),
        inplace=_inplace(graph, planned),
    )


def _inplace(graph: Graph, planned: set[str]) -> dict[str, tuple[str, ...]]:
    """Output -> the inputs its node's ``_inplace_ability`` pairs name for it (flattened (output, input)
    index pairs), in the node's order, as the graph writes them; a pair naming no output or input of the
    node names nothing."""
    out: dict[str, tuple[str, ...]] = {}
    for n in graph.nodes:
        flat = n.attr("_inplace_ability", ())
        if not isinstance(flat, tuple):
            continue
        for o, k in zip(flat[0::2], flat[1::2]):
            if isinstance(o, int) and isinstance(k, int) and 0 <= o < len(n.outputs) and 0 <= k < len(n.inputs) \
                    and n.outputs[o] in planned and n.inputs[k] in planned:
                out[n.outputs[o]] = out.get(n.outputs[o], ()) + (n.inputs[k],)
    return out


def _refs(graph: Graph, planned: set[str]) -> dict[str, str]:
    """Output 0 -> the input a node's ``_reuse_input`` attribute names (True: input 0), as the graph writes
    it: whether the planner honoured it is the plan's to show (its ``alias_of``), the spec's to judge."""
    out = {}
    for n in graph.nodes:
        k = n.attr("_reuse_input", False)
        if k is False or k is None or not n.outputs:
            continue
        k = 0 if k is True else k
        if isinstance(k, int) and 0 <= k < len(n.inputs) and n.outputs[0] in planned and n.inputs[k] in planned:
            out[n.outputs[0]] = n.inputs[k]
    return out


def _header(data: bytes):
    if len(data) < HEADER.size:
        return Header(data[:8].hex(), -1, MAGIC.hex(), (VERSION,), HEADER.size, len(data), "", "")
    magic, version, header_len, meta_len, blob_len, digest = HEADER.unpack_from(data)
    return Header(magic.hex(), version, MAGIC.hex(), (VERSION,), header_len + meta_len + blob_len, len(data),
                  digest.hex(), hashlib.sha256(data[HEADER.size:]).hexdigest())


def model_tasks(model) -> tuple[Task, ...]:
    """The task definitions as written; an HCCL slot's flag is its entry in the task's
    zero_copy_in / zero_copy_out list, False past the list's end (an empty list sets no flag)."""
    out = []
    for t in model.tasks.tasks:
        seen = {"in": 0, "out": 0}
        slots = []
        for j, s in enumerate(t.slots):
            flag = None
            if t.kind == "hccl":
                flags, i = (t.zero_copy_in if s.role == "in" else t.zero_copy_out), seen[s.role]
                flag = bool(flags[i]) if i < len(flags) else False
            seen[s.role] = seen.get(s.role, 0) + 1
            slots.append(ArgSlot(j, s.region, s.offset, s.nbytes, s.role, s.tensor, flag))
        out.append(Task(t.index, t.kind, tuple(slots), t.node, t.stream, t.in_loop))
    return tuple(out)


def _nodes(graph: Graph, model) -> tuple[NodeInfo, ...]:
    """The graph's nodes as the model file runs them: a node is a view when it has no task and the
    plan gives its output its input 0's memory (the root of the ``alias_of`` chains the plan writes)."""
    producer = graph.producer
    with_task = {t.node for t in model.tasks.tasks}
    placed = {t.name: t for t in model.plan.tensors}
    root = {name: alias_root(placed, name) for name in placed}
    consts = sorted({t for n in graph.nodes for t in n.inputs if t in graph.weight})
    out = [NodeInfo(w, "Const", out_tensors=(w,)) for w in consts]
    for n in graph.nodes:
        srcs = tuple(dict.fromkeys(producer.get(t, t) for t in n.inputs))
        view = (n.name not in with_task and bool(n.inputs) and bool(n.outputs) and n.outputs[0] in root
                and root.get(n.outputs[0]) == root.get(n.inputs[0], n.inputs[0]))
        # A copy the memory-layout conflict optimizer made is GE's Identity (a copy task reading its
        # addresses through pointers, so refreshable), not one of MemcpyAddrAsyncPass's nodes.
        kind = "Identity" if n.attr("_inserted_by") == "mem_layout_conflict" else n.op_type
        out.append(NodeInfo(n.name, kind, srcs, view=view, stream=n.stream, cut=_cut(graph, n),
                            in_tensors=tuple(n.inputs), out_tensors=tuple(n.outputs),
                            continuous_output=bool(n.attr("continuous_output", False))))
    return tuple(out)


def _cut(graph: Graph, n) -> Cut | None:
    """What a Split or Slice node cuts, copied from its attributes and its tensors' shapes (None when its
    parameters are inputs, not attributes)."""
    if n.op_type not in ("Split", "Slice") or not n.inputs or n.inputs[0] not in graph.desc:
        return None
    shape = tuple(graph.desc[n.inputs[0]].shape)
    if n.op_type == "Split":
        axis = int(n.attr("axis", 0))
        out0 = graph.desc[n.outputs[0]].shape
        extent = out0[axis] if -len(out0) <= axis < len(out0) else 0
        return Cut(shape, (axis,), (0,), (extent,), (1,))
    starts, ends = n.attr("starts"), n.attr("ends")
    if starts is None or ends is None:
        return None
    axes = n.attr("axes") or tuple(range(len(starts)))
    steps = n.attr("steps") or (1,) * len(starts)
    return Cut(shape, tuple(int(a) for a in axes), tuple(int(v) for v in starts), tuple(int(v) for v in ends),
               tuple(int(v) for v in steps))


def _build_facts(options) -> BuildFacts:
    """The build options the file records (its ``options``): an offline (ATC) or single-op build, and
    whether it was built for a refreshable feature base (``ge.featureBaseRefreshable`` at build time)."""
    return BuildFacts(offline=bool(options.offline), single_op=bool(options.single_op),
                      feature_base_refreshable=bool(options.feature_base_refreshable))


def observe_model_file(data: bytes, graph: Graph | None = None, options=None, *, edited=None, built=None):
    """The spec's ModelFileObservation of model bytes: the header as read, whether the loader
    accepted it, and for an accepted file its regions, tasks, zero-copy table, the SoC it names and
    its build facts; ``graph`` (after the passes) adds the nodes. ``options`` stand in for the
    file's own options only when the file does not load (then no node or SoC facts are given).
    ``edited`` (a metadata JSON path) says the bytes are a built file with that field changed and
    re-signed; ``built`` is the model they were built from, compared with what the loader gave."""
    try:
        model, outcome = load_model(data), LoadOutcome(True)
    except ModelFormatError as e:
        model, outcome = None, LoadOutcome(False, str(e))
    edit = None if edited is None else FileEdit(tuple(edited), None if model is None else model == built)
    if model is None:
        return ModelFileObservation(header=_header(data), load=outcome, edit=edit,
                                    build=_build_facts(options) if options is not None else BuildFacts())
    io = {(d.role, d.index): d.tensor for d in model.tasks.inputs + model.tasks.outputs}
    table = tuple(ZeroCopyEntry(z.task, z.slot, io[(z.role, z.index)], z.role, z.relative_offset)
                  for z in model.tasks.zero_copy)
    return ModelFileObservation(
        header=_header(data), load=outcome, regions=dict(model.regions), tasks=model_tasks(model), zero_copy_table=table,
        nodes=_nodes(graph, model) if graph is not None else (),
        soc=SocProfile(model.options.soc), build=_build_facts(model.options), edit=edit,
        tensor_bytes={} if graph is None else {name: dtypes.nbytes(d.shape, d.dtype, tensor=name)
                                               for name, d in graph.desc.items()},
    )
