"""The compact strategy: GE's rules, feature-map offsets from the interval packer.

The units (and so every rule: zero-copy identification, continuous groups,
symbols, atomic whole-graph lifetimes, no-reuse flags, widened lifetimes) are
the same as for the GE strategy. Only the feature map is laid out differently:
instead of GE's exact-size block reuse and level-2 merge, each unit becomes one
:class:`packing.Buffer` over its planning lifetime and :func:`packing.pack` finds
offsets (greedy by size with best fit, then improvement and an exact search
while above the lower bound).

Zero-copy memory follows GE's ``AssignZeroCopyMemory`` (graph_mem_assigner.cc):
output blocks first, then graph-input blocks ascending by raw size. The output
blocks are taken in level 2's order (``offsets.zero_copy_order``: size
descending, then first step; creation order with reuse off), the order of GE's
binary-block planner; GE takes the order of whichever of its planners wins, so
where the max-block planner would win (creation order) the two layouts of the
zero-copy region may differ.

Sizes go to the packer in block-granularity units, so every offset is a
multiple of ``block_align``. Streams never share memory here: each stream is
packed on its own and the arenas are stacked (GE's first stage is per stream
too, but its level 2, and the ge strategy's, lets a block of one stream reuse
another stream's memory once a stream edge orders the two). Within a stream,
unbatched units are packed first and each dynamic-batch branch is packed
separately into one shared batch region after them (branches are exclusive at
run time; GE: dynamic_batch_mem_assigner.cc
``ResizeDynamicBatchBlocks``).
"""
from __future__ import annotations

from collections import defaultdict

from zcspec.impl.compiler.memory.offsets import BlockRecord, Placed, place_zero_copy, zero_copy_order
from zcspec.impl.compiler.memory.packing import Buffer, pack
from zcspec.impl.compiler.memory.sizes import block_size


def _pack_units(units, sizes: dict[str, int], options) -> tuple[dict[str, int], int]:
    """Offsets (bytes, from 0) and arena of one set of units packed together (``sizes``: each unit's block)."""
    if not units:
        return {}, 0
    grain = options.block_align
    buffers = [Buffer(u.id, u.first, u.last + 1, sizes[u.id] // grain) for u in units]
    packing = pack(buffers, time_limit=options.time_limit)
    return {k: v * grain for k, v in packing.offsets.items()}, packing.arena * grain


def _branch(u) -> str:
    """The branch whose region ``u`` may share with other branches: as in GE's DynamicBatchMemAssigner,
    only reusable or same-offset memory (``ResizeDynamicBatchBlocks``); an atomic output or a no-reuse tensor of a
    branch keeps memory of its own (dynamic_batch._eligible is the same rule for the ge strategy)."""
    return u.batch if u.batch and (u.reusable or u.same_offset) else ""


def _stream_layout(units, sizes: dict[str, int], options) -> tuple[dict[str, int], int]:
    """One stream: unbatched units, then the batch region (max over branches)."""
    by_label = defaultdict(list)
    for u in units:
        by_label[_branch(u)].append(u)
    offsets, base = _pack_units(by_label.pop("", []), sizes, options)
    region = 0
    for label in sorted(by_label):
        sub, arena = _pack_units(by_label[label], sizes, options)
        offsets.update({k: v + base for k, v in sub.items()})
        region = max(region, arena)
    return offsets, base + region


def compact_layout(units, steps: int, options) -> Placed:
    """Feature-map offsets from the packer, stream by stream; zero-copy memory by GE's rule in level 2's order."""
    fm = [u for u in units if u.zero_copy is None]
    by_stream = defaultdict(list)
    for u in fm:
        by_stream[u.stream].append(u)
    sizes = {u.id: block_size(u.size, options) for u in fm}
    blocks, unit_offset, end = [], {}, 0
    for stream in sorted(by_stream):
        offsets, arena = _stream_layout(by_stream[stream], sizes, options)
        for u in by_stream[stream]:
            index, offset = len(blocks), end + offsets[u.id]
            blocks.append(BlockRecord(index, "feature_map", offset, sizes[u.id], False, (u.id,)))
            unit_offset[u.id] = ("feature_map", offset, index)
        end += arena
    zc = place_zero_copy(zero_copy_order([u for u in units if u.zero_copy], options), options, blocks, unit_offset)
    return Placed(unit_offset, tuple(blocks), {"feature_map": end, "zero_copy": zc})
