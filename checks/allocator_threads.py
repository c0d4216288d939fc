"""A device probe's ``allocator_threads`` step: several host threads calling one runtime allocator.

Step: ``{"op": "allocator_threads", "allocator": A, "threads": k >= 2, "rounds": r >= 1, "sizes": [n, ...]}``.

- ``v1_active``: one runtime-v1 ``ActiveMemoryAllocator``; each thread, ``rounds`` times, takes it for a
  model of two feature-map pieces (``sizes`` cycled) and gives it back, as models of one session load
  and unload from different threads.
- ``v1_fixed_base``: one ``FixedBaseExpandableAllocator``; each thread mallocs a size and frees it.
- ``v2_caching``: one runtime-v2 ``CachingAllocator``; each thread mallocs a size and frees the block,
  every call behind one lock (what runtime v2's executor does); the allocator is closed at the end.

The threads start together (a barrier) so that their calls interleave. A call the device has no room
for is not an error of the step (the trace shows it: the exit returns no address), nor is a free the
device refuses (its fault is in the trace, for the device claims); any other exception is. V1-ALLOCATOR-ACCOUNTING and V2-ALLOCATOR-ONE-THREAD judge the trace.
"""
from __future__ import annotations

import contextlib
import threading

from zcspec.checks.errors import ScenarioError
from zcspec.impl.device import DeviceFault
from zcspec.impl.runtime.v1.active_memory import (
    ActiveMemoryAllocator, FixedBaseExpandableAllocator, LogicalMemoryBlock,
)
from zcspec.impl.runtime.v1.errors import MemoryAllocationError
from zcspec.impl.runtime.v2.allocators import CachingAllocator

ALLOCATORS = ("v1_active", "v1_fixed_base", "v2_caching")
_ROOM = (MemoryAllocationError, DeviceFault)   # the device had no room: shown in the trace, not an error


def _v1_active(allocator: ActiveMemoryAllocator, sizes, rounds: int, k: int) -> None:
    for r in range(rounds):
        a, b = sizes[(k + r) % len(sizes)], sizes[(k + r + 1) % len(sizes)]
        try:
            allocator.malloc_memory(f"thread {k}", [LogicalMemoryBlock(0, a), LogicalMemoryBlock(a, b)])
        except _ROOM:
            pass
        allocator.free_memory()


def _v1_fixed_base(allocator: FixedBaseExpandableAllocator, sizes, rounds: int, k: int) -> None:
    for r in range(rounds):
        try:
            block = allocator.malloc(sizes[(k + r) % len(sizes)])
        except _ROOM:
            continue   # GE counts a holder only when the malloc succeeds: nothing to give back
        allocator.free(block)


def _v2_caching(allocator: CachingAllocator, lock: threading.Lock, sizes, rounds: int, k: int) -> None:
    for r in range(rounds):
        with lock:
            try:
                block = allocator.malloc(sizes[(k + r) % len(sizes)], tag=f"thread {k}")
            except _ROOM:
                continue
        with lock:
            allocator.free(block)


def run_allocator_threads(dev, step: dict, where: str) -> None:
    """Run the step on ``dev`` (see the module doc); ScenarioError names a bad field."""
    kind, threads, rounds, sizes = step.get("allocator"), step.get("threads"), step.get("rounds"), step.get("sizes")
    if kind not in ALLOCATORS:
        raise ScenarioError(f"{where}: allocator={kind!r} must be one of {ALLOCATORS}", key=where)
    if not (isinstance(threads, int) and threads >= 2 and isinstance(rounds, int) and rounds >= 1):
        raise ScenarioError(f"{where}: threads={threads!r} must be an int >= 2 and rounds={rounds!r} >= 1", key=where)
    if not (isinstance(sizes, list) and sizes and all(isinstance(n, int) and n >= 1 for n in sizes)):
        raise ScenarioError(f"{where}: sizes={sizes!r} must be a non-empty list of ints >= 1", key=where)
    if kind == "v1_active":
        allocator = ActiveMemoryAllocator(dev)
        work = lambda k: _v1_active(allocator, sizes, rounds, k)  # noqa: E731
    elif kind == "v1_fixed_base":
        allocator = FixedBaseExpandableAllocator(dev)
        work = lambda k: _v1_fixed_base(allocator, sizes, rounds, k)  # noqa: E731
    else:
        allocator, lock = CachingAllocator(dev, name="probe"), threading.Lock()
        work = lambda k: _v2_caching(allocator, lock, sizes, rounds, k)  # noqa: E731
    with contextlib.suppress(DeviceFault):   # a free the device refused is in its trace, as every probe fault
        run_threads(work, threads)
        if kind == "v2_caching":
            allocator.close()


def run_threads(work, threads: int) -> None:
    """``work(k)`` on ``threads`` threads started together; the first exception is re-raised."""
    start, errors = threading.Barrier(threads), []

    def body(k: int) -> None:
        try:
            start.wait(timeout=30)
            work(k)
        except BaseException as e:  # noqa: BLE001 - re-raised below, in the caller's thread
            errors.append(e)

    pool = [threading.Thread(target=body, args=(k,), name=f"allocator thread {k}") for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
