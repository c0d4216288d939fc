"""Resize's linear and cubic filters along one axis, as a weight matrix (ONNX's Resize, opset 18+).

``weights(coords, n, mode, ...)`` is the ``(m, n)`` matrix whose row ``o`` holds the weight of each of
the ``n`` input elements in output element ``o``, whose source coordinate is ``coords[o]``. Input index
``j`` gets ``f((j - x) * s)``, where ``f`` is the filter (linear: the tent ``max(0, 1 - |d|)``; cubic:
Keys' kernel with coefficient ``a``, ``cubic_coeff_a``) and ``s`` is 1, or ``min(scale, 1)`` with
``antialias`` (the filter stretched by ``1 / scale`` when downscaling), over the ``2 * ceil(support / s)``
indices around ``x`` (support 1 for linear, 2 for cubic). An index outside ``[0, n)`` reads the edge
element, or with ``exclude_outside`` weighs 0; with ``antialias`` or ``exclude_outside`` each row is
then divided by its sum (what onnx.reference and onnxruntime do). ``apply`` contracts an axis with it.
"""
from __future__ import annotations

import numpy as np

SUPPORT = {"linear": 1.0, "cubic": 2.0}


def _tent(d: np.ndarray, a: float) -> np.ndarray:
    return np.clip(1.0 - np.abs(d), 0.0, 1.0)


def _keys(d: np.ndarray, a: float) -> np.ndarray:
    d = np.abs(d)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


_FILTERS = {"linear": _tent, "cubic": _keys}


def weights(coords: np.ndarray, n: int, mode: str, *, scale: float, cubic_a: float = -0.75,
            antialias: bool = False, exclude_outside: bool = False) -> np.ndarray:
    """The ``(len(coords), n)`` weights of ``mode`` (``linear`` or ``cubic``) at ``coords`` (module docstring)."""
    m = len(coords)
    s = min(scale, 1.0) if antialias else 1.0
    start = int(np.floor(-SUPPORT[mode] / s)) + 1
    taps = np.arange(start, 1 - start + 1)                     # 2 - 2 * start indices around x
    base = np.floor(coords)
    base = np.where(base == coords, base - 1, base)            # an integer x: its left neighbour is the base
    j = base.astype(np.int64)[:, None] + taps[None, :]
    w = _FILTERS[mode]((j - coords[:, None]) * s, cubic_a)
    if exclude_outside:
        w = np.where((j < 0) | (j >= n), 0.0, w)
    if antialias or exclude_outside:
        total = w.sum(axis=1, keepdims=True)
        w = w / np.where(total == 0, 1.0, total)
    out = np.zeros((m, n), np.float64)
    np.add.at(out, (np.repeat(np.arange(m), len(taps)), np.clip(j, 0, n - 1).reshape(-1)), w.reshape(-1))
    return out


def apply(x: np.ndarray, axis: int, w: np.ndarray) -> np.ndarray:
    """``x`` with axis ``axis`` (length n) replaced by ``w @`` it (length m)."""
    return np.moveaxis(np.tensordot(x, w, axes=([axis], [1])), -1, axis)
