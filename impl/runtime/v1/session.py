"""A runtime-v1 session: the models loaded into it share its feature-map memory under GE's extend-size
static memory policy.

GE reads ``ge.exec.staticMemoryPolicy`` (``STATIC_MEMORY_POLICY``, or the environment variable
``GE_USE_STATIC_MEMORY``) in ``VarManager::IsGeUseExtendSizeMemory`` (base/graph/manager/graph_var_manager.h):
"1" (kStaticMemory), "2" (kExtendSizeType) and "4" (kDynamicAndStaticExpandable) make static graphs use
extend-size memory, "3" (kDynamicExpandable) only dynamic ones, "0" or unset neither. Then
``DavinciModel::MallocFeatureMapMem`` (davinci_model.cc) takes a model's feature map, at load, from
``SessionMemAllocator<ActiveMemoryAllocator>``'s allocator of the model's session and device: the models
of one session get the same blocks (GE's st test ``load_model_with_extending_static_memory``: two
models, one ``mem_base_``), extended when a later model needs more, and ``FreeFeatureMapMem`` at
unload gives back one hold; the last holder frees the blocks (``ActiveMemoryAllocator::FreeMemory``).

A :class:`Session` is what a ``LoadOptions(session=...)`` names. ``static_memory_policy`` takes GE's
strings; "4" also turns on GE's extend-size-full mode (blocks mapped through the expandable allocator,
physical pages recycled after each execution), which runtime v1 does not model: it is refused, as is
any value GE does not define (GE itself reads an unknown value as "0").
"""
from __future__ import annotations

import itertools
import threading
import weakref

from zcspec.impl.runtime.v1.active_memory import ActiveMemoryAllocator, LogicalMemoryBlock
from zcspec.impl.runtime.v1.errors import InvalidParam, MemoryAllocationError

STATIC_MEMORY_POLICIES = ("", "0", "1", "2", "3", "4")
_STATIC_EXTEND = ("1", "2", "4")      # IsGeUseExtendSizeMemory(false)
_NOT_MODELLED = ("4",)                # kDynamicAndStaticExpandable: extend-size-full
_IDS = itertools.count(1)


def _check_policy(value) -> str:
    if not isinstance(value, str) or value not in STATIC_MEMORY_POLICIES:
        raise InvalidParam(f"static_memory_policy={value!r} must be one of GE's ge.exec.staticMemoryPolicy values "
                           f"{STATIC_MEMORY_POLICIES[1:]} (a string, or '' for unset)")
    if value in _NOT_MODELLED:
        raise InvalidParam(f"static_memory_policy={value!r} (kDynamicAndStaticExpandable) turns on GE's extend-size-"
                           "full mode (feature-map blocks mapped through the expandable allocator, physical pages "
                           "recycled after each execution), which runtime v1 does not model; use '2' (kExtendSizeType)")
    return value


class Session:
    """One GE session: an id, its static memory policy, and one ActiveMemoryAllocator per device
    (``SessionMemAllocator<ActiveMemoryAllocator>``, created on first use)."""

    def __init__(self, static_memory_policy: str = "2"):
        self.static_memory_policy = _check_policy(static_memory_policy)
        self.session_id = next(_IDS)
        self._lock = threading.Lock()
        self._allocators: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

    @property
    def extend_size_memory(self) -> bool:
        """GE's ``VarManager::IsGeUseExtendSizeMemory(false)``: static graphs take their feature map from
        the session's allocator."""
        return self.static_memory_policy in _STATIC_EXTEND

    def allocator(self, device) -> ActiveMemoryAllocator:
        """The session's ActiveMemoryAllocator on ``device`` (GE: ``GetMemAllocator(session_id, device_id)``)."""
        with self._lock:
            alloc = self._allocators.get(device)
            if alloc is None:
                alloc = self._allocators[device] = ActiveMemoryAllocator(device)
            return alloc

    def __repr__(self) -> str:
        return f"Session(id={self.session_id}, static_memory_policy={self.static_memory_policy!r})"


def malloc_feature_map(allocator: ActiveMemoryAllocator, model_name: str, fm_size: int, zero_copy_size: int,
                       io_backed: bool) -> tuple[int, int | None]:
    """The extend-size branch of GE's ``DavinciModel::MallocFeatureMapMem``: (feature-map base, I/O region
    base or None) from the session's allocator, which then counts this model among its holders.

    The logical pieces are GE's: the feature map ``[0, fm_size)`` (``fm_memory_infos``: one piece, the
    model file has no sub-memory infos), then the zero-copy piece ``[fm_size, +zero_copy_size)``, which
    needs memory only when the I/O region is backed (``io_backed``: zero copy off; GE: not
    reuseZeroCopyMemory). Fewer bytes than the pieces need (GE: ``MemorySize() < data_size``) gives the
    hold back and raises MemoryAllocationError (ACL_ERROR_GE_MEMORY_ALLOCATION)."""
    pieces = [LogicalMemoryBlock(0, fm_size)]
    if zero_copy_size:
        pieces.append(LogicalMemoryBlock(fm_size, zero_copy_size, alloc=io_backed, is_zero_copy=True))
    need = fm_size + (zero_copy_size if io_backed else 0)
    base, _ = allocator.malloc_memory("feature map", pieces)
    if base is None or allocator.memory_size() < need:
        allocator.free_memory()
        raise MemoryAllocationError(f"Malloc feature map memory fail for model {model_name!r}: the session's "
                                    f"allocator holds {allocator.memory_size()} bytes < mem_size {need} "
                                    "(davinci_model.cc MallocFeatureMapMem)", buffer="feature map")
    io = next((p.active_addr for p in pieces if p.is_zero_copy and p.alloc), None)
    return base, io
