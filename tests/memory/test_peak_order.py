"""The packer's "greedy-peak" order (packing/greedy.py peak_order): the buffers live at the fullest step
first, by start, then the others by size. Best fit stacks the first group from offset 0 with no gap, so the
fullest step costs exactly the max-live bound; it is what meets the bound on IOPDDL S_1 (docs/packing.md)."""
from __future__ import annotations

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
    # ... by start, as the prefix argument needs
    starts = [int(inst.lower[i]) for i in sorted(live, key=lambda i: offsets[i])]
    assert starts == sorted(starts)
