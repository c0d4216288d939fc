"""verify's executions through the ACL entry points (checks/verify_cases.py ACL_RUNS, checks/execution/entries.py):
they pass on the real facade, and a facade that drops a config option or forgets a dataset's dynamic-batch
branch fails them."""
from __future__ import annotations

import pytest

from zcspec.checks import verify as V
from zcspec.checks import verify_cases as C
from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import v1_options
from zcspec.checks.verify_one_case import check_case
from zcspec.impl.runtime import acl

MODELS = C.ACL_MODELS


def _acl_result() -> V.VerifyResult:
    config = V.VerifyConfig(models=MODELS, kinds=("execution",))
    result = V.VerifyResult()
    for case, scenario in C.zoo_cases(config):
        if "api=" in case:
            check_case(result, case, scenario, prove=False)
    return result


def _failing(result: V.VerifyResult) -> list:
    return ([f"{f.case}: {f.violation.invariant_id}" for f in result.findings] + [c for c, _ in result.errors]
            + [f"{n.run}: {n.reason}" for n in result.tally.notes if n.failed])


def test_every_load_call_of_the_facade_runs_and_passes():
    result = _acl_result()
    assert not _failing(result)
    cases = {case for case, _ in C.zoo_cases(V.VerifyConfig(models=MODELS, kinds=("execution",))) if "api=" in case}
    assert len(cases) == len(C.ACL_RUNS) * (len(MODELS) - 1) + len(C.ACL_RUNS) * 2   # dynamic_batch: two branches
    assert result.tally.exercised["V1-REUSE-ZC-MEMORY"] >= 3 and result.tally.exercised["EXEC-ORACLE"] >= 3


def test_a_config_handle_that_drops_the_workspace_option_fails(monkeypatch):
    real = acl.Acl.mdl_set_config_opt

    def dropped(self, handle, attr, value):
        if attr != acl.ACL_MDL_WORKSPACE_MEM_OPTIMIZE:
            real(self, handle, attr, value)

    monkeypatch.setattr(acl.Acl, "mdl_set_config_opt", dropped)
    assert any("V1-REUSE-ZC-MEMORY" in f for f in _failing(_acl_result()))


def test_a_dataset_that_forgets_its_branch_fails(monkeypatch):
    monkeypatch.setattr(acl.Acl, "mdl_set_dynamic_batch", lambda self, mid, ds, batch: None)
    assert _failing(_acl_result())


def test_an_unknown_api_is_refused_naming_the_key():
    with pytest.raises(ScenarioError, match="api"):
        v1_options.options_of({"runtime": "v1", "api": "cuda"})


def test_a_facade_that_drops_the_unload_leaks(monkeypatch):
    """aclmdlUnload forgetting the model's unload: the model reports no unload, but the caller asked for
    one, so the device trace around that call (no frees) is what EXEC-NO-LEAK judges."""
    monkeypatch.setattr(acl.Acl, "mdl_unload", lambda self, model_id: self._models.pop(model_id))
    failing = _failing(_acl_result())
    assert failing and all("EXEC-NO-LEAK" in f for f in failing), failing


def test_a_facade_that_takes_host_buffers_for_device_ones_fails(monkeypatch):
    """Every host-placed call is then refused ('not inside one live device allocation'): before
    V1-VALID-CALL-SUCCEEDS, whose placement is the address space the trace shows, verify passed it."""
    from zcspec.impl.runtime.user_buffers import UserBuffer

    monkeypatch.setattr(acl.Acl, "_user_buffer", lambda self, z, b: UserBuffer(z.name, b.addr, b.size, "device"))
    found = {f.violation.invariant_id for f in _acl_result().findings}
    assert "V1-VALID-CALL-SUCCEEDS" in found, found


def test_valid_calls_are_put_to_the_test_and_invalid_ones_are_not():
    """V1-VALID-CALL-SUCCEEDS applies to the facade's good calls (device and host) and to none of its
    half-sized output buffers."""
    result = V.VerifyResult()
    config = V.VerifyConfig(models=("builtin:atomic_clean",), kinds=("execution",))
    exercised = {}
    for case, scenario in C.zoo_cases(config):
        if "api=" in case:
            before = result.tally.exercised["V1-VALID-CALL-SUCCEEDS"]
            check_case(result, case, scenario, prove=False)
            exercised[case] = result.tally.exercised["V1-VALID-CALL-SUCCEEDS"] - before
    assert not result.findings
    assert all(n == 0 for c, n in exercised.items() if "output_sizes" in c), exercised
    assert all(n > 0 for c, n in exercised.items() if "output_sizes" not in c), exercised
