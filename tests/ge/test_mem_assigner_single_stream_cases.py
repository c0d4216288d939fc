"""GE's ``tests/ge/ut/ge/graph/build/mem_assigner_unittest.cc`` (UtestMemoryAssignerTest), ported: one stream.

The single-stream graphs without a continuous-input group: ref outputs (MakeRefReuseGraph,
MakeOutputNotZeroCopyGraph), the DFS order and the reuse option (MakeSortTestGraph), workspace
sizes, and the block alignment (MemReuseUtils::AlignMemOffset). The continuous-input graphs are
test_mem_assigner_continuous_cases.py, the multi-stream ones test_mem_assigner_stream_cases.py.

How each test compares with GE (and what a strict xfail records): tests/helpers/ge_mem_assigner.py.
"""
from __future__ import annotations

import pytest

from zcspec.impl.compiler.memory import sizes
from zcspec.impl.compiler.memory.errors import PlanError

from tests.helpers.ge_mem_assigner import some_op


def test_graph_ref_memory_reuse(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_ref_memory_reuse): MakeRefReuseGraph,
    the chain A(6656) -> B -> C -> D -> E -> F with C and D outputs of 6500 B that reference input 0
    (CreateRefOpWithWsSize), every op with a 1024 B workspace; GE expects HBM 14336."""
    g = ge_graph("ref_reuse")
    g.node("A", outs=(6656,), ws=(1024,)).node("B", ws=(1024,))
    g.node("C", op="Max", outs=(6500,), ws=(1024,), _reuse_input=True)
    g.node("D", op="Max", outs=(6500,), ws=(1024,), _reuse_input=True)
    g.node("E", ws=(1024,)).node("F", ws=(1024,))
    for a, b in ("AB", "BC", "CD", "DE", "EF"):
        g.edge(a, 0, b, 0)
    plan = g.plan()
    assert plan.tensor("C:0").alias_of == plan.tensor("D:0").alias_of == "B:0"
    assert plan.attributes.memory_size == 14336


def test_graph_ref_not_zero_copy(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_ref_not_zero_copy):
    MakeOutputNotZeroCopyGraph, A -> B (HcomAllGather on the HCCL engine) -> C (output refs input 0) ->
    D (NetOutput, with a 1024 B workspace); the output symbol holds an HCCL op without address refresh, so
    it is not zero copy (IsZeroCopyBlock). GE expects HBM 5120. B is modelled by an op listed in
    ``no_zero_copy_ops`` (no ``continuous_input``: the GE test sets none)."""
    g = ge_graph("output_not_zero_copy")
    some_op(g, "A")
    some_op(g, "B", op="Mean")
    some_op(g, "C", op="Max", _reuse_input=True)
    g.node("D", op="NetOutput", outs=(), ws=(1024,), stream=1)
    for a, b in ("AB", "BC", "CD"):
        g.edge(a, 0, b, 0)
    plan = g.plan(no_zero_copy_ops={"Mean"})
    assert not plan.tensor("C:0").zero_copy and plan.regions["zero_copy"] == 0
    assert plan.attributes.memory_size == 5120


def _sort_test_graph(ge_graph):
    """MakeSortTestGraph: b, a, c -> d (inputs 0, 1, 2) -> e, all on stream 1."""
    g = ge_graph("sort_test")
    for name in "ABCDE":
        some_op(g, name)
    g.edge("B", 0, "D", 0).edge("A", 0, "D", 1).edge("C", 0, "D", 2).edge("D", 0, "E", 0)
    return g


def test_graph_sort_test(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_sort_test): MakeSortTestGraph;
    GE expects HBM 9216."""
    assert _sort_test_graph(ge_graph).plan().attributes.memory_size == 9216


def test_graph_option_test(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_option_test): MakeSortTestGraph with
    ge.exec.disableReuseMemory=1 (PlanOptions(reuse=False)); GE expects HBM 15360, no reuse at all."""
    plan = _sort_test_graph(ge_graph).plan(reuse=False)
    assert plan.attributes.memory_size == 15360


def _workspace_chain(ge_graph, workspace):
    g = ge_graph("workspace", dsl=True)
    g.node("_arg_0", op="Data", outs=(1 * 1 * 224 * 224 * 4,)).node("A", outs=(4,))
    g.node("B", outs=(4,), ws=(workspace,)).node("C", outs=(4,)).node("Node_Output", op="NetOutput", outs=())
    g.chain("_arg_0", "A", "B", "C", "Node_Output")
    return g


def test_InvalidWorkSpace(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, InvalidWorkSpace): a workspace of -2 B on B;
    GE expects AssignMemory to fail (GRAPH_FAILED)."""
    with pytest.raises(PlanError, match="_workspace_bytes"):
        _workspace_chain(ge_graph, -2).plan()


@pytest.mark.xfail(strict=True, raises=PlanError, reason=(
    "GE: SUCCESS, a workspace of -1 B is taken as 0 (BlockMemAssigner::GetNodeWorkSpaceSize accepts -1 and "
    "rejects other negatives); zcspec raises PlanError for any negative workspace (lifetimes._workspaces)"))
def test_ValidWorkSpaceNeg1(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, ValidWorkSpaceNeg1): a workspace of -1 B on B;
    GE expects SUCCESS."""
    assert _workspace_chain(ge_graph, -1).plan().attributes.memory_size > 0


@pytest.mark.parametrize("size, aligned", [
    pytest.param(0, 0, id="MemReuseUtils_AlignMemOffset_Zero"),
    pytest.param(512, 512, id="MemReuseUtils_AlignMemOffset_AlreadyAligned"),
    pytest.param(100, 512, id="MemReuseUtils_AlignMemOffset_NotAligned"),
])
def test_MemReuseUtils_AlignMemOffset(ge_graph, size, aligned):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, MemReuseUtils_AlignMemOffset_Zero,
    _AlreadyAligned, _NotAligned): MemReuseUtils::AlignMemOffset gives 0 -> 0, 512 -> 512, 100 -> 512
    (zcspec's block size, sizes.block_size)."""
    assert sizes.block_size(size, ge_graph.OPTIONS) == aligned
