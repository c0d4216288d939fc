"""Runtime v2 scenarios for the checker, and the corpus entry that keeps GE's overrun hazard detected."""
from __future__ import annotations

import os

import pytest

from checks.counterexample import Counterexample
from checks.replay import CORPUS, replay
from checks.scenario import Scenario, evaluate
from impl.runtime.v2.scenario import option_of
from tests.runtime_v2.test_executor import relu_neg_graph

HAZARD = os.path.join(CORPUS, "v2-ge-compat-unchecked-output-share.json")
V2 = ("V2-AZC-NO-ALLOC", "V2-AZC-REJECT", "V2-DEFAULT-FALLBACK", "V2-OUT-IS-USER", "V2-NO-OVERRUN",
      "EXEC-NO-FAULT", "EXEC-NO-LEAK", "EXEC-FAILED-CALL-NO-CHANGE")


def scenario(**runtime) -> Scenario:
    return Scenario("execution", relu_neg_graph(), runtime={"runtime": "v2", **runtime})


def test_the_corpus_keeps_the_ge_compat_overrun_as_a_documented_hazard():
    cx = Counterexample.load(HAZARD)
    assert cx.expect == "violation" and cx.invariant == "V2-NO-OVERRUN"
    result = replay(cx)
    assert result.still_fails and result.as_expected, result.summary()
    assert "ge_compat" in result.violations[0].message


@pytest.mark.parametrize("runtime", [
    {"output_sizes": {"neg_2:0": 300}},                                  # default: falls back
    {"output_sizes": {"neg_2:0": 0}},                                    # default: null buffer
    {"output_sizes": {"neg_2:0": 300}, "always_zero_copy": True},       # rejected, nothing touched
    {"output_sizes": {"neg_2:0": 0}, "always_zero_copy": True},
    {"output_placement": "host"},
    {"always_external_allocator": True, "enable_single_stream": True},
    {"zero_copy": True, "ge_compat": True},                              # a correct buffer is safe even in ge_compat
], ids=["fallback", "null", "azc-small", "azc-null", "host", "external", "ge-compat-ok"])
def test_same_buffers_without_the_hazard_satisfy_every_v2_invariant(runtime):
    [report] = evaluate(scenario(**runtime), V2)
    assert report.ok, str(report)
    assert report.exercised


def test_unknown_scenario_keys_are_rejected():
    with pytest.raises(ValueError, match="unknown keys \\['always_zero_cpy'\\]"):
        option_of({"runtime": "v2", "always_zero_cpy": True})
