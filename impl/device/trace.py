"""The device trace: an append-only record of everything the device did, for the spec to observe.

Events are small frozen values in the order they happened. Addresses are
absolute (see ``memory.py``); ``task`` is the task name ("" for a synchronous
API call). ``Trace.mark()`` / ``Trace.since(mark)`` cut out the events of one
execute call; ``as_dicts`` gives plain JSON-ready dicts (with a ``"event"`` key
naming the type).
"""
from __future__ import annotations

from typing import Iterator

import attrs

Range = tuple  # (address, nbytes)


@attrs.frozen
class Alloc:
    addr: int
    size: int
    tag: str
    space: str
    read_only: bool


@attrs.frozen
class Free:
    addr: int
    size: int
    tag: str
    space: str


@attrs.frozen
class Copy:
    """A copy of ``nbytes`` from ``src`` to ``dst``; ``direction`` is h2d, d2h, d2d or h2h.
    ``stream`` is the stream a copy task ran on (None: a synchronous copy by the host)."""

    direction: str
    dst: int
    src: int
    nbytes: int
    task: str = ""
    stream: int | None = None


@attrs.frozen
class Memset:
    addr: int
    nbytes: int
    value: int
    task: str = ""


@attrs.frozen
class ArgWrite:
    """Slot ``slot`` of ``task``'s argument table (at ``slot_addr``) now holds ``value``.

    ``refresh`` is False for the write at load and True for a later rewrite.
    """

    task: str
    slot: int
    slot_addr: int
    value: int
    refresh: bool


@attrs.frozen
class Launch:
    """A task executed: the byte ranges it read and wrote (argument tables not included).

    ``args`` are the addresses the device read from the task's argument table when it ran it, one
    per slot in slot order (empty for a task without a table). ``accumulates`` are the output ranges
    the kernel read before writing them (an atomic kernel adds into its output: ``out += ...``), in
    output-slot order; ``reads`` are its input slots' ranges alone.
    """

    task: str
    op_type: str
    kind: str
    stream: int
    reads: tuple = ()
    writes: tuple = ()
    args: tuple = ()
    accumulates: tuple = ()


@attrs.frozen
class FaultedLaunch(Launch):
    """A task the device refused to run; the Fault it raised follows. ``reads`` and ``writes`` (the
    fields of a Launch) are the ranges its argument slots designated: what hardware without the
    emulator's checks would have read and written. Nothing was written."""


@attrs.frozen
class Sync:
    """An event record or wait executed on ``stream``."""

    what: str
    event: int
    stream: int
    task: str = ""


@attrs.frozen
class Fault:
    kind: str
    task: str
    address: int | None
    nbytes: int
    message: str


EVENT_TYPES = (Alloc, Free, Copy, Memset, ArgWrite, Launch, FaultedLaunch, Sync, Fault)


class Trace:
    """Append-only list of events; ``enabled=False`` keeps nothing (for long benchmarks)."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._events: list = []

    def append(self, event) -> None:
        if self.enabled:
            self._events.append(event)

    def __len__(self) -> int:
        return len(self._events)

    def __iter__(self) -> Iterator:
        return iter(tuple(self._events))

    def mark(self) -> int:
        """A position to pass to ``since`` later."""
        return len(self._events)

    def since(self, mark: int = 0) -> tuple:
        return tuple(self._events[mark:])

    def of_type(self, cls, mark: int = 0) -> tuple:
        return tuple(e for e in self._events[mark:] if isinstance(e, cls))

    def as_dicts(self, mark: int = 0) -> list[dict]:
        return [{"event": type(e).__name__, **attrs.asdict(e)} for e in self._events[mark:]]
