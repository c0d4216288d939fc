"""Helpers for claims over traces: who wrote where, which allocations are still live, what a call touched."""
from __future__ import annotations

import bisect
from typing import Iterable, Iterator

from zcspec.spec.invariants._shadow import call_bounds
from zcspec.spec.observables.execution import ExecutionObservation, UserBuffer
from zcspec.spec.observables.trace import Event, Range


def writes_into(events: Iterable[Event], buf: UserBuffer) -> Iterator[tuple[Event, int, int]]:
    """(event, start, end) for every write that touches ``buf``'s bytes."""
    if buf.address == 0 or buf.size <= 0:
        return
    for e in events:
        for r in e.written():
            if r.overlaps(buf.address, buf.size):
                yield e, r.address, r.end


def live_allocations(events: Iterable[Event], owners=("model", "runtime", "pool", "session")) -> dict[int, Event]:
    """Allocations of ``owners`` not freed by the end of ``events`` (the caller's are never counted), by address."""
    live: dict[int, Event] = {}
    for e in events:
        if e.kind == "alloc" and e.owner in owners and e.address is not None:
            live[e.address] = e
        elif e.kind == "free" and e.address is not None:
            live.pop(e.address, None)
    return live


def all_events(obs: ExecutionObservation) -> tuple[Event, ...]:
    """The load's trace followed by the execution's."""
    return obs.load.events + obs.events


def failed_calls(obs: ExecutionObservation) -> list[tuple[str, tuple[Event, ...]]]:
    """(call name, its events) for every call that ended with ok=False; when the trace marks no calls
    and the execution failed, the whole execution trace is the failed call."""
    out, start = [], None
    for i, e in enumerate(obs.events):
        if e.kind == "call_begin":
            start = i
        elif e.kind == "call_end" and start is not None:
            if e.ok is False:
                out.append((e.call or "call", obs.events[start:i + 1]))
            start = None
    marked = any(e.kind == "call_begin" for e in obs.events)
    if not marked and not obs.result.ok:
        out.append(("execute", obs.events))
    return out


def is_v1(obs: ExecutionObservation) -> bool:
    return obs.load.options.runtime == "v1"


def is_v2(obs: ExecutionObservation) -> bool:
    return obs.load.options.runtime == "v2"


def call_events(obs: ExecutionObservation) -> tuple[Event, ...]:
    """The execute call's own events: after its ``call_begin``, before its ``call_end``."""
    begin, end = call_bounds(obs.events)
    return obs.events[begin:end]


class Live:
    """Allocations live at a point of the trace (the caller's excluded), as sorted ``[start, end)`` with owners."""

    def __init__(self):
        self.starts: list[int] = []
        self.ends: dict[int, tuple[int, str]] = {}

    def apply(self, e: Event) -> None:
        if e.kind == "alloc" and e.owner != "user" and e.address is not None and e.size:
            if e.address not in self.ends:
                bisect.insort(self.starts, e.address)
            self.ends[e.address] = (e.address + e.size, e.owner)
        elif e.kind == "free" and e.address in self.ends:
            del self.ends[e.address]
            self.starts.remove(e.address)

    def owner(self, r: Range) -> str | None:
        """The owner of the one live allocation holding all of ``r`` (None: no such allocation)."""
        i = bisect.bisect_right(self.starts, r.address) - 1
        if i < 0:
            return None
        end, owner = self.ends[self.starts[i]]
        return owner if r.end <= end else None


def walk(obs: ExecutionObservation) -> Iterator[tuple[Event, Live]]:
    """Every event of the call with the allocations live at it, from the trace's alloc and free events alone
    (the load's, those before the call, the call's own): nothing here asks the device."""
    live = Live()
    for e in obs.load.events:
        live.apply(e)
    begin, end = call_bounds(obs.events)
    for e in obs.events[:begin]:
        live.apply(e)
    for e in obs.events[begin:end]:
        live.apply(e)
        yield e, live


def in_buffer(obs: ExecutionObservation, r: Range) -> bool:
    return any(b.address and b.address <= r.address and r.end <= b.address + b.size for b in obs.buffers)


def in_region(obs: ExecutionObservation, r: Range) -> bool:
    """Whether ``r`` lies inside memory the caller gave the model for this call (its work or weight memory,
    which the trace shows as the caller's allocations): ``obs.caller_memory`` as the caller gave it when the
    observer knows the caller's calls, else the model's bound regions. The model's own regions need no such
    rule: they are its allocations, live in the trace."""
    given = obs.caller_memory if obs.caller_memory is not None else tuple(g for g in obs.load.regions if g.backed)
    return any(g.size > 0 and g.address <= r.address and r.end <= g.address + g.size for g in given)


def accesses(obs: ExecutionObservation) -> Iterator[tuple[Event, str, Range, bool]]:
    """``(event, "read"|"write", range, inside)`` for every range a launch or copy of the call touched or,
    refused by the device, designated; ``inside`` says whether the range lies within one of the call's
    user buffers, one of the model's bound regions, or one allocation of the model or runtime live at
    that moment."""
    for e, live in walk(obs):
        if e.kind not in ("launch", "copy"):
            continue
        for what, ranges in (("read", e.read()), ("write", e.written())):
            for r in ranges:
                if r.size > 0:
                    yield e, what, r, in_buffer(obs, r) or live.owner(r) is not None or in_region(obs, r)
