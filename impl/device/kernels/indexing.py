"""Indexing kernels: Gather, Expand, Tile, Pad.

IR forms (the front end moves the constant operands of newer opsets into attributes):
Expand's target is its output slot's shape (``shape`` attribute kept for the record);
Tile has ``repeats`` (one per axis); Pad has ``pads`` (begins then ends, one pair per
entry of ``axes``, or per axis without ``axes``), ``mode`` (``constant``, ``reflect``,
``edge``, ``wrap``) and ``value`` (the constant fill, default 0: an attribute, or a scalar input
read on every run when the node's ``_value_inputs`` names it, see ``common.value_operand``). A negative pad crops,
as in ONNX. Gather's ``indices`` (int32 or int64) may be negative (counted from the
end of ``axis``); one out of range is a KernelError.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import axis, data_inputs, fail, ints, kernel, scalar_operand

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge", "wrap": "wrap"}


@kernel("Gather")
def gather(task, ins, outs):
    data, indices = ins
    a = axis(task, "axis", 0, data.ndim)
    if indices.dtype.kind not in "iu":
        raise fail(task, f"indices have dtype {indices.dtype}, need int32 or int64")
    n = data.shape[a]
    idx = np.where(indices < 0, indices + n, indices).astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise fail(task, f"indices {sorted(set(indices.reshape(-1).tolist()))[:8]} out of range for axis {a} of length {n}")
    return (np.take(data, idx, axis=a),)


@kernel("Expand")
def expand(task, ins, outs):
    (x,) = ins
    target = outs[0].shape
    if not _broadcasts(x.shape, target) or np.broadcast_shapes(x.shape, target) != target:
        raise fail(task, f"input shape {x.shape} does not expand to output shape {target}")
    return (np.broadcast_to(x, target).copy(),)


def _broadcasts(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


@kernel("Tile")
def tile(task, ins, outs):
    (x,) = ins
    repeats = ints(task, "repeats", n=x.ndim)
    if repeats is None or min(repeats, default=0) < 0:
        raise fail(task, f"needs 'repeats', one non-negative count per axis of rank {x.ndim}, got {repeats}")
    return (np.tile(x, repeats),)


def _full_pads(task, rank: int) -> list[tuple[int, int]]:
    pads = ints(task, "pads")
    axes = ints(task, "axes")
    axes = tuple(range(rank)) if axes is None else tuple(a % rank if -rank <= a < rank else rank for a in axes)
    if pads is None or len(pads) != 2 * len(axes) or any(a >= rank for a in axes):
        raise fail(task, f"pads={pads} and axes={axes} do not describe begins and ends for rank {rank}")
    full = [(0, 0)] * rank
    for i, a in enumerate(axes):
        full[a] = (pads[i], pads[i + len(axes)])
    return full


@kernel("Pad")
def pad(task, ins, outs):
    (x,) = data_inputs(task, ins)
    full = _full_pads(task, x.ndim)
    mode = task.attr("mode", "constant")
    if mode not in _PAD_MODES:
        raise fail(task, f"mode={mode!r} is not one of {sorted(_PAD_MODES)}")
    crop = tuple(slice(-b if b < 0 else 0, (d + e) if e < 0 else d) for (b, e), d in zip(full, x.shape))
    x = x[crop]
    grow = [(max(b, 0), max(e, 0)) for b, e in full]
    # A reflection does not repeat the edge element: each pad must be shorter than its (cropped) axis, as
    # onnxruntime requires (numpy would reflect again and again, ONNX's reference too).
    if mode == "reflect" and any(g >= d for (b, e), d in zip(grow, x.shape) for g in (b, e) if g):
        raise fail(task, f"reflect pads {grow} must each be shorter than their axis, input is {x.shape} "
                         "(after cropping)")
    if mode == "constant":
        value = scalar_operand(task, ins, "value", x.dtype, 0)
        return (np.pad(x, grow, mode="constant", constant_values=value),)
    if x.size == 0 and any(b or e for b, e in grow):
        raise fail(task, f"{mode} padding of an empty tensor {x.shape}")
    return (np.pad(x, grow, mode=_PAD_MODES[mode]),)
