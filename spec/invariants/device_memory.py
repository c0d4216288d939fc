"""Device memory: the emulated device refuses exactly the illegal accesses, mallocs and frees (device probes).

Every execution claim that a run "did not fault" trusts the device's own bounds check. This
concern checks that check from outside: a probe's accesses are judged legal or not from the
probe's ``alloc`` and ``free`` events alone, and the device must have refused exactly the
illegal ones, naming what is wrong with each; its allocator must refuse a malloc only when no
aligned gap fits or its arguments are wrong, and a free only when nothing live starts at its address. The kernel claims
are spec/invariants/device_kernels.py.
"""
from __future__ import annotations

import bisect

from zcspec.spec.capabilities import TABLE as _CAPABILITIES
from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.observables.device import DeviceObservation


class _Live:
    """The live allocations after each event (sorted starts, start -> (end, read_only)), and the freed
    ones whose memory no later allocation has taken (start -> end)."""

    def __init__(self):
        self.starts: list[int] = []
        self.info: dict[int, tuple[int, bool]] = {}
        self.freed: dict[int, int] = {}

    def alloc(self, address: int, size: int, read_only: bool) -> None:
        if address not in self.info:
            bisect.insort(self.starts, address)
        self.info[address] = (address + size, read_only)
        end = address + max(size, 1)
        self.freed = {a: e for a, e in self.freed.items() if e <= address or a >= end}

    def free(self, address: int) -> None:
        if address in self.info:   # a free of nothing live changes nothing (the device refuses it)
            self.starts.remove(address)
            self.freed[address] = self.info.pop(address)[0]

    def why_illegal(self, address: int, size: int, write: bool) -> str | None:
        """None when ``size`` bytes at ``address`` lie in one live allocation (writable, for a write)."""
        if size <= 0:
            return None   # zero bytes touch nothing
        i = bisect.bisect_right(self.starts, address) - 1
        if i < 0 or address >= self.info[self.starts[i]][0]:
            return "lies in no live allocation"
        start = self.starts[i]
        end, read_only = self.info[start]
        if address + size > end:
            return f"runs {address + size - end} bytes past the end of the live allocation at {start:#x}"
        if write and read_only:
            return f"writes the read-only allocation at {start:#x}"
        return None


    def fault(self, address: int, size: int, write: bool, memory) -> str:
        """The fault an illegal range deserves: ``read_only`` for a write inside a read-only allocation,
        ``out_of_bounds`` when it starts in a live allocation and runs past it, ``use_after_free`` when it
        starts in freed memory, ``unmapped`` outside the device's memory, else ``out_of_bounds``."""
        i = bisect.bisect_right(self.starts, address) - 1
        if i >= 0 and address < self.info[self.starts[i]][0]:
            end, read_only = self.info[self.starts[i]]
            return "read_only" if address + size <= end and write and read_only else "out_of_bounds"
        if any(a <= address < e for a, e in self.freed.items()):
            return "use_after_free"
        if memory is not None and not memory.address <= address < memory.end:
            return "unmapped"
        return "out_of_bounds"


def judged(obs: DeviceObservation):
    """(access event, [(range, write, why illegal, the fault it deserves)]) for every access, in order
    (a task's ranges in slot order: its reads, then its writes)."""
    live = _Live()
    for e in obs.events:
        if e.kind == "alloc":
            if e.refused is None and e.address is not None and e.size is not None:   # no known range: holds nothing
                live.alloc(e.address, e.size, e.read_only)
        elif e.kind == "free":
            if e.refused is None:   # a refused free released nothing
                live.free(e.address)
        else:
            bad = [(r, w, why, live.fault(r.address, r.size, w, obs.memory))
                   for rs, w in ((e.reads, False), (e.writes, True)) for r in rs
                   if (why := live.why_illegal(r.address, r.size, w)) is not None]
            yield e, bad


# -- DEVICE-BOUNDS ------------------------------------------------------------------------------

def _culprit(e) -> str:
    """An access by its seq and task; an access of no task is a synchronous copy by the host."""
    return f"access {e.seq} ({'synchronous copy' if e.task is None else f'task {e.task!r}'})"


def _bounds(obs: DeviceObservation):
    for e, bad in judged(obs):
        culprit = _culprit(e)
        if bad and e.refused is None:
            r, w, why, _ = bad[0]
            yield violation(culprit, f"ran, but its {'write' if w else 'read'} of {r.size} bytes at {r.address:#x} "
                            f"{why}", address=r.address, size=r.size, write=w)
        elif not bad and e.refused is not None:
            ranges = [(hex(r.address), r.size) for r in e.reads + e.writes]
            yield violation(culprit, f"was refused ({e.refused}) although every range it designated lies in a "
                            f"live allocation it may use: {ranges}", refused=e.refused)


def _tells_right_from_wrong(obs: DeviceObservation) -> bool:
    """A probe exercises the claim when it holds both a legal and an illegal access."""
    verdicts = {bool(bad) for _, bad in judged(obs)}
    return verdicts == {True, False}


BOUNDS = Invariant(
    id="DEVICE-BOUNDS",
    title="The device refuses exactly the illegal accesses",
    statement="A task's access, or a synchronous device-to-device copy's (Device.memcpy: it reads its source "
              "range and writes its destination range), is refused (a device fault) if and only if one of the "
              "ranges its slots designate is illegal: not inside one allocation that is live at that moment "
              "(allocated, not since freed), or a write into an allocation made read-only. A range of zero bytes "
              "is legal anywhere. (Read-only memory accepts one write, a synchronous host-to-device copy at load; "
              "probes make no copy touching host memory.)",
    rationale="EXEC-NO-FAULT and every claim that a run stayed in its memory rely on the device's bounds check: "
              "a check that lets an access run a few bytes past an allocation, or into freed memory, hides "
              "layout and refresh bugs. Legality is recomputed here from the allocation events alone.",
    ge_source="runtime/v1/graph/load/model_manager/model_utils.cc ModelUtils::ValidateMemRange (offset + size "
              "must not exceed the memory it lies in: 'memory out of range'); the device holds every access to "
              "that rule against its live allocations",
    applies_to="device", concern="device_memory", predicate=_bounds, precondition=_tells_right_from_wrong,
)


# -- DEVICE-FAULT-KIND --------------------------------------------------------------------------

def _fault_kind(obs: DeviceObservation):
    if obs.memory is None:
        return   # without the address space, unmapped cannot be told from out of bounds
    for e, bad in judged(obs):
        if bad and e.refused is not None and e.refused != bad[0][3]:
            r, w, why, want = bad[0]
            yield violation(_culprit(e), f"was refused as {e.refused}, but its first illegal "
                            f"range, the {'write' if w else 'read'} of {r.size} bytes at {r.address:#x}, {why}: "
                            f"that is {want}", refused=e.refused, expected=want)


def _refusal_kinds(obs: DeviceObservation) -> bool:
    """Exercised when the probe's refusals deserve at least two different faults."""
    return obs.memory is not None and len({bad[0][3] for e, bad in judged(obs) if bad and e.refused is not None}) >= 2


FAULT_KIND = Invariant(
    id="DEVICE-FAULT-KIND",
    title="A refused access names what is wrong with it",
    statement="The fault a refused access raises names its first illegal range (in slot order): read_only for a "
              "write inside a read-only allocation, out_of_bounds for a range that starts in a live allocation "
              "and runs past its end, use_after_free for one that starts in freed memory no later allocation "
              "took, unmapped for one outside the device's memory, out_of_bounds for any other.",
    rationale="A fault is a report an engineer reads to find the bug: a stale pointer reported as out of bounds, "
              "or an overrun as an unmapped access, points at the wrong culprit (the fault names the "
              "task and the address).",
    ge_source="runtime/v1/graph/load/model_manager/model_utils.cc ModelUtils::ValidateMemRange (the range check "
              "and its 'memory out of range' report); the fault kinds are the emulated device's "
              "(impl/device/errors.py FAULT_KINDS)",
    applies_to="device", concern="device_memory", predicate=_fault_kind, precondition=_refusal_kinds,
)


# -- DEVICE-ALLOC-FIT ---------------------------------------------------------------------------

def _align_up(value: int, align: int) -> int:
    return -(-value // align) * align


def _fitting_gap(live: dict[int, int], memory, size: int, align: int) -> tuple[int, int] | None:
    """The first gap of device memory between the live allocations (start -> end) in which ``size`` bytes
    fit at a multiple of ``align``, as (gap start, gap end); None when none does."""
    edge = memory.address
    for start in sorted(live) + [memory.end]:
        if _align_up(edge, align) + size <= min(start, memory.end):
            return edge, min(start, memory.end)
        edge = max(edge, live.get(start, start))
    return None


def _alloc_fit(obs: DeviceObservation):
    """Replays the probe's allocations and frees against the device's memory and the SoC's alignment."""
    memory, caps = obs.memory, _CAPABILITIES.get(obs.soc)
    if memory is None or caps is None:
        return
    align = caps.alloc_align
    live: dict[int, int] = {}    # start -> end of every live allocation
    freed: dict[int, int] = {}   # freed allocations no later allocation overlapped: start -> end
    for e in obs.events:
        if e.kind == "alloc" and e.refused is not None:
            culprit = f"malloc {e.seq} of {e.size} bytes"
            if e.refused != "out_of_memory":
                yield violation(culprit, f"was refused as {e.refused}, not out_of_memory", refused=e.refused)
            elif isinstance(e.size, int) and e.size > 0 and (gap := _fitting_gap(live, memory, e.size, align)):
                yield violation(culprit, f"was refused (out of memory), but the free gap [{gap[0]:#x}, {gap[1]:#x}) "
                                f"of {gap[1] - gap[0]} bytes holds {e.size} bytes at a multiple of {align}",
                                size=e.size, gap=gap)
        elif e.kind == "alloc" and e.address is not None and isinstance(e.size, int):
            culprit = f"malloc {e.seq} ({e.size} bytes at {e.address:#x})"
            end = e.address + max(e.size, 1)
            clash = next((s for s, t in live.items() if s < end and e.address < t), None)
            if e.address % align:
                yield violation(culprit, f"returned an address that is not a multiple of {align} (the SoC "
                                f"{obs.soc}'s allocation alignment)", address=e.address, align=align)
            if not memory.address <= e.address or end > memory.end:
                yield violation(culprit, f"lies outside device memory [{memory.address:#x}, {memory.end:#x})",
                                address=e.address)
            if clash is not None:
                yield violation(culprit, f"overlaps the live allocation [{clash:#x}, {live[clash]:#x})",
                                address=e.address, live=clash)
            live[e.address] = end
            freed = {a: t for a, t in freed.items() if t <= e.address or a >= end}
        elif e.kind == "free" and e.address is not None:
            culprit = f"free {e.seq} of {e.address:#x}"
            if e.refused is None:
                if e.address not in live:
                    yield violation(culprit, "released an address that starts no live allocation", address=e.address)
                else:
                    freed[e.address] = live.pop(e.address)
                continue
            want = "double_free" if e.address in freed else "invalid_free"
            if e.address in live:
                yield violation(culprit, f"was refused ({e.refused}), but it starts the live allocation "
                                f"[{e.address:#x}, {live[e.address]:#x})", refused=e.refused)
            elif e.refused != want:
                yield violation(culprit, f"was refused as {e.refused}, but the address "
                                + ("starts an allocation already freed: that is double_free" if want == "double_free"
                                   else "starts no allocation, live or freed: that is invalid_free"),
                                refused=e.refused, expected=want)


def _mallocs_both_ways(obs: DeviceObservation) -> bool:
    """Exercised when the SoC and memory are known and the probe has a malloc that got memory, one refused,
    and a refused free."""
    if obs.memory is None or obs.soc not in _CAPABILITIES:
        return False
    seen = {(e.kind, e.refused is None) for e in obs.events if e.kind in ("alloc", "free")}
    return {("alloc", True), ("alloc", False), ("free", False)} <= seen


ALLOC_FIT = Invariant(
    id="DEVICE-ALLOC-FIT",
    title="A malloc is refused exactly when no aligned gap fits, and a free exactly when nothing live starts there",
    statement="Replaying a probe's allocations and frees against the device's memory (its base and capacity) and "
              "the SoC's allocation alignment (spec/capabilities.py alloc_align): a malloc that returns memory "
              "returns an address that is a multiple of the alignment, whose bytes lie inside device memory and "
              "overlap no live allocation; a malloc is refused, as out_of_memory, only when no gap between the "
              "live allocations holds its size at a multiple of the alignment. A free releases the allocation "
              "starting at its address; it is refused when no live allocation starts there, as double_free when "
              "an allocation freed earlier (and not since overlapped) starts there, else as invalid_free. A freed "
              "allocation's bytes are free again: a later malloc they can hold must not be refused.",
    rationale="Every plan, load and execution claim trusts the device's allocator: one that refuses a malloc "
              "a fragmented memory still has room for (a gap search off by one alignment unit, a free that "
              "does not give its bytes back) makes a runtime fail loads that GE runs, and one that hands out "
              "overlapping or misaligned blocks corrupts tensors silently. Which mallocs fit is recomputed here "
              "from the allocation events, the capacity and the spec's alignment, never asked of the device.",
    ge_source="runtime/v1/graph/manager/caching_allocator.cc CachingAllocator::Malloc (FindFreeBlock, then "
              "TryExtendCache: nullptr only when neither a cached block nor the device has room; GetBlockSize "
              "rounds every block to kRoundBlockSize, 512 bytes, so blocks split from one region start at multiples "
              "of 512), CachingAllocator::Free (an address not in allocated_blocks_ fails: 'Param ptr not "
              "allocated before') and CachingAllocator::FreeBlock (a freed block merges with its free neighbours, "
              "MergeBlocks); the fault kinds are the emulated device's (impl/device/errors.py FAULT_KINDS)",
    applies_to="device", concern="device_memory", predicate=_alloc_fit, precondition=_mallocs_both_ways,
)



# -- DEVICE-COUNTERS-TRUE ---------------------------------------------------------------------

# What a probe's events count, and the device counter that must say the same.
_PROBE_COUNTED = {
    "faults": "faults (refused accesses, mallocs and frees)",
    "tasks_executed": "tasks run (launches the device did not refuse, collectives included)",
    "alloc_calls": "device mallocs that got memory",
    "free_calls": "frees that released memory",
}


def probe_counts(obs: DeviceObservation) -> dict[str, int]:
    """The probe's counts as the spec takes them from its events: each refusal is one fault, each access the
    device did not refuse one task run (an access of no task, a synchronous copy by the host, is no task), each
    malloc and free that went through one call."""
    return {"faults": sum(1 for e in obs.events if e.refused is not None),
            "tasks_executed": sum(1 for e in obs.events if e.kind == "access" and e.task is not None
                                  and e.refused is None),
            "alloc_calls": sum(1 for e in obs.events if e.kind == "alloc" and e.refused is None),
            "free_calls": sum(1 for e in obs.events if e.kind == "free" and e.refused is None)}


def _probe_counters_true(obs: DeviceObservation):
    if not obs.counters:   # not transcribed (a hand-written or another device's observation): nothing to compare
        return
    seen = probe_counts(obs)
    for key, what in _PROBE_COUNTED.items():
        said = obs.counters.get(key)
        if said is not None and said != seen[key]:   # a counter the device does not keep is not judged
            yield violation(f"counter {key!r}", f"the device's counters report {said} {what}; its trace shows "
                            f"{seen[key]}", counted=said, traced=seen[key])


COUNTERS_TRUE = Invariant(
    id="DEVICE-COUNTERS-TRUE",
    title="A device's counters are what its trace shows: faults, tasks run, mallocs and frees",
    statement="Over a probe program on a fresh device, each of these counters the device keeps equals the count "
              "of the probe's events: faults, one per refused access, malloc or free; tasks executed, one per access "
              "the device did not refuse (kernels, memset tasks and collectives alike); mallocs and frees that "
              "went through. A synchronous copy by the host (an access of no task) is no task run.",
    rationale="`zcspec run` and the benchmarks report these counters, and a test that the device faulted reads "
              "them: a device that runs a collective or refuses an access without counting it reports a clean "
              "run where its trace shows otherwise. EXEC-COUNTERS-TRUE holds an execution's copy, launch and "
              "argument counters to the trace; this holds the rest of the device's accounts, recounted from the "
              "probe's events, never taken from the device.",
    ge_source="(zcspec) emulated NPU: the counters stand for the profiling counts a GE execution's tasks and the "
              "runtime's rtMalloc/rtFree calls would show",
    applies_to="device", concern="device_memory", predicate=_probe_counters_true,
    precondition=lambda obs: bool(obs.counters),
)


# -- DEVICE-MALLOC-ARGS ---------------------------------------------------------------------------

USAGE_ERROR = "DeviceUsageError"   # the emulated device's refusal of a call's arguments (impl/device/errors.py)


def _bad_arguments(size: int, align: int | None) -> str:
    """What is wrong with a malloc's arguments, as the rule reads them; '' when nothing."""
    if size <= 0:
        return f"a size of {size} bytes (not positive)"
    if align is not None and (align <= 0 or align & (align - 1)):
        return f"an alignment of {align} (not a power of two)"
    return ""


def _malloc_args(obs: DeviceObservation):
    for c in obs.malloc_calls:
        bad, culprit = _bad_arguments(c.size, c.align), f"malloc step {c.step}"
        if bad and c.address is not None:
            yield violation(culprit, f"asked for {bad} and got memory at {c.address:#x}: it must be refused",
                            size=c.size, align=c.align, address=c.address)
        elif bad and c.raised != USAGE_ERROR:
            yield violation(culprit, f"asked for {bad} and was refused with {c.raised}, not the usage error "
                            f"({USAGE_ERROR}) that says the arguments are wrong", raised=c.raised)
        elif not bad and c.raised == USAGE_ERROR:
            yield violation(culprit, f"asked for {c.size} bytes" + (f" at an alignment of {c.align}" if c.align
                            else "") + f", which are valid arguments, and was refused as a usage error: {c.message}",
                            size=c.size, align=c.align)
        elif not bad and c.address is not None and c.align and c.address % c.align:
            yield violation(culprit, f"asked for an alignment of {c.align} and got {c.address:#x}, not a multiple "
                            "of it", address=c.address, align=c.align)


def _malloc_args_both_ways(obs: DeviceObservation) -> bool:
    """Exercised when the probe made a malloc with valid arguments and one with bad ones."""
    return {bool(_bad_arguments(c.size, c.align)) for c in obs.malloc_calls} >= {True, False}


MALLOC_ARGS = Invariant(
    id="DEVICE-MALLOC-ARGS",
    title="A malloc is refused for its arguments exactly when its size is not positive or its alignment not a power of two",
    statement="Of a probe's malloc calls, as the probe made them: one asking for a size that is not positive, or "
              "for an alignment that is not a power of two, is refused with the device's usage error "
              "(DeviceUsageError) and returns no address; one with a positive size and no alignment or a power of "
              "two is never refused as a usage error (it gets memory or, when none fits, an out-of-memory fault: "
              "DEVICE-ALLOC-FIT), and the address it gets is a multiple of the alignment it asked for.",
    rationale="A malloc of 0 or a negative number of bytes that returns an address hands the caller a block "
              "that overlaps the next one (every later access through it is out of bounds by construction); one "
              "that ignores an alignment it cannot honour misaligns every tensor placed by it. The ACL facade "
              "checks the size before the device does (the ACL refusal cases), so only a probe that calls the "
              "device itself sees the device's own check: a device whose check lost one of its conditions "
              "passed every other claim.",
    ge_source="ACL's aclrtMalloc (size 0: ACL_ERROR_INVALID_PARAM, aclError.md); the alignment argument and its "
              "refusal are the emulated device's (impl/device/memory.py AddressSpace.malloc, DeviceUsageError)",
    applies_to="device", concern="device_memory", predicate=_malloc_args, precondition=_malloc_args_both_ways,
)


INVARIANTS = (BOUNDS, FAULT_KIND, ALLOC_FIT, MALLOC_ARGS, COUNTERS_TRUE)
