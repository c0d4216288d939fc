"""Task descriptors: what a stream runs. Frozen values; launching one does not consume it.

Tasks that can be refreshed keep their operand addresses *in device memory*, in an
argument table of 64-bit little-endian slots at ``args`` (GE's davinci_model.cc
``kAddrSize = 8``), inputs first then outputs (as GE's HCCL task lays them out,
hccl_task_info.cc ``HcclTaskInfo::SetZeroCopyAddrs``). The device reads the slots when the task executes, so a slot nobody
refreshed really points the task at the old buffer.

- :class:`KernelTask`: a kernel from ``zcspec.impl.device.kernels.KERNELS`` by ``op_type``.
  Its ``kind`` is ``memcpy`` for MemcpyAsync, ``memcpy_addr`` for MemcpyAddrAsync
  and ``kernel`` otherwise (the kinds SoC profiles talk about).
- :class:`MemsetTask`: atomic clean; every slot's range is filled with ``value``.
- :class:`HcclTask`: a collective over communicator ``comm`` (see ``hccl.py``).
- :class:`MemcpyTask`: an async copy with raw addresses in the task itself (not
  refreshable, like a plain rtMemcpyAsync).
- :class:`EventRecordTask` / :class:`EventWaitTask`: cross-stream ordering.
"""
from __future__ import annotations

import functools

import attrs
import numpy as np

from zcspec.impl.platform import dtypes, storage


SLOT_BYTES = 8
ROLES = ("in", "out")


@functools.lru_cache(maxsize=None)
def _np_dtype(name: str) -> np.dtype:
    return np.dtype(dtypes.numpy_dtype(name))


@attrs.frozen
class Slot:
    """One argument slot: the tensor it points at is ``shape`` x ``dtype``; ``role`` is in or out.
    ``packed``: the tensor's elements are packed several to a byte (``impl.platform.storage``)."""

    role: str
    shape: tuple = attrs.field(converter=tuple)
    dtype: str = "float32"
    nbytes: int = attrs.field(init=False)
    np_dtype: np.dtype = attrs.field(init=False, eq=False, repr=False)
    packed: bool = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"slot role {self.role!r} is not one of {ROLES}")
        object.__setattr__(self, "nbytes", dtypes.nbytes(self.shape, self.dtype))
        object.__setattr__(self, "np_dtype", _np_dtype(self.dtype))
        object.__setattr__(self, "packed", storage.packed(self.dtype))


def _attr_dict(items) -> dict:
    return dict(items)


@attrs.frozen(slots=False)
class _ArgTask:
    """Common part of tasks with an argument table."""

    name: str
    op_type: str
    args: int
    slots: tuple = attrs.field(converter=tuple, default=())
    attrs: tuple = attrs.field(converter=tuple, default=())
    in_loop: bool = False

    @functools.cached_property
    def attr_map(self) -> dict:
        return _attr_dict(self.attrs)

    def attr(self, key: str, default=None):
        return self.attr_map.get(key, default)

    @functools.cached_property
    def n_inputs(self) -> int:
        return sum(1 for s in self.slots if s.role == "in")


_KIND_BY_OP = {"MemcpyAsync": "memcpy", "MemcpyAddrAsync": "memcpy_addr"}


@attrs.frozen(slots=False)
class KernelTask(_ArgTask):
    @functools.cached_property
    def kind(self) -> str:
        return _KIND_BY_OP.get(self.op_type, "kernel")


@attrs.frozen(slots=False)
class MemsetTask(_ArgTask):
    """Atomic clean of every slot's range to byte ``value`` (attribute ``value``, default 0)."""

    op_type: str = "AtomicAddrClean"
    args: int = 0
    kind = "memset"


@attrs.frozen(slots=False)
class HcclTask(_ArgTask):
    """Collective ``op_type`` (HcomAllReduce, ...) over communicator ``comm``.

    A device that has no communicator of that name runs it as the only rank.
    """

    comm: str = "world"
    kind = "hccl"


@attrs.frozen
class MemcpyTask:
    name: str
    dst: int
    src: int
    nbytes: int
    direction: str | None = None
    kind = "memcpy_raw"
    op_type = "MemcpyAsync"


@attrs.frozen
class EventRecordTask:
    name: str
    event: int
    kind = "record"


@attrs.frozen
class EventWaitTask:
    name: str
    event: int
    kind = "wait"
