"""CALL-INVALID-REFUSED: a call whose buffers the spec finds invalid is refused with GE's error and changes
nothing. Each invalid binding the campaign draws is refused by both runtimes as they are; with one of
runtime v1's checks on the caller's buffers weakened (planted), the claim fails, in a fixed case and in
verify's campaign phase."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks import zoo
from zcspec.checks.campaign import run_campaign
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.checks.strategies.scenarios import scenarios
from zcspec.impl.runtime.v1 import bind, execute
from zcspec.impl.runtime.v1.errors import RuntimeV1Error
from zcspec.impl.runtime.v2 import kernels
from zcspec.spec.examples.build import RAW, X_BUF, Y_BUF, buffers, events, execution, load
from zcspec.spec.invariants.calls_refused import invalid_buffers

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


def test_host_memory_under_reuse_must_be_refused_only_for_io_bound_zero_copy():
    """GE walks only the refreshable I/O when it refuses host memory with an unbacked I/O region
    (ConstructZeroCopyIoActiveBaseAddrs); a copy-only I/O in host memory is copied, so refusing it is
    allowed (V1-VALID-CALL-SUCCEEDS) but not required."""
    def call(zero_copy_block: bool):
        ld = load(reuse_zero_copy_memory=True, zc_backed=False)
        ld = attrs.evolve(ld, io=(ld.io[0], attrs.evolve(ld.io[1], zero_copy_block=zero_copy_block)))
        evs = events(dict(kind="alloc", address=X_BUF, size=RAW, owner="user", space="device"),
                     dict(kind="alloc", address=Y_BUF, size=RAW, owner="user", space="host"),
                     dict(kind="call_begin", call="execute"), dict(kind="call_end", call="execute", ok=True))
        return execution(ld, bufs=buffers(y_placement="host"), evs=evs)
    assert set(invalid_buffers(call(True))) == {"y"}
    assert invalid_buffers(call(False)) == {}


def test_a_refusal_that_changes_the_loaded_model_is_caught_on_the_retry(monkeypatch):
    """Planted: runtime v1 refuses the call but first takes its buffers as the slots' current bases (nothing
    written, so the refused call itself shows no change). The caller's retry, the same buffers with their
    sizes fixed, then finds nothing to refresh and its tasks use the model's unbacked I/O region."""
    run = {"runtime": "v1", "calls": 2, "retry": True, "overhang": ["mid"]}
    assert [str(v) for r in _reports_all(run) for v in r.violations] == []
    real = execute.bind

    def leaky(lm, inputs, outputs):
        try:
            return real(lm, inputs, outputs)
        except RuntimeV1Error:
            for z, b in zip(lm.io, list(inputs) + list(outputs)):
                if b is not None and b.addr and z.key in lm.state.active:
                    lm.state.active[z.key] = b.addr
            raise
    monkeypatch.setattr(execute, "bind", leaky)
    refused, retry = _reports_all(run)
    assert refused.violations == ()                      # the refused call wrote nothing
    assert "EXEC-NO-FAULT" in retry.violated() and "V1-VALID-CALL-SUCCEEDS" in retry.violated()


def _reports_all(run: dict):
    return evaluate(Scenario("execution", zoo.load(GRAPH), runtime={"runs": [run]}))


def test_memory_the_trace_does_not_show_is_not_judged():
    """Buffers allocated before the load (a reloaded model, a caller's pool) have no alloc event in the
    call's trace: the spec cannot tell where their allocation ends, so it requires no refusal; a buffer
    starting in an allocation the trace shows freed, or reaching past one it shows live, it does."""
    begin, end = dict(kind="call_begin", call="execute"), dict(kind="call_end", call="execute", ok=True)
    unseen = execution(evs=events(begin, end))
    assert invalid_buffers(unseen) == {}
    freed = execution(evs=events(dict(kind="alloc", address=X_BUF, size=RAW, owner="user", space="device"),
                                 dict(kind="free", address=X_BUF), begin, end))
    assert "freed" in invalid_buffers(freed)["x"]
    short = execution(evs=events(dict(kind="alloc", address=X_BUF, size=RAW - 8, owner="user", space="device"),
                                 begin, end))
    assert "past the end" in invalid_buffers(short)["x"]


# A short input beside a bad output: the call is refused naming either; neither mode's output claim asks
# for more (V2-DEFAULT-FALLBACK's fallback that succeeds, V2-AZC-REJECT's error naming the output).
BOTH_BAD = {
    "default mode": {"runtime": "v2", "input_sizes": {"big": 1000}, "output_sizes": {"add_7:0": 0}},
    "always_zero_copy": {"runtime": "v2", "always_zero_copy": True, "input_sizes": {"big": 1000},
                         "output_sizes": {"add_7:0": 4}},
}


@pytest.mark.parametrize("run", BOTH_BAD.values(), ids=BOTH_BAD.keys())
def test_a_call_with_a_bad_input_and_a_bad_output_is_refused_naming_either(run):
    reports = _reports_all(run)
    assert any(CLAIM in r.exercised for r in reports)
    assert [str(v) for r in reports for v in r.violations] == []
    if run.get("always_zero_copy"):
        assert any("V2-AZC-REJECT" in r.exercised for r in reports)


def test_a_v2_that_reads_a_short_input_is_caught_beside_a_bad_output(monkeypatch):
    """Planted: SplitDataTensor no longer checks the input's size. In the default mode the call then runs,
    falling back for the null output, and CALL-INVALID-REFUSED says the short input should have stopped it.
    (Under always_zero_copy the call is still refused, naming the output: what the spec allows.)"""
    run = BOTH_BAD["default mode"]
    real = kernels.KERNELS["SplitDataTensor"]

    def unchecked(frame, node, args):
        (tensor,) = args
        if tensor is not None and tensor.addr and tensor.size < node.attr("nbytes"):
            tensor = attrs.evolve(tensor, size=node.attr("nbytes"))   # the size check sees a large enough buffer
        return real(frame, node, (tensor,))
    monkeypatch.setitem(kernels.KERNELS, "SplitDataTensor", unchecked)
    found = {v.invariant_id for r in _reports_all(run) for v in r.violations}
    assert CLAIM in found, found
