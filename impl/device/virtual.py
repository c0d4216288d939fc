"""Virtual address reservations and page mappings: what ``aclrtReserveMemAddress`` / ``aclrtMapMem`` record.

GE's expandable allocators (runtime/v1/graph/manager/active_memory_allocator.cc,
``PhysicalMemoryAllocator::ReserveMemAddress``, ``MapMem``, ``UnmapMem``, ``ReleaseMemAddress``)
reserve a virtual range without memory behind it, then back it page by page with physical pages
(``aclrtMallocPhysical``; here: device allocations). This module keeps the reservations and the
mappings and writes each change to the device trace as a :class:`~impl.device.trace.Mapping`.

Contract and limit: the emulator does not translate addresses. A kernel that touched a reserved
virtual address would fault as outside every allocation; the runtimes never hand one to a task
(GE's extend-size feature-map mode, the only user, is not wired into runtime v1).
Reservations come from a window above the device's physical memory, one per device, never reused.
Not thread safe: callers hold the device lock, as for every device call.
"""
from __future__ import annotations

from zcspec.impl.device import trace as tr
from zcspec.impl.device.errors import DeviceUsageError

VIRTUAL_OFFSET = 0x800_0000_0000   # the virtual window starts 8 TiB into the device's 16 TiB window


class VirtualSpace:
    """Reservations (start -> (size, tag)) and mappings (virtual page start -> (physical address, size))."""

    def __init__(self, base: int, trace: tr.Trace, *, granularity: int = 2 << 20):
        self.base, self.trace, self.granularity = base, trace, granularity
        self._next = base
        self.reserved: dict[int, tuple[int, str]] = {}
        self.mapped: dict[int, tuple[int, int]] = {}

    def reserve(self, size: int, tag: str = "") -> int:
        """A fresh virtual range of ``size`` bytes (a positive multiple of the 2 MiB granularity)."""
        if size <= 0 or size % self.granularity:
            raise DeviceUsageError(f"reserve {tag!r}: size={size} must be a positive multiple of {self.granularity}")
        addr, self._next = self._next, self._next + size
        self.reserved[addr] = (size, tag)
        self.trace.append(tr.Mapping("reserve", addr, size, None, tag))
        return addr

    def release(self, addr: int) -> None:
        """Give back the reservation starting at ``addr``; its pages still mapped are unmapped first."""
        if addr not in self.reserved:
            raise DeviceUsageError(f"release of {addr:#x}: no reservation starts there")
        size, tag = self.reserved[addr]
        for va in sorted(v for v in self.mapped if addr <= v < addr + size):
            self.unmap(va, tag)
        del self.reserved[addr]
        self.trace.append(tr.Mapping("release", addr, size, None, tag))

    def map(self, va: int, physical: int, size: int, tag: str = "") -> None:
        """Back ``[va, va + size)`` with the physical page at ``physical``; the range must lie in one
        reservation and overlap no mapped page."""
        owner = self._reservation(va, size)
        if owner is None:
            raise DeviceUsageError(f"map {tag!r}: [{va:#x}, {va + size:#x}) lies in no reservation")
        if any(v < va + size and va < v + n for v, (_p, n) in self.mapped.items()):
            raise DeviceUsageError(f"map {tag!r}: [{va:#x}, {va + size:#x}) overlaps a mapped page")
        self.mapped[va] = (physical, size)
        self.trace.append(tr.Mapping("map", va, size, physical, tag))

    def unmap(self, va: int, tag: str = "") -> None:
        if va not in self.mapped:
            raise DeviceUsageError(f"unmap {tag!r}: no page is mapped at {va:#x}")
        physical, size = self.mapped.pop(va)
        self.trace.append(tr.Mapping("unmap", va, size, physical, tag))

    def _reservation(self, va: int, size: int) -> int | None:
        return next((a for a, (n, _t) in self.reserved.items() if a <= va and va + size <= a + n), None)
