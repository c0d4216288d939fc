"""The sweep behind the exact search: sections, cuts, cliques, overlaps, twins, static ranks.

Time is cut at every lifetime boundary; section ``s`` is the span between the
s-th and (s+1)-th distinct boundary, and buffer ``b`` covers sections
``[first[b], end[b])``. Everything here is computed once per instance in
O(n log n + P) time and memory (P: overlapping pairs), never O(n^2), so the
search can start on large graphs.
"""
from __future__ import annotations

import numpy as np


CLIQUE_CELLS = 2_000_000  # largest buffers x cliques matrix Sections keeps


class Sections:
    """The sweep of one instance (an :class:`~.greedy.Instance`)."""

    def __init__(self, inst):
        times = np.unique(np.concatenate([inst.lower, inst.upper]))
        self.first = np.searchsorted(times, inst.lower)  # first section of each buffer
        self.end = np.searchsorted(times, inst.upper)  # one past its last section
        self.count = max(len(times) - 1, 0)
        self.total = _running(self.count, self.first, self.end, inst.size)  # bytes live per section
        # Buffers crossing the boundary between sections s and s+1: zero splits the problem.
        self.cuts = _running(self.count, self.first, self.end - 1, np.ones(len(inst), np.int64))
        # Sections just before a lifetime end hold maximal sets of live buffers.
        self.cliques = np.unique(self.end - 1)
        # Per buffer and clique, its size if it lives there else 0: the search's stacking
        # bound indexes it instead of rebuilding it per node (kept only when small).
        self.clique_sizes = None
        if len(inst) * len(self.cliques) <= CLIQUE_CELLS:
            cover = (self.first[:, None] <= self.cliques) & (self.cliques < self.end[:, None])
            self.clique_sizes = np.where(cover, inst.size[:, None], 0)
        self.overlaps = _overlaps(inst)
        self.twins = _twins(inst)

    def peaks(self) -> np.ndarray:
        """Per buffer, the largest total live in any of its sections (MiniMalloc's "T")."""
        return np.array([int(self.total[f:e].max()) for f, e in zip(self.first.tolist(), self.end.tolist())],
                        np.int64)


def _running(count: int, starts, stops, values) -> np.ndarray:
    """Per section, the sum of ``values`` over items covering ``[start, stop)``."""
    delta = np.zeros(count + 1, np.int64)
    np.add.at(delta, starts, values)
    np.add.at(delta, stops, -values)
    return np.cumsum(delta)[:-1]


def _overlaps(inst) -> list[np.ndarray]:
    """Per buffer, the buffers whose lifetime intersects its own, by one sort.

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
    src, dst = src[by], dst[by]
    return np.split(dst, np.searchsorted(src, np.arange(1, n)))


def _twins(inst) -> list:
    """Per buffer, the other buffers with the same lifetime (None if none, or if any align > 1)."""
    twins = [None] * len(inst)
    if len(inst) and int(inst.align.max()) > 1:
        return twins  # swapping twins could break an alignment
    groups: dict = {}
    for b, key in enumerate(zip(inst.lower.tolist(), inst.upper.tolist())):
        groups.setdefault(key, []).append(b)
    for members in groups.values():
        for b in members if len(members) > 1 else ():
            twins[b] = np.array([m for m in members if m != b], np.int64)
    return twins


def ranks(inst, sections: Sections, heuristic: str) -> np.ndarray:
    """Rank of each buffer (0 first) in a MiniMalloc static order, ties by position.

    Letters, each descending: W lifetime length, A area (length x size), T the
    largest total live in the buffer's sections, Z size, L start, U end.
    """
    width = inst.upper - inst.lower
    keys = {"W": lambda: width, "A": lambda: width * inst.size, "T": sections.peaks,
            "Z": lambda: inst.size, "L": lambda: inst.lower, "U": lambda: inst.upper}
    cols = [np.arange(len(inst))] + [-keys[c]() for c in reversed(heuristic)]
    return _rank_of(np.lexsort(cols))


def ranks_within(inst, sections: Sections, sub: np.ndarray, heuristic: str, left: np.ndarray) -> np.ndarray:
    """Ranks (0 first) of the buffers ``sub`` alone, by ``heuristic`` with T taken from
    ``left`` (the bytes still unplaced per section), ties by position.

    MiniMalloc re-sorts each sub-problem that dynamic decomposition splits off
    by the totals left at that point, not the initial ones.
    """
    width = inst.upper[sub] - inst.lower[sub]
    size = inst.size[sub]
    firsts, ends = sections.first[sub].tolist(), sections.end[sub].tolist()
    keys = {"W": lambda: width, "A": lambda: width * size,
            "T": lambda: np.array([int(left[f:e].max()) for f, e in zip(firsts, ends)], np.int64),
            "Z": lambda: size, "L": lambda: inst.lower[sub], "U": lambda: inst.upper[sub]}
    cols = [sub] + [-keys[c]() for c in reversed(heuristic)]
    return _rank_of(np.lexsort(cols))


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
