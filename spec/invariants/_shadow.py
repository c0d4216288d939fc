"""Shadow memory over a trace: who last wrote each byte, on which stream, and what each read saw.

The spec's own replay of an execution's events, sharing nothing with the device or the runtimes:

- :class:`Bytes` maps disjoint byte ranges to a value (an interval map; ``assign`` splits what
  it overlaps, ``pieces`` returns the overlapped parts clipped to the query);
- :func:`replay` walks the load's events, the allocations before the call and the call, and
  yields one :class:`Read` per range a launch or copy of the call reads, with the writers of
  those bytes at that moment (None where no write since their allocation reached them) and
  whether each writer is ordered before the reader.

Ordering is the happens-before of streams and events, kept as vector clocks: work on one
stream is ordered; an event ``record`` on stream A takes A's clock, a ``wait`` for it on stream
B joins it into B's; a synchronous host copy (``stream`` None) is ordered with everything
before and after it in the trace (the host saw the device finish what ran before and launched
what ran after). When one event is recorded several times, a wait joins the latest record the
trace ran before it, which can only order more than the wait guarantees: the replay may miss a
race, never invent one.

Bytes count as written when a write of this trace reached them after their allocation: the
caller's input buffers from the start of the call, whatever the load wrote (the weights), and
the fixed region (variables, :data:`PERSISTENT`).
An allocation or a free makes its range unwritten again: fresh memory holds nothing.
"""
from __future__ import annotations

import bisect
from typing import Any, Iterator

import attrs

from zcspec.spec.observables.execution import ExecutionObservation
from zcspec.spec.observables.trace import Event, Range

HOST = "host"
# Regions whose bytes hold state across calls, written outside the model's own tasks: GE places
# variables at fixed addresses (VarManager memory, initialised by the session's init graph or the
# caller), not in blocks a task of the model fills (GE: block_mem_assigner.cc `CheckIsZeroMemNodeType`;
# graph_mem_assigner.cc).
PERSISTENT = ("fixed",)


class Bytes:
    """Disjoint ``[lo, hi)`` ranges, each holding a value; unassigned bytes hold nothing."""

    def __init__(self):
        self._starts: list[int] = []
        self._segs: list[tuple[int, int, Any]] = []

    def _first(self, lo: int) -> int:
        i = bisect.bisect_right(self._starts, lo) - 1
        return i if i >= 0 and self._segs[i][1] > lo else i + 1

    def pieces(self, lo: int, hi: int) -> list[tuple[int, int, Any]]:
        """The assigned parts of ``[lo, hi)``, clipped, in address order."""
        out = []
        i = self._first(lo)
        while i < len(self._segs) and self._segs[i][0] < hi:
            s, e, v = self._segs[i]
            out.append((max(s, lo), min(e, hi), v))
            i += 1
        return out

    def assign(self, lo: int, hi: int, value: Any) -> None:
        """``[lo, hi)`` now holds ``value`` (None: nothing)."""
        if hi <= lo:
            return
        i = self._first(lo)
        j = i
        keep = []
        while j < len(self._segs) and self._segs[j][0] < hi:
            s, e, v = self._segs[j]
            if s < lo:
                keep.append((s, lo, v))
            if e > hi:
                keep.append((hi, e, v))
            j += 1
        if value is not None:
            keep.append((lo, hi, value))
        keep.sort(key=lambda seg: seg[0])
        self._segs[i:j] = keep
        self._starts[i:j] = [s for s, _, _ in keep]


@attrs.frozen
class Writer:
    """Who wrote some bytes: the event (None: the caller's input buffer, or the load), its stream,
    the stream's clock at the write, and the tensor the write's slot names."""

    seq: int | None
    stream: Any
    clock: int
    tensor: str | None = None
    what: str = ""

    @property
    def at_clock(self) -> int:
        return self.clock


@attrs.frozen
class Read:
    """One range an event of the call read (``kind`` "read") or wrote ("write"), with what it found there:
    ``pieces`` are ``(lo, hi, writer)`` covering the range (writer None: never written since allocation),
    ``readers`` (writes only) the reads of those bytes since their last write; ``ordered(w)`` says whether
    the earlier access ``w`` (a Writer or a reader's Read) happens before this one."""

    event: Event
    range: Range
    pieces: tuple[tuple[int, int, Writer | None], ...]
    clock: dict = attrs.field(eq=False, repr=False)
    stream: Any = None
    kind: str = "read"
    readers: tuple = attrs.field(default=(), eq=False, repr=False)
    at: int = 0

    @property
    def at_clock(self) -> int:
        return self.at

    def ordered(self, w) -> bool:
        return w.stream == self.stream or self.clock.get(w.stream, 0) >= w.at_clock


class _Clocks:
    """Vector clocks per stream, event records, and the host as a stream ordered with everything."""

    def __init__(self):
        self.vc: dict[Any, dict] = {}
        self.base: dict = {HOST: 0}
        self.records: dict[int, dict] = {}

    def of(self, stream) -> dict:
        if stream not in self.vc:
            self.vc[stream] = dict(self.base)
        return self.vc[stream]

    def tick(self, stream) -> tuple[Any, int, dict]:
        if stream is None:   # the host: after all earlier device work, before all later
            joined = dict(self.base)
            for c in self.vc.values():
                _join(joined, c)
            joined[HOST] = joined.get(HOST, 0) + 1
            self.base = joined
            for s in self.vc:
                self.vc[s] = dict(joined)
            return HOST, joined[HOST], joined
        c = self.of(stream)
        c[stream] = c.get(stream, 0) + 1
        return stream, c[stream], c

    def record(self, e: Event) -> None:
        self.records[e.event_id] = dict(self.of(e.stream))

    def wait(self, e: Event) -> None:
        _join(self.of(e.stream), self.records.get(e.event_id, {}))


def _join(into: dict, other: dict) -> None:
    for k, v in other.items():
        if v > into.get(k, 0):
            into[k] = v


def call_bounds(events: tuple[Event, ...]) -> tuple[int, int]:
    """Indices ``[begin, end)`` of the first call's events in ``events`` (after ``call_begin``, before
    ``call_end``); the whole tuple when the trace marks no call."""
    begin = next((i + 1 for i, e in enumerate(events) if e.kind == "call_begin"), None)
    if begin is None:
        return 0, len(events)
    end = next((i for i in range(begin, len(events)) if events[i].kind == "call_end"), len(events))
    return begin, end


_CACHE: list = []   # (observation, its accesses): the claims of one check replay one observation once


def replay(obs: ExecutionObservation) -> tuple[Read, ...]:
    """Every range the call's launches and copies read or wrote, in order, with what they found (module doc)."""
    for seen, found in _CACHE:
        if seen is obs:
            return found
    found = tuple(_replay(obs))
    _CACHE[:] = ([(obs, found)] + _CACHE)[:4]
    return found


def reads(obs: ExecutionObservation) -> Iterator[Read]:
    return (a for a in replay(obs) if a.kind == "read")


def _replay(obs: ExecutionObservation) -> Iterator[Read]:
    mem, readers, clocks = Bytes(), Bytes(), _Clocks()
    freed: dict[int, int] = {}
    for e in obs.load.events:   # what the load wrote (weights) counts as written before the call
        _setup(mem, e, freed)
    begin, end = call_bounds(obs.events)
    for e in obs.events[:begin]:
        _setup(mem, e, freed)
    for region in obs.load.regions:   # variables: state the model keeps, initialised outside its tasks
        if region.name in PERSISTENT and region.size > 0:
            mem.assign(region.address, region.address + region.size,
                       Writer(None, HOST, 0, None, f"the {region.name} region (variables)"))
    for b in obs.buffers:
        if b.role == "input" and b.address and b.size > 0:
            mem.assign(b.address, b.address + b.size, Writer(None, HOST, 0, b.name, f"input buffer {b.name!r}"))
    for i in range(begin, end):
        e = obs.events[i]
        if e.kind in ("alloc", "free"):
            _setup(mem, e, freed)
            if e.kind == "alloc" and e.address is not None and e.size:
                readers.assign(e.address, e.address + e.size, None)
        elif e.kind == "record":
            clocks.record(e)
        elif e.kind == "wait":
            clocks.wait(e)
        elif e.kind == "copy" or (e.kind == "launch" and not refused(obs.events, i)):
            yield from _access(mem, readers, clocks, e)


def _setup(mem: Bytes, e: Event, freed: dict) -> None:
    """An event before the call: allocations and frees reset memory, writes mark it written."""
    if e.kind == "alloc" and e.address is not None and e.size:
        mem.assign(e.address, e.address + e.size, None)
        freed[e.address] = e.size
    elif e.kind == "free" and e.address is not None and e.address in freed:
        mem.assign(e.address, e.address + freed.pop(e.address), None)
    else:
        for r in e.written():
            mem.assign(r.address, r.end, Writer(None, HOST, 0, r.tensor, f"{e.kind} #{e.seq} before the call"))


def refused(events: tuple[Event, ...], i: int) -> bool:
    """Whether the device refused launch ``events[i]`` (its fault follows): it accessed nothing."""
    return i + 1 < len(events) and events[i + 1].kind == "fault"


def _access(mem: Bytes, readers: Bytes, clocks: _Clocks, e: Event) -> Iterator[Read]:
    # a copy without a stream is the host's; a launch without one ran on the default stream
    stream, clock, vc = clocks.tick(e.stream if e.stream is not None or e.kind == "copy" else 0)
    snapshot = dict(vc)
    done = []
    for r in e.read():
        if r.size > 0:
            rd = Read(e, r, tuple(_cover(mem.pieces(r.address, r.end), r)), snapshot, stream, "read", at=clock)
            done.append(rd)
            yield rd
    for rd in done:   # a later write must be ordered after these reads
        for lo, hi, old in _cover(readers.pieces(rd.range.address, rd.range.end), rd.range):
            readers.assign(lo, hi, (old or ()) + (rd,))
    for r in e.written():
        if r.size > 0:
            before = tuple(rd for _, _, got in readers.pieces(r.address, r.end) for rd in (got or ()))
            yield Read(e, r, tuple(_cover(mem.pieces(r.address, r.end), r)), snapshot, stream, "write",
                       tuple({id(b): b for b in before}.values()), at=clock)
            mem.assign(r.address, r.end, Writer(e.seq, stream, clock, r.tensor, f"{e.kind} #{e.seq}"))
            readers.assign(r.address, r.end, None)


def _cover(pieces, r: Range) -> Iterator[tuple[int, int, Writer | None]]:
    """``pieces`` with the gaps of ``r`` they leave filled by ``None`` (never written)."""
    at = r.address
    for lo, hi, w in pieces:
        if lo > at:
            yield at, lo, None
        yield lo, hi, w
        at = hi
    if at < r.end:
        yield at, r.end, None


# Op types that read only one of their inputs: a Merge joins dynamic-batch branches and reads the
# input of the one branch that ran (GE: multi_batch_pass.cc `MultiBatchPass::SetCaseLabel`; runtime/v1
# StreamSwitchN + Merge); the others
# hold whatever the branch that did not run left there.
ONE_OF_INPUTS = frozenset({"Merge"})


def consumed(obs: ExecutionObservation) -> Iterator[Read]:
    """The reads of :func:`replay` that the kernel consumes: all of them, except that of a Merge only the
    first input entirely written counts (every input, if none is: then there is nothing it could read)."""
    pending: list[Read] = []
    for rd in reads(obs):
        if rd.event.kind == "launch" and rd.event.op in ONE_OF_INPUTS:
            if pending and pending[0].event.seq != rd.event.seq:
                yield from _one_of(pending)
                pending = []
            pending.append(rd)
            continue
        if pending:
            yield from _one_of(pending)
            pending = []
        yield rd
    yield from _one_of(pending)


def _one_of(reads: list[Read]) -> list[Read]:
    written = [rd for rd in reads if all(w is not None for _, _, w in rd.pieces)]
    return written[:1] if written else reads
