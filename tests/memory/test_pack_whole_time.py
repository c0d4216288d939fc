"""The compiled greedy pass (packing/fit.py) with many buffers living over the whole time, as a large
graph's atomic outputs and no-reuse tensors do: a short buffer reads those as the union of their offset
intervals, a long one merges what was placed since the last long one. Both must place every buffer where
the plain scan over all placed time neighbours does (test_pack_props._plain_fit)."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.plain_fit import plain_fit
from zcspec.impl.compiler.memory.packing import Buffer, fit, greedy


def _instance(seed: int, count: int, whole_share: float, steps: int = 60):
    rng = random.Random(seed)
    buffers = []
    for i in range(count):
        if rng.random() < whole_share:
            lower, upper = 0, steps
        else:
            lower = rng.randrange(steps - 1)
            upper = rng.randint(lower + 1, min(steps, lower + rng.choice((1, 2, 4, 30))))
        buffers.append(Buffer(f"b{i}", lower, upper, rng.randint(1, 40), rng.choice((1, 2, 4, 8))))
    return buffers


def _check(buffers, first: bool, span: int, order_name: str) -> None:
    inst = greedy.Instance.of(buffers)
    order = dict([("size", greedy.order_by_size(inst))] + greedy.orders(inst))[order_name]
    placed = fit.place_in_order(inst.lower, inst.upper, inst.size, inst.align, order, first, span)
    assert placed.tolist() == plain_fit(buffers, order.tolist(), first)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("order_name", ["size", "greedy-length", "greedy-start"])
def test_whole_time_buffers_leave_the_same_gaps(seed, order_name):
    _check(_instance(seed, 300, 0.2), bool(seed % 2), 4, order_name)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(5, 80), st.floats(0.05, 0.6), st.booleans(), st.integers(1, 6))
def test_any_share_of_whole_time_buffers(seed, count, share, first, span):
    _check(_instance(seed, count, share, steps=30), first, span, "size")
