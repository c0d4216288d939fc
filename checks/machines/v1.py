"""Runtime v1's lifecycle as a Hypothesis state machine.

Steps: load (zero copy on or off, reuseZeroCopyMemory), make a set of user
buffers (right-sized, undersized, null, misaligned, host-placed), execute with
any set (fresh or reused: re-binding), unload, execute after unload, free a
set. After every execute the spec checks the call's observation (the load
invariants included), and a successful call's outputs are compared with the
oracle; after unload the model owns no device memory.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, initialize, invariant, precondition, rule

from zcspec.checks.oracle import oracle_outputs
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.platform import dtypes
from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.errors import ModelUnloadedError, RuntimeV1Error
from zcspec.impl.runtime.v1.load import load
from zcspec.impl.runtime.v1.observe import observe_execution
from zcspec.spec.check import check

KINDS = ("ok", "ok", "ok", "small", "null", "misaligned", "host")


def lifecycle_graph():
    """Two inputs, an atomic op, a view and an in-place op; one output read by another node."""
    b = GraphBuilder("lifecycle")
    x, y = b.input("x", (4, 8)), b.input("y", (4, 8))
    s = b.op("Add", [b.op("Relu", [x]), y])
    r = b.op("ReduceSum", [s], shape=(4, 1), axes=(1,), keepdims=1)
    n = b.op("Neg", [b.op("Flatten", [r], shape=(4, 1), axis=1)])
    b.output(s, b.op("Sigmoid", [n], _reuse_input=True))
    return b.build()


GRAPH = lifecycle_graph()


class BufferSet:
    """One call's user buffers, the raw allocations behind them, and the inputs they hold."""

    def __init__(self, kind: str, inputs: list, outputs: list, raw: list, arrays: dict):
        self.kind, self.inputs, self.outputs, self.raw, self.arrays = kind, inputs, outputs, raw, arrays


class V1Lifecycle(RuleBasedStateMachine):
    buffer_sets = Bundle("buffer_sets")

    def __init__(self):
        super().__init__()
        self.model = build_model(GRAPH)
        self.dev = Device(self.model.soc)
        self.lm = None
        self.baseline = self.dev.counters.allocated_bytes
        self.last = None   # (observation, buffer set)

    @initialize(zero_copy=st.booleans(), reuse=st.booleans())
    def load(self, zero_copy, reuse):
        self._load(zero_copy, reuse)

    @rule(zero_copy=st.booleans(), reuse=st.booleans())
    @precondition(lambda self: self.lm.unloaded)
    def reload(self, zero_copy, reuse):
        self._load(zero_copy, reuse)

    def _load(self, zero_copy, reuse):
        self.lm = load(self.dev, self.model, LoadOptions(zero_copy=zero_copy, reuse_zero_copy_memory=int(reuse and zero_copy)))

    @rule(target=buffer_sets, kind=st.sampled_from(KINDS), seed=st.integers(0, 3))
    def make_buffers(self, kind, seed):
        rng = np.random.default_rng(seed)
        arrays, ins, outs, raw = {}, [], [], []
        host = kind == "host"
        for io in self.model.tasks.inputs + self.model.tasks.outputs:
            size = io.nbytes // 2 if kind == "small" and io.role == "output" else io.nbytes
            shift = 1 if kind == "misaligned" and io.role == "input" else 0
            if kind == "null" and io.role == "output":
                b = UserBuffer(io.tensor, 0, 0)
                raw.append(0)
            else:
                addr = (self.dev.host_malloc if host else self.dev.malloc)(size + shift, tag=f"user {io.tensor}")
                raw.append(addr)
                b = UserBuffer(io.tensor, addr + shift, size, "host" if host else "device")
                if io.role == "input":
                    data = rng.standard_normal(io.shape).astype(dtypes.numpy_dtype(io.dtype))
                    arrays[io.tensor] = data
                    self._fill(b, data)
            (ins if io.role == "input" else outs).append(b)
        return BufferSet(kind, ins, outs, raw, arrays)

    def _fill(self, b: UserBuffer, data) -> None:
        if b.placement == "host":
            self.dev.host_write(b.addr, data)
            return
        staging = self.dev.host_malloc(data.nbytes, tag="staging")
        self.dev.host_write(staging, data)
        self.dev.memcpy(b.addr, staging, data.nbytes)
        self.dev.host_free(staging)

    @rule(bs=buffer_sets)
    @precondition(lambda self: not self.lm.unloaded)
    def execute(self, bs):
        try:
            self.lm.execute(bs.inputs, bs.outputs)
        except RuntimeV1Error:
            assert bs.kind != "ok" or self.lm.options.reuse_zero_copy_memory, "a right-sized call was refused"
        self.last = (observe_execution(self.lm), bs)

    @rule(bs=buffer_sets)
    @precondition(lambda self: self.lm.unloaded)
    def execute_after_unload(self, bs):
        before = self.dev.counters
        try:
            self.lm.execute(bs.inputs, bs.outputs)
            raise AssertionError("execute after unload succeeded")
        except ModelUnloadedError:
            pass
        delta = self.dev.counters - before
        assert delta.copy_bytes() == 0 and delta.kernel_launches == 0 and delta.alloc_calls == 0

    @rule()
    @precondition(lambda self: not self.lm.unloaded)
    def unload(self):
        self.lm.unload()
        assert self.dev.counters.allocated_bytes - self.baseline == self._user_bytes(), "the model leaked memory"

    @rule(bs=consumes(buffer_sets))
    def free(self, bs):
        for b, addr in zip(bs.inputs + bs.outputs, bs.raw):
            if addr:
                (self.dev.host_free if b.placement == "host" else self.dev.free)(addr)
        self._freed = getattr(self, "_freed", set()) | {id(bs)}

    def _user_bytes(self) -> int:
        return sum(a.size for a in self.dev.allocations() if a.tag.startswith("user "))

    @invariant()
    def the_spec_holds_for_the_last_call(self):
        if self.last is None:
            return
        obs, bs = self.last
        report = check(obs)
        assert report.ok, str(report)
        if obs.result.ok and bs.kind in ("ok", "host") and id(bs) not in getattr(self, "_freed", set()):
            self._outputs_match_oracle(bs)
        self.last = None

    def _outputs_match_oracle(self, bs) -> None:
        want = oracle_outputs(GRAPH, bs.arrays)
        for io, b in zip(self.model.tasks.outputs, bs.outputs):
            read = self.dev.host_read if b.placement == "host" else self.dev.peek
            got = read(b.addr, io.shape, dtypes.numpy_dtype(io.dtype))
            np.testing.assert_allclose(got, want[io.tensor], rtol=1e-4, atol=1e-5)
