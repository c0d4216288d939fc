"""Comparisons and logic: Equal, Greater, Less, GreaterOrEqual, LessOrEqual, And, Or, Not.

The comparisons take two tensors of one numeric (or bool, for Equal) type and give a bool tensor;
And and Or take and give bool. The binaries broadcast numpy-style (ONNX opset 7+; the import rewrites
opset 1-6's broadcast/axis attributes into this form). A NaN compares unequal to everything, itself
included, as IEEE and onnxruntime have it. The output's dtype is the output slot's (bool): a kernel
never infers it from its inputs.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import fail, kernel

_BINARY = {
    "Equal": np.equal, "Greater": np.greater, "Less": np.less,
    "GreaterOrEqual": np.greater_equal, "LessOrEqual": np.less_equal,
    "And": np.logical_and, "Or": np.logical_or,
}
_LOGIC = {"And", "Or", "Not"}


def _need_bool(task, *arrays) -> None:
    for a in arrays:
        if a.dtype != np.bool_:
            raise fail(task, f"needs bool tensors, got {a.dtype}")


@kernel(*_BINARY)
def compare(task, ins, outs):
    a, b = ins
    if task.op_type in _LOGIC:
        _need_bool(task, a, b)
    elif a.dtype != b.dtype:
        raise fail(task, f"compares tensors of two element types, {a.dtype} and {b.dtype}")
    try:
        out = _BINARY[task.op_type](a, b)
    except ValueError as e:
        raise fail(task, f"shapes {a.shape} and {b.shape} do not broadcast") from e
    return (np.asarray(out).astype(outs[0].dtype, copy=False),)


@kernel("Not")
def not_(task, ins, outs):
    (x,) = ins
    _need_bool(task, x)
    return (np.logical_not(x),)
