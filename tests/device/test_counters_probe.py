"""DEVICE-COUNTERS-TRUE: over a probe program the device's counters (faults, tasks executed, mallocs, frees)
are what the probe's events show, and verify notices a device that stops counting.

Two mutants of the mutation benchmark passed verify before this claim: a fault noted without counting it
(impl/device/device.py ``_note_fault``) and a collective run across devices without counting its task
(impl/device/hccl.py ``HcclComm.try_run``). The counters were in no probe observation."""
from __future__ import annotations

import pytest

from zcspec.checks.device_probe_run import observe_probe
from zcspec.checks.scenario import Scenario
from zcspec.checks.strategies.device_probes import PROBE_GRAPH, fixed_programs
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import counters as counters_module
from zcspec.spec.invariants.device_memory import probe_counts
from zcspec.spec.registry import get

CLAIM = get("DEVICE-COUNTERS-TRUE")


def _observations():
    return [obs for program in fixed_programs(8, seed=0)
            for obs in observe_probe(Scenario("device", PROBE_GRAPH, CompileOptions(), {"program": program}))]


def test_the_real_device_counts_what_its_probes_do():
    observations = _observations()
    assert all(CLAIM.violations(obs) == () for obs in observations)
    # the probes exercise every count: refusals, tasks, mallocs and frees
    totals = {k: sum(probe_counts(obs)[k] for obs in observations) for k in probe_counts(observations[0])}
    assert all(v > 0 for v in totals.values()), totals


class _Uncounted(counters_module.Tally):
    """A tally that drops one counter's increments (``FIELD``)."""

    FIELD = ""

    def __setattr__(self, name, value):
        if name == self.FIELD and hasattr(self, name) and value > getattr(self, name):
            return
        super().__setattr__(name, value)


@pytest.mark.parametrize("field", ["faults", "tasks_executed", "alloc_calls", "free_calls"])
def test_a_device_dropping_a_count_is_caught(monkeypatch, field):
    uncounted = type("Uncounted", (_Uncounted,), {"FIELD": field})
    monkeypatch.setattr("zcspec.impl.device.device.Tally", uncounted)
    found = [v for obs in _observations() for v in CLAIM.violations(obs)]
    assert found and all(v.culprit == f"counter {field!r}" for v in found)
