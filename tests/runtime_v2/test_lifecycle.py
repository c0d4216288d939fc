"""A stateful check of one loaded model: executions with good, null, small and host buffers in any order,
outputs released or kept, then unload. After every step the spec's invariants hold for the call and the
runtime's memory accounting is exact; after unload only what the caller still holds is left."""
from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from zcspec.impl.device import Device
from zcspec.impl.runtime.v2.errors import OutputBufferError
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.observe import observe_execution
from zcspec.impl.runtime.v2.options import LoweringOption
from zcspec.spec.check import check
from tests.runtime_v2.helpers import out_buffer, output_feeds_node, stage

MODEL = output_feeds_node()
BUFFERS = st.tuples(st.sampled_from([0, 8, 64, 128, 256]), st.sampled_from(["device", "host"]))


class Lifecycle(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.dev = Device()
        self.held: list = []           # output tensors the caller still owns runtime memory through
        self.exe = None

    @rule(option=st.sampled_from([LoweringOption(), LoweringOption(always_zero_copy=True),
                                  LoweringOption(zero_copy=False)]))
    @precondition(lambda self: self.exe is None)
    def load(self, option):
        self.exe = StreamExecutor(MODEL, self.dev, option)
        self.inputs = stage(self.dev, MODEL)

    @rule(specs=st.lists(BUFFERS, min_size=2, max_size=2), keep=st.booleans())
    @precondition(lambda self: self.exe is not None and not self.exe.closed)
    def execute(self, specs, keep):
        outs = [out_buffer(self.dev, io, size, placement) for io, (size, placement) in zip(MODEL.tasks.outputs, specs)]
        try:
            self.exe.execute(self.inputs, outs)
        except OutputBufferError:
            assert self.exe.option.always_zero_copy
        report = check(observe_execution(self.exe), invariants=None)
        # The spec's v2 claims assume output zero copy is on; with it off every output is copied (reported).
        allowed = {"V2-OUT-IS-USER", "V2-DEFAULT-FALLBACK"} if not self.exe.option.zero_copy else set()
        assert set(report.violated()) <= allowed, str(report)
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


TestLifecycle = Lifecycle.TestCase
TestLifecycle.settings = __import__("hypothesis").settings(max_examples=15, stateful_step_count=12, deadline=None)
