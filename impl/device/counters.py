"""Device counters: bytes and calls per copy direction, argument writes, launches, allocations.

``Device.counters`` returns a frozen :class:`Counters` snapshot; ``after - before``
gives the counts of what happened in between, which is
how a runtime reports the counters of one execute call. Every field is an event
count except the two gauges ``allocated_bytes`` and ``peak_allocated_bytes``,
whose difference is the change of the gauge.

Argument writes and refreshes are counted apart from copies (``args_written``,
``args_refreshed``, ``args_bytes``): GE moves updated args to the device by H2D
copy or by an on-device kernel (GE: model_args_manager.cc ``UpdateForExecute``), and a zero-copy run must be
told apart from one that copies the tensors themselves.
"""
from __future__ import annotations

import attrs

DIRECTIONS = ("h2d", "d2h", "d2d", "h2h")


@attrs.frozen
class Counters:
    h2d_bytes: int = 0
    h2d_calls: int = 0
    d2h_bytes: int = 0
    d2h_calls: int = 0
    d2d_bytes: int = 0
    d2d_calls: int = 0
    h2h_bytes: int = 0
    h2h_calls: int = 0
    memset_bytes: int = 0
    memset_calls: int = 0
    args_written: int = 0
    args_refreshed: int = 0
    args_bytes: int = 0
    kernel_launches: int = 0
    hccl_launches: int = 0
    tasks_executed: int = 0
    alloc_calls: int = 0
    free_calls: int = 0
    allocated_bytes: int = 0
    peak_allocated_bytes: int = 0
    faults: int = 0

    def __sub__(self, other: "Counters") -> "Counters":
        return Counters(**{f: getattr(self, f) - getattr(other, f) for f in _FIELDS})

    def as_dict(self) -> dict[str, int]:
        return attrs.asdict(self)

    def copy_bytes(self) -> int:
        """All bytes moved by copies, whatever their direction."""
        return sum(getattr(self, f"{d}_bytes") for d in DIRECTIONS)


_FIELDS = tuple(f.name for f in attrs.fields(Counters))


class Tally:
    """The mutable counts behind the snapshots (one per device)."""

    __slots__ = _FIELDS

    def __init__(self):
        for f in _FIELDS:
            setattr(self, f, 0)

    def copy(self, direction: str, nbytes: int) -> None:
        setattr(self, f"{direction}_bytes", getattr(self, f"{direction}_bytes") + nbytes)
        setattr(self, f"{direction}_calls", getattr(self, f"{direction}_calls") + 1)

    def snapshot(self) -> Counters:
        return Counters(**{f: getattr(self, f) for f in _FIELDS})
