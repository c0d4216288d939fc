"""DEVICE-BOUNDS: the device refuses exactly the illegal accesses of a probe program, and
``zcspec verify`` notices when it does not (a loosened bounds check is one of issue 13's bugs).

Each loosening below is installed with monkeypatch on impl/device/memory.py's AddressSpace;
the real device must pass the same probes clean."""
from __future__ import annotations

import bisect

import numpy as np
import pytest
from hypothesis import given, settings

from zcspec.checks.errors import ScenarioError
from zcspec.checks.scenario import Scenario, observe
from zcspec.checks.device_probe_run import run_program
from zcspec.checks.strategies.device_probes import PROBE_GRAPH, fixed_programs, programs
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import memory
from zcspec.impl.device.observe import ProbeTraceError, observe_device
from zcspec.spec.check import check
from zcspec.spec.observables import dumps, loads
from zcspec.spec.observables.device import DeviceObservation
from tests.helpers.spec_strategies import values

SLACK = 64
_fast_offset, _check = memory.AddressSpace.fast_offset, memory.AddressSpace.check


def _past_end_fast_offset(self, addr, nbytes, write):
    """fast_offset accepting an access that runs up to SLACK bytes past the end of an allocation."""
    i = bisect.bisect_right(self._starts, addr) - 1
    if i < 0 or nbytes <= 0:
        return -1
    a = self._live[self._starts[i]]
    if addr + nbytes > a.end + SLACK or (write and a.read_only):
        return -1
    return addr - self.base


def _past_end_check(self, addr, nbytes, *, write=False, loading=False, **kw):
    a = self.live(addr)
    if nbytes > 0 and a is not None and addr + nbytes <= a.end + SLACK and not (write and a.read_only):
        return addr - self.base
    return _check(self, addr, nbytes, write=write, loading=loading, **kw)


def _read_only_writable_check(self, addr, nbytes, *, write=False, loading=False, **kw):
    return _check(self, addr, nbytes, write=False, loading=loading, **kw)


def _writable_fast_offset(self, addr, nbytes, write):
    return _fast_offset(self, addr, nbytes, False)


def _tight_fast_offset(self, addr, nbytes, write):
    """Refuses the last byte of every allocation (a check that is too strict)."""
    off = _fast_offset(self, addr, nbytes, write)
    return off if off < 0 or self.live(addr + nbytes) is not None else -1


def _tight_check(self, addr, nbytes, **kw):
    if nbytes > 0 and self.live(addr + nbytes) is None and self.live(addr) is not None:
        self._fault("out_of_bounds", "refused at the edge", kw.get("task", ""), addr, nbytes, "")
    return _check(self, addr, nbytes, **kw)


def _renamed_fault(renames):
    original = memory.AddressSpace._fault

    def wrong(self, kind, *args):
        return original(self, renames.get(kind, kind), *args)
    return wrong


LOOSENINGS = {
    "past the end, fast path and slow path": {"fast_offset": _past_end_fast_offset, "check": _past_end_check},
    "past the end, fast path only": {"fast_offset": _past_end_fast_offset},
    "past the end, slow path only": {"check": _past_end_check},
    "read-only memory writable": {"fast_offset": _writable_fast_offset, "check": _read_only_writable_check},
    "the last byte refused": {"fast_offset": _tight_fast_offset, "check": _tight_check},
}


def probe_observation(program) -> DeviceObservation:
    dev = run_program(program)
    return observe_device(dev.trace, memory=(dev.mem.base, dev.mem.capacity))


def probe_report(program):
    return check(probe_observation(program))


def test_the_real_device_passes_every_fixed_probe_and_each_tells_right_from_wrong():
    for program in fixed_programs(8):
        report = probe_report(program)
        assert report.ok, str(report)
        assert report.exercised == ("V1-ALLOCATOR-ACCOUNTING", "V2-ALLOCATOR-ONE-THREAD",   # its allocator_threads steps
                                    "V2-POOL-BLOCKS", "V2-POOL-CACHED", "DEVICE-TRACE-FORM", "DEVICE-BOUNDS",
                                    "DEVICE-FAULT-KIND")


@settings(max_examples=40, deadline=None)
@given(programs())
def test_the_real_device_passes_random_probes(program):
    report = probe_report(program)
    assert report.ok, str(report)


@pytest.mark.parametrize("renames", [{"use_after_free": "out_of_bounds"}, {"unmapped": "out_of_bounds"},
                                     {"out_of_bounds": "unmapped"}, {"read_only": "out_of_bounds"}])
def test_a_fault_of_the_wrong_kind_violates_device_fault_kind(monkeypatch, renames):
    monkeypatch.setattr(memory.AddressSpace, "_fault", _renamed_fault(renames))
    bad = [v for p in fixed_programs(8) for v in probe_report(p).violations]
    assert bad and {v.invariant_id for v in bad} == {"DEVICE-FAULT-KIND"}, renames


@pytest.mark.parametrize("loosening", sorted(LOOSENINGS))
def test_a_broken_bounds_check_violates_device_bounds(monkeypatch, loosening):
    for name, fn in LOOSENINGS[loosening].items():
        monkeypatch.setattr(memory.AddressSpace, name, fn)
    bad = [v for p in fixed_programs(8) for v in probe_report(p).violations]
    assert bad and "DEVICE-BOUNDS" in {v.invariant_id for v in bad}, loosening


def test_verify_catches_an_access_allowed_64_bytes_past_the_end(monkeypatch):
    """The regression issue 13 asks for: plain ``zcspec verify`` (here its device cases) fails."""
    config = VerifyConfig(models=(), kinds=("device",), examples=0, proofs=False, corpus=False)
    clean = verify(config)
    claims = ["DEVICE-BOUNDS", "DEVICE-FAULT-KIND"]
    assert clean.ok(claims) and all(clean.tally.distinct_count(c) >= 3 for c in claims)
    monkeypatch.setattr(memory.AddressSpace, "fast_offset", _past_end_fast_offset)
    monkeypatch.setattr(memory.AddressSpace, "check", _past_end_check)
    broken = verify(config)
    assert "DEVICE-BOUNDS" in {f.violation.invariant_id for f in broken.findings}
    assert not broken.ok(["DEVICE-BOUNDS"])


def test_the_observation_transcribes_allocations_frees_and_each_access_with_its_outcome():
    program = [
        {"op": "malloc", "size": 100, "read_only": False},
        {"op": "malloc", "size": 64, "read_only": True},
        {"op": "read", "via": "kernel", "handle": 1, "offset": 0, "nbytes": 64},
        {"op": "write", "via": "kernel", "handle": 1, "offset": 0, "nbytes": 8},
        {"op": "free", "handle": 0},
        {"op": "write", "via": "memset", "handle": 0, "offset": 0, "nbytes": 4},
        {"op": "read", "via": "kernel", "handle": None, "offset": 16, "nbytes": 4},
    ]
    obs = probe_observation(program)
    kinds = [e.kind for e in obs.events]
    assert kinds == ["alloc", "alloc", "alloc", "alloc", "access", "access", "free", "access", "access"]
    assert [e.refused for e in obs.accesses()] == [None, "read_only", "use_after_free", "unmapped"]
    ro = obs.events[3]
    assert ro.read_only and ro.size == 64 and obs.accesses()[1].writes[0].address == ro.address
    assert loads(DeviceObservation, dumps(obs)) == obs


def test_a_device_scenario_runs_its_program_through_the_scenario_table():
    program = list(fixed_programs(1)[0])
    s = Scenario("device", PROBE_GRAPH, CompileOptions(), {"program": program})
    assert Scenario.from_dict(s.to_dict()) == s
    (obs,) = observe(s)
    assert check(obs).ok and len(obs.accesses()) >= 2


@pytest.mark.parametrize("step, key", [
    ({"op": "jump"}, "runtime.program[0]"),
    ({"op": "read", "via": "kernel", "handle": 3, "offset": 0, "nbytes": 4}, "runtime.program[0]"),
    ({"op": "read", "via": "memset", "handle": None, "offset": 0, "nbytes": 4}, "runtime.program[0]"),
    ({"op": "malloc", "size": "8"}, "runtime.program[0]"),
    ({"op": "malloc", "size": 8, "align": 4.0}, "runtime.program[0]"),
])
def test_a_bad_probe_step_is_an_error_naming_it(step, key):
    with pytest.raises(ScenarioError) as e:
        run_program([step])
    assert e.value.key == key


@settings(max_examples=200, deadline=None)
@given(values(DeviceObservation))
def test_the_claim_copes_with_any_well_typed_observation(obs):
    report = check(obs)
    claims = {"DEVICE-BOUNDS", "DEVICE-FAULT-KIND", "DEVICE-KERNEL-REFUSAL", "DEVICE-COLLECTIVE", "DEVICE-ALLOC-FIT",
              "DEVICE-KERNEL-ORACLE", "DEVICE-COUNTERS-TRUE", "DEVICE-MALLOC-ARGS", "V1-ALLOCATOR-ACCOUNTING",
              "V2-ALLOCATOR-ONE-THREAD", "V2-POOL-BLOCKS", "V2-POOL-CACHED", "V1-ACTIVE-MEMORY-BLOCKS",
              "DEVICE-TRACE-FORM"}
    assert {v.invariant_id for v in report.violations} <= claims


def test_a_trace_with_events_a_probe_does_not_make_is_refused():
    dev = run_program([])
    dev.upload(np.zeros(8, np.uint8))   # host memory and an H2D copy: a probe copies device to device only
    with pytest.raises(ProbeTraceError, match="not part of a device probe"):
        observe_device(dev.trace)
