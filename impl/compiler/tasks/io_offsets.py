"""SetInputOutputOffsetPass: basic and relative offsets of model I/O (GE: set_input_output_offset_pass.cc
``SetInputOutputOffsetPass::Run``).

For every model input and output the *basic* offset is where its memory starts;
every tensor that lives inside it (the I/O tensor itself, views of it such as an
outer-axis Split or Slice, in-place outputs sharing it) gets a *relative* offset
from that start. The runtime uses them to point a task slot at
``user buffer + relative offset`` (ZeroCopyOffset::InitInputDataInfo, SetInputOutsideAddrs). Offsets come from the typed
MemoryPlan (one placement per tensor with region, offset and alias_of), so this
needs no planner internals.
"""
from __future__ import annotations

import attrs

from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory.plan_types import MemoryPlan


@attrs.frozen
class IoOffsets:
    """``basic[(role, index)]`` = (region, offset); ``owner[tensor]`` = [(role, index, relative), ...]."""

    basic: dict
    owner: dict


def io_offsets(graph: Graph, plan: MemoryPlan) -> IoOffsets:
    tensors = {t.name: t for t in plan.tensors}
    root = plan.roots()
    basic: dict = {}
    by_root: dict[str, list] = {}
    for role, names in (("input", graph.inputs), ("output", graph.outputs)):
        for index, name in enumerate(names):
            t = tensors[name]
            basic[(role, index)] = (t.region, t.offset)
            by_root.setdefault(root[name], []).append((role, index, t.region, t.offset))
    owner: dict[str, list] = {}
    for name, t in tensors.items():
        for role, index, region, start in by_root.get(root[name], ()):
            if t.region == region:
                owner.setdefault(name, []).append((role, index, t.offset - start))
    return IoOffsets(basic, owner)
