"""An execution observation carries the buffers the caller passed, written by the caller (checks/execution/
passed.py), never the runtime's record of them: a runtime that misrecords what it was given cannot describe
its call to the buffer claims in its own words.

Planted: each runtime records every buffer it was given at twice its size (runtime v1's ``_given`` in
impl/runtime/v1/execute.py, runtime v2's in impl/runtime/v2/executor.py). Before, the observations took those
sizes; CALL-INVALID-REFUSED and V1-BUFFER-SIZE judged buffers the caller never passed."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks import zoo
from zcspec.checks.scenario import Scenario, observe
from zcspec.impl.runtime.v1 import execute as v1_execute
from zcspec.impl.runtime.v2 import executor as v2_executor

GRAPH = "builtin:sized_inputs"


def _observed_sizes(run: dict) -> set[tuple[str, int]]:
    observations = observe(Scenario("execution", zoo.load(GRAPH), runtime={"runs": [run]}))
    return {(b.name, b.size) for obs in observations for b in getattr(obs, "buffers", ())}


def _doubled(real):
    def given(*args):
        return tuple(attrs.evolve(g, size=2 * g.size) for g in real(*args))
    return given


@pytest.mark.parametrize("runtime, module", [("v1", v1_execute), ("v2", v2_executor)])
def test_a_runtime_that_misrecords_its_buffers_does_not_change_the_observation(monkeypatch, runtime, module):
    truth = _observed_sizes({"runtime": runtime})
    assert truth and all(size > 0 for _, size in truth)
    monkeypatch.setattr(module, "_given", _doubled(module._given))
    assert _observed_sizes({"runtime": runtime}) == truth


def test_the_differential_run_takes_the_callers_buffers_too(monkeypatch):
    truth = _observed_sizes({"runtime": "differential"})
    monkeypatch.setattr(v1_execute, "_given", _doubled(v1_execute._given))
    monkeypatch.setattr(v2_executor, "_given", _doubled(v2_executor._given))
    assert truth and _observed_sizes({"runtime": "differential"}) == truth
