"""Greedy placement in a given order, compiled to machine code by numba (:func:`place_in_order`).

:func:`.greedy.best_fit` and :func:`.greedy.first_fit` are this loop: each buffer, in order, looks at
the already placed buffers whose lifetimes intersect its own, in offset order, and takes a gap between
the running top of the ones below and the next one's offset (the smallest that holds it, lowest on
ties, or with ``first`` the lowest), else goes on top of them (TFLite ``GreedyBySizeAssignment``).

Placed time neighbours are found through a bucket index built before the loop: time is cut into
about n/4 buckets; a buffer spanning fewer than :data:`SPAN` buckets is listed in each, in placement
order, the others in one list every query scans; a buffer spanning many buckets scans every placed
buffer. A pass is then O(n x neighbours) machine steps instead of numpy calls per buffer.

The neighbours must be read in offset order. Sorting them per buffer cost most of a pass where a
thousand buffers live over the whole graph (a 100k-node graph's atomic outputs): every buffer
sorted those thousand again, and each of them sorted everything placed before it. So the long
buffers are kept in offset order as they are placed, a long query merges the buffers placed since
the previous one into one offset-ordered list of everything placed, and only a short query's few
bucket neighbours are sorted, then merged with the long ones; the long buffers that live over the
whole time are read as the union of their offset intervals (the same gaps, a few entries where there
were hundreds). The order among equal offsets is left
open, as before: with positive sizes only the first of them can open a gap (:func:`gap_offset`);
an instance with a size of 0 takes the plain per-buffer sort.
"""
from __future__ import annotations

import numba
import numpy as np

SPAN = 16  # buckets beyond which a buffer counts as long (listed once, or scanning everything)


@numba.njit(cache=True, nogil=True)
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
    if size.min() > 0:
        return _place_merged(lower, upper, size, align, order, first, span, offsets, ba, bb, ptr, members, longs,
                             nlong)
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


@numba.njit(cache=True)
def _place_merged(lower, upper, size, align, order, first, span, offsets, ba, bb, ptr, members, longs, nlong):
    """:func:`place_in_order`'s loop with the neighbours merged in offset order instead of sorted per
    buffer (see the module's docstring); every size positive."""
    n = len(size)
    lo = np.empty(n, np.int64)
    up = np.empty(n, np.int64)
    off = np.empty(n, np.int64)
    end = np.empty(n, np.int64)
    stamp = np.zeros(n, np.int64)
    hit_off = np.empty(n, np.int64)
    hit_end = np.empty(n, np.int64)
    near_off = np.empty(n, np.int64)
    near_end = np.empty(n, np.int64)
    by_offset = np.empty(n, np.int64)   # positions 0..merged-1, offset order (refreshed at long queries)
    scratch = np.empty(n, np.int64)
    merged = 0
    long_sorted = np.empty(max(nlong, 1), np.int64)   # placed long positions, offset order
    placed_long = 0
    # Long buffers living over the whole time meet every buffer: a short query reads them as the union
    # of their offset intervals (disjoint, in offset order), which leaves the same gaps.
    t_first, t_last = lower.min(), upper.max()
    union_lo = np.empty(max(nlong, 1), np.int64)
    union_hi = np.empty(max(nlong, 1), np.int64)
    n_union = 0
    long_off = np.empty(max(nlong, 1), np.int64)
    long_end = np.empty(max(nlong, 1), np.int64)
    for k in range(n):
        b = order[k]
        lb, ub = lower[b], upper[b]
        is_long = bb[k] - ba[k] >= span
        h = 0
        if is_long:
            if merged < k:
                fresh = np.argsort(off[merged:k]) + merged
                i, j, t = 0, 0, 0
                while i < merged or j < len(fresh):
                    if j == len(fresh) or (i < merged and off[by_offset[i]] <= off[fresh[j]]):
                        scratch[t] = by_offset[i]
                        i += 1
                    else:
                        scratch[t] = fresh[j]
                        j += 1
                    t += 1
                by_offset, scratch = scratch, by_offset
                merged = k
            if lb == t_first and ub == t_last:   # every placed buffer is a time neighbour
                start = _gap_over(off, end, by_offset, k, size[b], align[b], first)
            else:
                for i in range(k):
                    j = by_offset[i]
                    if lo[j] < ub and lb < up[j]:
                        hit_off[h], hit_end[h] = off[j], end[j]
                        h += 1
                start = _gap_in_order(hit_off, hit_end, h, size[b], align[b], first)
        else:
            m_near = 0
            for i in range(ba[k], bb[k] + 1):
                for m in range(ptr[i], ptr[i + 1]):
                    j = members[m]
                    if j >= k:
                        break
                    if stamp[j] == k + 1:
                        continue
                    stamp[j] = k + 1
                    if lo[j] < ub and lb < up[j]:
                        near_off[m_near], near_end[m_near] = off[j], end[j]
                        m_near += 1
            srt = np.argsort(near_off[:m_near])
            # the long neighbours in offset order: the placed long buffers meeting this one in time,
            # merged with the union of the whole-time ones
            nl, t, u = 0, 0, 0
            while t < placed_long or u < n_union:
                j = -1
                if t < placed_long:
                    j = long_sorted[t]
                    if not (lo[j] < ub and lb < up[j]):
                        t += 1
                        continue
                if u < n_union and (j < 0 or union_lo[u] <= off[j]):
                    long_off[nl], long_end[nl] = union_lo[u], union_hi[u]
                    u += 1
                else:
                    long_off[nl], long_end[nl] = off[j], end[j]
                    t += 1
                nl += 1
            i, t = 0, 0
            while i < m_near or t < nl:
                if t == nl or (i < m_near and near_off[srt[i]] <= long_off[t]):
                    hit_off[h], hit_end[h] = near_off[srt[i]], near_end[srt[i]]
                    i += 1
                else:
                    hit_off[h], hit_end[h] = long_off[t], long_end[t]
                    t += 1
                h += 1
            start = _gap_in_order(hit_off, hit_end, h, size[b], align[b], first)
        offsets[b] = start
        lo[k], up[k], off[k], end[k] = lb, ub, start, start + size[b]
        if is_long and lb == t_first and ub == t_last:
            n_union = _join(union_lo, union_hi, n_union, start, start + size[b])
        elif is_long:
            t = placed_long
            while t > 0 and off[long_sorted[t - 1]] > start:
                long_sorted[t] = long_sorted[t - 1]
                t -= 1
            long_sorted[t] = k
            placed_long += 1
    return offsets


@numba.njit(cache=True)
def _join(union_lo, union_hi, count, lo, hi):
    """Add ``[lo, hi)`` to the ``count`` disjoint intervals ``union_lo``/``union_hi`` (offset order,
    touching ones joined); returns the new count."""
    p = 0
    while p < count and union_hi[p] < lo:
        p += 1
    q = p
    while q < count and union_lo[q] <= hi:
        q += 1
    if q > p:
        lo, hi = min(lo, union_lo[p]), max(hi, union_hi[q - 1])
    shift = 1 - (q - p)   # intervals p..q-1 become one
    if shift > 0:
        for i in range(count - 1, q - 1, -1):
            union_lo[i + shift], union_hi[i + shift] = union_lo[i], union_hi[i]
    elif shift < 0:
        for i in range(q, count):
            union_lo[i + shift], union_hi[i + shift] = union_lo[i], union_hi[i]
    union_lo[p], union_hi[p] = lo, hi
    return count + shift


@numba.njit(cache=True)
def _gap_over(off, end, by_offset, k, size, align, first):
    """:func:`_gap_in_order` over the first ``k`` placed buffers, ``by_offset`` their positions in
    offset order."""
    top = 0
    best, best_gap = -1, 0
    for i in range(k):
        j = by_offset[i]
        start = -(-top // align) * align
        gap = off[j] - start
        if gap >= size:
            if first:
                return start
            if best < 0 or gap < best_gap:
                best, best_gap = start, gap
        top = max(top, end[j])
    if best >= 0:
        return best
    return -(-top // align) * align


@numba.njit(cache=True)
def _gap_in_order(offs, ends, h, size, align, first):
    """:func:`gap_offset` over the first ``h`` neighbours, already in offset order."""
    top = 0
    best, best_gap = -1, 0
    for i in range(h):
        start = -(-top // align) * align
        gap = offs[i] - start
        if gap >= size:
            if first:
                return start
            if best < 0 or gap < best_gap:
                best, best_gap = start, gap
        top = max(top, ends[i])
    if best >= 0:
        return best
    return -(-top // align) * align
