"""The v1 allocator: device memory for the runtime behind one recursive lock per device.

The emulated device is not thread safe (its allocation table and streams are
plain Python structures), as a real device context is not shared without care.
Every runtime-v1 call that touches a device (load, execute, unload, the ACL
facade's malloc/free/memcpy) holds that device's lock, so several threads may
load and execute different models on one device at once. The lock is
recursive because an execute allocates staging memory while holding it.

Allocation failure becomes ``MemoryAllocationError`` (ACL_ERROR_GE_MEMORY_ALLOCATION,
GE: davinci_model.cc ``InitWeightMem``, ``InitFeatureMapAndP2PMem``) naming what was being allocated.
"""
from __future__ import annotations

import threading
import weakref

from zcspec.impl.device import OutOfMemory
from zcspec.impl.runtime.v1.errors import MemoryAllocationError

_LOCKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()

MODEL_TAG = "v1 model"      # allocations a loaded model owns until unload
RUNTIME_TAG = "v1 runtime"  # temporary allocations of one execute call


def device_lock(device) -> threading.RLock:
    """The recursive lock guarding ``device`` (created on first use, shared by every runtime-v1 object)."""
    with _REGISTRY_LOCK:
        lock = _LOCKS.get(device)
        if lock is None:
            lock = _LOCKS[device] = threading.RLock()
        return lock


class V1Allocator:
    """Thread-safe malloc/free on one device; remembers what it handed out so a failure can roll back."""

    def __init__(self, device):
        self.device = device
        self.lock = device_lock(device)

    def malloc(self, size: int, what: str, *, owner: str = MODEL_TAG, read_only: bool = False) -> int:
        """``size`` bytes (at least 1) tagged ``"<owner> <what>"``; MemoryAllocationError when the device is full."""
        with self.lock:
            try:
                return self.device.malloc(max(int(size), 1), tag=f"{owner} {what}", read_only=read_only)
            except OutOfMemory as e:
                raise MemoryAllocationError(f"cannot allocate {size} bytes of device memory for {what}: {e}",
                                            buffer=what) from e

    def free(self, addr: int) -> None:
        with self.lock:
            self.device.free(addr)

    def free_all(self, addrs) -> None:
        """Free every address in ``addrs`` (newest first), even if one fails; re-raise the first failure."""
        first = None
        with self.lock:
            for a in reversed(list(addrs)):
                try:
                    self.device.free(a)
                except Exception as e:  # noqa: BLE001 - keep freeing, report the first
                    first = first or e
        if first is not None:
            raise first
