"""Witness pairs: an O(N) subset of the lifetime-overlapping pairs that still catches every overlap."""
from __future__ import annotations

from hypothesis import given, strategies as st

from checks.proofs.layout import read_layout
from checks.proofs.pairs import witness_pairs
from checks.proofs.synthetic import make_plan, shift_onto_neighbour, synthetic_plan, tensor
from checks.proofs.sweep import conflict_pairs


def _overlap(a, b) -> bool:
    return a.alloc == b.alloc and a.rel < b.rel + b.extent and b.rel < a.rel + a.extent


@st.composite
def layouts(draw):
    """One or two allocations, small offsets so overlaps are frequent, some aliases."""
    ts = []
    for i in range(draw(st.integers(1, 9))):
        region = draw(st.sampled_from(["feature_map", "feature_map", "weight"]))
        extra = {}
        if ts and draw(st.integers(0, 3)) == 0:
            root = draw(st.sampled_from(ts))
            region, extra = root["region"], {"alias_of": root["name"]}
        first = draw(st.integers(0, 6))
        ts.append(tensor(f"t{i}", region, draw(st.integers(0, 6)) * 256, draw(st.integers(0, 4)) * 256,
                         first, first + draw(st.integers(0, 3)), aligned_size=0, **extra))
    return read_layout(make_plan(ts, regions={"feature_map": 1 << 20, "weight": 1 << 20}), block_align=256)


@given(layouts())
def test_witnesses_catch_an_overlap_iff_some_pair_overlaps(layout):
    every = {(a.name, b.name) for a, b in conflict_pairs(layout)} | {(b.name, a.name) for a, b in conflict_pairs(layout)}
    witnesses = witness_pairs(layout)
    assert all((a.name, b.name) in every and a.alloc == b.alloc for a, b in witnesses)
    assert any(_overlap(a, b) for a, b in conflict_pairs(layout)) == any(_overlap(a, b) for a, b in witnesses)


def test_witnesses_are_linear_where_lifetime_pairs_are_quadratic():
    ts = [tensor(f"w{i}", "weight", 512 * i, 512, 0, 9) for i in range(300)]   # all alive throughout
    layout = read_layout(make_plan(ts))
    assert len(conflict_pairs(layout)) == 300 * 299 // 2
    assert len(witness_pairs(layout)) == 299


def test_a_shifted_tensor_is_among_the_overlapping_witnesses():
    plan, pair = shift_onto_neighbour(synthetic_plan(500, seed=8), seed=1)
    overlapping = [(a.name, b.name) for a, b in witness_pairs(read_layout(plan)) if _overlap(a, b)]
    # The rest of the plan was valid, so every overlap involves the moved tensor.
    assert overlapping and all(pair[0] in p for p in overlapping)
