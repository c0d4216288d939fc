"""verify loads models with the caller's own work and weight memory (GE's LoadModelFromData with memory
parameters), sized as aclmdlQuerySize reports: before, every load had the runtime allocate them, so the
caller-memory path of runtime v1 (its size checks, the regions placed in the caller's memory, the weights
copied there) could break with verify passing. It also moves that work memory between calls
(ge.featureBaseRefreshable, update_work_memory), freeing the old memory as a caller may."""
from __future__ import annotations

import importlib

from zcspec.checks.verify import VerifyResult
from zcspec.checks.verify_cases import CALLER_MEMORY_MODELS, MOVED_WORK_MODELS
from tests.helpers.verify_cases import checked

v1_load = importlib.import_module("zcspec.impl.runtime.v1.load")
v1_loaded = importlib.import_module("zcspec.impl.runtime.v1.loaded")


def _run(models=CALLER_MEMORY_MODELS, marker: str = "caller") -> VerifyResult:
    """verify's cases of ``models`` whose label contains ``marker``, checked."""
    return checked(models, marker, kinds=None)


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


def _moved() -> VerifyResult:
    return _run(MOVED_WORK_MODELS, "moved")


def test_runs_that_move_the_work_memory_are_clean_and_judged():
    result = _moved()
    assert not result.findings and not result.errors and not result.failed_calls
    assert result.tally.cases == 2 * len(MOVED_WORK_MODELS)
    assert result.tally.applied["EXEC-ORACLE"] >= 6 * len(MOVED_WORK_MODELS)
    assert result.tally.exercised["EXEC-ORACLE"] and result.tally.exercised["V1-COPY-ONLY-ONCE"]


def test_a_move_that_keeps_the_old_feature_map_is_caught(monkeypatch):
    """update_work_memory that records the caller's new memory but leaves the base where it was: the
    tasks go on using the memory the caller freed."""
    def keeps_base(self, ptr, size):
        self.state.user_ranges.append(("caller work memory", ptr, ptr + size))
    monkeypatch.setattr(v1_loaded.LoadedModel, "update_work_memory", keeps_base)
    found = {f.violation.invariant_id for f in _moved().findings}
    assert {"EXEC-NO-FAULT", "EXEC-NO-OVERRUN"} <= found, found


def test_a_move_that_leaves_the_io_region_behind_is_caught(monkeypatch):
    """The bug these runs found: the I/O region in the work memory stayed at the old memory after a move,
    so the copy-only I/O (every I/O with zero copy off) was copied into freed memory."""
    monkeypatch.setattr(v1_loaded.RegionBases, "address",
                        lambda self, desc, fm: getattr(self, desc.region, 0) + desc.offset if desc.region != "feature_map"
                        else fm + desc.offset)
    found = {f.violation.invariant_id for f in _moved().findings}
    assert "EXEC-NO-FAULT" in found, found


def test_move_work_needs_caller_work_memory_and_a_refreshable_feature_map():
    import pytest

    from zcspec.checks.errors import ScenarioError
    from zcspec.checks.execution.v1 import options_of

    for run in ({"move_work": True, "feature_base_refreshable": True}, {"move_work": True, "work_memory": True},
                {"move_work": True, "work_memory": True, "feature_base_refreshable": True, "api": "acl"}):
        with pytest.raises(ScenarioError, match="move_work"):
            options_of({"runtime": "v1", **run})
