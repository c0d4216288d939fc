"""Normalisation kernels: LayerNormalization (opset 17) and InstanceNormalization.

LayerNormalization normalises over the axes from ``axis`` (default -1) to the last,
with ``epsilon`` (1e-5); ``Scale`` and the optional ``B`` broadcast against the
normalised axes. Its optional outputs ``Mean`` and ``InvStdDev`` keep the leading axes
and have size 1 on the normalised ones. InstanceNormalization normalises each (batch,
channel) plane over the spatial axes and applies the per-channel ``scale`` and ``B``.
Statistics are computed in float64 and the results cast to the input's dtype.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import axis, fail, kernel, need_float


def _moments(x64: np.ndarray, axes: tuple[int, ...], epsilon: float):
    mean = x64.mean(axis=axes, keepdims=True)
    var = np.square(x64 - mean).mean(axis=axes, keepdims=True)
    return mean, 1.0 / np.sqrt(var + epsilon)


@kernel("LayerNormalization")
def layer_norm(task, ins, outs):
    x, scale, *bias = ins
    need_float(task, x, scale, *bias)
    a = axis(task, "axis", -1, x.ndim)
    axes = tuple(range(a, x.ndim))
    x64 = x.astype(np.float64)
    mean, inv = _moments(x64, axes, float(task.attr("epsilon", 1e-5)))
    try:
        y = (x64 - mean) * inv * scale.astype(np.float64)
        if bias:
            y = y + bias[0].astype(np.float64)
    except ValueError as e:
        raise fail(task, f"Scale {scale.shape} / B {[b.shape for b in bias]} do not broadcast over {x.shape[a:]}") from e
    results = (y.astype(x.dtype), mean.astype(np.float32), inv.astype(np.float32))
    return results[:len(outs)]


@kernel("InstanceNormalization")
def instance_norm(task, ins, outs):
    x, scale, bias = ins
    need_float(task, x, scale, bias)
    if x.ndim < 3 or scale.shape != (x.shape[1],) or bias.shape != (x.shape[1],):
        raise fail(task, f"needs input (N, C, spatial...) and scale/B of shape (C,), got {x.shape}, "
                         f"{scale.shape}, {bias.shape}")
    x64 = x.astype(np.float64)
    mean, inv = _moments(x64, tuple(range(2, x.ndim)), float(task.attr("epsilon", 1e-5)))
    per_channel = (1, -1) + (1,) * (x.ndim - 2)
    y = (x64 - mean) * inv * scale.reshape(per_channel) + bias.reshape(per_channel)
    return (y.astype(x.dtype),)
