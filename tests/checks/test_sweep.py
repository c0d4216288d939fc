"""The independent sweep checker: pair enumeration, each claim, and malformed plans."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, strategies as st

from zcspec.checks.errors import PlanFormatError
from zcspec.checks.proofs.synthetic import first_fit, make_plan, shift_onto_neighbour, synthetic_plan, tensor
from zcspec.checks.proofs.sweep import overlapping_pairs, sweep_check

lifetimes = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 10)).map(lambda p: (p[0], p[0] + p[1])),
                     max_size=40)


@given(lifetimes)
def test_overlapping_pairs_equal_brute_force(lts):
    found = [frozenset(p) for p in overlapping_pairs(lts)]
    expected = {frozenset((i, j)) for i, j in itertools.combinations(range(len(lts)), 2)
                if lts[i][0] <= lts[j][1] and lts[j][0] <= lts[i][1]}
    assert len(found) == len(set(found)), "a pair was yielded twice"
    assert set(found) == expected


def test_overlapping_pairs_inclusive_ends_touch():
    # (0, 2) and (2, 4) share step 2; (0, 1) and (2, 4) do not.
    assert {frozenset(p) for p in overlapping_pairs([(0, 2), (2, 4), (0, 1)])} == {frozenset((0, 1)), frozenset((0, 2))}


# TFLite's ComplexRecords case (its GPU memory-management tests): greedy by size reaches the lower bound, 96.
COMPLEX = [(32, 0, 1), (32, 1, 4), (8, 2, 5), (16, 3, 5), (8, 4, 5), (64, 5, 7), (8, 6, 8), (8, 7, 8), (16, 8, 9)]
COMPLEX_OFFSETS = [0, 32, 80, 64, 88, 0, 64, 72, 0]


def _records_plan(records, offsets):
    ts = [tensor(f"r{i}", "feature_map", o, s, f, l, aligned_size=s) for i, ((s, f, l), o) in enumerate(zip(records, offsets))]
    return make_plan(ts, regions={"feature_map": 96})


def test_golden_complex_records_are_safe_and_a_shift_is_caught():
    assert sweep_check(_records_plan(COMPLEX, COMPLEX_OFFSETS), block_align=8, tensor_align=8) == []
    broken = list(COMPLEX_OFFSETS)
    broken[3] = 80   # r3 (16 B, steps 3..5) onto r2 (8 B at 80, steps 2..5)
    kinds = {(v.kind, v.tensors) for v in sweep_check(_records_plan(COMPLEX, broken), block_align=8, tensor_align=8)}
    assert ("overlap", ("r2", "r3")) in kinds


def test_synthetic_plans_are_valid_and_first_fit_packs():
    assert sweep_check(synthetic_plan(400, seed=5, n_aliases=4)) == []
    offsets, arena = first_fit(COMPLEX)
    assert arena >= 96


def test_shifted_tensor_is_reported_with_its_pair():
    plan, pair = shift_onto_neighbour(synthetic_plan(200, seed=1), seed=2)
    assert pair in {v.tensors for v in sweep_check(plan) if v.kind == "overlap"} | \
        {v.tensors[::-1] for v in sweep_check(plan) if v.kind == "overlap"}


def _two(a_offset, *, a_last=3, region="feature_map", **extra):
    return make_plan([tensor("a", region, a_offset, 512, 0, a_last, **extra),
                      tensor("b", "feature_map", 1024, 1024, 2, 5)], regions={"feature_map": 4096, "weight": 4096})


@pytest.mark.parametrize("a_offset, a_last, kinds", [
    (0, 3, []),                                    # disjoint ranges
    (1024, 1, []),                                 # same range, lifetimes apart: reuse
    (1536, 3, [("overlap", ("a", "b"))]),          # same range, both alive at steps 2..3
    (1024 + 512 * 6, 3, [("out_of_bounds", ("a", "feature_map"))]),
    (48, 3, [("misaligned", ("a",))]),             # owners start at multiples of 32
])
def test_each_claim(a_offset, a_last, kinds):
    assert [(v.kind, v.tensors) for v in sweep_check(_two(a_offset, a_last=a_last))] == kinds


def test_pairs_in_different_regions_do_not_conflict():
    assert sweep_check(_two(1024, region="weight")) == []


def test_alias_shares_its_root_and_must_stay_inside_it():
    root = tensor("root", "feature_map", 0, 1024, 0, 4)
    other = tensor("other", "feature_map", 1024, 512, 0, 9)
    ok = make_plan([root, other, tensor("view", "feature_map", 0, 1024, 3, 8, alias_of="root"),
                    tensor("view2", "feature_map", 512, 512, 5, 9, alias_of="view")])
    assert sweep_check(ok) == []
    bad = make_plan([root, other, tensor("view", "feature_map", 512, 1024, 3, 8, alias_of="root")])
    kinds = [(v.kind, v.tensors) for v in sweep_check(bad)]
    assert ("alias_outside_root", ("view", "root")) in kinds and ("overlap", ("other", "view")) in kinds


def test_zero_copy_tensors_live_in_their_user_buffer():
    inp = tensor("in", "zero_copy", 0, 1000, 0, 3, block="in")
    out = tensor("out", "zero_copy", 1024, 64, 2, 9, block="out")
    mid = tensor("mid", "feature_map", 0, 512, 1, 5)
    plan = make_plan([inp, out, mid])
    assert sweep_check(plan) == []
    assert [(v.kind, v.tensors) for v in sweep_check(plan, user_sizes={"in": 999})] == [("out_of_bounds", ("in", "user:in"))]
    # A user buffer only 32-byte aligned cannot carry a tensor that needs 64.
    assert [v.kind for v in sweep_check(plan, user_align=32, zero_copy_align=64)] == ["misaligned", "misaligned"]


@pytest.mark.parametrize("mutate, words", [
    (lambda p: p["tensors"][0].pop("size"), "'size'"),
    (lambda p: p["tensors"][0].update(region="l2"), "unknown region 'l2'"),
    (lambda p: p["tensors"][0].update(alias_of="ghost"), "alias_of='ghost'"),
    (lambda p: p["tensors"][0].update(alias_of="b") or p["tensors"][1].update(alias_of="a"), "cycle"),
    (lambda p: p["tensors"][0].update(first=4, last=2), "first=4 > last=2"),
    (lambda p: p["tensors"][0].update(region="zero_copy", block=7), "block=7"),
    (lambda p: p["regions"].pop("feature_map"), "does not size"),
    (lambda p: p["tensors"].append(dict(p["tensors"][0])), "duplicate tensor name 'a'"),
])
def test_malformed_plans_name_the_tensor_and_rule(mutate, words):
    plan = _two(0)
    mutate(plan)
    with pytest.raises(PlanFormatError, match=words.replace("(", r"\(")) as info:
        sweep_check(plan)
    assert info.value.tensor in ("a", "b")
