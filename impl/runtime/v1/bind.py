"""Checking the user's buffers of one execute call and deciding how each I/O is bound.

Everything here is checked before the runtime touches the device, so a
rejected call changes nothing. The rules, in order, each error naming the buffer:

1. count: as many inputs and outputs as the model has (E13025, ``davinci_model.cc`` ``UpdateAllNodeArgs``);
2. each buffer bound to the I/O of its position, named after it;
3. null address: ACL_ERROR_INVALID_PARAM, except a 0-byte buffer for an I/O of 0 raw bytes, which GE
   accepts (``davinci_model.cc`` ``CopyInputData`` and ``CopyInputForNoZeroCopy`` skip a buffer of length 0):
   nothing is read or written through it, so it is not looked up in the live allocations (rule 5) either;
4. size: ``size + 64 < model size`` is E13025 (``CheckUserAndModelSize``); and, beyond GE, a buffer smaller
   than the raw tensor bytes is refused too (GE would let the kernel run past it);
5. the buffer lies inside one live allocation of its placement (device or host);
6. a device buffer is aligned to its element size (what the kernels need; the
   device faults on a misaligned slot);
7. host placement while reuseZeroCopyMemory=1: E13025, all I/O must be device
   memory (``ConstructZeroCopyIoActiveBaseAddrs``);
8. no overlap with the model's own memory (its allocations, the caller's work
   and weight memory), between two outputs, or between an input and an output;
   two inputs may share memory (both are only read), and an output may be given the very buffer
   (address, size and placement) of an input the model file places at the same logical address with
   the same size: a pass-through (Data -> NetOutput), whose bytes no task writes; its copy, if any,
   carries the input's bytes back onto themselves (GE checks no overlap at all; its compiled-graph
   summary lists such input/output pairs as sharing one address, GetIOIndexesWithSameAddr).

Modes: ``copy`` (copy-only I/O, or zero copy off), ``stage`` (zero-copy I/O in host
memory: a temporary device buffer for the call), ``refresh`` (the user's device
buffer itself). ``Binding.address`` is the device address the tasks use for the I/O:
the model's own address (copy), the user's buffer (refresh), the staging buffer
(stage: None until execute has allocated it).
"""
from __future__ import annotations

import attrs

from zcspec.impl.platform import dtypes
from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1.errors import InvalidParam, ParamInvalid

GE_SIZE_SLACK = 64   # davinci_model.cc CheckUserAndModelSize's "aligned 64 bytes" (kDataMemAlignSizeCompare)


@attrs.frozen
class Binding:
    """User buffer ``buffer`` bound to I/O ``io`` (a ZeroCopyOffset) in ``mode`` for one call."""

    io: object
    buffer: UserBuffer
    mode: str                   # copy | stage | refresh
    address: int | None = None  # where the tasks find the I/O in this call (see the module docstring)


def bind(lm, inputs: list, outputs: list) -> list[Binding]:
    """The bindings of one call in model order (inputs then outputs); ParamInvalid/InvalidParam on bad input."""
    ins = [z for z in lm.io if z.role == "input"]
    outs = [z for z in lm.io if z.role == "output"]
    for role, zs, bufs in (("inputs", ins, inputs), ("outputs", outs, outputs)):
        if len(bufs) != len(zs):
            raise ParamInvalid(f"The number of {role} provided by the user ({len(bufs)}) is inconsistent with the "
                               f"model's ({len(zs)}: {[z.name for z in zs]})", buffer=role)
    bindings = [_bind_one(lm, z, b) for z, b in zip(ins + outs, list(inputs) + list(outputs))]
    _check_overlaps(lm, bindings)
    return bindings


def _bind_one(lm, z, b) -> Binding:
    if not isinstance(b, UserBuffer):
        raise InvalidParam(f"expected a UserBuffer for {z.role} {z.index}, got {type(b).__name__}", buffer=z.name)
    if b.name not in (z.name, z.desc.name, z.desc.tensor):
        raise ParamInvalid(f"is passed as {z.role} {z.index}, which is model {z.role} {z.name!r}", buffer=b.name)
    d = z.desc
    if not b.addr and not null_allowed(b, d):
        raise InvalidParam(f"null address (ACL_ERROR_INVALID_PARAM): only a 0-byte buffer for an I/O of 0 raw bytes "
                           f"may be null; this one is {b.size} bytes, the {z.role} has {d.nbytes}", buffer=z.name)
    if b.size + GE_SIZE_SLACK < d.size:
        raise ParamInvalid(f"The user provided {b.size} bytes of buffer size plus the aligned {GE_SIZE_SLACK} bytes, "
                           f"which is less than the tensor size {d.size} bytes required by the model", buffer=z.name)
    if b.size < d.nbytes:
        raise ParamInvalid(f"The user provided {b.size} bytes of buffer size, which is less than the tensor's raw "
                           f"size {d.nbytes} bytes ({d.dtype}{list(d.shape)}): the tasks would access past its end",
                           buffer=z.name)
    if b.addr:
        _check_live(lm, z, b)
    if b.placement == "device":
        item = max(1, dtypes.get(d.dtype).bits // 8)
        if b.addr % item:
            raise ParamInvalid(f"address {b.addr:#x} is not aligned to {item} bytes (the {d.dtype} element size)",
                               buffer=z.name)
    elif lm.options.reuse_zero_copy_memory:
        raise ParamInvalid("Zero-copy memory reuse mode is enabled, requiring all I/O tensors to be allocated in "
                           "device memory; this one is host memory (davinci_model.cc "
                           "ConstructZeroCopyIoActiveBaseAddrs)", buffer=z.name)
    if z.copy_only:
        return Binding(z, b, "copy", lm.model_address(z))
    return Binding(z, b, "refresh", b.addr) if b.placement == "device" else Binding(z, b, "stage")


def null_allowed(b: UserBuffer, d) -> bool:
    """Whether user buffer ``b`` may be null for I/O ``d``: it is 0 bytes and so is the I/O's raw data
    (``davinci_model.cc`` ``CopyInputData``: ``data_buf.length == 0`` -> no copy), so no task or copy
    reaches through it."""
    return b.size == 0 and d.nbytes == 0


def pass_through(x: Binding, y: Binding) -> bool:
    """Whether output binding ``x`` and input binding ``y`` share one buffer as a pass-through: the
    same address, size and placement, and the model file places both I/O at one logical address with
    one size (the output is the input's bytes, which no task writes)."""
    same_buffer = (x.buffer.addr, x.buffer.size, x.buffer.placement) == (y.buffer.addr, y.buffer.size, y.buffer.placement)
    a, b = x.io.desc, y.io.desc
    same_bytes = (a.region, a.offset, a.size, a.nbytes) == (b.region, b.offset, b.size, b.nbytes)
    return (x.io.role, y.io.role) == ("output", "input") and same_buffer and same_bytes


def _check_live(lm, z, b) -> None:
    space = lm.device.mem if b.placement == "device" else lm.device.host
    a = space.live(b.addr)
    if a is None or b.addr + b.size > a.end:
        where = "no live allocation" if a is None else f"{a.describe()}, which ends at {a.end:#x}"
        raise ParamInvalid(f"[{b.addr:#x}, {b.end:#x}) is not inside one live {b.placement} allocation ({where})",
                           buffer=z.name)


def _check_overlaps(lm, bindings: list[Binding]) -> None:
    model_mem = lm.model_ranges()
    for i, x in enumerate(bindings):
        b = x.buffer
        if b.placement == "device":
            for what, s, e in model_mem:
                if b.addr < e and s < b.end:
                    raise ParamInvalid(f"[{b.addr:#x}, {b.end:#x}) overlaps the model's {what} [{s:#x}, {e:#x})",
                                       buffer=x.io.name)
        for y in bindings[:i]:
            both_inputs = x.io.role == y.io.role == "input"
            if not both_inputs and b.overlaps(y.buffer) and not pass_through(x, y):
                raise ParamInvalid(f"overlaps the buffer of {y.io.role} {y.io.name!r}; an output may share memory "
                                   "with no other I/O, except the very buffer of an input it passes through "
                                   "(one logical address and size in the model file)", buffer=x.io.name)
