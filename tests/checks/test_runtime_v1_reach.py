"""verify's runs that reach runtime v1 code no other run reached (benchmarks/verify_reach.py): two models
sharing one session's feature-map memory (checks/execution/v1.py ``session_peer``, verify_cases.py
SESSION_PEER_RUNS) and a caller's mistakes no other run makes (CALLER_MISTAKE_MODELS: a misaligned buffer,
no buffer at all for an output, a call after the unload). Each passes on the real runtime, and a runtime with
a planted bug on a statement only it reaches fails it through a claim (or crashes)."""
from __future__ import annotations

import inspect
import types

import pytest

from zcspec.checks import verify_cases as C
from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import v1_options
from zcspec.checks.verify import VerifyConfig, VerifyResult
from zcspec.checks.verify_one_case import check_case
from zcspec.impl.runtime.v1 import active_memory, bind, loaded
from zcspec.impl.runtime.v1 import execute as execute_module

PEER = "shared with a peer"
MISALIGNED = "misaligned"
MISSING = "no buffer for an output"


def _run(models: tuple, marker: str) -> VerifyResult:
    """verify's execution cases of ``models`` whose label contains ``marker``, checked as verify checks them."""
    result = VerifyResult()
    for case, scenario in C.zoo_cases(VerifyConfig(models=models, kinds=("execution",))):
        if marker in case:
            check_case(result, case, scenario, prove=False)
    return result


def _failing(result: VerifyResult) -> list[str]:
    return ([f"{f.case}: {f.violation.invariant_id}" for f in result.findings] + [f"{c}: {e}" for c, e in result.errors]
            + [f"{n.run}: {n.reason}" for n in result.tally.notes if n.failed])


def test_the_session_peer_runs_pass_and_are_judged():
    result = _run(C.SESSION_PEER_MODELS, PEER)
    assert not _failing(result), _failing(result)
    assert result.tally.cases == len(C.SESSION_PEER_MODELS) * len(C.SESSION_PEER_RUNS)
    # the run's calls and the peer's call: each valid call is held to success and to the oracle
    assert result.tally.exercised["V1-VALID-CALL-SUCCEEDS"] >= 3 * len(C.SESSION_PEER_MODELS)
    assert result.tally.exercised["EXEC-ORACLE"] >= 3 * len(C.SESSION_PEER_MODELS)


def test_a_session_allocator_that_frees_its_blocks_while_a_model_still_holds_them_fails(monkeypatch):
    """ActiveMemoryAllocator.free_memory without its last-holder check: the peer's unload frees the memory
    the run's model still computes in (or the run's unload the peer's). One holder per session, as every
    other run has, cannot tell the difference."""
    def free_memory(self):
        with self._call("free_memory"):
            self.used_count = max(self.used_count - 1, 0)
            for block in self.blocks:
                self._free(block.addr)
            self.blocks.clear()
            self.maximum_active_addr = self.peak_size = 0

    monkeypatch.setattr(active_memory.ActiveMemoryAllocator, "free_memory", free_memory)
    result = _run(("builtin:atomic_clean",), PEER)
    failed = {f.case for f in result.findings}
    assert len(failed) == len(C.SESSION_PEER_RUNS), _failing(result)
    assert {f.violation.invariant_id for f in result.findings} >= {"V1-VALID-CALL-SUCCEEDS"}


def test_a_block_that_hands_out_more_than_it_has_left_fails(monkeypatch):
    """A second load takes the session's existing blocks (_from_blocks): a block that no longer checks its
    room hands the run's model memory past its end."""
    def take(self, size):
        self.used_size += size
        return self.addr + self.used_size - size

    monkeypatch.setattr(active_memory._ActiveBlock, "take", take)
    assert _failing(_run(("builtin:atomic_clean",), PEER))


def test_the_caller_mistake_runs_are_refused_and_the_retries_pass():
    result = _run(C.CALLER_MISTAKE_MODELS, "then a retry")
    assert not _failing(result), _failing(result)
    assert result.tally.cases == 2 * len(C.CALLER_MISTAKE_MODELS)
    assert result.tally.exercised["CALL-INVALID-REFUSED"] >= len(C.CALLER_MISTAKE_MODELS)


def test_a_runtime_that_no_longer_refuses_a_misaligned_buffer_fails(monkeypatch):
    """bind.py's alignment check weakened (every element taken as one byte): the misaligned call runs and
    its kernel faults on the device."""
    monkeypatch.setattr(bind, "dtypes", types.SimpleNamespace(get=lambda name: types.SimpleNamespace(bits=8)))
    result = _run(C.CALLER_MISTAKE_MODELS, MISALIGNED)
    assert {f.violation.invariant_id for f in result.findings} == {"EXEC-NO-FAULT"}, _failing(result)
    assert len({f.case for f in result.findings}) == len(C.CALLER_MISTAKE_MODELS)


def test_a_runtime_that_runs_a_call_after_the_unload_fails(monkeypatch):
    """execute's check of an unloaded model dropped: the call after the unload runs on the freed argument
    tables and feature map. The caller's transcription of that call (checks/execution/api_misuse.py) shows
    no refusal with GE's code: API-MISUSE-REFUSED (the checker used to observe it only when the runtime kept
    a record of it, and judged it by the fault)."""
    real = execute_module.execute

    def execute(lm, inputs, outputs, batch=None):
        was, lm.state.unloaded = lm.state.unloaded, False
        try:
            return real(lm, inputs, outputs, batch)
        finally:
            lm.state.unloaded = was

    monkeypatch.setattr(loaded, "execute", execute)
    result = _run(("builtin:atomic_clean",), MISSING)
    assert "API-MISUSE-REFUSED" in {f.violation.invariant_id for f in result.findings}, _failing(result)


def test_a_runtime_that_takes_no_buffer_for_one_crashes_verify(monkeypatch):
    """bind.py's check that each I/O was given a UserBuffer deleted: the call crashes on the missing buffer,
    which verify reports as an error."""
    source = inspect.getsource(bind._bind_one)
    check = ('    if not isinstance(b, UserBuffer):\n        raise InvalidParam(f"expected a UserBuffer for {z.role} '
             '{z.index}, got {type(b).__name__}", buffer=z.name)\n')
    assert check in source
    namespace = dict(vars(bind))
    exec(compile(source.replace(check, ""), bind.__file__, "exec"), namespace)
    monkeypatch.setattr(bind, "_bind_one", namespace["_bind_one"])
    result = _run(("builtin:atomic_clean",), MISSING)
    assert result.errors and "AttributeError" in str(result.errors[0][1]), _failing(result)


@pytest.mark.parametrize("run, key", [
    ({"session_peer": 1}, "session_peer"),                                     # no session to share
    ({"static_memory_policy": "2", "session_peer": True}, "session_peer"),     # not an integer
    ({"static_memory_policy": "2", "session_peer": 3, "calls": 2}, "session_peer"),   # past the run's calls
    ({"static_memory_policy": "2", "session_peer": -1}, "session_peer"),
    ({"api": "acl", "after_unload": True}, "after_unload"),
    ({"api": "acl", "missing": ["x"]}, "missing"),
    ({"missing": [0]}, "missing"),
])
def test_a_bad_session_peer_is_refused_naming_the_key(run, key):
    with pytest.raises(ScenarioError, match=key):
        v1_options.options_of({"runtime": "v1", **run})
