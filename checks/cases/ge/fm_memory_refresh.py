"""GE's ``tests/ge/st/testcase/test_fm_memory_refresh.cc`` (FmMemoryRefreshTest), ported: the tests on a
refreshable feature-map base, caller work and weight memory, zero copy and forced copies of model I/O, and
the I/O checks of an execution.

GE builds a graph (``ShareGraph::BuildSwitchMergeGraph`` and friends), compiles it through a ``Session``
(``ge.featureBaseRefreshable``, ``ge.constLifecycle``), hands it weight and feature memory
(``SetGraphConstMemoryBase``, ``UpdateGraphFeatureMemoryBase``), runs it and reads the runtime stub (its
``ArgsChecker`` over the argument tables, memcpy records) or the output buffers. Here the graph is rebuilt
as a zcspec graph (execute_scenarios.py), compiled by zcspec, loaded by runtime v1 with
``LoadOptions(feature_base_refreshable=...)`` and the caller's ``work=``/``weight=`` memory, moved with
``LoadedModel.update_work_memory`` (GE's UpdateGraphFeatureMemoryBase after load), and judged from what the
emulated device saw: the ranges each launch read and wrote, argument-slot rewrites, copies, frees. The
other TEST_Fs (fixed feature memory, io-reuse options, summaries, DSA/AICPU/RTS ops...) are rows in
FM_REFRESH_CASES.md.
"""
from __future__ import annotations

import numpy as np

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case, refuses
from zcspec.checks.cases.ge.execute_scenarios import (
    arg_refreshes,
    atomic_to_netoutput,
    copies_into,
    data_to_netoutput,
    FILL,
    ge_io,
    hcom_graph,
    inside,
    launch_of,
    netoutput_not_zero_copy,
    OUT_BYTES,
    reshape_graph,
    SHAPE,
    switch_merge,
)
from zcspec.checks.cases.ge.runtime_scenarios import copies, launches, range_starts, written_starts
from zcspec.impl.device import Device
from zcspec.impl.device.trace import Alloc, Free
from zcspec.impl.runtime.user_buffers import alloc_outputs, stage_inputs, UserBuffer
from zcspec.impl.runtime.v1 import load, LoadOptions, ParamInvalid

REFRESHABLE = LoadOptions(feature_base_refreshable=True)


def _caller_memory(dev, model):
    """Weight and feature memory the caller owns (GE's summary sizes, SetGraphConstMemoryBase and
    UpdateGraphFeatureMemoryBase before the first run): ((fm, fm size), (weight, weight size))."""
    fm, w = model.regions["feature_map"], model.regions["weight"]
    return (dev.malloc(fm, tag="user feature memory"), fm), (dev.malloc(w, tag="user weight memory"), w)


def _task_addresses_are_correct(dev, mark, ins, outs, fm, weight=None, adds=2):
    """GE's ArgsChecker::TaskIoAddressesAreCorrect on the switch/merge graph, from the launches since
    ``mark``: each Add reads the user's data_1 (add_1) or the previous Add's output, and const_1 in the
    weight memory, and writes inside the feature memory ``fm``; merge_1 reads the user's data_2, the last
    Add's output and the user's data_1 and writes the user's output buffer."""
    data_1, data_2 = ins
    previous = data_1.addr
    for i in range(adds):
        add = launch_of(dev, mark, f"add_{i + 1}")
        (src, _), (const, n) = add.reads
        expect(src, previous, 'src')
        if weight is not None:
            fact(inside([(const, n)], *weight), 'inside([(const, n)], *weight)')
        fact(inside(add.writes, *fm), 'inside(add.writes, *fm)')
        previous = add.writes[0][0]
    merge = launch_of(dev, mark, "merge_1")
    expect([r[0] for r in merge.reads], [data_2.addr, previous, data_1.addr], '[r[0] for r in merge.reads]')
    expect(written_starts(merge), {outs[0].addr}, 'written_starts(merge)')


@ge_case("test_fm_memory_refresh.cc")
def fm_memory_refresh_with_outputs_nozerocopy():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, fm_memory_refresh_with_outputs_nozerocopy):
    ge.featureBaseRefreshable=1, BuildSwitchMergeGraphWithTwoOutputs (the Merge output feeds both NetOutput
    inputs, so it cannot be zero copy into either); GE expects the run to succeed with both outputs copied:
    output 0 no longer its initial 0xff bytes, and equal to output 1. Here the Merge launch writes model
    memory, and that one range is copied into each user buffer (96 bytes each)."""
    model = switch_merge(twice=True)
    dev = Device(model.soc)
    lm = load(dev, model, REFRESHABLE)
    ins, outs = ge_io(dev, model)
    mark = dev.trace.mark()
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    (src,) = written_starts(launch_of(dev, mark, "merge_1"))
    fact(src not in {o.addr for o in outs}, 'src not in {o.addr for o in outs}')
    expect(sorted((c.dst, c.src, c.nbytes) for c in copies_into(dev, mark, outs)),
           sorted((o.addr, src, OUT_BYTES) for o in outs), "the copies into the outputs (dst, src, bytes)")
    got = [dev.peek(o.addr, (OUT_BYTES,), np.uint8) for o in outs]
    fact((got[0] != FILL).any() and (got[0] == got[1]).all(), '(got[0] != FILL).any() and (got[0] == got[1]).all()')


def _atomic_outputs_written_in_place(through_ref: bool):
    model = atomic_to_netoutput(through_ref=through_ref)
    dev = Device(model.soc)
    lm = load(dev, model)
    ins, outs = ge_io(dev, model)
    mark = dev.trace.mark()
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    expect(copies_into(dev, mark, outs), [], 'copies_into(dev, mark, outs)')
    cleaned = set().union(*(written_starts(m) for m in launches(dev, mark, "AtomicAddrClean")))
    expect(cleaned, {o.addr for o in outs}, 'cleaned')
    expect(set().union(*(written_starts(r) for r in launches(dev, mark, "ReduceSum"))), {o.addr for o in outs},
           'set().union(*(written_starts(r) for r in launches(dev, mark, "ReduceSum")))')
    return dev, mark, outs


@ge_case("test_fm_memory_refresh.cc")
def AtomicNodeConnectNetoutput_ZeroCopy():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, AtomicNodeConnectNetoutput_ZeroCopy): default
    options, BuildAtomicNodeConnectNetoutput (a node with atomic outputs 0 and 1, both feeding NetOutput);
    GE expects success and both outputs zero copy: no copy into the user buffers (they keep the stub's
    untouched 0xff bytes, output 0 equal to output 1). Here no copy lands in either user buffer; the atomic
    clean (memset) and the atomic kernel of each output write the user's buffer itself."""
    _atomic_outputs_written_in_place(through_ref=False)


@ge_case("test_fm_memory_refresh.cc")
def AtomicNodeConnectNetoutputThroughRefNode_ZeroCopy():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, AtomicNodeConnectNetoutputThroughRefNode_ZeroCopy):
    the same with output 0 passing a ref node (ATTR_NAME_REFERENCE) before NetOutput; GE expects both
    outputs zero copy (no copy into the user buffers). Here the memset, the atomic kernel and the in-place
    ref node all write the user's output-0 buffer; nothing is copied into it."""
    dev, mark, outs = _atomic_outputs_written_in_place(through_ref=True)
    expect(written_starts(launch_of(dev, mark, "ref_node")), {outs[0].addr},
           'written_starts(launch_of(dev, mark, "ref_node"))')


@ge_case("test_fm_memory_refresh.cc")
def fm_memory_refresh_with_inner_mem_free():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, fm_memory_refresh_with_inner_mem_free):
    ge.featureBaseRefreshable=1, BuildSwitchMergeGraph; the first run uses feature memory GE allocated
    itself, then UpdateGraphFeatureMemoryBase hands over the caller's feature memory (of the summary's
    feature size) and the second run uses it; GE expects both runs to succeed. Here the model's own
    feature-map allocation is freed when the caller's memory takes over, and the second run's Add writes
    land in the caller's memory."""
    model = switch_merge()
    dev = Device(model.soc)
    mark = dev.trace.mark()
    lm = load(dev, model, REFRESHABLE)
    (own,) = [a for a in dev.trace.of_type(Alloc, mark) if "feature map" in a.tag]
    ins, outs = ge_io(dev, model)
    mark = dev.trace.mark()
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    fact(inside(launch_of(dev, mark, "add_1").writes, own.addr, own.size),
         'inside(launch_of(dev, mark, "add_1").writes, own.addr, own.size)')
    (fm, size), _ = _caller_memory(dev, model)
    mark = dev.trace.mark()
    lm.update_work_memory(fm, size)
    expect([f.addr for f in dev.trace.of_type(Free, mark)], [own.addr],
           '[f.addr for f in dev.trace.of_type(Free, mark)]')
    mark = dev.trace.mark()
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    _task_addresses_are_correct(dev, mark, ins, outs, (fm, size), adds=1)


@ge_case("test_fm_memory_refresh.cc")
def fm_memory_refresh_with_check_tensor_index():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, fm_memory_refresh_with_check_tensor_index):
    ge.featureBaseRefreshable=1, BuildSwitchMergeGraph (two Data inputs) run with one input tensor; GE
    expects the run to fail. Here ParamInvalid, and nothing is launched."""
    model = switch_merge()
    dev = Device(model.soc)
    lm = load(dev, model, REFRESHABLE)
    ins, outs = ge_io(dev, model)
    mark = dev.trace.mark()
    with refuses(ParamInvalid):
        lm.execute(ins[:1], outs)
    expect(launches(dev, mark), [], 'launches(dev, mark)')


@ge_case("test_fm_memory_refresh.cc")
def fm_memory_refresh_with_check_tensor_size():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, fm_memory_refresh_with_check_tensor_size):
    ge.featureBaseRefreshable=1, BuildSwitchMergeGraph run with an output tensor of 1 byte (sizeof(bool))
    for the 96-byte int32 1x2x3x4 output; GE expects the run to fail. Here ParamInvalid (1 + 64 bytes is
    below the output's padded 128), and nothing is launched."""
    model = switch_merge()
    dev = Device(model.soc)
    lm = load(dev, model, REFRESHABLE)
    ins, _ = ge_io(dev, model)
    tiny = UserBuffer(model.tasks.outputs[0].tensor, dev.malloc(1), 1)
    mark = dev.trace.mark()
    with refuses(ParamInvalid, match="plus the aligned 64 bytes"):
        lm.execute(ins, [tiny])
    expect(launches(dev, mark), [], 'launches(dev, mark)')


@ge_case("test_fm_memory_refresh.cc")
def unrefreshable_graph_update_fm_failed():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, unrefreshable_graph_update_fm_failed): graph 0
    (BuildSwitchMergeGraph) compiled without ge.featureBaseRefreshable, graph 1 (BuildReshapeGraph) with it;
    GE expects the caller's feature memory to be taken before the load by both, a second
    UpdateGraphFeatureMemoryBase to succeed on the refreshable graph, graph 0 to run, and a feature-memory
    update of graph 0 after it ran to fail. Here the memory before load is ``work=``; after the run
    ``update_work_memory`` is refused (ParamInvalid) for graph 0, whose next run still writes the memory it
    was loaded with, and accepted twice for graph 1. (GE's repeated update before load, its summary flag and
    SetGraphFixedFeatureMemoryBase calls are not ported.)"""
    model = switch_merge()
    dev = Device(model.soc)
    (fm, size), _ = _caller_memory(dev, model)
    lm = load(dev, model, work=(fm, size))
    ins, outs = ge_io(dev, model)
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    other = dev.malloc(size)
    with refuses(ParamInvalid):
        lm.update_work_memory(other, size)
    mark = dev.trace.mark()
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    expect(arg_refreshes(dev, mark), [], 'arg_refreshes(dev, mark)')
    _task_addresses_are_correct(dev, mark, ins, outs, (fm, size), adds=1)

    refreshable = reshape_graph()
    mem = dev.malloc(size)
    lm2 = load(dev, refreshable, REFRESHABLE, work=(mem, size))
    lm2.update_work_memory(mem, size)
    lm2.update_work_memory(mem, size)
    ins2 = stage_inputs(dev, refreshable, {"data": np.zeros((2, 3, 4, 5), np.int32)})
    fact(lm2.execute(ins2, alloc_outputs(dev, refreshable)).ok,
         'lm2.execute(ins2, alloc_outputs(dev, refreshable)).ok')


@ge_case("test_fm_memory_refresh.cc")
def fm_memory_refresh_with_inputs_nozerocopy():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, fm_memory_refresh_with_inputs_nozerocopy):
    ge.featureBaseRefreshable=1, BuildHcomGraph (two Data inputs of an HcomAllReduce with continuous
    inputs, which cannot be zero copy); GE expects the run to succeed and the inputs to be force-copied
    (memcpy records). Here the collective reads none of the user's input buffers: each input's bytes are
    first copied (by the MemcpyAddrAsync zcspec's compiler puts before a continuous input) into the range
    the collective reads."""
    model = hcom_graph()
    dev = Device(model.soc)
    lm = load(dev, model, REFRESHABLE)
    ins, outs = ge_io(dev, model)
    mark = dev.trace.mark()
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    (hcom,) = launches(dev, mark, "HcomAllReduce")
    read = range_starts(hcom.reads)
    fact(not read & {b.addr for b in ins}, 'not read & {b.addr for b in ins}')
    moved = [(c.src, c.dst) for c in copies(dev, mark)]
    moved += [(m.reads[0][0], m.writes[0][0]) for m in launches(dev, mark) if m.kind in ("memcpy", "memcpy_addr")]
    for b in ins:
        fact(any(src == b.addr and dst in read for src, dst in moved),
             'any(src == b.addr and dst in read for src, dst in moved)', b.name)


@ge_case("test_fm_memory_refresh.cc")
def fm_reuse_ok_when_single_execution():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, fm_reuse_ok_when_single_execution):
    ge.featureBaseRefreshable=1, BuildSwitchMergeGraphWithMultiAddNodes, the caller's weight memory
    (SetGraphConstMemoryBase) and feature memory (UpdateGraphFeatureMemoryBase) set before one run; GE
    expects every task's I/O addresses correct (ArgsChecker::TaskIoAddressesAreCorrect): the Adds read
    data_1 and const_1 there and write the feature memory, the model I/O at the user's tensors. Read here
    from the ranges each launch read and wrote. (GE's HCCL group ids and its summary's empty
    GetIOIndexesWithSameAddr are not ported.)"""
    model = switch_merge(adds=2)
    dev = Device(model.soc)
    fm, weight = _caller_memory(dev, model)
    lm = load(dev, model, REFRESHABLE, work=fm, weight=weight)
    ins, outs = ge_io(dev, model)
    mark = dev.trace.mark()
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    _task_addresses_are_correct(dev, mark, ins, outs, fm, weight)


def _two_runs(move_fm: bool):
    model = switch_merge(adds=2)
    dev = Device(model.soc)
    fm, weight = _caller_memory(dev, model)
    lm = load(dev, model, REFRESHABLE, work=fm, weight=weight)
    ins, outs = ge_io(dev, model)
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    if move_fm:
        fm = (dev.malloc(fm[1], tag="user feature memory 1"), fm[1])
        lm.update_work_memory(*fm)
    mark = dev.trace.mark()
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    _task_addresses_are_correct(dev, mark, ins, outs, fm, weight)
    return dev, mark, fm


@ge_case("test_fm_memory_refresh.cc")
def fm_reuse_ok_when_fm_unchanged_and_multiple_executions():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, fm_reuse_ok_when_fm_unchanged_and_multiple_executions):
    the single-execution scenario run twice with the same feature memory and I/O tensors; GE expects the
    second run's task addresses correct and the Adds' argument tables not updated
    (CheckNodesArgsNotUpdated({"add_1", "add_2"})). Here the second run rewrites no argument slot at all."""
    dev, mark, _ = _two_runs(move_fm=False)
    expect(arg_refreshes(dev, mark), [], 'arg_refreshes(dev, mark)')


@ge_case("test_fm_memory_refresh.cc")
def fm_reuse_ok_when_fm_changed_and_multiple_executions():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, fm_reuse_ok_when_fm_changed_and_multiple_executions):
    the single-execution scenario, then UpdateGraphFeatureMemoryBase with new feature memory and a second
    run; GE expects the second run's addresses correct against the new feature memory, the Adds' argument
    tables refreshed. Here the second run rewrites the Adds' slots, and every Add writes the new memory."""
    dev, mark, fm = _two_runs(move_fm=True)
    refreshed = {w.task for w in arg_refreshes(dev, mark)}
    fact({"add_1", "add_2"} <= refreshed, '{"add_1", "add_2"} <= refreshed')
    fact(all(fm[0] <= w.value < fm[0] + fm[1] for w in arg_refreshes(dev, mark)),
         'all(fm[0] <= w.value < fm[0] + fm[1] for w in arg_refreshes(dev, mark))')


@ge_case("test_fm_memory_refresh.cc")
def no_task_args_associate_user_model_io():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, no_task_args_associate_user_model_io):
    NetoutputNotSupportZeroCopy (data_1 reaches NetOutput by a control edge only; the output is a
    PhonyConcat's continuous output, not zero copy), run twice with different I/O tensors (input int32
    8x8x8x8, output int32 1x4x2x124); GE expects both runs to succeed, and asserts nothing else. (What
    each run copies: tests/runtime_v1/test_execute.py::test_copies_of_no_task_args_associate_user_model_io.)"""
    model = netoutput_not_zero_copy()
    dev = Device(model.soc)
    lm = load(dev, model)
    for _ in range(2):
        inp = UserBuffer("data_1", dev.upload(np.zeros(8 * 8 * 8 * 8, np.int32)), 8 * 8 * 8 * 8 * 4)
        out = UserBuffer("pc1:0", dev.malloc(1 * 4 * 2 * 124 * 4), 1 * 4 * 2 * 124 * 4)
        fact(lm.execute([inp], [out]).ok, 'lm.execute([inp], [out]).ok')


@ge_case("test_fm_memory_refresh.cc")
def zero_copy_ok_when_input_directly_connected_to_output():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, zero_copy_ok_when_input_directly_connected_to_output):
    ge.featureBaseRefreshable=0, data1 (int32 1x2x3x4) -> NetOutput, input and output tensors at different
    addresses; GE expects the summary's GetIOIndexesWithSameAddr to be {(0, 0)} and the run to succeed, and
    asserts nothing else. zcspec has no compiled-graph summary: the pair is read from the model file, where
    input 0 and output 0 have one logical address. (What the run copies:
    tests/runtime_v1/test_execute.py::test_copies_of_zero_copy_ok_when_input_directly_connected_to_output.)"""
    model = data_to_netoutput()
    expect([(i.index, o.index) for i in model.tasks.inputs for o in model.tasks.outputs
            if (i.region, i.offset) == (o.region, o.offset)], [(0, 0)], "the (input, output) pairs at one address")
    dev = Device(model.soc)
    lm = load(dev, model)
    ins, outs = ge_io(dev, model)
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')


@ge_case("test_fm_memory_refresh.cc")
def zero_copy_ok_when_input_directly_connected_to_output_with_same_addr():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest,
    zero_copy_ok_when_input_directly_connected_to_output_with_same_addr): the same graph with outputs = inputs
    (one tensor as input 0 and output 0); GE expects GetIOIndexesWithSameAddr {(0, 0)} and the run to
    succeed, and checks no overlap of the caller's buffers. zcspec accepts an output given the very buffer of
    an input the model file places at its logical address (impl/runtime/v1/bind.py pass_through); the copy
    out of the input's place onto itself is skipped, as CopyOutputForNoZeroCopy skips it, and the buffer
    keeps the input's bytes."""
    model = data_to_netoutput()
    dev = Device(model.soc)
    lm = load(dev, model)
    ins, _ = ge_io(dev, model)
    fact(lm.execute(ins, [UserBuffer(model.tasks.outputs[0].tensor, ins[0].addr, ins[0].size)]).ok,
         'lm.execute(ins, [UserBuffer(model.tasks.outputs[0].tensor, ins[0].addr, ins[0].size)]).ok')
    fact((dev.peek(ins[0].addr, SHAPE, np.int32) == 0).all(), '(dev.peek(ins[0].addr, SHAPE, np.int32) == 0).all()')


def _memcpy_addr_async_moves_user_io(update_io: bool):
    """EXPECT_CheckMemcpyAddrAsync: offline build of Data (float {64}) -> NetOutput, LoadGraph, run with
    FakeTensors({64}); the inserted MemcpyAddrAsync's I/O addresses must be the user's tensors."""
    model = data_to_netoutput((64,), "float32", offline=True)
    dev = Device(model.soc)
    lm = load(dev, model)
    for _ in range(2 if update_io else 1):
        ins = stage_inputs(dev, model, {"data1": np.ones(64, np.float32)})
        outs = alloc_outputs(dev, model)
        mark = dev.trace.mark()
        fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
        (cp,) = launches(dev, mark, "MemcpyAddrAsync")
        fact(range_starts(cp.reads) == {ins[0].addr} and written_starts(cp) == {outs[0].addr},
             'range_starts(cp.reads) == {ins[0].addr} and written_starts(cp) == {outs[0].addr}')
        expect(copies(dev, mark), [], 'copies(dev, mark)')
        expect(sorted(w.value for w in arg_refreshes(dev, mark)), sorted([ins[0].addr, outs[0].addr]),
               'sorted(w.value for w in arg_refreshes(dev, mark))')


@ge_case("test_fm_memory_refresh.cc")
def memcpy_async_addr_non_david():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, memcpy_async_addr_non_david): Ascend910B,
    OPTION_BUILD_GRAPH_MODE=offline, BuildDataNetoutputGraph (float {64}): GE inserts a MemcpyAddrAsync;
    GE expects its task I/O addresses to be the user's input and output tensors
    (ArgsChecker::TaskIoAddressesAreCorrect). Here the MemcpyAddrAsync launch reads the user's input buffer
    and writes the user's output buffer, its two slots rewritten to them; the runtime copies nothing."""
    _memcpy_addr_async_moves_user_io(update_io=False)


@ge_case("test_fm_memory_refresh.cc")
def memcpy_async_addr_non_david_update_io():
    """test_fm_memory_refresh.cc TEST_F(FmMemoryRefreshTest, memcpy_async_addr_non_david_update_io): the same,
    then a second ExecuteGraphWithStreamAsync with new input and output tensors; GE expects the task I/O
    addresses to be the new tensors. Here the second run rewrites both slots to the new buffers, which the
    MemcpyAddrAsync launch then reads and writes."""
    _memcpy_addr_async_moves_user_io(update_io=True)
