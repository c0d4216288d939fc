"""CALL-INVALID-REFUSED: a call whose buffers the spec finds invalid is refused with GE's error and changes
nothing. Each invalid binding the campaign draws is refused by both runtimes as they are; with one of
runtime v1's checks on the caller's buffers weakened (planted), the claim fails, in a fixed case and in
verify's campaign phase."""
from __future__ import annotations

import pytest

from zcspec.checks import zoo
from zcspec.checks.campaign import run_campaign
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.checks.strategies.scenarios import scenarios
from zcspec.impl.runtime.v1 import bind

CLAIM = "CALL-INVALID-REFUSED"
GRAPH = "builtin:sized_inputs"   # inputs big, small, mid; outputs sigmoid_5:0, add_6:0, add_7:0

INVALID = {
    "past its allocation": {"runtime": "v1", "overhang": ["mid"]},
    "freed before the call": {"runtime": "v1", "dangling": ["add_6:0"]},
    "freed, through ACL": {"runtime": "v1", "dangling": ["big"], "api": "acl"},
    "below the raw size": {"runtime": "v1", "output_sizes": {"add_7:0": 255}},
    "null": {"runtime": "v1", "input_sizes": {"small": 0}},
    "host under reuseZeroCopyMemory": {"runtime": "v1", "placement": "host", "reuse_zero_copy_memory": 1},
    "an output sharing an input's bytes": {"runtime": "v1", "share": [["big", "sigmoid_5:0"]]},
    "v2: a null input": {"runtime": "v2", "input_sizes": {"mid": 0}},
    "v2: a short input": {"runtime": "v2", "input_sizes": {"big": 1000}},
    "v2 always_zero_copy: a host output": {"runtime": "v2", "always_zero_copy": True, "output_placement": "host"},
}


def _reports(run: dict):
    return evaluate(Scenario("execution", zoo.load(GRAPH), runtime={"runs": [run]}), (CLAIM,))


@pytest.mark.parametrize("run", INVALID.values(), ids=INVALID.keys())
def test_invalid_bindings_are_refused_and_change_nothing(run):
    reports = _reports(run)
    assert any(CLAIM in r.exercised for r in reports)
    assert [str(v) for r in reports for v in r.violations] == []


def test_valid_bindings_do_not_put_the_claim_to_the_test():
    for run in ({"runtime": "v1", "calls": 2}, {"runtime": "v1", "placement": "host"},
                {"runtime": "v2", "output_sizes": {"add_7:0": 0}}, {"runtime": "v1", "share": [["big", "mid"]]}):
        assert not any(CLAIM in r.exercised for r in _reports(run)), run


@pytest.mark.parametrize("check, run, says", [
    ("_check_live", INVALID["past its allocation"], "was not refused"),
    ("_check_live", INVALID["freed before the call"], "not GE's caller error"),
    ("_check_overlaps", INVALID["an output sharing an input's bytes"], "was not refused"),
])
def test_a_weakened_buffer_check_is_caught(monkeypatch, check, run, says):
    monkeypatch.setattr(bind, check, lambda *args: None)
    found = [v for r in _reports(run) for v in r.violations]
    assert found and all(v.invariant_id == CLAIM for v in found)
    assert any(says in v.message for v in found), [str(v) for v in found]


def test_verify_campaign_fails_through_the_claim_when_the_live_check_is_weakened(monkeypatch):
    """verify's campaign (its strategy and default seed, execution scenarios) meets an overhanging or
    freed buffer within 150 cases; with runtime v1 no longer checking that a buffer lies inside one live
    allocation, the case fails through CALL-INVALID-REFUSED."""
    monkeypatch.setattr(bind, "_check_live", lambda *args: None)
    result = run_campaign(scenarios(kinds=("execution",)), max_examples=150, seed=0, proofs=(), shrink=False)
    assert result.counterexample is not None
    assert CLAIM in result.tally.violated, dict(result.tally.violated)
