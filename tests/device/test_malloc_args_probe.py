"""DEVICE-MALLOC-ARGS: every probe program ends with four mallocs whose arguments the device must refuse (a
size of 0, a negative size, alignments that are not powers of two), and the probe records each malloc call as
it made it. The ACL facade refuses a size of 0 before the device sees it, so a device whose argument check
lost its size condition (the mutation run's memory.py:176 survivor: ``size <= 0 or bad align`` turned into
``and``) passed verify.

Each breakage wraps impl/device/memory.py's AddressSpace.malloc with monkeypatch; the real device must pass
the same probes clean."""
from __future__ import annotations

import pytest

from zcspec.checks.device_probe_run import run_probe
from zcspec.checks.strategies.device_probes import fixed_programs
from zcspec.impl.device import memory
from zcspec.spec.observables import dumps, loads
from zcspec.spec.observables.device import DeviceObservation, MallocCall
from zcspec.spec.registry import get
from tests.helpers.device_probes import violated, violations_of

CLAIM = "DEVICE-MALLOC-ARGS"
PROGRAMS = fixed_programs(2)
_real_malloc = memory.AddressSpace.malloc


def _wrapped(change):
    def malloc(self, size, align=None, tag="", read_only=False):
        size, align = change(self, size, align)
        return _real_malloc(self, size, align, tag, read_only)
    return malloc


def _next_power_of_two(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


BREAKAGES = {
    # The size condition lost: a malloc of 0 or fewer bytes is served (here: as one byte).
    "size not checked": lambda self, size, align: (max(size, 1), align),
    # An alignment below the space's own taken as the space's, whatever it is (the device before this claim).
    "small alignment not checked": lambda self, size, align: (size, None if align and align < self.align else align),
    # Any alignment rounded up to a power of two instead of refused.
    "alignment rounded": lambda self, size, align: (size, align and _next_power_of_two(align)),
    # A valid alignment ignored: the space's own used instead.
    "alignment ignored": lambda self, size, align: (size, None),
}


def test_the_real_device_refuses_exactly_the_bad_arguments():
    assert CLAIM not in violated(PROGRAMS)
    for soc in ("ascend910b", "ascend310p"):
        calls = run_probe(PROGRAMS[0], soc).malloc_calls
        bad = [c for c in calls if c.size <= 0 or c.align is not None]
        assert len(bad) == 4 and all(c.raised == "DeviceUsageError" and c.address is None for c in bad)
        assert all(c.raised in (None, "OutOfMemory") for c in calls if c not in bad)


@pytest.mark.parametrize("name", [n for n in BREAKAGES if n != "alignment ignored"])
def test_a_device_that_serves_bad_arguments_fails(monkeypatch, name):
    monkeypatch.setattr(memory.AddressSpace, "malloc", _wrapped(BREAKAGES[name]))
    found = violations_of(CLAIM, PROGRAMS)
    # served (an address) or, the probe's device being full by then, refused for want of memory: not the
    # usage error either way
    assert found and all("must be refused" in v.message or "not the usage error" in v.message for v in found)


def test_a_device_that_ignores_a_valid_alignment_fails(monkeypatch):
    """The fixed programs ask for no valid alignment of their own; one that does (8 KiB) must get it."""
    monkeypatch.setattr(memory.AddressSpace, "malloc", _wrapped(BREAKAGES["alignment ignored"]))
    program = [{"op": "malloc", "size": 64}, {"op": "malloc", "size": 64, "align": 1 << 13},
               {"op": "malloc", "size": 0}]
    found = violations_of(CLAIM, [program])
    assert found and "not a multiple" in found[0].message


def test_the_rule_reads_the_calls_as_the_probe_made_them():
    ok = MallocCall(0, 64, 4096, 0x1000)
    rule = get(CLAIM)
    refused_oom = MallocCall(1, 0, None, None, "OutOfMemory", "no room")
    refused_valid = MallocCall(2, 64, 8, None, "DeviceUsageError", "align")
    obs = DeviceObservation("probe", (), malloc_calls=(ok, refused_oom, refused_valid))
    messages = [v.message for v in rule.violations(obs)]
    assert len(messages) == 2
    assert "not the usage error" in messages[0] and "valid arguments" in messages[1]
    assert rule.precondition(obs) and not rule.precondition(DeviceObservation("probe", (), malloc_calls=(ok,)))
    assert loads(DeviceObservation, dumps(obs)) == obs   # the record travels in observation files
