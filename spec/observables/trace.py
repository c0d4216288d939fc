"""The event trace of a load or an execution: what the device and runtime did, in order.

One flat, tagged :class:`Event` per happening, as trace formats usually are;
``kind`` says which optional fields carry meaning:

=============  =================================================================
kind           fields
=============  =================================================================
``alloc``      ``address``, ``size``, ``owner`` (``model``/``runtime``/``user``), ``purpose``
``free``       ``address``
``copy``       ``direction`` (h2d/d2h/d2d/h2h), ``src``, ``dst``, ``size``, ``io``
``arg_write``  ``task``, ``slot``, ``value`` (an argument slot refreshed)
``launch``     ``task``, ``reads``, ``writes`` (ranges a kernel touched, or designated before a ``fault``), ``stream``
``fault``      ``address``, ``task``, ``message`` (the device refused an access)
``error``      ``message``, ``io`` (the buffer the error names), ``code``
``call_begin`` ``call`` (load/execute/unload/...)
``call_end``   ``call``, ``ok``
``unload``     the model was unloaded (everything it owns should be freed)
=============  =================================================================
"""
from __future__ import annotations

from typing import Literal

import attrs

EventKind = Literal["alloc", "free", "copy", "arg_write", "launch", "fault", "error",
                    "call_begin", "call_end", "unload"]
Direction = Literal["h2d", "d2h", "d2d", "h2h"]


@attrs.frozen
class Range:
    """``size`` bytes from ``address``."""

    address: int
    size: int

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
    owner: str | None = None
    purpose: str | None = None
    direction: Direction | None = None
    src: int | None = None
    dst: int | None = None
    io: str | None = None
    task: int | None = None
    slot: int | None = None
    value: int | None = None
    reads: tuple[Range, ...] = ()
    writes: tuple[Range, ...] = ()
    message: str | None = None
    code: str | None = None
    call: str | None = None
    ok: bool | None = None
    stream: int | None = None

    def written(self) -> tuple[Range, ...]:
        """The device ranges this event writes: a copy's destination or a kernel's writes."""
        if self.kind == "copy" and self.dst is not None and self.size:
            return (Range(self.dst, self.size),)
        return self.writes if self.kind == "launch" else ()
