"""verify loads models with the caller's own work and weight memory (GE's LoadModelFromData with memory
parameters), sized as aclmdlQuerySize reports: before, every load had the runtime allocate them, so the
caller-memory path of runtime v1 (its size checks, the regions placed in the caller's memory, the weights
copied there) could break with verify passing."""
from __future__ import annotations

import importlib

from zcspec.checks.verify import CALLER_MEMORY_MODELS, VerifyConfig, VerifyResult, _check_case, _zoo_cases

v1_load = importlib.import_module("zcspec.impl.runtime.v1.load")


def _run() -> VerifyResult:
    result = VerifyResult()
    for case, scenario in _zoo_cases(VerifyConfig(models=CALLER_MEMORY_MODELS, proofs=False)):
        if "caller" in case:
            _check_case(result, case, scenario, prove=False)
    return result


def test_loads_with_caller_memory_are_clean_and_judged():
    result = _run()
    assert not result.findings and not result.errors
    assert result.tally.cases >= 3 * len(CALLER_MEMORY_MODELS)
    assert result.tally.exercised["EXEC-ORACLE"] and result.tally.exercised["EXEC-READ-WRITTEN"]
    assert any("squeezenet" in n for n in CALLER_MEMORY_MODELS)   # weights and an oracle: a real network


def test_weights_never_copied_into_the_callers_memory_are_caught(monkeypatch):
    monkeypatch.setattr(v1_load, "_weight_image", lambda device, model, base: None)
    found = {f.violation.invariant_id for f in _run().findings}
    assert "EXEC-READ-WRITTEN" in found


def test_a_crash_in_the_callers_memory_check_is_caught(monkeypatch):
    """The mutant that survived verify: the work size read from the wrong field of (ptr, size)."""
    def broken(model, work, weight):
        if work is not None:
            work[2]
    monkeypatch.setattr(v1_load, "_check_caller_memory", broken)
    assert any("IndexError" in why for _, why in _run().errors)
