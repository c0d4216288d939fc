"""How a tensor's elements lie in bytes: dense, or packed for the sub-byte element types.

Contract: a tensor of a whole-byte type is stored as its numpy array's bytes. A tensor of a
sub-byte type (``int4``, ``uint4``, ``float4e2m1``: two elements per byte; ``int2``, ``uint2``:
four; ``float6e2m3``, ``float6e3m2``: four in three bytes) is stored as ONNX packs its
``raw_data``: one little-endian bit stream, element ``k`` in bits ``[k*b, (k+1)*b)`` counted from
each byte's least significant bit, the last byte padded with zero bits; its size is
``dtypes.nbytes`` (rounded up to a whole byte). In numpy the element types are ml_dtypes'
one-byte types, whose low ``b`` bits hold the element's code.

- ``packed(dtype)``: whether ``dtype`` is stored packed;
- ``to_storage(array, dtype)``: the stored bytes of ``array`` (a 1-D uint8 array);
- ``from_storage(data, shape, dtype)``: the array of ``shape`` x ``dtype`` that bytes ``data`` store
  (a read-only view for a dense type, a new array for a packed one);
- ``image(data, shape, dtype, splat)``: the stored bytes of a whole weight whose ``data`` holds all
  of it or, when ``splat``, its one element (broadcast to ``shape``).

The device's operands (``impl.device.operands``), the user's buffers and the weights of both
runtimes go through these: a kernel sees one numpy element per tensor element.
"""
from __future__ import annotations

import functools

import numpy as np

from zcspec.impl.platform import dtypes


def packed(dtype: str) -> bool:
    """Whether ``dtype``'s elements are packed several to a byte (their bits are not a multiple of 8)."""
    return dtypes.get(dtype).bits % 8 != 0


@functools.lru_cache(maxsize=None)
def _np(dtype: str) -> np.dtype:
    return np.dtype(dtypes.numpy_dtype(dtype))


def to_storage(array, dtype: str) -> np.ndarray:
    """The bytes that store ``array`` (of ``dtype``'s numpy type) as one flat uint8 array."""
    a = np.ascontiguousarray(array, dtype=_np(dtype))
    codes = a.reshape(-1).view(np.uint8)
    if not packed(dtype):
        return codes
    bits = dtypes.get(dtype).bits
    stream = np.unpackbits(codes[:, None], axis=1, bitorder="little")[:, :bits]
    return np.packbits(stream.reshape(-1), bitorder="little")


def from_storage(data, shape, dtype: str) -> np.ndarray:
    """The ``shape`` x ``dtype`` array that ``data`` (bytes or a uint8 array, at least
    ``dtypes.nbytes(shape, dtype)`` long) stores; ValueError when it is too short."""
    shape = tuple(int(d) for d in shape)
    raw = np.frombuffer(data, np.uint8) if isinstance(data, (bytes, bytearray, memoryview)) else np.asarray(data)
    need = dtypes.nbytes(shape, dtype)
    if raw.size < need:
        raise ValueError(f"{raw.size} bytes cannot hold {list(shape)}x{dtype} ({need} bytes)")
    raw = raw.reshape(-1)[:need]
    if not packed(dtype):
        return raw.view(_np(dtype)).reshape(shape)
    bits, count = dtypes.get(dtype).bits, dtypes.element_count(shape)
    stream = np.unpackbits(raw, bitorder="little")[:count * bits].reshape(count, bits)
    codes = np.packbits(stream, axis=1, bitorder="little").reshape(-1)
    return codes.view(_np(dtype)).reshape(shape)


def image(data: bytes, shape, dtype: str, splat: bool) -> np.ndarray:
    """The stored bytes of a weight of ``shape`` x ``dtype``: ``data`` itself, or its one element
    broadcast to ``shape`` when ``splat``."""
    if not splat:
        return np.frombuffer(data, np.uint8)
    nbytes = dtypes.nbytes(shape, dtype)
    if not packed(dtype):
        one = np.frombuffer(data, np.uint8)
        return np.tile(one, -(-nbytes // max(len(one), 1)))[:nbytes] if len(one) else one
    return to_storage(np.broadcast_to(from_storage(data, (1,), dtype), shape), dtype)
