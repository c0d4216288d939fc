"""Helpers for claims over traces: who wrote where, which allocations are still live."""
from __future__ import annotations

from typing import Iterable, Iterator

from zcspec.spec.observables.execution import ExecutionObservation, UserBuffer
from zcspec.spec.observables.trace import Event


def writes_into(events: Iterable[Event], buf: UserBuffer) -> Iterator[tuple[Event, int, int]]:
    """(event, start, end) for every write that touches ``buf``'s bytes."""
    if buf.address == 0 or buf.size <= 0:
        return
    for e in events:
        for r in e.written():
            if r.overlaps(buf.address, buf.size):
                yield e, r.address, r.end


def live_allocations(events: Iterable[Event]) -> dict[int, Event]:
    """Allocations not freed by the end of ``events`` (user buffers excluded), by address."""
    live: dict[int, Event] = {}
    for e in events:
        if e.kind == "alloc" and e.owner != "user" and e.address is not None:
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
