"""Scenarios for the port of GE's ``test_fm_memory_refresh.cc`` (tests/ge/FM_REFRESH_CASES.md).

GE's system tests build graphs with its graph DSL (``ShareGraph::BuildSwitchMergeGraph`` and friends),
compile them through a ``Session`` and run them on the runtime stub, then read the stub's records
(argument tables, memcpy records) or the output buffers. Here each graph is rebuilt as a zcspec graph,
compiled by zcspec, loaded by runtime v1 and run on the emulated device; the tests read what the
device saw (the trace: argument writes, launches and the byte ranges they read and wrote, copies,
allocations and frees). The rebuilding conventions are listed in FM_REFRESH_CASES.md.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device.trace import ArgWrite, Copy, Launch
from zcspec.impl.platform import dtypes
from zcspec.impl.runtime.user_buffers import UserBuffer, stage_inputs

# GE's ShareGraph fixtures use GeShape({1, 2, 3, 4}) int32 tensors: 96 bytes.
SHAPE = (1, 2, 3, 4)
OUT_BYTES = 96          # ConstructInputOutputTensor: each output tensor holds 96 bytes of 0xff
FILL = 0xFF


def switch_merge(adds: int = 1, *, twice: bool = False):
    """GE's ``ShareGraph::BuildSwitchMergeGraph`` (``adds=1``), ``...WithTwoOutputs`` (``twice=True``: the
    Merge output feeds both NetOutput inputs) and ``...WithMultiAddNodes`` (``adds=2``).

    GE: data_1 (int32 1x2x3x4) and the predicate data_2 (bool {1}) enter a Switch; its true branch runs
    ``adds`` Adds with const_1 (int32 zeros), its false branch passes data_1 on, and a Merge joins them.
    zcspec has no Switch/Merge: the pair becomes ``Where(data_2, add_n, data_1)`` named ``merge_1``, which
    reads the same tensors (data_1 and data_2 as model inputs, the last Add's output in the feature map)
    and yields the branch the predicate chooses."""
    b = GraphBuilder("switch_merge")
    data_1 = b.input("data_1", SHAPE, "int32")
    data_2 = b.input("data_2", (1,), "bool")
    const_1 = b.weight("const_1", np.zeros(SHAPE, np.int32))
    t = data_1
    for i in range(adds):
        t = b.op("Add", [t, const_1], name=f"add_{i + 1}")
    merge = b.op("Where", [data_2, t, data_1], name="merge_1", shape=SHAPE, dtype="int32")
    b.output(*([merge, merge] if twice else [merge]))
    return build_model(b.build())


def atomic_to_netoutput(*, through_ref: bool = False):
    """GE's ``ShareGraph::BuildAtomicNodeConnectNetoutput`` (and ``...ThroughRefNode``): one node with two
    atomic outputs (``ATOMIC_ATTR_OUTPUT_INDEX {0, 1}``), both feeding NetOutput; with ``through_ref``
    output 0 passes a ref node (``ATTR_NAME_REFERENCE``) first.

    zcspec's atomic op (ReduceSum: its output is cleaned by an atomic memset, then accumulated into) has
    one output, so the two atomic outputs are two ReduceSums of data_1 (``add_1`` and ``add_1_out1``); the
    ref node is a Relu writing in place (``_reuse_input``). GE's second input (data_2, bool {1}) only
    completes the two-input signature of its stand-in op and is dropped."""
    b = GraphBuilder("atomic_to_netoutput")
    data_1 = b.input("data_1", SHAPE, "int32")
    out0 = b.op("ReduceSum", [data_1], name="add_1", axes=(1,), keepdims=1, shape=(1, 1, 3, 4))
    if through_ref:
        out0 = b.op("Relu", [out0], name="ref_node", _reuse_input=True)
    out1 = b.op("ReduceSum", [data_1], name="add_1_out1", axes=(1,), keepdims=1, shape=(1, 1, 3, 4))
    b.output(out0, out1)
    return build_model(b.build())


def hcom_graph():
    """GE's ``ShareGraph::BuildHcomGraph``: data_1 (int32 1x2x3x4) and data_2 ({1}) -> HcomAllReduce with
    continuous inputs -> NetOutput (both outputs). data_2 is int32 here (GE: bool data into int32 descs)."""
    b = GraphBuilder("hcom")
    data_1 = b.input("data_1", SHAPE, "int32")
    data_2 = b.input("data_2", (1,), "int32")
    outs = b.op("HcomAllReduce", [data_1, data_2], name="hcom_1", reduction="sum",
                outputs=[(SHAPE, "int32"), ((1,), "int32")])
    b.output(*outs)
    return build_model(b.build())


def reshape_graph():
    """``BuildReshapeGraph`` of test_fm_memory_refresh.cc: data (int32 2x3x4x5) and const1 (int32 {5}) ->
    Reshape (1x2x3x4x5) -> Relu -> NetOutput."""
    b = GraphBuilder("reshape")
    data = b.input("data", (2, 3, 4, 5), "int32")
    shape = b.weight("const1", np.array([1, 2, 3, 4, 5], np.int32))
    reshape = b.op("Reshape", [data, shape], name="reshape", shape=(1, 2, 3, 4, 5))
    b.output(b.op("Relu", [reshape], name="relu"))
    return build_model(b.build())


def netoutput_not_zero_copy():
    """GE's ``ShareGraph::NetoutputNotSupportZeroCopy``: Add(const_1, const_1) and Add(const_2, const_2)
    (int32 2x2x2x2) -> PhonyConcat (no-padding continuous input, 4x2x2x2) -> NetOutput; data_1 (int32
    2x2x2x2) reaches NetOutput by a control edge only. Here data_1 is a graph input nothing reads:
    zcspec's IR has control edges (``Node.control_inputs``), but ``GraphBuilder.output`` gives the
    NetOutput none, so this graph leaves out GE's control edge."""
    b = GraphBuilder("netoutput_not_zero_copy")
    b.input("data_1", (2, 2, 2, 2), "int32")
    const_1 = b.weight("const_1", np.zeros((2, 2, 2, 2), np.int32))
    const_2 = b.weight("const_2", np.zeros((2, 2, 2, 2), np.int32))
    add_1 = b.op("Add", [const_1, const_1], name="add_1")
    add_2 = b.op("Add", [const_2, const_2], name="add_2")
    b.output(b.op("PhonyConcat", [add_1, add_2], name="pc1", shape=(4, 2, 2, 2), axis=0))
    return build_model(b.build())


def data_to_netoutput(shape=SHAPE, dtype: str = "int32", *, offline: bool = False):
    """GE's ``BuildInputDirectlyConnectedToOutputGraph`` (data1, int32 1x2x3x4 -> NetOutput) and
    ``BuildDataNetoutputGraph`` (float {64}, compiled with ``OPTION_BUILD_GRAPH_MODE=offline``: GE then
    puts a MemcpyAddrAsync between the Data and the NetOutput, as zcspec's offline build does)."""
    b = GraphBuilder("data_netoutput")
    b.output(b.input("data1", shape, dtype))
    return build_model(b.build(), CompileOptions(offline=offline))


def zeros_inputs(device, model) -> list[UserBuffer]:
    """The model's inputs as GE's ConstructInputOutputTensor fills them (zeros), in device buffers."""
    return stage_inputs(device, model, {io.tensor: np.zeros(io.shape, dtypes.numpy_dtype(io.dtype))
                                        for io in model.tasks.inputs})


def filled_outputs(device, model, nbytes: int = OUT_BYTES) -> list[UserBuffer]:
    """One device buffer of ``nbytes`` bytes of 0xff per model output (ConstructInputOutputTensor)."""
    return [UserBuffer(io.tensor, device.upload(np.full(nbytes, FILL, np.uint8), tag=f"user output {io.tensor}"),
                       nbytes) for io in model.tasks.outputs]


def ge_io(device, model) -> tuple[list[UserBuffer], list[UserBuffer]]:
    return zeros_inputs(device, model), filled_outputs(device, model)


def launch_of(device, mark: int, task: str) -> Launch:
    """The one launch of device task ``task`` since ``mark``."""
    (hit,) = [e for e in device.trace.of_type(Launch, mark) if e.task == task]
    return hit


def arg_refreshes(device, mark: int) -> list[ArgWrite]:
    """Argument-slot rewrites after load, since ``mark``."""
    return [e for e in device.trace.of_type(ArgWrite, mark) if e.refresh]


def copies_into(device, mark: int, buffers) -> list[Copy]:
    """Copies since ``mark`` whose destination lies in one of ``buffers``."""
    return [c for c in device.trace.of_type(Copy, mark) if any(b.addr <= c.dst < b.end for b in buffers)]


def inside(ranges, start: int, size: int) -> bool:
    """Every (address, nbytes) range of ``ranges`` lies in ``[start, start + size)``."""
    return all(start <= a and a + n <= start + size for a, n in ranges)
