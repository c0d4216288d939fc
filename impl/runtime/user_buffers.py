"""The user's side of an execute call: buffers the user owns, filled and read the way a user would.

Both runtimes take model inputs and outputs as :class:`UserBuffer` lists, in the
model's I/O order (``model.tasks.inputs`` / ``model.tasks.outputs``), each named
as the caller's graph names that I/O (``IoDesc.name``, not the planned tensor behind
it). The helpers here are the *user's* work, not the model's: ``stage_inputs`` does
a device malloc and one counted H2D copy per input (as ``aclrtMalloc`` +
``aclrtMemcpy`` would), ``read_outputs`` one counted D2H copy per device output.
Take counter snapshots around the execute call alone to see what the runtime itself
moved. A tensor of a sub-byte element type is given and read back as a numpy array
of one element per value, and lies packed in its buffer (``impl.platform.storage``):
the buffer holds the model I/O's ``nbytes``.

Contract: every function validates its arguments before allocating anything and
frees what it allocated if it fails part way; the buffers it returns are the
caller's to free (``free_buffers``).
"""
from __future__ import annotations

from typing import Literal

import attrs
import numpy as np

from zcspec.impl.platform import dtypes, storage
from zcspec.impl.runtime.errors import UserBufferError

Placement = Literal["device", "host"]
PLACEMENTS = ("device", "host")


@attrs.frozen
class UserBuffer:
    """``size`` bytes at ``addr`` in device or host memory, bound to model I/O ``name``.

    ``addr`` 0 is a null buffer (rejected by the runtimes, ACL_ERROR_INVALID_PARAM).
    """

    name: str
    addr: int
    size: int
    placement: Placement = "device"

    def __attrs_post_init__(self):
        if self.placement not in PLACEMENTS:
            raise UserBufferError(self.name, f"placement={self.placement!r} must be one of {PLACEMENTS}")
        if self.size < 0:
            raise UserBufferError(self.name, f"size={self.size} is negative")

    @property
    def end(self) -> int:
        return self.addr + self.size

    def overlaps(self, other: "UserBuffer") -> bool:
        return (self.placement == other.placement and self.size > 0 and other.size > 0
                and self.addr < other.end and other.addr < self.end)


def _np_dtype(dtype: str) -> np.dtype:
    return np.dtype(dtypes.numpy_dtype(dtype))


def _checked_array(io, array) -> np.ndarray:
    """``array`` as a contiguous array of exactly ``io``'s shape and dtype (no silent conversion)."""
    a = np.asarray(array)
    want = _np_dtype(io.dtype)
    if a.dtype != want:
        raise UserBufferError(io.name, f"array dtype {a.dtype} but the model input is {io.dtype}")
    if tuple(a.shape) != tuple(io.shape):
        raise UserBufferError(io.name, f"array shape {list(a.shape)} but the model input is {list(io.shape)}")
    return np.ascontiguousarray(a)


def _check_placement(placement: str) -> None:
    if placement not in PLACEMENTS:
        raise UserBufferError("", f"placement={placement!r} must be one of {PLACEMENTS}")


def stage_inputs(device, model, arrays: dict, placement: Placement = "device") -> list[UserBuffer]:
    """One user buffer per model input holding ``arrays[name]`` (every input must be given, no extra).

    Device placement: malloc + one counted H2D copy per input. Host placement:
    host memory written directly (not a copy, not counted).
    """
    _check_placement(placement)
    ios = model.tasks.inputs
    unknown = sorted(set(arrays) - {io.name for io in ios})
    if unknown:
        raise UserBufferError(unknown[0], f"is not a model input; inputs are {[io.name for io in ios]}")
    missing = [io.name for io in ios if io.name not in arrays]
    if missing:
        raise UserBufferError(missing[0], "no array given for this model input")
    checked = [(io, storage.to_storage(_checked_array(io, arrays[io.name]), io.dtype)) for io in ios]
    out: list[UserBuffer] = []
    try:
        for io, a in checked:
            out.append(_stage_one(device, io.name, a, placement))
    except BaseException:
        free_buffers(device, out)
        raise
    return out


def _stage_one(device, name: str, a: np.ndarray, placement: str) -> UserBuffer:
    if placement == "device":
        return UserBuffer(name, device.upload(a, tag=f"user input {name}"), a.nbytes, "device")
    addr = device.host_malloc(max(a.nbytes, 1), tag=f"user input {name}")
    device.host_write(addr, a)
    return UserBuffer(name, addr, a.nbytes, "host")


def alloc_outputs(device, model, placement: Placement = "device", sizes: dict | None = None) -> list[UserBuffer]:
    """One uninitialised user buffer per model output, of ``sizes[name]`` bytes (default: the raw bytes)."""
    _check_placement(placement)
    sizes = dict(sizes or {})
    names = [io.name for io in model.tasks.outputs]
    unknown = sorted(set(sizes) - set(names))
    if unknown:
        raise UserBufferError(unknown[0], f"is not a model output; outputs are {names}")
    out: list[UserBuffer] = []
    try:
        for io in model.tasks.outputs:
            n = int(sizes.get(io.name, io.nbytes))
            if n < 0:
                raise UserBufferError(io.name, f"size={n} is negative")
            tag = f"user output {io.name}"
            addr = device.malloc(max(n, 1), tag=tag) if placement == "device" else device.host_malloc(max(n, 1), tag=tag)
            out.append(UserBuffer(io.name, addr, n, placement))
    except BaseException:
        free_buffers(device, out)
        raise
    return out


def read_outputs(device, model, buffers) -> dict[str, np.ndarray]:
    """Each model output read back from its buffer (found by name): one counted D2H copy per device buffer."""
    by_name = {b.name: b for b in buffers}
    result = {}
    for io in model.tasks.outputs:
        b = by_name.get(io.name)
        if b is None:
            raise UserBufferError(io.name, "no buffer for this model output")
        if b.size < io.nbytes:
            raise UserBufferError(io.name, f"buffer is {b.size} bytes, the output has {io.nbytes}")
        if b.placement == "device":
            raw = device.download(b.addr, (io.nbytes,), np.uint8)
        else:
            raw = device.host_read(b.addr, (io.nbytes,), np.uint8)
        result[io.name] = storage.from_storage(raw, io.shape, io.dtype)
    return result


def free_buffers(device, buffers) -> None:
    """Free every buffer (device or host); the list may be partly built."""
    for b in buffers:
        if b.placement == "device":
            device.free(b.addr)
        else:
            device.host_free(b.addr)
