"""The event trace of a load or an execution: what the device and runtime did, in order.

One flat, tagged :class:`Event` per happening, as trace formats usually are;
``kind`` says which optional fields carry meaning:

=============  =================================================================
kind           fields
=============  =================================================================
``alloc``      ``address``, ``size``, ``owner``, ``purpose``, ``space`` (``device`` or ``host``: the
               address space the allocation was made in)
``free``       ``address``
``copy``       ``direction`` (h2d/d2h/d2d/h2h), ``src``, ``dst``, ``size``, ``stream``
               (None: a synchronous copy the host made, ordered with everything before and after it),
               ``io`` (a display label only: no claim reads it; which I/O a copy moves is told from its
               addresses, and zcspec's own observers leave it unset)
``arg_write``  ``task``, ``slot``, ``value`` (an argument slot refreshed)
``launch``     ``task``, ``op`` (its op type), ``reads``, ``writes`` (ranges a kernel touched, or designated
               before a ``fault``; each names the tensor its slot holds in the model file), ``stream``
``record``     ``event_id``, ``stream``: an event record ran on ``stream`` (what ran there before it is done)
``wait``       ``event_id``, ``stream``: ``stream`` waited for the event (work after it follows the record)
``fault``      ``address``, ``task``, ``message`` (the device refused an access)
``error``      ``message``, ``io`` (the buffer the error names), ``code``
``call_begin`` ``call`` (load/execute/unload/...)
``call_end``   ``call``, ``ok``
``unload``     the model was unloaded (everything it owns should be freed); ``holders``: the loads still
               holding the session memory the model held, after it gave its hold back (None: it gave none)
=============  =================================================================

Allocation owners: ``model`` (what a load allocates: regions, argument tables), ``runtime`` (what an
execute call allocates, directly or through the caller's allocator hook), ``pool`` (a span a
runtime's caching allocator keeps across calls and hands blocks out of, which the device never
sees), ``session`` (memory a session's allocator holds for the session's models, runtime v1's
extend-size feature maps: freed when the last model holding it is unloaded), ``user`` (the caller's
own memory). An execution's events may begin, before its
``call_begin``, with the allocations and frees made since the load (earlier calls, the caller's
buffers), so that what is live at the call is known from the trace alone.
"""
from __future__ import annotations

from typing import Literal

import attrs

EventKind = Literal["alloc", "free", "copy", "arg_write", "launch", "record", "wait", "fault", "error",
                    "call_begin", "call_end", "unload"]
Owner = Literal["model", "runtime", "pool", "session", "user"]
Direction = Literal["h2d", "d2h", "d2d", "h2h"]


@attrs.frozen
class Range:
    """``size`` bytes from ``address``; ``tensor`` is the model tensor a kernel's slot holds there (None: unnamed)."""

    address: int
    size: int
    tensor: str | None = None

    @property
    def end(self) -> int:
        return self.address + self.size

    def overlaps(self, address: int, size: int) -> bool:
        return self.address < address + size and address < self.end and self.size > 0 and size > 0


@attrs.frozen
class Event:
    """One happening in a trace; see the module doc for which fields each ``kind`` uses."""

    seq: int
    kind: EventKind
    address: int | None = None
    size: int | None = None
    owner: Owner | None = None
    purpose: str | None = None
    direction: Direction | None = None
    src: int | None = None
    dst: int | None = None
    io: str | None = None
    task: int | None = None
    op: str | None = None
    slot: int | None = None
    value: int | None = None
    reads: tuple[Range, ...] = ()
    writes: tuple[Range, ...] = ()
    message: str | None = None
    code: str | None = None
    call: str | None = None
    ok: bool | None = None
    stream: int | None = None
    event_id: int | None = None
    space: Literal["device", "host"] | None = None
    holders: int | None = None

    def written(self) -> tuple[Range, ...]:
        """The ranges this event writes: a copy's destination or a kernel's writes."""
        if self.kind == "copy" and self.dst is not None and self.size:
            return (Range(self.dst, self.size),)
        return self.writes if self.kind == "launch" else ()

    def read(self) -> tuple[Range, ...]:
        """The ranges this event reads: a copy's source or a kernel's reads."""
        if self.kind == "copy" and self.src is not None and self.size:
            return (Range(self.src, self.size),)
        return self.reads if self.kind == "launch" else ()
