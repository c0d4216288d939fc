"""Runtime v1's session allocators of feature-map memory, as GE's runtime/v1/graph/manager/active_memory_allocator.{h,cc}.

- :class:`ActiveMemoryAllocator` (GE's ``ActiveMemoryAllocator``): models of one session share
  *active* memory. ``malloc_memory(purpose, logical)`` takes a model's logical feature-map pieces
  (:class:`LogicalMemoryBlock`: offset in the model's work memory, size, whether it needs memory,
  whether it is the zero-copy piece) and gives each an address: first out of the blocks the
  allocator already holds (each block restarts empty for every call, the pieces largest first,
  ``MallocByActiveMemorys``), then pieces contiguous both logically and in memory are merged
  (``MergeBlocks``; the zero-copy piece never), then every piece still without memory gets a new
  device block (``MallocActiveMemorys``: above 2 MiB its size rounded up to 2 MiB; a piece that
  needs no memory gets the highest address handed out so far); every block in use is then zeroed, as GE's ``aclrtMemset``
  after each call. ``used_count`` counts the calls;
  ``free_memory`` frees every block when it drops to 0. ``memory_size`` is the peak bytes used.
- :class:`PhysicalMemoryAllocator` (GE's ``PhysicalMemoryAllocator``): a pool of physical pages
  of one size class (``DRV_PAGE`` 2 MiB, ``LARGE_PAGE`` 8 MiB, ``DRV_1G_PAGE`` 1 GiB) shared by the
  expandable allocators of a device (:class:`PhysicalMemoryAllocatorMgr`). A freed page goes to a
  free list and is reused before a new one is made; pages go back to the device when the last
  user finalizes the pool. A 1 GiB page the device cannot give is retried as 2 MiB pages (GE
  ``MallocPhysicalPage``; here: the same bytes at 2 MiB alignment) unless ``use_1g_only``.
- :class:`ExpandableActiveMemoryAllocator` (GE's ``ExpandableActiveMemoryAllocator`` over
  ``ExpandableActiveMemoryAllocatorImp``): reserves a virtual range as large as the device's memory
  and backs it page by page; ``malloc_memory(purpose, size)`` grows the mapped prefix to ``size``
  bytes (``incremental``: by ``size`` bytes) and returns the range's base (the fixed base);
  ``free_memory`` gives the pages back to the pool and the range to the device when its
  ``used_count`` drops to 0. :class:`FixedBaseExpandableAllocator` is GE's ``Malloc``/``Free`` face of it.
- :class:`SessionMemAllocator`: one allocator per (session, device, memory type, page size).

Threads: GE's classes are "called from several threads" and keep their state under a recursive
mutex; so do these (``_lock``). Device calls also take the device lock (the emulated device is not
thread safe; a real driver is). Every public call is written to the device trace as an
``AllocatorCall`` enter (after the lock is taken) and exit (before it is released) with the calling
thread, and the allocator's device memory is tagged with its unique ``name``:
V1-ALLOCATOR-ACCOUNTING recomputes from that trace who holds the memory.

Not modelled (docs/runtime-v1.md): the extend-size-full mode in which ``ActiveMemoryAllocator``
maps its blocks through the expandable allocator and recycles physical pages between executions
(``Recycle``, ``MallocPhysicalMemory``, GE's NEW_VA / PHYSICAL_MEM_USING paths and the VA/PA page
records); a page asking back its own last physical page first (``last_pa_index``); GE's delayed
unmap. Runtime v1's load takes a model's feature map from its session's ``ActiveMemoryAllocator`` as
GE's ``DavinciModel::MallocFeatureMapMem`` does under the extend-size static memory policy
(session.py, load.py); the other allocators here are not called by the loader (GE's fixed feature
memory from ``FixedBaseExpandableAllocator``, model_executor.cc, is not modelled).
"""
from __future__ import annotations

import contextlib
import itertools
import threading
import weakref

import attrs

from zcspec.impl.device import OutOfMemory
from zcspec.impl.device import trace as tr
from zcspec.impl.runtime.v1.allocator import device_lock
from zcspec.impl.runtime.v1.errors import MemoryAllocationError

DRV_PAGE = 2 << 20         # kDrvPageSize
LARGE_PAGE = 8 << 20       # kLargePageSize
DRV_1G_PAGE = 1 << 30      # kDrv1GPageSize
PAGE_SIZES = (DRV_PAGE, LARGE_PAGE, DRV_1G_PAGE)
# Allocators are numbered per device (their names prefix their device allocations' tags): a name then depends on
# what was done with that device only, so a run makes the same trace whatever ran before it in the process.
_SERIALS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_SERIALS_LOCK = threading.Lock()


def _serial(device) -> int:
    with _SERIALS_LOCK:
        counter = _SERIALS.setdefault(device, itertools.count(1))
        return next(counter)


def align_up(size: int, align: int) -> int:
    return (size + align - 1) // align * align


@attrs.define
class LogicalMemoryBlock:
    """One piece of a model's feature-map memory; ``active_addr`` is the allocator's answer (None: none)."""

    logical_addr: int
    memory_size: int
    alloc: bool = True
    is_zero_copy: bool = False
    active_addr: int | None = None


@attrs.define
class _ActiveBlock:
    addr: int
    total_size: int
    used_size: int
    new_add: bool = True

    def take(self, size: int) -> int | None:
        if size <= self.total_size - self.used_size:
            self.used_size += size
            return self.addr + self.used_size - size
        return None


class _Traced:
    """The lock, the name and the trace records every allocator of this module shares."""

    runtime = "v1"

    def __init__(self, device, kind: str):
        self.device = device
        self.name = f"v1 {kind}#{_serial(device)}"
        self._lock = threading.RLock()
        self._device_lock = device_lock(device)

    @contextlib.contextmanager
    def _call(self, call: str, size: int = 0):
        with self._lock:
            thread = threading.get_ident()
            self.device.trace.append(tr.AllocatorCall(self.name, self.runtime, call, "enter", thread, size))
            out = {"addr": 0}
            phase = "raise"
            try:
                yield out
                phase = "exit"
            finally:
                self.device.trace.append(tr.AllocatorCall(self.name, self.runtime, call, phase, thread, size,
                                                          out["addr"] or 0))

    def _malloc(self, size: int, purpose: str, align: int | None = None) -> int | None:
        with self._device_lock:
            try:
                return self.device.malloc(size, align, tag=f"{self.name} {purpose}")
            except OutOfMemory:
                return None

    def _free(self, addr: int) -> None:
        with self._device_lock:
            self.device.free(addr)


class ActiveMemoryAllocator(_Traced):
    """GE's ActiveMemoryAllocator on one device (see the module doc)."""

    def __init__(self, device, memory_type: str = "hbm", page_size: int = DRV_PAGE):
        super().__init__(device, "active memory")
        self.memory_type = memory_type
        self.used_count = 0
        self.peak_size = 0
        self.maximum_active_addr = 0
        self.blocks: list[_ActiveBlock] = []

    def malloc_memory(self, purpose: str, logical: list[LogicalMemoryBlock]) -> tuple[int | None, list]:
        """Addresses for ``logical`` (edited in place: merged, ``active_addr`` set); returns (the first
        piece's address or None when a piece got none, the (address, used bytes) of every block in use)."""
        with self._call("malloc_memory", sum(b.memory_size for b in logical if b.alloc)) as out:
            if any(b.memory_size < 0 for b in logical):
                raise MemoryAllocationError(f"{purpose}: a logical piece has a negative size", buffer=purpose)
            self.used_count += 1
            for block in self.blocks:
                block.used_size, block.new_add = 0, False
            self._from_blocks(logical)
            logical[:] = _merged(logical)
            active = self._new_blocks(purpose, logical)
            ok = bool(logical) and all(b.active_addr is not None for b in logical)
            out["addr"] = logical[0].active_addr if ok else 0
            return (logical[0].active_addr if ok else None), active

    def _from_blocks(self, logical: list[LogicalMemoryBlock]) -> None:
        by_size = sorted(logical, key=lambda b: -b.memory_size)   # largest first: less waste
        for block in self.blocks:
            for piece in by_size:
                if piece.active_addr is None:
                    piece.active_addr = block.take(piece.memory_size)
        logical.sort(key=lambda b: b.logical_addr)

    def _new_blocks(self, purpose: str, logical: list[LogicalMemoryBlock]) -> list[tuple[int, int]]:
        for piece in logical:
            if piece.active_addr is not None:
                continue
            if not piece.alloc:
                piece.active_addr = self.maximum_active_addr   # no memory: above all handed out
                continue
            size = piece.memory_size if piece.memory_size <= DRV_PAGE else align_up(piece.memory_size, DRV_PAGE)
            piece.active_addr = self._malloc(max(size, 1), purpose)
            if piece.active_addr is None:
                break
            self.maximum_active_addr = max(self.maximum_active_addr, piece.active_addr + size)
            self.blocks.append(_ActiveBlock(piece.active_addr, size, piece.memory_size))
            self.blocks.sort(key=lambda b: -b.total_size)
        used = [(b.addr, b.used_size) for b in self.blocks if b.used_size]
        with self._device_lock:   # GE: aclrtMemset of every block in use, for each model
            for addr, size in used:
                self.device.memset(addr, size, 0)
        self.peak_size = max(self.peak_size, sum(b.used_size for b in self.blocks))
        return used

    def free_memory(self) -> None:
        """One holder fewer; the last one frees every block."""
        with self._call("free_memory"):
            self.used_count = max(self.used_count - 1, 0)
            if self.used_count == 0:
                for block in self.blocks:
                    self._free(block.addr)
                self.blocks.clear()
                self.maximum_active_addr = self.peak_size = 0

    def memory_size(self) -> int:
        with self._lock:
            return self.peak_size


def _merged(logical: list[LogicalMemoryBlock]) -> list[LogicalMemoryBlock]:
    """GE's MergeBlocks: a piece joins the one before it when both are contiguous logically and in
    memory (or both still without memory), it needs memory and it is not the zero-copy piece."""
    if len(logical) <= 1:
        return list(logical)
    out = [attrs.evolve(logical[0])]
    for pre, cur in zip(logical, logical[1:]):
        same_memory = (cur.active_addr is None and pre.active_addr is None) or (
            cur.active_addr is not None and pre.active_addr is not None
            and cur.active_addr == pre.active_addr + pre.memory_size)
        if cur.alloc and not cur.is_zero_copy and cur.logical_addr == pre.logical_addr + pre.memory_size and same_memory:
            out[-1].memory_size += cur.memory_size
        else:
            out.append(attrs.evolve(cur))
    return out


@attrs.define
class _Page:
    addr: int            # the device allocation holding the page
    ref_count: int = 1
    in_free_list: bool = False


class PhysicalMemoryAllocator(_Traced):
    """GE's PhysicalMemoryAllocator: physical pages of one size class, with a free list (module doc)."""

    def __init__(self, device, memory_type: str = "hbm", page_size: int = DRV_PAGE, *, use_1g_only: bool = False):
        if page_size not in PAGE_SIZES:
            raise ValueError(f"page_size={page_size} is not one of GE's page size classes {PAGE_SIZES}")
        super().__init__(device, "physical pages")
        self.memory_type, self.page_size, self.use_1g_only = memory_type, page_size, use_1g_only
        self.ref_count = 0
        self.pages: list[_Page | None] = []
        self.free_list: list[int] = []
        self.fell_back_to_2m = False

    def initialize(self) -> None:
        """One user more (GE's ``Initialize``); written to the trace as a call, as ``finalize`` is, so that
        V1-ALLOCATOR-ACCOUNTING counts the pool's users against the pages it holds."""
        with self._call("initialize"):
            self.ref_count += 1

    def malloc_physical(self, purpose: str, reuse: bool = True) -> int:
        """The index of a page now in use: from the free list (``reuse``), else a new one."""
        with self._lock:
            while reuse and self.free_list:
                i = self.free_list.pop()
                page = self.pages[i]
                page.in_free_list = False
                if page.ref_count == 0:
                    page.ref_count = 1
                    return i
            addr = self._new_page(purpose)
            self.pages.append(_Page(addr))
            return len(self.pages) - 1

    def _new_page(self, purpose: str) -> int:
        align = DRV_1G_PAGE if self.page_size == DRV_1G_PAGE and not self.fell_back_to_2m else DRV_PAGE
        addr = self._malloc(self.page_size, f"page {purpose}", align)
        if addr is None and align == DRV_1G_PAGE and not self.use_1g_only:
            self.fell_back_to_2m = True        # GE: retry with pg_type 2M, same page size
            addr = self._malloc(self.page_size, f"page {purpose}", DRV_PAGE)
        if addr is None:
            raise MemoryAllocationError(f"cannot allocate a physical page of {self.page_size} bytes for {purpose}",
                                        buffer=purpose)
        return addr

    def free_physical(self, index: int) -> None:
        with self._lock:
            page = self.pages[index]
            page.ref_count = max(page.ref_count - 1, 0)
            if page.ref_count == 0 and not page.in_free_list:
                self.free_list.append(index)
                page.in_free_list = True

    def finalize(self) -> None:
        """One user fewer; the last one gives every unused page back to the device."""
        with self._call("finalize"):
            self.ref_count = max(self.ref_count - 1, 0)
            if self.ref_count:
                return
            for i, page in enumerate(self.pages):
                if page is not None and page.ref_count == 0:
                    self._free(page.addr)
                    self.pages[i] = None
            self.free_list = [i for i in self.free_list if self.pages[i] is not None]

    @property
    def physical_memory_size(self) -> int:
        return sum(self.page_size for p in self.pages if p is not None)


class PhysicalMemoryAllocatorMgr:
    """One shared pool per (device, memory type, page size), as GE's PhysicalMemoryAllocatorMgr."""

    _lock = threading.RLock()
    _pools: dict = {}

    @classmethod
    def create_allocator(cls, device, memory_type: str = "hbm", page_size: int = DRV_PAGE) -> PhysicalMemoryAllocator:
        with cls._lock:
            key = (id(device), memory_type, page_size)
            pool = cls._pools.get(key)
            if pool is None or pool.device is not device:
                pool = cls._pools[key] = PhysicalMemoryAllocator(device, memory_type, page_size)
            return pool

    @classmethod
    def forget(cls, pool: PhysicalMemoryAllocator) -> None:
        """Drop ``pool`` once no user is left (GE keeps the emptied object for the process's life; here
        the manager would keep its device alive)."""
        with cls._lock:
            key = (id(pool.device), pool.memory_type, pool.page_size)
            if cls._pools.get(key) is pool and pool.ref_count == 0:
                del cls._pools[key]


class ExpandableActiveMemoryAllocator(_Traced):
    """GE's ExpandableActiveMemoryAllocator: a reserved virtual range backed page by page (module doc)."""

    def __init__(self, device, memory_type: str = "hbm", page_size: int = DRV_PAGE, *, share_pool: bool = True):
        super().__init__(device, "expandable memory")
        self.memory_type, self.page_size, self.share_pool = memory_type, page_size, share_pool
        self.used_count = 0
        self.used_memory_size = 0
        self.base: int | None = None
        self.virtual_size = 0
        self.pool: PhysicalMemoryAllocator | None = None
        self.page_table: dict[int, int] = {}   # page index in the range -> pool page index

    def malloc_memory(self, purpose: str, size: int, incremental: bool = False) -> int:
        """The address of ``size`` more bytes (``incremental``) or the base of the first ``size`` bytes."""
        with self._call("extend_memory" if incremental else "malloc_memory", size) as out:
            if size < 0:
                raise MemoryAllocationError(f"{purpose}: negative size {size}", buffer=purpose)
            target = self.used_memory_size + size if incremental else size
            self._reserve(target, purpose)
            self._map_up_to(target, purpose)
            if incremental:
                addr = self.base + self.used_memory_size
                self.used_memory_size += size
            else:
                addr = self.base
                self.used_count += 1
                self.used_memory_size = max(self.used_memory_size, size)
            out["addr"] = addr
            return addr

    def _reserve(self, size: int, purpose: str) -> None:
        if self.base is not None:
            return
        total = self.device.mem.capacity
        if size > total:
            raise MemoryAllocationError(f"{purpose}: {size} bytes exceed the device's {total}", buffer=purpose)
        self.virtual_size = align_up(total, self.page_size)
        with self._device_lock:
            self.base = self.device.vm.reserve(self.virtual_size, tag=f"{self.name} {purpose}")
        self.pool = (PhysicalMemoryAllocatorMgr.create_allocator(self.device, self.memory_type, self.page_size)
                     if self.share_pool else PhysicalMemoryAllocator(self.device, self.memory_type, self.page_size))
        self.pool.initialize()

    def _map_up_to(self, size: int, purpose: str) -> None:
        for index in range(-(-size // self.page_size)):
            if index in self.page_table:
                continue
            page = self.pool.malloc_physical(purpose)
            with self._device_lock:
                self.device.vm.map(self.base + index * self.page_size, self.pool.pages[page].addr, self.page_size,
                                   tag=f"{self.name} {purpose}")
            self.page_table[index] = page

    def free_memory(self) -> None:
        """One holder fewer; the last one gives the pages back to the pool and the range to the device."""
        with self._call("free_memory"):
            self.used_count = max(self.used_count - 1, 0)
            if self.used_count or self.base is None:
                return
            for index, page in sorted(self.page_table.items()):
                with self._device_lock:   # never the device lock while taking the pool's (lock order)
                    self.device.vm.unmap(self.base + index * self.page_size, tag=self.name)
                self.pool.free_physical(page)
            with self._device_lock:
                self.device.vm.release(self.base)
            self.page_table.clear()
            self.pool.finalize()
            if self.share_pool:
                PhysicalMemoryAllocatorMgr.forget(self.pool)
            self.base, self.used_memory_size, self.pool = None, 0, None

    @property
    def mapped_pages(self) -> int:
        return len(self.page_table)


@attrs.frozen
class MemBlock:
    addr: int
    size: int


class FixedBaseExpandableAllocator:
    """GE's FixedBaseExpandableAllocator: every block is the expandable range's fixed base."""

    def __init__(self, device, memory_type: str = "hbm", page_size: int = DRV_PAGE):
        self.expandable = ExpandableActiveMemoryAllocator(device, memory_type, page_size)

    def malloc(self, size: int) -> MemBlock:
        return MemBlock(self.expandable.malloc_memory("fixed_base_expandable_memory", size), size)

    def free(self, block: MemBlock) -> None:
        self.expandable.free_memory()


class SessionMemAllocator:
    """One allocator of class ``cls`` per (session, device, memory type, page size); ``devices`` maps a
    device id to its Device."""

    def __init__(self, cls, devices):
        self.cls, self.devices = cls, devices
        self._lock = threading.Lock()
        self._map: dict[int, dict[int, dict]] = {}

    def get_mem_allocator(self, session_id: int, device_id: int, memory_type: str = "hbm",
                          page_size: int = DRV_PAGE):
        with self._lock:
            per_device = self._map.setdefault(session_id, {}).setdefault(device_id, {})
            key = (memory_type, page_size)
            if key not in per_device:
                per_device[key] = self.cls(self.devices[device_id], memory_type, page_size)
            return per_device[key]

    def remove_allocator(self, session_id: int, device_id: int | None = None) -> None:
        """Forget the session's allocators (on ``device_id`` only, when given); absent ones are ignored."""
        with self._lock:
            if session_id not in self._map:
                return
            if device_id is None:
                del self._map[session_id]
                return
            self._map[session_id].pop(device_id, None)
            if not self._map[session_id]:
                del self._map[session_id]
