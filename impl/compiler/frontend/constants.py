"""Constant tensor values during import: dense arrays, or one value broadcast to a shape ("splat").

A splat never materialises unless a computation needs every element: the
ONNX light models fill weights of up to several hundred MB with
ConstantOfShape, and the IR keeps those as one-element splat weights
(``zcspec.impl.compiler.ir.Weight``).
"""
from __future__ import annotations

import attrs
import numpy as np
from onnx import helper, numpy_helper

from zcspec.impl.compiler.ir import TensorDesc, Weight
from zcspec.impl.platform import dtypes, storage


@attrs.frozen(eq=False)
class Const:
    """``elem`` is the ONNX element type. Exactly one of ``array`` (dense) and ``fill`` (0-d, splat) is set."""

    shape: tuple[int, ...]
    elem: int
    array: np.ndarray | None = None
    fill: np.ndarray | None = None

    @classmethod
    def dense(cls, array: np.ndarray, elem: int | None = None) -> "Const":
        array = np.asarray(array)
        if elem is None:
            elem = helper.np_dtype_to_tensor_dtype(array.dtype)
        return cls(tuple(int(d) for d in array.shape), elem, array=array)

    @classmethod
    def splat(cls, value, shape: tuple[int, ...], elem: int) -> "Const":
        fill = np.asarray(value, dtype=helper.tensor_dtype_to_np_dtype(elem)).reshape(())
        return cls(tuple(int(d) for d in shape), elem, fill=fill)

    @classmethod
    def from_tensor(cls, tensor) -> "Const":
        """An initializer or a tensor attribute (TensorProto)."""
        return cls.dense(numpy_helper.to_array(tensor), tensor.data_type)

    @property
    def is_splat(self) -> bool:
        return self.fill is not None

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def value(self) -> np.ndarray:
        """The full array (a splat is expanded here, so callers check ``numel`` first when it matters)."""
        if self.fill is None:
            return self.array
        return np.full(self.shape, self.fill, dtype=self.fill.dtype)

    def dtype_name(self, tensor: str = "") -> str:
        return dtypes.from_onnx(self.elem, tensor=tensor).name

    def desc(self, name: str) -> TensorDesc:
        return TensorDesc(name, self.shape, self.dtype_name(name))

    def weight(self, name: str) -> Weight:
        """The IR weight; a splat stays one element (as ``Weight.from_array`` would store it)."""
        dtype = self.dtype_name(name)
        if self.fill is None:
            return Weight.from_array(name, self.array, dtype)
        return Weight(name, storage.to_storage(self.fill, dtype).tobytes(), splat=self.numel != 1)
