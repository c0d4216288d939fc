"""The Z3 layout prover: proofs, each kind of counterexample, unknown, and agreement with the sweep."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from zcspec.checks.proofs.layout import read_layout
from zcspec.checks.proofs.synthetic import make_plan, shift_onto_neighbour, synthetic_plan, tensor
from zcspec.checks.proofs.sweep import sweep_check
from zcspec.checks.proofs.z3_layout import prove_layout


def test_valid_synthetic_plan_is_proved():
    result = prove_layout(synthetic_plan(300, seed=3, n_aliases=3))
    assert result.status == "proved" and result.passed
    assert result.pairs_encoded > 300 and result.claims_encoded >= result.pairs_encoded


@pytest.mark.parametrize("pairs, fold", [("witness", False), ("lifetime", False), ("lifetime", True)])
def test_shifted_tensor_gives_its_pair_with_overlapping_addresses(pairs, fold):
    plan, (moved, onto) = shift_onto_neighbour(synthetic_plan(300, seed=4), seed=6)
    result = prove_layout(plan, pairs=pairs, fold=fold)
    assert result.status == "refuted" and not result.passed
    assert result.kind == "overlap" and moved in result.pair
    pairs = {v.tensors for v in result.violations if v.kind == "overlap"}
    assert (moved, onto) in pairs or (onto, moved) in pairs
    sizes = {t["name"]: max(t["size"], t["aligned_size"]) for t in plan["tensors"]}
    (a, x), (b, y) = result.addresses
    assert x < y + sizes[b] and y < x + sizes[a], "the reported addresses must really overlap"


def _pair(region_a="feature_map", offset_a=0, last_a=3, **extra):
    return make_plan([tensor("a", region_a, offset_a, 512, 0, last_a, **extra),
                      tensor("b", "feature_map", 1024, 1024, 2, 5)], regions={"feature_map": 4096, "weight": 4096})


def test_overlap_in_a_region():
    result = prove_layout(_pair(offset_a=1536))
    assert (result.status, result.kind, result.pair) == ("refuted", "overlap", ("a", "b"))


def test_reuse_of_a_range_by_tensors_alive_apart_is_proved():
    assert prove_layout(_pair(offset_a=1024, last_a=1)).status == "proved"


def test_misaligned_offset():
    result = prove_layout(_pair(offset_a=48))
    assert (result.status, result.kind, result.pair) == ("refuted", "misaligned", ("a",))
    assert dict(result.addresses)["a"] % 32 == 16
    assert prove_layout(_pair(offset_a=64)).status == "proved"
    assert prove_layout(_pair(offset_a=64), tensor_align=512).kind == "misaligned"


def test_aliases_have_no_alignment_claim_of_their_own():
    """A no-padding concat piece sits at a raw offset inside its root (the planner's PhonyConcat)."""
    root = tensor("concat", "feature_map", 0, 516, 0, 3)
    piece = tensor("piece", "feature_map", 4, 512, 1, 2, alias_of="concat")
    assert prove_layout(make_plan([root, piece])).status == "proved"


def test_dynamic_batch_branches_may_share_bytes():
    ts = [tensor("b1", "feature_map", 0, 512, 0, 3), tensor("b2", "feature_map", 0, 512, 0, 3),
          tensor("common", "feature_map", 0, 512, 2, 2)]
    plan = dict(make_plan(ts, regions={"feature_map": 1024}), batch_labels={"b1": "batch_1", "b2": "batch_2"})
    result = prove_layout(plan)
    assert result.status == "refuted" and {v.tensors for v in result.violations} == {("b1", "common"), ("b2", "common")}
    plan["tensors"][2]["offset"] = 512
    assert prove_layout(plan).status == "proved" and sweep_check(plan) == []


def test_zero_copy_tensor_larger_than_its_user_buffer():
    inp = tensor("in", "zero_copy", 0, 1000, 0, 3, block="in")
    mid = tensor("mid", "feature_map", 0, 512, 1, 5)
    plan = make_plan([inp, tensor("out", "zero_copy", 1024, 64, 2, 9, block="out"), mid])
    assert prove_layout(plan).status == "proved"
    result = prove_layout(plan, user_sizes={"in": 999})
    assert (result.status, result.kind, result.pair) == ("refuted", "out_of_bounds", ("in", "user:in"))
    bases = dict(result.bases)
    # The counterexample is concrete: the buffer really ends before the tensor does.
    assert dict(result.addresses)["in"] + 1000 > bases["user:in"] + 999


def test_a_child_block_lives_in_its_zero_copy_parents_user_buffer():
    """GE's AddZeroCopyLifeReuseBlock: with io reuse, an intermediate tensor's block may be a child of a
    zero-copy block."""
    out = tensor("out", "zero_copy", 0, 2048, 3, 5, block=0)
    tmp = tensor("tmp", "zero_copy", 1024, 512, 0, 2, block=1)
    blocks = [{"id": 0, "region": "zero_copy", "offset": 0, "size": 2048, "zero_copy": True, "tensors": ["out"]},
              {"id": 1, "region": "zero_copy", "offset": 1024, "size": 512, "zero_copy": False, "tensors": ["tmp"],
               "parent": 0}]
    plan = make_plan([out, tmp], blocks=blocks)
    assert prove_layout(plan).status == "proved" and sweep_check(plan) == []
    plan["tensors"][1]["last"] = 3   # still alive when 'out' is written
    result = prove_layout(plan)
    assert (result.status, result.kind, set(result.pair)) == ("refuted", "overlap", {"out", "tmp"})
    assert result.bases and dict(result.addresses)["tmp"] == dict(result.bases)["user:0"] + 1024


def test_user_buffer_alignment_is_symbolic():
    """Only the buffers' alignment is known: a 32-byte aligned buffer may sit at an odd multiple of 32."""
    plan = make_plan([tensor("in", "zero_copy", 0, 100, 0, 3, block="in")])
    assert prove_layout(plan, user_align=64, zero_copy_align=64).status == "proved"
    result = prove_layout(plan, user_align=32, zero_copy_align=64)
    assert (result.status, result.kind) == ("refuted", "misaligned")
    assert dict(result.bases)["user:in"] % 64 == 32


def test_alias_shares_its_root_and_must_stay_inside_it():
    root = tensor("root", "feature_map", 0, 1024, 0, 4)
    other = tensor("other", "feature_map", 1024, 512, 0, 9)
    ok = make_plan([root, other, tensor("view", "feature_map", 0, 1024, 3, 8, alias_of="root")])
    assert prove_layout(ok).status == "proved"
    bad = make_plan([root, other, tensor("view", "feature_map", 512, 1024, 3, 8, alias_of="root")])
    result = prove_layout(bad)
    assert result.status == "refuted"
    kinds = {(v.kind, v.tensors) for v in result.violations}
    assert ("alias_outside_root", ("view", "root")) in kinds and ("overlap", ("other", "view")) in kinds


def test_resource_limit_gives_unknown_never_a_pass():
    plan = synthetic_plan(200, seed=2)
    result = prove_layout(plan, rlimit=1)
    assert result.status == "unknown" and not result.passed
    assert "resource" in result.reason


def test_a_resource_limit_gives_unknown_never_a_pass():
    # Every lifetime pair encoded, and Z3's deterministic resource limit far below what the proof
    # needs (a 1 ms timeout was flaky: a fast run could finish within it).
    result = prove_layout(synthetic_plan(2000, seed=2), pairs="lifetime", rlimit=1)
    assert result.status == "unknown" and not result.passed and result.reason


# --- agreement with the sweep on random small plans -----------------------------------------

@st.composite
def plans(draw, max_tensors=7):
    """Small plans over three regions and two user buffers, often broken: offsets are mostly
    512-multiples, regions and user buffers sometimes too small, aliases sometimes displaced."""
    n = draw(st.integers(1, max_tensors))
    ts = []
    for i in range(n):
        region = draw(st.sampled_from(["feature_map", "feature_map", "weight", "zero_copy"]))
        offset = draw(st.integers(0, 4)) * 512 + draw(st.sampled_from([0, 0, 0, 64, 32, 16]))
        size = draw(st.integers(0, 1300))
        first = draw(st.integers(0, 5))
        extra = {"block": draw(st.sampled_from(["in", "out"]))} if region == "zero_copy" else {}
        if ts and draw(st.booleans()):
            root = draw(st.sampled_from(ts))
            region, extra = root["region"], {"block": root["block"], "alias_of": root["name"]}
            offset = draw(st.sampled_from([root["offset"], offset]))
        ts.append(tensor(f"t{i}", region, offset, size, first, first + draw(st.integers(0, 4)), **extra))
    plan = make_plan(ts)
    for r in plan["regions"]:
        plan["regions"][r] -= draw(st.sampled_from([0, 0, 0, 512]))
        plan["regions"][r] = max(plan["regions"][r], 0)
    user_sizes = {b["id"]: b["size"] - draw(st.sampled_from([0, 0, 1, 600])) for b in plan["blocks"]}
    if draw(st.booleans()):
        plan["batch_labels"] = {t["name"]: draw(st.sampled_from(["", "b1", "b2"])) for t in ts}
    options = dict(user_align=draw(st.sampled_from([32, 64, 512])), zero_copy_align=draw(st.sampled_from([None, 64])),
                   tensor_align=draw(st.sampled_from([None, 32, 512])),
                   user_sizes={k: max(v, 0) for k, v in user_sizes.items()})
    return plan, options


def _explained(v, sweep, layout) -> bool:
    """A concrete Z3 violation is one the sweep reports, or (for a pair in two allocations)
    follows from one of the two leaving its allocation."""
    found = {(s.kind, s.tensors) for s in sweep}
    if (v.kind, v.tensors) in found or (v.kind, v.tensors[::-1]) in found:
        return True
    oob = {s.tensors[0] for s in sweep if s.kind == "out_of_bounds"}
    alloc = {t.name: t.alloc for t in layout.tensors}
    return v.kind == "overlap" and alloc[v.tensors[0]] != alloc[v.tensors[1]] and bool(oob & set(v.tensors))


@given(plans(), st.sampled_from(["witness", "lifetime"]))
def test_z3_and_sweep_agree_on_random_plans(case, pairs):
    plan, options = case
    sweep = sweep_check(plan, **options)
    result = prove_layout(plan, pairs=pairs, **options)
    assert result.status != "unknown", result.reason
    assert (result.status == "proved") == (sweep == []), (sweep, result.violations)
    layout = read_layout(plan, **options)
    for v in result.violations:
        assert _explained(v, sweep, layout), (v, sweep)
