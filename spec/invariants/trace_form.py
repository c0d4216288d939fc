"""Trace form: the traces the other claims read are ones a device can record (applies to executions and probes).

Every claim that orders two happenings orders them by their place in the trace, and names an event by its
``seq``; every claim about memory reads addresses and sizes. A transcription that numbers two events alike,
numbers them out of order, or gives a happening an address or a size below zero (a default standing in for
"none") is one those claims misread silently: an overrun judged against the wrong allocation, a free
matched to no alloc, a report naming the wrong event. These claims hold the transcription itself, from the
observation alone: within each list of events, ``seq`` strictly increases, and no address, size or range
is negative.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.observables.device import DeviceObservation
from zcspec.spec.observables.execution import ExecutionObservation

SOURCE = ("runtime's trace records (the profiler's task and memory records: one record per happening, in the "
          "order the device saw them); the claims' own contract, spec/observables/trace.py")
_NUMBERS = ("address", "size", "src", "dst")


def _breaches(where: str, events: Iterable) -> Iterator[tuple[str, str]]:
    """(culprit, why) for every event of ``events`` out of order or with a negative number."""
    last = None
    for k, e in enumerate(events):
        culprit = f"{where}[{k}] ({e.kind}, seq {e.seq})"
        if last is not None and e.seq <= last:
            yield culprit, f"is numbered {e.seq} after an event numbered {last}: seq must increase along the trace"
        last = e.seq
        for field in _NUMBERS:
            value = getattr(e, field, None)
            if value is not None and value < 0:
                yield culprit, f"has {field}={value}: an address or size is never negative"
        for kind in ("reads", "writes"):
            for r in getattr(e, kind, ()):
                if r.address < 0 or r.size < 0:
                    yield culprit, f"{kind} [{r.address}, +{r.size}): a range's address and size are never negative"


def _execution(obs: ExecutionObservation):
    for where, events in (("load.events", obs.load.events), ("events", obs.events)):
        for culprit, why in _breaches(where, events):
            yield violation(culprit, why)


def _device(obs: DeviceObservation):
    for where, events in (("events", obs.events), ("allocator_events", obs.allocator_events)):
        for culprit, why in _breaches(where, events):
            yield violation(culprit, why)


EXECUTION_TRACE = Invariant(
    id="TRACE-FORM",
    title="An execution's trace numbers its events in order, with no negative address or size",
    statement="In an execution's observation, the load's events and the call's events each carry seq numbers "
              "that strictly increase in the order listed, and no event has a negative address, size, source, "
              "destination or read or written range.",
    rationale="The other claims order happenings by their place in the trace and name events by seq: two "
              "events at one number, or one numbered before its predecessor, make an overrun look like an "
              "access to a later allocation and a report name the wrong event; a negative address is a "
              "transcription's placeholder for 'none' that the memory claims would read as an address.",
    ge_source=SOURCE, applies_to="execution", concern="trace_form", predicate=_execution,
    precondition=lambda obs: bool(obs.events or obs.load.events),
)

DEVICE_TRACE = Invariant(
    id="DEVICE-TRACE-FORM",
    title="A probe's trace numbers its events in order, with no negative address or size",
    statement="In a device probe's observation, the device's events and the runtime allocators' events each "
              "carry seq numbers that strictly increase in the order listed, and none has a negative address, "
              "size or read or written range.",
    rationale="The device and allocator claims match allocations to frees and calls to their exits by their "
              "place in the trace; a negative address stands for 'none' in a transcription that lost the "
              "difference, and the claims would take it for a block outside every span or allocation.",
    ge_source=SOURCE, applies_to="device", concern="trace_form", predicate=_device,
    precondition=lambda obs: bool(obs.events or obs.allocator_events),
)

INVARIANTS = (EXECUTION_TRACE, DEVICE_TRACE)
