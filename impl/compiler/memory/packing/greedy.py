"""Greedy best-fit packing for a given order, the orders production planners use, a hill climb.

All functions work on an :class:`Instance` (numpy arrays indexed by buffer
position) and return offsets as an int64 array in the same positions.
"""
from __future__ import annotations

import random
import time

import attrs
import numpy as np

from zcspec.impl.compiler.memory.packing.fit import place_in_order
from zcspec.impl.compiler.memory.packing.sweep import cut, static_order


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
        # MiniMalloc's static "TWA" (the most bytes live around it, then longest, then largest area): on
        # traces of real planners it keeps the long-lived buffers of the fullest steps low (IOPDDL Y_1 at
        # its max-live bound in one pass, where every order above stays 0.35% or more over it).
        ("greedy-TWA", static_order(inst, "TWA")),
        ("greedy-peak", peak_order(inst)),
    ]


def fullest_group(inst: Instance) -> np.ndarray:
    """The buffers live in the fullest section (the first of the fullest), in position order."""
    if len(inst) == 0:
        return np.arange(0, dtype=np.int64)
    first, end, total = cut(inst)
    s = int(np.argmax(total))
    return np.flatnonzero((first <= s) & (end > s)).astype(np.int64)


def peak_order(inst: Instance) -> np.ndarray:
    """The buffers live in the fullest section first (:func:`fullest_group`): those that live to the
    instance's last step, by start, then the others by start (latest end first on ties); then the rest
    by size descending (ties by start, then position).

    Buffers live at one instant all overlap in time, so best fit stacks the first group from offset 0
    with no gap: the fullest step is packed at exactly its bytes, the max-live bound. Stacked by start,
    the part of that stack live at any earlier step is a prefix from 0, so the free space above it
    then is one interval, the others fit into. After the fullest step a buffer that lives to the end
    is live at every step, so it goes to the bottom, out of the way: the others of the group, by start,
    are on training traces stored activations, freed last-in first-out, so the part of them still live
    at a later step is again nearly a prefix. On IOPDDL S_1 (28,526 buffers, one fullest step of 2,576
    buffers, none living to the end) one pass in this order meets the max-live bound, where every order
    above stays 0.1% or more over it and the climb from the best of them 0.1%; on SOMAS PanGu 2.6B (547
    buffers at the fullest step, 198 of them living to the end) one pass is 0.76% over the bound
    and the squeaky wheel, keeping the group in front (:func:`squeaky`'s ``keep``), meets it in two
    (stacked by start alone, the group left PanGu 13.8% over its bound after one pass).
    """
    group = fullest_group(inst)
    n = len(inst)
    others = np.ones(n, bool)
    others[group] = False
    rest = np.flatnonzero(others).astype(np.int64)
    if n:
        group = group[np.lexsort((group, -inst.upper[group], inst.lower[group],
                                  inst.upper[group] < inst.upper.max()))]
    return np.concatenate([group, rest[np.lexsort((rest, inst.lower[rest], -inst.size[rest]))]]).astype(np.int64)


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
    The loop runs compiled (:func:`.fit.place_in_order`).
    """
    return place_in_order(inst.lower, inst.upper, inst.size, inst.align, np.asarray(order, np.int64), bool(first))


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


def squeaky(inst: Instance, order, target: int, deadline: float, keep: int = 0) -> np.ndarray:
    """Squeaky-wheel improvement of a best-fit order until ``deadline``: the buffers that end above
    ``target`` move to the front of the order (both parts keep their order) and best fit runs again;
    stops at ``target``. Returns the best offsets seen. On large traces the offenders are long-lived
    buffers placed late, on top of everything (IOPDDL S_1: 1.0026 -> about 1.001 of its bound).
    The first ``keep`` buffers of ``order`` stay first, as they are (:func:`peak_order`'s stack of the
    fullest step, which packs that step at its bytes): the offenders move to the front of the others."""
    order = np.asarray(order, np.int64)
    head, order = order[:keep], order[keep:]
    best, arena = None, 0
    while True:   # one best-fit pass per order (a pass costs seconds on large traces)
        offsets = best_fit(inst, np.concatenate([head, order]))
        if best is None or inst.arena(offsets) < arena:
            best, arena = offsets, inst.arena(offsets)
        if arena <= target or time.monotonic() >= deadline:
            return best
        late = (offsets + inst.size)[order] > target
        order = np.concatenate([order[late], order[~late]])
