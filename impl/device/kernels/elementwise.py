"""Elementwise kernels: unary maths, broadcasting binaries, variadic Max/Min/Sum/Mean, Cast.

Log and Reciprocal follow IEEE as onnxruntime does: log(0) = -inf, log(x < 0) = NaN, 1/0 = inf
(numpy's warnings for them are silenced, they are the defined results).

Cast converts as onnx.reference does (numpy's and ml_dtypes' ``astype``, so also to and from
the sub-byte types, which the device unpacks for the kernel), saturating to float8 when asked.

Binary ops broadcast numpy-style (ONNX opset >= 7; the light models are opset 9).
Integer Div truncates toward zero, as onnxruntime does.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import fail, kernel, need_float


def _sigmoid(x):
    # Split by sign so neither branch overflows exp.
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out


_UNARY = {
    "Relu": lambda x, t: np.maximum(x, x.dtype.type(0)),
    "Neg": lambda x, t: np.negative(x),
    "Abs": lambda x, t: np.abs(x),
    "Exp": lambda x, t: np.exp(x),
    "Sqrt": lambda x, t: np.sqrt(x),
    "Tanh": lambda x, t: np.tanh(x),
    "Sigmoid": lambda x, t: _sigmoid(x),
    "LeakyRelu": lambda x, t: np.where(x >= 0, x, x * x.dtype.type(t.attr("alpha", 0.01))),
    "Log": lambda x, t: np.log(x),
    "Reciprocal": lambda x, t: np.reciprocal(x),
    "Floor": lambda x, t: np.floor(x),
}
_FLOAT_ONLY = {"Exp", "Sqrt", "Tanh", "Sigmoid", "LeakyRelu", "Log", "Reciprocal", "Floor"}


@kernel(*_UNARY)
def unary(task, ins, outs):
    (x,) = ins
    if task.op_type in _FLOAT_ONLY:
        need_float(task, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (_UNARY[task.op_type](x, task),)


def _div(a, b):
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        return np.trunc(np.true_divide(a, b)).astype(np.result_type(a, b))
    return np.divide(a, b)


_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": _div}


@kernel(*_BINARY)
def binary(task, ins, outs):
    a, b = ins
    try:
        return (_BINARY[task.op_type](a, b),)
    except ValueError as e:
        raise fail(task, f"shapes {a.shape} and {b.shape} do not broadcast") from e


_VARIADIC = {"Max": np.maximum, "Min": np.minimum, "Sum": np.add, "Mean": np.add}


@kernel(*_VARIADIC)
def variadic(task, ins, outs):
    """Max, Min, Sum and Mean of one or more inputs, broadcast together (opset 8+), folded left to
    right; Mean divides the sum by the number of inputs."""
    try:
        shape = np.broadcast_shapes(*(x.shape for x in ins))
    except ValueError as e:
        raise fail(task, f"shapes {[x.shape for x in ins]} do not broadcast") from e
    combine = _VARIADIC[task.op_type]
    out = np.broadcast_to(ins[0], shape).copy()
    for x in ins[1:]:
        combine(out, x, out=out)
    if task.op_type == "Mean":
        need_float(task, out)
        out /= out.dtype.type(len(ins))
    return (out,)


def _saturated(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """``x`` as ONNX's Cast with ``saturate=1`` prepares it for a float8 ``target``: a value past the
    range, an infinity included, becomes the largest finite value of its sign; NaN stays NaN (what
    ONNX's node tests expect for all four float8 types)."""
    top = float(np.finfo(target).max)
    y = np.asarray(x, np.float32)
    return np.where(np.isnan(y), y, np.clip(y, -top, top))


@kernel("Cast")
def cast(task, ins, outs):
    # The target type is the output slot's dtype (the IR resolved ONNX's ``to``).
    target = outs[0].dtype
    x = ins[0]
    if "e8m0" in target.name:   # a power of two per element: ONNX's rounding (round_mode) and saturation
        # onnx is imported here, not at the top: the device's kernels otherwise never need it (0.5 s).
        from onnx.numpy_helper import to_float8e8m0
        mode = task.attr("round_mode", "up")
        return (to_float8e8m0(np.asarray(x, np.float32), bool(int(task.attr("saturate", 1))), mode).view(target),)
    if target.name.startswith("float8") and int(task.attr("saturate", 1)):
        x = _saturated(x, target)
    with np.errstate(invalid="ignore"):   # a float out of an integer type's range: undefined in ONNX; numpy's result
        return (x.astype(target),)
