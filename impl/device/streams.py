"""Streams and events: in-order task queues and the cross-stream ordering between them.

Contract (CUDA/ACL semantics):
- ``launch`` appends to a stream; nothing runs until ``synchronize``.
- Tasks of one stream run in launch order.
- An event record task, when it runs, completes the record it was launched as; a
  wait task blocks its stream until the *latest record launched before the wait*
  has run (a wait with no record launched before it passes at once).
- Streams interleave round-robin; any interleaving that honours the two rules
  above is a legal schedule, and the emulator picks this one deterministically.
- ``drain`` returns when no stream head can run; the caller decides whether what
  is left is a collective waiting for its peers or a deadlock. Events alone cannot
  deadlock under launch-time semantics (a wait only ever waits for a record launched
  before it); a collective that some rank never reaches can.
"""
from __future__ import annotations

from collections import deque

from zcspec.impl.device.errors import StreamError


class Event:
    __slots__ = ("id", "launched", "completed")

    def __init__(self, event_id: int):
        self.id, self.launched, self.completed = event_id, 0, 0


class Stream:
    """A queue of (task, token) pairs; the token is the record number for event tasks."""

    __slots__ = ("id", "queue")

    def __init__(self, stream_id: int):
        self.id, self.queue = stream_id, deque()

    def head(self):
        return self.queue[0][0] if self.queue else None


class Streams:
    """The streams and events of one device."""

    def __init__(self):
        self.streams: dict[int, Stream] = {0: Stream(0)}
        self.events: dict[int, Event] = {}

    def create_stream(self) -> int:
        sid = max(self.streams) + 1
        self.streams[sid] = Stream(sid)
        return sid

    def create_event(self) -> int:
        eid = len(self.events)
        self.events[eid] = Event(eid)
        return eid

    def stream(self, sid: int) -> Stream:
        try:
            return self.streams[sid]
        except KeyError:
            raise StreamError(f"no stream {sid}; streams are {sorted(self.streams)} (create one with create_stream)") from None

    def event(self, eid: int) -> Event:
        try:
            return self.events[eid]
        except KeyError:
            raise StreamError(f"no event {eid}; create one with create_event") from None

    def enqueue(self, task, sid: int) -> None:
        """Append ``task``; event tasks take their record number now (launch-time semantics)."""
        stream = self.stream(sid)
        kind = task.kind
        token = None
        if kind == "record":
            ev = self.event(task.event)
            ev.launched += 1
            token = ev.launched
        elif kind == "wait":
            token = self.event(task.event).launched
        stream.queue.append((task, token))

    def drain(self, execute, blocked) -> bool:
        """Run every runnable stream head until none is; True if anything ran.

        ``execute(task, token, stream_id)`` runs one task; ``blocked(task)`` says
        whether a head must wait for something outside this device (a collective).
        """
        progressed, again = False, True
        events = self.events
        while again:
            again = False
            for stream in self.streams.values():
                q = stream.queue
                while q:
                    task, token = q[0]
                    kind = task.kind
                    if kind == "wait" and events[task.event].completed < token:
                        break
                    if kind == "hccl" and blocked(task):
                        break
                    execute(task, token, stream.id)
                    q.popleft()
                    again = progressed = True
        return progressed

    def pending(self) -> list[tuple[int, object]]:
        """(stream id, head task) of every non-empty stream."""
        return [(s.id, s.head()) for s in self.streams.values() if s.queue]

    def clear(self) -> None:
        for s in self.streams.values():
            s.queue.clear()

    def describe_stuck(self) -> str:
        parts = []
        for sid, task in self.pending():
            why = f"waits for event {task.event}" if task.kind == "wait" else "waits for its collective peers"
            parts.append(f"stream {sid} head {task.name!r} {why}")
        return "; ".join(parts)
