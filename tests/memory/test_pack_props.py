"""Property tests of the packer on random small instances, checked by independent oracles."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zcspec.impl.compiler.memory import pack_greedy, pack_search
from zcspec.impl.compiler.memory.pack import Buffer, lower_bound, pack
from tests.memory.pack_oracles import layout_errors, max_live, optimum


@st.composite
def instances(draw, *, min_buffers=0, max_buffers=12, max_step=12, max_size=40, aligned=True):
    """Lists of buffers with random half-open lifetimes, sizes and (optionally) alignments."""
    n = draw(st.integers(min_buffers, max_buffers))
    buffers = []
    for i in range(n):
        lower = draw(st.integers(0, max_step - 1))
        upper = draw(st.integers(lower + 1, max_step))
        size = draw(st.integers(1, max_size))
        align = draw(st.sampled_from((1, 1, 2, 4, 8))) if aligned else 1
        buffers.append(Buffer(f"b{i}", lower, upper, size, align))
    return buffers


@given(instances())
def test_packing_is_valid_and_bounded(buffers):
    result = pack(buffers)
    assert set(result.offsets) == {b.id for b in buffers}
    assert layout_errors(buffers, result.offsets) == []
    assert result.arena == max((result.offsets[b.id] + b.size for b in buffers), default=0)
    assert result.arena >= lower_bound(buffers) == max_live(buffers)


@settings(max_examples=60)
@given(instances(max_buffers=5, max_step=6, max_size=12))
def test_optimal_is_never_claimed_falsely(buffers):
    result = pack(buffers)
    best = optimum(buffers)
    assert result.arena >= best
    if result.optimal:
        assert result.arena == best
    # Tiny instances: the descent of the exact search reaches and proves the optimum.
    assert result.arena == best and result.optimal


@settings(max_examples=60)
@given(instances(min_buffers=1, max_buffers=6, max_step=6, max_size=12))
def test_search_finds_optimum_and_proves_one_less_infeasible(buffers):
    inst = pack_greedy.Instance.of(buffers)
    best = optimum(buffers)
    found = pack_search.search(inst, best)
    assert found.offsets is not None, "the canonical search missed a packing that exists"
    offsets = {b.id: int(o) for b, o in zip(buffers, found.offsets)}
    assert layout_errors(buffers, offsets) == []
    assert max(offsets[b.id] + b.size for b in buffers) <= best
    below = pack_search.search(inst, best - 1)
    assert below.offsets is None and below.exhausted


@settings(max_examples=30)
@given(instances(min_buffers=1, max_buffers=7, max_step=5, max_size=6, aligned=False))
def test_search_with_twins_and_hats(buffers):
    # Few steps and sizes: many buffers share a lifetime (the symmetry rule) or
    # have nothing above them (the hatless rule).
    inst = pack_greedy.Instance.of(buffers)
    best = optimum(buffers)
    assert pack_search.search(inst, best).offsets is not None
    assert pack_search.search(inst, best - 1).exhausted


@given(instances(max_buffers=10), st.integers(0, 200))
def test_capacity_search_returns_a_fitting_packing_when_one_exists(buffers, slack):
    capacity = lower_bound(buffers) + slack
    result = pack(buffers, capacity=capacity, time_limit=5.0)
    assert layout_errors(buffers, result.offsets) == []
    greedy = pack_greedy.best_fit(pack_greedy.Instance.of(buffers), pack_greedy.order_by_size(pack_greedy.Instance.of(buffers)))
    if buffers and int((greedy + pack_greedy.Instance.of(buffers).size).max()) <= capacity:
        assert result.arena <= capacity


@given(instances(min_buffers=1, max_buffers=40, max_step=60, aligned=True), st.booleans())
def test_time_index_gives_the_same_packing_as_the_full_scan(buffers, first):
    inst = pack_greedy.Instance.of(buffers)
    order = pack_greedy.order_by_size(inst)
    plain = pack_greedy.best_fit(inst, order, first=first)
    saved = pack_greedy.INDEX_SIZE, pack_greedy._TimeIndex.SPAN
    # Force the bucket index on small instances, with long buffers and queries.
    pack_greedy.INDEX_SIZE, pack_greedy._TimeIndex.SPAN = 0, 2
    try:
        indexed = pack_greedy.best_fit(inst, order, first=first)
    finally:
        pack_greedy.INDEX_SIZE, pack_greedy._TimeIndex.SPAN = saved
    assert indexed.tolist() == plain.tolist()


@settings(max_examples=40)
@given(instances(min_buffers=1, max_buffers=10, max_step=8, max_size=20), st.integers(0, 8))
def test_stacking_bound_paths_agree(buffers, slack):
    # Small instances index the precomputed buffers x cliques matrix; large ones build
    # it in chunks per node. Both must prune the same nodes.
    from zcspec.impl.compiler.memory import pack_sweep

    inst = pack_greedy.Instance.of(buffers)
    capacity = max_live(buffers) + slack
    fast = pack_search.search(inst, capacity, node_budget=5000)
    saved = pack_sweep.CLIQUE_CELLS
    pack_sweep.CLIQUE_CELLS = 0
    try:
        chunked = pack_search.search(inst, capacity, node_budget=5000)
    finally:
        pack_sweep.CLIQUE_CELLS = saved
    assert (fast.nodes, fast.exhausted) == (chunked.nodes, chunked.exhausted)
    assert (fast.offsets is None) == (chunked.offsets is None)
    if fast.offsets is not None:
        assert fast.offsets.tolist() == chunked.offsets.tolist()
