"""The device trace as the spec's events: the one transcription both runtimes' observers call.

``spec_events(trace, span, names, first_seq=0)`` turns the device events at positions
``[begin, end)`` of ``trace`` into :class:`zcspec.spec.observables.trace.Event` s numbered
from ``first_seq``; ``spec_event(e, seq, names)`` does one. This transcribes and
decides nothing: each device event becomes the spec event of the same happening, its
addresses, sizes and stream copied over. What the trace says in the runtime's own words
(device task names, allocation tags, which tensor a task's argument slot holds in the
model file) is translated through :class:`TraceNames`, plain
data the runtime's observer supplies.

=================  ==========================================================================
device event       spec event
=================  ==========================================================================
``Alloc``          ``alloc``: address, size, owner (from the tag), purpose (the tag), space
``Free``           ``free``: address
``Copy``           ``copy``: direction, src, dst, size, stream (which I/O a copy moves is the spec's to tell,
                   from the addresses: a runtime's word for it is not transcribed)
``ArgWrite``       ``arg_write``: task, slot, value
``Launch``         ``launch``: task, op, reads (its input slots' ranges, then the outputs an accumulating
                   kernel read before writing them), writes (each range named by its slot's tensor), stream
``FaultedLaunch``  ``launch`` of the ranges the task designated (its ``fault`` follows)
``Fault``          ``fault``: address, task, message
``Memset``         none: a memset task's writes are its launch's
``Sync``           ``record`` or ``wait``: event_id, stream
=================  ==========================================================================

An allocation or free whose tag ``names`` gives no owner is not transcribed.
``launched_slots`` transcribes what the launches of a span read from their argument tables (the
spec's ``SlotValue`` s: the addresses each task ran with, as the device read them).
``allocation_events`` transcribes only the allocations and frees of a span (what happened
between a load and a later call, so that the spec knows what is live at the call).
"""
from __future__ import annotations

from typing import Callable, Iterable, Mapping

import attrs

from zcspec.impl.device import trace as tr
from zcspec.spec.observables.execution import SlotValue
from zcspec.spec.observables.trace import Event, Range

SlotTensors = tuple[tuple[str, ...], tuple[str, ...]]   # (tensors of the in slots, of the out slots), in slot order


@attrs.frozen
class TraceNames:
    """The observation's names for what a device trace refers to.

    - ``tasks``: device task name -> the model's task index (the model file's numbering);
      a task not listed is transcribed with ``task=None``;
    - ``owners``: ``(tag prefix, owner)`` pairs, the first prefix the tag starts with wins;
      an owner of None leaves the allocation (and its free) out;
    - ``default_owner``: the owner of a tag no prefix matches (None: left out);
    - ``slots``: task index -> the tensors its in and out slots hold (:func:`slot_tensors`),
      so that a launch's ranges name them.
    """

    tasks: Mapping[str, int]
    owners: tuple[tuple[str, str | None], ...] = ()
    default_owner: str | None = "user"
    slots: Mapping[int, SlotTensors] = attrs.field(factory=dict)

    def owner(self, tag: str) -> str | None:
        return next((owner for prefix, owner in self.owners if tag.startswith(prefix)), self.default_owner)


def slot_tensors(tasks: Iterable) -> dict[int, SlotTensors]:
    """Task index -> (in-slot tensors, out-slot tensors) of a model file's task definitions, in slot order
    (the order in which the device reports a launch's reads and writes)."""
    return {i: (tuple(s.tensor for s in t.slots if s.role == "in"), tuple(s.tensor for s in t.slots if s.role == "out"))
            for i, t in enumerate(tasks)}


def _ranges(pairs, tensors: tuple[str, ...]) -> tuple[Range, ...]:
    pairs = tuple(pairs)
    named = len(tensors) == len(pairs)   # a slot list that does not match the launch names nothing
    return tuple(Range(a, n, tensors[i] if named else None) for i, (a, n) in enumerate(pairs))


def spec_event(e, seq: int, names: TraceNames) -> Event | None:
    """The spec event numbered ``seq`` for device event ``e`` (None: not observed)."""
    if isinstance(e, (tr.Alloc, tr.Free)):
        owner = names.owner(e.tag)
        if owner is None:
            return None
        if isinstance(e, tr.Free):
            return Event(seq, "free", address=e.addr)
        return Event(seq, "alloc", address=e.addr, size=e.size, owner=owner, purpose=e.tag, space=e.space)
    if isinstance(e, tr.Copy):
        return Event(seq, "copy", direction=e.direction, src=e.src, dst=e.dst, size=e.nbytes, stream=e.stream)
    if isinstance(e, tr.ArgWrite):
        return Event(seq, "arg_write", task=names.tasks.get(e.task), slot=e.slot, value=e.value)
    if isinstance(e, (tr.Launch, tr.FaultedLaunch)):
        task = names.tasks.get(e.task)
        ins, outs = names.slots.get(task, ((), ())) if task is not None else ((), ())
        reads = _ranges(e.reads, ins) + _ranges(e.accumulates, outs)
        return Event(seq, "launch", task=task, op=e.op_type, reads=reads, writes=_ranges(e.writes, outs),
                     stream=e.stream)
    if isinstance(e, tr.Sync):
        return Event(seq, "record" if e.what == "record" else "wait", event_id=e.event, stream=e.stream)
    if isinstance(e, tr.Fault):
        return Event(seq, "fault", address=e.address, task=names.tasks.get(e.task), message=e.message)
    return None


def spec_events(trace: tr.Trace, span: tuple[int, int], names: TraceNames, first_seq: int = 0) -> list[Event]:
    """The spec events of trace positions ``[span[0], span[1])``, numbered from ``first_seq``."""
    begin, end = span
    out: list[Event] = []
    for e in trace.since(begin)[:end - begin]:
        ev = spec_event(e, first_seq + len(out), names)
        if ev is not None:
            out.append(ev)
    return out


def allocation_events(trace: tr.Trace, span: tuple[int, int], names: TraceNames | Callable[[int], TraceNames],
                      first_seq: int = 0) -> list[Event]:
    """The ``alloc`` and ``free`` events alone of trace positions ``[span[0], span[1])``; ``names`` may
    be a function of the trace position (the owner of a tag can depend on when it was allocated)."""
    begin, end = span
    names_at = names if callable(names) else (lambda _at: names)
    out: list[Event] = []
    for k, e in enumerate(trace.since(begin)[:max(end - begin, 0)]):
        if isinstance(e, (tr.Alloc, tr.Free)):
            ev = spec_event(e, first_seq + len(out), names_at(begin + k))
            if ev is not None:
                out.append(ev)
    return out


def launched_slots(trace: tr.Trace, span: tuple[int, int], names: TraceNames) -> list[SlotValue]:
    """Every argument slot value the launches (refused ones included) of trace positions ``[span[0], span[1])``
    read from their tables, as ``SlotValue(task, slot, value)``; a task launched more than once with the
    same table gives each value once. Tasks ``names`` does not list are left out."""
    out: dict[tuple[int, int, int], None] = {}
    begin, end = span
    for e in trace.since(begin)[:max(end - begin, 0)]:
        if isinstance(e, tr.Launch) and names.tasks.get(e.task) is not None:
            for slot, value in enumerate(e.args):
                out[(names.tasks[e.task], slot, value)] = None
    return [SlotValue(*k) for k in out]
