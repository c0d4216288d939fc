"""The sweep behind the exact search: sections, cuts, cliques, overlaps, twins, static ranks.

Time is cut at every lifetime boundary; section ``s`` is the span between the
s-th and (s+1)-th distinct boundary, and buffer ``b`` covers sections
``[first[b], end[b])``. Everything here is computed once per instance in
O(n log n + P) time and memory (P: overlapping pairs), never O(n^2), so the
search can start on large graphs.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.compiler.memory.packing.dfs import heuristic_ranks, letter_codes


class Sections:
    """The sweep of one instance (an :class:`~.greedy.Instance`)."""

    def __init__(self, inst):
        # first section of each buffer, one past its last section, bytes live per section
        self.first, self.end, self.total = cut(inst)
        self.count = len(self.total)
        # Buffers crossing the boundary between sections s and s+1: zero splits the problem.
        self.cuts = _running(self.count, self.first, self.end - 1, np.ones(len(inst), np.int64))
        # Sections just before a lifetime end hold maximal sets of live buffers.
        self.cliques = np.unique(self.end - 1)
        # Per buffer, the buffers whose lifetime intersects its own, and those with the same
        # lifetime (its twins), in CSR form: ov_idx[ov_ptr[b]:ov_ptr[b + 1]].
        self.ov_ptr, self.ov_idx = _overlaps(inst)
        self.tw_ptr, self.tw_idx = _twins(inst)

    def overlaps(self, b: int) -> np.ndarray:
        return self.ov_idx[self.ov_ptr[b]:self.ov_ptr[b + 1]]

    def twins(self, b: int) -> np.ndarray:
        return self.tw_idx[self.tw_ptr[b]:self.tw_ptr[b + 1]]


def cut(inst) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each buffer's first section and one past its last, and the bytes live per section: the part of
    the sweep that costs O(n log n) whatever the overlaps (the static orders need no more)."""
    times = np.unique(np.concatenate([inst.lower, inst.upper]))
    first, end = np.searchsorted(times, inst.lower), np.searchsorted(times, inst.upper)
    return first, end, _running(max(len(times) - 1, 0), first, end, inst.size)


def static_order(inst, heuristic: str) -> np.ndarray:
    """Buffer positions in the order of a MiniMalloc static rank (:func:`ranks`), from :func:`cut` alone."""
    first, end, total = cut(inst)
    rank = heuristic_ranks(inst.lower, inst.upper, inst.size, first, end, np.arange(len(inst), dtype=np.int64),
                           letter_codes(heuristic), total)
    return np.argsort(rank, kind="stable")


def _running(count: int, starts, stops, values) -> np.ndarray:
    """Per section, the sum of ``values`` over items covering ``[start, stop)``."""
    delta = np.zeros(count + 1, np.int64)
    np.add.at(delta, starts, values)
    np.add.at(delta, stops, -values)
    return np.cumsum(delta)[:-1]


def _overlaps(inst) -> tuple[np.ndarray, np.ndarray]:
    """Per buffer, the buffers whose lifetime intersects its own, by one sort (CSR: pointers, indices).

    Sorted by start, the buffers that start in ``[lower_b, upper_b)`` after b
    are exactly the later ones overlapping b; each pair is recorded both ways.
    """
    n = len(inst)
    order = np.lexsort((np.arange(n), inst.lower))
    lows = inst.lower[order]
    stop = np.searchsorted(lows, inst.upper[order], side="left")
    counts = np.maximum(stop - np.arange(n) - 1, 0)
    left = np.repeat(np.arange(n), counts)
    right = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts) + left + 1
    a, b = order[left], order[right]
    src, dst = np.concatenate([a, b]), np.concatenate([b, a])
    by = np.argsort(src, kind="stable")
    return np.searchsorted(src[by], np.arange(n + 1)), dst[by]


def _twins(inst) -> tuple[np.ndarray, np.ndarray]:
    """Per buffer, the other buffers with the same lifetime (CSR; none at all if any align > 1:
    swapping twins could break an alignment)."""
    n = len(inst)
    if not n or int(inst.align.max()) > 1:
        return np.zeros(n + 1, np.int64), np.zeros(0, np.int64)
    groups: dict = {}
    for b, key in enumerate(zip(inst.lower.tolist(), inst.upper.tolist())):
        groups.setdefault(key, []).append(b)
    ptr, idx = [0], []
    for b, key in enumerate(zip(inst.lower.tolist(), inst.upper.tolist())):
        idx.extend(m for m in groups[key] if m != b)
        ptr.append(len(idx))
    return np.array(ptr, np.int64), np.array(idx, np.int64)


def ranks(inst, sections: Sections, heuristic: str) -> np.ndarray:
    """Rank of each buffer (0 first) in a MiniMalloc static order, ties by position.

    Letters, each descending: W lifetime length, A area (length x size), T the
    largest total live in the buffer's sections, Z size, L start, U end.
    """
    return ranks_within(inst, sections, np.arange(len(inst)), heuristic, sections.total)


def ranks_within(inst, sections: Sections, sub: np.ndarray, heuristic: str, left: np.ndarray) -> np.ndarray:
    """Ranks (0 first) of the buffers ``sub`` alone, by ``heuristic`` with T taken from
    ``left`` (the bytes still unplaced per section), ties by position.

    MiniMalloc re-sorts each sub-problem that dynamic decomposition splits off
    by the totals left at that point, not the initial ones.
    """
    return heuristic_ranks(inst.lower, inst.upper, inst.size, sections.first, sections.end,
                           np.asarray(sub, np.int64), letter_codes(heuristic), left)


def weighted_ranks(sections: Sections, weights: np.ndarray, static: np.ndarray) -> np.ndarray:
    """Rank buffers by the summed weight of the sections they cover, ties by ``static``."""
    if not weights.any():
        return static
    prefix = np.concatenate([[0.0], np.cumsum(weights)])
    score = prefix[sections.end] - prefix[sections.first]
    return _rank_of(np.lexsort((static, -score)))


def _rank_of(order: np.ndarray) -> np.ndarray:
    ranks = np.empty(len(order), np.int64)
    ranks[order] = np.arange(len(order))
    return ranks
