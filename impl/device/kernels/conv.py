"""Conv: im2col over a strided window view, then one matrix product per group.

onnx.reference's Conv loops in Python and takes seconds on a 224x224 layer, so
this kernel is vectorised: pointwise (1x1, stride 1, no pad) convolutions are a
plain matmul over the channel axis; others build the column matrix from
``windows.windows`` (one copy) and multiply. Any rank of spatial dims works.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import fail, ints, kernel, need_float
from zcspec.impl.device.kernels.windows import geometry, windows


@kernel("Conv")
def conv(task, ins, outs):
    x, w = ins[0], ins[1]
    need_float(task, x, w)
    if x.ndim < 3 or w.ndim != x.ndim:
        raise fail(task, f"input {x.shape} and weight {w.shape} must both be N x C x spatial of the same rank")
    groups = int(task.attr("group", 1))
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    if groups <= 0 or c != cg * groups or m % groups:
        raise fail(task, f"group={groups} does not fit input channels {c}, weight {w.shape}")
    kernel_shape = ints(task, "kernel_shape", w.shape[2:], n=x.ndim - 2)
    if kernel_shape != tuple(w.shape[2:]):
        raise fail(task, f"kernel_shape={kernel_shape} differs from the weight's {w.shape[2:]}")
    g = geometry(task, x.shape[2:], kernel_shape)
    # Accumulate in float64: BLAS rounds rows differently (SIMD body vs tail), so channels with
    # identical weights came out a few ulps apart in float32, which an ill-conditioned softmax
    # (SqueezeNet's logits near 1.6e10) turns into visibly different probabilities.
    acc = np.float64 if x.dtype == np.float32 else x.dtype
    y = (_pointwise if _is_pointwise(g) else _im2col)(x.astype(acc), w.astype(acc), g, groups)
    if len(ins) > 2:
        y += ins[2].reshape((1, m) + (1,) * (x.ndim - 2))
    return (y.astype(x.dtype, copy=False),)


def _is_pointwise(g) -> bool:
    return all(k == 1 for k in g.kernel) and all(s == 1 for s in g.strides) and not any(g.begin + g.end)


def _pointwise(x, w, g, groups):
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    # (groups, M/g, C/g) @ (N, groups, C/g, pixels): one batched matmul, no column matrix.
    y = np.matmul(w.reshape(groups, m // groups, cg), x.reshape(n, groups, cg, -1))
    return y.reshape((n, m) + g.out)


def _im2col(x, w, g, groups):
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    xp = np.pad(x, g.pad_widths()) if any(g.begin + g.end) else x
    win = windows(xp, g)                        # N, C, *out, *k
    nd = len(g.out)
    # N, *out, C, *k so that one row of the column matrix is one output pixel.
    order = (0,) + tuple(range(2, 2 + nd)) + (1,) + tuple(range(2 + nd, 2 + 2 * nd))
    cols = np.ascontiguousarray(win.transpose(order))
    pixels = n * int(np.prod(g.out))
    ksize = int(np.prod(g.kernel))
    cols = cols.reshape(pixels, groups, cg * ksize)
    wm = w.reshape(groups, m // groups, cg * ksize)
    if groups == 1:
        y = cols[:, 0, :] @ wm[0].T              # pixels, M
    elif m == groups:                            # depthwise: one output channel per group
        y = np.einsum("pgk,gk->pg", cols, wm[:, 0, :])
    else:                                        # groups, pixels, M/g by batched matmul
        # Contiguous operands keep numpy on BLAS (a strided batch falls back to a slow loop).
        per_group = np.matmul(np.ascontiguousarray(cols.transpose(1, 0, 2)), np.ascontiguousarray(wm.transpose(0, 2, 1)))
        y = per_group.transpose(1, 0, 2).reshape(pixels, m)
    y = y.reshape((n,) + g.out + (m,))
    return np.moveaxis(y, -1, 1)
