"""Neural-network kernels that are not convolutions or pools: Softmax, LRN,
BatchNormalization (inference and training mode), Gemm, MatMul.

onnx.reference was considered for these: its LRN loops over the batch dimension
instead of the channels (wrong for batch 1 with more than one channel), and the
others are one numpy expression, so they are written here directly.
"""
from __future__ import annotations

import math

import numpy as np

from zcspec.impl.device.kernels.common import axis, fail, kernel, need_float


@kernel("Softmax")
def softmax(task, ins, outs):
    """ONNX opset 1-12 semantics unless the node says ``_opset`` >= 13.

    The front end keeps attributes as in the source model, and the light models are
    opset 9: the input is coerced to 2-D at ``axis`` (default 1) and each row is
    normalised. A node with ``_opset`` >= 13 normalises along ``axis`` (default -1).
    The two agree on 2-D inputs (the usual classifier head) and whenever the dims
    after ``axis`` are all 1.
    """
    (x,) = ins
    need_float(task, x)
    rank = x.ndim
    if x.size == 0:
        return (x.copy(),)
    if int(task.attr("_opset", 12)) >= 13:
        return (_softmax(x, axis(task, "axis", -1, rank)),)
    a = axis(task, "axis", 1, rank)
    flat = x.reshape(int(np.prod(x.shape[:a], dtype=np.int64)), -1)
    return (_softmax(flat, 1).reshape(x.shape),)


def _softmax(x, ax):
    e = np.exp(x - x.max(axis=ax, keepdims=True))
    return e / e.sum(axis=ax, keepdims=True)


@kernel("LRN")
def lrn(task, ins, outs):
    """Across-channel LRN: square sum over channels [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    (x,) = ins
    need_float(task, x)
    if x.ndim < 3:
        raise fail(task, f"needs an N x C x ... input, got shape {x.shape}")
    size = int(task.attr("size", 0))
    if size <= 0:
        raise fail(task, f"attribute size={size} must be positive")
    alpha, beta, bias = (float(task.attr(k, d)) for k, d in (("alpha", 1e-4), ("beta", 0.75), ("bias", 1.0)))
    lo, hi = (size - 1) // 2, math.ceil((size - 1) / 2)
    sq = np.square(x, dtype=np.float64)
    pad = [(0, 0)] * x.ndim
    pad[1] = (lo + 1, hi)  # one extra leading zero plane makes the window sum a cumsum difference
    csum = np.cumsum(np.pad(sq, pad), axis=1)
    c = x.shape[1]
    window = csum[:, size:size + c] - csum[:, 0:c]
    return ((x / (bias + (alpha / size) * window) ** beta).astype(x.dtype),)


def _batch_norm_training(task, x, scale, bias, mean, var, eps: float, n_outs: int) -> tuple:
    """``training_mode=1`` (opset 14+): normalise with the batch's own mean and (biased) variance over
    every axis but the channels; the optional outputs are the running statistics, the inputs'
    mean and var moved by ``1 - momentum`` (default 0.9) towards the batch's (statistics in float64)."""
    axes = (0,) + tuple(range(2, x.ndim))
    x64 = x.astype(np.float64)
    batch_mean, batch_var = x64.mean(axis=axes), x64.var(axis=axes)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x64 - batch_mean.reshape(shape)) / np.sqrt(batch_var.reshape(shape) + eps) * scale.reshape(shape) \
        + bias.reshape(shape)
    momentum = float(task.attr("momentum", 0.9))
    running = (mean * momentum + batch_mean * (1 - momentum), var * momentum + batch_var * (1 - momentum))
    return (y.astype(x.dtype),) + tuple(r.astype(mean.dtype) for r in running[:n_outs - 1])


@kernel("BatchNormalization")
def batch_norm(task, ins, outs):
    """Batch norm with the given statistics (inference), or the batch's (``training_mode=1``).
    Opset-9 ``spatial=0`` takes per-element (C x D1 x ...) parameters.

    In inference, outputs past the first (opset 9's training-mode statistics) get the input mean and var.
    """
    x, scale, bias, mean, var = ins
    need_float(task, x)
    eps = float(task.attr("epsilon", 1e-5))
    if int(task.attr("training_mode", 0)):
        return _batch_norm_training(task, x, scale, bias, mean, var, eps, len(outs))
    if int(task.attr("spatial", 1)):
        shape = (1, -1) + (1,) * (x.ndim - 2)
    else:
        shape = (1,) + scale.shape
    s, b, m, v = (p.reshape(shape) for p in (scale, bias, mean, var))
    y = (x - m) / np.sqrt(v + x.dtype.type(eps)) * s + b
    extra = (mean, var, mean, var)[: len(outs) - 1]
    return (y.astype(x.dtype),) + tuple(e.copy() for e in extra)


@kernel("Gemm")
def gemm(task, ins, outs):
    a, b = ins[0], ins[1]
    if a.ndim != 2 or b.ndim != 2:
        raise fail(task, f"needs 2-D A and B, got {a.shape} and {b.shape}")
    if int(task.attr("transA", 0)):
        a = a.T
    if int(task.attr("transB", 0)):
        b = b.T
    if a.shape[1] != b.shape[0]:
        raise fail(task, f"inner dimensions differ: A is {a.shape}, B is {b.shape} after transposes")
    alpha, beta = float(task.attr("alpha", 1.0)), float(task.attr("beta", 1.0))
    y = a @ b
    if alpha != 1.0:
        y *= y.dtype.type(alpha)
    if len(ins) > 2:
        y += ins[2] * ins[2].dtype.type(beta) if beta != 1.0 else ins[2]
    return (y,)


@kernel("MatMul")
def matmul(task, ins, outs):
    a, b = ins
    try:
        return (np.matmul(a, b),)
    except ValueError as e:
        raise fail(task, f"shapes {a.shape} and {b.shape} do not multiply") from e
