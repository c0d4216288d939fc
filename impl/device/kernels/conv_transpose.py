"""ConvTranspose over 1-3 spatial axes: strides, pads, dilations, output_padding, group.

Input ``X`` (N, C, spatial...), weight ``W`` (C, M / group, kernel...), optional bias (M,).
Each input pixel ``i`` scatters ``X[i] * W[k]`` to output position ``i*stride + k*dilation
- pad_begin``; the full (uncropped) extent of an axis is ``stride*(n-1) + dilation*(k-1) + 1
+ output_padding``. Explicit ``pads`` (0 when absent, without ``output_shape`` or ``auto_pad``
SAME_*) crop ``pad_begin`` at the start and ``pad_end`` at the end: an output slot of any other
extent is refused, and so are pads that leave an axis no element (as onnxruntime refuses them). Otherwise (``output_shape`` or ``auto_pad`` SAME_*) the output slot's shape
fixes what is kept, and the surplus is split as the ONNX spec and onnxruntime do: the odd
element cropped at the end for SAME_UPPER, at the start otherwise (SAME_LOWER, or
``output_shape`` without auto_pad).
"""
from __future__ import annotations

import itertools

import numpy as np

from zcspec.impl.device.kernels.common import fail, ints, kernel, need_float


def _begins(task, full: list[int], out: tuple[int, ...], nd: int) -> list[int]:
    pads = ints(task, "pads", n=2 * nd)
    auto = task.attr("auto_pad", "NOTSET")
    if pads is not None and auto in ("NOTSET", "VALID") and task.attr("output_shape") is None:
        return [0] * nd if auto == "VALID" else list(pads[:nd])
    surplus = [max(f - o, 0) for f, o in zip(full, out)]
    if auto == "SAME_UPPER":
        return [s // 2 for s in surplus]
    return [s - s // 2 for s in surplus]


@kernel("ConvTranspose")
def conv_transpose(task, ins, outs):
    x, w, *bias = ins
    need_float(task, x, w, *bias)
    nd = x.ndim - 2
    group = int(task.attr("group", 1))
    if nd < 1 or w.ndim != x.ndim or x.shape[1] != w.shape[0] or x.shape[1] % group:
        raise fail(task, f"input {x.shape} and weight {w.shape} do not fit group={group}")
    strides = ints(task, "strides", (1,) * nd, n=nd)
    dil = ints(task, "dilations", (1,) * nd, n=nd)
    extra = ints(task, "output_padding", (0,) * nd, n=nd)
    kern = w.shape[2:]
    full = [s * (n - 1) + d * (k - 1) + 1 + e for s, n, d, k, e in zip(strides, x.shape[2:], dil, kern, extra)]
    cg, mg = x.shape[1] // group, w.shape[1]
    out = np.zeros((x.shape[0], mg * group, *full), dtype=np.float64)
    xg = x.astype(np.float64).reshape(x.shape[0], group, cg, *x.shape[2:])
    wg = w.astype(np.float64).reshape(group, cg, mg, *kern)
    for k in itertools.product(*(range(n) for n in kern)):
        contrib = np.einsum("ngc...,gcm->ngm...", xg, wg[(slice(None), slice(None), slice(None)) + k])
        index = tuple(slice(kk * d, kk * d + s * (n - 1) + 1, s)
                      for kk, d, s, n in zip(k, dil, strides, x.shape[2:]))
        out[(slice(None), slice(None)) + index] += contrib.reshape(x.shape[0], mg * group, *x.shape[2:])
    target = outs[0].shape
    auto = task.attr("auto_pad", "NOTSET")
    if task.attr("output_shape") is None and auto in ("NOTSET", "VALID"):   # the pads fix the output's extent
        pads = ints(task, "pads", (0,) * 2 * nd, n=2 * nd) if auto == "NOTSET" else (0,) * 2 * nd
        want = [f - b - e for f, b, e in zip(full, pads[:nd], pads[nd:])]
        if min(want) <= 0:   # onnxruntime: "Computed output dimension is <= 0"
            raise fail(task, f"pads {list(pads)} crop the full extent {full} to {want}: no output is left")
        if list(target[2:]) != want:
            raise fail(task, f"output {target} is not the extent {want} its pads {list(pads)} give")
    begins = _begins(task, full, target[2:], nd)
    short = [max(b + t - f, 0) for b, t, f in zip(begins, target[2:], full)]
    if any(short) and task.attr("output_shape") is not None:   # past the full extent: zeros at the end,
        # as onnxruntime gives (explicit pads that do not fit stay an error below)
        out = np.pad(out, [(0, 0), (0, 0)] + [(0, s) for s in short])
        full = [f + s for f, s in zip(full, short)]
    if any(b < 0 or b + t > f for b, t, f in zip(begins, target[2:], full)):
        raise fail(task, f"output {target} does not fit the full extent {full} with pad begins {begins}")
    y = out[(slice(None), slice(None)) + tuple(slice(b, b + t) for b, t in zip(begins, target[2:]))]
    if bias:
        y = y + bias[0].astype(np.float64).reshape((1, -1) + (1,) * nd)
    return (y.astype(x.dtype),)
