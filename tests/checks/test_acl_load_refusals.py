"""The ACL refusal cases that put runtime v1's load refusals to the test (checks/acl_refusal_cases.py): a model
compiled for another SoC, a handle holding ACL_MDL_WORKSPACE_MEM_OPTIMIZE=2, reuseZeroCopyMemory=1 with zero copy
off and a zero_copy that is not a bool, whose refusals (impl/runtime/v1/load.py, config.py) verify never ran, and
a feature map larger than the device's memory (a load failing on its first allocation, with GE's
ACL_ERROR_GE_MEMORY_ALLOCATION; the release of a session's memory on that path takes a session, which the facade
never passes). Each case is refused by the check it is aimed at, and a runtime or facade that drops that check
fails it (and verify)."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks import verify as V
from zcspec.checks.acl_refusal_cases import (ACL_ERROR_GE_MEMORY_ALLOCATION, _fixture, acl_refusal_cases,
                                             check_acl_refusal)
from zcspec.impl.runtime import acl
from zcspec.impl.runtime.v1 import config
from zcspec.impl.runtime.v1.errors import RuntimeV1Error

CASES = {c.label: c for c in acl_refusal_cases()}
SOC = "aclmdlLoadFromMem a model compiled for another SoC"
MEMORY = "aclmdlLoadFromMemWithMem a feature map larger than the device's memory"
REUSE_2 = "aclmdlLoadWithConfig a handle holding ACL_MDL_WORKSPACE_MEM_OPTIMIZE=2"
REUSE_COPY = "aclmdlLoadWithConfig reuseZeroCopyMemory=1 with zero copy off"
NOT_BOOL = "aclmdlLoadFromMem zero_copy='no' (not a bool)"

# Each case and words of the refusal it is aimed at (so it does not pass on some other, earlier refusal).
AIMED_AT = {
    SOC: "was compiled for SoC",
    MEMORY: "device memory for feature map",
    REUSE_2: "reuse_zero_copy_memory=2 must be 0",
    REUSE_COPY: "reuse_zero_copy_memory=1 needs zero_copy=True",
    NOT_BOOL: "zero_copy='no' must be a bool",
}


@pytest.mark.parametrize("label", sorted(AIMED_AT))
def test_each_load_case_is_refused_by_the_check_it_is_aimed_at_and_changes_nothing(label):
    f = _fixture()
    with pytest.raises(RuntimeV1Error, match=AIMED_AT[label]) as caught:
        CASES[label].call(f)
    assert caught.value.code == CASES[label].code
    assert check_acl_refusal(CASES[label]) == []


def test_the_feature_map_case_fails_on_the_load_s_first_allocation():
    """GE's code for it (ACL_ERROR_GE_MEMORY_ALLOCATION); the weights come from the caller, so nothing was
    allocated before the feature map: the device trace holds only the failed allocation's fault."""
    f = _fixture()
    mark = f.device.trace.mark()
    with pytest.raises(RuntimeV1Error) as caught:
        CASES[MEMORY].call(f)
    assert caught.value.code == ACL_ERROR_GE_MEMORY_ALLOCATION
    assert [type(e).__name__ for e in f.device.trace.since(mark)] == ["Fault"]


def test_a_runtime_that_loads_a_model_compiled_for_another_soc_fails(monkeypatch):
    real = acl.load

    def any_soc(device, model, options, **kw):   # the SoC check of load.py dropped
        here = attrs.evolve(model, options=attrs.evolve(model.options, soc=device.soc.name))
        return real(device, here, options, **kw)
    monkeypatch.setattr(acl, "load", any_soc)
    problems = check_acl_refusal(CASES[SOC])
    assert problems and problems[0].startswith("accepted"), problems
    result = V.VerifyResult()
    V.check_acl_refusals(result, acl_refusal_cases())
    assert result.acl_refusals == (len(CASES), 1)
    assert {c for c, _ in result.errors} == {f"ACL refusal {SOC}"}


def test_a_runtime_that_copies_through_an_unbacked_io_region_fails(monkeypatch):
    """reuseZeroCopyMemory=1 with zero copy off, no longer refused (config.py ``__attrs_post_init__``)."""
    real = config.LoadOptions.__attrs_post_init__

    def lax(self):
        if not self.zero_copy:
            return
        real(self)
    monkeypatch.setattr(config.LoadOptions, "__attrs_post_init__", lax)
    problems = check_acl_refusal(CASES[REUSE_COPY])
    assert problems and problems[0].startswith("accepted"), problems
    assert any("left" in p and "live" in p for p in problems), problems


def test_a_facade_that_takes_any_truthy_zero_copy_for_true_fails(monkeypatch):
    real = acl.LoadOptions
    monkeypatch.setattr(acl, "LoadOptions", lambda zero_copy=True, **kw: real(zero_copy=bool(zero_copy), **kw))
    problems = check_acl_refusal(CASES[NOT_BOOL])
    assert problems and problems[0].startswith("accepted"), problems


def test_a_runtime_that_reads_any_reuse_value_as_on_or_off_fails(monkeypatch):
    real = acl.LoadOptions
    monkeypatch.setattr(acl, "LoadOptions",
                        lambda reuse_zero_copy_memory=0, **kw: real(reuse_zero_copy_memory=min(reuse_zero_copy_memory, 1),
                                                                    **kw))
    problems = check_acl_refusal(CASES[REUSE_2])
    assert problems and problems[0].startswith("accepted"), problems
