"""The MemoryPlan artefact and ``plan_memory``: Graph -> MemoryPlan.

Pipeline (one direction): lifetimes -> units (GE's rules applied) -> a
strategy's offsets (``ge``: BlockMemAssigner + GraphMemAssigner; ``compact``:
the interval packer, never worse than ``ge``) -> tensor placements, blocks,
region sizes, reference figures and GE's model attributes.

Regions: ``feature_map`` (offset 0 of the model's work memory), ``zero_copy``
(right after the feature map: GE's memory_size includes it: model_builder.cc
``BuildModelDefForMem``), ``weight`` (weights, in graph order, ``weight_align``-aligned) and
``fixed`` (variables, at fixed addresses: block_mem_assigner.cc ``CheckIsZeroMemNodeType``). Offsets are within the region.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import gc
from typing import Mapping

import attrs

from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory import bounds, rules
from zcspec.impl.compiler.memory.compact import compact_layout
from zcspec.impl.compiler.memory.lifetimes import Lifetimes, lifetimes
from zcspec.impl.compiler.memory.offsets import BlockRecord, Placed, ge_layout
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan_types import (
    BlockPlacement, IoAttribute, MemoryPlan, ModelAttributes, TensorPlacement,
)
from zcspec.impl.compiler.memory.sizes import alias_sizes, align, desc_size
from zcspec.impl.compiler.memory.units import Units, build_units

__all__ = ["plan_memory", "MemoryPlan", "TensorPlacement", "BlockPlacement", "ModelAttributes", "IoAttribute",
           "PlanOptions"]


def _fixed_blocks(graph: Graph, lt: Lifetimes, options, start: int):
    """Weights (region ``weight``) and variable outputs (region ``fixed``): one block each, packed in order."""
    blocks, where, ends = [], {}, {"weight": 0, "fixed": 0}
    roots = [(w.name, "weight") for w in graph.weights]
    roots += [(t, "fixed") for n in graph.nodes if rules.zero_memory(n) for t in n.outputs]
    for r, region in roots:
        size = desc_size(graph.desc[r], options)
        offset = align(ends[region], options.weight_align)
        ends[region] = offset + align(size, options.block_align)  # the region holds whole blocks
        index = start + len(blocks)
        blocks.append(BlockRecord(index, region, offset, align(size, options.block_align), False, (r,)))
        where[r] = (region, offset, index)
    return blocks, where, ends


def _layout(units: Units, options, lower_bound: int) -> Placed:
    """The strategy's layout. ``compact`` is the best of both: the packer is a heuristic above the lower
    bound, GE's layout obeys the same rules, the smaller feature map wins, ties the packer's.

    No layout that keeps the rules has a feature map below ``lower_bound`` (``bounds``; the model-file
    loader refuses a plan whose bound exceeds it), so once the packer reaches the bound GE's layout
    cannot win and is not computed (a third of the compact strategy's time at 100k nodes)."""
    if options.strategy == "ge":
        return ge_layout(units.units, units.steps, options)
    if len(units.units) >= SIDE_BY_SIDE_UNITS:
        compact, ge = _side_by_side(units, options)
    else:
        compact = compact_layout(units.units, units.steps, options)
        if compact.regions["feature_map"] <= lower_bound:
            return compact
        ge = ge_layout(units.units, units.steps, options)
    return compact if compact.regions["feature_map"] <= ge.regions["feature_map"] else ge


# From this many units the compact strategy lays out GE's way and the packer's at once, in two threads: the
# packer's passes run compiled without the interpreter lock (packing/fit.py ``place_in_order``), so GE's
# layout, which is mostly Python, takes the other core. At this size the packer seldom meets the lower bound
# (the 100k-node graph of benchmarks/plan_scale.py ends 0.2% above it), so GE's layout is nearly always
# needed; below it, GE's layout is computed only when the packer misses the bound, one after the other.
SIDE_BY_SIDE_UNITS = 20_000


def _side_by_side(units: Units, options) -> tuple[Placed, Placed]:
    """(the packer's layout, GE's layout), the packer's computed in a second thread. The choice between
    them is the serial path's: the packer's wins ties, and a packer layout at the lower bound never loses
    (GE's cannot be below it), so the plan is the same either way."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="zcspec-packer") as pool:
        packed = pool.submit(compact_layout, units.units, units.steps, options)
        ge = ge_layout(units.units, units.steps, options)
        return packed.result(), ge


def _tensor_names(graph: Graph, lt: Lifetimes):
    """Weights, then per step the node's outputs and its workspaces: the plan's tensor order."""
    ws: dict[str, list[str]] = {}
    for w in lt.workspaces:
        ws.setdefault(w.node, []).append(w.name)
    names = [w.name for w in graph.weights]
    for name in lt.order:
        names.extend(graph.node[name].outputs)
        names.extend(ws.get(name, ()))
    return names


def _owners(graph, lt: Lifetimes, units: Units) -> dict[str, str]:
    """Root -> the tensor reported as owning its memory: itself, or a no-padding concat's output.

    A no-padding concat's output spans all its pieces, so the pieces (and their
    aliases) are reported as aliases of it, and it as the owner of the unit.
    """
    owner = {}
    for u in units.units:
        if u.owner is not None:
            owner.update((r, u.owner) for r, _ in u.roots)
    return owner


def _placements(graph, lt, units: Units, placed: Placed, fixed_where, options) -> list[TensorPlacement]:
    unit_of = {u.id: u for u in units.units}
    owners = _owners(graph, lt, units)
    ws_bytes = {w.name: w.nbytes for w in lt.workspaces}
    ws_step = {w.name: w.step for w in lt.workspaces}
    out = []
    for t in _tensor_names(graph, lt):
        r = lt.root.get(t, t)
        target = owners.get(r, r)
        if r in fixed_where:
            region, offset, block = fixed_where[r]
            offset, unit = offset + lt.offset.get(t, 0), None
        else:
            uid, inner = units.where[r]
            region, base, block = placed.unit_offset[uid]
            offset, unit = base + inner + lt.offset.get(t, 0), unit_of[uid]
        size = ws_bytes[t] if t in ws_bytes else desc_size(graph.desc[t], options)
        if t in ws_step:
            first, last = ws_step[t], ws_step[t]
        elif t == target and r != t:  # a concat output owning its pieces' unit
            first, last = min(lt.span[m][0] for m, _ in unit.roots), max(lt.span[m][1] for m, _ in unit.roots)
            size = max(size, unit.size)
        else:
            first, last = lt.span[r] if t == r else lt.own[t]
        zc = unit is not None and unit.zero_copy is not None
        batch = unit.batch or None if unit is not None else None
        out.append(TensorPlacement(t, region, offset, size, align(size, options.block_align), first, last, block,
                                   zc, None if t == target else target, batch))
    return _clip_aliases(out, options)


def _clip_aliases(placements: list[TensorPlacement], options) -> list[TensorPlacement]:
    """Every alias's sizes as ``sizes.alias_sizes`` gives them (its root's memory, nothing of its own)."""
    by_name = {p.name: p for p in placements}
    out = []
    for p in placements:
        if p.alias_of is not None:
            root = by_name[p.alias_of]
            size, aligned = alias_sizes(p.size, p.offset, root.offset, root.size, root.aligned_size, options)
            p = attrs.evolve(p, size=size, aligned_size=aligned)
        out.append(p)
    return out


def _io_attributes(graph: Graph, tensors: Mapping[str, TensorPlacement], regions) -> tuple:
    """GE's per-I/O attributes: _is_zero_copy_block (MarkZeroCopyBlockAttr), basic/relative offsets
    (SetInputOutputOffsetPass::Run)."""
    base = {"feature_map": 0, "zero_copy": regions["feature_map"], "weight": 0, "fixed": 0}

    def attr(index, node, t):
        p = tensors[t]
        basic = base[p.region] + p.offset
        producer = graph.node.get(graph.producer.get(t, ""))
        rel = (0,)
        if producer is not None and rules.continuous_input(producer) == "nopadding":
            rel = tuple(base[tensors[i].region] + tensors[i].offset - basic for i in producer.inputs)
        return IoAttribute(index, node, t, p.region, basic, p.zero_copy, rel)

    inputs = tuple(attr(n.attr("index", 0), n.name, n.outputs[0]) for n in graph.data_nodes)
    out_node = graph.netoutput.name if graph.netoutput is not None else ""
    outputs = tuple(attr(i, out_node, t) for i, t in enumerate(graph.outputs))
    return inputs, outputs


@contextlib.contextmanager
def _no_cyclic_gc():
    """Planning a 100k-node graph allocates about a million small objects that all stay alive until
    it returns; the cyclic collector would rescan them again and again (half the time at 100k nodes).
    Nothing the planner builds is garbage before it returns, so the collector is paused meanwhile.

    On the way out those objects are all in the youngest generation, and the first allocation after
    ``gc.enable`` would scan them all (a quarter of a second at 100k nodes), then again on their way
    through the middle generation. Most outlive the call (the plan holds them), so they are moved to the
    oldest generation unscanned (``gc.freeze`` then ``gc.unfreeze``: two list splices), where only a full
    collection looks at them. Skipped when the caller froze objects of its own: unfreezing would
    release them."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def plan_memory(graph: Graph, options: PlanOptions = PlanOptions(), *, order=None) -> MemoryPlan:
    """Plan every tensor of ``graph`` (validated) with ``options``; raises PlanError on a rule the graph breaks.

    ``order``: the execution order to plan for (default ``topology.execution_order``).
    """
    with _no_cyclic_gc():
        return _plan(graph, options, order)


def _plan(graph: Graph, options: PlanOptions, order) -> MemoryPlan:
    lt = lifetimes(graph, order)
    units = build_units(graph, lt, options)
    intervals = bounds.unit_intervals(units.units, options)
    lower_bound = bounds.lower_bound(intervals, units.steps)
    placed = _layout(units, options, lower_bound)
    fixed, fixed_where, ends = _fixed_blocks(graph, lt, options, len(placed.blocks))
    tensors = _placements(graph, lt, units, placed, fixed_where, options)
    by_block: dict[int, list[str]] = {}
    for p in tensors:
        by_block.setdefault(p.block, []).append(p.name)
    blocks = tuple(BlockPlacement(b.index, b.region, b.offset, b.size, b.zero_copy, tuple(by_block.get(b.index, ())),
                                  b.parent) for b in placed.blocks + tuple(fixed))
    regions = {**placed.regions, "weight": ends["weight"], "fixed": ends["fixed"]}
    inputs, outputs = _io_attributes(graph, {p.name: p for p in tensors}, regions)
    attributes = ModelAttributes(regions["feature_map"] + regions["zero_copy"], regions["zero_copy"], inputs, outputs)
    return MemoryPlan(
        order=lt.order, tensors=tuple(tensors), blocks=blocks, regions=regions,
        lower_bound=lower_bound, naive=bounds.naive(intervals),
        strategy=options.strategy, options=options, attributes=attributes,
        branches={n: label for n in lt.order if (label := rules.batch_label(graph.node[n]))})
