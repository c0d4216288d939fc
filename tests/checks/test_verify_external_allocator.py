"""verify drives runtime v2 with a caller's external allocator that returns null (out of memory) on one
request, between two calls with a working one: before, the zoo's allocators never failed, so a v2 that
used the null block (``ExternalAllocator.malloc`` without its null check) or kept the failed call's
blocks passed verify. The failed call is judged by the spec from the device trace and the user's
buffers (EXEC-FAILED-CALL-NO-CHANGE and friends), the call after it by the oracle."""
from __future__ import annotations

import pytest

from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import check_runtime
from zcspec.checks.execution.v2 import FAILS_AT
from zcspec.checks.scenario import Scenario, observe
from zcspec.checks.verify import VerifyConfig, VerifyResult
from zcspec.checks.verify_result import MIN_DISTINCT
from zcspec.checks.verify_cases import EXTERNAL_ALLOC_FAILS_AT, EXTERNAL_ALLOC_MODELS, TRUST_SHAPE_MODELS, zoo_cases
from zcspec.checks.verify_one_case import check_case
from zcspec.checks.zoo import load
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.runtime.v2.allocators import ExternalAllocator, align_size
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.tensors import MemBlock

CASE = "v2 external allocator fails at"


def _run() -> tuple[VerifyResult, list[str]]:
    result, cases = VerifyResult(), []
    for case, scenario in zoo_cases(VerifyConfig(models=EXTERNAL_ALLOC_MODELS, proofs=False)):
        if CASE in case:
            cases.append(case)
            check_case(result, case, scenario, prove=False)
    return result, cases


def _unchecked_malloc(self, size: int, tag: str = "", io: str = "") -> MemBlock:
    """ExternalAllocator.malloc without its null check: the hook's 0 becomes a block at address 0."""
    block = MemBlock(self, int(self._alloc(align_size(size))), align_size(size), "device", tag, io)
    self._live[block.addr] = block
    if self.listener:
        self.listener("alloc", block)
    return block


def test_failing_allocator_cases_are_clean_and_judged():
    result, cases = _run()
    assert len(cases) == len(EXTERNAL_ALLOC_MODELS) * len(EXTERNAL_ALLOC_FAILS_AT)
    assert not result.findings and not result.errors and not result.failed_calls
    assert result.tally.exercised["EXEC-FAILED-CALL-NO-CHANGE"] >= len(cases)
    assert result.tally.exercised["EXEC-ORACLE"] and result.tally.exercised["EXEC-NO-LEAK"]


def test_a_null_block_used_is_caught_in_every_case(monkeypatch):
    monkeypatch.setattr(ExternalAllocator, "malloc", _unchecked_malloc)
    result, cases = _run()
    found = {(f.case, f.violation.invariant_id) for f in result.findings}
    for case in cases:
        assert {(case, "EXEC-NO-FAULT"), (case, "EXEC-NO-OVERRUN")} <= found, case


def test_a_failed_call_that_keeps_its_blocks_is_caught(monkeypatch):
    abort = StreamExecutor._abort

    def keeping(self, frame, outputs, before, error):
        frame.release_all = lambda: None   # the blocks the failed call got are never given back
        return abort(self, frame, outputs, before, error)

    monkeypatch.setattr(StreamExecutor, "_abort", keeping)
    result, _ = _run()
    later = [f for f in result.findings if not f.case.endswith(f"{CASE} 1]")]   # request 1 fails: nothing held
    assert {f.violation.invariant_id for f in later} >= {"EXEC-FAILED-CALL-NO-CHANGE", "EXEC-NO-LEAK"}


def test_a_call_that_succeeds_on_a_null_allocation_errors(monkeypatch):
    """A runtime that asks again after the null (and so succeeds) did not fail the call: the run says so."""
    malloc = ExternalAllocator.malloc

    def asking_again(self, size, tag="", io=""):
        alloc = self._alloc
        self._alloc = lambda n: alloc(n) or alloc(n)
        try:
            return malloc(self, size, tag, io)
        finally:
            self._alloc = alloc

    monkeypatch.setattr(ExternalAllocator, "malloc", asking_again)
    result, cases = _run()
    assert {case for case, _ in result.errors} == set(cases)
    assert all("AssertionError" in why and "succeeded" in why for _, why in result.errors)


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "2", [1]])
def test_a_malformed_value_is_a_scenario_error_naming_the_key(value):
    with pytest.raises(ScenarioError, match=FAILS_AT) as e:
        check_runtime({"runtime": "v2", FAILS_AT: value})
    assert e.value.key == FAILS_AT


def test_with_threads_is_a_scenario_error():
    with pytest.raises(ScenarioError, match="threads") as e:
        check_runtime({"runtime": "v2", FAILS_AT: 1, "threads": 2})
    assert e.value.key == FAILS_AT


def test_a_request_the_call_never_makes_is_a_scenario_error():
    run = {"runtime": "v2", "always_external_allocator": True, FAILS_AT: 99}
    scenario = Scenario("execution", load("builtin:atomic_clean"), CompileOptions(), {"runs": [run]})
    with pytest.raises(ScenarioError, match="made only 3 allocator request") as e:
        observe(scenario)
    assert e.value.key == FAILS_AT


def test_an_unload_that_does_nothing_leaks(monkeypatch):
    """StreamExecutor.unload returning at once (no frees, no log entry): the run called unload, so the
    observation has the caller's unload and EXEC-NO-LEAK judges the model's memory still live."""
    monkeypatch.setattr(StreamExecutor, "unload", lambda self: None)
    result, _ = _run()
    leaks = {f.violation.invariant_id for f in result.findings}
    assert leaks == {"EXEC-NO-LEAK"}, [str(f.violation) for f in result.findings[:3]]


def test_the_fixed_trust_shape_runs_reach_the_floor_without_the_campaign():
    """V2-TRUST-SHAPE was judged only on the campaign's draws, and fell below the floor when they changed."""
    result = VerifyResult()
    for case, scenario in zoo_cases(VerifyConfig(models=TRUST_SHAPE_MODELS, kinds=("execution",), proofs=False)):
        if "trust_shape_on_out_tensor" in case:
            check_case(result, case, scenario, prove=False)
    assert not result.findings and not result.errors
    assert result.tally.distinct_count("V2-TRUST-SHAPE") >= MIN_DISTINCT
