"""Runtime v2's lifecycle as a Hypothesis state machine.

Steps: load one model (default mode, always_zero_copy, or output zero copy off), execute
with output buffers of any size (null, undersized, right-sized, oversized) on the device or
the host, in any order, keeping or releasing the runtime memory a fallback output hands
back, release what is kept, unload. After every execute the spec checks the call's
observation; after every step the runtime's memory accounting is exact, and after unload
only what the caller still holds is left.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.v2.errors import OutputBufferError
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.observe import observe_execution
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor
from zcspec.spec.check import check

PATTERN = 0x5A   # what a caller's output buffer holds before the call, so an untouched buffer shows
BUFFERS = st.tuples(st.sampled_from([0, 8, 64, 128, 256]), st.sampled_from(["device", "host"]))


def lifecycle_graph():
    """y = Relu(x) is an output and also feeds z = Neg(y), a second output."""
    b = GraphBuilder("feeds")
    x = b.input("x", (4, 8))
    y = b.op("Relu", [x])
    b.output(y, b.op("Neg", [y]))
    return b.build()


MODEL = build_model(lifecycle_graph())


def stage_inputs(dev: Device, model) -> list[Tensor]:
    """The model's inputs as caller tensors on ``dev``: input ``i`` holds standard normal draws of seed ``i``."""
    return [Tensor(dev.upload(np.random.default_rng(i).standard_normal(io.shape).astype(np.float32),
                              tag=f"user {io.tensor}"), io.nbytes, name=io.tensor)
            for i, io in enumerate(model.tasks.inputs)]


def output_buffer(dev: Device, io, size: int, placement: str) -> Tensor:
    """A caller output buffer of ``size`` bytes filled with PATTERN (size 0: a null buffer)."""
    if not size:
        return Tensor(0, 0, placement, name=io.tensor)
    if placement == "device":
        addr = dev.malloc(size, tag=f"user {io.tensor}")
        dev.memset(addr, size, PATTERN)
    else:
        addr = dev.host_malloc(size, tag=f"user {io.tensor}")
        dev.host_write(addr, np.full(size, PATTERN, np.uint8))
    return Tensor(addr, size, placement, name=io.tensor)


class V2Lifecycle(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.dev = Device()
        self.held: list = []           # output tensors the caller still owns runtime memory through
        self.exe = None

    @rule(options=st.sampled_from([LoweringOptions(), LoweringOptions(always_zero_copy=True),
                                  LoweringOptions(zero_copy=False)]))
    @precondition(lambda self: self.exe is None)
    def load(self, options):
        self.exe = StreamExecutor(MODEL, self.dev, options)
        self.inputs = stage_inputs(self.dev, MODEL)

    @rule(specs=st.lists(BUFFERS, min_size=2, max_size=2), keep=st.booleans())
    @precondition(lambda self: self.exe is not None and not self.exe.closed)
    def execute(self, specs, keep):
        outs = [output_buffer(self.dev, io, size, placement)
                for io, (size, placement) in zip(MODEL.tasks.outputs, specs)]
        try:
            self.exe.execute(self.inputs, outs)
        except OutputBufferError:
            assert self.exe.options.always_zero_copy
        report = check(observe_execution(self.exe), invariants=None)
        assert not report.violated(), str(report)
        for t in outs:
            if t.owned is not None:
                (self.held.append(t) if keep else t.release())

    @rule()
    def release_one(self):
        if self.held:
            self.held.pop().release()

    @rule()
    @precondition(lambda self: self.exe is not None and not self.exe.closed)
    def unload(self):
        self.exe.unload()

    @invariant()
    def accounting_is_exact(self):
        if self.exe is None:
            return
        allocator = self.exe.allocator
        held = sum(t.owned.size for t in self.held)
        assert allocator.in_use == held
        if self.exe.closed:
            assert allocator.cached <= held + (2 << 20) * len(self.held)   # only spans the caller still uses
