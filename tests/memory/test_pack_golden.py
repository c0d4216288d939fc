"""Golden records (TFLite's GreedyBySizeAssignment tests; Pisarchyk & Lee 2020, arXiv 2001.03288): greedy by size, offsets and arenas exactly as published.

The records use inclusive lifetimes (first, last); buffers here are half-open,
so upper = last + 1.
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from zcspec.checks.packing_check import validate
from zcspec.impl.compiler.memory.packing import Buffer, Packing, fit, greedy, lower_bound, pack

COMPLEX = [(32, 0, 1), (32, 1, 4), (8, 2, 5), (16, 3, 5), (8, 4, 5), (64, 5, 7), (8, 6, 8), (8, 7, 8), (16, 8, 9)]
CHAIN = [(16, 0, 1), (8, 1, 2), (64, 2, 3), (32, 3, 4), (8, 4, 5)]
PISARCHYK_LEE = [(0, 1, 32), (1, 4, 28), (2, 5, 36), (3, 5, 16), (4, 5, 8), (5, 7, 64), (6, 8, 10), (7, 8, 40)]


def records(rows):
    return [Buffer(f"t{i}", first, last + 1, size) for i, (size, first, last) in enumerate(rows)]


def greedy_by_size(buffers):
    inst = greedy.Instance.of(buffers)
    offsets = greedy.best_fit(inst, greedy.order_by_size(inst))
    return offsets.tolist(), inst.arena(offsets)


@pytest.mark.parametrize("rows, offsets, arena", [
    (COMPLEX, [0, 32, 80, 64, 88, 0, 64, 72, 0], 96),
    (CHAIN, [0, 64, 0, 64, 0], 96),
])
def test_tflite_greedy_by_size_records(rows, offsets, arena):
    buffers = records(rows)
    assert greedy_by_size(buffers) == (offsets, arena)
    assert lower_bound(buffers) == arena
    result = pack(buffers)
    assert (result.arena, result.optimal, result.method) == (arena, True, "greedy-size")
    assert [result.offsets[b.id] for b in buffers] == offsets


def test_pisarchyk_lee_running_example():
    buffers = records([(size, first, last) for first, last, size in PISARCHYK_LEE])
    assert sum(b.size for b in buffers) == 234  # naive: no reuse
    assert lower_bound(buffers) == 124
    assert greedy_by_size(buffers)[1] == 124
    assert pack(buffers).optimal


def test_lower_bound_half_open_ends_before_starts():
    # One ends at step 3 where the other starts: never live together.
    assert lower_bound([Buffer("a", 0, 3, 10), Buffer("b", 3, 5, 7)]) == 10
    assert lower_bound([Buffer("a", 0, 4, 10), Buffer("b", 3, 5, 7)]) == 17
    assert lower_bound([]) == 0


def test_gap_rules_first_fit_lowest_best_fit_smallest():
    # Placed neighbours at [16,24) and [32,36): gaps of 16 at 0 and 8 at 24.
    offs, ends = np.array([16, 32]), np.array([24, 36])
    assert fit.gap_offset(offs, ends, 8, 1, True) == 0  # first fit: lowest gap
    assert fit.gap_offset(offs, ends, 8, 1, False) == 24  # best fit: smallest gap
    assert fit.gap_offset(offs, ends, 17, 1, False) == 36  # no gap holds it: on top
    assert fit.gap_offset(offs, ends, 8, 16, False) == 0  # aligned to 16, 24 -> 32 leaves no room


def test_squeaky_wheel_moves_the_buffers_above_the_target_first():
    """Greedy by size leaves this instance 2 bytes above its max-live bound (18); moving the buffers that
    end above it to the front of the order reaches it. The loop stops at the target and keeps the best."""
    specs = [("b0", 3, 6, 2), ("b1", 2, 3, 8), ("b2", 4, 7, 4), ("b3", 1, 2, 5), ("b4", 0, 2, 6), ("b5", 1, 4, 7)]
    buffers = [Buffer(*s) for s in specs]
    inst = greedy.Instance.of(buffers)
    order = greedy.order_by_size(inst)
    assert lower_bound(buffers) == 18 and inst.arena(greedy.best_fit(inst, order)) == 20
    offsets = greedy.squeaky(inst, order, 18, time.monotonic() + 5)
    assert inst.arena(offsets) == 18
    assert validate(buffers, Packing.placed(buffers, offsets, lower_bound=18, method="squeaky")) == ()
