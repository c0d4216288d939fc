"""Greedy placement in a given order, compiled to machine code by numba (:func:`place_in_order`).

:func:`.greedy.best_fit` and :func:`.greedy.first_fit` are this loop: each buffer, in order, looks at
the already placed buffers whose lifetimes intersect its own, in offset order, and takes a gap between
the running top of the ones below and the next one's offset (the smallest that holds it, lowest on
ties, or with ``first`` the lowest), else goes on top of them (TFLite ``GreedyBySizeAssignment``).

Placed time neighbours are found through a bucket index built before the loop: time is cut into
about n/4 buckets; a buffer spanning fewer than :data:`SPAN` buckets is listed in each, in placement
order, the others in one list every query scans; a buffer spanning many buckets scans every placed
buffer. A pass is then O(n x neighbours) machine steps instead of numpy calls per buffer.
"""
from __future__ import annotations

import numba
import numpy as np

SPAN = 16  # buckets beyond which a buffer counts as long (listed once, or scanning everything)


@numba.njit(cache=True)
def place_in_order(lower, upper, size, align, order, first, span=SPAN):
    """Offsets (int64, by buffer position) of the greedy pass over ``order`` (positions); ``span``: buckets
    from which a buffer counts as long (the result does not depend on it, only the time does)."""
    n = len(size)
    offsets = np.zeros(n, np.int64)
    if n == 0:
        return offsets
    t0 = lower.min()
    count = max(1, n // 4)
    width = max(1, -(-(upper.max() - t0) // count))
    # Per position k in the order: the bucket span of the buffer placed k-th.
    ba = np.empty(n, np.int64)
    bb = np.empty(n, np.int64)
    fill = np.zeros(count + 2, np.int64)
    for k in range(n):
        b = order[k]
        ba[k] = (lower[b] - t0) // width
        bb[k] = (upper[b] - 1 - t0) // width
        if bb[k] - ba[k] < span:
            for i in range(ba[k], bb[k] + 1):
                fill[i + 1] += 1
    ptr = np.cumsum(fill)
    members = np.empty(ptr[-1], np.int64)
    cursor = ptr[:-1].copy()
    longs = np.empty(n, np.int64)
    nlong = 0
    for k in range(n):
        if bb[k] - ba[k] < span:
            for i in range(ba[k], bb[k] + 1):
                members[cursor[i]] = k
                cursor[i] += 1
        else:
            longs[nlong] = k
            nlong += 1
    # The placed buffers by position in the order: lifetime, offset, end.
    lo = np.empty(n, np.int64)
    up = np.empty(n, np.int64)
    off = np.empty(n, np.int64)
    end = np.empty(n, np.int64)
    stamp = np.zeros(n, np.int64)
    hit_off = np.empty(n, np.int64)
    hit_end = np.empty(n, np.int64)
    for k in range(n):
        b = order[k]
        lb, ub = lower[b], upper[b]
        h = 0
        if bb[k] - ba[k] >= span:
            for j in range(k):
                if lo[j] < ub and lb < up[j]:
                    hit_off[h], hit_end[h] = off[j], end[j]
                    h += 1
        else:
            for t in range(nlong):
                j = longs[t]
                if j >= k:
                    break
                if lo[j] < ub and lb < up[j]:
                    hit_off[h], hit_end[h] = off[j], end[j]
                    h += 1
            for i in range(ba[k], bb[k] + 1):
                for m in range(ptr[i], ptr[i + 1]):
                    j = members[m]
                    if j >= k:
                        break
                    if stamp[j] == k + 1:
                        continue
                    stamp[j] = k + 1
                    if lo[j] < ub and lb < up[j]:
                        hit_off[h], hit_end[h] = off[j], end[j]
                        h += 1
        start = gap_offset(hit_off[:h], hit_end[:h], size[b], align[b], first)
        offsets[b] = start
        lo[k], up[k], off[k], end[k] = lb, ub, start, start + size[b]
    return offsets


@numba.njit(cache=True)
def gap_offset(offs, ends, size, align, first):
    """The offset a buffer of ``size`` takes among placed neighbours at ``offs`` (ending at ``ends``)."""
    if len(offs) == 0:
        return 0
    srt = np.argsort(offs)  # ties in offset need no order: only the first of them can open a gap
    top = 0
    best, best_gap = -1, 0
    for i in range(len(srt)):
        o = offs[srt[i]]
        start = -(-top // align) * align
        gap = o - start
        if gap >= size:
            if first:
                return start
            if best < 0 or gap < best_gap:
                best, best_gap = start, gap
        top = max(top, ends[srt[i]])
    if best >= 0:
        return best
    return -(-top // align) * align
