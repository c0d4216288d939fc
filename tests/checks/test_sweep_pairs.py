"""Witness pairs: an O(N) subset of the lifetime-overlapping pairs that still catches every overlap."""
from __future__ import annotations

from hypothesis import given, strategies as st

from zcspec.checks.proofs.layout import read_layout
from zcspec.checks.proofs.pairs import witness_pairs
from zcspec.checks.proofs.synthetic import make_plan, shift_onto_neighbour, synthetic_plan, tensor
from zcspec.checks.proofs.sweep import conflict_pairs


def _overlap(a, b) -> bool:
    return a.alloc == b.alloc and a.rel < b.rel + b.extent and b.rel < a.rel + a.extent


@st.composite
def layouts(draw):
    """One or two allocations, small offsets so overlaps are frequent, some aliases and batch branches."""
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
    plan = make_plan(ts, regions={"feature_map": 1 << 20, "weight": 1 << 20})
    plan["batch_labels"] = {t["name"]: draw(st.sampled_from(["", "", "b1", "b2"])) for t in ts}
    return read_layout(plan, block_align=256, tensor_align=256)


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


def test_a_batch_branch_spanning_the_others_does_not_hide_their_overlap():
    # 'wide' (branch b2) ends highest before x and y, but may share their bytes; x and y
    # (both branch b1) overlap each other, and a single sweep over all three would miss it.
    ts = [tensor("wide", "feature_map", 0, 2048, 0, 3), tensor("x", "feature_map", 256, 512, 0, 3),
          tensor("y", "feature_map", 512, 512, 0, 3)]
    plan = dict(make_plan(ts), batch_labels={"wide": "b2", "x": "b1", "y": "b1"})
    layout = read_layout(plan, tensor_align=256)
    assert [(a.name, b.name) for a, b in witness_pairs(layout) if _overlap(a, b)] == [("x", "y")]
