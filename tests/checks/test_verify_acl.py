"""verify's executions through the ACL entry points (checks/verify.py ACL_RUNS, checks/execution/entries.py):
they pass on the real facade, and a facade that drops a config option or forgets a dataset's dynamic-batch
branch fails them."""
from __future__ import annotations

import pytest

from zcspec.checks import verify as V
from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import v1
from zcspec.impl.runtime import acl

MODELS = V.ACL_MODELS


def _acl_result() -> V.VerifyResult:
    config = V.VerifyConfig(models=MODELS, kinds=("execution",))
    result = V.VerifyResult()
    for case, scenario in V._zoo_cases(config):
        if "api=" in case:
            V._check_case(result, case, scenario, prove=False)
    return result


def _failing(result: V.VerifyResult) -> list:
    return ([f"{f.case}: {f.violation.invariant_id}" for f in result.findings] + [c for c, _ in result.errors]
            + [f"{n.run}: {n.reason}" for n in result.tally.notes if n.failed])


def test_every_load_call_of_the_facade_runs_and_passes():
    result = _acl_result()
    assert not _failing(result)
    cases = {case for case, _ in V._zoo_cases(V.VerifyConfig(models=MODELS, kinds=("execution",))) if "api=" in case}
    assert len(cases) == len(V.ACL_RUNS) * (len(MODELS) - 1) + len(V.ACL_RUNS) * 2   # dynamic_batch: two branches
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
        v1.options_of({"runtime": "v1", "api": "cuda"})


def test_a_facade_that_drops_the_unload_leaks(monkeypatch):
    """aclmdlUnload forgetting the model's unload: the model reports no unload, but the caller asked for
    one, so the device trace around that call (no frees) is what EXEC-NO-LEAK judges."""
    monkeypatch.setattr(acl.Acl, "mdl_unload", lambda self, model_id: self._models.pop(model_id))
    failing = _failing(_acl_result())
    assert failing and all("EXEC-NO-LEAK" in f for f in failing), failing
