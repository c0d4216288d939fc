"""Allocators of runtime v2: a caching allocator for one thread and an external allocator hook.

Every allocator hands out :class:`~impl.runtime.v2.tensors.MemBlock` s (``malloc(size, tag)``)
and takes them back (``free(block)``); ``MemBlock.release`` calls ``free`` when the last
reference drops. ``listener`` (if set) is called as ``listener("alloc"|"free", block)`` so the
executor can record the runtime's allocations for the spec's observations.

- :class:`CachingAllocator` (GE's CachingMemAllocator over a ScalableAllocator page-span pool:
  runtime/v2/kernel/memory/caching_mem_allocator.cc, allocator/scalable_allocator.cc, config/default_config.h). Sizes are rounded up to ``MEM_SIZE_ALIGN`` (512).
  Memory comes from the device in *spans* of at least one huge page (2 MiB); a request is
  served best-fit from the free pieces of the spans, splitting the rest off; a freed piece
  merges with free neighbours of its span. Spans stay cached (no device free) until
  ``empty_cache()`` or ``close()``, so steady-state executions make no device malloc.
  Spans above ``NO_CACHE_SPAN`` go back to the device as soon as they are free. One thread
  at a time: there is no locking, as GE's ScalableAllocator has none
  (runtime/v2/kernel/memory/allocator/scalable_allocator.h); the executor's lock is what keeps
  calls from several threads apart. Each call is written to the device trace as an
  ``AllocatorCall`` enter and exit with the calling thread, under the allocator's unique
  ``call_name``, so that V2-ALLOCATOR-ONE-THREAD can see a second thread inside it.
- :class:`ExternalAllocator`: the caller's hook, two callables ``alloc(size) -> address``
  and ``free(address)``, passed per execution (GE's ``external_allocator`` of ``ModelExecuteArg``, runtime/v2/api/api.cc). Its
  ``free`` may release memory at once, so the executor returns blocks to it only after
  synchronizing (``stream_ordered`` False); ``ExternalAllocator.on_device(device)`` is one that
  mallocs and frees on the device, one block at a time.
"""
from __future__ import annotations

import bisect
import functools
import itertools
import threading
from typing import Callable

from zcspec.impl.device import trace as tr
from zcspec.impl.runtime.v2.errors import AllocatorError
from zcspec.impl.runtime.v2.tensors import MemBlock

MEM_SIZE_ALIGN = 512              # runtime/v2/kernel/memory/type/mem_size.h
HUGE_PAGE = 2 << 20               # default_config.h: huge page 2 MiB
NO_CACHE_SPAN = 16 << 30          # spans above 16 GiB are not cached (config/default_config.h)


_SERIAL = itertools.count(1)


def _traced(method):
    """Write the call's enter and exit (with the calling thread) to the allocator's device trace: the size asked
    for, or the block handed back (its address and size), at the enter; the block returned at the exit."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        thread, trace = threading.get_ident(), self.device.trace
        size = args[0] if args and isinstance(args[0], int) else 0
        given = args[0] if args and isinstance(args[0], MemBlock) else None   # free: the block handed back
        trace.append(tr.AllocatorCall(self.call_name, "v2", method.__name__, "enter", thread,
                                      given.size if given else size, given.addr if given else 0))
        result, phase = None, "raise"
        try:
            result = method(self, *args, **kwargs)
            phase = "exit"
            return result
        finally:
            trace.append(tr.AllocatorCall(self.call_name, "v2", method.__name__, phase, thread, size,
                                          getattr(result, "addr", 0) or 0))

    return wrapper


def align_size(size: int) -> int:
    return max(MEM_SIZE_ALIGN, (size + MEM_SIZE_ALIGN - 1) // MEM_SIZE_ALIGN * MEM_SIZE_ALIGN)


class _Span:
    """One device allocation split into pieces: ``free`` maps offset -> size of each free piece."""

    __slots__ = ("addr", "size", "free", "used")

    def __init__(self, addr: int, size: int):
        self.addr, self.size = addr, size
        self.free: dict[int, int] = {0: size}
        self.used = 0

    def take(self, offset: int, size: int) -> None:
        piece = self.free.pop(offset)
        if piece > size:
            self.free[offset + size] = piece - size
        self.used += size

    def give(self, offset: int, size: int) -> None:
        self.used -= size
        after = offset + size
        if after in self.free:
            size += self.free.pop(after)
        before = next((o for o, s in self.free.items() if o + s == offset), None)
        if before is not None:
            self.free[before] += size
        else:
            self.free[offset] = size


class CachingAllocator:
    """Best-fit over cached device spans (see the module docstring). Not thread safe."""

    placement = "device"
    # A freed block stays mapped and is reused only by later work on the same stream, so the graph
    # may free it as soon as its last reader is *launched* (stream order keeps that reader first).
    stream_ordered = True

    def __init__(self, device, *, span_size: int = HUGE_PAGE, stream: int = 0, name: str = "caching"):
        self.device, self.span_size, self.stream, self.name = device, span_size, stream, name
        self.call_name = f"{name}#{next(_SERIAL)}"   # unique: the trace tells allocators apart by it
        self.listener: Callable | None = None
        self._spans: list[_Span] = []        # sorted by address
        self._span_addrs: list[int] = []
        self._live: dict[int, MemBlock] = {}
        self._closed = False
        self.device_mallocs = self.device_frees = self.hits = 0

    # -- the allocator interface ---------------------------------------------------

    @_traced
    def malloc(self, size: int, tag: str = "", io: str = "") -> MemBlock:
        """A block of at least ``size`` bytes (rounded up to 512); OutOfMemory from the device propagates."""
        if self._closed:
            raise AllocatorError(f"allocator {self.name!r} is closed (the model was unloaded)")
        need = align_size(size)
        found = self._best_fit(need)
        if found is None:
            span = self._grow(need)
            found = (span, 0)
        else:
            self.hits += 1
        span, offset = found
        span.take(offset, need)
        block = MemBlock(self, span.addr + offset, need, "device", tag, io)
        self._live[block.addr] = block
        if self.listener:
            self.listener("alloc", block)
        return block

    @_traced
    def free(self, block: MemBlock) -> None:
        if self._live.pop(block.addr, None) is not block:
            raise AllocatorError(f"allocator {self.name!r}: block {block!r} is not one of its live blocks")
        span = self._span_of(block.addr)
        span.give(block.addr - span.addr, block.size)
        if self.listener:
            self.listener("free", block)
        if span.used == 0 and (self._closed or span.size > NO_CACHE_SPAN):
            self._drop(span)

    # -- cache management ----------------------------------------------------------

    @_traced
    def empty_cache(self) -> int:
        """Give every wholly free span back to the device; returns the bytes released."""
        idle = [s for s in self._spans if s.used == 0]
        for s in idle:
            self._drop(s)
        return sum(s.size for s in idle)

    @_traced
    def close(self) -> None:
        """Release the cache; spans still holding blocks (outputs the caller owns) go when those are freed."""
        self._closed = True
        self.empty_cache()

    @property
    def in_use(self) -> int:
        return sum(b.size for b in self._live.values())

    @property
    def cached(self) -> int:
        return sum(s.size for s in self._spans)

    def live_blocks(self) -> tuple[MemBlock, ...]:
        return tuple(self._live.values())

    # -- internals -----------------------------------------------------------------

    def _best_fit(self, need: int) -> tuple[_Span, int] | None:
        best = None
        for span in self._spans:
            for offset, size in span.free.items():
                if size >= need and (best is None or size < best[2]):
                    best = (span, offset, size)
        return None if best is None else best[:2]

    def _grow(self, need: int) -> _Span:
        size = max(self.span_size, (need + HUGE_PAGE - 1) // HUGE_PAGE * HUGE_PAGE)
        addr = self.device.malloc(size, tag=f"{self.name} span")
        self.device_mallocs += 1
        span = _Span(addr, size)
        i = bisect.bisect_left(self._span_addrs, addr)
        self._spans.insert(i, span)
        self._span_addrs.insert(i, addr)
        return span

    def _span_of(self, addr: int) -> _Span:
        i = bisect.bisect_right(self._span_addrs, addr) - 1
        return self._spans[i]

    def _drop(self, span: _Span) -> None:
        i = self._spans.index(span)
        del self._spans[i], self._span_addrs[i]
        self.device.free(span.addr)
        self.device_frees += 1


class ExternalAllocator:
    """The caller's allocator: ``alloc(size) -> device address`` and ``free(address)`` callables."""

    placement = "device"
    # free() may unmap at once, so a block is returned only after the device has run its readers.
    stream_ordered = False

    def __init__(self, alloc: Callable[[int], int], free: Callable[[int], None], *, name: str = "external"):
        self._alloc, self._free, self.name = alloc, free, name
        self.listener: Callable | None = None
        self._live: dict[int, MemBlock] = {}

    def malloc(self, size: int, tag: str = "", io: str = "") -> MemBlock:
        addr = self._alloc(align_size(size))
        if not addr:
            raise AllocatorError(f"external allocator {self.name!r} returned no memory for {size} bytes ({tag!r})")
        block = MemBlock(self, int(addr), align_size(size), "device", tag, io)
        self._live[block.addr] = block
        if self.listener:
            self.listener("alloc", block)
        return block

    def free(self, block: MemBlock) -> None:
        if self._live.pop(block.addr, None) is not block:
            raise AllocatorError(f"external allocator {self.name!r}: block {block!r} is not one of its live blocks")
        if self.listener:
            self.listener("free", block)
        self._free(block.addr)

    def live_blocks(self) -> tuple[MemBlock, ...]:
        return tuple(self._live.values())

    @classmethod
    def on_device(cls, device, *, name: str = "external") -> "ExternalAllocator":
        """An external allocator that mallocs and frees on ``device`` (what ACL's resource manager does)."""
        return cls(lambda size: device.malloc(size, tag=f"{name} block"), device.free, name=name)
