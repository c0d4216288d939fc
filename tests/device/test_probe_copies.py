"""Device probes put the device's synchronous copies to the test: a ``"via": "copy"`` access is a D2D
``Device.memcpy`` between the probe's scratch and its target (checks/strategies/device_probes.py), transcribed
as an access of no task (impl/device/observe.py) and judged by DEVICE-BOUNDS like a task's.

Planted here: Device.memcpy checking its destination without ``write=True`` (a D2D copy may then write
read-only memory), as the mutation run planted it at impl/device/device.py's ``_copy`` and verify missed."""
from __future__ import annotations

import random

from zcspec.checks.scenario import Scenario, observe
from zcspec.checks.strategies.device_probes import PROBE_GRAPH, fixed_programs, program
from zcspec.checks.verify import VerifyConfig, VerifyResult
from zcspec.checks.verify_cases import device_cases
from zcspec.checks.verify_one_case import check_case
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import memory
from zcspec.spec.check import check

_check = memory.AddressSpace.check


def _copy_destination_not_a_write(self, addr, nbytes, *, write=False, what="access", **kw):
    """The mutant: a copy's destination checked as a read (``write=True`` -> False)."""
    return _check(self, addr, nbytes, write=write and what != "copy destination", what=what, **kw)


def _verify_device_probes() -> VerifyResult:
    result = VerifyResult()
    for case, scenario in device_cases(VerifyConfig(models=(), kinds=("device",), proofs=False)):
        check_case(result, case, scenario, prove=False, phase="device")
    return result


def _copies(obs):
    return [e for e in obs.accesses() if e.task is None]


def _observation(steps):
    return observe(Scenario("device", PROBE_GRAPH, CompileOptions(), {"program": list(steps)}))[0]


def test_verify_probes_make_copies_the_device_runs_and_refuses_and_pass():
    result = _verify_device_probes()
    assert not result.findings and not result.errors, (result.findings[:3], result.errors[:3])
    refusals = set()
    for _, scenario in device_cases(VerifyConfig(models=(), kinds=("device",))):
        copies = _copies(_observation(scenario.runtime["program"]))
        assert any(e.refused is None for e in copies) and any(e.refused for e in copies)
        refusals |= {e.refused for e in copies}
    assert {"read_only", "out_of_bounds", "unmapped"} <= refusals


def test_verify_probes_catch_a_copy_that_may_write_read_only_memory(monkeypatch):
    monkeypatch.setattr(memory.AddressSpace, "check", _copy_destination_not_a_write)
    result = _verify_device_probes()
    bounds = [f for f in result.findings if f.violation.invariant_id == "DEVICE-BOUNDS"]
    assert bounds and all("synchronous copy" in str(f.violation) and "read-only" in str(f.violation)
                          for f in bounds), [str(f.violation) for f in result.findings[:5]]


def test_a_copy_is_transcribed_as_an_access_of_no_task_with_both_ranges():
    steps = [
        {"op": "malloc", "size": 100, "read_only": False},
        {"op": "malloc", "size": 64, "read_only": True},
        {"op": "read", "via": "copy", "handle": 1, "offset": 0, "nbytes": 64},    # runs
        {"op": "write", "via": "copy", "handle": 0, "offset": 4, "nbytes": 96},   # runs
        {"op": "write", "via": "copy", "handle": 1, "offset": 8, "nbytes": 8},    # read-only
        {"op": "read", "via": "copy", "handle": 0, "offset": 90, "nbytes": 20},   # past the end
        {"op": "free", "handle": 0},
        {"op": "write", "via": "copy", "handle": 0, "offset": 0, "nbytes": 4},    # freed
        {"op": "read", "via": "copy", "handle": None, "offset": 16, "nbytes": 4},  # an offset, not an address
        {"op": "write", "via": "copy", "handle": 1, "offset": 0, "nbytes": 0},    # nothing: no event
    ]
    obs = _observation(steps)
    ro, rw = [e for e in obs.events if e.kind == "alloc"][-2:][::-1]
    copies = _copies(obs)
    assert [e.refused for e in copies] == [None, None, "read_only", "out_of_bounds", "use_after_free", "unmapped"]
    assert copies[0].reads[0].address == ro.address and copies[0].reads[0].size == 64
    assert copies[1].writes[0].address == rw.address + 4 and copies[1].writes[0].size == 96
    assert copies[2].writes[0].address == ro.address + 8 and copies[2].reads[0].size == 8
    assert copies[3].reads[0].address == rw.address + 90 and copies[3].writes[0].size == 20
    assert copies[5].reads[0].address == 16
    report = check(obs)
    assert report.ok and "DEVICE-BOUNDS" in report.exercised, str(report)


def test_the_planted_copy_is_a_bounds_violation_of_a_single_probe(monkeypatch):
    monkeypatch.setattr(memory.AddressSpace, "check", _copy_destination_not_a_write)
    steps = [{"op": "malloc", "size": 64, "read_only": True},
             {"op": "read", "via": "kernel", "handle": 0, "offset": 0, "nbytes": 64},
             {"op": "write", "via": "kernel", "handle": 0, "offset": 0, "nbytes": 8},
             {"op": "write", "via": "copy", "handle": 0, "offset": 8, "nbytes": 8}]
    report = check(_observation(steps))
    assert [v.invariant_id for v in report.violations] == ["DEVICE-BOUNDS"], str(report)
    assert "synchronous copy" in str(report.violations[0])


def test_copy_steps_come_last_and_leave_the_earlier_draws_as_they_were():
    for seed in range(3):
        steps = program(random.Random(seed), 32, kernels=False)
        first = next(i for i, s in enumerate(steps) if s.get("via") == "copy")
        copies = steps[first:-4]   # then the four mallocs of bad arguments (DEVICE-MALLOC-ARGS)
        assert all(s.get("via") == "copy" for s in copies) and len(copies) >= 4
        assert all(s["op"] == "malloc" and (s["size"] <= 0 or "align" in s) for s in steps[-4:])
        assert steps[first - 1]["op"] == "malloc"   # the allocator steps end with a malloc
    assert fixed_programs(1)[0][0] == program(random.Random(0), 32)[0]
