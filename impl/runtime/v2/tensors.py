"""Tensors as runtime v2 sees them: the caller's :class:`Tensor`, the graph's :class:`TensorData`, and
reference-counted :class:`MemBlock` s (GE: memory_kernel.cc ``FreeMemory``, tensor_utils.cc
``TensorUtils::ShareGtdToTd``).

- A :class:`MemBlock` is memory an allocator handed out. ``AllocMemory`` creates it with one
  reference (the graph's); ``FreeMemory`` drops that reference; sharing it into a caller's
  tensor (``EnsureTensorAtOutMemory`` with a null output address, or
  ``AllocModelOutTensor`` allocating into the user tensor) adds one, so an output
  handed to the caller outlives the graph's FreeMemory. At zero references the block
  goes back to its allocator.
- :class:`TensorData` is an address, a size and a placement, plus the block it holds a
  reference on (None for memory nobody owns here: a user buffer shared by zero copy,
  the loaded weights).
- :class:`Tensor` is the caller's tensor (gert::Tensor): an address (0 = none), the buffer
  size, the placement, optionally a shape and dtype, and the block it owns when the
  runtime put its output in runtime memory (release it with ``release()``).
"""
from __future__ import annotations

import attrs

from zcspec.impl.runtime.v2.errors import ApiMisuseError

PLACEMENTS = ("device", "host")


class MemBlock:
    """``size`` bytes at ``addr`` from ``allocator``; returned to it when the last reference drops."""

    __slots__ = ("allocator", "addr", "size", "placement", "tag", "refs", "io")

    def __init__(self, allocator, addr: int, size: int, placement: str = "device", tag: str = "", io: str = ""):
        self.allocator, self.addr, self.size, self.placement, self.tag = allocator, addr, size, placement, tag
        self.refs, self.io = 1, io  # io: the model input/output this block was allocated for, if any

    def retain(self) -> "MemBlock":
        if self.refs <= 0:
            raise RuntimeError(f"retain of released block {self.tag!r} at {self.addr:#x}")
        self.refs += 1
        return self

    def release(self) -> None:
        if self.refs <= 0:
            raise RuntimeError(f"double release of block {self.tag!r} at {self.addr:#x}")
        self.refs -= 1
        if self.refs == 0:
            self.allocator.free(self)

    def __repr__(self) -> str:
        return f"MemBlock({self.tag!r}, {self.addr:#x}, {self.size}, refs={self.refs})"


@attrs.frozen
class TensorData:
    """Memory a graph value points at; ``block`` is the reference this value holds (or None)."""

    addr: int
    size: int
    placement: str = "device"
    block: MemBlock | None = attrs.field(default=None, eq=False)

    def view(self, offset: int, size: int) -> "TensorData":
        """The part ``[offset, offset + size)`` of this memory, in the same block (no reference taken:
        the graph's reference stays with the alloc node's value, released by its FreeMemory)."""
        return TensorData(self.addr + offset, size, self.placement, self.block)


@attrs.define
class Tensor:
    """The caller's tensor. ``addr`` 0 means no memory given; ``size`` is the buffer's bytes.

    After an execution, ``shape``/``dtype`` hold the output's (EnsureTensorAtOutMemory sets
    them, EnsureTensorAtOutMemory); ``owned`` is the runtime block the tensor holds when the output was put in
    runtime memory (null buffer or fallback), released by ``release()``.
    """

    addr: int = 0
    size: int = 0
    placement: str = "device"
    shape: tuple | None = None
    dtype: str | None = None
    name: str = ""
    owned: MemBlock | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self):
        if self.placement not in PLACEMENTS:
            raise ApiMisuseError(f"tensor {self.name!r}: placement {self.placement!r} is not one of {PLACEMENTS}")

    def adopt(self, block: MemBlock, addr: int | None = None, size: int | None = None) -> None:
        """Point this tensor at ``block`` (or at ``addr``/``size`` inside it) and hold one reference on it."""
        block.retain()
        self.release()
        self.owned, self.placement = block, block.placement
        self.addr = block.addr if addr is None else addr
        self.size = block.size if size is None else size

    def release(self) -> None:
        """Drop the runtime memory this tensor owns, if any (the caller's last reference)."""
        if self.owned is not None:
            block, self.owned = self.owned, None
            block.release()
