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


# -- V2-POOL-CACHED -------------------------------------------------------------------------------

HUGE_PAGE = 2 << 20        # GE: runtime/v2/kernel/memory/config/default_config.h (the huge page of a span)
NO_CACHE_SPAN = 16 << 30   # default_config.h: a span above it goes back to the device once free
_RELEASING = frozenset({"empty_cache", "close"})


def _span_size(need: int) -> int:
    """The span ScalableAllocator fetches for an aligned request: whole huge pages, at least one."""
    return max(HUGE_PAGE, -(-need // HUGE_PAGE) * HUGE_PAGE)


def _largest_free(spans: dict[int, int], blocks: dict[int, int]) -> int:
    """The largest run of bytes of one span that no live block covers."""
    best = 0
    for start, n in spans.items():
        cursor = start
        for addr in sorted(a for a in blocks if start <= a < start + n):
            best = max(best, addr - cursor)
            cursor = max(cursor, addr + blocks[addr])
        best = max(best, start + n - cursor)
    return best


def _where(name: str, call, e) -> str:
    """The culprit of a breach at event ``e``: the allocator's call it happens in (or the event itself)."""
    if call is None:
        return f"{name} outside any call (event {e.seq})"
    return f"{name} {call.call} (event {call.seq}, thread {call.thread})"


def _cache_breaches(obs: DeviceObservation):
    for name, events in by_allocator(obs, "v2").items():
        spans: dict[int, int] = {}
        blocks: dict[int, int] = {}    # live block address -> its aligned size
        call, fit, closed = None, 0, False
        for e in events:
            if e.kind == "enter":
                call, fit = e, _largest_free(spans, blocks)
                if e.call == "free" and e.address is not None:
                    blocks.pop(e.address, None)
            elif e.kind == "alloc" and e.address is not None:
                if call is not None and call.call == "malloc":
                    need = _aligned(call.size or 0)
                    if fit >= need:
                        yield violation(_where(name, call, e), f"took a new {e.size}-byte span from the device for {need} bytes "
                                        f"while a span it holds had {fit} free bytes in one piece",
                                        need=need, free=fit)
                    elif e.size != _span_size(need):
                        yield violation(_where(name, call, e), f"took a {e.size}-byte span for {need} bytes; GE's span is "
                                        f"{_span_size(need)} (whole 2 MiB huge pages, at least one)",
                                        span=e.size, expected=_span_size(need))
                spans[e.address] = e.size or 0
            elif e.kind == "free" and e.address is not None:
                n = spans.pop(e.address, 0)
                by_cache = call is not None and (call.call in _RELEASING or (call.call == "free" and closed))
                if not by_cache and n <= NO_CACHE_SPAN:
                    yield violation(_where(name, call, e), f"gave its {n}-byte span at {e.address:#x} back to the device while "
                                    f"its cache was neither emptied nor closed", span=n)
            elif e.kind in ("exit", "raise"):
                if e.kind == "exit" and e.call == "malloc" and e.address and call is not None:
                    blocks[e.address] = _aligned(call.size or 0)
                elif e.call == "malloc" and call is not None and fit >= _aligned(call.size or 0):
                    yield violation(_where(name, call, e), f"returned no block for {_aligned(call.size or 0)} bytes while a span "
                                    f"it holds had {fit} free bytes in one piece", need=_aligned(call.size or 0),
                                    free=fit)
                closed |= e.call == "close"
                call = None


def _v2_calls(obs: DeviceObservation) -> bool:
    return any(e.runtime == "v2" and e.kind == "enter" and e.call == "malloc" for e in obs.allocator_events)


POOL_CACHED = Invariant(
    id="V2-POOL-CACHED",
    title="Runtime v2's caching allocator takes a span only when none it holds can serve, and keeps it",
    statement="For every malloc of one of runtime v2's caching allocators that takes device memory or returns no "
              "block, no span it held when the call entered had as many free bytes in one piece (a span's bytes no live block "
              "covers; a block is the request rounded up to 512 bytes, from the malloc's return to the free that "
              "hands it back) as the rounded request, and the span it takes is that request in whole 2 MiB huge "
              "pages, at least one. A span of at most 16 GiB goes back to the device only in empty_cache or "
              "close, or in a free after close.",
    rationale="Caching is the allocator's reason to exist: GE's CachingMemAllocator serves a request from the "
              "spans it already holds and fetches a new one only when none can, so that steady-state executions "
              "make no device malloc at all. An allocator that fetches anyway, fetches spans of its own size, or "
              "gives spans back early still hands out valid blocks, so no safety claim sees it; the device "
              "mallocs per execution and the memory held are not GE's.",
    ge_source="runtime/v2/kernel/memory/caching_mem_allocator.cc (CachingMemAllocator::Malloc, Recycle, "
              "Finalize); runtime/v2/kernel/memory/allocator/scalable_allocator.cc (ScalableAllocator::Alloc, "
              "Free, FetchNewSpan); runtime/v2/kernel/memory/config/default_config.h",
    applies_to="device", concern="allocator_blocks", predicate=_cache_breaches, precondition=_v2_calls,
    needs=("allocator_events",),
)

INVARIANTS = (POOL_BLOCKS, POOL_CACHED)
