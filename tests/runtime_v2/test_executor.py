"""The stream executor's lifecycle and options: allocators, repeated executions, unload, errors, single op."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model, compile as compile_bytes
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import Device
from zcspec.impl.runtime.v2.allocators import ExternalAllocator
from zcspec.impl.platform.errors import BadInput
from zcspec.impl.runtime.v2.errors import AllocatorError, ApiMisuseError, InputBufferError, OutputBufferError
from zcspec.impl.runtime.v2.executor import StreamExecutor, load_stream_executor
from zcspec.impl.runtime.v2.observe import observe_execution
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.single_op import SingleOpExecutor, single_op_model
from zcspec.impl.runtime.v2.tensors import Tensor
from zcspec.spec.check import check
from tests.helpers.runtime_v2 import expected, input_array, out_buffer, read, relu_neg, relu_neg_graph, stage


def test_load_from_bytes_and_repeat_without_device_allocations():
    model = relu_neg()
    dev = Device()
    exe = load_stream_executor(compile_bytes(relu_neg_graph()), device=dev)
    ins, out = stage(dev, model), out_buffer(dev, model.tasks.outputs[0])
    exe.execute(ins, [out])
    before = dev.counters
    for _ in range(3):
        exe.execute(ins, [out])
    delta = dev.counters - before
    assert delta.alloc_calls == 0 and delta.free_calls == 0 and delta.kernel_launches == 6
    assert delta.args_written == 3 * 4 and delta.args_refreshed == 0   # v2 writes every task's arguments anew
    np.testing.assert_array_equal(read(dev, out, model.tasks.outputs[0]), expected(model, [input_array(model.tasks.inputs[0])])[0])


def test_unload_returns_the_device_to_its_baseline_and_is_observed():
    dev = Device()
    baseline = dev.counters.allocated_bytes
    model = relu_neg()
    ins, out = stage(dev, model), out_buffer(dev, model.tasks.outputs[0])
    user = dev.counters.allocated_bytes
    exe = StreamExecutor(model, dev)
    exe.execute(ins, [out])
    exe.unload()
    assert dev.counters.allocated_bytes == user > baseline
    report = check(observe_execution(exe))
    assert report.ok and "EXEC-NO-LEAK" in report.exercised, str(report)
    with pytest.raises(ApiMisuseError, match="unloaded"):
        exe.execute(ins, [out])


def test_always_external_allocator_needs_the_callers_allocator():
    dev = Device()
    model = relu_neg()
    exe = StreamExecutor(model, dev, LoweringOptions(always_external_allocator=True))
    assert exe.allocator is None and exe.graph.of_type("GetExternalAllocator")
    ins, out = stage(dev, model), out_buffer(dev, model.tasks.outputs[0])
    before = dev.counters
    with pytest.raises(AllocatorError, match="always_external_allocator is on"):
        exe.execute(ins, [out])
    assert (dev.counters - before).allocated_bytes == 0
    calls = []
    ext = ExternalAllocator(lambda n: calls.append(n) or dev.malloc(n), dev.free)
    exe.execute(ins, [out], allocators={"device": ext})
    assert calls == [512] and ext.live_blocks() == ()   # the intermediate came from the caller's allocator


def test_external_allocator_overrides_the_created_one_per_execution():
    dev = Device()
    model = relu_neg()
    exe = StreamExecutor(model, dev)
    ext = ExternalAllocator.on_device(dev)
    exe.execute(stage(dev, model), [out_buffer(dev, model.tasks.outputs[0])], allocators={"device": ext})
    assert exe.allocator.device_mallocs == 0


@pytest.mark.parametrize("size, why", [(0, "null address"), (100, "buffer is 100 bytes")])
def test_bad_input_buffer_is_rejected_naming_the_input(size, why):
    dev = Device()
    model = relu_neg()
    exe = StreamExecutor(model, dev)
    x = Tensor(dev.malloc(size) if size else 0, size)
    with pytest.raises(InputBufferError, match=why) as e:
        exe.execute([x], [out_buffer(dev, model.tasks.outputs[0])])
    assert e.value.input == "x" and isinstance(e.value, BadInput)
    assert exe.allocator.in_use == 0


def test_wrong_number_of_tensors_and_wrong_soc():
    dev = Device()
    exe = StreamExecutor(relu_neg(), dev)
    with pytest.raises(ApiMisuseError, match="1 inputs and 1 outputs"):
        exe.execute([], [])
    with pytest.raises(ApiMisuseError, match="compiled for SoC"):
        StreamExecutor(relu_neg(), Device("ascend310p"))


def test_host_input_is_copied_to_the_device():
    dev = Device()
    model = relu_neg()
    io = model.tasks.inputs[0]
    host = dev.host_malloc(io.nbytes)
    dev.host_write(host, input_array(io))
    exe = StreamExecutor(model, dev)
    out = out_buffer(dev, model.tasks.outputs[0])
    before = dev.counters
    exe.execute([Tensor(host, io.nbytes, "host")], [out])
    assert (dev.counters - before).h2d_bytes == io.nbytes
    np.testing.assert_array_equal(read(dev, out, model.tasks.outputs[0]), expected(model, [input_array(io)])[0])
    assert exe.allocator.in_use == 0 and check(observe_execution(exe)).ok


def test_missing_output_tensor_is_created_and_owns_its_memory():
    dev = Device()
    model = relu_neg()
    exe = StreamExecutor(model, dev)
    [out] = exe.execute(stage(dev, model), [None])
    assert out.owned is not None and out.shape == (10, 10) and out.dtype == "float32"
    np.testing.assert_array_equal(read(dev, out, model.tasks.outputs[0]),
                                  expected(model, [input_array(model.tasks.inputs[0])])[0])
    out.release()
    assert exe.allocator.in_use == 0


def two_streams():
    b = GraphBuilder("streams")
    x = b.input("x", (4, 4))
    a = b.op("Relu", [x], stream=0)
    c = b.op("Neg", [x], stream=1)
    b.output(b.op("Add", [a, c], stream=1), a)
    return build_model(b.build())


@pytest.mark.parametrize("single", [False, True])
def test_two_streams_are_ordered_by_events(single):
    model = two_streams()
    dev = Device()
    exe = StreamExecutor(model, dev, LoweringOptions(enable_single_stream=single))
    assert exe.multi_stream is not single
    ins = stage(dev, model)
    outs = [out_buffer(dev, io) for io in model.tasks.outputs]
    exe.execute(ins, outs)
    x = input_array(model.tasks.inputs[0])
    np.testing.assert_array_equal(read(dev, outs[0], model.tasks.outputs[0]), np.maximum(x, 0) - x)
    np.testing.assert_array_equal(read(dev, outs[1], model.tasks.outputs[1]), np.maximum(x, 0))
    waits = [n for n in exe.graph.nodes if n.attr("waits")]
    assert bool(waits) is not single
    assert exe.allocator.in_use == 0


def test_single_op_executor_forces_zero_copy_and_the_external_allocator():
    dev = Device()
    model = single_op_model("Relu", [((2, 3), "float32")], [((2, 3), "float32")])
    ops = SingleOpExecutor(dev)
    exe = ops.executor(model)
    o = exe.options
    assert (o.always_zero_copy, o.always_external_allocator, o.trust_shape_on_out_tensor) == (True, True, True)
    assert not exe.graph.of_type("EnsureTensorAtOutMemory")   # TrustOutTensor dropped the duplicate check
    x = dev.upload(np.array([[-1, 2, -3], [4, -5, 6]], np.float32))
    y = dev.malloc(24)
    ops.execute(model, [Tensor(x, 24)], [Tensor(y, 24)])
    np.testing.assert_array_equal(dev.peek(y, (2, 3), np.float32), [[0, 2, 0], [4, 0, 6]])
    with pytest.raises(OutputBufferError, match="smaller than the actual size 24"):
        ops.execute(model, [Tensor(x, 24)], [Tensor(y, 20)])
    assert ops.executor(model) is exe   # loaded once, on the first execution
    assert SingleOpExecutor(dev, refresh_output_ori_shape=True).executor(model).options.trust_shape_on_out_tensor is False
    ops.close()


def test_other_socs():
    for soc in ("ascend310p", "nozc", "legacy"):
        b = GraphBuilder("s")
        x = b.input("x", (8,))
        b.output(b.op("ReduceSum", [b.op("Relu", [x])], shape=(1,), axes=(0,), keepdims=1))
        model = build_model(b.build(), CompileOptions(soc=soc))
        dev = Device(soc)
        exe = StreamExecutor(model, dev)
        out = out_buffer(dev, model.tasks.outputs[0])
        exe.execute(stage(dev, model), [out])
        want = np.maximum(input_array(model.tasks.inputs[0]), 0).sum(keepdims=True)
        np.testing.assert_allclose(read(dev, out, model.tasks.outputs[0]), want, rtol=1e-6)
