"""EXEC-STREAMS-APART: each stream of the model runs on a device stream of its own, as the device trace
shows it. Planted: the device hands out the same stream id twice (the mutation sample's streams.py:50,
``create_stream`` returning min + 1), so the model's streams 1 and 2 share device stream 1. The outputs
stay right (the shared stream runs the tasks in launch order), which is why no other claim saw it."""
from __future__ import annotations

import attrs
import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device.streams import Stream, Streams
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.spec.registry import get
from tests.helpers.observed_runs import run_v1, run_v2

CLAIM = get("EXEC-STREAMS-APART")


def _three_streams():
    """x -> Relu (stream 1) and Neg (stream 2) -> Add (stream 0) -> y."""
    b = GraphBuilder("three_streams")
    x = b.input("x", (4, 8))
    b.output(b.op("Add", [b.op("Relu", [x], stream=1), b.op("Neg", [x], stream=2)]))
    return build_model(b.build())


def _same_id_twice(self) -> int:
    sid = min(self.streams) + 1
    self.streams[sid] = Stream(sid)
    return sid


@pytest.mark.parametrize("run", [run_v1, run_v2], ids=["v1", "v2"])
def test_each_model_stream_runs_on_a_device_stream_of_its_own(run):
    obs = run(_three_streams())
    assert CLAIM.exercised(obs) and CLAIM.violations(obs) == ()
    launched = {(obs.load.tasks[e.task].stream, e.stream) for e in obs.events if e.kind == "launch" and e.task is not None}
    assert len({s for s, _ in launched}) == 3 == len({d for _, d in launched})


@pytest.mark.parametrize("run", [run_v1, run_v2], ids=["v1", "v2"])
def test_a_device_stream_handed_out_twice_folds_two_model_streams_onto_one(run, monkeypatch):
    monkeypatch.setattr(Streams, "create_stream", _same_id_twice)
    obs = run(_three_streams())
    assert obs.result.ok   # the numbers do not show it
    (v,) = CLAIM.violations(obs)
    assert "two streams of the model share one device stream" in v.message and v.culprit.startswith("task ")


def test_the_single_stream_option_puts_every_task_on_one_device_stream():
    obs = run_v2(_three_streams(), options=LoweringOptions(enable_single_stream=True))
    assert obs.load.options.single_stream and CLAIM.exercised(obs) and CLAIM.violations(obs) == ()
    assert len({e.stream for e in obs.events if e.kind == "launch"}) == 1


def test_a_runtime_that_ignores_the_single_stream_option_is_reported():
    obs = run_v2(_three_streams())   # lowered on three streams, observed as if the caller had asked for one
    obs = attrs.evolve(obs, load=attrs.evolve(obs.load, options=attrs.evolve(obs.load.options, single_stream=True)))
    messages = [v.message for v in CLAIM.violations(obs)]
    assert len(messages) == 2 and all("asked for a single stream" in m for m in messages)
