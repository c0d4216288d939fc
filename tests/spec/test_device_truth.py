"""Device-level truth: the execution claims judge from the device trace, so bugs the runtimes do not
report about themselves are caught (issue #13). Each test seeds one bug with a monkeypatch, runs a small
scenario through the real runtime and device, and shows the claim fires; the same scenario without the
bug is clean."""
from __future__ import annotations

import contextlib
from unittest import mock

import attrs
import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import memory as device_memory
from zcspec.impl.runtime.v1 import bind as v1_bind
from zcspec.impl.runtime.v2 import allocators, kernels
from zcspec.impl.runtime.v2.kernels import launch as v2_launch
from zcspec.impl.runtime.v2.kernels import outputs
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import TensorData
from zcspec.spec.registry import get
from tests.helpers.observed_runs import run_v1, run_v2
from tests.helpers.runtime_v2 import relu_neg


def fired(invariant_id: str, obs) -> tuple:
    return get(invariant_id).violations(obs)


def clean(invariant_id: str, obs) -> bool:
    inv = get(invariant_id)
    return inv.exercised(obs) and inv.violations(obs) == ()


# -- the v2 pool never freed at unload -> EXEC-NO-LEAK from device events ----------------------

def test_a_pool_never_given_back_at_unload_is_a_leak_on_the_device():
    assert clean("EXEC-NO-LEAK", run_v2())
    with mock.patch.object(allocators.CachingAllocator, "close", lambda self: setattr(self, "_closed", True)):
        obs = run_v2()
    (v,) = fired("EXEC-NO-LEAK", obs)
    assert "by pool" in v.message and "hbm span" in v.message   # the span, which the runtime's log never shows


def test_v2_memory_events_are_the_devices_not_the_allocators_log():
    obs = run_v2()
    begin = next(i for i, e in enumerate(obs.events) if e.kind == "call_begin")
    before = [e.owner for e in obs.events[:begin] if e.kind == "alloc"]
    during = [e for e in obs.events[begin:] if e.kind == "alloc"]
    assert before and set(before) == {"user"}              # the caller's buffers (and staging) before the call
    assert [e.owner for e in during] == ["pool"]           # the caching allocator's span, from the device
    assert all(e.io is None for e in during)               # no block of the runtime's own log


# -- a fallback under always_zero_copy that v2's log does not show ------------------------------

@contextlib.contextmanager
def _silent_azc_fallback():
    """SplitTensorForOutputData checks the caller's buffer, then quietly computes the output in a pool block
    (the allocator's listener off, io_addresses claiming the user's buffer); EnsureTensorAtOutMemory copies."""
    def wrong(frame, node, args):
        (tensor,) = args
        outputs._validate(node, tensor)
        pool = frame.loaded.allocator
        listener, pool.listener = pool.listener, None
        try:
            block = pool.malloc(node.attr("size"), tag="hidden")
        finally:
            pool.listener = listener
        frame.hold(block)
        frame.io_addresses[("output", node.attr("index"))] = tensor.addr
        return (TensorData(block.addr, block.size, block.placement, block),)

    table = {"SplitTensorForOutputData": wrong}
    with mock.patch.dict(kernels.KERNELS, table), mock.patch.dict(outputs.KERNELS, table):
        yield


def test_a_silent_fallback_under_always_zero_copy_shows_in_the_kernel_writes_and_the_copy():
    azc = LoweringOptions(always_zero_copy=True)
    good = run_v2(options=azc)
    assert clean("V2-AZC-NO-ALLOC", good) and clean("V2-OUT-IS-USER", good)
    with _silent_azc_fallback():
        obs = run_v2(options=azc)
    assert obs.result.ok and obs.io_addresses["neg_2:0"] == obs.buffer("neg_2:0").address   # the runtime's report lies
    messages = [v.message for v in fired("V2-AZC-NO-ALLOC", obs)]
    assert any("pool memory, not in the caller's buffer" in m for m in messages)
    assert any("copy" in m and "delivered the output" in m for m in messages)
    (v,) = fired("V2-OUT-IS-USER", obs)
    assert "1 cop(ies)" in v.message


def test_default_fallback_is_judged_by_where_the_kernel_wrote():
    obs = run_v2(out_size=300)   # too small: zcspec falls back to runtime memory and hands it over
    assert clean("V2-DEFAULT-FALLBACK", obs)
    share = {"AllocModelOutTensor": lambda frame, node, args: outputs._share(frame, node, args[1])}
    with mock.patch.dict(kernels.KERNELS, share), mock.patch.dict(outputs.KERNELS, share):
        bad = run_v2(out_size=300)   # the undersized buffer shared anyway: the kernel runs past it
    (v,) = fired("V2-DEFAULT-FALLBACK", bad)
    assert "the call failed" in v.message
    assert any("wrote" in v.message for v in fired("EXEC-NO-OVERRUN", bad))


# -- a loosened device bounds check and a v1 that accepts an undersized buffer ------------------

SLACK = 64


@contextlib.contextmanager
def _loose_bounds_and_v1_size_check():
    """The device lets an access run up to 64 bytes past the end of its allocation, and v1 forgets the
    raw-size rule (only GE's ``size + 64 >= model size`` is left): an undersized output buffer is accepted."""
    real_fast, real_check, real_bind = (device_memory.AddressSpace.fast_offset, device_memory.AddressSpace.check,
                                        v1_bind._bind_one)

    def loose(self, addr, nbytes, *args, **kwargs):
        a = self.live(addr)
        write = kwargs.get("write", args[0] if args else False)
        if a is not None and nbytes > 0 and addr + nbytes <= a.end + SLACK and not (write and a.read_only):
            return addr - self.base
        return (real_fast if len(args) == 1 and not kwargs else real_check)(self, addr, nbytes, *args, **kwargs)

    def bind_one(lm, z, b):
        if b.addr and b.size < z.desc.nbytes:
            small = attrs.evolve(z, desc=attrs.evolve(z.desc, nbytes=b.size))
            return attrs.evolve(real_bind(lm, small, b), io=z)
        return real_bind(lm, z, b)

    with mock.patch.object(device_memory.AddressSpace, "fast_offset", loose), \
            mock.patch.object(device_memory.AddressSpace, "check", loose), \
            mock.patch.object(v1_bind, "_bind_one", bind_one):
        yield


def test_a_write_past_an_accepted_undersized_buffer_is_an_overrun_the_device_let_through():
    model = relu_neg()
    small = model.tasks.outputs[0].nbytes - 16
    assert clean("EXEC-NO-OVERRUN", run_v1(model))
    refused = run_v1(model, out_size=small)
    assert not refused.result.ok and not fired("EXEC-NO-OVERRUN", refused)   # the real v1 refuses the buffer
    with _loose_bounds_and_v1_size_check():
        obs = run_v1(model, out_size=small)
    assert obs.result.ok and fired("EXEC-NO-FAULT", obs) == ()   # the device saw nothing wrong
    (v,) = fired("EXEC-NO-OVERRUN", obs)
    assert "wrote" in v.message and v.values["range"][1] - v.values["range"][0] == model.tasks.outputs[0].nbytes


# -- cross-stream reads need an event; reads need a writer ---------------------------------------

def two_streams():
    """a = Relu(x) on stream 0, b = Neg(a) on stream 1, y = Abs(b) on stream 0."""
    b = GraphBuilder("two_streams")
    x = b.input("x", (8, 8))
    a = b.op("Relu", [x])
    n = b.op("Neg", [a], stream=1)
    b.output(b.op("Abs", [n]))
    return build_model(b.build())


def test_a_launch_without_its_cross_stream_wait_is_a_race():
    model = two_streams()
    good = run_v2(model)
    assert clean("EXEC-NO-RACE", good)
    assert any(e.kind == "wait" for e in good.events) and any(e.kind == "record" for e in good.events)
    real = v2_launch.launch

    def no_waits(frame, node, args):
        return real(frame, attrs.evolve(node, attrs=tuple((k, v) for k, v in node.attrs if k != "waits")), args)

    with mock.patch.dict(kernels.KERNELS, {"LaunchKernel": no_waits}):
        obs = run_v2(model)
    races = fired("EXEC-NO-RACE", obs)
    assert races and all("no event record" in v.message for v in races)


def test_a_reader_launched_before_its_producer_reads_unwritten_memory_and_a_foreign_writer():
    """Swap the launches of Relu and Neg in v1's task order: Neg reads a before Relu writes it."""
    good = run_v1()
    assert clean("EXEC-READ-WRITTEN", good) and clean("EXEC-TENSOR-INTACT", good)
    events = list(good.events)
    launches = [i for i, e in enumerate(events) if e.kind == "launch"]
    i, j = launches[:2]
    events[i], events[j] = events[j], events[i]
    swapped = attrs.evolve(good, events=tuple(events))
    (v,) = fired("EXEC-READ-WRITTEN", swapped)
    assert "nothing wrote since they were allocated" in v.message


def test_a_copy_into_live_memory_breaks_the_tensor_it_lands_on():
    good = run_v2()
    assert clean("EXEC-TENSOR-INTACT", good)
    events = list(good.events)
    first, second = [i for i, e in enumerate(events) if e.kind == "launch"][:2]
    t = events[first].writes[0]
    stray = attrs.evolve(events[first], kind="copy", direction="d2d", src=good.buffers[0].address, dst=t.address,
                         size=t.size, reads=(), writes=(), task=None, op=None, stream=0)
    broken = attrs.evolve(good, events=tuple(events[:second] + [stray] + events[second:]))
    (v,) = fired("EXEC-TENSOR-INTACT", broken)
    assert v.culprit == f"tensor {t.tensor!r}" and "not a tensor of the model" in v.message


def inplace_model():
    b = GraphBuilder("inplace")
    x = b.input("x", (4, 8))
    r = b.op("Relu", [x])
    s = b.op("Sigmoid", [r], _reuse_input=True)
    b.output(b.op("Neg", [s]))
    return build_model(b.build())


def test_an_in_place_output_shifted_from_its_root_is_reported():
    good = run_v2(inplace_model())
    assert clean("EXEC-INPLACE-SAME-BYTES", good)
    events = list(good.events)
    k, e = next((k, e) for k, e in enumerate(events) if e.kind == "launch" and e.op == "Sigmoid")
    shifted = attrs.evolve(e, writes=(attrs.evolve(e.writes[0], address=e.writes[0].address + 16),))
    (v,) = fired("EXEC-INPLACE-SAME-BYTES", attrs.evolve(good, events=tuple(events[:k] + [shifted] + events[k + 1:])))
    assert v.culprit == f"task {e.task}"


@pytest.mark.parametrize("runtime", ["v1", "v2"])
def test_the_real_runtimes_satisfy_every_device_level_claim(runtime):
    ids = ("EXEC-NO-LEAK", "EXEC-NO-OVERRUN", "EXEC-READ-WRITTEN", "EXEC-NO-RACE", "EXEC-TENSOR-INTACT",
           "EXEC-INPLACE-SAME-BYTES", "EXEC-FAILED-CALL-NO-CHANGE")
    run = run_v1 if runtime == "v1" else run_v2
    for model in (relu_neg(), two_streams(), inplace_model()):
        obs = run(model)
        for i in ids:
            assert fired(i, obs) == (), (model.name, i, fired(i, obs))


def test_a_write_on_another_stream_after_an_unordered_read_or_write_is_a_race():
    """WAR and WAW: stream 1 reuses t's bytes while stream 0's read of t (or its write) is not ordered before."""
    from zcspec.spec.examples.build import RAW, events, execution, launch

    scratch = 0xB0000
    alloc = dict(kind="alloc", address=scratch, size=1024, owner="runtime")
    t, u = ((scratch, RAW, "t"),), ((scratch, RAW, "u"),)
    to_0 = (dict(kind="record", event_id=0, stream=1), dict(kind="wait", event_id=0, stream=0))
    back = (dict(kind="record", event_id=1, stream=0), dict(kind="wait", event_id=1, stream=1))
    produce, read = launch(writes=t, stream=1), launch(task=1, reads=t, stream=0)   # t: stream 1 -> stream 0
    reuse = launch(task=2, writes=u, stream=1)                                       # stream 1 reuses t's bytes
    ordered = execution(evs=events(alloc, produce, *to_0, read, *back, reuse))
    assert clean("EXEC-NO-RACE", ordered)
    (war,) = fired("EXEC-NO-RACE", execution(evs=events(alloc, produce, *to_0, read, reuse)))
    assert war.values["access"] == "write" and war.values["earlier"] == "read"
    (waw,) = fired("EXEC-NO-RACE", execution(evs=events(alloc, launch(writes=t, stream=0), reuse)))
    assert waw.values["earlier"] == "written"


# -- the cross-stream continuous-group bug (issue 13): caught from the trace, whatever the numbers ----

def _pieces_on_two_streams():
    """B = Relu(A) on stream 0, C = Neg(A) on stream 1, PhonyConcat(B, C), then Relu."""
    b = GraphBuilder("pieces_on_two_streams")
    a = b.op("Neg", [b.input("x", (4, 4))], name="A")
    k = b.op("PhonyConcat", [b.op("Relu", [a], name="B"), b.op("Neg", [a], name="C", stream=1)],
             name="K", shape=(8, 4), axis=0)
    b.output(b.op("Relu", [k], name="R"))
    return build_model(b.build())


def _piece_written_early():
    """C on stream 1 depends only on the input, so it runs while stream 0 still computes D and E."""
    b = GraphBuilder("piece_written_early")
    x = b.input("x", (4, 4))
    q = b.op("Relu", [x], name="Q", stream=1)
    e = b.op("Neg", [b.op("Add", [b.op("Neg", [x], name="A"), q], name="D")], name="E")
    c = b.op("Add", [x, x], name="C", stream=1)
    b.output(b.op("Relu", [b.op("PhonyConcat", [c, b.op("Relu", [e], name="B")], name="K", shape=(8, 4), axis=0)],
                  name="R"))
    return build_model(b.build())


def _waits_by_name(model):
    """v1's old rule: a task waits for the stream that wrote the tensor *name* it reads."""
    writer, out = {}, []
    for t in model.tasks.tasks:
        others = {writer[s.tensor] for s in t.slots if s.role == "in" and s.tensor in writer}
        out.append(tuple(sorted(others - {t.stream})))
        writer.update((s.tensor, t.stream) for s in t.slots if s.role == "out")
    return out


def test_waits_matched_by_tensor_name_read_a_piece_before_it_is_written(monkeypatch):
    import importlib
    model = _pieces_on_two_streams()
    good = run_v1(model)
    assert clean("EXEC-NO-RACE", good) and clean("EXEC-READ-WRITTEN", good)
    monkeypatch.setattr(importlib.import_module("zcspec.impl.runtime.v1.load"), "cross_stream_waits", _waits_by_name)
    bad = run_v1(model)
    assert any("K:0" in v.message for v in fired("EXEC-READ-WRITTEN", bad))   # the reader ran before piece C
    assert fired("EXEC-NO-RACE", bad)


def test_a_group_begun_at_its_first_step_lets_a_piece_overwrite_a_live_tensor():
    from tests.helpers.unseeded_bugs import installed
    assert clean("EXEC-NO-RACE", run_v1(_piece_written_early()))
    with installed("cross-stream-group-start"):
        bad = run_v1(_piece_written_early())
    races = fired("EXEC-NO-RACE", bad)
    assert races and any(v.values["earlier"] == "written" for v in races)   # two streams, one block, no event


# -- copy counters drifting from the device's copies -> EXEC-COUNTERS-TRUE -----------------------

@pytest.mark.parametrize("runtime", ["v1", "v2"])
def test_copy_counters_that_drift_from_the_trace_are_reported(runtime, monkeypatch):
    """The mutant that survived verify (each copy counted twice): the counters `zcspec run` reports and
    the benchmarks quote no longer say what the device copied; the numbers stay right."""
    from zcspec.impl.device import counters

    run = run_v1 if runtime == "v1" else run_v2
    model = passthrough_model()
    assert clean("EXEC-COUNTERS-TRUE", run(model))
    real = counters.Tally.copy

    def twice(self, direction, nbytes):
        real(self, direction, nbytes)
        setattr(self, f"{direction}_calls", getattr(self, f"{direction}_calls") + 1)

    monkeypatch.setattr(counters.Tally, "copy", twice)
    found = fired("EXEC-COUNTERS-TRUE", run(model))
    assert found and all(v.values["counted"][0] == 2 * v.values["traced"][0] for v in found)


def _atomic_clean_model():
    """ReduceSum accumulates into its output, which a memset task cleans first (the model file's memset)."""
    from zcspec.checks.zoo import load
    return build_model(load("builtin:atomic_clean"))


@pytest.mark.parametrize("runtime", ["v1", "v2"])
@pytest.mark.parametrize("plant", ["memset bytes uncounted", "memset counted as a kernel"])
def test_launch_counters_per_task_kind_are_held_to_the_trace(runtime, plant, monkeypatch):
    """A mutation run's survivor: the memset task's bytes left out of the device's counters; the
    launches in all stayed right, which was all the claim compared. Each kind is now counted apart,
    from the model file's task kinds and the launches' written ranges."""
    from zcspec.impl.device import executor

    run = run_v1 if runtime == "v1" else run_v2
    model = _atomic_clean_model()
    assert any(t.kind == "memset" for t in model.tasks.tasks)
    assert clean("EXEC-COUNTERS-TRUE", run(model))
    real = executor.RUNNERS["memset"]

    def planted(dev, task, token, sid):
        before = dev.tally.memset_bytes
        real(dev, task, token, sid)
        if plant == "memset bytes uncounted":
            dev.tally.memset_bytes = before
        else:
            dev.tally.memset_calls -= 1
            dev.tally.kernel_launches += 1

    monkeypatch.setitem(executor.RUNNERS, "memset", planted)
    found = fired("EXEC-COUNTERS-TRUE", run(model))
    culprits = {v.culprit for v in found}
    assert culprits == ({"bytes the memset launches wrote"} if plant == "memset bytes uncounted" else
                        {"kernel launches (the model file's kernel and copy-kernel tasks)",
                         "memset launches (the model file's memset tasks)"}), culprits


def passthrough_model():
    """An input that is also an output: both runtimes copy it (a d2d copy in the call)."""
    b = GraphBuilder("passthrough")
    x = b.input("x", (4, 8))
    b.output(x, b.op("Relu", [x]))
    return build_model(b.build())


# -- trust_shape_on_out_tensor: TrustOutTensor removing nothing -> V2-TRUST-SHAPE ------------------

def test_trust_shape_drops_exactly_the_redundant_ensure_and_keeps_the_callers_shape(monkeypatch):
    """The mutant that survived verify: TrustOutTensor returning the graph unchanged whenever it found
    something to remove, so under trusted shapes each output's shape was overwritten anyway."""
    from zcspec.checks.scenario import Scenario, observe
    from zcspec.checks.zoo import load
    from zcspec.impl.compiler.options import CompileOptions
    from zcspec.impl.runtime.v2 import passes

    graph = load("builtin:inplace_passthrough")
    trusted = {"runs": [{"runtime": "v2", "always_zero_copy": True, "trust_shape_on_out_tensor": True}]}
    (good,) = observe(Scenario("execution", graph, CompileOptions(), trusted))
    assert clean("V2-TRUST-SHAPE", good)
    kept = [t for t in good.out_tensors if t.after is None]
    assert kept, "some output computed into the caller's memory keeps the caller's (absent) shape"
    (plain,) = observe(Scenario("execution", graph, CompileOptions(), {"runs": [{"runtime": "v2"}]}))
    assert fired("V2-TRUST-SHAPE", plain) == () and all(t.after is not None for t in plain.out_tensors)

    monkeypatch.setattr(passes, "PIPELINE", tuple((n, (lambda g, o: g) if n == "TrustOutTensor" else f, on)
                                                  for n, f, on in passes.PIPELINE))
    (bad,) = observe(Scenario("execution", graph, CompileOptions(), trusted))
    found = fired("V2-TRUST-SHAPE", bad)
    assert {v.culprit for v in found} >= {f"output {t.name!r}" for t in kept}
