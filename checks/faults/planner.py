"""Planner variants: GE's block and lifetime rules (GE: block_mem_assigner.cc,
graph_mem_assigner.cc) each broken once.

Each patch wraps or replaces one function of impl/compiler/memory for the
duration of a ``with`` block. The hunts draw plan scenarios.
"""
from __future__ import annotations

import copy

import attrs

from zcspec.checks.faults.strategies import plan_scenarios, stream_plan_scenarios
from zcspec.checks.faults.variant import Variant, swap

_OFFSETS = "zcspec.impl.compiler.memory.offsets"
_ALIASES = "zcspec.impl.compiler.aliases"


def _zc_align_32():
    """GE (graph_mem_assigner.cc `AssignZeroCopyMemory`, block_mem_assigner.cc `MemoryBlock::Resize`): every
    block, zero-copy ones too, is 512-aligned; this reads 32."""
    def make(place_zero_copy):
        def wrong(ordered_units, options, blocks, unit_offset):
            return place_zero_copy(ordered_units, attrs.evolve(options, block_align=32), blocks, unit_offset)
        return wrong
    return swap(_OFFSETS, "place_zero_copy", make)


def _zc_merged():
    """GE (block_mem_assigner.cc `ReuseBlock`, `AddZeroCopyLifeReuseBlock`): zero-copy blocks never
    share; this lets a graph input take the block of a graph output of at least its size (in-place
    I/O fusion applied to zero-copy memory)."""
    def make(place_zero_copy):
        def wrong(ordered_units, options, blocks, unit_offset):
            start = len(blocks)
            end = place_zero_copy(ordered_units, options, blocks, unit_offset)
            kinds = {u.id: u.zero_copy for u in ordered_units}
            free_outputs = [b for b in blocks[start:] if kinds[b.units[0]] == "output"]
            for b in blocks[start:]:
                u = b.units[0]
                target = next((o for o in free_outputs if o.size >= b.size), None)
                if kinds[u] != "input" or target is None:
                    continue
                free_outputs.remove(target)
                unit_offset[u] = ("zero_copy", target.offset, target.index)
                blocks[target.index] = attrs.evolve(target, units=target.units + (u,))
            return end
        return wrong
    return swap(_OFFSETS, "place_zero_copy", make)


def _lifetime_half_open():
    """A tensor's life ends *before* its last reader's step ([first, last) read as [first, last])."""
    def make(own_lifetimes):
        def wrong(graph, step):
            own = own_lifetimes(graph, step)
            outputs = set(graph.outputs)
            return {t: (f, l - 1 if l > f and t not in outputs else l) for t, (f, l) in own.items()}
        return wrong
    return swap(_ALIASES, "own_lifetimes", make)


def _output_reused_early():
    """A graph output's life ends at its last *compute* reader: NetOutput, which has no task, is not
    counted as a reader (nor is the graph's end), so the output's memory is handed to later tensors
    before the caller reads it (InitReuseFlag: GE gives graph outputs kMaxLifeTime)."""
    def make(own_lifetimes):
        def wrong(graph, step):
            own = own_lifetimes(graph, step)
            for t in set(graph.outputs) & set(own):
                readers = [step[c] for c in graph.consumers.get(t, ()) if graph.node[c].op_type != "NetOutput"]
                first = own[t][0]
                own[t] = (first, max(readers + [first]))
            return own
        return wrong
    return swap(_ALIASES, "own_lifetimes", make)


def _touching_merged():
    """The planner's units end one step early (a reusable unit's ``last`` read as exclusive), so a
    tensor written at step k takes the block of one last read at step k: their lifetimes only touch,
    and they are placed overlapping (ReleaseMemory: memory is released after the last reader ran)."""
    def make(build_units):
        def wrong(graph, lt, options):
            got = build_units(graph, lt, options)
            units = tuple(attrs.evolve(u, last=u.last - 1) if u.reusable and u.last > u.first else u
                          for u in got.units)
            return attrs.evolve(got, units=units)
        return wrong
    return swap("zcspec.impl.compiler.memory.units", "build_units", make)


def _block_one_unit_short():
    """A block asks for its size rounded *down* to 512 (one alignment unit too small, AlignMemOffset)."""
    def make(block_size):
        return lambda size, options: max(block_size(size, options) - options.block_align, 0)
    return swap("zcspec.impl.compiler.memory.sizes", "block_size", make)


def _atomic_reused():
    """The atomic-output rule (IsAtomicOutputMemory, AssignAtomicOutputMemory) is dropped: a memset-cleaned
    output joins ordinary reuse."""
    return swap("zcspec.impl.compiler.memory.rules", "atomic", lambda atomic: (lambda node: False))


def _streams_by_steps():
    """Level 2 merges blocks of two streams when their spans of steps do not meet, as on one stream:
    the steps are one schedule of many, so a task of the other stream may still use the memory
    (GE's CanBlockLifeReuse asks for a stream dependency edge, GetDependLifeBegin)."""
    return swap("zcspec.impl.compiler.memory.ge_level2", "_follows",
                lambda follows: (lambda a, b: a.end < b.begin))


def _interval_touching():
    """Level 2's interval reuse reads lifetimes as half-open when it asks whether a member crosses the
    parent's (CrossLifeTime counts a shared step): a member written at the step where a parent member is
    last read stays in the parent's memory."""
    def make(crossing):
        def wrong(parent, child, window):
            shifted = copy.copy(child)   # the child's timeline (ge_level2._Timeline), members' firsts one later
            shifted.firsts = [f + 1 if last > f else f for f, last in zip(child.firsts, child.lasts)]
            return crossing(parent, shifted, window)
        return wrong
    return swap("zcspec.impl.compiler.memory.ge_level2", "_crossing", make)


VARIANTS = (
    Variant("zc-align-32", "planner",
            "zero-copy blocks rounded to 32 bytes instead of 512 (a common misreading of GE's graph_mem_assigner.h)",
            _zc_align_32, plan_scenarios, ("LAYOUT-ALIGN",)),
    Variant("zc-block-merged", "planner",
            "a zero-copy block merged: a graph input shares a graph output's block "
            "(in-place I/O; AddZeroCopyLifeReuseBlock)",
            _zc_merged, plan_scenarios, ("MEM-ZC-NOMERGE",)),
    Variant("lifetime-half-open", "planner",
            "off-by-one lifetime: the last reader's step excluded (half-open where closed is right)",
            _lifetime_half_open, plan_scenarios, ("LAYOUT-LIFETIME-COVERS-USES", "LAYOUT-NO-OVERLAP")),
    Variant("output-reused-early", "planner",
            "a graph output's memory reused before the end of the graph (its life stops at its last reader)",
            _output_reused_early, plan_scenarios, ("LAYOUT-LIFETIME-COVERS-USES",)),
    Variant("touching-lifetimes-merged", "planner",
            "two buffers whose lifetimes only touch (one written at the step the other is last read) "
            "placed overlapping: the planner's intervals read as half-open",
            _touching_merged, plan_scenarios, ("LAYOUT-NO-OVERLAP",)),
    Variant("block-one-unit-short", "planner",
            "block sizes rounded down instead of up: every block one 512-byte unit too small",
            _block_one_unit_short, plan_scenarios, ("LAYOUT-NO-OVERLAP", "LAYOUT-IO-ATTRIBUTES")),
    Variant("atomic-block-reused", "planner",
            "an atomic-clean output's block reused by other tensors (the memset would wipe them)",
            _atomic_reused, plan_scenarios, ("MEM-ATOMIC-NOREUSE",)),
    Variant("interval-touching-kept", "planner",
            "level 2's interval reuse keeps a member whose lifetime only touches a parent member's "
            "(written at the step the parent's member is last read)",
            _interval_touching, plan_scenarios, ("LAYOUT-NO-OVERLAP",)),
    Variant("streams-shared-by-steps", "planner",
            "blocks of two streams merged when their steps do not meet, with no event between them",
            _streams_by_steps, stream_plan_scenarios, ("LAYOUT-STREAM-ORDER",)),
)
