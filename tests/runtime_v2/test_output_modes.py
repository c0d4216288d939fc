"""The three output modes on one buffer: always_zero_copy rejects, the default falls back, ge_compat overruns.

Every case is also observed and checked against the spec's v2 invariants: correct behaviour
satisfies them; ge_compat's overrun is what V2-NO-OVERRUN flags (a documented GE hazard).
"""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.impl.device import Device, DeviceFault
from zcspec.impl.runtime.v2.errors import E13031, PARAM_INVALID, EnsureOutputError, OutputBufferError
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.observe import observe_execution
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.spec.check import check
from tests.helpers.runtime_v2 import (
    PATTERN, expected, input_array, out_buffer, output_feeds_node, raw_bytes, read, relu_neg, stage,
)

AZC = LoweringOptions(always_zero_copy=True)
GE = LoweringOptions(ge_compat=True)
BAD_SIZES = {"null": 0, "undersized": 300, "one byte short": 399}


def setup(options, model=None, warm: bool = False):
    model = model or relu_neg()
    dev = Device()
    exe = StreamExecutor(model, dev, options)
    ins = stage(dev, model)
    if warm:  # a first good execution: the caching allocator then holds cached spans
        good = [out_buffer(dev, io) for io in model.tasks.outputs]
        exe.execute(ins, good)
    return model, dev, exe, ins


def spec_report(exe):
    return check(observe_execution(exe))


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize("size", BAD_SIZES.values(), ids=BAD_SIZES.keys())
def test_always_zero_copy_rejects_and_changes_nothing(size, warm):
    model, dev, exe, ins = setup(AZC, warm=warm)
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io, size)
    before_bytes = [raw_bytes(dev, t) for t in ins + [out]]
    before = dev.counters
    with pytest.raises(OutputBufferError) as e:
        exe.execute(ins, [out])
    err = e.value
    assert (err.code, err.message_id, err.output) == (PARAM_INVALID, E13031, io.tensor)
    assert err.required == io.nbytes and err.given == size
    assert [raw_bytes(dev, t) for t in ins + [out]] == before_bytes       # every user byte unchanged
    delta = dev.counters - before
    assert (delta.allocated_bytes, delta.alloc_calls, delta.free_calls) == (0, 0, 0)   # accounting at baseline
    assert (delta.kernel_launches, delta.args_written, delta.copy_bytes()) == (0, 0, 0)  # nothing launched
    assert exe.allocator.in_use == 0
    assert (out.addr, out.size) == ((out.addr, size) if size else (0, 0))
    report = spec_report(exe)
    assert report.ok, str(report)
    assert "V2-AZC-REJECT" in report.exercised


@pytest.mark.parametrize("size", BAD_SIZES.values(), ids=BAD_SIZES.keys())
def test_default_falls_back_and_returns_the_correct_result(size):
    model, dev, exe, ins = setup(LoweringOptions())
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io, size)
    user_addr, user_bytes = out.addr, raw_bytes(dev, out)
    [result] = exe.execute(ins, [out])
    assert result is out and out.owned is not None and out.addr != user_addr   # runtime memory, owned by the tensor
    np.testing.assert_array_equal(read(dev, out, io), expected(model, [input_array(io)])[0])
    if user_addr:
        assert dev.peek(user_addr, (size,), np.uint8).tobytes() == user_bytes       # the small buffer is untouched
    report = spec_report(exe)
    assert report.ok, str(report)
    out.release()
    assert exe.allocator.in_use == 0


@pytest.mark.parametrize("size", [300, 399], ids=["undersized", "one byte short"])
def test_ge_compat_overruns_the_buffer_and_the_spec_flags_it(size):
    model, dev, exe, ins = setup(GE)
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io, size)
    with pytest.raises(DeviceFault) as e:
        exe.execute(ins, [out])
    fault = e.value
    assert fault.kind == "out_of_bounds" and fault.task == "kernel/neg_2"   # the kernel writing the output
    assert "'user neg_2:0'" in fault.nearest and f"of {size} bytes" in fault.nearest   # ... and the user's buffer
    assert isinstance(fault.__cause__, EnsureOutputError)   # GE's late size error (memory_copy.cc EnsureTensorAtOutMemory)
    report = spec_report(exe)
    assert "V2-NO-OVERRUN" in report.violated()
    overrun = next(v for v in report.violations if v.invariant_id == "V2-NO-OVERRUN")
    assert "neg_2:0" in overrun.culprit and "ge_compat" in overrun.message
    assert exe.allocator.in_use == 0                     # the failed call still released its memory


def test_ge_compat_with_a_null_buffer_allocates_like_ge():
    model, dev, exe, ins = setup(GE)
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io, 0)
    exe.execute(ins, [out])
    np.testing.assert_array_equal(read(dev, out, io), expected(model, [input_array(io)])[0])
    assert spec_report(exe).ok
    out.release()


@pytest.mark.parametrize("options", [LoweringOptions(), AZC, GE], ids=["default", "azc", "ge_compat"])
@pytest.mark.parametrize("extra", [0, 32, 4096])
def test_large_enough_buffer_is_written_in_place(options, extra):
    model, dev, exe, ins = setup(options)
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io, io.nbytes + extra)
    addr = out.addr
    before = dev.counters
    exe.execute(ins, [out])
    delta = dev.counters - before
    assert out.addr == addr and out.owned is None and delta.copy_bytes() == 0
    np.testing.assert_array_equal(read(dev, out, io), expected(model, [input_array(io)])[0])
    tail = dev.peek(addr + io.nbytes, (extra,), np.uint8) if extra else np.array([], np.uint8)
    assert (tail == PATTERN).all()                   # nothing written past the output's raw bytes
    report = spec_report(exe)
    assert report.ok and "V2-OUT-IS-USER" in report.exercised, str(report)


def test_host_buffer_default_copies_and_azc_rejects():
    model, dev, exe, ins = setup(LoweringOptions())
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io, placement="host")
    before = dev.counters
    exe.execute(ins, [out])
    assert (dev.counters - before).d2h_bytes == io.nbytes
    np.testing.assert_array_equal(read(dev, out, io), expected(model, [input_array(io)])[0])
    assert spec_report(exe).ok
    model, dev, exe, ins = setup(AZC)
    with pytest.raises(OutputBufferError, match="host memory"):
        exe.execute(ins, [out_buffer(dev, io, placement="host")])


def test_no_zero_copy_computes_in_runtime_memory_and_copies():
    model, dev, exe, ins = setup(LoweringOptions(zero_copy=False))
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io)
    before = dev.counters
    exe.execute(ins, [out])
    assert (dev.counters - before).d2d_bytes == io.nbytes
    np.testing.assert_array_equal(read(dev, out, io), expected(model, [input_array(io)])[0])


@pytest.mark.parametrize("options", [LoweringOptions(), AZC], ids=["default", "azc"])
def test_output_that_feeds_another_node(options):
    model, dev, exe, ins = setup(options, output_feeds_node())
    outs = [out_buffer(dev, io) for io in model.tasks.outputs]
    addrs = [o.addr for o in outs]
    exe.execute(ins, outs)
    assert [o.addr for o in outs] == addrs
    want = expected(model, [input_array(model.tasks.inputs[0])])
    for o, io, w in zip(outs, model.tasks.outputs, want):
        np.testing.assert_array_equal(read(dev, o, io), w)
    assert spec_report(exe).ok


def test_azc_second_output_bad_rejects_before_touching_the_first():
    model, dev, exe, ins = setup(AZC, output_feeds_node())
    io0, io1 = model.tasks.outputs
    outs = [out_buffer(dev, io0), out_buffer(dev, io1, 16)]
    before_bytes = [raw_bytes(dev, t) for t in outs]
    with pytest.raises(OutputBufferError) as e:
        exe.execute(ins, outs)
    assert e.value.output == io1.tensor
    assert [raw_bytes(dev, t) for t in outs] == before_bytes
    assert spec_report(exe).ok


def test_ge_compat_late_ensure_error_releases_what_the_graph_held():
    """ge_compat, host buffer too small: GE's AllocModelOutTensor allocates (wrong placement) and its
    Ensure then fails (EnsureTensorAtOutMemory); the failed call must give every block back and write nothing."""
    model, dev, exe, ins = setup(GE)
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io, 300, placement="host")
    before_bytes = raw_bytes(dev, out)
    with pytest.raises(EnsureOutputError, match="given buffer size 300 is less than output tensor size 400"):
        exe.execute(ins, [out])
    assert exe.allocator.in_use == 0 and raw_bytes(dev, out) == before_bytes
    report = spec_report(exe)
    assert "EXEC-FAILED-CALL-NO-CHANGE" in report.exercised
    # GE fails where the spec wants a fallback: another GE behaviour ge_compat shows (zcspec's default copes)
    assert report.violated() == ("V2-DEFAULT-FALLBACK",), str(report)


def test_default_host_buffer_too_small_falls_back_to_runtime_memory():
    model, dev, exe, ins = setup(LoweringOptions())
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io, 300, placement="host")
    user_bytes = raw_bytes(dev, out)
    host_addr = out.addr
    exe.execute(ins, [out])
    assert out.owned is not None and out.placement == "device"
    np.testing.assert_array_equal(read(dev, out, io), expected(model, [input_array(io)])[0])
    assert dev.host_read(host_addr, (300,), np.uint8).tobytes() == user_bytes
    assert spec_report(exe).ok
    out.release()


def test_azc_names_every_bad_output_at_once():
    model, dev, exe, ins = setup(AZC, output_feeds_node())
    io0, io1 = model.tasks.outputs
    with pytest.raises(OutputBufferError) as e:
        exe.execute(ins, [out_buffer(dev, io0, 0), out_buffer(dev, io1, 8)])
    assert e.value.output == io0.tensor
    obs = observe_execution(exe)
    assert {ev.io for ev in obs.events if ev.kind == "error"} == {io0.tensor, io1.tensor}
    assert check(obs).ok
