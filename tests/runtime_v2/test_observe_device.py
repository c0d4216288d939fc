"""runtime v2's observation is the device's trace: allocations through the caller's allocator hook are the
call's, the pool's spans outlive calls, and several calls of one load are observed each with what is live."""
from __future__ import annotations

from unittest import mock

from zcspec.impl.device import Device
from zcspec.impl.runtime.v2.allocators import ExternalAllocator
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.observe import observe_execution
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor
from zcspec.spec.registry import get
from tests.helpers.runtime_v2 import relu_neg, stage

DEVICE_CLAIMS = ("EXEC-NO-LEAK", "EXEC-NO-OVERRUN", "EXEC-READ-WRITTEN", "EXEC-NO-RACE", "EXEC-TENSOR-INTACT",
                 "V2-OUT-IS-USER", "V2-DEFAULT-FALLBACK")


def _outputs(dev, model, size=None):
    return [Tensor(dev.malloc(size or io.nbytes, tag="user out"), size or io.nbytes, name=io.tensor)
            for io in model.tasks.outputs]


def violations(obs):
    return [str(v) for i in DEVICE_CLAIMS for v in get(i).violations(obs)]


def test_every_call_of_a_load_sees_the_pool_span_an_earlier_call_allocated():
    model = relu_neg()
    dev = Device(model.soc)
    exe = StreamExecutor(model, dev, LoweringOptions())
    ins = stage(dev, model)
    for size in (None, 300, None):   # the 300-byte call falls back into the pool's span
        outs = _outputs(dev, model, size)
        exe.execute(ins, outs)
        for t in outs:
            t.release()
    exe.unload()
    records = list(exe.records)
    observations = [observe_execution(exe, r) for r in records]
    for obs in observations:
        assert violations(obs) == []
    first, *later = observations
    assert [e.owner for e in first.events if e.kind == "alloc" and e.owner == "pool"]   # grown in call 1
    for obs in later:   # the span from call 1 precedes call_begin, so later writes into it are not overruns
        begin = next(i for i, e in enumerate(obs.events) if e.kind == "call_begin")
        assert any(e.kind == "alloc" and e.owner == "pool" for e in obs.events[:begin])
        assert get("EXEC-NO-OVERRUN").exercised(obs)
    assert get("EXEC-NO-LEAK").exercised(observations[-1])


def test_blocks_from_the_callers_allocator_are_the_calls_and_must_be_given_back():
    model = relu_neg()
    options = LoweringOptions(always_external_allocator=True)

    def run():
        dev = Device(model.soc)
        exe = StreamExecutor(model, dev, options)
        outs = _outputs(dev, model)
        exe.execute(stage(dev, model), outs, allocators={"device": ExternalAllocator.on_device(dev)})
        exe.unload()
        return observe_execution(exe)

    good = run()
    assert violations(good) == []
    begin = next(i for i, e in enumerate(good.events) if e.kind == "call_begin")
    assert {e.owner for e in good.events[begin:] if e.kind == "alloc"} == {"runtime"}
    # the executor forgets to hand blocks back to the caller's allocator: the hook's device memory stays
    with mock.patch.object(ExternalAllocator, "free", lambda self, block: self._live.pop(block.addr, None)):
        bad = run()
    leaks = get("EXEC-NO-LEAK").violations(bad)
    assert leaks and all("by runtime" in v.message for v in leaks)
