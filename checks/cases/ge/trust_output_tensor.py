"""GE's ``tests/ge/st/testcase/fast_runtime_v2/trust_output_tensor_system_test.cc`` (TrustOutputTensorST), ported.

GE lowers ``ShareGraph`` graphs with ``LoweringOption{.trust_shape_on_out_tensor = true}`` (and
``always_zero_copy``), loads them with ``ModelV2Executor``, executes with fake tensors and reads the output
tensors' shapes, the kernels the executor statistician counted, the stub's launch arguments and error logs.
Here the graph is compiled by zcspec (static shapes: the shapes GE executes with), run by runtime v2's
``StreamExecutor`` with ``LoweringOptions(trust_shape_on_out_tensor=...)`` and judged from the caller's
tensors after the call, the device trace (the byte ranges the launches wrote, copies, allocations) and the
lowered execution graph. zcspec's tensors have one shape: GE's storage shape is the one given. zcspec has no
InferShape, Tiling or size-calculation kernels (shapes and sizes are attributes of the graph), so GE's
counts of those kernels are not ported; the EnsureTensorAtOutMemory node is what sets an output's shape.
See TRUST_OUTPUT_CASES.md for the rows without a test.
"""
from __future__ import annotations

import numpy as np

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case, refuses
from zcspec.checks.cases.ge.runtime_scenarios import copies, launches, two_input_add, written_starts
from zcspec.checks.cases.ge.trust_memcpy_scenarios import (
    device_inputs,
    fake_tensors_size,
    faked_size,
    N,
    STORAGE,
    two_add_nodes,
    two_output_node_and_add,
)
from zcspec.impl.device import Device
from zcspec.impl.device.trace import Alloc
from zcspec.impl.runtime.v2.errors import EnsureOutputError, GRAPH_FAILED, OutputBufferError, PARAM_INVALID
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor

TRUST = LoweringOptions(trust_shape_on_out_tensor=True)
TRUST_AZC = LoweringOptions(trust_shape_on_out_tensor=True, always_zero_copy=True)
OUT_SIZE = faked_size(STORAGE)  # 25690144: TensorFaker's buffer for storage 8x1x224x224x16 float


def _single_add(options):
    model = two_input_add((N,))
    dev = Device(model.soc)
    return dev, StreamExecutor(model, dev, options), device_inputs(dev, model)


def _given_output(dev, placement="device", size=OUT_SIZE, shape=STORAGE) -> Tensor:
    addr = dev.malloc(size) if placement == "device" else dev.host_malloc(size)
    return Tensor(addr, size, placement=placement, shape=shape)


@ge_case("trust_output_tensor_system_test.cc")
def TrustOutputTensor_NoInferShape_WhenEnable():
    """trust_output_tensor_system_test.cc TEST_F(TrustOutputTensorST, TrustOutputTensor_NoInferShape_WhenEnable):
    BuildSingleNodeGraph (data1, data2 -> Add -> NetOutput), trust_shape_on_out_tensor, inputs 8*3*224*224 float,
    a device output tensor of origin shape 8x3x224x224 and storage shape 8x1x224x224x16; GE expects both
    executions to succeed with the output tensor's shapes unchanged (the tiling sees them too), no InferShape
    kernel run and the Init graph's FindInferShapeFunc turned into a NoOp (tiling and Init graph not ported).
    Here the Add's output Ensure reads the caller's shape (TrustOutTensor: the Add's only output is the model's),
    the Add computes into the given buffer and the Ensure hands the tensor back with its own shape."""
    dev, exe, ins = _single_add(TRUST)
    (ensure,) = exe.graph.of_type("EnsureTensorAtOutMemory")
    fact(ensure.attr("trust_shape") is True, 'ensure.attr("trust_shape") is True')
    out = _given_output(dev)
    for _ in range(2):
        (got,) = exe.execute(ins, [out])
        expect(got.shape, STORAGE, 'got.shape')
    exe.unload()


@ge_case("trust_output_tensor_system_test.cc")
def TrustOutputTensor_Failed_WhenDisableZeroCopy():
    """trust_output_tensor_system_test.cc TEST_F(TrustOutputTensorST, TrustOutputTensor_Failed_WhenDisableZeroCopy):
    as TrustOutputTensor_NoInferShape_WhenEnable, the output tensor placed on the host (it does not match the
    Add output's placement, so zero copy cannot apply); GE expects the execution to fail, logging "output tensor
    data size 4849664 is less than copy size size 25690112". Here the Ensure's copy size is the caller's shape's
    25690112 bytes, more than the runtime's tensor data (the Add's output, allocated for the model's 4816896 bytes:
    4849664 in GE's allocator, zcspec's caching allocator rounds otherwise), so the call fails with GRAPH_FAILED
    naming both sizes; the caller's buffer is not written and the call leaves no allocation behind."""
    dev, exe, ins = _single_add(TRUST)
    out = _given_output(dev, "host")
    dev.host_write(out.addr, np.zeros(OUT_SIZE, np.uint8))
    with refuses(EnsureOutputError) as e:
        exe.execute(ins, [out])
    expect(e.value.code, GRAPH_FAILED, 'e.value.code')
    fact("is less than copy size 25690112" in str(e.value), '"is less than copy size 25690112" in str(e.value)')
    fact(not dev.host_read(out.addr, (OUT_SIZE,), np.uint8).any(), 'not dev.host_read(out.addr, (OUT_SIZE,), np.uint8).any()')
    expect((out.shape, out.placement, out.owned), (STORAGE, "host", None), '(out.shape, out.placement, out.owned)')
    expect(exe.allocator.in_use, 0, 'exe.allocator.in_use')
    exe.unload()


@ge_case("trust_output_tensor_system_test.cc")
def TrustOutputTensor_InferShape_WhenDefault():
    """trust_output_tensor_system_test.cc TEST_F(TrustOutputTensorST, TrustOutputTensor_InferShape_WhenDefault):
    default lowering options (trust off), the output tensor of storage shape 8x1x224x224x16 with TensorFaker's
    default placement (host); GE expects both executions to succeed with the output's origin and storage shape
    set to [8*3*224*224] and the Add's InferShape run twice. Here the shape-setting node, the output's
    EnsureTensorAtOutMemory reading OutputData, is in the lowered graph and runs on each execution."""
    dev, exe, ins = _single_add(LoweringOptions())
    (ensure,) = exe.graph.of_type("EnsureTensorAtOutMemory")
    expect(exe.graph.producer(ensure.inputs[1]).type, "OutputData", 'exe.graph.producer(ensure.inputs[1]).type')
    out = _given_output(dev, "host")
    for _ in range(2):
        (got,) = exe.execute(ins, [out])
        expect(got.shape, (N,), 'got.shape')
    exe.unload()


@ge_case("trust_output_tensor_system_test.cc")
def TrustOutputTensor_InferShape_WhenNodeHasMultipleOutputs():
    """trust_output_tensor_system_test.cc TEST_F(TrustOutputTensorST,
    TrustOutputTensor_InferShape_WhenNodeHasMultipleOutputs): BuildMinimumGradAndAddGraph (MinimumGrad output 0
    -> NetOutput, output 1 -> Add -> NetOutput), trust_shape_on_out_tensor, inputs 1x2x3x4 float, two device
    output tensors of shape 5x6x7x8 (FakeTensors: 13472 bytes each); GE expects both executions to succeed,
    output 0 with shape [1,2,3,4] and output 1 with [5,6,7,8]. MinimumGrad is a two-output Split here; GE's
    FakeTensors share one buffer between the two outputs, here each has its own. The Split's output 1 feeds the Add,
    so its output 0's Ensure keeps the model's shape; the Add's only output is the model's, so its Ensure reads the
    caller's shape (TrustOutTensor's CanBeDeleted)."""
    model = two_output_node_and_add()
    dev = Device(model.soc)
    exe = StreamExecutor(model, dev, TRUST)
    ins = device_inputs(dev, model)
    size = fake_tensors_size((5, 6, 7, 8))
    outs = [Tensor(dev.malloc(size), size, shape=(5, 6, 7, 8)) for _ in range(2)]
    for _ in range(2):
        got = exe.execute(ins, outs)
        expect([g.shape for g in got], [(1, 2, 3, 4), (5, 6, 7, 8)], '[g.shape for g in got]')
    exe.unload()


@ge_case("trust_output_tensor_system_test.cc")
def TrustOutputTensor_NoInferShapeAndAllocModelOut_WhenEnableNoInferShapeAndAlwaysZeroCopy():
    """trust_output_tensor_system_test.cc TEST_F(TrustOutputTensorST,
    TrustOutputTensor_NoInferShapeAndAllocModelOut_WhenEnableNoInferShapeAndAlwaysZeroCopy): BuildSingleNodeGraph,
    trust_shape_on_out_tensor and always_zero_copy, a device output tensor of storage 8x1x224x224x16; GE expects
    both executions to succeed with the output's shapes unchanged, no InferShape, AllocMemHbm, AllocMemory,
    AllocModelOutTensor(AndUpdateShape), EnsureTensorAtOutMemory or CalcTensorSizeFromShape run,
    SplitTensorForOutputData run twice (once per execution), and one Add kernel launched per execution with the
    given address as its output address (addresses[2]). Here: the lowered graph has one SplitTensorForOutputData
    and none of those alloc or Ensure nodes; each execution allocates nothing, copies nothing and launches one
    Add that writes the given buffer."""
    dev, exe, ins = _single_add(TRUST_AZC)
    types = [n.type for n in exe.graph.nodes]
    expect(types.count("SplitTensorForOutputData"), 1, 'types.count("SplitTensorForOutputData")')
    fact(not {"AllocMemHbm", "AllocMemory", "AllocModelOutTensor", "EnsureTensorAtOutMemory"} & set(types),
         'not {"AllocMemHbm", "AllocMemory", "AllocModelOutTensor", "EnsureTensorAtOutMemory"} & set(types)')
    out = _given_output(dev)
    for _ in range(2):
        mark = dev.trace.mark()
        (got,) = exe.execute(ins, [out])
        (add,) = launches(dev, mark)
        fact(add.op_type == "Add" and written_starts(add) == {out.addr},
             'add.op_type == "Add" and written_starts(add) == {out.addr}')
        fact(copies(dev, mark) == [] and dev.trace.of_type(Alloc, mark) == (),
             'copies(dev, mark) == [] and dev.trace.of_type(Alloc, mark) == ()')
        expect(got.shape, STORAGE, 'got.shape')
    fact((dev.peek(out.addr, (N,), np.float32) == 2.0).all(), '(dev.peek(out.addr, (N,), np.float32) == 2.0).all()')
    exe.unload()


@ge_case("trust_output_tensor_system_test.cc")
def TrustOutputTensorAndAlwaysZeroCopy_CheckOutTensorSizeFailed():
    """trust_output_tensor_system_test.cc TEST_F(TrustOutputTensorST,
    TrustOutputTensorAndAlwaysZeroCopy_CheckOutTensorSizeFailed): BuildSingleNodeGraph, trust_shape_on_out_tensor
    and always_zero_copy, a device output tensor whose buffer was built for storage 8x1x224x224x1 (1605664 bytes)
    and whose storage shape is then set to 8x1x224x224x16; GE expects the execution to fail ("The output tensor
    memory size[1605664] is smaller than the actual size[25690112]"). Here it fails with PARAM_INVALID before
    anything is allocated, copied or launched. (GE's required size comes from the caller's storage shape,
    zcspec's is the model output's 4816896 bytes: docs/ge-deviations.md W3; both refuse this buffer.)"""
    dev, exe, ins = _single_add(TRUST_AZC)
    out = _given_output(dev, size=faked_size((8, 1, 224, 224, 1)))
    mark = dev.trace.mark()
    with refuses(OutputBufferError) as e:
        exe.execute(ins, [out])
    expect(e.value.code, PARAM_INVALID, 'e.value.code')
    fact(launches(dev, mark) == [] and copies(dev, mark) == [] and dev.trace.of_type(Alloc, mark) == (),
         'launches(dev, mark) == [] and copies(dev, mark) == [] and dev.trace.of_type(Alloc, mark) == ()')
    exe.unload()


@ge_case("trust_output_tensor_system_test.cc")
def TrustOutputTensor_NoInferShapeButHasFindInferShape_WhenEnableNoInferShapeAndAlwaysZeroCopy():
    """trust_output_tensor_system_test.cc TEST_F(TrustOutputTensorST,
    TrustOutputTensor_NoInferShapeButHasFindInferShape_WhenEnableNoInferShapeAndAlwaysZeroCopy):
    BuildTwoAddNodeGraph (data1, data2 -> add1; data1, add1 -> add2 -> NetOutput), trust_shape_on_out_tensor and
    always_zero_copy, inputs 8*3*224*224 float, a device output tensor of storage 8x1x224x224x16; GE expects the
    execution to succeed with the output's shapes unchanged, one InferShape run (add1's, which does not feed
    NetOutput) and FindInferShapeFunc kept in the Init graph (those two not ported: zcspec has neither). Here
    add2's launch writes the given buffer."""
    model = two_add_nodes()
    dev = Device(model.soc)
    exe = StreamExecutor(model, dev, TRUST_AZC)
    ins = device_inputs(dev, model)
    out = _given_output(dev)
    mark = dev.trace.mark()
    (got,) = exe.execute(ins, [out])
    expect(got.shape, STORAGE, 'got.shape')
    add1, add2 = launches(dev, mark, "Add")
    fact(written_starts(add2) == {out.addr} and out.addr not in written_starts(add1),
         'written_starts(add2) == {out.addr} and out.addr not in written_starts(add1)')
    exe.unload()
