"""LAYOUT-READS-SEE-WRITES: a read of reused memory sees the bytes written for the tensor it reads."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks.foreign.iree_mlir import read_iree_dump
from zcspec.checks.foreign.programs import PROGRAMS
from zcspec.spec.check import check
from zcspec.spec.observables.plan import Arena, ByteRange, InPlaceStep, PlacedTensor, PlanObservation

CLAIM = "LAYOUT-READS-SEE-WRITES"


def _t(name, first, last, offset=0, alias_of=None, region="act"):
    return PlacedTensor(name, region, offset, 64, 64, first, last, None, False, alias_of=alias_of)


def _plan(tensors, *, kind="activations", **facts) -> PlanObservation:
    return PlanObservation(order=tuple(f"n{i}" for i in range(5)), tensors=tuple(tensors), regions={"act": 128},
                           arenas={"act": Arena(kind)}, **facts)


def _found(plan):
    return [v for v in check(plan).violations if v.invariant_id == CLAIM]


# -- a read of bytes nothing wrote --------------------------------------------------------------

def test_a_tensor_written_before_its_read_holds_and_is_exercised():
    report = check(_plan([_t("a", 0, 1)], writes={"a": (0,)}, consumers={"a": (1,)}))
    assert report.ok and CLAIM in report.exercised


def test_a_read_of_a_tensor_no_step_writes_names_it_and_the_step():
    found = _found(_plan([_t("a", 0, 1)], writes={"a": ()}, consumers={"a": (1,)}))
    assert [(v.culprit, v.values["step"]) for v in found] == [("tensor 'a'", 1)]
    assert "no step at or before it writes it" in found[0].message


def test_a_write_after_the_read_does_not_count():
    assert _found(_plan([_t("a", 1, 2)], writes={"a": (2,)}, consumers={"a": (1,)}))


def test_a_step_that_writes_and_reads_the_tensor_counts_as_its_write():
    # IREE binds a dispatch's tied result read-write: the step is both the first write and a read
    assert not _found(_plan([_t("a", 1, 1)], writes={"a": (1,)}, consumers={"a": (1,)}))


def test_a_write_of_the_tensor_an_alias_is_computed_over_counts():
    plan = _plan([_t("a", 0, 0), _t("v", 1, 1, alias_of="a")], writes={"a": (0,), "v": ()}, consumers={"v": (1,)})
    assert not _found(plan)


@pytest.mark.parametrize("facts", [dict(graph_inputs=("a",)), dict(fixed=("a",))])
def test_graph_inputs_and_fixed_tensors_hold_data_before_the_first_step(facts):
    assert not _found(_plan([_t("a", 0, 1)], writes={"a": ()}, consumers={"a": (1,)}, **facts))


@pytest.mark.parametrize("kind", ["user_io", "constants", "state"])
def test_memory_the_caller_fills_is_not_judged(kind):
    assert not _found(_plan([_t("a", 0, 1)], kind=kind, writes={"a": ()}, consumers={"a": (1,)}))


def test_a_tensor_the_plan_gives_no_writes_for_is_not_judged():
    # listed in neither writes nor producers: the plan says nothing of its writes (an ExecuTorch kernel
    # the reader does not know the out arguments of), which is not "written by no step"
    plan = _plan([_t("a", 0, 1), _t("b", 0, 1, offset=64)], writes={"b": (0,)}, consumers={"a": (1,), "b": (1,)})
    assert not _found(plan)


def test_a_plan_without_writes_is_not_judged():
    report = check(_plan([_t("a", 0, 1)], consumers={"a": (1,)}))
    assert CLAIM in report.not_judged and CLAIM not in report.exercised


# -- two in-place results of one root ----------------------------------------------------------

def _loops(second_over: str, read_first_at: int) -> PlanObservation:
    """y0 written at step 0; y1 computed over y0 at step 1; y2 computed over ``second_over`` at step 3."""
    return _plan([_t("y0", 0, 0), _t("y1", 1, read_first_at, alias_of="y0"), _t("y2", 3, 4, alias_of=second_over)],
                 writes={"y0": (0,), "y1": (1,), "y2": (3,)}, consumers={"y1": (read_first_at,), "y2": (4,)},
                 in_place=(InPlaceStep(1, "y1", (ByteRange(0, 64),)), InPlaceStep(3, "y2", (ByteRange(0, 64),))))


def test_in_place_results_in_a_chain_hold():
    assert check(_loops("y1", 2)).ok


def test_a_sibling_in_place_result_written_before_the_first_is_read_is_a_violation():
    # iree-org/iree#21053's shape: both loops update the same resource in place; LAYOUT-NO-OVERLAP cannot
    # see it, the three are one family
    report = check(_loops("y0", 4))
    assert report.violated() == (CLAIM,)
    (v,) = report.violations
    assert v.culprit == "tensor 'y1'" and (v.values["by"], v.values["at"], v.values["bytes"]) == ("y2", 3, [0, 64])


def test_reading_the_root_after_its_in_place_result_wrote_over_it_is_a_violation():
    plan = _plan([_t("y0", 0, 3), _t("y1", 1, 2, alias_of="y0")], writes={"y0": (0,), "y1": (1,)},
                 consumers={"y0": (3,), "y1": (2,)}, in_place=(InPlaceStep(1, "y1", (ByteRange(0, 64),)),))
    assert [v.culprit for v in _found(plan)] == ["tensor 'y0'"]


def test_an_in_place_write_to_other_bytes_of_the_root_is_no_clobber():
    plan = attrs.evolve(_loops("y0", 4), in_place=(InPlaceStep(1, "y1", (ByteRange(0, 32),)),
                                                   InPlaceStep(3, "y2", (ByteRange(32, 64),))),
                        tensors=(_t("y0", 0, 0), PlacedTensor("y1", "act", 0, 32, 32, 1, 4, None, False, alias_of="y0"),
                                 PlacedTensor("y2", "act", 32, 32, 32, 3, 4, None, False, alias_of="y0")))
    assert not _found(plan)


def test_a_view_that_writes_no_bytes_is_no_clobber():
    # a reshape view of the same root recorded as written (its op's output) but with no in-place step
    plan = _plan([_t("x", 0, 0), _t("v1", 1, 4, alias_of="x"), _t("v2", 2, 3, alias_of="x")],
                 writes={"x": (0,), "v1": (1,), "v2": (2,)}, consumers={"v1": (4,), "v2": (3,)})
    assert not _found(plan)


# -- real plans ----------------------------------------------------------------------------------

def test_a_planted_missing_write_in_a_real_plan_is_caught():
    (_, plan), = read_iree_dump(PROGRAMS / "iree" / "squeezenet" / "layout.txt")
    assert check(plan).ok
    name = next(n for n, steps in plan.consumers.items() if min(steps) > min(plan.writes[n]))
    planted = attrs.evolve(plan, writes={**plan.writes, name: ()})
    assert [v.culprit for v in _found(planted)] == [f"tensor {name!r}"] * len(set(plan.consumers[name]))
