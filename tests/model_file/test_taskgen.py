"""Task generation: one task per node, memset before atomic kernels, no task for views,
HCCL zero-copy flags per SoC, and a zero-copy table with relative offsets."""
import numpy as np
import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.model_file.encode import encode, metadata, pack
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, load


def model(graph, **opts):
    return build_model(graph, CompileOptions(**opts))


def test_kernel_slots_are_inputs_then_outputs_with_logical_addresses():
    b = GraphBuilder("k")
    x = b.input("x", (2, 3))
    y = b.op("Add", [x, b.weight("w", np.arange(6, dtype=np.float32).reshape(2, 3))], name="add")
    b.output(b.op("Relu", [y], name="relu"))
    m = model(b.build())
    add = next(t for t in m.tasks.tasks if t.node == "add")
    assert [(s.role, s.tensor, s.region) for s in add.slots] == [
        ("in", "x", "zero_copy"), ("in", "w", "weight"), ("out", "add:0", "feature_map")]
    tensors = {t.name: t for t in m.plan.tensors}
    assert all(s.offset == tensors[s.tensor].offset for s in add.slots)


def test_atomic_op_gets_a_memset_first_and_views_get_no_task():
    b = GraphBuilder("a")
    x = b.input("x", (2, 3))
    r = b.op("ReduceSum", [x], name="red", shape=(2, 1), axes=(1,), keepdims=1)
    f = b.op("Flatten", [r], name="flat", shape=(2, 1), axis=1)
    b.output(b.op("Relu", [f], name="relu"))
    kinds = [(t.node, t.kind) for t in model(b.build()).tasks.tasks]
    assert kinds == [("red", "memset"), ("red", "kernel"), ("relu", "kernel")]


@pytest.mark.parametrize("soc, flags", [("ascend910b", (False, False, True)), ("legacy", (False, False, False))])
def test_hccl_zero_copy_flags_follow_the_soc(soc, flags):
    # The two inputs feed a continuous-input collective (two or more inputs, as GE's
    # IsContinuousInput asks), so their block is never zero copy; the output is, unless
    # the SoC cannot refresh the collective.
    b = GraphBuilder("h")
    x, y = b.input("x", (4,)), b.input("y", (4,))
    b.output(b.op("HcomAllReduce", [x, y], name="ar", reduction="sum"))
    m = model(b.build(), soc=soc)
    task = next(t for t in m.tasks.tasks if t.kind == "hccl")
    assert (task.zero_copy_in + task.zero_copy_out) == flags


def test_every_zero_copy_slot_is_in_the_table_and_nothing_else():
    b = GraphBuilder("z")
    x = b.input("x", (2, 2))
    y = b.op("Relu", [x], name="a")
    z = b.op("Neg", [y], name="b")
    b.output(z, y)
    m = model(b.build())
    io = {(d.role, d.index): d for d in m.tasks.inputs + m.tasks.outputs}
    listed = {(z.task, z.slot) for z in m.tasks.zero_copy}
    for t in m.tasks.tasks:
        for i, s in enumerate(t.slots):
            in_io = any(s.region == d.region and d.offset <= s.offset < d.offset + d.size for d in io.values() if d.zero_copy)
            assert in_io == ((t.index, i) in listed), (t.node, s.tensor)


def _input_returned_through_a_slice_view():
    # x is a graph input and a graph output, and an outer-axis Slice view of it is read by a Concat: the
    # conflict pass copies x before the NetOutput (graph output x NoPadding continuous output). The copy's
    # output cannot be called "x" in the graph, the input is.
    b = GraphBuilder("returned_input")
    x = b.input("x", (2, 4))
    s = b.op("Slice", [x], name="slice", shape=(1, 4), axes=(0,), starts=(0,), ends=(1,))
    b.output(b.op("Concat", [x, s], name="concat", shape=(3, 4), axis=0), x)
    return b.build()


def _input_returned_directly():
    b = GraphBuilder("returned_input_offline")
    x = b.input("x", (2, 4))
    b.output(b.op("Relu", [x], name="relu"), x)
    return b.build()


@pytest.mark.parametrize("graph, opts", [
    (_input_returned_through_a_slice_view, {}),                   # mem_layout_conflict's copy
    (_input_returned_directly, {"offline": True}),                # memcpy_addr_async's Data -> NetOutput copy
])
def test_a_returned_input_keeps_the_callers_output_name_when_a_copy_writes_it(graph, opts):
    g = graph()
    m = model(g, **opts)
    outs = m.tasks.outputs
    assert [o.name for o in outs] == list(g.outputs)                 # what the caller binds and reads
    copied = outs[-1]
    assert copied.tensor != "x" and m.plan.tensor(copied.tensor)     # the copy's own planned tensor
    assert [i.name for i in m.tasks.inputs] == [i.tensor for i in m.tasks.inputs] == ["x"]
    assert load_model(encode(m)).tasks.outputs == outs                # the model file keeps both
    dev = Device(m.soc)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    ins, bufs = stage_inputs(dev, m, {"x": x}), alloc_outputs(dev, m)
    lm = load(dev, m, LoadOptions(zero_copy=True))
    lm.execute(ins, bufs)
    got = read_outputs(dev, m, bufs)
    lm.unload()
    free_buffers(dev, ins + bufs)
    assert set(got) == set(g.outputs) and got["x"].tobytes() == x.tobytes()


def test_an_input_returned_through_a_chain_of_copies_keeps_its_name_and_the_file_loads():
    """zcspec explore (seed 34) crashed on a file the compiler wrote: y feeds two NoPadding concats (the
    conflict pass copies it for each) and is a graph output of an offline build, whose MemcpyAddrAsync then
    reads the first of those copies, not y; the loader allowed the caller's name only for a direct copy."""
    b = GraphBuilder("two_concats")
    x, y = b.input("x", (2, 4)), b.input("y", (2, 4))
    b.output(b.op("PhonyConcat", [y, x], name="c1", shape=(4, 4)),
             b.op("PhonyConcat", [y, x], name="c2", shape=(4, 4)), y)
    m = model(b.build(), offline=True)
    copy = next(t for t in m.tasks.tasks if t.node == "y_MemcpyAddrAsync_0")
    assert copy.slots[0].tensor != "y"                                     # it reads another copy of y
    assert [o.name for o in m.tasks.outputs] == ["c1:0", "c2:0", "y"]
    assert load_model(encode(m)).tasks.outputs == m.tasks.outputs


def test_a_model_file_naming_an_output_other_than_its_tensor_or_copied_input_is_refused():
    m = model(_input_returned_through_a_slice_view())
    meta, blob = metadata(m)
    meta["tasks"]["outputs"][0]["name"] = "x"       # concat's output is no copy of x
    with pytest.raises(ModelFormatError, match=r"outputs\[0\]\.name"):
        load_model(pack(meta, blob))
