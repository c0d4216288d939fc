"""Examples for the device invariants: an access in an allocation, one 64 bytes past its end, one in freed memory."""
from __future__ import annotations

from zcspec.spec.examples.build import Example
from zcspec.spec.observables.device import DeviceEvent, DeviceObservation
from zcspec.spec.observables.trace import Range

_BASE = 0x1_0000_0000_0000


_MEMORY = Range(_BASE, 1 << 30)


def _probe(past_end_refused: str | None, stale_refused: str = "use_after_free") -> DeviceObservation:
    return DeviceObservation("probe", (
        DeviceEvent(0, "alloc", address=_BASE, size=1024),
        DeviceEvent(1, "alloc", address=_BASE + 1024, size=512),
        DeviceEvent(2, "access", task="copy 1", reads=(Range(_BASE, 1024),), writes=(Range(_BASE, 16),)),
        DeviceEvent(3, "access", task="copy 2", writes=(Range(_BASE + 1000, 88),), refused=past_end_refused),
        DeviceEvent(4, "free", address=_BASE + 1024),
        DeviceEvent(5, "access", task="copy 3", reads=(Range(_BASE + 1024, 8),), refused=stale_refused),
    ), _MEMORY)


EXAMPLES = (
    Example("DEVICE-BOUNDS", _probe("out_of_bounds"), _probe(None),
            culprit="access 3", why="a write running 64 bytes past the end of the allocation ran"),
    Example("DEVICE-FAULT-KIND", _probe("out_of_bounds"), _probe("out_of_bounds", stale_refused="out_of_bounds"),
            culprit="access 5", why="a read of freed memory was reported as out of bounds, not use after free"),
)
