"""LAYOUT-ARENA-ALLOCATED: on the path a plan describes, a tensor's arena is allocated before the tensor lives."""
from __future__ import annotations

import pytest

from zcspec.spec.check import check
from zcspec.spec.errors import SpecError
from zcspec.spec.observables.plan import Arena, PlacedTensor, PlanObservation

CLAIM = "LAYOUT-ARENA-ALLOCATED"


def _plan(allocations, *, alias_first=None) -> PlanObservation:
    """Storage s allocated at the given steps; tensor a in it at steps 2..3 (and an alias v of a at
    ``alias_first``..3 when given); four steps."""
    tensors = [PlacedTensor("a", "s", 0, 64, 64, 2, 3, None, False)]
    if alias_first is not None:
        tensors.append(PlacedTensor("v", "s", 0, 64, 64, alias_first, 3, None, False, alias_of="a"))
    return PlanObservation(order=("n0", "n1", "n2", "n3"), tensors=tuple(tensors), regions={"s": 64},
                           arenas={"s": Arena("activations")}, arena_allocations=allocations)


def test_an_arena_allocated_before_its_tensor_holds_and_is_exercised():
    report = check(_plan({"s": (1,)}))
    assert report.ok and CLAIM in report.exercised
    assert check(_plan({"s": (2,)})).ok     # allocated at the tensor's own first step


def test_an_arena_allocated_only_after_the_tensor_starts_is_a_violation():
    found = [v for v in check(_plan({"s": (3,)})).violations if v.invariant_id == CLAIM]
    assert [v.culprit for v in found] == ["tensor 'a'"] and "only later, at step(s) [3]" in found[0].message


def test_an_arena_this_path_never_allocates_is_a_violation_naming_the_tensor():
    report = check(_plan({"s": ()}))
    assert report.violated() == (CLAIM,)
    assert "never allocates" in report.violations[0].message


def test_a_family_is_judged_once_from_its_earliest_member():
    # the alias v starts at step 1, before the allocation at step 2: the family's memory is used first at 1
    found = [v for v in check(_plan({"s": (2,)}, alias_first=1)).violations if v.invariant_id == CLAIM]
    assert [v.culprit for v in found] == ["tensor 'a'"]


def test_a_plan_without_arena_allocations_is_not_exercised():
    report = check(_plan({}))
    assert CLAIM in report.applied and CLAIM not in report.exercised and report.ok


@pytest.mark.parametrize("allocations, words", [({"t": (0,)}, "not a declared arena"),
                                                ({"s": (4,)}, "outside the 4 steps")])
def test_allocations_naming_an_unknown_arena_or_step_are_bad_input(allocations, words):
    with pytest.raises(SpecError, match=words):
        _plan(allocations)
