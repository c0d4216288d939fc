"""Copy kernels (MemcpyAsync, MemcpyAddrAsync) and NoOp.

Both copy kernels read their source and destination from argument slots like
every kernel; what tells them apart is their task kind (``memcpy`` vs
``memcpy_addr``), which decides whether a SoC may refresh them (ge-facts.md 5.3.3,
6.8.5). The copy is byte-exact: shapes may differ if the byte counts agree.
"""
from __future__ import annotations

from zcspec.impl.device.kernels.common import fail, kernel


@kernel("MemcpyAsync", "MemcpyAddrAsync")
def memcpy(task, ins, outs):
    (src,), (dst,) = ins, outs
    if src.nbytes != dst.nbytes:
        raise fail(task, f"copies {src.nbytes} bytes into a {dst.nbytes}-byte output")
    return (src.reshape(-1).view(dst.dtype).reshape(dst.shape),)


@kernel("NoOp")
def noop(task, ins, outs):
    """Leaves its outputs as they are (for measuring task overhead)."""
    return tuple(outs)
