"""Element types and byte sizes for every ONNX tensor type.

Contract: ``DTYPES`` maps our dtype name (ONNX's lower-case enum name, e.g.
``float32``, ``bfloat16``, ``int4``) to a :class:`DType`. ``nbytes(shape, dtype)``
returns the storage bytes of a dense tensor, rounding sub-byte types up to a
whole byte, and raises :class:`SizeOverflowError` past ``MAX_TENSOR_BYTES``
(GE's sizes are int64: davinci_model.cc's ``kOverflowUserSize = INT64_MAX - 64`` is its guard).
``string`` has no static size and is rejected as an unknown dtype for planning.
"""
from __future__ import annotations

import attrs
import numpy as np

from zcspec.impl.platform.errors import SizeOverflowError, UnknownDTypeError

INT64_MAX = 2**63 - 1
MAX_TENSOR_BYTES = INT64_MAX - 64  # kOverflowUserSize (GE: davinci_model.cc)


@attrs.frozen
class DType:
    name: str
    onnx_id: int
    bits: int


_TABLE = (
    ("float32", 1, 32),
    ("uint8", 2, 8),
    ("int8", 3, 8),
    ("uint16", 4, 16),
    ("int16", 5, 16),
    ("int32", 6, 32),
    ("int64", 7, 64),
    ("bool", 9, 8),
    ("float16", 10, 16),
    ("float64", 11, 64),
    ("uint32", 12, 32),
    ("uint64", 13, 64),
    ("complex64", 14, 64),
    ("complex128", 15, 128),
    ("bfloat16", 16, 16),
    ("float8e4m3fn", 17, 8),
    ("float8e4m3fnuz", 18, 8),
    ("float8e5m2", 19, 8),
    ("float8e5m2fnuz", 20, 8),
    ("uint4", 21, 4),
    ("int4", 22, 4),
    ("float4e2m1", 23, 4),
    ("float8e8m0", 24, 8),
    ("uint2", 25, 2),
    ("int2", 26, 2),
    ("float6e2m3", 27, 6),
    ("float6e3m2", 28, 6),
)

DTYPES: dict[str, DType] = {row[0]: DType(*row) for row in _TABLE}
BY_ONNX_ID: dict[int, DType] = {d.onnx_id: d for d in DTYPES.values()}
# Spellings people use for the same types, mapped to our names.
ALIASES = {"float": "float32", "double": "float64", "half": "float16"}


def get(name: str) -> DType:
    """The DType called ``name`` (or one of its aliases); UnknownDTypeError otherwise."""
    try:   # TypeError: an unhashable name (a list read from a graph JSON file)
        return DTYPES[ALIASES.get(name, name)]
    except (KeyError, TypeError):
        raise UnknownDTypeError(dtype=name) from None


def from_onnx(onnx_id: int, *, tensor: str = "") -> DType:
    try:
        return BY_ONNX_ID[onnx_id]
    except KeyError:
        raise UnknownDTypeError(dtype=f"onnx type {onnx_id}", tensor=tensor) from None


def element_count(shape: tuple[int, ...], *, tensor: str = "") -> int:
    count = 1
    for dim in shape:
        count *= dim
        if count > MAX_TENSOR_BYTES * 8:
            raise SizeOverflowError(tensor=tensor, shape=tuple(shape))
    return count


def nbytes(shape: tuple[int, ...], dtype: str, *, tensor: str = "") -> int:
    """Dense storage bytes of ``shape`` x ``dtype``, sub-byte types rounded up."""
    bits = element_count(shape, tensor=tensor) * get(dtype).bits
    size = (bits + 7) // 8
    if size > MAX_TENSOR_BYTES:
        raise SizeOverflowError(tensor=tensor, shape=tuple(shape), nbytes=size)
    return size


def numpy_dtype(dtype: str):
    """The numpy dtype for ``dtype``; exotic floats and sub-byte ints come from onnx."""
    from onnx import helper  # deferred: importing onnx costs ~0.6 s, and the device and runtimes need it only here

    return helper.tensor_dtype_to_np_dtype(get(dtype).onnx_id)


def of_numpy(np_dtype) -> str:
    """Our name of the element type whose numpy dtype is ``np_dtype``; UnknownDTypeError when none is."""
    want = np.dtype(np_dtype)
    for d in DTYPES.values():
        if np.dtype(numpy_dtype(d.name)) == want:
            return d.name
    raise UnknownDTypeError(dtype=f"numpy {want}")
