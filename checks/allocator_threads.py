"""A device probe's ``allocator_threads`` step: several host threads calling one runtime allocator.

Step: ``{"op": "allocator_threads", "allocator": A, "threads": k >= 2, "rounds": r >= 1, "sizes": [n, ...]}``.

- ``v1_active``: one runtime-v1 ``ActiveMemoryAllocator``; each thread, ``rounds`` times, takes it for a
  model of two feature-map pieces (``sizes`` cycled) and gives it back, as models of one session load
  and unload from different threads.
- ``v1_fixed_base``: one ``FixedBaseExpandableAllocator``; each thread mallocs a size and frees it.
- ``v2_caching``: one runtime-v2 ``CachingAllocator``; each thread mallocs a size and frees the block,
  every call behind one lock (what runtime v2's executor does); the allocator is closed at the end.

The threads take turns, one allocator call each in round-robin order (thread 0's first call, thread
1's first, ..., thread 0's second, ...): every thread's calls run on its own host thread and the
holders of different threads overlap, yet the trace is the same on every run, so verify's artefacts
stay reproducible. True simultaneity (a call entering while another is inside) is what the planted
races of tests/spec/test_allocator_threads.py exercise. A call the device has no room
for is not an error of the step (the trace shows it: the exit returns no address), nor is a free the
device refuses (its fault is in the trace, for the device claims); any other exception is. V1-ALLOCATOR-ACCOUNTING and V2-ALLOCATOR-ONE-THREAD judge the trace;
V1-ACTIVE-MEMORY-BLOCKS judges it against the pieces each ``v1_active`` call passed, which the step records
as it passes them (``active_requests``).
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
from zcspec.spec.observables.device import ActiveMemoryRequest, LogicalPiece

ALLOCATORS = ("v1_active", "v1_fixed_base", "v2_caching")
_ROOM = (MemoryAllocationError, DeviceFault)   # the device had no room: shown in the trace, not an error


class Turns:
    """Round-robin turns among ``threads`` threads: ``with turns.mine(k):`` waits for thread k's turn and
    passes it on after; ``done(k)`` takes a thread that has no call left out of the round."""

    def __init__(self, threads: int):
        self._cv = threading.Condition()
        self._turn, self._left = 0, set(range(threads))

    @contextlib.contextmanager
    def mine(self, k: int):
        with self._cv:
            if not self._cv.wait_for(lambda: self._turn == k, timeout=30):
                raise TimeoutError(f"allocator thread {k} never got its turn")
        try:
            yield
        finally:
            self._pass(k)

    def done(self, k: int) -> None:
        with self._cv:
            self._left.discard(k)
        self._pass(k)

    def _pass(self, k: int) -> None:
        with self._cv:
            if self._turn == k and self._left:
                n = max(self._left) + 1
                self._turn = next(j % n for j in range(k + 1, k + 1 + n) if j % n in self._left)
            self._cv.notify_all()


def _v1_active(allocator: ActiveMemoryAllocator, sizes, rounds: int, k: int, turns: Turns, asked: list) -> None:
    for r in range(rounds):
        a, b = sizes[(k + r) % len(sizes)], sizes[(k + r + 1) % len(sizes)]
        with turns.mine(k), contextlib.suppress(*_ROOM):
            asked.append(ActiveMemoryRequest((LogicalPiece(0, a), LogicalPiece(a, b))))   # in turn: call order
            allocator.malloc_memory(f"thread {k}", [LogicalMemoryBlock(0, a), LogicalMemoryBlock(a, b)])
        with turns.mine(k):
            allocator.free_memory()


def _v1_fixed_base(allocator: FixedBaseExpandableAllocator, sizes, rounds: int, k: int, turns: Turns) -> None:
    for r in range(rounds):
        block = None
        with turns.mine(k), contextlib.suppress(*_ROOM):
            block = allocator.malloc(sizes[(k + r) % len(sizes)])
        if block is not None:   # GE counts a holder only when the malloc succeeds: else nothing to give back
            with turns.mine(k):
                allocator.free(block)


def _v2_caching(allocator: CachingAllocator, lock: threading.Lock, sizes, rounds: int, k: int, turns: Turns) -> None:
    for r in range(rounds):
        block = None
        with turns.mine(k), lock, contextlib.suppress(*_ROOM):
            block = allocator.malloc(sizes[(k + r) % len(sizes)], tag=f"thread {k}")
        if block is not None:
            with turns.mine(k), lock:
                allocator.free(block)


def run_allocator_threads(dev, step: dict, where: str) -> tuple[ActiveMemoryRequest, ...]:
    """Run the step on ``dev`` (see the module doc); ScenarioError names a bad field. Returns what it asked of a
    v1 active-memory allocator, call by call, as it asked it (the observation's ``active_requests``)."""
    kind, threads, rounds, sizes = step.get("allocator"), step.get("threads"), step.get("rounds"), step.get("sizes")
    if kind not in ALLOCATORS:
        raise ScenarioError(f"{where}: allocator={kind!r} must be one of {ALLOCATORS}", key=where)
    if not (isinstance(threads, int) and threads >= 2 and isinstance(rounds, int) and rounds >= 1):
        raise ScenarioError(f"{where}: threads={threads!r} must be an int >= 2 and rounds={rounds!r} >= 1", key=where)
    if not (isinstance(sizes, list) and sizes and all(isinstance(n, int) and n >= 1 for n in sizes)):
        raise ScenarioError(f"{where}: sizes={sizes!r} must be a non-empty list of ints >= 1", key=where)
    turns, asked = Turns(threads), []
    if kind == "v1_active":
        allocator = ActiveMemoryAllocator(dev)
        calls = lambda k: _v1_active(allocator, sizes, rounds, k, turns, asked)  # noqa: E731
    elif kind == "v1_fixed_base":
        allocator = FixedBaseExpandableAllocator(dev)
        calls = lambda k: _v1_fixed_base(allocator, sizes, rounds, k, turns)  # noqa: E731
    else:
        # not "probe": the probe tags its own memory "probe ...", which would read as this allocator's
        allocator, lock = CachingAllocator(dev, name="probe pool"), threading.Lock()
        calls = lambda k: _v2_caching(allocator, lock, sizes, rounds, k, turns)  # noqa: E731

    def work(k: int) -> None:
        try:
            calls(k)
        finally:
            turns.done(k)

    with contextlib.suppress(DeviceFault):   # a free the device refused is in its trace, as every probe fault
        run_threads(work, threads)
        if kind == "v2_caching":
            allocator.close()
    return tuple(asked)


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
