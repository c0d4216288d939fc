"""GE's GraphMemAssigner: offsets for the feature map, atomic outputs and zero-copy I/O.

The feature-map region is laid out block by block in the winning planner's block-list order,
skipping children and zero-copy blocks (GE: block_mem_assigner.cc ``ResizeMemoryBlocks``). Atomic
outputs follow at the region's end, each rounded to the block granularity: the unbatched ones
first, then each batch label in sorted order, every batch starting where the previous one ended,
so atomic outputs of different batches never overlap (graph_mem_assigner.cc
``ReAssignAtomicMemory``, ``AssignAtomicOutputMemory``). Zero-copy memory is its own region after
the feature map (``AssignZeroCopyMemory``): output blocks in the winning planner's block-list
order, then graph-input blocks sorted ascending by their raw input size, together, so input copies
can be merged. GE's ``std::sort`` is unstable there; we sort stably, so ties keep block-list order.
"""
from __future__ import annotations

from typing import Mapping

import attrs

from zcspec.impl.compiler.memory.dynamic_batch import assign_batches
from zcspec.impl.compiler.memory.ge_blocks import assign_blocks
from zcspec.impl.compiler.memory.layout import place, resize, subtree
from zcspec.impl.compiler.memory.sizes import align, block_size


@attrs.frozen
class BlockRecord:
    """A placed block: ``units`` are unit ids; ``parent`` the index of the enclosing block or None."""

    index: int
    region: str
    offset: int
    size: int
    zero_copy: bool
    units: tuple[str, ...]
    parent: int | None = None


@attrs.frozen
class Placed:
    """What a strategy produces: unit id -> (region, offset, block index), the blocks, region sizes."""

    unit_offset: Mapping[str, tuple[str, int, int]]
    blocks: tuple[BlockRecord, ...]
    regions: Mapping[str, int]


def zero_copy_order(units, options):
    """Units in GE's level-2 order (block_mem_assigner.cc ``ReuseBlocksByLifeTime``, ``CompareLifeInterval``)
    when reuse is on, creation order otherwise."""
    if not options.reuse:
        return list(units)
    return sorted(units, key=lambda u: (-block_size(u.size, options), 1, u.first))


def place_zero_copy(ordered_units, options, blocks: list, unit_offset: dict) -> int:
    """AssignZeroCopyMemory: outputs in the given order, then inputs by raw size (stable). Returns the size."""
    outputs = [u for u in ordered_units if u.zero_copy == "output"]
    inputs = sorted((u for u in ordered_units if u.zero_copy == "input"), key=lambda u: u.input_size)
    end = 0
    for u in outputs + inputs:
        size = block_size(u.size, options)
        index = len(blocks)
        blocks.append(BlockRecord(index, "zero_copy", end, size, True, (u.id,)))
        unit_offset[u.id] = ("zero_copy", end, index)
        end += size
    return end


def place_atomic(atomic_units, start: int, options, blocks: list, unit_offset: dict) -> int:
    """ReAssignAtomicMemory: unbatched first, then each batch label in sorted order, one after
    another (each batch starts at the running end, so batches never overlap). Returns the end."""
    def run(units, at: int) -> int:
        for u in units:
            index = len(blocks)
            blocks.append(BlockRecord(index, "feature_map", at, block_size(u.size, options), False, (u.id,)))
            unit_offset[u.id] = ("feature_map", at, index)
            at = align(at + u.size, options.block_align)
        return at

    end = start
    for label in sorted({u.batch for u in atomic_units}):  # "" (unbatched) sorts first
        end = run([u for u in atomic_units if u.batch == label], end)
    return end


def _export_tree(top, options, memo, offsets, blocks: list, unit_offset: dict) -> None:
    tree = subtree(top)
    index_of = {b.id: len(blocks) + k for k, b in enumerate(tree)}
    blocks.extend([None] * len(tree))
    for b in tree:
        i, at = index_of[b.id], offsets[b.id]
        parent = index_of.get(b.parent.id) if b.parent is not None else None
        blocks[i] = BlockRecord(i, "feature_map", at, resize(b, options, memo), False, tuple(u.id for u in b.units),
                                parent)
        where = ("feature_map", at, i)
        for u in b.units:
            unit_offset[u.id] = where


def _feature_map(units, steps: int, options, max_block: bool):
    """One GE planner's block list and its layout (block id -> offset, the sizes memo); the score is the
    feature-map end (GE: hybrid_mem_assigner.cc)."""
    block_list, _ = assign_blocks(units, steps, options, max_block)
    block_list = assign_batches(block_list, options)
    memo, offsets = {}, {}
    end = 0
    for b in block_list:
        if b.parent is not None or b.zero_copy is not None:
            continue
        place(b, end, options, memo, offsets)
        end += resize(b, options, memo)
    return block_list, memo, offsets, end


def _export(block_list, memo, offsets, options):
    """The winning planner's blocks as records, in block-list order, and unit id -> placement (only the
    winner is exported: the loser's layout is only scored)."""
    blocks, unit_offset = [], {}
    for b in block_list:
        if b.parent is None and b.zero_copy is None:
            _export_tree(b, options, memo, offsets, blocks, unit_offset)
    return blocks, unit_offset


def ge_layout(units, steps: int, options) -> Placed:
    """The GE strategy: both planners (binary-block and max-block), the smaller feature map wins (ties:
    binary; GE: hybrid_mem_assigner.cc ``HybridMemAssigner::Assign``); then atomic outputs and
    zero-copy memory after it."""
    candidates = [_feature_map(units, steps, options, max_block) for max_block in (False, True)]
    block_list, memo, offsets, end = min(candidates, key=lambda c: c[3])
    blocks, unit_offset = _export(block_list, memo, offsets, options)
    end = place_atomic([u for u in units if u.atomic], end, options, blocks, unit_offset)
    zc_units = [u for b in block_list if b.zero_copy is not None for u in b.units]
    zc = place_zero_copy(zc_units, options, blocks, unit_offset)
    return Placed(unit_offset, tuple(blocks), {"feature_map": end, "zero_copy": zc})
