"""DEVICE-ALLOC-FIT: a probe's allocator steps fill the probe device's 4 MiB and fragment it, and the spec
replays the trace's allocations and frees against the capacity and the SoC's alignment (spec/capabilities.py)
to say which mallocs had room and which frees named a live allocation. No verify case drove the allocator
near capacity, so a gap search that refused an exact fit (a surviving mutant of impl/device/memory.py) passed.

Each breakage is installed with monkeypatch on impl/device/memory.py's AddressSpace; the real device must
pass the same probes clean."""
from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings

from zcspec.checks.device_probe_run import PROBE_CAPACITY, run_probe
from zcspec.checks.strategies.device_probes import fixed_programs, programs
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.impl.device import memory
from zcspec.impl.device.observe import observe_device
from zcspec.spec.observables import dumps, loads
from zcspec.spec.observables.device import DeviceEvent, DeviceObservation
from zcspec.spec.observables.trace import Range
from zcspec.spec.registry import get
from tests.helpers.device_probes import probe_reports, violated, violations_of

CLAIM = "DEVICE-ALLOC-FIT"
_real_find_hole = memory.AddressSpace._find_hole


def _find_hole_with(fits, aligned=True, grow=0):
    """memory.AddressSpace._find_hole with its fit test ``fits(start, size, end)`` (and, unless ``aligned``,
    no rounding of a hole's start to the alignment; the last hole ``grow`` bytes past the end of memory)."""
    def find(self, size, align):
        n = len(self._holes)
        first = next((i for i, (s, e) in enumerate(self._holes) if e > self._cursor), 0)
        for k in range(n + 1):
            i = (first + k) % n
            s, e = self._holes[i]
            lo = max(s, self._cursor) if k == 0 else s
            start = memory._align_up(self.base + lo, align) - self.base if aligned else lo
            if fits(start, size, e + (grow if e == self.capacity else 0)):
                return i, start
        return None
    return find


BREAKAGES = {
    # The gap search off by one: an exact fit refused.
    "exact fit refused": {"_find_hole": _find_hole_with(lambda start, size, end: start + size < end)},
    # The gap search off by one alignment unit: a block needs 512 bytes more than it asks for.
    "one alignment unit short": {"_find_hole": _find_hole_with(lambda start, size, end: start + size + 512 <= end)},
    # A free that does not give its bytes back to the hole list.
    "free keeps the bytes": {"_give_back": lambda self, start, size: None},
    # A hole's start not rounded to the alignment: a misaligned block.
    "no alignment": {"_find_hole": _find_hole_with(lambda start, size, end: start + size <= end, aligned=False)},
    # A hole not shrunk by the block taken from it: the next malloc overlaps it.
    "hole kept whole": {"_take": lambda self, i, start, size: setattr(self, "_cursor", start + size)},
    # The search past the end of memory: a block running past the device's capacity.
    "past capacity": {"_find_hole": _find_hole_with(lambda start, size, end: start + size <= end, grow=1 << 12)},
}


def test_the_real_device_passes_every_fixed_probe_and_each_exercises_the_claim():
    reports = probe_reports(fixed_programs(8))
    assert all(r.ok for r in reports), [str(v) for r in reports for v in r.violations]
    assert all(CLAIM in r.exercised for r in reports)


def test_the_allocator_steps_reach_both_outcomes_near_capacity():
    dev = run_probe(fixed_programs(1)[0]).device
    obs = observe_device(dev.trace, memory=(dev.mem.base, dev.mem.capacity), soc=dev.soc.name)
    refused_mallocs = [e for e in obs.events if e.kind == "alloc" and e.refused]
    refused_frees = {e.refused for e in obs.events if e.kind == "free" and e.refused}
    assert dev.mem.capacity == PROBE_CAPACITY and refused_mallocs and refused_frees == {"double_free", "invalid_free"}
    assert {e.refused for e in refused_mallocs} == {"out_of_memory"}
    # Near capacity: the device ends with less than 2% of its memory free.
    assert dev.mem.capacity - dev.mem.allocated_bytes < PROBE_CAPACITY // 50
    assert loads(DeviceObservation, dumps(obs)) == obs


@settings(max_examples=10, deadline=None)
@given(programs(max_steps=8))
def test_the_real_device_passes_random_probes(program):
    (report,) = probe_reports([program])
    assert report.ok, str(report)
    assert CLAIM in report.exercised


def test_the_real_device_passes_on_a_soc_of_another_alignment():
    (report,) = probe_reports(fixed_programs(1), soc="ascend310p")   # alignment 32
    assert report.ok and CLAIM in report.exercised, str(report)


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_a_broken_allocator_violates_the_claim(monkeypatch, breakage):
    for name, fn in BREAKAGES[breakage].items():
        monkeypatch.setattr(memory.AddressSpace, name, fn)
    assert CLAIM in violated(fixed_programs(8)), breakage


def test_a_double_free_reported_as_an_invalid_free_is_caught(monkeypatch):
    real = memory.AddressSpace.free

    def free(self, addr, *, task=""):
        if addr not in self._live:
            self._fault("invalid_free", f"free of {addr:#x}", task, addr, 0, "")
        return real(self, addr, task=task)
    monkeypatch.setattr(memory.AddressSpace, "free", free)
    bad = violations_of(CLAIM, fixed_programs(2))
    assert bad and all("double_free" in v.message for v in bad)


def test_a_refused_free_of_a_live_block_is_caught(monkeypatch):
    real = memory.AddressSpace.free

    def free(self, addr, *, task=""):   # refuses the free of the probe's 2 MiB block
        if (a := self._live.get(addr)) is not None and a.size > PROBE_CAPACITY // 4:
            self._fault("invalid_free", f"free of {addr:#x}", task, addr, 0, "")
        return real(self, addr, task=task)
    monkeypatch.setattr(memory.AddressSpace, "free", free)
    assert any("starts the live allocation" in v.message for v in violations_of(CLAIM, fixed_programs(1)))


def test_refused_mallocs_and_frees_are_transcribed_as_such():
    program = [{"op": "malloc", "size": PROBE_CAPACITY, "read_only": False},   # never fits: args are live
               {"op": "malloc", "size": 1000, "read_only": False},
               {"op": "free", "handle": 1, "offset": 8},                         # inside a live block
               {"op": "free", "handle": 1}, {"op": "free", "handle": 1},         # double free
               {"op": "free", "handle": 0},                                      # its malloc was refused: skipped
               {"op": "read", "via": "kernel", "handle": 0, "offset": 0, "nbytes": 4}]   # skipped too
    dev = run_probe(program).device
    obs = observe_device(dev.trace, memory=(dev.mem.base, dev.mem.capacity), soc=dev.soc.name)
    events = [(e.kind, e.refused) for e in obs.events]
    assert events[2:] == [("alloc", "out_of_memory"), ("alloc", None), ("free", "invalid_free"), ("free", None),
                          ("free", "double_free")]
    assert obs.events[2].size == PROBE_CAPACITY and obs.events[2].address is None and obs.soc == "ascend910b"
    assert not get(CLAIM).violations(obs) and get(CLAIM).exercised(obs)


_BASE = 0x1_0000_0000_0000


def _obs(*events, soc="ascend910b"):
    return DeviceObservation("probe", tuple(attrs.evolve(e, seq=i) for i, e in enumerate(events)),
                             Range(_BASE, 4096), soc=soc)


@pytest.mark.parametrize("events, why", [
    ((DeviceEvent(0, "alloc", address=_BASE + 32, size=64),), "not a multiple of 512"),
    ((DeviceEvent(0, "alloc", address=_BASE + 3584, size=1024),), "outside device memory"),
    ((DeviceEvent(0, "alloc", address=_BASE, size=1024), DeviceEvent(0, "alloc", address=_BASE + 512, size=8)),
     "overlaps the live allocation"),
    ((DeviceEvent(0, "alloc", address=_BASE, size=1000), DeviceEvent(0, "alloc", size=3072, refused="out_of_memory")),
     "holds 3072 bytes"),
    ((DeviceEvent(0, "alloc", size=64, refused="unmapped"),), "not out_of_memory"),
    ((DeviceEvent(0, "free", address=_BASE),), "starts no live allocation"),
    ((DeviceEvent(0, "alloc", address=_BASE, size=8), DeviceEvent(0, "free", address=_BASE),
      DeviceEvent(0, "free", address=_BASE, refused="invalid_free")), "that is double_free"),
    ((DeviceEvent(0, "free", address=_BASE + 8, refused="double_free"),), "that is invalid_free"),
])
def test_the_claim_names_each_way_an_allocator_can_be_wrong(events, why):
    bad = get(CLAIM).violations(_obs(*events))
    assert len(bad) == 1 and why in bad[0].message, [str(v) for v in bad]


def test_the_claim_uses_the_alignment_the_spec_owns_and_judges_nothing_it_cannot():
    aligned_32 = (DeviceEvent(0, "alloc", address=_BASE + 32, size=64),)
    assert not get(CLAIM).violations(_obs(*aligned_32, soc="ascend310p"))
    assert not get(CLAIM).violations(_obs(*aligned_32, soc="no-such-soc"))   # no alignment known: not judged
    assert not get(CLAIM).violations(attrs.evolve(_obs(*aligned_32), memory=None))


def test_verify_catches_a_gap_search_that_refuses_an_exact_fit(monkeypatch):
    """The regression: plain ``zcspec verify`` (its device cases) fails on the mutant it missed."""
    config = VerifyConfig(models=(), kinds=("device",), examples=0, proofs=False, corpus=False)
    clean = verify(config)
    assert clean.ok([CLAIM]) and clean.tally.distinct_count(CLAIM) >= 3
    monkeypatch.setattr(memory.AddressSpace, "_find_hole", BREAKAGES["exact fit refused"]["_find_hole"])
    broken = verify(config)
    assert CLAIM in {f.violation.invariant_id for f in broken.findings} and not broken.ok([CLAIM])
