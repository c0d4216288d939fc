"""Offsets a buffer can take at all, from the nearly full sections it lives in.

In a section whose buffers leave ``slack`` bytes of a capacity free, the
buffers stacked below any one of them, plus the free space between them, add
up to its offset. So its offset is a subset sum of the other buffers' sizes
plus at most ``slack``. In a full section (slack 0) that pins each buffer to
few offsets; intersected over the buffer's sections it often leaves a handful.
The search skips a candidate whose min offset is not among them.

Offsets in the canonical search are sums of sizes, rounded up to alignments,
so all of them are multiples of ``unit``, the gcd of the sizes and the
alignments above 1; the sets
are Python ints used as bitsets over ``offset // unit``.
"""
from __future__ import annotations

import math

import numpy as np

# Sections with more free units than this constrain nothing worth the work.
MAX_SLACK_UNITS = 64
# Skip the precomputation when it would cost more than this many bitset shifts.
MAX_SHIFTS = 200_000


def allowed_offsets(inst, sections, capacity: int) -> tuple[int, list]:
    """``(unit, sets)``: ``sets[b]`` is a bitset of the offsets (in units) buffer b
    can take in any packing within ``capacity``, or None when unconstrained."""
    n = len(inst)
    unit = math.gcd(*inst.size.tolist(), *[a for a in inst.align.tolist() if a > 1]) if n else 1
    sets: list = [None] * n
    tight = [s for s in sections.cliques.tolist() if (capacity - int(sections.total[s])) // unit <= MAX_SLACK_UNITS]
    members = [np.flatnonzero((sections.first <= s) & (s < sections.end)) for s in tight]
    if sum(len(m) ** 2 for m in members) > MAX_SHIFTS:
        return unit, sets
    for s, mem in zip(tight, members):
        slack = (capacity - int(sections.total[s])) // unit
        sizes = (inst.size[mem] // unit).tolist()
        for i, b in enumerate(mem.tolist()):
            sums = 1
            for j, size in enumerate(sizes):
                if j != i:
                    sums |= sums << size
            spread = sums
            for k in range(1, slack + 1):
                spread |= sums << k
            sets[b] = spread if sets[b] is None else sets[b] & spread
    return unit, sets
