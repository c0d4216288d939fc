"""Reference figures of a plan: the naive size and the lower bound.

- ``naive``: feature-map bytes with no reuse: every unit's block-rounded size summed.
- ``lower_bound``: no plan that keeps the rules can use less feature-map memory:
  the max over steps of the block-rounded sizes live at that step, where the
  dynamic-batch branches count only the heaviest one (branches are exclusive
  at run time). It ignores that our strategies keep streams apart, so on
  multi-stream graphs it may be out of reach. A unit is counted once however
  many aliases it has, and a
  continuous group is one unit over its joint lifetime, since it must be
  placed whole. Without batches or continuous inputs this is the contract's
  definition: max over steps of the summed aligned sizes of the live
  feature-map tensors, aliases once (planning-facts.md).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from zcspec.impl.compiler.memory.sizes import block_size


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
    if steps == 0:
        return 0
    by_label = defaultdict(list)
    for u in units:
        if u.zero_copy is None:
            by_label[u.batch].append(u)
    live = _live(by_label.get("", []), steps, options)
    branches = [_live(us, steps, options) for lab, us in by_label.items() if lab != ""]
    if branches:
        live = live + np.max(np.stack(branches), axis=0)
    return int(live.max())
