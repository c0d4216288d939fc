"""Resize (opsets 10-19): nearest, linear and cubic, over any of the input's axes.

IR form: ``scales`` (floats) or ``sizes`` (ints) are attributes, one per entry of ``axes``
(opset 18; every axis without it), and so is ``roi`` (starts then ends, one per entry of ``axes``)
for ``tf_crop_and_resize``, unless it is known only at run time: then it is an input the node's
``_value_inputs`` names, read on every run (``common.value_operand``); the output slot's shape is the size. With ``scales`` the coordinate
mapping uses the given scale (which may differ from size/input when the size was rounded down);
with ``sizes`` the scale is output/input, or with ``keep_aspect_ratio_policy`` ``not_larger`` /
``not_smaller`` the smallest / largest of those over ``axes`` for all of them (the output size is
then that scale times the input size, rounded half up: ONNX's shape inference gives it).
``coordinate_transformation_mode`` (default ``half_pixel``) maps output index ``x`` of an
axis of input length ``n`` and output length ``m`` to an input coordinate:

| mode | input coordinate |
|---|---|
| half_pixel | (x + 0.5) / scale - 0.5 |
| half_pixel_symmetric | n/2 * (1 - m / (scale n)) + (x + 0.5) / scale - 0.5 |
| pytorch_half_pixel | (x + 0.5) / scale - 0.5 if m > 1, else 0 |
| align_corners | x (n - 1) / (m - 1) if m > 1, else 0 |
| asymmetric | x / scale |
| tf_crop_and_resize | start (n - 1) + x (end - start)(n - 1) / (m - 1) if m > 1, else (start + end)(n - 1) / 2 |

``mode=nearest`` rounds with ``nearest_mode`` (``round_prefer_floor`` default,
``round_prefer_ceil``, ``floor``, ``ceil``) and clamps to the axis; ``linear`` and ``cubic``
weigh the neighbours with their filter (``resize_filters``: ``cubic_coeff_a``, ``exclude_outside``,
``antialias``), axis by axis (so 2 spatial axes are bilinear / bicubic). With
``tf_crop_and_resize`` an output whose coordinate lies outside ``[0, n - 1]`` is
``extrapolation_value`` (default 0).
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels import resize_filters
from zcspec.impl.device.kernels.common import data_inputs, fail, kernel, value_operand

_ROUND = {
    "round_prefer_floor": lambda c: np.ceil(c - 0.5),
    "round_prefer_ceil": lambda c: np.floor(c + 0.5),
    "floor": np.floor,
    "ceil": np.ceil,
}
_COORDS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
           "tf_crop_and_resize")
_MODES = ("nearest", "linear", "cubic")
_POLICIES = {"stretch": None, "not_larger": min, "not_smaller": max}


def source_coords(mode: str, n: int, m: int, scale: float, roi: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
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
    if mode == "tf_crop_and_resize":
        start, end = roi
        if m == 1:
            return np.full(m, (start + end) * (n - 1) / 2.0)
        return start * (n - 1) + x * (end - start) * (n - 1) / (m - 1)
    return x / scale


def _axes(task, rank: int) -> list[int]:
    axes = task.attr("axes")
    return list(range(rank)) if axes is None else [int(a) % rank for a in axes]


def _per_axis(task, key: str, axes: list[int], cast=float) -> tuple | None:
    given = task.attr(key)
    if given is None or len(tuple(given)) == 0:
        return None
    given = tuple(cast(v) for v in given)
    if len(given) != len(axes):
        raise fail(task, f"{key}={given} has {len(given)} entries for axes {axes}")
    return given


def _scales(task, x: np.ndarray, out_shape, axes: list[int]) -> list[float]:
    scales = [out_shape[a] / x.shape[a] if x.shape[a] else 1.0 for a in range(x.ndim)]
    given = _per_axis(task, "scales", axes)
    if given is not None:
        for a, s in zip(axes, given):
            scales[a] = s
        return scales
    policy = task.attr("keep_aspect_ratio_policy", "stretch")
    if policy not in _POLICIES:
        raise fail(task, f"keep_aspect_ratio_policy={policy!r}: supported are {tuple(_POLICIES)}")
    sizes = _per_axis(task, "sizes", axes, int)
    if _POLICIES[policy] is not None and sizes is not None:
        common = _POLICIES[policy](s / x.shape[a] for a, s in zip(axes, sizes) if x.shape[a])
        for a in axes:
            scales[a] = common
    return scales


def _rois(task, ins, rank: int, axes: list[int]) -> list[tuple[float, float]]:
    """Each axis's (start, end) of ``roi`` (the whole axis, (0, 1), where none is given)."""
    rois = [(0.0, 1.0)] * rank
    roi = value_operand(task, ins, "roi")
    roi = () if roi is None else tuple(float(v) for v in np.asarray(roi, dtype=np.float64).reshape(-1))
    if not roi:
        return rois
    if len(roi) != 2 * len(axes):
        raise fail(task, f"roi={roi} has {len(roi)} entries for axes {axes} (starts, then ends)")
    for i, a in enumerate(axes):
        rois[a] = (roi[i], roi[len(axes) + i])
    return rois


def _check(task, mode: str, coord: str, rounding: str) -> None:
    if mode not in _MODES or coord not in _COORDS or rounding not in _ROUND:
        raise fail(task, f"mode={mode!r}, coordinate_transformation_mode={coord!r}, nearest_mode={rounding!r}: "
                         f"supported are {_MODES}, {_COORDS} and {tuple(_ROUND)}")


def _resample(task, y, a: int, coords: np.ndarray, mode: str, rounding: str, scale: float):
    """``y`` resampled along axis ``a`` at ``coords``."""
    n = y.shape[a]
    if mode == "nearest":
        return np.take(y, np.clip(_ROUND[rounding](coords), 0, n - 1).astype(np.int64), axis=a)
    w = resize_filters.weights(coords, n, mode, scale=scale, cubic_a=float(task.attr("cubic_coeff_a", -0.75)),
                               antialias=bool(int(task.attr("antialias", 0))),
                               exclude_outside=bool(int(task.attr("exclude_outside", 0))))
    return resize_filters.apply(y, a, w)


@kernel("Resize")
def resize(task, ins, outs):
    x = data_inputs(task, ins)[0]
    mode = task.attr("mode", "nearest")
    coord = task.attr("coordinate_transformation_mode", "half_pixel")
    rounding = task.attr("nearest_mode", "round_prefer_floor")
    _check(task, mode, coord, rounding)
    out_shape = outs[0].shape
    if len(out_shape) != x.ndim:
        raise fail(task, f"output rank {len(out_shape)} differs from input rank {x.ndim}")
    axes = _axes(task, x.ndim)
    rois = _rois(task, ins, x.ndim, axes) if coord == "tf_crop_and_resize" else [(0.0, 1.0)] * x.ndim
    fill = float(task.attr("extrapolation_value", 0.0))
    y = x if mode == "nearest" else x.astype(np.float64)
    for a, s in enumerate(_scales(task, x, out_shape, axes)):
        n, m = x.shape[a], out_shape[a]
        if m == n and s == 1.0 and rois[a] == (0.0, 1.0):
            continue
        if n == 0:
            raise fail(task, f"axis {a} is empty in the input but {m} long in the output")
        coords = source_coords(coord, n, m, s, rois[a])
        y = _resample(task, y, a, coords, mode, rounding, s)
        if coord == "tf_crop_and_resize":
            outside = ((coords < 0) | (coords > n - 1)).reshape((-1,) + (1,) * (x.ndim - 1 - a))
            y = np.where(outside, y.dtype.type(fill), y)
    return (y.astype(x.dtype),)
