"""The packer's "greedy-peak" order (packing/greedy.py peak_order): the buffers live at the fullest step
first (those living to the last step at the bottom, then the others, each part by start), then the others
by size. Best fit stacks the first group from offset 0 with no gap, so the fullest step costs exactly the
max-live bound; it is what meets the bound on IOPDDL S_1 and, with the squeaky wheel keeping that stack
first, on SOMAS PanGu 2.6B (docs/packing.md)."""
from __future__ import annotations

import time

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zcspec.impl.compiler.memory.packing import Buffer, greedy, pack
from zcspec.impl.compiler.memory.packing.bound import lower_bound
from zcspec.impl.compiler.memory.packing.sweep import cut

# Four buffers, max-live 9 (steps 1-2: 5 + 4; step 5: 4 + 5). Every other order best-fits them into 13: the
# 4-byte buffer of [0, 4) and the one of [3, 6) go low, so the 5-byte ones of [1, 3) and [5, 6) stack on
# different sides. Stacked by start at the fullest step, [0, 4) lies below [1, 3), and the later ones fit.
FOUR = [Buffer("a", 1, 3, 5), Buffer("b", 0, 4, 4), Buffer("c", 3, 6, 4), Buffer("d", 5, 6, 5)]


def test_the_fullest_step_first_meets_the_bound_where_no_other_order_does():
    inst = greedy.Instance.of(FOUR)
    assert lower_bound(FOUR) == 9
    others = {name: inst.arena(greedy.best_fit(inst, order))
              for name, order in [("greedy-size", greedy.order_by_size(inst))] + greedy.orders(inst)}
    peak = others.pop("greedy-peak")
    assert peak == 9
    assert min(others.values()) == 13, others


def test_pack_tries_it_beyond_the_size_of_the_other_orders(monkeypatch):
    # Above MAX_ORDERS_SIZE buffers only the large-trace orders run (a pass costs seconds there); the
    # peak order must be one of them (S_1 has 28,526 buffers).
    from zcspec.impl.compiler.memory.packing import packer
    monkeypatch.setattr(packer, "MAX_ORDERS_SIZE", 2)
    result = pack(FOUR)
    assert (result.arena, result.method, result.optimal) == (9, "greedy-peak", True)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(1, 6), st.integers(1, 20)), min_size=1, max_size=30))
def test_the_fullest_step_is_stacked_from_zero_without_a_gap(rows):
    buffers = [Buffer(f"b{i}", lo, lo + n, size) for i, (lo, n, size) in enumerate(rows)]
    inst = greedy.Instance.of(buffers)
    order = greedy.peak_order(inst)
    assert sorted(order.tolist()) == list(range(len(buffers)))
    offsets = greedy.best_fit(inst, order)
    first, end, total = cut(inst)
    s = int(np.argmax(total))
    live = np.flatnonzero((first <= s) & (end > s))
    spans = sorted((int(offsets[i]), int(offsets[i] + inst.size[i])) for i in live)
    assert spans[0][0] == 0 and spans[-1][1] == total[s]
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:])), spans
    # ... the buffers that live to the last step at the bottom, then the others, each part by start
    stack = sorted(live, key=lambda i: offsets[i])
    to_end = [bool(inst.upper[i] == inst.upper.max()) for i in stack]
    assert to_end == sorted(to_end, reverse=True), to_end
    for part in (True, False):
        starts = [int(inst.lower[i]) for i, e in zip(stack, to_end) if e is part]
        assert starts == sorted(starts)


# Max-live 9 at step 4 (a + b + c). c lives to the last step (8). Stacked by start alone (b, c, a) c lies
# at [3, 5) and d, live at steps 6-7 beside c only, finds 3 bytes below c and goes above it: 10. With c at
# the bottom, d fits right above it.
TO_THE_END = [Buffer("a", 4, 6, 4), Buffer("b", 1, 5, 3), Buffer("c", 3, 8, 2), Buffer("d", 6, 8, 5)]


def test_a_buffer_living_to_the_end_goes_to_the_bottom_of_the_stack():
    inst = greedy.Instance.of(TO_THE_END)
    assert lower_bound(TO_THE_END) == 9
    order = greedy.peak_order(inst)
    assert order.tolist() == [2, 1, 0, 3]
    assert inst.arena(greedy.best_fit(inst, order)) == 9
    assert inst.arena(greedy.best_fit(inst, np.array([1, 2, 0, 3]))) == 10   # the group by start alone


# Max-live 9 at step 1; peak order and best fit give 10, b4 (live at step 7 only) ending above 9.
WHEEL = [Buffer(f"b{i}", lo, hi, size) for i, (lo, hi, size) in
         enumerate([(1, 2, 5), (0, 3, 2), (5, 8, 1), (0, 8, 2), (7, 8, 5), (2, 7, 5)])]


def test_the_squeaky_wheel_keeps_the_stack_it_is_told_to_keep(monkeypatch):
    # The offenders move to the front of the buffers after the kept ones, so every order the wheel
    # tries starts with the stack of the fullest step (on PanGu, offenders moved in front of that stack
    # undo it: the wheel then needs minutes instead of two passes).
    inst = greedy.Instance.of(WHEEL)
    order, group = greedy.peak_order(inst), greedy.fullest_group(inst)
    assert inst.arena(greedy.best_fit(inst, order)) == 10 and lower_bound(WHEEL) == 9
    tried = []
    real = greedy.best_fit
    monkeypatch.setattr(greedy, "best_fit", lambda inst, o, **kw: tried.append(list(o)) or real(inst, o, **kw))
    offsets = greedy.squeaky(inst, order, 9, time.monotonic() + 10, keep=len(group))
    assert inst.arena(offsets) == 9
    assert len(tried) >= 2 and all(o[:len(group)] == order[:len(group)].tolist() for o in tried), tried


# Max-live 17 at step 6; greedy-peak gives 19, every other order 20, so the peak order is the one the
# wheel starts from.
PEAK_BEST = [Buffer(f"b{i}", lo, hi, size) for i, (lo, hi, size) in
             enumerate([(9, 10, 6), (3, 10, 5), (7, 10, 2), (2, 7, 5), (6, 10, 4), (6, 8, 3)])]


def test_pack_tells_the_wheel_to_keep_the_peak_stack(monkeypatch):
    from zcspec.impl.compiler.memory.packing import packer
    monkeypatch.setattr(packer, "MAX_SEARCH_SIZE", 2)   # the large-trace path: climb, then the wheel
    # the climb would meet the bound here on its own: make it give back the order's own packing
    monkeypatch.setattr(greedy, "climb", lambda inst, order, target, deadline: greedy.best_fit(inst, order))
    calls = []
    real = greedy.squeaky
    monkeypatch.setattr(greedy, "squeaky", lambda inst, order, target, deadline, keep=0:
                        calls.append(keep) or real(inst, order, target, deadline, keep))
    result = pack(PEAK_BEST, time_limit=10)
    assert calls == [len(greedy.fullest_group(greedy.Instance.of(PEAK_BEST)))] == [4]
    assert (result.arena, result.method) == (17, "squeaky-wheel")
