"""TRACE-FORM and DEVICE-TRACE-FORM (spec/invariants/trace_form.py) on real traces: runtime v1's executions and
the fixed device probes hold them, and the two transcription bugs the mutation run found passing verify fail
them: allocation events numbered from 1 (trace_events.py ``allocation_events``' ``first_seq``), so that the
last allocation and the call's begin share a number, and allocator calls without an address transcribed as
-1 (trace.py ``AllocatorCall.addr``)."""
from __future__ import annotations

import attrs
import numpy as np

from zcspec.checks.strategies.device_probes import fixed_programs
from zcspec.impl.device import observe as device_observe
from zcspec.impl.device import trace_events
from zcspec.impl.runtime.v1 import load
from zcspec.impl.runtime.v1 import observe as v1_observe
from zcspec.spec.registry import get
from tests.helpers.device_probes import violations_of
from tests.helpers.runtime_v1 import buffers, device, mlp

TRACE, DEVICE = get("TRACE-FORM"), get("DEVICE-TRACE-FORM")


def _v1_observation():
    dev, m = device(), mlp()
    lm = load(dev, m)
    ins, outs = buffers(dev, m, np.ones((2, 3), np.float32))
    dev.malloc(64, tag="user scratch")   # an allocation between the load and the call
    record = lm.execute(ins, outs)
    return v1_observe.observe_execution(lm, record)


def test_runtime_v1_s_executions_hold_it():
    obs = _v1_observation()
    assert TRACE.exercised(obs) and TRACE.violations(obs) == ()


def test_allocation_events_numbered_from_one_fail_it(monkeypatch):
    real = trace_events.allocation_events
    monkeypatch.setattr(v1_observe, "allocation_events",
                        lambda trace, span, names, first_seq=1: real(trace, span, names, first_seq))
    found = TRACE.violations(_v1_observation())
    assert found and "numbered" in found[0].message and found[0].culprit.startswith("events[")


def test_the_fixed_probes_hold_it():
    assert violations_of(DEVICE.id, fixed_programs(2)) == []


def test_allocator_calls_without_an_address_as_minus_one_fail_it(monkeypatch):
    real = device_observe.allocator_events

    def minus_one(*args, **kwargs):
        return tuple(attrs.evolve(e, address=-1) if e.address is None else e for e in real(*args, **kwargs))
    monkeypatch.setattr(device_observe, "allocator_events", minus_one)
    found = violations_of(DEVICE.id, fixed_programs(2))
    assert found and all("address=-1" in v.message and v.culprit.startswith("allocator_events[") for v in found)
