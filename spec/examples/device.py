"""Examples for the device invariants: a 1024-byte allocation, one access in it and one 64 bytes past it."""
from __future__ import annotations

from zcspec.spec.examples.build import Example
from zcspec.spec.observables.device import DeviceEvent, DeviceObservation
from zcspec.spec.observables.trace import Range

_BASE = 0x1_0000_0000_0000


def _probe(past_end_refused: str | None) -> DeviceObservation:
    return DeviceObservation("probe", (
        DeviceEvent(0, "alloc", address=_BASE, size=1024),
        DeviceEvent(1, "access", task="copy 1", reads=(Range(_BASE, 1024),), writes=(Range(_BASE, 16),)),
        DeviceEvent(2, "access", task="copy 2", writes=(Range(_BASE + 1000, 88),), refused=past_end_refused),
    ))


EXAMPLES = (
    Example("DEVICE-BOUNDS", _probe("out_of_bounds"), _probe(None),
            culprit="access 2", why="a write running 64 bytes past the end of the allocation ran"),
)
