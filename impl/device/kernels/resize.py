"""Resize (opsets 10-19): nearest and linear, over any of the input's axes.

IR form: ``scales`` (floats) or ``sizes`` (ints) are attributes, one per entry of ``axes``
(opset 18; every axis without it); the output slot's shape is the size. With ``scales``
the coordinate mapping uses the given scale (which may differ from size/input when the
size was rounded down); with ``sizes`` the scale is output/input.
``coordinate_transformation_mode`` (default ``half_pixel``) maps output index ``x`` of an
axis of input length ``n`` and output length ``m`` to an input coordinate:

| mode | input coordinate |
|---|---|
| half_pixel | (x + 0.5) / scale - 0.5 |
| half_pixel_symmetric | n/2 * (1 - m / (scale n)) + (x + 0.5) / scale - 0.5 |
| pytorch_half_pixel | (x + 0.5) / scale - 0.5 if m > 1, else 0 |
| align_corners | x (n - 1) / (m - 1) if m > 1, else 0 |
| asymmetric | x / scale |

``mode=nearest`` rounds with ``nearest_mode`` (``round_prefer_floor`` default,
``round_prefer_ceil``, ``floor``, ``ceil``) and clamps to the axis; ``mode=linear``
interpolates between the two neighbours, the coordinate clamped to [0, n - 1], axis by
axis (so 2 spatial axes are bilinear). ``cubic``, ``tf_crop_and_resize`` and ``antialias``
are refused (the front end refuses them at import; the kernel again, for hand-made tasks).
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import fail, kernel

_ROUND = {
    "round_prefer_floor": lambda c: np.ceil(c - 0.5),
    "round_prefer_ceil": lambda c: np.floor(c + 0.5),
    "floor": np.floor,
    "ceil": np.ceil,
}
_COORDS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric")


def source_coords(mode: str, n: int, m: int, scale: float) -> np.ndarray:
    """The input coordinate of each of the ``m`` output indices of an axis of length ``n`` (table above)."""
    x = np.arange(m, dtype=np.float64)
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        return n / 2.0 * (1.0 - m / (scale * n)) + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if m > 1 else np.zeros(m)
    if mode == "align_corners":
        return x * (n - 1) / (m - 1) if m > 1 else np.zeros(m)
    return x / scale


def _scales(task, x: np.ndarray, out_shape) -> list[float]:
    axes = task.attr("axes")
    axes = list(range(x.ndim)) if axes is None else [int(a) % x.ndim for a in axes]
    given = task.attr("scales")
    scales = [out_shape[a] / x.shape[a] if x.shape[a] else 1.0 for a in range(x.ndim)]
    if given is not None and len(tuple(given)) > 0:
        given = tuple(float(s) for s in given)
        if len(given) != len(axes):
            raise fail(task, f"scales={given} has {len(given)} entries for axes {axes}")
        for a, s in zip(axes, given):
            scales[a] = s
    return scales


def _nearest(x, a: int, coords: np.ndarray, rounding: str):
    idx = np.clip(_ROUND[rounding](coords), 0, x.shape[a] - 1).astype(np.int64)
    return np.take(x, idx, axis=a)


def _linear(x, a: int, coords: np.ndarray):
    n = x.shape[a]
    c = np.clip(coords, 0, n - 1)
    lo = np.floor(c).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    w = (c - lo).reshape((-1,) + (1,) * (x.ndim - 1 - a))
    return np.take(x, lo, axis=a) * (1.0 - w) + np.take(x, hi, axis=a) * w


@kernel("Resize")
def resize(task, ins, outs):
    x = ins[0]
    mode = task.attr("mode", "nearest")
    coord = task.attr("coordinate_transformation_mode", "half_pixel")
    rounding = task.attr("nearest_mode", "round_prefer_floor")
    if mode not in ("nearest", "linear") or coord not in _COORDS or rounding not in _ROUND:
        raise fail(task, f"mode={mode!r}, coordinate_transformation_mode={coord!r}, nearest_mode={rounding!r}: "
                         f"supported are nearest/linear, {_COORDS} and {tuple(_ROUND)}")
    if int(task.attr("antialias", 0)):
        raise fail(task, "antialias=1 is not supported")
    out_shape = outs[0].shape
    if len(out_shape) != x.ndim:
        raise fail(task, f"output rank {len(out_shape)} differs from input rank {x.ndim}")
    y = x if mode == "nearest" else x.astype(np.float64)
    for a, s in enumerate(_scales(task, x, out_shape)):
        if out_shape[a] == x.shape[a] and s == 1.0:
            continue
        coords = source_coords(coord, x.shape[a], out_shape[a], s)
        y = _nearest(y, a, coords, rounding) if mode == "nearest" else _linear(y, a, coords)
    return (y.astype(x.dtype),)
