"""Data-movement kernels: Concat, Transpose, Split, Slice, and the atomic ReduceSum.

Parameters that newer opsets pass as inputs (Split's ``split``, Slice's
starts/ends/axes/steps, ReduceSum's ``axes``) are read from the input when it is
there and from the attribute otherwise (the opset-1..12 forms).
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import axis, fail, input_or_attr, kernel
from zcspec.impl.platform.reduce_axes import ReduceAxesError, reduce_axes


@kernel("Concat")
def concat(task, ins, outs):
    a = axis(task, "axis", 1, ins[0].ndim)
    try:
        return (np.concatenate(ins, axis=a),)
    except ValueError as e:
        raise fail(task, f"inputs {[x.shape for x in ins]} do not concatenate on axis {a}") from e


@kernel("Transpose")
def transpose(task, ins, outs):
    (x,) = ins
    perm = task.attr("perm")
    perm = tuple(range(x.ndim))[::-1] if perm is None else tuple(int(p) for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise fail(task, f"perm={perm} is not a permutation of {x.ndim} axes")
    return (np.transpose(x, perm),)


@kernel("Split")
def split(task, ins, outs):
    x = ins[0]
    a = axis(task, "axis", 0, x.ndim)
    sizes = input_or_attr(task, ins, 1, "split")
    if sizes is None:  # equal parts (the last one smaller when it does not divide, opset 18)
        part = -(-x.shape[a] // len(outs))
        sizes = [min(part, x.shape[a] - i * part) for i in range(len(outs))]
    if len(sizes) != len(outs) or sum(sizes) != x.shape[a] or min(sizes) < 0:
        raise fail(task, f"split sizes {tuple(sizes)} do not cut axis {a} of length {x.shape[a]} into {len(outs)} outputs")
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=a))


@kernel("Slice")
def slice_(task, ins, outs):
    x = ins[0]
    starts = input_or_attr(task, ins, 1, "starts")
    ends = input_or_attr(task, ins, 2, "ends")
    if starts is None or ends is None or len(starts) != len(ends):
        raise fail(task, f"needs starts and ends of equal length, got {starts} and {ends}")
    axes = input_or_attr(task, ins, 3, "axes", tuple(range(len(starts))))
    steps = input_or_attr(task, ins, 4, "steps", (1,) * len(starts))
    index = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        if st == 0 or not -x.ndim <= ax < x.ndim:
            raise fail(task, f"axis {ax} / step {st} is invalid for rank {x.ndim}")
        index[ax % x.ndim] = _onnx_slice(s, e, st, x.shape[ax])
    return (x[tuple(index)],)


def _onnx_slice(start: int, end: int, step: int, dim: int) -> slice:
    """ONNX's clamping: negatives count from the end, then [0, dim] going forwards and
    [0, dim-1] (start) / [-1, dim-1] (end, -1 = through index 0) going backwards. Python's
    own clamping differs for negative steps (a start below -dim selects nothing)."""
    start, end = start + dim if start < 0 else start, end + dim if end < 0 else end
    if step > 0:
        return slice(min(max(start, 0), dim), min(max(end, 0), dim), step)
    start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    return slice(start, None if end < 0 else end, step)


@kernel("ReduceSum", accumulates=True)
def reduce_sum(task, ins, outs):
    """Atomic: ACCUMULATES into its output (out += sum), so the output needs a prior clean
    (a memset task), as GE's atomic ops do (block_mem_assigner.cc
    ``IsAtomicOutputMemory``, graph_mem_assigner.cc ``SetAtomicCleanOffset``)."""
    x = ins[0]
    try:   # the rule every reduction shares: empty axes = all of them, unless noop_with_empty_axes
        axes = reduce_axes(input_or_attr(task, ins, 1, "axes"), x.ndim,
                           noop_with_empty_axes=bool(int(task.attr("noop_with_empty_axes", 0))))
    except ReduceAxesError as e:
        raise fail(task, str(e)) from e
    if not axes:
        return (outs[0] + x,)
    total = np.sum(x, axis=axes, keepdims=bool(int(task.attr("keepdims", 1))))
    if total.shape != outs[0].shape:
        raise fail(task, f"sum has shape {total.shape}, output slot has {outs[0].shape}")
    return (outs[0] + total,)
