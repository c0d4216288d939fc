"""Allocator blocks: where runtime v2's caching allocator puts the blocks it hands out, judged from the trace.

GE's CachingMemAllocator serves every request from spans its ScalableAllocator took from the device, in
blocks whose sizes are rounded up to MEM_SIZE_ALIGN (512 bytes): a block starts at a multiple of 512 from
the start of its span and ends inside it. The claim reads the observation's ``allocator_events`` alone:
the spans (device memory tagged with the allocator's name, allocated and freed), each malloc call's
requested size (its ``enter``) and the address it returned (its ``exit``).
"""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants.allocator_threads import by_allocator
from zcspec.spec.observables.device import DeviceObservation

MEM_SIZE_ALIGN = 512   # GE: runtime/v2/kernel/memory/type/mem_size.h MEM_SIZE_ALIGN (MemSize_GetAlignedOf)


def _aligned(size: int) -> int:
    return max(MEM_SIZE_ALIGN, -(-size // MEM_SIZE_ALIGN) * MEM_SIZE_ALIGN)


def _blocks(obs: DeviceObservation):
    """(allocator, exit event, requested size, the live spans then) for each malloc of a v2 allocator that
    returned a block."""
    for name, events in by_allocator(obs, "v2").items():
        spans: dict[int, int] = {}
        asked: dict[int, int] = {}   # thread -> the size its open malloc asked for
        for e in events:
            if e.kind == "alloc" and e.address is not None and e.size:
                spans[e.address] = e.size
            elif e.kind == "free" and e.address is not None:
                spans.pop(e.address, None)
            elif e.kind == "enter" and e.call == "malloc":
                asked[e.thread] = e.size or 0
            elif e.kind == "exit" and e.call == "malloc" and e.address:
                yield name, e, asked.pop(e.thread, 0), dict(spans)


def _pool_blocks(obs: DeviceObservation):
    for name, e, size, spans in _blocks(obs):
        culprit = f"{name} malloc (event {e.seq}, thread {e.thread})"
        home = next(((s, n) for s, n in spans.items() if s <= e.address < s + n), None)
        if home is None:
            yield violation(culprit, f"returned a block at {e.address:#x}, inside none of the spans the allocator "
                            f"holds ({len(spans)} live)", address=e.address)
            continue
        start, n = home
        if (e.address - start) % MEM_SIZE_ALIGN:
            yield violation(culprit, f"returned a block at offset {e.address - start} of its span at {start:#x}, "
                            f"not a multiple of {MEM_SIZE_ALIGN}", offset=e.address - start)
        elif e.address + _aligned(size) > start + n:
            yield violation(culprit, f"returned a block of {_aligned(size)} bytes (asked {size}) at offset "
                            f"{e.address - start} of a {n}-byte span: it reaches past the span's end",
                            offset=e.address - start, size=_aligned(size))


def _v2_blocks(obs: DeviceObservation) -> bool:
    return any(True for _ in _blocks(obs))


POOL_BLOCKS = Invariant(
    id="V2-POOL-BLOCKS",
    title="Runtime v2's caching allocator hands out 512-aligned blocks inside the spans it holds",
    statement="Every block one of runtime v2's caching allocators returns from malloc starts inside a span the "
              "allocator holds at that moment (device memory tagged with its name, allocated and not yet freed), at "
              "an offset from the span's start that is a multiple of 512 bytes, and its size, the request rounded "
              "up to a multiple of 512 (at least 512), ends inside that span.",
    rationale="Kernels run on the blocks the pool hands out: one outside every span is memory the allocator does "
              "not own (another allocation's, or freed), one that runs past its span overlaps the next allocation, "
              "and one off GE's 512-byte grain breaks the alignment the kernels and the block splitting assume. "
              "The spans and the blocks are read from the trace, the grain is GE's constant.",
    ge_source="runtime/v2/kernel/memory/type/mem_size.h (MEM_SIZE_ALIGN, MemSize_GetAlignedOf); "
              "runtime/v2/kernel/memory/caching_mem_allocator.cc (CachingMemAllocator::Malloc); "
              "runtime/v2/kernel/memory/allocator/scalable_allocator.cc (ScalableAllocator::Alloc, "
              "ScalableAllocator::FetchNewSpan)",
    applies_to="device", concern="allocator_blocks", predicate=_pool_blocks, precondition=_v2_blocks,
    needs=("allocator_events",),
)


INVARIANTS = (POOL_BLOCKS,)
