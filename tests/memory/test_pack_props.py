"""Property tests of the packer on random small instances, checked by the independent validator and
brute-force oracles (these share no code with the packer)."""
from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.plain_fit import plain_fit
from zcspec.checks.packing_check import validate
from zcspec.checks.strategies.buffers import buffer_lists
from zcspec.impl.compiler.memory.packing import Buffer, Packing, fit, greedy, lower_bound, pack, search


def max_live(buffers) -> int:
    """The lower bound by brute force over every step."""
    steps = {b.lower for b in buffers}
    return max((sum(b.size for b in buffers if b.lower <= t < b.upper) for t in steps), default=0)


def optimum(buffers) -> int:
    """The smallest arena, by trying every order with lowest-feasible placement.

    Complete: place the buffers of an optimal packing in offset order, each at
    the lowest aligned offset free of the ones already placed; by induction no
    buffer ends up higher than in the optimal packing.
    """
    best = None
    for perm in itertools.permutations(buffers):
        placed, top = [], 0
        for b in perm:
            o = _lowest(b, placed)
            placed.append((b, o))
            top = max(top, o + b.size)
            if best is not None and top >= best:
                break
        else:
            best = top if best is None else min(best, top)
    return best or 0


def _lowest(b, placed) -> int:
    near = [(o, o + p.size) for p, o in placed if p.lower < b.upper and b.lower < p.upper]
    for start in sorted({0} | {-(-end // b.align) * b.align for _, end in near}):
        if all(start + b.size <= lo or hi <= start for lo, hi in near):
            return start
    raise AssertionError("unreachable: the top is always free")


@given(buffer_lists())
def test_packing_is_valid_and_bounded(buffers):
    result = pack(buffers)
    # Every buffer placed once, aligned, inside the arena (which is what they need), no overlap.
    assert validate(buffers, result) == ()
    assert result.arena >= lower_bound(buffers) == max_live(buffers)


@settings(max_examples=60)
@given(buffer_lists(max_buffers=5, max_step=6, max_size=12))
def test_optimal_is_never_claimed_falsely(buffers):
    result = pack(buffers)
    best = optimum(buffers)
    assert result.arena >= best
    if result.optimal:
        assert result.arena == best
    # Tiny instances: the descent of the exact search reaches and proves the optimum.
    assert result.arena == best and result.optimal
    # ... and the proved bound says so (Packing: bound == arena exactly when optimal); the descent
    # used to certify the arena optimal while leaving the bound at the max-live one below it.
    assert result.bound == result.arena


def test_descent_proof_raises_the_bound_to_the_arena():
    """Alignment puts the optimum (119) one byte above the max-live bound (118): pack() without a time
    limit proves it by the descent, which must raise the proved bound with the certificate."""
    specs = [("b0", 0, 1, 40, 8), ("b1", 0, 1, 3, 2), ("b2", 0, 1, 3, 16), ("b3", 0, 2, 8, 16), ("b4", 0, 1, 64, 1)]
    buffers = [Buffer(i, lo, up, size, align=a) for i, lo, up, size, a in specs]
    assert lower_bound(buffers) == 118 and optimum(buffers) == 119
    result = pack(buffers)
    assert (result.arena, result.optimal, result.bound) == (119, True, 119)


@settings(max_examples=60)
@given(buffer_lists(min_buffers=1, max_buffers=6, max_step=6, max_size=12))
def test_search_finds_optimum_and_proves_one_less_infeasible(buffers):
    inst = greedy.Instance.of(buffers)
    best = optimum(buffers)
    found = search.search(inst, best)
    assert found.offsets is not None, "the canonical search missed a packing that exists"
    packing = Packing.placed(buffers, found.offsets, lower_bound=lower_bound(buffers), method="search")
    assert validate(buffers, packing, capacity=best) == ()
    below = search.search(inst, best - 1)
    assert below.offsets is None and below.exhausted


@settings(max_examples=30)
@given(buffer_lists(min_buffers=1, max_buffers=7, max_step=5, max_size=6, aligned=False))
def test_search_with_twins_and_hats(buffers):
    # Few steps and sizes: many buffers share a lifetime (the symmetry rule) or
    # have nothing above them (the hatless rule).
    inst = greedy.Instance.of(buffers)
    best = optimum(buffers)
    assert search.search(inst, best).offsets is not None
    assert search.search(inst, best - 1).exhausted


@given(buffer_lists(max_buffers=10), st.integers(0, 200))
def test_capacity_search_returns_a_fitting_packing_when_one_exists(buffers, slack):
    capacity = lower_bound(buffers) + slack
    result = pack(buffers, capacity=capacity, time_limit=5.0)
    assert validate(buffers, result) == ()
    inst = greedy.Instance.of(buffers)
    if buffers and inst.arena(greedy.best_fit(inst, greedy.order_by_size(inst))) <= capacity:
        assert validate(buffers, result, capacity=capacity) == ()


@given(buffer_lists(min_buffers=1, max_buffers=40, max_step=60, aligned=True), st.booleans(), st.integers(1, 20))
def test_time_index_gives_the_same_packing_as_the_full_scan(buffers, first, span):
    """The compiled pass finds time neighbours through buckets; with any ``span`` (so with long buffers
    and long queries on small instances) it places as the plain scan over every placed buffer does."""
    inst = greedy.Instance.of(buffers)
    order = greedy.order_by_size(inst)
    indexed = fit.place_in_order(inst.lower, inst.upper, inst.size, inst.align, order, first, span)
    assert indexed.tolist() == plain_fit(buffers, order.tolist(), first)


@given(buffer_lists(min_buffers=1, max_buffers=6, max_step=6, max_size=12))
def test_minimising_with_a_time_limit_reaches_and_proves_the_optimum(buffers):
    """Without a capacity but with time: the lower bound first, then bisection, then a proof. On
    instances small enough to search exhaustively, the arena is the brute-force optimum and the
    packing says it is proved; the proved bound never exceeds the optimum."""
    result = pack(buffers, time_limit=5.0)
    assert validate(buffers, result) == ()
    best = optimum(buffers)
    assert result.bound <= best <= result.arena
    assert result.arena == best and result.optimal and result.bound == best


def test_minimising_proves_bounds_above_the_max_live_one():
    """Alignment leaves a gap of 10 between the max-live bound (15) and the optimum (25): the first search
    (at 15) and the bisection's refuted targets must be proved infeasible for the result to be certified."""
    specs = [("0", 3, 6, 7, 2), ("1", 0, 6, 1, 8), ("2", 2, 4, 3, 2), ("3", 3, 4, 3, 8), ("4", 2, 4, 1, 8)]
    buffers = [Buffer(i, lo, up, size, align=a) for i, lo, up, size, a in specs]
    assert lower_bound(buffers) == 15 and optimum(buffers) == 25
    result = pack(buffers, time_limit=5.0)
    assert (result.arena, result.optimal, result.bound) == (25, True, 25)
