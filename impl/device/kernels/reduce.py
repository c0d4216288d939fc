"""Reductions that overwrite their output: ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL2.

The IR form: ``axes`` is an attribute in every opset (the front end moves the opset-18
input there), read with ``keepdims`` (default 1) and ``noop_with_empty_axes`` (default 0)
through the one rule all reductions share, ``zcspec.impl.platform.reduce_axes``. Unlike
the atomic ReduceSum these write their result outright (no prior memset). Over an empty
set ReduceMax gives the dtype's lowest value (-inf for floats), ReduceMin its highest.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import fail, ints, kernel
from zcspec.impl.platform.reduce_axes import ReduceAxesError, reduce_axes


def _l2(x, axis, keepdims):
    wide = np.float64 if x.dtype.kind == "f" else x.dtype
    return np.sqrt(np.sum(np.square(x.astype(wide)), axis=axis, keepdims=keepdims))


def _mean(x, axis, keepdims):
    if x.dtype.kind in "iu":
        # onnxruntime and ONNX's reference divide an integer sum as C does, truncating toward zero (a mean
        # of -1.5 is -1): numpy's floor division, raised by one where a negative sum leaves a remainder
        total = np.sum(x, axis=axis, keepdims=keepdims)
        count = max(int(np.prod([x.shape[a] for a in axis])), 1)
        return total // count + ((total < 0) & (total % count != 0))
    return np.mean(x.astype(np.float64), axis=axis, keepdims=keepdims)


def _lowest(dtype, highest: bool = False):
    """The identity of max (``highest`` False) or min over an empty set: an int's bounds, bool's, and
    -inf/+inf for any float (bfloat16's numpy kind is not "f")."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if highest else info.min
    if dtype.kind == "b":
        return highest
    return np.inf if highest else -np.inf


_REDUCE = {
    "ReduceMean": _mean,
    "ReduceMax": lambda x, axis, keepdims: np.max(x, axis=axis, keepdims=keepdims, initial=_lowest(x.dtype)),
    "ReduceMin": lambda x, axis, keepdims: np.min(x, axis=axis, keepdims=keepdims, initial=_lowest(x.dtype, True)),
    "ReduceProd": lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims),
    "ReduceL2": _l2,
}


@kernel(*_REDUCE)
def reduce(task, ins, outs):
    (x,) = ins
    try:
        axes = reduce_axes(ints(task, "axes"), x.ndim,
                           noop_with_empty_axes=bool(int(task.attr("noop_with_empty_axes", 0))))
    except ReduceAxesError as e:
        raise fail(task, str(e)) from e
    if not axes:
        return (x.copy(),)
    y = np.asarray(_REDUCE[task.op_type](x, axes, bool(int(task.attr("keepdims", 1)))))
    if y.shape != outs[0].shape:
        raise fail(task, f"reduction has shape {y.shape}, output slot has {outs[0].shape}")
    return (y.astype(outs[0].dtype),)
