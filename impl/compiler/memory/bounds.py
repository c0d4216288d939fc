"""Reference figures of a plan: the naive size and the lower bound.

- ``naive``: feature-map bytes with no reuse: every unit's block-rounded size summed.
- ``lower_bound``: no plan that keeps the rules can use less feature-map memory.
  Per stream (streams never share memory), the max over steps of the
  block-rounded sizes live at that step, where each dynamic-batch branch
  counts only its heaviest branch (branches are exclusive at run time);
  streams add up. A unit is counted once however many aliases it has, and a
  continuous group is one unit over its joint lifetime, since it must be
  placed whole. With one stream and no batches this is the contract's
  definition: max over steps of the summed aligned sizes of the live
  feature-map tensors, aliases once (planning-facts.md).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from impl.compiler.memory.sizes import block_size


def naive(units, options) -> int:
    return sum(block_size(u.size, options) for u in units if u.zero_copy is None)


def _live(units, steps: int, options) -> np.ndarray:
    diff = np.zeros(steps + 1, dtype=np.int64)
    for u in units:
        size = block_size(u.size, options)
        diff[u.first] += size
        diff[u.last + 1] -= size
    return np.cumsum(diff[:-1])


def lower_bound(units, steps: int, options) -> int:
    by_stream = defaultdict(lambda: defaultdict(list))
    for u in units:
        if u.zero_copy is None:
            by_stream[u.stream][u.batch].append(u)
    total = 0
    for labels in by_stream.values():
        live = _live(labels.get("", []), steps, options)
        branches = [_live(us, steps, options) for lab, us in labels.items() if lab != ""]
        if branches:
            live = live + np.max(np.stack(branches), axis=0)
        total += int(live.max()) if steps else 0
    return total
