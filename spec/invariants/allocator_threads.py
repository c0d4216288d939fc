"""Allocator threads: who may call the runtimes' allocators at once, judged from the device trace.

GE's two dynamic-memory allocators make opposite promises. Runtime v1's session allocators
(``ActiveMemoryAllocator``, ``ExpandableActiveMemoryAllocator``) are "called from several threads"
and keep their state under a recursive mutex: concurrent calls must leave their accounting exact.
Runtime v2's ``ScalableAllocator`` page-span pool has no lock: it is correct only while one thread
at a time is inside it, and the executor that owns it must see to that. Both claims read the
observation's ``allocator_events`` alone: each call's enter and exit with its thread, and the
memory tagged with the allocator's name.
"""
from __future__ import annotations

from collections import defaultdict

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.observables.device import DeviceObservation

# A holder is taken by each of these calls that returns (GE's ActiveMemoryAllocator counts used_count_
# even when it returns nullptr; a call that raised took none) and given back by each free_memory call
# (never below zero: ``if (used_count_ > 0U) used_count_--``). A PhysicalMemoryAllocator's users are
# counted by Initialize and Finalize (ref_count_), the last Finalize giving its pages back.
_TAKES = frozenset({"malloc_memory", "initialize"})
_GIVES = frozenset({"free_memory", "finalize"})


def by_allocator(obs: DeviceObservation, runtime: str) -> dict[str, list]:
    """The allocator events of ``runtime``'s allocators, by allocator, in trace order."""
    out: dict[str, list] = defaultdict(list)
    for e in obs.allocator_events:
        if e.runtime == runtime:
            out[e.allocator].append(e)
    return out


def _threads(events) -> set[int]:
    return {e.thread for e in events if e.kind == "enter"}


# -- V1-ALLOCATOR-ACCOUNTING ----------------------------------------------------------------------

def _accounting(obs: DeviceObservation):
    for name, events in by_allocator(obs, "v1").items():
        holders, live, released = 0, {}, False
        for e in events:
            if e.kind in ("alloc", "reserve"):
                live[e.address] = e.size
            elif e.kind in ("free", "release"):
                released |= live.pop(e.address, None) is not None
            elif e.kind == "exit" and e.call in _TAKES | _GIVES:
                holders = holders + 1 if e.call in _TAKES else max(holders - 1, 0)
                if released and holders:
                    yield violation(f"{name} {e.call} (event {e.seq}, thread {e.thread})",
                                    f"released its memory while {holders} holder(s) still hold it",
                                    holders=holders)
                if e.call in _GIVES and not holders and live:
                    yield violation(f"{name} {e.call} (event {e.seq}, thread {e.thread})",
                                    f"left no holder but still holds {sum(live.values())} bytes in {len(live)} "
                                    "allocation(s)", live=sorted(live))
                released = False


def _v1_from_threads(obs: DeviceObservation) -> bool:
    return any(len(_threads(ev)) > 1 and any(e.call in _GIVES for e in ev)
               for ev in by_allocator(obs, "v1").values())


ACCOUNTING = Invariant(
    id="V1-ALLOCATOR-ACCOUNTING",
    title="Runtime v1's session allocators keep exact accounts under calls from several threads",
    statement="For each of runtime v1's session allocators and page pools, count its holders through the trace: each "
              "malloc_memory call that returns (not one that raised) takes one, each free_memory call that returns "
              "gives one back (none below zero); for a pool of physical pages, its initialize and finalize calls. "
              "Whatever threads made the calls, memory tagged with the allocator is released "
              "only by a call after which no holder is left, and a free_memory call after which no holder is left "
              "leaves none of its memory live.",
    rationale="Models of one session load and unload from different threads and share the allocator's memory; "
              "a lost update of its holder count frees memory another model still runs in, or leaks it. GE's "
              "recursive mutex is what makes the count exact; the claim recomputes it from the calls alone.",
    ge_source="runtime/v1/graph/manager/active_memory_allocator.h (\"called from several threads\", "
              "std::recursive_mutex mutex_); active_memory_allocator.cc ActiveMemoryAllocator::MallocMemory / "
              "FreeMemory (used_count_), ExpandableActiveMemoryAllocator::MallocMemory / FreeMemory, "
              "PhysicalMemoryAllocator::Initialize / Finalize (ref_count_)",
    applies_to="device", concern="allocator_threads", predicate=_accounting, precondition=_v1_from_threads,
    needs=("allocator_events",),
)


# -- V2-ALLOCATOR-ONE-THREAD ----------------------------------------------------------------------

def _one_thread(obs: DeviceObservation):
    for name, events in by_allocator(obs, "v2").items():
        inside: dict[int, list[str]] = defaultdict(list)   # thread -> its open calls
        for e in events:
            if e.kind == "enter":
                others = sorted(t for t, calls in inside.items() if calls and t != e.thread)
                if others:
                    yield violation(f"{name} {e.call} (event {e.seq}, thread {e.thread})",
                                    f"entered while thread {others[0]} is inside its {inside[others[0]][-1]}",
                                    thread=e.thread, inside=others[0])
                inside[e.thread].append(e.call)
            elif e.kind in ("exit", "raise") and inside[e.thread]:
                inside[e.thread].pop()


def _v2_from_threads(obs: DeviceObservation) -> bool:
    return any(len(_threads(ev)) > 1 for ev in by_allocator(obs, "v2").values())


ONE_THREAD = Invariant(
    id="V2-ALLOCATOR-ONE-THREAD",
    title="Runtime v2's caching allocator has one thread inside it at a time",
    statement="For each of runtime v2's caching allocators, no call enters it from one thread while a call from "
              "another thread has entered it and not yet returned; calls from several threads one after another "
              "are allowed.",
    rationale="The page-span pool has no lock: two threads inside it at once split the same free span or lose "
              "a merge. GE leaves the serialisation to its caller (the executor); the claim catches a caller "
              "that does not serialise.",
    ge_source="runtime/v2/kernel/memory/allocator/scalable_allocator.h (ScalableAllocator: span pool without a "
              "mutex); runtime/v2/kernel/memory/caching_mem_allocator.cc (CachingMemAllocator over it)",
    applies_to="device", concern="allocator_threads", predicate=_one_thread, precondition=_v2_from_threads,
    needs=("allocator_events",),
)


INVARIANTS = (ACCOUNTING, ONE_THREAD)
