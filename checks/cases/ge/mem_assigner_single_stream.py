"""GE's ``tests/ge/ut/ge/graph/build/mem_assigner_unittest.cc`` (UtestMemoryAssignerTest), ported: one stream.

The single-stream graphs without a continuous-input group: ref outputs (MakeRefReuseGraph,
MakeOutputNotZeroCopyGraph), the DFS order and the reuse option (MakeSortTestGraph), workspace
sizes, and the block alignment (MemReuseUtils::AlignMemOffset). The continuous-input graphs are
mem_assigner_continuous.py, the multi-stream ones mem_assigner_stream.py.

How each case compares with GE (and what a deviation records): graph.py.
"""
from __future__ import annotations

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case, ge_cases, Param, refuses
from zcspec.checks.cases.ge.graph import GeGraph
from zcspec.checks.cases.ge.graph import some_op
from zcspec.impl.compiler.memory import sizes
from zcspec.impl.compiler.memory.errors import PlanError


@ge_case("mem_assigner_unittest.cc")
def graph_ref_memory_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_ref_memory_reuse): MakeRefReuseGraph,
    the chain A(6656) -> B -> C -> D -> E -> F with C and D outputs of 6500 B that reference input 0
    (CreateRefOpWithWsSize), every op with a 1024 B workspace; GE expects HBM 14336."""
    g = GeGraph("ref_reuse")
    g.node("A", outs=(6656,), ws=(1024,), fixture=1).node("B", ws=(1024,), fixture=1)
    g.node("C", op="Max", outs=(6500,), ws=(1024,), _reuse_input=True)
    g.node("D", op="Max", outs=(6500,), ws=(1024,), _reuse_input=True)
    g.node("E", ws=(1024,), fixture=1).node("F", ws=(1024,), fixture=1)
    for a, b in ("AB", "BC", "CD", "DE", "EF"):
        g.edge(a, 0, b, 0)
    plan = g.plan()
    fact(plan.tensor("C:0").alias_of == plan.tensor("D:0").alias_of == "B:0",
         'plan.tensor("C:0").alias_of == plan.tensor("D:0").alias_of == "B:0"')
    expect(plan.attributes.memory_size, 14336, 'plan.attributes.memory_size')


@ge_case("mem_assigner_unittest.cc")
def graph_ref_not_zero_copy():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_ref_not_zero_copy):
    MakeOutputNotZeroCopyGraph, A -> B (HcomAllGather on the HCCL engine) -> C (output refs input 0) ->
    D (NetOutput, with a 1024 B workspace); the output symbol holds an HCCL op without address refresh, so
    it is not zero copy (IsZeroCopyBlock). GE expects HBM 5120. B is modelled by an op listed in
    ``no_zero_copy_ops`` (no ``continuous_input``: the GE test sets none)."""
    g = GeGraph("output_not_zero_copy")
    some_op(g, "A")
    some_op(g, "B", op="Mean")
    some_op(g, "C", op="Max", _reuse_input=True)
    g.node("D", op="NetOutput", outs=(), ws=(1024,), stream=1)
    for a, b in ("AB", "BC", "CD"):
        g.edge(a, 0, b, 0)
    plan = g.plan(no_zero_copy_ops={"Mean"})
    fact(not plan.tensor("C:0").zero_copy and plan.regions["zero_copy"] == 0,
         'not plan.tensor("C:0").zero_copy and plan.regions["zero_copy"] == 0')
    expect(plan.attributes.memory_size, 5120, 'plan.attributes.memory_size')


def _sort_test_graph():
    """MakeSortTestGraph: b, a, c -> d (inputs 0, 1, 2) -> e, all on stream 1."""
    g = GeGraph("sort_test")
    for name in "ABCDE":
        some_op(g, name)
    g.edge("B", 0, "D", 0).edge("A", 0, "D", 1).edge("C", 0, "D", 2).edge("D", 0, "E", 0)
    return g


@ge_case("mem_assigner_unittest.cc")
def graph_sort_test():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_sort_test): MakeSortTestGraph;
    GE expects HBM 9216."""
    expect(_sort_test_graph().plan().attributes.memory_size, 9216, '_sort_test_graph().plan().attributes.memory_size')


@ge_case("mem_assigner_unittest.cc")
def graph_option_test():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_option_test): MakeSortTestGraph with
    ge.exec.disableReuseMemory=1 (PlanOptions(reuse=False)); GE expects HBM 15360, no reuse at all."""
    plan = _sort_test_graph().plan(reuse=False)
    expect(plan.attributes.memory_size, 15360, 'plan.attributes.memory_size')


def _workspace_chain(workspace):
    g = GeGraph("workspace", dsl=True)
    g.node("_arg_0", op="Data", outs=(1 * 1 * 224 * 224 * 4,)).node("A", outs=(4,))
    g.node("B", outs=(4,), ws=(workspace,)).node("C", outs=(4,)).node("Node_Output", op="NetOutput", outs=())
    g.chain("_arg_0", "A", "B", "C", "Node_Output")
    return g


@ge_case("mem_assigner_unittest.cc")
def InvalidWorkSpace():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, InvalidWorkSpace): a workspace of -2 B on B;
    GE expects AssignMemory to fail (GRAPH_FAILED)."""
    with refuses(PlanError, match="_workspace_bytes"):
        _workspace_chain(-2).plan()


@ge_case("mem_assigner_unittest.cc", row="P6", raises=PlanError, reason=(
    "GE: SUCCESS, a workspace of -1 B is taken as 0 (BlockMemAssigner::GetNodeWorkSpaceSize accepts -1 and "
    "rejects other negatives); zcspec raises PlanError for any negative workspace (lifetimes._workspaces)"))
def ValidWorkSpaceNeg1():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, ValidWorkSpaceNeg1): a workspace of -1 B on B;
    GE expects SUCCESS."""
    fact(_workspace_chain(-1).plan().attributes.memory_size > 0,
         '_workspace_chain(-1).plan().attributes.memory_size > 0')


@ge_cases("mem_assigner_unittest.cc", (
    Param("MemReuseUtils_AlignMemOffset_Zero", dict(size=0, aligned=0)),
    Param("MemReuseUtils_AlignMemOffset_AlreadyAligned", dict(size=512, aligned=512)),
    Param("MemReuseUtils_AlignMemOffset_NotAligned", dict(size=100, aligned=512))))
def MemReuseUtils_AlignMemOffset(size, aligned):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, MemReuseUtils_AlignMemOffset_Zero,
    _AlreadyAligned, _NotAligned): MemReuseUtils::AlignMemOffset gives 0 -> 0, 512 -> 512, 100 -> 512
    (zcspec's block size, sizes.block_size)."""
    expect(sizes.block_size(size, GeGraph.OPTIONS), aligned, 'sizes.block_size(size, GeGraph.OPTIONS)')
