"""trust_shape_on_out_tensor end to end: the caller's declared output shape is read, handed back and sized
(GE: trust_out_tensor.cc ``TrustOutTensor::Run``, memory_copy.cc ``EnsureTensorAtOutMemory``/``TensorToOut``).

relu_neg's output y (10x10 float, 400 bytes) is computed by Neg, whose only output is y: its shape is trusted.
Each behaviour is also judged by the spec on the call's observation, with the caller's tensors transcribed.
"""
from __future__ import annotations

import attrs
import numpy as np
import pytest

from zcspec.checks.cases.ge.trust_memcpy_scenarios import two_output_node_and_add
from zcspec.impl.device import Device
from zcspec.impl.runtime.io_names import io_names
from zcspec.impl.runtime.v2.errors import GRAPH_FAILED, EnsureOutputError
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.observe import observe_execution
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.spec.check import check
from zcspec.spec.observables.execution import OutputTensor
from tests.helpers.runtime_v2 import PATTERN, expected, input_array, out_buffer, raw_bytes, read, relu_neg, stage

TRUST = LoweringOptions(trust_shape_on_out_tensor=True)
TRUST_AZC = LoweringOptions(trust_shape_on_out_tensor=True, always_zero_copy=True)


def setup(options, model=None):
    model = model or relu_neg()
    dev = Device(model.soc)
    return model, dev, StreamExecutor(model, dev, options), None


def observed(exe, given, outs):
    """The call's observation with the caller's output tensors as given and as handed back."""
    names = io_names(exe.model)
    tensors = tuple(OutputTensor(names[("output", io.index)], g, None if t.shape is None else tuple(t.shape),
                                 tuple(io.shape)) for io, g, t in zip(exe.model.tasks.outputs, given, outs))
    return attrs.evolve(observe_execution(exe), out_tensors=tensors)


@pytest.mark.parametrize("options", [TRUST, TRUST_AZC], ids=["trust", "trust+azc"])
def test_the_callers_shape_comes_back_with_or_without_always_zero_copy(options):
    model, dev, exe, _ = setup(options)
    io = model.tasks.outputs[0]
    ins = stage(dev, model)
    out = out_buffer(dev, io)
    out.shape = (100,)
    for _ in range(2):
        (got,) = exe.execute(ins, [out])
        assert got.shape == (100,) and got.addr == out.addr and got.owned is None
        np.testing.assert_array_equal(read(dev, got, io), expected(model, [input_array(model.tasks.inputs[0])])[0])
    report = check(observed(exe, [(100,)], [out]))
    assert report.ok and "V2-TRUST-SHAPE" in report.exercised, str(report)


def test_without_the_option_the_models_shape_comes_back():
    model, dev, exe, _ = setup(LoweringOptions())
    out = out_buffer(dev, model.tasks.outputs[0])
    out.shape = (100,)
    (got,) = exe.execute(stage(dev, model), [out])
    assert got.shape == (10, 10)
    assert check(observed(exe, [(100,)], [out])).ok


def test_a_node_with_an_output_that_is_no_model_output_keeps_the_models_shape():
    """TrustOutTensor's CanBeDeleted: the Split's output 1 feeds an Add, so its output 0 keeps the inferred
    shape; the Add's only output is the model's, so it keeps the caller's."""
    model, dev, exe, _ = setup(TRUST, two_output_node_and_add())
    ins = stage(dev, model)
    outs = [out_buffer(dev, io, 6720) for io in model.tasks.outputs]
    for t in outs:
        t.shape = (5, 6, 7, 8)
    got = exe.execute(ins, outs)
    assert [g.shape for g in got] == [(1, 2, 3, 4), (5, 6, 7, 8)]
    assert check(observed(exe, [(5, 6, 7, 8)] * 2, outs)).ok


def test_a_host_buffer_gets_the_declared_shapes_bytes():
    """Declared 50 elements: the Ensure copies 200 bytes (TensorToOut's copy size), the rest of the buffer
    keeps the caller's bytes."""
    model, dev, exe, _ = setup(TRUST)
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io, placement="host")
    out.shape = (50,)
    exe.execute(stage(dev, model), [out])
    want = expected(model, [input_array(model.tasks.inputs[0])])[0].reshape(-1)[:50]
    np.testing.assert_array_equal(dev.host_read(out.addr, (50,), np.float32), want)
    assert raw_bytes(dev, out)[200:] == bytes([PATTERN]) * 200
    assert out.shape == (50,)


def test_a_tensor_without_a_shape_gets_the_models_bytes_and_no_shape():
    model, dev, exe, _ = setup(TRUST)
    io = model.tasks.outputs[0]
    out = out_buffer(dev, io, placement="host")
    (got,) = exe.execute(stage(dev, model), [out])
    assert got.shape is None
    np.testing.assert_array_equal(read(dev, got, io), expected(model, [input_array(model.tasks.inputs[0])])[0])
    assert check(observed(exe, [None], [out])).ok


@pytest.mark.parametrize("placement, message", [
    ("host", "output tensor data size 512 is less than copy size 40000"),   # the 400 bytes' 512-byte block
    ("device", "given buffer size 400 is less than output tensor size 40000"),
])
def test_a_declared_shape_larger_than_the_data_or_the_buffer_fails_and_changes_nothing(placement, message):
    """GE's TrustOutputTensor_Failed_WhenDisableZeroCopy: the copy size is the declared shape's; more than the
    runtime's tensor data (host buffer: the output was computed in runtime memory) or the caller's buffer
    (device buffer: shared, zero copy) fails. The call writes nothing and gives every block back."""
    model, dev, exe, _ = setup(TRUST)
    io = model.tasks.outputs[0]
    ins = stage(dev, model)
    exe.execute(ins, [out_buffer(dev, io)])   # warm: the caching allocator holds its span
    size = 40000 if placement == "host" else io.nbytes
    out = out_buffer(dev, io, size, placement=placement)
    out.shape = (10000,)
    before_bytes, before = raw_bytes(dev, out), dev.counters
    with pytest.raises(EnsureOutputError) as e:
        exe.execute(ins, [out])
    assert e.value.code == GRAPH_FAILED
    assert message in str(e.value)
    delta = dev.counters - before
    assert (delta.alloc_calls, delta.free_calls, delta.kernel_launches, delta.copy_bytes()) == (0, 0, 0, 0)
    assert exe.allocator.in_use == 0 and raw_bytes(dev, out) == before_bytes
    assert (out.shape, out.placement, out.owned) == ((10000,), placement, None)
    report = check(observed(exe, [(10000,)], [out]))
    assert report.ok and "EXEC-FAILED-CALL-NO-CHANGE" in report.exercised, str(report)


def test_the_spec_flags_a_trusted_shape_overwritten_and_an_untrusted_one_kept():
    model, dev, exe, _ = setup(TRUST, two_output_node_and_add())
    outs = [out_buffer(dev, io, 6720) for io in model.tasks.outputs]
    for t in outs:
        t.shape = (5, 6, 7, 8)
    exe.execute(stage(dev, model), outs)
    good = observed(exe, [(5, 6, 7, 8)] * 2, outs)
    a, b = good.out_tensors
    swapped = attrs.evolve(good, out_tensors=(attrs.evolve(a, after=a.given), attrs.evolve(b, after=b.computed)))
    found = [v for v in check(swapped).violations if v.invariant_id == "V2-TRUST-SHAPE"]
    assert {v.culprit for v in found} == {f"output {a.name!r}", f"output {b.name!r}"}, found
