"""Examples for the allocator claims: two contiguous pieces given one block, or one each; two threads taking and giving back a v1 session allocator's
memory (the last one frees it, or the first one does while the other still holds it); two threads calling a
v2 caching allocator one after the other, or the second entering while the first is inside; a v2 caching
allocator's second block on its 512-byte grain, or off it."""
from __future__ import annotations

from zcspec.spec.examples.build import Example
import attrs

from zcspec.spec.observables.device import ActiveMemoryRequest, AllocatorEvent, DeviceObservation, LogicalPiece

_V1 = "v1 active memory#1"
_V2 = "model hbm#1"
_BLOCK = 0x1_0000_0000_0000


def _observation(name: str, rows) -> DeviceObservation:
    events = tuple(AllocatorEvent(i, kind, allocator, runtime, **fields)
                   for i, (kind, allocator, runtime, fields) in enumerate(rows))
    return DeviceObservation(name, (), allocator_events=events)


def _call(allocator, runtime, call, thread):
    return [("enter", allocator, runtime, {"call": call, "thread": thread}),
            ("exit", allocator, runtime, {"call": call, "thread": thread})]


def _v1(first_free_releases: bool) -> DeviceObservation:
    """Threads 1 and 2 each take the allocator (thread 1's call allocates a 4 KiB block), then give it back."""
    alloc = ("alloc", _V1, "v1", {"address": _BLOCK, "size": 4096})
    free = ("free", _V1, "v1", {"address": _BLOCK})
    take1 = _call(_V1, "v1", "malloc_memory", 1)
    rows = [take1[0], alloc, take1[1], *_call(_V1, "v1", "malloc_memory", 2)]
    give1, give2 = _call(_V1, "v1", "free_memory", 1), _call(_V1, "v1", "free_memory", 2)
    if first_free_releases:
        rows += [give1[0], free, give1[1], *give2]
    else:
        rows += [*give1, give2[0], free, give2[1]]
    return _observation("v1 allocator from two threads", rows)


def _merged(blocks) -> DeviceObservation:
    """Thread 1 asks for two contiguous pieces of 1 KiB and 3 KiB on an allocator holding nothing; its device
    allocations have ``blocks`` sizes."""
    rows = [("enter", _V1, "v1", {"call": "malloc_memory", "thread": 1, "size": 4096})]
    rows += [("alloc", _V1, "v1", {"address": _BLOCK + (k << 16), "size": n}) for k, n in enumerate(blocks)]
    rows += [("exit", _V1, "v1", {"call": "malloc_memory", "thread": 1, "address": _BLOCK})]
    request = ActiveMemoryRequest((LogicalPiece(0, 1024), LogicalPiece(1024, 3072)))
    return attrs.evolve(_observation("v1 active memory pieces", rows), active_requests=(request,))


def _pool(offset: int) -> DeviceObservation:
    """A v2 caching allocator takes a 2 MiB span and hands out a 512-byte block, then a 1000-byte one at
    ``offset`` from the span's start."""
    enter = ("enter", _V2, "v2", {"call": "malloc", "thread": 1, "size": 1000})
    rows = [("enter", _V2, "v2", {"call": "malloc", "thread": 1, "size": 512}),
            ("alloc", _V2, "v2", {"address": _BLOCK, "size": 2 << 20}),
            ("exit", _V2, "v2", {"call": "malloc", "thread": 1, "address": _BLOCK}),
            enter, ("exit", _V2, "v2", {"call": "malloc", "thread": 1, "address": _BLOCK + offset})]
    return _observation("v2 allocator blocks", rows)


def _second_span() -> DeviceObservation:
    """As ``_pool(512)``, but the second malloc takes a new span although the first has 2 MiB - 512 free."""
    rows = list(_pool(512).allocator_events)
    rows = [(e.kind, e.allocator, e.runtime, {k: v for k, v in (("call", e.call), ("thread", e.thread),
             ("address", e.address), ("size", e.size)) if v is not None}) for e in rows]
    rows.insert(4, ("alloc", _V2, "v2", {"address": _BLOCK + (4 << 20), "size": 2 << 20}))
    rows[-1] = ("exit", _V2, "v2", {"call": "malloc", "thread": 1, "address": _BLOCK + (4 << 20)})
    return _observation("v2 allocator blocks", rows)


def _v2(overlapping: bool) -> DeviceObservation:
    one, two = _call(_V2, "v2", "malloc", 1), _call(_V2, "v2", "malloc", 2)
    rows = [one[0], two[0], one[1], two[1]] if overlapping else [*one, *two]
    return _observation("v2 allocator from two threads", rows)


EXAMPLES = (
    Example("V1-ALLOCATOR-ACCOUNTING", _v1(False), _v1(True),
            culprit=f"{_V1} free_memory (event 7, thread 1)",
            why="thread 1's free released the block while thread 2 still held the allocator (a lost holder count)"),
    Example("V1-ACTIVE-MEMORY-BLOCKS", _merged([4096]), _merged([1024, 3072]),
            culprit=f"{_V1} malloc_memory (event 0, thread 1)",
            why="the two contiguous pieces got a block each; GE's MergeBlocks makes them one 4 KiB block"),
    Example("V2-POOL-CACHED", _pool(512), _second_span(),
            culprit=f"{_V2} malloc (event 3, thread 1)",
            why="the second malloc took a new 2 MiB span for 1024 bytes while the first span had 2096640 free"),
    Example("V2-ALLOCATOR-ONE-THREAD", _v2(False), _v2(True),
            culprit=f"{_V2} malloc (event 1, thread 2)",
            why="thread 2 entered the allocator while thread 1 was inside its malloc"),
    Example("V2-POOL-BLOCKS", _pool(512), _pool(500),
            culprit=f"{_V2} malloc (event 4, thread 1)",
            why="the second block starts 500 bytes into its span, off GE's 512-byte grain (it overlaps the first)"),
)
