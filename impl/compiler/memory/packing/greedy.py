"""Greedy best-fit packing for a given order, the orders production planners use, a hill climb.

All functions work on an :class:`Instance` (numpy arrays indexed by buffer
position) and return offsets as an int64 array in the same positions.
"""
from __future__ import annotations

import random
import time

import attrs
import numpy as np


@attrs.frozen(eq=False)
class Instance:
    """Buffers as arrays: ``lower``, ``upper`` (half-open), ``size``, ``align``; all int64."""

    lower: np.ndarray
    upper: np.ndarray
    size: np.ndarray
    align: np.ndarray

    @classmethod
    def of(cls, buffers) -> "Instance":
        def col(name):
            return np.array([getattr(b, name) for b in buffers], dtype=np.int64)
        return cls(col("lower"), col("upper"), col("size"), col("align"))

    def __len__(self) -> int:
        return len(self.size)

    def arena(self, offsets: np.ndarray) -> int:
        return int((offsets + self.size).max()) if len(self) else 0


def _ceil(x, a):
    return -(-x // a) * a


def order_by_size(inst: Instance) -> np.ndarray:
    """Size descending, ties by start then position (TFLite GreedyBySize over
    time-ordered records; with first fit it reproduces the greedy figures of
    the MiniMalloc instances' README exactly)."""
    return np.lexsort((np.arange(len(inst)), inst.lower, -inst.size))


def orders(inst: Instance) -> list[tuple[str, np.ndarray]]:
    """The extra orders of the improvement step (XLA tries several and keeps the best)."""
    n, length = len(inst), inst.upper - inst.lower
    idx = np.arange(n)
    return [
        ("greedy-length", np.lexsort((idx, -inst.size, -length))),
        ("greedy-area", np.lexsort((idx, -inst.size, -(inst.size * length)))),
        ("greedy-start", np.lexsort((idx, -inst.size, inst.lower))),
    ]


def first_fit(inst: Instance, order) -> np.ndarray:
    """As :func:`best_fit`, but each buffer takes the lowest gap that holds it
    (TFLite-Micro's GreedyMemoryPlanner)."""
    return best_fit(inst, order, first=True)


def best_fit(inst: Instance, order, *, first: bool = False) -> np.ndarray:
    """Place buffers in ``order``: each in the smallest gap that fits, else on top.

    For each buffer, the already placed buffers that overlap it in time are
    scanned in offset order (TFLite ``GreedyBySizeAssignment``); a gap between
    the running top of the ones below and the next one's offset is a
    candidate when it holds the (aligned) buffer; the smallest wins, the
    lowest on ties. Without a fitting gap the buffer goes on top of them.
    """
    n = len(inst)
    offsets = np.zeros(n, dtype=np.int64)
    lo, up = np.empty(n, np.int64), np.empty(n, np.int64)
    off, end = np.empty(n, np.int64), np.empty(n, np.int64)
    index = _TimeIndex(inst) if n > INDEX_SIZE else None
    for k, b in enumerate(order):
        size, align = int(inst.size[b]), int(inst.align[b])
        lower, upper = int(inst.lower[b]), int(inst.upper[b])
        near = index.near(lower, upper) if index else None
        if near is None:
            hit = np.flatnonzero((lo[:k] < upper) & (lower < up[:k]))
        else:
            hit = near[(lo[near] < upper) & (lower < up[near])]
        offsets[b] = start = _place(off[hit], end[hit], size, align, first)
        lo[k], up[k], off[k], end[k] = lower, upper, start, start + size
        if index:
            index.add(k, lower, upper)
    return offsets


# Above this many buffers, best_fit finds time-overlapping placed buffers through
# a bucket index instead of scanning all of them (the scan makes a pass O(n^2)).
INDEX_SIZE = 4096


class _TimeIndex:
    """Placed buffers by time bucket. A buffer spanning many buckets is kept in
    a short list scanned by every query; a query spanning many buckets returns
    None (the caller scans everything)."""

    SPAN = 16  # buckets beyond which a buffer or a query counts as long

    def __init__(self, inst):
        self.t0 = int(inst.lower.min())
        count = max(1, len(inst) // 4)
        self.width = max(1, -(-(int(inst.upper.max()) - self.t0) // count))
        self.buckets: list[list[int]] = [[] for _ in range(count + 1)]
        self.long: list[int] = []

    def _span(self, lower: int, upper: int) -> tuple[int, int]:
        return (lower - self.t0) // self.width, (upper - 1 - self.t0) // self.width

    def add(self, k: int, lower: int, upper: int) -> None:
        a, b = self._span(lower, upper)
        if b - a >= self.SPAN:
            self.long.append(k)
            return
        for i in range(a, b + 1):
            self.buckets[i].append(k)

    def near(self, lower: int, upper: int):
        """Placed positions that may overlap ``[lower, upper)`` (a superset), or None."""
        a, b = self._span(lower, upper)
        if b - a >= self.SPAN:
            return None
        found = list(self.long)
        for i in range(a, b + 1):
            found += self.buckets[i]
        # Duplicates (a buffer in several buckets) are harmless to the caller's filter and to
        # the gap search, and skipping np.unique here halves a 100k-buffer pass.
        return np.array(found, np.int64)


def _place(offs: np.ndarray, ends: np.ndarray, size: int, align: int, first: bool) -> int:
    if not len(offs):
        return 0
    srt = np.argsort(offs, kind="stable")
    offs, ends = offs[srt], ends[srt]
    tops = np.maximum.accumulate(ends)
    starts = np.empty_like(offs)
    starts[0] = 0
    starts[1:] = tops[:-1]
    if align > 1:
        starts = _ceil(starts, align)
    gaps = offs - starts
    fits = np.flatnonzero(gaps >= size)
    if len(fits):
        return int(starts[fits[0] if first else fits[np.argmin(gaps[fits])]])
    return int(_ceil(int(tops[-1]), align))


def climb(inst: Instance, order, target: int, deadline: float | None,
          evaluations: int | None = None) -> np.ndarray:
    """Hill climb over the order (TVM USMP style); stops as soon as arena <= target.

    Moves one buffer to another place in the order and keeps the change when
    the best-fit arena does not grow (sideways moves cross plateaus). Seeded
    and bounded by ``evaluations`` (default ``min(100, 2n, 2e9 / n^2)``: one
    evaluation costs O(n^2) element steps) and ``deadline``:
    deterministic when ``deadline`` is None. Returns the best offsets seen.
    """
    n = len(inst)
    rng = random.Random(0)
    budget = evaluations if evaluations is not None else int(min(100, 2 * n, 2e9 // max(n * n, 1)))
    order = list(order)
    best = best_fit(inst, order)
    arena = inst.arena(best)
    for _ in range(budget if n > 1 else 0):
        if arena <= target or (deadline is not None and time.monotonic() > deadline):
            break
        i, j = rng.randrange(n), rng.randrange(n)
        trial = order[:]
        trial.insert(j, trial.pop(i))
        cand = best_fit(inst, trial)
        if inst.arena(cand) <= arena:
            order, arena, best = trial, inst.arena(cand), cand
    return best
