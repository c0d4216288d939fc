"""Allocator selection and reference-counted allocation and release (GE: memory_kernel.cc ``SelectL1Allocator``,
``AllocMemory``, ``FreeMemory``)."""
from __future__ import annotations

from zcspec.impl.runtime.v2.errors import AllocatorError
from zcspec.impl.runtime.v2.tensors import TensorData


def select_allocator(frame, node, args):
    """The caller's allocator for the placement if it passed one, else the one created at load."""
    placement = node.attr("placement", "device")
    external = frame.external.get(placement)
    if external is not None:
        return (external,)
    if frame.loaded.allocator is None:
        raise AllocatorError("no allocator: the executor created none (always_external_allocator) and the "
                             f"execution passed none for placement {placement!r}", node=node.name)
    return (frame.loaded.allocator,)


def get_external_allocator(frame, node, args):
    """always_external_allocator: the caller must pass the allocator (GetExternalL1Allocator asserts,
    SelectL1Allocator)."""
    placement = node.attr("placement", "device")
    external = frame.external.get(placement)
    if external is None:
        raise AllocatorError(f"always_external_allocator is on but the execution passed no allocator for "
                             f"placement {placement!r} (pass allocators={{'{placement}': ...}})", node=node.name)
    return (external,)


def alloc_memory(frame, node, args):
    """``size`` bytes from the allocator, one reference held by the graph (AllocMemory)."""
    (allocator,) = args
    block = allocator.malloc(node.attr("size"), tag=node.attr("tensor"))
    frame.hold(block)
    return (TensorData(block.addr, block.size, block.placement, block),)


def free_memory(frame, node, args):
    """Drop the graph's reference (FreeMemory); the block returns to its allocator at zero references."""
    (td,) = args
    if td.block is not None:
        frame.drop(td.block)
    return ()


KERNELS = {
    "SelectAllocator": select_allocator, "GetExternalAllocator": get_external_allocator,
    "AllocMemory": alloc_memory, "AllocMemHbm": alloc_memory, "FreeMemory": free_memory,
}
