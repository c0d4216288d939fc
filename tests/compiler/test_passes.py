"""Each pass changes exactly what it should; MemcpyAddrAsync lands exactly where each SoC needs it."""
import numpy as np
import pytest

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.errors import OptionError
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import PIPELINE, run_passes
from zcspec.impl.compiler.passes.memcpy_addr_async import memcpy_addr_async
from zcspec.impl.compiler.passes.outer_axis_views import outer_axis_views
from zcspec.impl.compiler.validate import validate
from tests.helpers.pass_graphs import copies, io_graph

OPTS = CompileOptions()


def split_graph(shape, axis, parts, dtype="float32"):
    b = GraphBuilder("split")
    x = b.input("x", shape, dtype)
    outs = []
    for p in parts:
        s = list(shape)
        s[axis] = p
        outs.append((s, dtype))
    ys = b.op("Split", [x], name="split", outputs=outs, axis=axis, split=tuple(parts))
    b.output(*[b.op("Relu", [y]) for y in ys])
    return b.build()


def test_outer_axis_split_becomes_a_view_with_byte_offsets():
    g = outer_axis_views(split_graph((4, 3), 0, (1, 3)), OPTS)
    split = g.node["split"]
    assert ops.is_view(split) and split.attr("_view_offsets") == (0, 12)
    assert ops.task_kinds(split) == ()


def test_leading_unit_dims_do_not_count():
    g = outer_axis_views(split_graph((1, 4, 2), 1, (2, 2)), OPTS)
    assert g.node["split"].attr("_view_offsets") == (0, 16)


@pytest.mark.parametrize("shape, axis, dtype", [((4, 3), 1, "float32"), ((4, 2), 0, "int4")])
def test_inner_axis_or_packed_split_is_left_alone(shape, axis, dtype):
    g = split_graph(shape, axis, (shape[axis] // 2, shape[axis] - shape[axis] // 2), dtype)
    assert outer_axis_views(g, OPTS) is g


def test_a_split_view_asking_for_continuous_outputs_is_not_held_to_aligned_pieces():
    """Its outputs reuse its input, so GE's ApplyContinuousMemory skips it and the pieces sit at their rows (+480 for
    (3, 40) float32 rows): MEM-CONT-OUTPUT, which wanted +512, does not judge such a node."""
    from zcspec.checks.scenario import Scenario, evaluate
    b = GraphBuilder("split_continuous_output")
    x = b.input("x", (6, 40))
    top, rest = b.op("Split", [b.op("Relu", [x])], name="split", outputs=[((3, 40), "float32")] * 2, axis=0,
                     split=(3, 3), continuous_output=True)
    b.output(b.op("Add", [top, rest]))
    graph = b.build()
    assert outer_axis_views(graph, OPTS).node["split"].attr("_view_offsets") == (0, 480)
    assert all(r.ok for r in evaluate(Scenario("plan", graph, CompileOptions())))


def test_outer_axis_slice_becomes_a_view():
    b = GraphBuilder("slice")
    x = b.input("x", (5, 2))
    y = b.op("Slice", [x], name="slice", shape=(2, 2), starts=(-3,), ends=(4,), axes=(0,))
    b.output(b.op("Relu", [y]))
    g = outer_axis_views(b.build(), OPTS)
    assert g.node["slice"].attr("_view_offsets") == (16,)


def test_a_piece_that_is_a_graph_output_stays_a_copy():
    # The user's output buffer holds the piece alone, so the piece cannot view its input.
    b = GraphBuilder("slice_out")
    x = b.input("x", (5, 2))
    y = b.op("Slice", [b.op("Relu", [x])], name="slice", shape=(2, 2), starts=(1,), ends=(3,), axes=(0,))
    b.output(b.op("Flatten", [y], shape=(2, 2), axis=1))
    g = b.build()
    assert outer_axis_views(g, OPTS) is g


# Data h feeds a one-input HcomAllReduce directly. GE asks for more than one input anchor before it treats a node
# as having continuous inputs (MemLayoutConflictUtil::IsContinuousInput, MemReuseUtils::IsNoPaddingContinuousInput),
# so no continuous copy is made for it: h stays zero copy where the SoC refreshes HCCL tasks, and on legacy, where
# it cannot, memcpy_addr_async copies the model input the collective reads.
@pytest.mark.parametrize(
    "soc, offline, expected",
    [
        ("ascend910b", False, {("out", "const")}),
        ("ascend910b", True, {("out", "const"), ("out", "io_copy")}),
        ("ascend310p", False, {("out", "const"), ("out", "reduce:0")}),
        ("legacy", False, {("out", "const"), ("in", "h"), ("out", "allreduce:0"), ("in", "l"), ("out", "loop_relu:0")}),
        # Without zero copy nothing is unrefreshable with respect to user memory, but a weight still cannot be a
        # graph output's memory (the conflict optimizer's user output x immutable output, on every SoC).
        ("nozc", False, {("out", "const")}),
    ],
)
def test_memcpy_addr_async_exactly_where_the_soc_requires(soc, offline, expected):
    g = io_graph()
    out = run_passes(g, CompileOptions(soc=soc, offline=offline))
    got = {("out", "io_copy") if role == "out" and t.endswith(":0") and t.startswith("d_") else (role, t) for role, t in copies(out)}
    assert got == expected
    assert out.outputs[:4] == g.outputs[:4], "model outputs keep their names"
    validate(out)


def test_memcpy_addr_async_copies_a_model_input_an_unrefreshable_hccl_op_reads_through_a_view():
    """Data -> Reshape -> a one-input HcomAllReduce: no continuous copy (the Data does not feed it directly,
    and GE counts a one-input node as no continuous input), so on legacy memcpy_addr_async copies the input."""
    b = GraphBuilder("view_hccl")
    h = b.input("h", (2, 2))
    b.output(b.op("HcomAllReduce", [b.op("Reshape", [h], name="rs", shape=(4,))], name="allreduce", reduction="sum"))
    g = b.build()
    assert copies(run_passes(g, CompileOptions(soc="legacy"))) == {("in", "rs:0"), ("out", "allreduce:0")}
    assert copies(run_passes(g, CompileOptions(soc="ascend910b"))) == set()


def test_no_zero_copy_soc_leaves_graph_untouched():
    g = io_graph()
    assert memcpy_addr_async(g, CompileOptions(soc="nozc")) is g


def test_each_stuck_reader_gets_its_own_copy():
    """User input x unrefreshable input is an absolute conflict: the Identity goes before that input
    (checker.cc RegAllAbsoluteConflict), one per reader, named after the reader (CreateIdentityOpDesc)."""
    b = GraphBuilder("two")
    x = b.input("x", (2,))
    r1 = b.op("Relu", [x], name="ar1", _in_loop=True)
    r2 = b.op("Neg", [x], name="ar2", _in_loop=True)
    b.output(b.op("Add", [r1, r2]))
    out = run_passes(b.build(), CompileOptions(soc="legacy"))
    mc = {n.name: out.consumers[n.outputs[0]] for n in out.nodes if n.op_type == "MemcpyAddrAsync"}
    assert mc == {"identity_0_ar1_MemLayoutConflict_0": ("ar1",), "identity_0_ar2_MemLayoutConflict_1": ("ar2",)}


def test_pipeline_switches():
    g = split_graph((4, 3), 0, (1, 3))
    off = run_passes(g, CompileOptions(disabled_passes={name for name, _ in PIPELINE}))
    assert off == g
    with pytest.raises(OptionError, match="compile option disabled_passes=\\['nope'\\]: unknown passes"):
        run_passes(g, CompileOptions(disabled_passes={"nope"}))



@pytest.mark.parametrize("soc", ["ascend310p", "legacy"])
def test_the_spec_flags_each_missing_copy_when_the_pass_is_off(soc):
    """PASS-MEMCPY-ADDR-ASYNC and PASS-LAYOUT-CONFLICT recompute where copies are required; without the
    pass that makes them each is missing."""
    from zcspec.impl.compiler.compile import compile_stages
    from zcspec.impl.compiler.model_file.encode import encode
    from zcspec.impl.compiler.observe import observe_model_file
    from zcspec.spec.check import check

    for disabled, broken in ((frozenset(), set()), (frozenset({"memcpy_addr_async"}), {"PASS-MEMCPY-ADDR-ASYNC"}),
                             (frozenset({"mem_layout_conflict"}), {"PASS-LAYOUT-CONFLICT"})):
        opts = CompileOptions(soc=soc, disabled_passes=disabled)
        st = compile_stages(io_graph(), opts)
        report = check(observe_model_file(encode(st.model), st.graph, opts))
        assert {v.invariant_id for v in report.violations} == broken, [str(v) for v in report.violations]
        assert {"PASS-MEMCPY-ADDR-ASYNC", "PASS-LAYOUT-CONFLICT"} <= set(report.exercised)


@pytest.mark.parametrize("field, value", [("reuse", "yes"), ("offline", 1), ("single_op", None), ("soc", 3),
                                          ("strategy", b"ge"), ("disabled_passes", {1})])
def test_compile_options_of_another_type_are_refused_naming_the_field(field, value):
    """``CompileOptions(reuse="yes")`` compiled as reuse on, ``offline=1`` as an offline build."""
    with pytest.raises(OptionError) as e:
        CompileOptions(**{field: value})
    assert e.value.field == field
