"""Sliding windows shared by Conv and the pools: padding rules and strided window views.

``geometry`` turns ONNX attributes (kernel_shape, strides, dilations, pads,
auto_pad, ceil_mode) into begin/end pads and output sizes; ``windows`` returns a
zero-copy view of shape ``(N, C, *out, *kernel)`` over an already padded input
(numpy's ``sliding_window_view`` then strided slicing: no Python loop over pixels).
"""
from __future__ import annotations

import attrs
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from zcspec.impl.device.kernels.common import fail, ints


@attrs.frozen
class Geometry:
    kernel: tuple
    strides: tuple
    dilations: tuple
    begin: tuple
    end: tuple      # end pads, including any extra that ceil_mode needs
    out: tuple

    def pad_widths(self):
        return [(0, 0), (0, 0)] + list(zip(self.begin, self.end))


def geometry(task, in_sizes: tuple, kernel: tuple, *, ceil_mode: bool = False) -> Geometry:
    """Output geometry for spatial input sizes ``in_sizes`` and window ``kernel``."""
    n = len(in_sizes)
    strides = ints(task, "strides", (1,) * n, n=n)
    dilations = ints(task, "dilations", (1,) * n, n=n)
    auto_pad = task.attr("auto_pad", "NOTSET")
    extent = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilations))
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = tuple(-(-i // s) for i, s in zip(in_sizes, strides))
        total = [max(0, (o - 1) * s + e - i) for o, s, e, i in zip(out, strides, extent, in_sizes)]
        small = [t // 2 for t in total]
        begin = small if auto_pad == "SAME_UPPER" else [t - h for t, h in zip(total, small)]
        end = [t - b for t, b in zip(total, begin)]
    elif auto_pad in ("NOTSET", "VALID"):
        pads = (0,) * 2 * n if auto_pad == "VALID" else ints(task, "pads", (0,) * 2 * n, n=2 * n)
        begin, end = list(pads[:n]), list(pads[n:])
        out = tuple(_out_size(i + b + e, x, s, ceil_mode, i + b)
                    for i, b, e, x, s in zip(in_sizes, begin, end, extent, strides))
    else:
        raise fail(task, f"attribute auto_pad={auto_pad!r} is not NOTSET, SAME_UPPER, SAME_LOWER or VALID")
    if any(o <= 0 for o in out):
        raise fail(task, f"window {kernel} (dilations {dilations}) does not fit input {in_sizes} with pads {begin}+{end}")
    # ceil_mode may need room past the end pad for the last window.
    end = [max(e, (o - 1) * s + x - i - b) for e, o, s, x, i, b in zip(end, out, strides, extent, in_sizes, begin)]
    return Geometry(tuple(kernel), strides, dilations, tuple(begin), tuple(end), out)


def _out_size(padded: int, extent: int, stride: int, ceil_mode: bool, last_start_limit: int) -> int:
    if not ceil_mode:
        return (padded - extent) // stride + 1
    out = -(-(padded - extent) // stride) + 1
    # ONNX/onnxruntime: the last window must start inside the input or its begin pad.
    if (out - 1) * stride >= last_start_limit:
        out -= 1
    return out


def windows(padded: np.ndarray, g: Geometry) -> np.ndarray:
    """View ``(N, C, *out, *kernel)`` of the windows of ``padded`` (N, C, *spatial)."""
    n = len(g.kernel)
    extent = tuple(d * (k - 1) + 1 for k, d in zip(g.kernel, g.dilations))
    view = sliding_window_view(padded, extent, axis=tuple(range(2, 2 + n)))
    index = (slice(None), slice(None))
    index += tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(g.out, g.strides))
    index += tuple(slice(None, None, d) for d in g.dilations)
    return view[index]
