"""The differences from GE that docs/ge-deviations.md lists and no other test pins.

Each test asserts zcspec's behaviour and names GE's in a comment: it fails the day
zcspec changes on that point, so the row in docs/ge-deviations.md has to change too.
"""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.checks.scenario import Scenario, observe
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model, compile_stages
from zcspec.impl.compiler.errors import GraphError
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes
from zcspec.impl.device import Device
from zcspec.impl.runtime.v2.errors import InputBufferError, OutputBufferError
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor
from zcspec.spec.check import check
from tests.helpers.runtime_v2 import out_buffer, relu_neg, stage

N = 256  # (1, N) float32: 1024 bytes


def test_an_in_place_output_shares_the_input_it_names():
    # GE (mem_inplace.cc ProcessInplace, GetSupportInplaceOutput): _output_inplace_ability pairs may name
    # any input. zcspec: _reuse_input=k shares input k (True: input 0); once a deviation (input 0 only).
    for reuse, shared in ((True, "a:0"), (0, "a:0"), (1, "c:0")):
        b = GraphBuilder("ip")
        x = b.input("x", (1, N))
        a, c = b.op("Relu", [x], name="a"), b.op("Abs", [x], name="c")
        s = b.op("Sub", [a, c], name="s", _reuse_input=reuse)
        b.output(b.op("Neg", [s], name="o"))
        graph = b.build()
        assert plan_memory(graph).tensor("s:0").alias_of == shared, reuse
        for o in observe(Scenario("execution", graph, CompileOptions(), {"runs": [{"runtime": "v1"}, {"runtime": "v2"}]})):
            report = check(o)
            assert report.ok and {"EXEC-ORACLE", "EXEC-INPLACE-SAME-BYTES"} <= set(report.exercised), report


def test_an_in_place_index_that_names_no_input_is_refused():
    b = GraphBuilder("ip")
    x = b.input("x", (1, N))
    b.output(b.op("Relu", [x], name="s", _reuse_input=1))
    with pytest.raises(GraphError, match="'s' has _reuse_input=1: it must be True .input 0. or the index of one of "
                                         "its 1 inputs") as e:
        plan_memory(b.build())
    assert e.value.node == "s"


def test_a_reuse_input_output_on_a_graph_input_gets_its_own_memory():
    # GE (graph_utils.cc IsRefFromInput; block_mem_assigner.cc ApplyOutMemory): a mandatory ref is trusted,
    # even on a graph input. zcspec's in-place guard never writes a graph input in place (aliases.symbols).
    b = GraphBuilder("ref")
    x = b.input("x", (1, N))
    s = b.op("Relu", [x], name="s", _reuse_input=True)
    b.output(b.op("Neg", [s], name="o"))
    p = plan_memory(b.build())
    assert p.tensor("s:0").alias_of is None and p.tensor("s:0").region == "feature_map"


def test_always_zero_copy_ignores_the_callers_declared_shape():
    # GE (build_tensor.cc SplitTensorForOutputData): the required size is the raw bytes of the caller
    # tensor's own storage shape. zcspec requires the model output's raw bytes, the bytes its kernel
    # writes: a buffer of exactly those bytes passes even when the caller declares a larger shape
    # (GE refuses it), and a smaller declared shape does not let a smaller buffer through (GE would).
    model = relu_neg()
    io = model.tasks.outputs[0]
    dev = Device()
    exe = StreamExecutor(model, dev, LoweringOptions(always_zero_copy=True))
    out = out_buffer(dev, io)
    out.shape, out.dtype = (20, 10), "float32"   # 800 bytes declared, 400 given: GE refuses
    exe.execute(stage(dev, model), [out])
    small = Tensor(dev.malloc(200), 200, "device", (5, 10), "float32")  # declared 200 bytes: GE accepts
    with pytest.raises(OutputBufferError, match="smaller than the actual size 400"):
        exe.execute(stage(dev, model), [small])


def test_an_undersized_input_is_refused_before_it_is_shared():
    # GE (build_tensor.cc SplitDataTensor) shares the caller's input tensor data with no null or size
    # check. zcspec refuses a null or undersized input buffer before anything runs.
    model = relu_neg()
    dev = Device()
    exe = StreamExecutor(model, dev)
    with pytest.raises(InputBufferError, match="buffer is 100 bytes"):
        exe.execute([Tensor(dev.malloc(100), 100)], [out_buffer(dev, model.tasks.outputs[0])])
    assert exe.allocator.in_use == 0


def test_v1_keeps_a_graph_input_that_is_also_a_graph_output_zero_copy_and_copies_the_output_once():
    # GE (davinci_model.cc GenMemAllocations, CopyOutputForNoZeroCopy): a Data feeding
    # NetOutput stays zero copy and the output is copied once, from the user's input buffer. zcspec once
    # made both copy-only (two copies through the model's I/O region): row V1, fixed.
    from zcspec.impl.device.trace import Copy
    from zcspec.impl.runtime.v1 import LoadOptions, load
    from zcspec.impl.runtime.user_buffers import alloc_outputs, read_outputs, stage_inputs

    b = GraphBuilder("pt")
    x = b.input("x", (1, N))
    b.output(x, b.op("Relu", [x], name="r"))
    m = build_model(b.build())
    dev = Device()
    lm = load(dev, m, LoadOptions())
    assert {z.name for z in lm.io if z.copy_only} == {"x:output0"}
    data = np.arange(N, dtype=np.float32).reshape(1, N) - 100
    ins, outs = stage_inputs(dev, m, {"x": data}), alloc_outputs(dev, m)
    mark = dev.trace.mark()
    lm.execute(ins, outs)
    (copy,) = dev.trace.of_type(Copy, mark)
    assert (copy.src, copy.dst, copy.nbytes) == (ins[0].addr, outs[0].addr, data.nbytes)
    np.testing.assert_array_equal(read_outputs(dev, m, outs)["x"], data)


def test_a_data_read_through_a_view_by_an_op_without_refresh_is_not_zero_copy():
    # GE (block_mem_assigner.cc IsZeroCopyBlock) asks the Data node's direct consumers (here a Reshape,
    # which supports zero copy). zcspec asks every reader of the symbol, through views: the Relu that
    # reads x's bytes through the Reshape cannot refresh, so x is not zero copy.
    from zcspec.impl.compiler.memory.options import PlanOptions

    b = GraphBuilder("vz")
    x = b.input("x", (2, N // 2))
    b.output(b.op("Neg", [b.op("Relu", [b.op("Reshape", [x], name="rs", shape=(1, N))], name="r")], name="o"))
    g = b.build()
    assert plan_memory(g).tensor("x").zero_copy
    assert not plan_memory(g, PlanOptions(no_zero_copy_ops={"Relu"})).tensor("x").zero_copy


def _data_into_a_collective_and_the_output():
    b = GraphBuilder("data_to_collective_and_output")
    x, y = b.input("x", (1, N)), b.input("y", (1, N))
    outs = b.op("HcomAllReduce", [x, y], name="ar", outputs=[((1, N), "float32")] * 2)
    b.output(*outs, y)
    return b.build()


def test_a_data_read_by_a_collective_and_the_netoutput_gets_one_copy_for_each():
    # GE (mem_layout_conflict_optimizer.cc SolveConflict): user input x continuous input puts an Identity right
    # after the Data for all its consumers, and user output x continuous input a second one before the NetOutput
    # input, so y -> Identity -> Identity -> NetOutput. zcspec's NetOutput copy reads y itself: one copy fewer on
    # the output's way, the same memory facts (y zero copy, the collective's block holds copies only).
    opts = CompileOptions()
    st = compile_stages(_data_into_a_collective_and_the_output(), opts)
    g = st.graph
    readers = {c: g.node[c].op_type for c in g.consumers["y"]}
    assert readers == {"identity_1_ar_MemLayoutConflict_2": "MemcpyAddrAsync",
                       "identity_2_NetOutput_MemLayoutConflict_0": "MemcpyAddrAsync"}
    assert g.outputs[2] == "identity_2_NetOutput_MemLayoutConflict_0:0"
    assert st.plan.tensor("y").zero_copy and st.plan.tensor(g.outputs[2]).zero_copy
    kinds = {n.name: n.type for n in observe_model_file(encode(st.model), g, opts).nodes}
    assert kinds["identity_1_ar_MemLayoutConflict_2"] == "Identity"   # GE's node type, as the model file says


def test_a_kernel_in_a_loop_reading_a_data_gets_a_conflict_copy_on_legacy():
    # GE (mem_layout_conflict_util.cc IsAddressRefreshable): only HCCL ops without address refresh (and
    # StreamSwitch, LabelSwitchByIndex, unregistered custom engines) are unrefreshable anchors. zcspec's SoC
    # profiles say per task kind what can be refreshed (legacy: no HCCL task, no task inside a loop), and the
    # conflict pass copies wherever such a task would hold user memory.
    b = GraphBuilder("loop_kernel")
    x = b.input("x", (1, N))
    b.output(b.op("Relu", [x], name="loop_relu", _in_loop=True))
    legacy = run_passes(b.build(), CompileOptions(soc="legacy"))
    assert legacy.node["loop_relu"].inputs == ("identity_0_loop_relu_MemLayoutConflict_1:0",)
    assert legacy.node["identity_0_NetOutput_MemLayoutConflict_0"].inputs == ("identity_0_NetOutput_MemLayoutConflict_0:src",)
    assert run_passes(b.build(), CompileOptions()).node["loop_relu"].inputs == ("x",)
