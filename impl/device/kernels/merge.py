"""Merge: the join of a dynamic-batch graph's branches (GE's Merge after a Case / StreamSwitchN).

Input i is the output of the branch ``labels[i]`` names. Only one branch runs per
execution, so only that branch's input holds data; the runtime that launches the
task says which one by adding the attribute ``SELECTED`` (the label it chose) to
the task it launches. The kernel copies that input to the output, byte for byte.
A task without the choice, or with a label ``labels`` does not list, fails: a
Merge has no meaningful output otherwise.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.device.kernels.common import fail, kernel

SELECTED = "_selected_batch"


@kernel("Merge")
def merge(task, ins, outs):
    labels = tuple(task.attr("labels", ()))
    chosen = task.attr(SELECTED)
    if len(labels) != len(ins):
        raise fail(task, f"labels={labels!r} names {len(labels)} branches for {len(ins)} inputs")
    if chosen not in labels:
        raise fail(task, f"selected branch {chosen!r} is not one of labels={labels!r} "
                         "(the runtime must choose a branch for every execution)")
    (dst,) = outs
    src = ins[labels.index(chosen)]
    if src.nbytes != dst.nbytes:
        raise fail(task, f"copies {src.nbytes} bytes into a {dst.nbytes}-byte output")
    return (np.array(src.reshape(-1).view(dst.dtype).reshape(dst.shape)),)
