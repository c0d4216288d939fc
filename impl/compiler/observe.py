"""The refinement mapping from the compiler's artefacts to the spec's observables.

``observe_plan(graph, plan)`` gives the spec's PlanObservation: the plan's
contract form plus the facts the block invariants need, all read from the
graph (who reads each tensor, which outputs are atomic, which inputs must be
contiguous, which tensors are workspaces or fixed), never from planner internals.
"""
from __future__ import annotations

from impl.compiler import ops
from impl.compiler.ir import Graph
from spec.observables.plan import (
    Alignment, Block, ContinuousGroup, PlanAttributes, PlanObservation, TensorPlacement,
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


def observe_plan(graph: Graph, plan) -> PlanObservation:
    """``plan`` is a MemoryPlan (or anything with ``to_contract()``) made from ``graph``."""
    c = plan.to_contract() if hasattr(plan, "to_contract") else plan
    tensors = tuple(TensorPlacement(**{k: t[k] for k in (
        "name", "region", "offset", "size", "aligned_size", "first", "last", "block", "zero_copy", "alias_of")})
        for t in c["tensors"])
    planned = {t.name for t in tensors}
    blocks = tuple(Block(b["id"], b["region"], b["offset"], b["size"], b["zero_copy"], tuple(b["tensors"]))
                   for b in c["blocks"])
    attributes = None
    if c.get("attributes"):
        a = c["attributes"]
        attributes = PlanAttributes(a["memory_size"], a["zero_copy_memory_size"],
                                    {x["tensor"]: x["is_zero_copy_block"] for x in a["inputs"]})
    options = c.get("options") or {}
    block_align = options.get("block_align", 512)
    atomic = tuple(t for n in graph.nodes if (ops.info(n.op_type) or ops.OpInfo(n.op_type)).atomic
                   for t in n.outputs if t in planned)
    return PlanObservation(
        order=tuple(c["order"]), tensors=tensors, blocks=blocks, regions=dict(c["regions"]),
        lower_bound=c["lower_bound"], naive=c["naive"], attributes=attributes,
        graph_inputs=tuple(t for t in graph.inputs if t in planned),
        graph_outputs=tuple(t for t in dict.fromkeys(graph.outputs) if t in planned),
        consumers=_consumers(graph, tuple(c["order"]), planned),
        atomic=atomic,
        continuous_groups=_continuous_groups(graph, planned),
        workspaces={t.name: t.name.split("#ws")[0] for t in tensors if "#ws" in t.name},
        fixed=tuple(t.name for t in tensors if t.region in ("weight", "fixed")),
        alignment=Alignment(block={"feature_map": block_align, "zero_copy": block_align},
                            tensor=options.get("size_align", 32)),
    )
