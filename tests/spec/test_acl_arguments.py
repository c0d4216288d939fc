"""Bad ACL calls judged by the API-misuse claims (spec/invariants/acl_arguments.py, api_calls.py): the ACL
refusal cases' calls, transcribed from the caller's side (checks/execution/acl_calls.py), are found misuses by
ACL's argument table, not by the cases' expectations; the real facade passes, and facades that accept a
misuse, refuse it after an effect, with another code or without naming it, fail the claims."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks.acl_refusal_cases import acl_refusal_cases, run_acl_refusal
from zcspec.checks.verify_api_misuse import check_acl_refusals
from zcspec.checks.verify_result import VerifyResult
from zcspec.impl.runtime import acl
from zcspec.impl.runtime.v1.errors import InvalidParam, ParamInvalid
from zcspec.spec.invariants.api_calls import misuses
from zcspec.spec.observables.api_call import ApiCallObservation, CallOutcome, DataBufferArgument, OptionArgument
from zcspec.spec.observables.trace import Event
from zcspec.spec.registry import get

CASES = {c.label: c for c in acl_refusal_cases()}
# What the table does not judge, and why (acl_arguments.py's doc): whether bytes are a model is the model file
# claims' to say, the work size a model needs is not in the call, running out of memory is no misuse.
UNJUDGED = {"aclmdlLoadFromMem bytes that are no model", "aclmdlLoadFromMem a truncated model",
            "aclmdlLoadFromMem a model compiled for another SoC",
            "aclmdlLoadFromMemWithMem work memory too small",
            "aclmdlLoadFromMemWithMem a feature map larger than the device's memory"}
CLAIMS = (get("API-MISUSE-REFUSED"), get("API-MISUSE-CHANGES-NOTHING"))


def _violations(label: str) -> list[str]:
    obs = run_acl_refusal(CASES[label]).observation
    return [f"{inv.id}: {v.message}" for inv in CLAIMS for v in inv.violations(obs)]


@pytest.mark.parametrize("label", sorted(CASES))
def test_each_case_s_call_is_a_misuse_by_the_table_and_the_real_facade_passes_the_claims(label):
    obs = run_acl_refusal(CASES[label]).observation
    assert obs is not None and obs.entry == label.split()[0]
    assert bool(misuses(obs)) == (label not in UNJUDGED), misuses(obs)
    assert not obs.outcome.ok
    assert [v for inv in CLAIMS for v in inv.violations(obs)] == []


def test_a_memcpy_that_ignores_dest_max_fails_the_claim(monkeypatch):
    real = acl.Acl.rt_memcpy
    monkeypatch.setattr(acl.Acl, "rt_memcpy", lambda self, d, m, s, n, k: real(self, d, max(m, n), s, n, k))
    (v,) = _violations("aclrtMemcpy count above destMax")
    assert v.startswith("API-MISUSE-REFUSED") and "returned although" in v and "destMax 16" in v


def test_an_execute_that_runs_an_id_the_caller_does_not_hold_fails_the_claim(monkeypatch):
    real = acl.Acl.mdl_execute
    monkeypatch.setattr(acl.Acl, "mdl_execute", lambda self, mid, i, o: real(self, min(self._models), i, o))
    (v,) = _violations("aclmdlExecute unknown model id")
    assert "model id 101, which the caller does not hold" in v


def test_a_malloc_refused_after_it_allocated_fails_the_claim(monkeypatch):
    real = acl.Acl.rt_malloc

    def leaky(self, size):
        if size <= 0:
            self.device.malloc(64, tag="user leak")
            raise InvalidParam(f"size={size} must be positive")
        return real(self, size)
    monkeypatch.setattr(acl.Acl, "rt_malloc", leaky)
    (v,) = _violations("aclrtMalloc size 0")
    assert v.startswith("API-MISUSE-CHANGES-NOTHING") and "alloc" in v


def test_a_refusal_with_another_code_or_naming_nothing_fails_the_claim(monkeypatch):
    monkeypatch.setattr(acl.Acl, "rt_free", lambda self, ptr: (_ for _ in ()).throw(ParamInvalid("no")))
    (v,) = _violations("aclrtFree null")
    assert "code '145000'" in v and "caller error 100000" in v
    monkeypatch.setattr(acl.Acl, "rt_free", lambda self, ptr: (_ for _ in ()).throw(InvalidParam("no")))
    (v,) = _violations("aclrtFree null")
    assert "names none of the misuses" in v


def test_verify_reports_the_claims_on_a_facade_that_frees_anything(monkeypatch):
    monkeypatch.setattr(acl.Acl, "rt_free", lambda self, ptr: None)
    result = VerifyResult()
    check_acl_refusals(result, acl_refusal_cases())
    # The freed-memory case's own setup free did nothing either: the trace shows its address still live,
    # so freeing it again is no misuse (the case's expectations still fail it).
    assert {f.case for f in result.findings if f.violation.invariant_id == "API-MISUSE-REFUSED"} == {
        "ACL refusal aclrtFree null: aclrtFree", "ACL refusal aclrtFree of a host pointer: aclrtFree"}
    assert "ACL refusal aclrtFree of freed memory" in {c for c, _ in result.errors}


def _memcpy(src: int, count: int, kind: str = "ACL_MEMCPY_DEVICE_TO_HOST") -> ApiCallObservation:
    """An aclrtMemcpy from a 64-byte device allocation at 0x1000 into a 64-byte host one at 0x9000."""
    args = (("dst", 0x9000), ("destMax", 64), ("src", src), ("count", count), ("kind", kind))
    return ApiCallObservation(
        "memcpy", "v1", "aclrtMemcpy", CallOutcome(True),
        arguments=tuple(OptionArgument(n, type(v).__name__, repr(v)) for n, v in args),
        allocations=(Event(0, "alloc", address=0x1000, size=64, owner="user", space="device"),
                     Event(1, "alloc", address=0x9000, size=64, owner="user", space="host")))


def test_the_table_reads_the_trace_for_spaces_and_extents():
    assert misuses(_memcpy(0x1000, 64)) == {}
    assert set(misuses(_memcpy(0x1010, 64))) == {"source"}   # past the source's end
    assert set(misuses(_memcpy(0x1000, 64, "ACL_MEMCPY_HOST_TO_DEVICE"))) == {"source", "destination"}
    freed = _memcpy(0x1000, 8)
    gone = attrs.evolve(freed, allocations=freed.allocations + (Event(2, "free", address=0x1000),))
    assert set(misuses(gone)) == {"source"}


def test_an_execute_s_datasets_are_judged_against_the_model_file_and_the_trace():
    alloc = (Event(0, "alloc", address=0x1000, size=64, owner="user", space="device"),)
    good = ApiCallObservation("x", "v1", "aclmdlExecute", CallOutcome(True), model="net", model_inputs=1,
                              model_outputs=1, arguments=(OptionArgument("modelId", "int", "1"),), loaded=(1,),
                              datasets=(DataBufferArgument("inputs", 0x1000, 32), DataBufferArgument("outputs", 0x1020, 32)),
                              allocations=alloc)
    assert misuses(good) == {}
    assert set(misuses(attrs.evolve(good, loaded=()))) == {"modelId"}
    assert set(misuses(attrs.evolve(good, datasets=good.datasets[:1]))) == {"buffers"}
    assert set(misuses(attrs.evolve(good, datasets=(good.datasets[0], DataBufferArgument("outputs", 0, 32))))) == {
        "outputs[0]"}
    assert set(misuses(attrs.evolve(good, datasets=(good.datasets[0], DataBufferArgument("outputs", 0x1030, 32))))) \
        == {"outputs[0]"}


def test_an_acl_call_as_json_is_judged_from_the_command_line(tmp_path, capsys, monkeypatch):
    """The transcription round-trips through JSON: another facade's harness can write it and be judged."""
    from zcspec.checks.cli.main import main
    from zcspec.spec.observables import codec
    path = tmp_path / "call.json"
    path.write_text(codec.dumps(run_acl_refusal(CASES["aclmdlExecute an output into freed memory"]).observation))
    assert main(["spec", "--observation", str(path)]) == 0
    monkeypatch.setattr(acl.Acl, "mdl_execute", lambda self, mid, i, o: None)   # returns, checking nothing
    path.write_text(codec.dumps(run_acl_refusal(CASES["aclmdlExecute an output into freed memory"]).observation))
    assert main(["spec", "--observation", str(path)]) == 1
    assert "API-MISUSE-REFUSED: v1 aclmdlExecute call: returned although" in capsys.readouterr().out
