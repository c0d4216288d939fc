"""Element sizes, as data the spec owns: a tensor's raw bytes from its shape and dtype.

An observation of a compiled graph transcribes each tensor's shape and dtype name; the raw bytes the
size claims start from (LAYOUT-TENSOR-SIZE, MEM-ZC-IO) are computed here, never read from the
implementation's dtype table, so a width changed there is judged against this one. Names are ONNX's
lower-case type names (``float32``, ``bfloat16``, ``int4``), as the IR spells them.
"""
from __future__ import annotations

from zcspec.spec.errors import SpecError

# GE's rule: graph_metadef/graph/type/types.cc (GetSizeInBytes): element count x the type's length from
# TypeUtils::GetDataTypeLength (graph_metadef/graph/utils/type_utils.cc); a sub-byte type's length is
# encoded past kDataTypeSizeBitOffset as bits, and its byte count is ceil(count x bits / 8).
SOURCE = "graph_metadef/graph/type/types.cc (GetSizeInBytes); graph_metadef/graph/utils/type_utils.cc " \
         "(TypeUtils::GetDataTypeLength, kDataTypeSizeBitOffset for sub-byte types)"

# Bits per element of each type; ONNX's TensorProto.DataType names (string has no static size).
BITS: dict[str, int] = {
    "float32": 32, "float64": 64, "float16": 16, "bfloat16": 16,
    "int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32, "int64": 64, "uint64": 64,
    "bool": 8, "complex64": 64, "complex128": 128,
    "float8e4m3fn": 8, "float8e4m3fnuz": 8, "float8e5m2": 8, "float8e5m2fnuz": 8, "float8e8m0": 8,
    "float6e2m3": 6, "float6e3m2": 6,
    "uint4": 4, "int4": 4, "float4e2m1": 4, "uint2": 2, "int2": 2,
}
ALIASES = {"float": "float32", "double": "float64", "half": "float16"}


class UnknownDTypeError(SpecError):
    """A tensor's dtype has no entry in the spec's table."""

    def __init__(self, dtype, tensor: str):
        self.dtype, self.tensor = dtype, tensor
        super().__init__(f"tensor {tensor!r}: dtype {dtype!r} has no entry in the spec's dtype table "
                         f"(spec/dtypes.py); known: {sorted(BITS)}")


def nbytes(shape, dtype: str, *, tensor: str = "") -> int:
    """Raw dense bytes of a ``shape`` x ``dtype`` tensor (GE's no-align size), sub-byte types rounded up;
    UnknownDTypeError naming ``tensor`` for a dtype the table lacks."""
    try:
        bits = BITS[ALIASES.get(dtype, dtype)]
    except (KeyError, TypeError):
        raise UnknownDTypeError(dtype, tensor) from None
    count = 1
    for dim in shape:
        count *= dim
    return -(-count * bits // 8)
