"""SoC profiles: what the emulated hardware supports, as data later stages consult.

A :class:`SocProfile` is a frozen value. The compiler reads it to decide where a
MemcpyAddrAsync is needed (GE's memcpy_addr_async_pass.cc `MemcpyAddrAsyncPass::Run`: no zero-copy capability
means the pass is skipped) and which blocks may be zero copy (block_mem_assigner.cc
`IsNodeSupportZeroCopy`: ops whose tasks cannot
refresh addresses); the runtimes read it to decide what to refresh and what to
copy; the device enforces it (``Device.refresh_arg`` refuses a refresh the
profile does not allow, so a runtime that ignores the profile fails loudly).

Task kinds (see ``zcspec.impl.device.tasks``): ``kernel`` (AI Core/CPU kernel with an argument
table), ``memcpy`` (a raw-address async copy, ``MemcpyAsync``), ``memcpy_addr``
(copy whose src/dst sit in its argument table, ``MemcpyAddrAsync``), ``memset``
(atomic clean), ``hccl`` (a collective).
"""
from __future__ import annotations

import attrs

from zcspec.impl.platform.errors import UnknownSocError

TASK_KINDS = frozenset({"kernel", "memcpy", "memcpy_addr", "memset", "hccl"})
GiB = 1 << 30


@attrs.frozen
class SocProfile:
    """One named hardware profile.

    - ``capacity``: device memory bytes (backed lazily, so large values are cheap).
    - ``alloc_align``: every device malloc returns a multiple of this (rtMalloc-like).
    - ``refreshable_tasks``: task kinds whose argument slots may be rewritten after load.
    - ``refresh_in_loop``: whether tasks inside loop subgraphs may be refreshed.
    - ``zero_copy``: GE's ``MEMCPY_INFO_SUPPORT_ZEROCOPY`` capability (GE: memcpy_addr_async_pass.cc
      `MemcpyAddrAsyncPass::Run`).
    - ``mem_align`` / ``tensor_align`` / ``padding``: planner granularities, 512-byte
      blocks and ``align32(bytes) + 32`` tensor sizes (GE: mem_assigner.h `MEM_ALIGN_SIZE`,
      op_tensor_utils.cc `OpTensorUtils::CalibrateTensorSize`).
    - ``hccl_no_zero_copy``: collectives whose buffers cannot be zero copy on this SoC,
      on top of what each collective declares itself (``hccl.COLLECTIVES``).
    """

    name: str
    capacity: int
    alloc_align: int = 512
    refreshable_tasks: frozenset = attrs.field(converter=frozenset, default=frozenset())
    refresh_in_loop: bool = True
    zero_copy: bool = True
    mem_align: int = 512
    tensor_align: int = 32
    padding: int = 32
    hccl_no_zero_copy: frozenset = attrs.field(converter=frozenset, default=frozenset())
    description: str = ""

    def __attrs_post_init__(self):
        unknown = self.refreshable_tasks - TASK_KINDS
        if unknown:
            raise ValueError(f"SoC {self.name!r}: unknown task kinds {sorted(unknown)}; known {sorted(TASK_KINDS)}")
        if self.alloc_align <= 0 or self.alloc_align & (self.alloc_align - 1):
            raise ValueError(f"SoC {self.name!r}: alloc_align={self.alloc_align} is not a power of two")

    def can_refresh(self, kind: str, *, in_loop: bool = False) -> bool:
        """Whether a task of ``kind`` (inside a loop subgraph or not) may have its arguments rewritten."""
        return kind in self.refreshable_tasks and (self.refresh_in_loop or not in_loop)


_ALL = ("kernel", "memcpy_addr", "memset", "hccl")

PROFILES: dict[str, SocProfile] = {p.name: p for p in (
    SocProfile(
        "ascend910b", capacity=16 * GiB, alloc_align=512, refreshable_tasks=_ALL,
        description="training SoC: every task kind with an argument table can be refreshed, also in loops",
    ),
    SocProfile(
        "ascend310p", capacity=8 * GiB, alloc_align=32,
        refreshable_tasks=("kernel", "memcpy_addr", "hccl"),
        hccl_no_zero_copy=("HcomBroadcast",),
        description="inference SoC: atomic-clean (memset) tasks cannot be refreshed; broadcast is never zero copy",
    ),
    SocProfile(
        "legacy", capacity=4 * GiB, alloc_align=512,
        refreshable_tasks=("kernel", "memcpy_addr", "memset"), refresh_in_loop=False,
        hccl_no_zero_copy=("HcomAllReduce", "HcomAllGather", "HcomBroadcast"),
        description="older runtime: HCCL tasks and tasks inside loop subgraphs cannot be refreshed",
    ),
    SocProfile(
        "nozc", capacity=4 * GiB, alloc_align=512, refreshable_tasks=(), zero_copy=False,
        hccl_no_zero_copy=("HcomAllReduce", "HcomAllGather", "HcomBroadcast"),
        description="no zero-copy capability: no argument refresh at all, model I/O is always copied",
    ),
)}

DEFAULT_SOC = "ascend910b"


def get_soc(name: str | SocProfile | None = None) -> SocProfile:
    """The profile called ``name`` (default ``ascend910b``); a profile passes through unchanged.

    Raises UnknownSocError listing the known names.
    """
    if isinstance(name, SocProfile):
        return name
    key = DEFAULT_SOC if name is None else name
    try:
        return PROFILES[key]
    except (KeyError, TypeError):
        raise UnknownSocError(str(name), tuple(PROFILES)) from None
