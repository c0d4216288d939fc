"""The general plan observation: arenas of other planners, write steps, exclusive groups.

GE's plan is one instance of the observation (its four regions are the undeclared default); a plan
that declares ``arenas`` is judged only by the claims that do not encode one of GE's own rules.
"""
from __future__ import annotations

import json

import pytest

from zcspec.spec.check import check
from zcspec.spec.examples.build import plan
from zcspec.spec.invariants.layout_bound import arena_peak, recompute_lower_bound
from zcspec.spec.observables import Arena, ExclusiveGroup, PlanObservation, from_data, to_data
from zcspec.spec.registry import all_invariants, get

TEMP = {"temp": Arena("activations", 64)}


def _ids(report) -> set[str]:
    return {v.invariant_id for v in report.violations}


def test_ge_only_claims_do_not_judge_a_plan_in_its_own_arenas():
    # A tensor of 100 bytes at offset 64 breaks GE's 512-byte block granularity (LAYOUT-ALIGN) and GE's
    # padded size (LAYOUT-TENSOR-SIZE); in an arena of another planner neither rule is a claim.
    ge = plan([("a", "feature_map", 0, 100, 0, 1), ("b", "feature_map", 128, 100, 1, 2)], nbytes={"a": 100, "b": 100})
    foreign = plan([("a", "temp", 0, 100, 0, 1), ("b", "temp", 128, 100, 1, 2)], nbytes={"a": 100, "b": 100},
                   arenas=TEMP)
    assert {"LAYOUT-ALIGN", "LAYOUT-TENSOR-SIZE"} <= _ids(check(ge))
    report = check(foreign)
    assert report.ok, report
    ge_only = {i.id for i in all_invariants() if i.ge_only}
    assert ge_only >= {"LAYOUT-ALIGN", "LAYOUT-TENSOR-SIZE", "LAYOUT-INPUTS-SORTED", "MEM-ZC-IO", "MEM-CONT-INPUT"}
    assert not ge_only & set(report.applied)
    assert {"LAYOUT-NO-OVERLAP", "LAYOUT-ARENA-ALIGN", "LAYOUT-LOWER-BOUND"} <= set(report.applied)


def test_an_undeclared_region_in_a_plan_with_arenas_is_malformed():
    from zcspec.spec.errors import ObservationConsistencyError
    with pytest.raises(ObservationConsistencyError, match="'other'.*not a declared arena"):
        plan([("a", "temp", 0, 64, 0, 1), ("b", "other", 0, 64, 0, 1)], arenas=TEMP)


def test_a_write_before_the_lifetime_is_caught_only_by_the_write_claim():
    # b is written at step 1, while a (read at step 1) still holds the same bytes; b's planned life
    # starts at 2, its first read, so the reads-only claims see nothing wrong.
    rows = [("a", "temp", 0, 64, 0, 1), ("b", "temp", 0, 64, 2, 3)]
    facts = dict(consumers={"a": (1,), "b": (3,)}, arenas=TEMP, steps=4)
    assert check(plan(rows, **facts)).ok
    bad = check(plan(rows, writes={"a": (0,), "b": (1,)}, **facts))
    assert _ids(bad) == {"LAYOUT-LIFETIME-COVERS-WRITES"}
    assert "'b'" in bad.violations[0].culprit and "[1]" in bad.violations[0].message
    assert check(plan(rows, writes={"a": (0,), "b": (2,)}, **facts)).ok


def test_arena_alignment_applies_to_memory_owners_only():
    arenas = {"temp": Arena("activations", 64)}
    view = plan([("a", "temp", 0, 256, 0, 2), ("v", "temp", 100, 50, 1, 2, "a")], arenas=arenas)
    assert check(view).ok     # a view starts wherever its root's bytes put it
    moved = plan([("a", "temp", 32, 256, 0, 2)], arenas=arenas)
    assert _ids(check(moved)) == {"LAYOUT-ARENA-ALIGN"}
    unaligned = plan([("a", "temp", 32, 256, 0, 2)], arenas={"temp": Arena("activations")})
    assert not get("LAYOUT-ARENA-ALIGN").exercised(unaligned)


def _two_conds(**extra) -> PlanObservation:
    # cond 1 picks t1 or f1 at step 1; cond 2 picks t2 or f2 at step 2; all four share offset 0.
    rows = [("t1", "temp", 0, 64, 1, 1), ("f1", "temp", 0, 64, 1, 1),
            ("t2", "temp", 0, 64, 1, 2), ("f2", "temp", 0, 64, 2, 2)]
    return plan(rows, arenas=TEMP, steps=3, **extra)


def test_branches_of_one_choice_may_share_but_two_choices_may_not():
    one = ExclusiveGroup("cond1", {"true": ("t1",), "false": ("f1",)})
    two = ExclusiveGroup("cond2", {"true": ("t2",), "false": ("f2",)})
    report = check(_two_conds(exclusive_groups=(one, two)))
    pairs = {frozenset(v.values["tensors"]) for v in report.violations if v.invariant_id == "LAYOUT-NO-OVERLAP"}
    # t1/f1 never run together; t2/f2 neither (and are not live together anyway). But cond 1's t1 and
    # cond 2's t2 both run on the path (true, true), both live at step 1, in the same bytes.
    assert frozenset(("t1", "t2")) in pairs and frozenset(("f1", "t2")) in pairs
    assert frozenset(("t1", "f1")) not in pairs
    # One global choice (the old batch labels) would hide the real conflict: every branch pair exempt.
    hidden = check(_two_conds(batch_labels={"t1": "a", "f1": "b", "t2": "c", "f2": "d"}))
    assert "LAYOUT-NO-OVERLAP" not in _ids(hidden)


def test_the_lower_bound_counts_the_heaviest_branch_of_each_choice():
    rows = [("base", "temp", 0, 64, 0, 2), ("t", "temp", 64, 512, 1, 1), ("f", "temp", 64, 128, 1, 1),
            ("u", "temp", 576, 256, 1, 1), ("g", "temp", 576, 64, 1, 1)]
    groups = (ExclusiveGroup("c1", {"true": ("t",), "false": ("f",)}),
              ExclusiveGroup("c2", {"true": ("u",), "false": ("g",)}))
    p = plan(rows, arenas=TEMP, exclusive_groups=groups)
    # base + the heavier of t/f + the heavier of u/g (all five together would be 1024)
    assert arena_peak(p, "temp") == 64 + 512 + 256
    assert check(p).ok
    small = plan(rows, arenas=TEMP, exclusive_groups=groups, regions={"temp": 800})
    assert any(v.invariant_id == "LAYOUT-LOWER-BOUND" and v.culprit == "region 'temp'" for v in check(small).violations)


def test_the_lower_bound_sums_every_activation_arena_and_skips_the_rest():
    arenas = {"a0": Arena("activations"), "a1": Arena("activations"), "io": Arena("user_io")}
    p = plan([("x", "a0", 0, 512, 0, 1), ("y", "a1", 0, 1024, 0, 1), ("z", "io", 0, 4096, 0, 1)], arenas=arenas)
    assert recompute_lower_bound(p) == 512 + 1024
    assert check(p).ok
    under = plan([("x", "a0", 0, 512, 0, 1), ("y", "a1", 0, 1024, 0, 1)], arenas=arenas, lower_bound=1024)
    assert [v.culprit for v in check(under).violations] == ["lower_bound"]


def test_a_graph_output_view_keeps_its_root_alive_through_the_family():
    # The root's own life ends at step 1, but its alias (the output) lives to the end: the memory is
    # the family's, alive 0..3, and no other tensor may take it (adapters need not widen roots).
    rows = [("buf", "temp", 0, 64, 0, 1), ("out", "temp", 0, 64, 1, 3, "buf")]
    ok = plan(rows, arenas=TEMP, graph_outputs=("out",), steps=4)
    assert check(ok).ok
    clash = plan(rows + [("t", "temp", 0, 64, 2, 2)], arenas=TEMP, graph_outputs=("out",), steps=4)
    assert "LAYOUT-NO-OVERLAP" in _ids(check(clash))


def test_the_general_form_round_trips_through_json():
    p = _two_conds(exclusive_groups=(ExclusiveGroup("cond1", {"true": ("t1",), "false": ("f1",)}),),
                   writes={"t1": (1,)})
    again = from_data(PlanObservation, json.loads(json.dumps(to_data(p))))
    assert again == p and not again.ge_shaped and again.arena("temp") == Arena("activations", 64)
