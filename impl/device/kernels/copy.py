"""Copy kernels (MemcpyAsync, MemcpyAddrAsync) and NoOp.

Both copy kernels read their source and destination from argument slots like
every kernel; what tells them apart is their task kind (``memcpy`` vs
``memcpy_addr``), which decides whether a SoC may refresh them (GE:
memcpy_addr_async_task_info.cc, memcpy_async_task_info.cc ``MemcpyAsyncTaskInfo::Init``). The copy is
byte-exact: shapes may differ if the byte counts agree (the stored
bytes: a sub-byte tensor's are packed, impl/platform/storage.py).
"""
from __future__ import annotations

from zcspec.impl.device.kernels.common import fail, kernel
from zcspec.impl.platform import storage


@kernel("MemcpyAsync", "MemcpyAddrAsync")
def memcpy(task, ins, outs):
    (src,), (dst,) = ins, outs
    src_slot, dst_slot = task.slots
    data = storage.to_storage(src, src_slot.dtype)
    if data.size != dst_slot.nbytes:
        raise fail(task, f"copies {data.size} bytes into a {dst_slot.nbytes}-byte output")
    return (storage.from_storage(data, dst.shape, dst_slot.dtype),)


@kernel("NoOp")
def noop(task, ins, outs):
    """Leaves its outputs as they are (for measuring task overhead)."""
    return tuple(outs)
