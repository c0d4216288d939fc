"""Reference figures of a plan: the naive size and the lower bound.

- ``naive``: feature-map bytes with no reuse: every unit's block-rounded size summed.
- ``lower_bound``: no plan that keeps the rules can use less feature-map memory:
  the max over steps of the block-rounded sizes live at that step, where the
  dynamic-batch branches count only the heaviest one (branches are exclusive
  at run time). It ignores the streams: a unit counts until the last step its
  tensors reach, though on several streams it may be held longer (until the
  other streams are known to be done with it), so there it may be out of
  reach. A unit is counted once however
  many aliases it has, and a
  continuous group is one unit over its joint lifetime, since it must be
  placed whole. Without batches or continuous inputs this is the contract's
  definition: max over steps of the summed aligned sizes of the live
  feature-map tensors, aliases once.

This module is the rule's one home: the planner computes both figures from its
units (:func:`unit_intervals`) and the model-file loader recomputes them from a
loaded plan's tensors (:func:`plan_intervals`) with the same functions (the
latter is a lower bound of the former, see there).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable, NamedTuple

import numpy as np

from zcspec.impl.compiler.memory.sizes import block_size


class Interval(NamedTuple):
    """What the bound sees of one piece of feature-map memory: the steps it is live, inclusive, its
    block-rounded size, and its dynamic-batch branch label (None or "" outside any branch)."""

    first: int
    last: int
    size: int
    batch: str | None


def naive(intervals: Iterable[Interval]) -> int:
    return sum(i.size for i in intervals)


def _live(intervals: list[Interval], steps: int) -> np.ndarray:
    diff = np.zeros(steps + 1, dtype=np.int64)
    for i in intervals:
        diff[i.first] += i.size
        diff[i.last + 1] -= i.size
    return np.cumsum(diff[:-1])


def lower_bound(intervals: Iterable[Interval], steps: int) -> int:
    """Max over the ``steps`` steps of the live bytes, the heaviest batch branch counted alone."""
    if steps == 0:
        return 0
    by_label: dict[str, list[Interval]] = defaultdict(list)
    for i in intervals:
        by_label[i.batch or ""].append(i)
    live = _live(by_label.pop("", []), steps)
    if by_label:
        live = live + np.max(np.stack([_live(us, steps) for us in by_label.values()]), axis=0)
    return int(live.max())


def unit_intervals(units, options) -> list[Interval]:
    """The planner's view: each feature-map unit (a root, its aliases, a whole continuous group) once, live
    from its first step to the last its tensors reach (``Unit.reach``) when it may be shared: past that a
    unit is only held for the order of the streams, and a block of another stream may take its memory
    there (``ge_level2._follows``); on one stream the two are equal."""
    return [Interval(u.first, min(u.reach, u.last) if u.reusable else u.last,
                     block_size(u.size, options), u.batch) for u in units if u.zero_copy is None]


def plan_intervals(tensors) -> list[Interval]:
    """A loaded plan's view: each feature-map tensor that is not an alias, over its own lifetime.

    The bound over these is never above the bound over the planner's units: a unit may be reserved
    longer than its tensors need (a continuous group whole over its joint lifetime, a no-reuse or
    cross-stream block for the whole graph). The loader checks the reported bound lies between this
    and the feature map's size, as the spec's LAYOUT-LOWER-BOUND does.
    """
    return [Interval(t.first, t.last, t.aligned_size, t.batch) for t in tensors
            if t.region == "feature_map" and t.alias_of is None]
