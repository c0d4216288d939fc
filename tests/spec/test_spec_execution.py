"""Execution invariants and the check report: targeted cases beyond the documented examples."""
from __future__ import annotations

import json

import pytest

from zcspec.spec.check import check
from zcspec.spec.errors import SpecError
from zcspec.spec.examples import all_examples
from zcspec.spec.examples.build import RAW, Y_BUF, events, execution, launch, load, output
from zcspec.spec.registry import all_invariants, get


def test_exec_oracle_within_tolerance_passes_and_missing_oracle_is_not_exercised():
    assert get("EXEC-ORACLE").violations(execution(outputs=(output(diff=5e-5),))) == ()
    assert not get("EXEC-ORACLE").exercised(execution(outputs=(output(),)))


def test_exec_v1_eq_v2_without_peer_is_not_exercised():
    assert not get("EXEC-V1-EQ-V2").exercised(execution(outputs=(output(),)))


def test_exec_no_fault_during_load_is_reported():
    ld = load(events=events(dict(kind="fault", task=7, address=0x10, message="null page")))
    (v,) = get("EXEC-NO-FAULT").violations(execution(ld))
    assert v.culprit == "task 7"


def test_exec_no_leak_load_allocations_count_and_user_buffers_do_not():
    ld = load(events=events(dict(kind="alloc", address=0x10000, size=4096, owner="model", purpose="feature map")))
    obs = execution(ld, evs=events(dict(kind="alloc", address=Y_BUF, size=RAW, owner="user"), launch(),
                                   dict(kind="unload")))
    (v,) = get("EXEC-NO-LEAK").violations(obs)
    assert v.culprit == "allocation 0x10000"


def test_exec_failed_call_no_change_unmarked_failure_covers_the_whole_trace():
    obs = execution(load("v2"), evs=events(dict(kind="alloc", address=0xA0000, size=512, owner="runtime")), ok=False)
    (v,) = get("EXEC-FAILED-CALL-NO-CHANGE").violations(obs)
    assert v.culprit == "allocation 0xa0000"


def test_check_applies_by_kind_and_carries_load_invariants_into_executions():
    ex = all_examples()["V1-REUSE-ZC-MEMORY"].violates
    report = check(execution(ex))
    assert "V1-REUSE-ZC-MEMORY" in report.violated()
    assert set(report.applied) == {i.id for i in all_invariants() if i.applies_to in ("execution", "load")}
    assert not any(i.startswith("LAYOUT") for i in report.applied)


def test_report_is_printable_and_json():
    report = check(all_examples()["EXEC-NO-LEAK"].violates)
    assert not report.ok and "EXEC-NO-LEAK: allocation 0xb0000" in str(report)
    data = json.loads(report.to_json())
    assert data["ok"] is False and data["violations"][0]["invariant_id"] == "EXEC-NO-LEAK"


def test_check_rejects_what_is_not_an_observation():
    with pytest.raises(SpecError, match="cannot check a dict"):
        check({"order": []})


def test_check_with_a_chosen_subset():
    report = check(all_examples()["EXEC-NO-LEAK"].violates, invariants=[get("EXEC-NO-FAULT")])
    assert report.applied == ("EXEC-NO-FAULT",) and report.ok


def test_every_predicate_copes_with_any_well_typed_observation():
    """A malformed-but-typed observation gives violations or nothing, never a crash in a predicate."""
    from hypothesis import given, strategies as st
    from tests.helpers.spec_strategies import plans, values

    from zcspec.spec.observables import ExecutionObservation, LoadObservation, ModelFileObservation

    @given(st.one_of(plans(), values(ExecutionObservation), values(LoadObservation), values(ModelFileObservation)))
    def total(obs):
        report = check(obs)
        assert set(report.exercised) <= set(report.applied)
        assert {v.invariant_id for v in report.violations} <= set(report.applied)

    total()
