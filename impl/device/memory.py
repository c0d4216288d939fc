"""One address space (device HBM or host DRAM): lazy backing, an allocator and an allocation table.

Contract:
- Addresses are absolute integers ``base + offset``; ``base`` is far from 0 (and
  differs per device and for the host), so an offset or a host pointer mistaken
  for a device address lands outside every allocation and faults.
- Backing is one anonymous, lazily committed mmap (``MAP_NORESERVE``): capacity
  costs nothing until touched. Freed ranges of 1 MiB or more are returned to the
  OS, so load/unload cycles do not grow the process.
- ``malloc`` is next-fit over a sorted hole list: freed addresses are reused as
  late as possible, so a stale pointer keeps faulting as use-after-free for long.
  New allocations are poisoned with 0xFF bytes (NaN for floats, -1 for ints), so
  reading memory nobody wrote (a missing copy or atomic clean) gives visibly wrong
  results instead of lucky zeros.
- ``check`` finds the one live allocation holding a byte range or raises a
  :class:`DeviceFault` whose ``kind`` says what went wrong and whose ``nearest``
  names the closest allocation (live or freed).
- A failing call (OOM, bad free, fault) changes nothing here.
"""
from __future__ import annotations

import bisect
import errno
import gc
import mmap
import numbers

import attrs
import numpy as np

from zcspec.impl.device.errors import DeviceFault, DeviceUsageError, OutOfMemory

_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)  # Linux value; Python does not export it
_PAGE = mmap.PAGESIZE
_RELEASE_MIN = 1 << 20
POISON = 0xFF


@attrs.frozen
class Allocation:
    """A live or freed allocation: ``[addr, addr + size)`` in the space called ``space``."""

    addr: int
    size: int
    tag: str = ""
    read_only: bool = False
    space: str = "device"

    @property
    def end(self) -> int:
        return self.addr + self.size

    def describe(self) -> str:
        ro = ", read-only" if self.read_only else ""
        return f"{self.space} allocation {self.tag!r} [{self.addr:#x}, {self.end:#x}) of {self.size} bytes{ro}"


def _align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def _reserve(capacity: int) -> mmap.mmap:
    """``capacity`` bytes of address space, lazily backed. Each device reserves its whole capacity (16 GiB on
    ascend910b) and a process has 128 TiB of it: devices that a finished run left in reference cycles hold
    theirs until the cycle collector runs (one verify of the node tests left 1,534 address spaces, 15 TiB,
    to it), so a long test worker ran out (ENOMEM) after a few such runs. On ENOMEM the garbage is
    collected and the reservation tried once more; a second failure is the caller's."""
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
    try:
        return mmap.mmap(-1, capacity, flags=flags)
    except OSError as e:
        if e.errno != errno.ENOMEM:
            raise
    gc.collect()
    return mmap.mmap(-1, capacity, flags=flags)


class AddressSpace:
    """Allocator plus allocation table over one lazily backed mmap. Not thread safe."""

    def __init__(self, space: str, base: int, capacity: int, *, align: int = 512,
                 device_id: int = 0, poison: bool = True):
        if capacity <= 0 or align <= 0 or align & (align - 1):
            raise DeviceUsageError(f"{space} memory: capacity={capacity} and align={align} must be positive, align a power of two")
        self.space, self.base, self.capacity, self.align = space, base, capacity, align
        self.device_id, self.poison = device_id, poison
        self._mm = _reserve(capacity)
        self.u8 = np.frombuffer(self._mm, dtype=np.uint8)
        self._holes: list[list[int]] = [[0, capacity]]  # sorted [start, end) offsets of free memory
        self._cursor = 0
        self._starts: list[int] = []                    # sorted addresses of live allocations
        self._live: dict[int, Allocation] = {}
        self._freed_starts: list[int] = []              # freed allocations not since overwritten
        self._freed: dict[int, Allocation] = {}
        self.allocated_bytes = 0
        self.peak_bytes = 0

    # -- queries -------------------------------------------------------------------

    @property
    def end(self) -> int:
        return self.base + self.capacity

    def contains(self, addr: int) -> bool:
        return self.base <= addr < self.end

    def allocations(self) -> tuple[Allocation, ...]:
        """Live allocations in address order."""
        return tuple(self._live[a] for a in self._starts)

    def live(self, addr: int) -> Allocation | None:
        """The live allocation containing byte ``addr``, if any."""
        i = bisect.bisect_right(self._starts, addr) - 1
        if i >= 0:
            a = self._live[self._starts[i]]
            if addr < a.end:
                return a
        return None

    def _freed_at(self, addr: int) -> Allocation | None:
        i = bisect.bisect_right(self._freed_starts, addr) - 1
        if i >= 0:
            a = self._freed[self._freed_starts[i]]
            if addr < a.end:
                return a
        return None

    def nearest(self, addr: int) -> str:
        """Where ``addr`` is relative to the closest live allocation (or 'no allocations')."""
        if not self._starts:
            return f"no live {self.space} allocations"
        i = bisect.bisect_right(self._starts, addr)
        cands = [self._live[self._starts[j]] for j in (i - 1, i) if 0 <= j < len(self._starts)]
        best = min(cands, key=lambda a: 0 if a.addr <= addr < a.end else min(abs(addr - a.addr), abs(addr - a.end)))
        if addr >= best.end:
            return f"{addr - best.end} bytes past the end of {best.describe()}"
        if addr < best.addr:
            return f"{best.addr - addr} bytes before {best.describe()}"
        return f"offset {addr - best.addr} in {best.describe()}"

    # -- checked access ------------------------------------------------------------

    def fast_offset(self, addr: int, nbytes: int, write: bool) -> int:
        """The offset of a legal access, or -1 (then ``check`` explains the fault). Hot path."""
        starts = self._starts
        i = bisect.bisect_right(starts, addr) - 1
        if i < 0 or nbytes <= 0:
            return -1
        a = self._live[starts[i]]
        if addr + nbytes > a.addr + a.size or (write and a.read_only):
            return -1
        return addr - self.base

    def check(self, addr: int, nbytes: int, *, write: bool = False, task: str = "", what: str = "access",
              loading: bool = False) -> int:
        """The offset of ``[addr, addr + nbytes)`` if it lies inside one live allocation, else DeviceFault.

        ``write`` also refuses read-only allocations, unless ``loading`` (the host filling
        weights at load). Zero bytes touch nothing and pass.
        """
        if nbytes <= 0:
            return addr - self.base
        a = self.live(addr)
        if a is not None and addr + nbytes <= a.end:
            if write and a.read_only and not loading:
                self._fault("read_only", f"{what} writes {nbytes} bytes at {addr:#x} in read-only {a.describe()}",
                            task, addr, nbytes, a.describe())
            return addr - self.base
        rng = f"{what} of {nbytes} bytes at [{addr:#x}, {addr + nbytes:#x})"
        if a is not None:
            self._fault("out_of_bounds", f"{rng} runs {addr + nbytes - a.end} bytes past the end of {a.describe()}",
                        task, addr, nbytes, a.describe())
        freed = self._freed_at(addr)
        if freed is not None:
            self._fault("use_after_free", f"{rng} is in freed {freed.describe()}", task, addr, nbytes, freed.describe())
        if not self.contains(addr):
            self._fault("unmapped", f"{rng} is outside {self.space} memory [{self.base:#x}, {self.end:#x}) "
                        f"(an offset or a pointer of another address space?)", task, addr, nbytes, "")
        near = self.nearest(addr)
        self._fault("out_of_bounds", f"{rng} is in no live allocation: {near}", task, addr, nbytes, near)
        raise AssertionError("unreachable")

    def _fault(self, kind, message, task, addr, nbytes, nearest):
        raise DeviceFault(kind, message, task=task, address=addr, nbytes=nbytes, nearest=nearest, device=self.device_id)

    # -- allocation ----------------------------------------------------------------

    def malloc(self, size: int, align: int | None = None, tag: str = "", read_only: bool = False) -> Allocation:
        """A new allocation of ``size`` bytes at a multiple of ``max(align, space alignment)``.

        OutOfMemory (state unchanged) when no hole fits.
        """
        # The alignment asked for must itself be a power of two: one below the space's own (3, on a space of
        # 512) was taken as the space's before, a mistake the caller never heard of.
        if size <= 0 or (align is not None and (not isinstance(align, numbers.Integral) or align <= 0
                                                 or align & (align - 1))):
            raise DeviceUsageError(f"{self.space} malloc {tag!r}: size={size} must be positive and align={align} a power of two")
        align = self.align if align is None else max(int(align), self.align)
        found = self._find_hole(size, align)
        if found is None:
            free = self.capacity - self.allocated_bytes
            largest = max((e - s for s, e in self._holes), default=0)
            raise OutOfMemory(f"{self.space} malloc of {size} bytes for {tag!r} does not fit: {free} bytes free, "
                              f"largest hole {largest}, capacity {self.capacity}", nbytes=size, device=self.device_id)
        hole_index, start = found
        self._take(hole_index, start, size)
        alloc = Allocation(self.base + start, size, tag, read_only, self.space)
        self._forget_freed(alloc)
        bisect.insort(self._starts, alloc.addr)
        self._live[alloc.addr] = alloc
        self.allocated_bytes += size
        self.peak_bytes = max(self.peak_bytes, self.allocated_bytes)
        if self.poison:
            self.u8[start:start + size] = POISON
        return alloc

    def _find_hole(self, size: int, align: int) -> tuple[int, int] | None:
        """(hole index, start offset) of the first fit at or after the cursor, wrapping around."""
        n = len(self._holes)
        if n == 0:
            return None
        first = next((i for i, (s, e) in enumerate(self._holes) if e > self._cursor), 0)
        for k in range(n + 1):  # the cursor's hole twice: above the cursor first, below it last
            i = (first + k) % n
            s, e = self._holes[i]
            lo = max(s, self._cursor) if k == 0 else s
            start = _align_up(self.base + lo, align) - self.base
            if start + size <= e:
                return i, start
        return None

    def _take(self, i: int, start: int, size: int) -> None:
        s, e = self._holes[i]
        pieces = [p for p in ([s, start], [start + size, e]) if p[1] > p[0]]
        self._holes[i:i + 1] = pieces
        self._cursor = start + size

    def _forget_freed(self, alloc: Allocation) -> None:
        i = bisect.bisect_right(self._freed_starts, alloc.addr) - 1
        i = max(i, 0)
        while i < len(self._freed_starts) and self._freed_starts[i] < alloc.end:
            old = self._freed[self._freed_starts[i]]
            if old.end > alloc.addr:
                del self._freed[old.addr]
                del self._freed_starts[i]
            else:
                i += 1

    def free(self, addr: int, *, task: str = "") -> Allocation:
        """Release the allocation starting at ``addr``; double_free / invalid_free faults change nothing."""
        alloc = self._live.get(addr)
        if alloc is None:
            freed = self._freed.get(addr)
            if freed is not None:
                self._fault("double_free", f"free of {addr:#x}: already freed {freed.describe()}",
                            task, addr, 0, freed.describe())
            near = self.nearest(addr)
            self._fault("invalid_free", f"free of {addr:#x}: not the start of a live allocation ({near})",
                        task, addr, 0, near)
        del self._live[addr]
        self._starts.remove(addr)
        bisect.insort(self._freed_starts, addr)
        self._freed[addr] = alloc
        self.allocated_bytes -= alloc.size
        self._give_back(addr - self.base, alloc.size)
        return alloc

    def _give_back(self, start: int, size: int) -> None:
        end = start + size
        i = bisect.bisect_left(self._holes, [start, start])
        if i < len(self._holes) and self._holes[i][0] == end:
            end = self._holes.pop(i)[1]
        if i > 0 and self._holes[i - 1][1] == start:
            start = self._holes[i - 1][0]
            self._holes[i - 1] = [start, end]
        else:
            self._holes.insert(i, [start, end])
        lo, hi = _align_up(start, _PAGE), end // _PAGE * _PAGE
        if hi - lo >= _RELEASE_MIN:
            self._mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)

    def close(self) -> None:
        """Drop the backing; every later access raises (Python-level) errors."""
        self.u8 = None
        try:
            self._mm.close()
        except BufferError:  # numpy views still alive: the mapping goes when they do
            pass
