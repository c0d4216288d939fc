"""Activations and elementwise maths of production models: Clip, HardSigmoid, HardSwish, Erf, Gelu, Pow, Where.

The IR form of each node (what ``task.attr`` gives): Clip's bounds are the ``min`` and
``max`` attributes (the front end moves constant opset-11 inputs there; absent means
unbounded), or, for a bound known only at run time, a scalar input the node's
``_value_inputs`` names, read on every run (``common.value_operand``); HardSigmoid has ``alpha`` (0.2) and ``beta`` (0.5); Gelu (opset 20) has
``approximate`` (``"none"`` or ``"tanh"``). Pow's exponent may have another numeric type
than its base; the result has the base's type. Where's condition is any numeric or bool
tensor (non-zero is true); the three inputs broadcast numpy-style.

Erf and Gelu's erf form use ``special.erf`` (numpy has none): fdlibm's erf vectorised, within
1 ulp of ``math.erf`` in double precision, rounded once to the input's dtype.
"""
from __future__ import annotations

import math

import numpy as np

from zcspec.impl.device.kernels.common import data_inputs, fail, kernel, need_float, scalar_operand
from zcspec.impl.device.kernels.special import erf as erf64


def erf(x: np.ndarray) -> np.ndarray:
    """The error function of a float array, in ``x``'s dtype."""
    return erf64(x).astype(x.dtype)


@kernel("Clip")
def clip(task, ins, outs):
    (x,) = data_inputs(task, ins)
    lo, hi = scalar_operand(task, ins, "min", x.dtype), scalar_operand(task, ins, "max", x.dtype)
    y = x if lo is None else np.maximum(x, lo)
    return (y if hi is None else np.minimum(y, hi),)  # min > max gives max everywhere, as onnxruntime


def _hard_sigmoid(x, alpha: float, beta: float):
    t = x.dtype.type
    return np.clip(x * t(alpha) + t(beta), t(0), t(1))


@kernel("HardSigmoid")
def hard_sigmoid(task, ins, outs):
    (x,) = ins
    need_float(task, x)
    return (_hard_sigmoid(x, float(task.attr("alpha", 0.2)), float(task.attr("beta", 0.5))),)


@kernel("HardSwish")
def hard_swish(task, ins, outs):
    (x,) = ins
    need_float(task, x)
    return (x * _hard_sigmoid(x, 1.0 / 6.0, 0.5),)


@kernel("Erf")
def erf_(task, ins, outs):
    (x,) = ins
    need_float(task, x)
    return (erf(x),)


@kernel("Gelu")
def gelu(task, ins, outs):
    (x,) = ins
    need_float(task, x)
    mode = task.attr("approximate", "none")
    x64 = x.astype(np.float64)
    if mode == "none":
        inner = erf64(x64 / math.sqrt(2.0))
    elif mode == "tanh":
        inner = np.tanh(math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64 ** 3))
    else:
        raise fail(task, f"approximate={mode!r} is not 'none' or 'tanh'")
    return ((0.5 * x64 * (1.0 + inner)).astype(x.dtype),)


@kernel("Pow")
def pow_(task, ins, outs):
    base, exponent = ins
    try:
        if base.dtype.kind == "f":
            return (np.power(base, exponent.astype(base.dtype)),)
        return (np.power(base.astype(np.float64), exponent.astype(np.float64)).astype(base.dtype),)
    except ValueError as e:
        raise fail(task, f"shapes {base.shape} and {exponent.shape} do not broadcast") from e


@kernel("Where")
def where(task, ins, outs):
    cond, x, y = ins
    try:
        return (np.where(cond.astype(bool), x, y).astype(outs[0].dtype, copy=False),)
    except ValueError as e:
        raise fail(task, f"shapes {cond.shape}, {x.shape} and {y.shape} do not broadcast") from e
