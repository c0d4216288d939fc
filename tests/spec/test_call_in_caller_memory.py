"""A caller's I/O buffer inside the work or weight memory it gave the model is invalid: runtime v1 must refuse
the call (CALL-INVALID-REFUSED) and V1-VALID-CALL-SUCCEEDS never takes it for a valid one. The caller's
memory was allocated before the load, so the trace's allocations alone did not tell, and a runtime v1 that
dropped the check (bind.py ``_check_overlaps`` on the caller's work and weight) wrote outputs into its own
feature map with verify passing. verify now places a buffer there on every run (verify_cases.py
IN_WORK_MEMORY_RUNS); the real runtime refuses it, the planted runtime fails the claim."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks import zoo
from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution.v1_options import options_of
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.checks.verify import VerifyResult
from zcspec.checks.verify_cases import IN_WORK_MEMORY_MODELS, IN_WORK_MEMORY_RUNS
from zcspec.impl.runtime.v1 import bind
from zcspec.spec.check import check
from zcspec.spec.examples.build import FM, RAW, X_BUF, buffers, events, execution, launch
from zcspec.spec.invariants.calls_refused import invalid_buffers
from zcspec.spec.observables.load import RegionBinding
from tests.helpers.verify_cases import checked

CLAIM, VALID = "CALL-INVALID-REFUSED", "V1-VALID-CALL-SUCCEEDS"
MARKER = "buffer in the work memory"


# -- the spec, on hand-built observations (the small model of spec/examples/build.py: input x, output y) -------

_WORK = RegionBinding("work", FM, 0x1000)
_X_ALLOC = dict(kind="alloc", address=X_BUF, size=RAW, owner="user", space="device")
_BEGIN = dict(kind="call_begin", call="execute")


def _in_work(*, ok: bool, caller_memory=(_WORK,), work_traced: bool = False, y_placement: str = "device"):
    """y's buffer at the start of the caller's work memory; x's in a live allocation the trace shows. With
    ``work_traced`` the work memory is an allocation the trace shows (one the caller moved the work memory to
    after the load); otherwise it predates the load, as at a load with the caller's memory."""
    work = (dict(kind="alloc", address=FM, size=0x1000, owner="user", space=y_placement),) if work_traced else ()
    body = (launch(writes=((FM, RAW, "y"),)), dict(kind="call_end", call="execute", ok=True)) if ok else (
        dict(kind="error", io="y", code="145000"), dict(kind="call_end", call="execute", ok=False))
    obs = execution(bufs=buffers(y_address=FM, y_placement=y_placement), evs=events(_X_ALLOC, *work, _BEGIN, *body),
                    slots=((0, 0, X_BUF), (0, 1, FM)) if ok else (), ok=ok, culprit=None if ok else "y")
    return attrs.evolve(obs, caller_memory=caller_memory)


def test_a_buffer_in_the_callers_work_memory_is_invalid_naming_the_buffer_and_the_memory():
    why = invalid_buffers(_in_work(ok=False))
    assert set(why) == {"y"}
    assert "caller's work memory" in why["y"] and hex(FM) in why["y"], why


def test_accepting_it_breaks_the_claim_and_refusing_it_is_clean():
    accepted = check(_in_work(ok=True))
    assert CLAIM in accepted.violated(), str(accepted)
    assert any("was not refused" in v.message for v in accepted.violations if v.invariant_id == CLAIM)
    refused = check(_in_work(ok=False))
    assert CLAIM in refused.exercised and refused.ok, str(refused)


def test_a_moved_work_memory_the_trace_shows_is_still_not_valid_for_io():
    """After a move the work memory is a live allocation of the caller in the trace: only the caller's memory
    in the observation tells it apart, and both claims read it from the one home (runtime_v1_buffers.py)."""
    refused = check(_in_work(ok=False, work_traced=True))
    assert refused.ok, str(refused)
    assert CLAIM in refused.exercised and VALID not in refused.exercised
    assert CLAIM in check(_in_work(ok=True, work_traced=True)).violated()


def test_without_the_callers_memory_or_on_the_host_nothing_is_required():
    assert invalid_buffers(_in_work(ok=False, caller_memory=None)) == {}   # the observer does not know it
    assert invalid_buffers(_in_work(ok=False, caller_memory=())) == {}     # the runtime allocated it
    assert invalid_buffers(_in_work(ok=False, work_traced=True, y_placement="host")) == {}   # another space


# -- the run key --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("run", [{"runtime": "v1", "work_memory": True, "buffer_in_work_memory": "weights"},
                                 {"runtime": "v1", "buffer_in_work_memory": "input"}])
def test_the_run_key_is_checked(run):
    with pytest.raises(ScenarioError) as e:
        options_of(run)
    assert e.value.key == "buffer_in_work_memory"


# -- verify's fixed runs, on the real runtime and on one that trusts the caller's memory -------------------------

def _verify() -> VerifyResult:
    return checked(IN_WORK_MEMORY_MODELS, MARKER, kinds=None)


def test_verify_runs_put_the_claim_to_the_test_and_the_runtime_refuses():
    result = _verify()
    assert not result.findings and not result.errors and not result.failed_calls
    assert result.tally.cases == len(IN_WORK_MEMORY_RUNS) * len(IN_WORK_MEMORY_MODELS)
    # input: the refused call (the retry is valid); output: both calls, the second after a move
    assert result.tally.exercised[CLAIM] >= 3 * len(IN_WORK_MEMORY_MODELS)
    assert result.tally.exercised[VALID] >= len(IN_WORK_MEMORY_MODELS)   # each retry


def test_runtime_v1_refuses_it_through_the_acl_entry_points_too():
    run = {"runtime": "v1", "api": "acl", "work_memory": True, "weight_memory": True, "buffer_in_work_memory": "input"}
    reports = evaluate(Scenario("execution", zoo.load("builtin:atomic_clean"), runtime={"runs": [run]}))
    assert any(CLAIM in r.exercised for r in reports)
    assert [str(v) for r in reports for v in r.violations] == []


def test_a_runtime_that_trusts_a_buffer_in_the_callers_memory_fails_verify(monkeypatch):
    """Planted: bind.py's check of the buffers against the caller's work and weight memory is gone (the model's
    own allocations and the I/O overlaps are still checked): the call runs on a buffer in the feature map."""
    real = bind._check_overlaps

    def trusting(lm, bindings):
        class WithoutCallerMemory:
            def model_ranges(self):
                return [r for r in lm.model_ranges() if r not in lm.state.user_ranges]
        real(WithoutCallerMemory(), bindings)
    monkeypatch.setattr(bind, "_check_overlaps", trusting)
    result = _verify()
    failed = {f.case for f in result.findings}
    assert len(failed) == result.tally.cases == len(IN_WORK_MEMORY_RUNS) * len(IN_WORK_MEMORY_MODELS), failed
    found = [f.violation for f in result.findings]
    assert CLAIM in {v.invariant_id for v in found}
    assert any("was not refused" in v.message and "caller's work memory" in v.message for v in found), \
        [str(v) for v in found]
