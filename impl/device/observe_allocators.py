"""A device trace's runtime-allocator happenings as the spec's ``AllocatorEvent`` s (spec/observables/device.py).

``allocator_events(trace, mark=0)`` transcribes, from position ``mark`` on, every ``AllocatorCall``
(an ``enter`` or ``exit`` with its allocator, runtime, call and thread), and every device ``Alloc``
/ ``Free`` and virtual ``Mapping`` reserve / release whose tag starts with the name of an allocator
that made a call in that span (the runtimes tag an allocator's memory ``"<name> <purpose>"``; runtime
v2's spans carry the name without its ``#<serial>``, taken as that allocator's when no other allocator
of the span has the same name), as an ``alloc``, ``free``, ``reserve`` or ``release`` of it. It decides nothing: who holds what and
which thread may call is the spec's to derive (spec/invariants/allocator_threads.py).

Names are made stable across processes: a thread is numbered by its first call into each allocator
(1, 2, ...; the host's thread ids differ from run to run, and a finished thread's id is reused), and an allocator's ``#<serial>`` suffix by its
first call (the process-wide serial depends on what ran before), so that two runs of one scenario
transcribe to the same events.
"""
from __future__ import annotations

from zcspec.impl.device import trace as tr
from zcspec.spec.observables.device import AllocatorEvent


def allocator_events(trace: tr.Trace, mark: int = 0) -> tuple[AllocatorEvent, ...]:
    events = trace.since(mark)
    runtimes = {e.allocator: e.runtime for e in events if isinstance(e, tr.AllocatorCall)}
    if not runtimes:
        return ()
    names = sorted(runtimes, key=len, reverse=True)   # the longest name a tag starts with wins
    # A runtime may tag its memory with the allocator's name without the ``#<serial>`` (runtime v2's spans:
    # "<name> span"): such a tag is the allocator's when no other allocator of the span shares that name.
    bases: dict[str, list[str]] = {}
    for name in runtimes:
        bases.setdefault(name.rpartition("#")[0] or name, []).append(name)
    names += sorted((b for b, of in bases.items() if len(of) == 1 and b not in runtimes), key=len, reverse=True)
    full = {b: of[0] for b, of in bases.items() if len(of) == 1}
    stable = {name: f"{name.rpartition('#')[0] or name}#{k}" for k, name in enumerate(runtimes, 1)}
    threads: dict[tuple[str, int], int] = {}
    out: list[AllocatorEvent] = []
    for e in events:
        if isinstance(e, tr.AllocatorCall):
            mine = [k for k in threads if k[0] == e.allocator]
            thread = threads.setdefault((e.allocator, e.thread), len(mine) + 1)
            out.append(AllocatorEvent(len(out), e.phase, stable[e.allocator], e.runtime, e.call, thread,
                                      e.addr or None, e.size))
            continue
        kind = _memory_kind(e)
        owner = kind and next((n for n in names if e.tag.startswith(n + " ")), None)
        owner = owner if owner in runtimes else full.get(owner) if owner else None
        if owner:
            out.append(AllocatorEvent(len(out), kind, stable[owner], runtimes[owner], address=e.addr, size=e.size))
    return tuple(out)


def _memory_kind(e) -> str | None:
    if isinstance(e, tr.Alloc) and e.space == "device":
        return "alloc"
    if isinstance(e, tr.Free) and e.space == "device":
        return "free"
    if isinstance(e, tr.Mapping) and e.what in ("reserve", "release"):
        return e.what
    return None
