"""The state of one execution: node values, the graph's memory references, what the spec will observe.

A :class:`Frame` lives for one ``execute`` call. Kernels read their inputs from
``values`` and the loaded model from ``loaded``; every block the graph allocates is
``hold``-ed here so that a failed execution can release whatever its FreeMemory nodes
did not reach. ``log`` records runtime events (allocations, frees, errors) with the
device trace position they happened at, so observe.py can interleave them with the
device's own events.
"""
from __future__ import annotations

import attrs

from zcspec.impl.runtime.v2.tensors import MemBlock


@attrs.frozen
class RtEvent:
    """A runtime event at device trace position ``at``; ``kind`` is alloc, free or error."""

    at: int
    kind: str
    address: int | None = None
    size: int | None = None
    io: str | None = None
    purpose: str | None = None
    message: str | None = None
    code: str | None = None


class Frame:
    def __init__(self, loaded, inputs: list, outputs: list, external: dict, batch: str | None = None):
        self.loaded, self.device = loaded, loaded.device
        self.inputs, self.outputs, self.external = inputs, outputs, external
        self.batch = batch   # the dynamic-batch branch this execution runs (runtime/branches.py), None if none
        self.values: dict[str, tuple] = {}
        self.held: dict[int, MemBlock] = {}
        self.deferred: list[MemBlock] = []
        self.io_addresses: dict[tuple, int] = {}  # (role, index) -> address the tasks used for that I/O
        self.handed: dict[int, tuple] = {}        # block address -> (role, index) of the caller tensor now owning it

    def log(self, kind: str, **fields) -> None:
        if self.device.trace.enabled:
            self.loaded.log.append(RtEvent(len(self.device.trace), kind, **fields))

    def hold(self, block: MemBlock) -> None:
        self.held[id(block)] = block

    def drop(self, block: MemBlock) -> None:
        """The graph's reference on ``block`` goes (FreeMemory). Deferred to after synchronize when another
        stream may still use it, or when its allocator may unmap it at once (not stream ordered)."""
        if self.held.pop(id(block), None) is None:
            return
        if self.loaded.multi_stream or not getattr(block.allocator, "stream_ordered", False):
            self.deferred.append(block)
        else:
            block.release()

    def release_all(self) -> None:
        """Release every reference the graph still holds (after synchronize, or on failure)."""
        for block in self.deferred + list(self.held.values()):
            block.release()
        self.deferred, self.held = [], {}
