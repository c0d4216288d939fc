"""GE's ``tests/ge/ut/ge/graph/build/graph_mem_assigner_unittest.cc`` (UtestGraphMemAssigner), ported.

Most of that file drives GraphMemoryAssigner steps on hand-set offsets (ReAssignContinuousMemory,
SetAtomicCleanOffset, CheckOffset, the memory splitter); the tests here are the ones that plan a
whole graph and assert an offset or an outcome zcspec can show. See CASES.md for the rest.
"""
from __future__ import annotations

import numpy as np

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case, refuses
from zcspec.checks.cases.ge.graph import GeGraph
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.passes.outer_axis_views import outer_axis_views


DATA = 1 * 1 * 224 * 224 * 4  # the graph DSL's default tensor, sized by UpdateGraphTensorSize


@ge_case("graph_mem_assigner_unittest.cc")
def AssignContinuousInputMemory_Failed_SameOutAnchorToMultiContinuousIn():
    """graph_mem_assigner_unittest.cc TEST_F(UtestGraphMemAssigner,
    AssignContinuousInputMemory_Failed_SameOutAnchorToMultiContinuousIn) (graph DSL): data_1's one output
    anchor is input 0 of both hcom_1 (with data_2) and hcom_2 (with hcom_1:0), two continuous-input ops; GE
    expects AssignMemory to fail (the two blocks cannot both start at data_1)."""
    g = GeGraph("same_out_two_continuous", dsl=True)
    g.node("data_1", op="Data", outs=(DATA,)).node("data_2", op="Data", outs=(DATA,))
    g.node("hcom_1", op="HcomAllReduce", outs=(DATA, DATA)).node("hcom_2", op="HcomAllReduce", outs=(DATA, DATA))
    g.node("a", outs=(4,)).node("b", outs=(4,))
    g.link("data_1", "hcom_1", 0, 0).link("data_2", "hcom_1", 0, 1).link("data_1", "hcom_2", 0, 0)
    g.link("hcom_1", "hcom_2", 0, 1).link("hcom_2", "a", 0, 0).link("hcom_2", "b", 1, 0)
    with refuses(PlanError, match="two continuous-input blocks"):
        g.plan()


@ge_case("graph_mem_assigner_unittest.cc")
def PhonyConcatWithRefNodeInputs_AssignSuccess():
    """graph_mem_assigner_unittest.cc TEST_F(UtestGraphMemAssigner, PhonyConcatWithRefNodeInputs_AssignSuccess)
    (BuildPhonyConcatWithRefNodeInputs): d -> ref_node1, b -> ref_node2 (outputs are their inputs,
    ``reference``) -> pc (NoPadding) -> e -> netoutput; a -> c; control edges a -> b -> c -> d fix the
    order. GE expects b's output offset == ref_node2's. GE's c has no output; zcspec's op needs one (unread)."""
    size = 1 * 1 * 48 * 448 * 4 + 32  # block_mem_ut::GraphBuilder: align32(bytes) + 32
    g = GeGraph("phony_concat_ref_inputs")
    g.node("a", outs=(size,)).node("b", outs=(size,)).node("pc", op="PhonyConcat", outs=(2 * (size - 32),))
    g.node("c", outs=(size,)).node("d", outs=(size,)).node("e", outs=(size,))
    g.node("ref_node1", op="Max", outs=(size,), _reuse_input=True)
    g.node("ref_node2", op="Max", outs=(size,), _reuse_input=True)
    g.node("partitioncall_0_netoutput", op="NetOutput", outs=())
    for edge in [("a", 0, "c", 0), ("d", 0, "ref_node1", 0), ("ref_node1", 0, "pc", 0), ("b", 0, "ref_node2", 0),
                 ("ref_node2", 0, "pc", 1), ("pc", 0, "e", 0), ("e", 0, "partitioncall_0_netoutput", 0)]:
        g.edge(*edge)
    g.ctrl("a", "b").ctrl("b", "c").ctrl("c", "d")
    plan = g.plan()
    expect(plan.tensor("b:0").offset, plan.tensor("ref_node2:0").offset, 'plan.tensor("b:0").offset')


@ge_case("graph_mem_assigner_unittest.cc")
def ConstConnectPhonySplit_CheckOutputOffset():
    """graph_mem_assigner_unittest.cc TEST_F(UtestGraphMemAssigner, ConstConnectPhonySplit_CheckOutputOffset)
    (graph DSL): const1 (float {4}) -> split (PhonySplit: NoPadding continuous output reusing the input,
    outputs float {2}) -> a, b -> netoutput; GE expects split's output 0 at its input's offset and output 1
    at output 0 + output 0's size (8 B). zcspec's counterpart is an outer-axis Split made a view by the
    outer_axis_views pass (the pass derives the offsets; the planner places the pieces in the weight)."""
    b = GraphBuilder("const_phony_split")
    const1 = b.weight("const1", np.array([0, 3, 1, 2], np.float32))
    const2 = b.weight("const2", np.array([0, 3, 1, 2], np.float32))
    pieces = b.op("Split", [const1], name="split", outputs=[((2,), "float32"), ((2,), "float32")],
                  axis=0, split=(2, 2))
    b.output(const2, b.op("Relu", [pieces[0]], name="a"), b.op("Relu", [pieces[1]], name="b"), name="netoutput")
    plan = plan_memory(outer_axis_views(b.build(), None), GeGraph.OPTIONS)
    const, out0, out1 = (plan.tensor(t) for t in ("const1", "split:0", "split:1"))
    fact(out0.region == out1.region == const.region, 'out0.region == out1.region == const.region')
    expect(out0.offset, const.offset, 'out0.offset')
    expect(out1.offset, out0.offset + 2 * 4, 'out1.offset')
