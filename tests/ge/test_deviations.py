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
from zcspec.impl.device.trace import Copy
from zcspec.impl.runtime.v1 import LoadOptions, ParamInvalid, load
from zcspec.impl.runtime.v1.observe import observe_execution
from zcspec.impl.runtime.v2.errors import InputBufferError, OutputBufferError
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor
from zcspec.spec.check import check
from tests.helpers.runtime_v1 import buffers, mlp
from tests.helpers.runtime_v2 import out_buffer, relu_neg, stage

N = 256  # (1, N) float32: 1024 bytes


def test_an_in_place_output_shares_the_input_it_names():
    # GE (mem_inplace.cc ProcessInplace; graph_utils.cc GraphUtils::GetSupportInplaceOutput): _output_inplace_ability pairs may name
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


def test_a_collective_output_to_the_netoutput_is_zero_copy_where_the_soc_refreshes_collectives():
    # GE (block_mem_assigner.cc IsNodeSupportZeroCopy, ge_op_utils.cc IsHcomNodeNotSupportAddrRefresh): every
    # HCCL-engine node is "not support address refresh", so IsZeroCopyBlock is false for its output to the
    # NetOutput (GE's IsZeroCopyBlock_unsupport_hccl) unless the feature map is refreshable. zcspec takes
    # the collectives a SoC cannot refresh from its profile (hccl_no_zero_copy): none on ascend910b, all on legacy.
    b = GraphBuilder("collective_out")
    x = b.input("x", (1, N))
    b.output(b.op("HcomAllReduce", [b.op("Relu", [x], name="r")], name="ar"))
    g = b.build()
    st = compile_stages(g, CompileOptions())
    assert st.graph.producer["ar:0"] == "ar" and st.graph.outputs == ("ar:0",) and st.plan.tensor("ar:0").zero_copy
    legacy = compile_stages(g, CompileOptions(soc="legacy"))   # GE's way: the collective's output is copied
    assert legacy.graph.producer[legacy.graph.outputs[0]] != "ar"
    assert not legacy.plan.tensor(legacy.graph.node["ar"].outputs[0]).zero_copy


def _collective_model_meta():
    from zcspec.impl.compiler.model_file.encode import metadata

    b = GraphBuilder("hccl_flags")
    x, h = b.input("x", (1, N)), b.input("h", (1, N))
    b.output(b.op("Relu", [x], name="r"), b.op("HcomAllReduce", [b.op("Neg", [h], name="n")], name="ar"))
    model = build_model(b.build(), CompileOptions())
    meta, blob = metadata(model)
    task = next(t for t in meta["tasks"]["tasks"] if t["kind"] == "hccl")
    return meta, blob, task


def test_an_hccl_task_needs_one_zero_copy_flag_per_buffer_of_each_role():
    # GE (hccl_task_info.cc HcclTaskInfo::InitZeroCopyInfos): a non-empty input (output) flag list must have one
    # flag per input (output), else the load fails; an empty list is accepted and means no zero copy. zcspec
    # checks each list's length the same way, and also refuses an empty one: its model file carries every
    # buffer's flag, which must follow from the plan (model_file/consistency.py).
    from zcspec.impl.compiler.model_file.encode import pack
    from zcspec.impl.compiler.model_file.errors import ModelFormatError
    from zcspec.impl.compiler.model_file.load import load_model

    meta, blob, task = _collective_model_meta()
    assert len(task["zero_copy_in"]) == 1 and len(task["zero_copy_out"]) == 1
    load_model(pack(meta, blob))
    task["zero_copy_out"] = task["zero_copy_out"] + task["zero_copy_in"]
    task["zero_copy_in"] = []   # the total count is right, each role's is not: GE refuses the output list
    with pytest.raises(ModelFormatError, match=r"zero_copy_in.*0 zero-copy flags for 1 in buffers"):
        load_model(pack(meta, blob))
    task["zero_copy_out"] = task["zero_copy_out"][:1]   # both lists empty or right: GE loads this one
    with pytest.raises(ModelFormatError, match=r"zero_copy_in.*0 zero-copy flags for 1 in buffers"):
        load_model(pack(meta, blob))


def test_each_atomic_node_has_its_own_memset_task_over_its_outputs():
    # GE (graph_mem_assigner.cc SetAtomicCleanOffset, MergeCleanMemInfos): the memset (AtomicAddrClean) node
    # gets the offsets and sizes of every atomic input, output and workspace of the nodes it cleans, adjacent
    # ranges merged into one. zcspec: one memset task per atomic node, whose slots are that node's outputs.
    b = GraphBuilder("atomic")
    x = b.input("x", (4, N))
    r1 = b.op("ReduceSum", [x], name="r1", shape=(4, 1), axes=(1,), keepdims=1)
    r2 = b.op("ReduceSum", [x], name="r2", shape=(4, 1), axes=(1,), keepdims=1)
    b.output(b.op("Add", [r1, r2], name="s"))
    model = build_model(b.build(), CompileOptions())
    memsets = [t for t in model.tasks.tasks if t.kind == "memset"]
    assert [(t.node, [s.tensor for s in t.slots]) for t in memsets] == [("r1", ["r1:0"]), ("r2", ["r2:0"])]


def test_an_empty_graph_input_feeding_the_netoutput_offline_gets_a_copy_too():
    # GE (memcpy_addr_async_pass.cc InsertMemAddrAsyncNodeBeforeNetoutput, IsEmptyTenor): no MemcpyAddrAsync for
    # a tensor with a dimension of 0. zcspec copies an empty tensor as any other.
    b = GraphBuilder("empty_io")
    b.output(b.input("x", (1, 0, 4)))
    g = run_passes(b.build(), CompileOptions(offline=True))
    assert [n.op_type for n in g.nodes if n.op_type == "MemcpyAddrAsync"] == ["MemcpyAddrAsync"]


def test_a_continuous_block_takes_a_block_that_starts_before_an_atomic_node(ge_graph):
    # GE (block_mem_assigner.cc ReuseBlocksByLifeTime; block_mem_assigner.h GetAtomicAddrCleanId): a continuous parent skips a
    # child whose first node's id is below the last AtomicAddrClean node's. zcspec's IR has no such node
    # (an atomic node's memset is its own task); under GE's default clean policy the one AtomicAddrClean
    # node runs before every other task (atomic_addr_clean_pass.cc LinkToPotentialPrecedenceNode), so the
    # rule refuses no block that can merge. Here X starts before the atomic ReduceSum and still goes into
    # the concat's block, as it would without the ReduceSum (test_level2_continuous.py).
    g = ge_graph("continuous_after_atomic")
    g.node("X", outs=(2048,)).node("Y", outs=(512,)).node("R", op="ReduceSum", outs=(512,))
    g.node("A", outs=(1000,)).node("B", outs=(1000,)).node("P", op="PhonyConcat", outs=(2000,))
    g.node("C", outs=(512,)).node("out", op="NetOutput", outs=())
    g.edge("X", 0, "Y", 0).edge("Y", 0, "R", 0).edge("R", 0, "A", 0).edge("R", 0, "B", 0)
    g.edge("A", 0, "P", 0).edge("B", 0, "P", 1).edge("P", 0, "C", 0).edge("C", 0, "out", 0)
    plan = g.plan()
    group = next(b for b in plan.blocks if "P:0" in b.tensors)
    assert next(b for b in plan.blocks if "X:0" in b.tensors).parent == group.id


def test_host_io_is_staged_whatever_work_memory_the_caller_gave():
    # GE (davinci_model.cc ConstructZeroCopyIoActiveBaseAddrs, InitFeatureMapAndP2PMem): a host-placed zero-copy
    # I/O is copied into the model's own I/O region, and refused (E13025) whenever the memory the model holds
    # is below TotalMemSize (mem_base_size_: the caller's work memory as given, or what GE allocated, the
    # feature map alone under reuseZeroCopyMemory). zcspec stages a host I/O through a device buffer of its
    # own for the call (runtime/v1/execute.py _stage), so it runs with work memory that leaves the I/O region
    # out, and it refuses host I/O under reuseZeroCopyMemory even when the caller's work memory covers it.
    m = mlp()
    fm = m.regions["feature_map"]
    assert fm < m.memory_size                       # the I/O region is not in this work memory: GE refuses
    dev = Device(m.soc)
    work = dev.malloc(fm, tag="caller work memory")
    lm = load(dev, m, LoadOptions(), work=(work, fm))
    ins, outs = buffers(dev, m, placement="host")
    mark = dev.trace.mark()
    rec = lm.execute(ins, outs)
    assert rec.ok and check(observe_execution(lm, rec)).ok
    h2d = [e for e in dev.trace.since(mark) if isinstance(e, Copy) and e.direction == "h2d"]
    assert h2d and all(not work <= e.dst < work + fm for e in h2d)   # staged outside the caller's memory
    dev = Device(m.soc)
    work = dev.malloc(m.memory_size, tag="caller work memory")   # covers TotalMemSize: GE accepts host I/O
    lm = load(dev, m, LoadOptions(reuse_zero_copy_memory=1), work=(work, m.memory_size))
    ins, outs = buffers(dev, m, placement="host")
    with pytest.raises(ParamInvalid, match="Zero-copy memory reuse mode"):
        lm.execute(ins, outs)


def test_an_in_place_pair_is_judged_against_the_symbols_merged_so_far(ge_graph):
    # GE (mem_inplace.cc ProcessInplace, RemoveSymbolConflicts, MergeSymbolTable): every node's pairs are judged
    # against the symbol table as it was before ProcessInplace, and the kept pairs are merged once at the end.
    # Here a1 (in place on b:0, which the collective ar reads as a continuous input) and a2 (in place on a1:0,
    # writing a graph output) both pass in GE, since a1:0's symbol holds no continuous anchor yet, and the
    # merge then puts the graph output into the collective's continuous symbol. zcspec judges a2 against the
    # symbol a1 already joined: the graph output with the continuous input conflicts, so a2:0 keeps its own
    # (zero-copy) memory.
    g = ge_graph("chain_into_continuous_input")
    g.node("x", op="Data", outs=(1024,)).node("b", op="Neg", outs=(1024,)).node("c", op="Abs", outs=(1024,))
    g.node("ar", op="HcomAllReduce", outs=(1024, 1024))
    g.node("a1", op="Relu", outs=(1024,), _inplace_ability=(0, 0))
    g.node("a2", op="Relu", outs=(1024,), _inplace_ability=(0, 0))
    g.node("out", op="NetOutput", outs=())
    g.edge("x", 0, "b", 0).edge("x", 0, "c", 0).edge("b", 0, "a1", 0).edge("b", 0, "ar", 0).edge("c", 0, "ar", 1)
    g.edge("a1", 0, "a2", 0).edge("a2", 0, "out", 0).edge("ar", 0, "out", 1).edge("ar", 1, "out", 2)
    assert g.order().index("ar") < g.order().index("a1") < g.order().index("a2")
    plan = g.plan()
    assert plan.tensor("a1:0").alias_of == "b:0"
    assert plan.tensor("a2:0").alias_of is None and plan.tensor("a2:0").zero_copy


def test_an_in_place_pair_across_streams_is_kept_when_the_stream_order_allows_it(ge_graph):
    # GE (graph_utils.cc GraphUtils::GetSupportInplaceOutput, HasSameStreamId): an optional pair is a candidate
    # only when the input's producer and all its consumers run on one stream; n (stream 1) reading p:0 (stream
    # 0) stays out of place. zcspec keeps the pair when every earlier reader of the symbol is known to have run
    # before n (aliases._readers_done, stream_order.known_before): p's only reader is n.
    g = ge_graph("inplace_other_stream")
    g.node("x", op="Data", outs=(1024,)).node("p", op="Neg", outs=(1024,))
    g.node("n", op="Relu", outs=(1024,), _inplace_ability=(0, 0), stream=1)
    g.node("o", op="Abs", outs=(1024,), stream=1).node("out", op="NetOutput", outs=())
    g.edge("x", 0, "p", 0).edge("p", 0, "n", 0).edge("n", 0, "o", 0).edge("o", 0, "out", 0)
    assert g.plan().tensor("n:0").alias_of == "p:0"


def test_a_ref_before_a_later_reader_gets_its_own_memory_and_the_later_pair_is_kept(ge_graph):
    # GE (graph_utils.cc IsRefFromInput; GetSupportInplaceOutput, HasRefAttr): the ref c is trusted (c:0 writes
    # p:0 in place although n reads p:0 after c), and n's optional pair is refused because a consumer of p
    # carries the reference attribute. zcspec's guard gives c:0 its own memory (n still needs p:0's bytes), and
    # then n, p:0's last reader, runs in place.
    g = ge_graph("inplace_ref_sibling")
    g.node("x", op="Data", outs=(1024,)).node("p", op="Neg", outs=(1024,))
    g.node("c", op="Relu", outs=(1024,), _reuse_input=True)
    g.node("n", op="Abs", outs=(1024,), _inplace_ability=(0, 0))
    g.node("s", op="Add", outs=(1024,)).node("out", op="NetOutput", outs=())
    g.edge("x", 0, "p", 0).edge("p", 0, "c", 0).edge("p", 0, "n", 0).edge("c", 0, "s", 0).edge("n", 0, "s", 1)
    g.edge("s", 0, "out", 0).ctrl("c", "n")
    assert g.order().index("c") < g.order().index("n")
    plan = g.plan()
    assert plan.tensor("c:0").alias_of is None and plan.tensor("n:0").alias_of == "p:0"
