"""Bad calls to the ACL entry points (checks/acl_refusal_cases.py): the real facade refuses each with the C
API's code and changes nothing; facades that accept, refuse late or refuse with side effects fail them, and
verify reports them as errors of the run."""
from __future__ import annotations

import pytest

from zcspec.checks import verify as V
from zcspec.checks.acl_refusal_cases import (ACL_ERROR_INVALID_PARAM, acl_refusal_cases, check_acl_refusal)
from zcspec.impl.runtime import acl
from zcspec.impl.runtime.v1.errors import InvalidParam, ModelUnloadedError

CASES = {c.label: c for c in acl_refusal_cases()}


@pytest.mark.parametrize("label", sorted(CASES))
def test_the_real_facade_refuses_each_bad_call_and_changes_nothing(label):
    assert check_acl_refusal(CASES[label]) == []


def test_every_entry_point_that_takes_parameters_is_put_to_the_test():
    calls = {c.label.split()[0] for c in CASES.values()}
    assert {"aclrtMalloc", "aclrtFree", "aclrtMemcpy", "aclmdlLoadFromMem", "aclmdlQuerySizeFromMem",
            "aclmdlLoadFromMemWithMem", "aclmdlSetConfigOpt", "aclmdlLoadWithConfig", "aclmdlExecute",
            "aclmdlSetDynamicBatchSize", "aclmdlUnload"} <= calls


def test_a_zero_sized_malloc_that_is_accepted_fails(monkeypatch):
    monkeypatch.setattr(acl.Acl, "rt_malloc", lambda self, size: self.alloc.malloc(max(size, 1), "aclrtMalloc",
                                                                                    owner="user"))
    assert "accepted" in check_acl_refusal(CASES["aclrtMalloc size 0"])[0]


def test_a_copy_checked_against_dest_max_only_after_it_ran_fails(monkeypatch):
    def late(self, dst, dst_max, src, count, kind):
        self.device.memcpy(dst, src, min(count, dst_max), acl.MEMCPY_KINDS[kind])
        if count > dst_max:
            raise InvalidParam("count exceeds destMax")
    monkeypatch.setattr(acl.Acl, "rt_memcpy", late)
    problems = check_acl_refusal(CASES["aclrtMemcpy count above destMax"])
    assert any("effects on the device" in p for p in problems), problems


def test_an_unknown_model_id_that_unloads_another_model_fails(monkeypatch):
    def unload(self, model_id):
        victim = next(iter(self._models.values()))
        victim.unload()
        raise ModelUnloadedError(f"id {model_id}")
    monkeypatch.setattr(acl.Acl, "mdl_unload", unload)
    problems = check_acl_refusal(CASES["aclmdlUnload unknown model id"])
    assert problems and "effects on the device" in problems[0]


def test_a_refusal_with_the_wrong_code_fails(monkeypatch):
    real = acl.Acl.mdl_set_dynamic_batch

    def wrong_code(self, model_id, inputs, batch):
        try:
            real(self, model_id, inputs, batch)
        except Exception as e:
            raise InvalidParam(str(e)) from e
    monkeypatch.setattr(acl.Acl, "mdl_set_dynamic_batch", wrong_code)
    problems = check_acl_refusal(CASES["aclmdlSetDynamicBatchSize on a model without branches"])
    assert problems and f"code {ACL_ERROR_INVALID_PARAM}" in problems[0]


def test_verify_reports_a_facade_that_accepts_any_config_value(monkeypatch):
    monkeypatch.setattr(acl.Acl, "mdl_set_config_opt", lambda self, h, attr, value: h.opts.__setitem__(attr, value))
    result = V.VerifyResult()
    V.check_acl_refusals(result, acl_refusal_cases())
    assert result.acl_refusals == (len(CASES), 3)
    assert {c for c, _ in result.errors} == {"ACL refusal aclmdlSetConfigOpt unknown attribute",
                                             "ACL refusal aclmdlSetConfigOpt ACL_MDL_WORKSPACE_MEM_OPTIMIZE=2",
                                             "ACL refusal aclmdlSetConfigOpt ZCSPEC_ZERO_COPY='no' (not a bool)"}
    # The claims, from the calls' transcriptions and ACL's argument table, find the same three.
    assert {(f.case.split(":")[0], f.violation.invariant_id) for f in result.findings} == {
        ("ACL refusal aclmdlSetConfigOpt unknown attribute", "API-MISUSE-REFUSED"),
        ("ACL refusal aclmdlSetConfigOpt ACL_MDL_WORKSPACE_MEM_OPTIMIZE=2", "API-MISUSE-REFUSED"),
        ("ACL refusal aclmdlSetConfigOpt ZCSPEC_ZERO_COPY='no' (not a bool)", "API-MISUSE-REFUSED")}
    assert not result.ok([])
