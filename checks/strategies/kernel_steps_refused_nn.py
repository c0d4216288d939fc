"""Refused oracle steps for the neural-network kernels: convolutions, pools, LRN, Gemm, normalisations, Resize and
the recurrent ones (see kernel_steps_refused: one malformed node per kernel check onnxruntime refuses too, its
``outs`` the shapes the kernel would compute without the check). Each builder's comment names the kernel function
whose check it reaches; "numpy too": without that check numpy refuses the operands (the executor's KernelError)."""
from __future__ import annotations

import random

from zcspec.checks.strategies.kernel_step_form import F, I, io, step


def floats(rng: random.Random, shape, dtype: str = "float32") -> dict:
    """An input of ``shape`` with drawn values (floats, or small integers for an integer ``dtype``)."""
    return io(shape, dtype, F(rng, shape) if dtype.startswith("float") else I(rng, shape, -3, 3))


def refused(op: str, inputs: list[dict], attrs: dict, outs, **kw) -> dict:
    """A step of ``op`` with the output shapes ``outs`` given (``io`` dicts or shapes, float32): ONNX's shape
    inference has none for a malformed node."""
    return step(op, inputs, attrs, outs=[o if isinstance(o, dict) else io(o) for o in outs], **kw)


def _nc(rng: random.Random, spatial: int = 2, lo: int = 2, hi: int = 4) -> list[int]:
    return [rng.randint(1, 2), rng.randint(1, 3)] + [rng.randint(lo, hi) for _ in range(spatial)]


# -- convolutions -------------------------------------------------------------------------------

def _conv_rank(rng):   # conv: an input without spatial axes (N x C), the weight M x C
    n, c, m = rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 3)
    return refused("Conv", [floats(rng, [n, c]), floats(rng, [m, c])], {}, [[n, m]])


def _conv_group(rng):   # conv: a group that divides the input channels, not the output ones (numpy too)
    group = rng.randint(2, 3)
    x = [1, group * rng.randint(1, 2), rng.randint(2, 3), rng.randint(2, 3)]
    m = group * rng.randint(1, 2) + 1
    return refused("Conv", [floats(rng, x), floats(rng, [m, x[1] // group, 1, 1])], {"group": group}, [[1, m] + x[2:]])


def _conv_kernel_shape(rng):   # conv: kernel_shape other than the weight's lengths (numpy too)
    x = _nc(rng, lo=3, hi=4)
    k = [rng.randint(1, 2) for _ in range(2)]
    given = [kk + 1 for kk in k]
    m = rng.randint(1, 2)
    return refused("Conv", [floats(rng, x), floats(rng, [m, x[1]] + k)], {"kernel_shape": given},
                   [[x[0], m] + [d - g + 1 for d, g in zip(x[2:], given)]])


def _conv_transpose_crop(rng):   # conv_transpose: pads that leave an axis no element (its output check too)
    x = [1, rng.randint(1, 2), rng.randint(1, 2), rng.randint(1, 2)]
    k, m = rng.randint(1, 2), rng.randint(1, 2)
    full = x[3] + k - 1
    pads = [0, full // 2 + 1, 0, full - full // 2]   # the second axis cropped to nothing (or less)
    return refused("ConvTranspose", [floats(rng, x), floats(rng, [x[1], m, 1, k])], {"pads": pads},
                   [[1, m, x[2], 1]])


def _conv_transpose_past(rng):   # conv_transpose: a SAME output past the full extent (onnxruntime's is at
    # most the full extent, min(input * stride, full); numpy too)
    n, k, s, c, m = (rng.randint(1, 3) for _ in range(5))
    full = s * (n - 1) + k
    return refused("ConvTranspose", [floats(rng, [1, c, n]), floats(rng, [c, m, k])],
                   {"auto_pad": rng.choice(["SAME_UPPER", "SAME_LOWER"]), "strides": [s]}, [[1, m, full + 1]])


# -- pools and windows --------------------------------------------------------------------------

def _pool_rank(rng):   # _setup: MaxPool/AveragePool of an input without spatial axes (ints' count too)
    x = [rng.randint(1, 2), rng.randint(2, 3)]   # (ONNX has no empty kernel_shape: one of length 1)
    return refused(rng.choice(["MaxPool", "AveragePool"]), [floats(rng, x)], {"kernel_shape": [1]}, [x])


def _global_pool_rank(rng):   # global_max_pool: GlobalMaxPool of an input without spatial axes
    x = [rng.randint(1, 2), rng.randint(2, 3)]
    return refused("GlobalMaxPool", [floats(rng, x)], {}, [x])


def _pool_no_kernel(rng):   # _setup: a pool without kernel_shape (numpy too)
    x = _nc(rng)
    return refused(rng.choice(["MaxPool", "AveragePool"]), [floats(rng, x)], {"strides": [1, 1]}, [x])


def _pool_auto_pad(rng):   # geometry: an auto_pad ONNX does not define
    x = _nc(rng)
    return refused(rng.choice(["MaxPool", "AveragePool"]), [floats(rng, x)],
                   {"kernel_shape": [1, 1], "auto_pad": rng.choice(["SAME", "FULL", "same_upper"])}, [x])


def _pool_window(rng):   # geometry: a window longer than the padded input (numpy too)
    x = _nc(rng, lo=1, hi=2)
    k = [d + rng.randint(1, 2) for d in x[2:]]
    return refused(rng.choice(["MaxPool", "AveragePool"]), [floats(rng, x)], {"kernel_shape": k}, [x[:2] + [1, 1]])


# -- nn -----------------------------------------------------------------------------------------

def _lrn_size(rng):   # lrn: size 0 (numpy too: a division by it)
    x = _nc(rng, lo=1, hi=3)
    return refused("LRN", [floats(rng, x)], {"size": 0}, [x])


def _gemm_rank(rng):   # gemm: Gemm of a 3-D A (its middle axis the inner length)
    b, k, n = rng.randint(2, 3), rng.randint(1, 3), rng.randint(1, 3)
    return refused("Gemm", [floats(rng, [b, k, k]), floats(rng, [k, n])], {}, [[b, k, n]])


def _gemm_inner(rng):   # gemm: inner lengths that differ (numpy too)
    m, k, n = (rng.randint(1, 3) for _ in range(3))
    return refused("Gemm", [floats(rng, [m, k]), floats(rng, [k + 1, n])], {}, [[m, n]])


def _instance_norm_scale(rng):   # instance_norm: an InstanceNormalization scale and bias of one entry, C of 2 or 3
    x = [rng.randint(1, 2), rng.randint(2, 3), rng.randint(2, 3)]
    return refused("InstanceNormalization", [floats(rng, x), floats(rng, [1]), floats(rng, [1])], {}, [x])


def _layer_norm_scale(rng):   # layer_norm: a LayerNormalization scale that does not broadcast over the axes
    x = [rng.randint(1, 2), rng.randint(2, 3), rng.randint(2, 3)]
    return refused("LayerNormalization", [floats(rng, x), floats(rng, [x[2] + 1])], {"axis": -1}, [x], opset=17)


# -- Resize -------------------------------------------------------------------------------------

def _resize(rng, x, attrs: dict, onnx_ins: list[dict], out, opset: int = 13) -> dict:
    onnx_attrs = {k: v for k, v in attrs.items() if k not in ("scales", "sizes", "roi")}
    return refused("Resize", [floats(rng, x)] + onnx_ins, attrs, [out], onnx_attrs=onnx_attrs, opset=opset)


def _resize_scales(rng):   # _per_axis: scales with one entry fewer than the axes
    x = [1, rng.randint(1, 2), rng.randint(2, 3), rng.randint(2, 3)]
    scales = [1.0, 1.0, 2.0]
    empty = io([0], "float32", [], index=1, onnx_only=True)
    return _resize(rng, x, {"mode": "nearest", "scales": scales},
                   [empty, io([3], "float32", scales, index=2, onnx_only=True)], x[:2] + [2 * x[2], x[3]])


def _resize_sizes(rng):   # _per_axis: sizes with one entry more than the axes
    x = [1, rng.randint(1, 2), rng.randint(2, 3), rng.randint(2, 3)]
    sizes = x[:2] + [rng.randint(1, 4) for _ in range(3)]
    empty = [io([0], "float32", [], index=k, onnx_only=True) for k in (1, 2)]
    return _resize(rng, x, {"mode": "nearest", "sizes": sizes}, empty + [io([5], "int64", sizes, index=3,
                                                                             onnx_only=True)], sizes[:4], opset=11)


def _resize_roi(rng):   # _rois: a tf_crop_and_resize roi of two entries more than starts and ends
    x = [1, 1, rng.randint(2, 3), rng.randint(2, 3)]
    roi = [0.0] * 4 + [1.0] * 4 + [0.5, 0.5]
    sizes = x[:2] + [rng.randint(1, 4), rng.randint(1, 4)]
    attrs = {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "sizes": sizes, "roi": roi}
    return _resize(rng, x, attrs, [io([10], "float32", roi, index=1, onnx_only=True),
                                   io([4], "int64", sizes, index=3, onnx_only=True)], sizes)


def _resize_mode(rng):   # _check: a mode, coordinate mode or nearest mode ONNX does not define
    x = [1, 1, rng.randint(2, 3), rng.randint(2, 3)]
    sizes = x[:2] + [2 * x[2], 2 * x[3]]
    attrs = rng.choice([{"mode": "bilinear"}, {"coordinate_transformation_mode": "corners"},
                        {"nearest_mode": "round"}])
    return _resize(rng, x, {**attrs, "sizes": sizes}, [io([4], "int64", sizes, index=3, onnx_only=True)], sizes,
                   opset=18)


def _resize_policy(rng):   # _scales: a keep_aspect_ratio_policy ONNX does not define
    x = [1, 1, rng.randint(2, 3), rng.randint(2, 3)]
    sizes = [2 * x[2], 2 * x[3]]
    attrs = {"axes": [2, 3], "keep_aspect_ratio_policy": rng.choice(["fit", "not_equal", "Stretch"]), "sizes": sizes}
    return _resize(rng, x, attrs, [io([2], "int64", sizes, index=3, onnx_only=True)], x[:2] + sizes, opset=18)


def _resize_empty(rng):   # resize: an axis empty in the input resized to a length (numpy too)
    x = [1, 1, rng.randint(2, 3), rng.randint(2, 3)]
    a = rng.choice([2, 3])
    sizes, x[a] = list(x), 0
    return _resize(rng, x, {"mode": "nearest", "sizes": sizes}, [io([4], "int64", sizes, index=3, onnx_only=True)],
                   sizes, opset=18)


def _resize_rank(rng):   # resize: an output of another rank than the input (onnxruntime's differs; numpy too)
    x = [1, 1, rng.randint(2, 3), rng.randint(2, 3)]
    sizes = list(x)
    return _resize(rng, x, {"mode": "nearest", "sizes": sizes}, [io([4], "int64", sizes, index=3, onnx_only=True)],
                   x[1:], opset=18)


# -- recurrent ----------------------------------------------------------------------------------

def _recurrent_direction(rng):   # _directions: an LSTM or GRU direction ONNX does not define
    op = rng.choice(["LSTM", "GRU"])
    gates = 4 if op == "LSTM" else 3
    seq, batch, size, hidden = (rng.randint(1, 2) for _ in range(4))
    ins = [io([seq, batch, size], "float32", F(rng, [seq, batch, size], -1, 1), index=0),
           io([1, gates * hidden, size], "float32", F(rng, [1, gates * hidden, size], -1, 1), index=1),
           io([1, gates * hidden, hidden], "float32", F(rng, [1, gates * hidden, hidden], -1, 1), index=2)]
    attrs = {"hidden_size": hidden, "direction": rng.choice(["backward", "both", "Forward"]), "layout": 0,
             "_present_inputs": [0, 1, 2]}
    outs = [[seq, 1, batch, hidden], [1, batch, hidden]] + ([[1, batch, hidden]] if op == "LSTM" else [])
    return refused(op, ins, attrs, outs, opset=14)


CHECKS_NN = {
    "Conv rank": _conv_rank, "Conv group": _conv_group, "Conv kernel_shape": _conv_kernel_shape,
    "ConvTranspose crop": _conv_transpose_crop, "ConvTranspose past the extent": _conv_transpose_past,
    "pool rank": _pool_rank, "GlobalMaxPool rank": _global_pool_rank, "pool kernel_shape": _pool_no_kernel,
    "pool auto_pad": _pool_auto_pad, "pool window": _pool_window, "LRN size": _lrn_size, "Gemm rank": _gemm_rank,
    "Gemm inner": _gemm_inner, "InstanceNormalization scale": _instance_norm_scale,
    "LayerNormalization scale": _layer_norm_scale, "Resize scales": _resize_scales, "Resize sizes": _resize_sizes,
    "Resize roi": _resize_roi, "Resize mode": _resize_mode, "Resize policy": _resize_policy,
    "Resize empty axis": _resize_empty, "Resize rank": _resize_rank, "recurrent direction": _recurrent_direction,
}
