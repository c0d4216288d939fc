"""The sweep behind the exact search, checked against direct definitions."""
from __future__ import annotations

import numpy as np
from hypothesis import given

from zcspec.checks.strategies.buffers import buffer_lists
from zcspec.impl.compiler.memory.packing import Buffer, greedy
from zcspec.impl.compiler.memory.packing.sweep import Sections, ranks, ranks_within, weighted_ranks


@given(buffer_lists(min_buffers=1, max_buffers=14))
def test_sections_overlaps_cuts_and_totals(buffers):
    inst = greedy.Instance.of(buffers)
    sec = Sections(inst)
    n = len(buffers)
    for b in range(n):
        direct = [c for c in range(n) if c != b and inst.lower[c] < inst.upper[b] and inst.lower[b] < inst.upper[c]]
        assert sorted(sec.overlaps(b).tolist()) == direct
    covers = [(sec.first <= s) & (s < sec.end) for s in range(sec.count)]
    for s in range(sec.count):
        assert sec.total[s] == int(inst.size[covers[s]].sum())
    for s in range(sec.count - 1):
        assert sec.cuts[s] == int((covers[s] & covers[s + 1]).sum())
    # Every section's buffers are a subset of some clique section's.
    for s in range(sec.count):
        assert any((covers[s] <= covers[c]).all() for c in sec.cliques)


def test_ranks_follow_the_heuristic_letters():
    buffers = [Buffer("short-big", 0, 1, 100), Buffer("long-small", 0, 10, 5), Buffer("long-big", 0, 10, 50)]
    inst = greedy.Instance.of(buffers)
    sec = Sections(inst)
    assert ranks(inst, sec, "WAT").tolist() == [2, 1, 0]  # longest first, then area
    assert ranks(inst, sec, "Z").tolist() == [0, 2, 1]  # largest first
    weights = np.zeros(sec.count)
    weights[-1] = 1.0  # failures late in time: the long buffers first, ties by the static rank
    assert weighted_ranks(sec, weights, ranks(inst, sec, "Z")).tolist() == [2, 1, 0]


@given(buffer_lists(min_buffers=1, max_buffers=14))
def test_ranks_within_a_subset_match_ranks_with_the_totals_left(buffers):
    # With nothing placed the totals left are the initial ones: the subset keeps its relative order.
    inst = greedy.Instance.of(buffers)
    sec = Sections(inst)
    sub = np.arange(len(buffers))[::2]
    for h in ("WAT", "TAW", "TWA", "Z"):
        full = ranks(inst, sec, h)[sub]
        assert ranks_within(inst, sec, sub, h, sec.total).tolist() == np.argsort(np.argsort(full)).tolist()


def test_ranks_within_use_the_totals_left():
    buffers = [Buffer("early", 0, 1, 10), Buffer("late", 1, 2, 20), Buffer("crowd", 0, 1, 90)]
    inst = greedy.Instance.of(buffers)
    sec = Sections(inst)
    sub = np.array([0, 1])
    assert ranks_within(inst, sec, sub, "T", sec.total).tolist() == [0, 1]  # "early" shares 100 bytes
    left = sec.total.copy()
    left[0] -= 90  # "crowd" placed: the early section now holds less than the late one
    assert ranks_within(inst, sec, sub, "T", left).tolist() == [1, 0]
