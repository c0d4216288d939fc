"""Pools: MaxPool (with optional Indices output), AveragePool, GlobalAveragePool, GlobalMaxPool.

Windows come from ``windows.windows`` over an input padded with -inf (max; the
lowest value for MaxPool's integer inputs) or 0 (average); AveragePool divides by the count of real (unpadded) elements unless
``count_include_pad=1``, computed by pooling a mask the same way.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import fail, ints, kernel, need_float
from zcspec.impl.device.kernels.windows import geometry, windows


def _setup(task, x, *, integers: bool = False):
    if not (integers and x.dtype.kind in "iu"):
        need_float(task, x)
    if x.ndim < 3:
        raise fail(task, f"needs an N x C x spatial input, got shape {x.shape}")
    nd = x.ndim - 2
    k = ints(task, "kernel_shape", None, n=nd)
    if k is None:
        raise fail(task, "attribute kernel_shape is required")
    g = geometry(task, x.shape[2:], k, ceil_mode=bool(int(task.attr("ceil_mode", 0))))
    axes = tuple(range(-nd, 0))
    return g, axes


@kernel("MaxPool")
def max_pool(task, ins, outs):
    (x,) = ins
    g, axes = _setup(task, x, integers=True)   # MaxPool takes int8/uint8 too (opset 12)
    lowest = np.iinfo(x.dtype).min if x.dtype.kind in "iu" else -np.inf
    xp = np.pad(x, g.pad_widths(), constant_values=lowest)
    win = windows(xp, g)
    y = win.max(axis=axes)
    if len(outs) < 2:
        return (y,)
    return y, _indices(task, x, g, win)


def _indices(task, x, g, win):
    """Flat NCHW index of each window's maximum (storage_order 0; 1 swaps the last two dims)."""
    nd = len(g.kernel)
    flat = win.reshape(win.shape[:2 + nd] + (-1,)).argmax(axis=-1)
    pos = np.arange(int(np.prod(x.shape)), dtype=np.int64).reshape(x.shape)
    if int(task.attr("storage_order", 0)) and nd == 2:
        n, c, h, w = x.shape
        pos = (pos // (h * w)) * (h * w) + (pos % w) * h + (pos % (h * w)) // w
    pos_win = windows(np.pad(pos, g.pad_widths(), constant_values=-1), g)
    pos_win = pos_win.reshape(pos_win.shape[:2 + nd] + (-1,))
    return np.take_along_axis(pos_win, flat[..., None], axis=-1)[..., 0]


@kernel("AveragePool")
def average_pool(task, ins, outs):
    (x,) = ins
    g, axes = _setup(task, x)
    xp = np.pad(x, g.pad_widths())
    total = windows(xp, g).sum(axis=axes, dtype=np.float64)
    if int(task.attr("count_include_pad", 0)):
        # Count the pads but not the room past them that ceil_mode adds.
        inside = [(0, 0)] * 2 + [(b, e) for b, e in zip(g.begin, _declared_end(task, g))]
        mask = np.pad(np.ones((1, 1) + x.shape[2:], x.dtype), inside, constant_values=1)
        mask = np.pad(mask, [(0, 0)] * 2 + [(0, t - m) for t, m in zip(xp.shape[2:], mask.shape[2:])])
    else:
        mask = np.pad(np.ones((1, 1) + x.shape[2:], x.dtype), g.pad_widths())
    count = windows(mask, g).sum(axis=axes)
    return ((total / count).astype(x.dtype),)


def _declared_end(task, g):
    n = len(g.kernel)
    if task.attr("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        return g.end
    pads = ints(task, "pads", (0,) * 2 * n)
    return pads[n:] if task.attr("auto_pad", "NOTSET") == "NOTSET" else (0,) * n


@kernel("GlobalAveragePool")
def global_average_pool(task, ins, outs):
    (x,) = ins
    need_float(task, x)
    return (x.mean(axis=tuple(range(2, x.ndim)), keepdims=True, dtype=np.float64).astype(x.dtype),)


@kernel("GlobalMaxPool")
def global_max_pool(task, ins, outs):
    (x,) = ins
    need_float(task, x)
    if x.ndim < 3:
        raise fail(task, f"needs an N x C x spatial input, got shape {x.shape}")
    return (x.max(axis=tuple(range(2, x.ndim)), keepdims=True),)
