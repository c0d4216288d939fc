"""Where runtime v1's active-memory allocator gets device memory: GE's blocks for each call, no more.

GE's ``ActiveMemoryAllocator::MallocMemory`` serves a model's logical feature-map pieces first out of the
blocks it already holds (``MallocByActiveMemorys``), then merges pieces contiguous both logically and in
memory, or both still without memory (``MergeBlocks``; never the zero-copy piece), then gives every
piece still without memory a device block of its own (``MallocActiveMemorys``: its size, rounded up to
``kDrvPageSize``, 2 MiB, when larger). So on an allocator that holds nothing, the device allocations of
one call are fixed by the pieces alone. The safety claims cannot see a different choice: more, smaller
blocks (no merging), or a block of the piece's size where GE rounds it, are memory like any other. The
claim reads the probe's own record of the pieces it passed (``active_requests``, written by the caller)
and the allocator's enter/exit and device allocations in the trace (``allocator_events``).
"""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants.allocator_threads import by_allocator
from zcspec.spec.observables.device import ActiveMemoryRequest, DeviceObservation

GE_ACTIVE = "runtime/v1/graph/manager/active_memory_allocator.cc"
DRV_PAGE = 2 << 20   # kDrvPageSize (active_memory_allocator.h)
ACTIVE = "v1 active memory#"   # the names of runtime v1's active-memory allocators in the trace


def ge_blocks(request: ActiveMemoryRequest) -> list[int]:
    """The sizes of the device blocks GE's MallocMemory makes for ``request`` on an allocator holding nothing,
    sorted: one per run of logically contiguous pieces that need memory (a zero-copy piece alone)."""
    runs: list[int] = []
    end = None
    for p in sorted(request.pieces, key=lambda p: p.offset):
        if not p.alloc:
            end = None
            continue
        if runs and not p.zero_copy and end == p.offset:
            runs[-1] += p.size
        else:
            runs.append(p.size)
        end = None if p.zero_copy else p.offset + p.size
    return sorted(max(n if n <= DRV_PAGE else -(-n // DRV_PAGE) * DRV_PAGE, 1) for n in runs)


def _calls(obs: DeviceObservation):
    """(allocator, enter event, its request, the allocations the call made, whether it returned an address) of
    every active-memory malloc_memory call made while its allocator held no device memory."""
    enters = [e for e in obs.allocator_events if e.kind == "enter" and e.call == "malloc_memory"
              and e.allocator.startswith(ACTIVE)]
    if len(enters) != len(obs.active_requests):   # not the probe's own record of these calls: nothing to pair
        return
    asked = dict(zip((e.seq for e in enters), obs.active_requests))
    for name, events in by_allocator(obs, "v1").items():
        live: set[int] = set()
        call = None
        for e in events:
            if e.kind == "enter" and e.seq in asked:
                call = (e, asked[e.seq], [], not live)
            elif e.kind == "alloc":
                live.add(e.address)
                if call is not None:
                    call[2].append(e.size)
            elif e.kind == "free":
                live.discard(e.address)
            elif e.kind in ("exit", "raise") and call is not None and e.call == "malloc_memory":
                if call[3]:
                    yield name, call[0], call[1], call[2], e.kind == "exit" and bool(e.address)
                call = None


def _active_blocks(obs: DeviceObservation):
    for name, enter, request, made, served in _calls(obs):
        want = ge_blocks(request)
        if not served and len(made) < len(want):   # out of device memory on the way: GE stops there too
            continue
        if sorted(made) != want:
            pieces = ", ".join(f"[{p.offset}, {p.offset + p.size})" + ("" if p.alloc else " no memory")
                               + (" zero copy" if p.zero_copy else "") for p in request.pieces)
            yield violation(f"{name} malloc_memory (event {enter.seq}, thread {enter.thread})",
                            f"made device blocks of {sorted(made)} bytes for pieces {pieces} on an allocator holding "
                            f"nothing; GE's MallocMemory makes {want} (contiguous pieces merged, each block above "
                            f"2 MiB rounded up to 2 MiB)", made=sorted(made), expected=want)


ACTIVE_BLOCKS = Invariant(
    id="V1-ACTIVE-MEMORY-BLOCKS",
    title="On an allocator holding nothing, a model's pieces get GE's blocks: merged, rounded to 2 MiB",
    statement="For every malloc_memory call to one of runtime v1's active-memory allocators while it holds no "
              "device memory, the device allocations the call makes are one per run of logically contiguous pieces "
              "that need memory (the zero-copy piece always alone), each the run's bytes, rounded up to 2 MiB when "
              "larger than 2 MiB; a call the device runs out of memory for may stop short.",
    rationale="GE merges contiguous pieces (MergeBlocks) so that a model's feature map is one block, and rounds "
              "large blocks to the driver's page so that the next model of the session fits in them "
              "(MallocActiveMemorys). An allocator that skips either still hands out enough memory, so no safety "
              "claim sees it; but the session then holds more, smaller blocks than GE's, and the next model's "
              "pieces no longer fit where GE puts them.",
    ge_source=GE_ACTIVE + " (ActiveMemoryAllocator::MallocMemory, MallocByActiveMemorys, MergeBlocks, "
              "MallocActiveMemorys)",
    applies_to="device", concern="allocator_active", predicate=_active_blocks,
    precondition=lambda obs: next(_calls(obs), None) is not None, needs=("active_requests",),
)

INVARIANTS = (ACTIVE_BLOCKS,)
