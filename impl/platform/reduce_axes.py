"""The axes an ONNX reduction (ReduceSum, ReduceMean, ReduceMax, ...) reduces over, one rule for all of them.

ONNX spells them three ways over its opsets: an ``axes`` attribute (opsets 1-17;
ReduceSum until 12), an ``axes`` input (opset 18; ReduceSum from 13), and no axes at
all. The IR keeps the attribute form (the front end moves a constant ``axes`` input
into the attribute), so every reduce kernel and every reader of a reduce node ask
this one function:

- axes given: each in ``[-rank, rank)``, negatives counted from the end, no axis twice;
- axes absent or empty: every axis, unless ``noop_with_empty_axes`` (opset 13/18 on),
  in which case none: the reduction is the identity.

The result is sorted and non-negative; ``()`` means "reduce nothing".
"""
from __future__ import annotations

from typing import Iterable


class ReduceAxesError(ValueError):
    """The axes do not fit the input's rank, or repeat an axis (the message names the values)."""


def reduce_axes(axes: Iterable[int] | None, rank: int, *, noop_with_empty_axes: bool = False) -> tuple[int, ...]:
    """The non-negative, sorted axes to reduce over an input of ``rank`` (see the module docstring)."""
    given = () if axes is None else tuple(int(a) for a in axes)
    if not given:
        return () if noop_with_empty_axes else tuple(range(rank))
    bad = [a for a in given if not -rank <= a < max(rank, 1)]
    if bad:
        raise ReduceAxesError(f"axes={given!r} has {bad!r} out of range for rank {rank}")
    normal = tuple(a % max(rank, 1) for a in given)
    if len(set(normal)) != len(normal):
        raise ReduceAxesError(f"axes={given!r} names an axis twice (rank {rank})")
    return tuple(sorted(normal))
