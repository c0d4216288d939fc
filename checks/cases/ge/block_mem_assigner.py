"""GE's ``tests/ge/ut/ge/graph/build/block_mem_assigner_unittest.cc`` (UtestBlockMemAssigner), ported.

Most of that file calls BlockMemAssigner internals (per-stream life ends, stream-edge
sets, MemoryBlock flags); the tests here are the ones whose fact shows in a plan: which
outputs are zero copy, which blocks hold a continuous group, which tensors never share.
See CASES.md for the rest.
"""
from __future__ import annotations

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case, ge_cases, Param
from zcspec.checks.cases.ge.graph import GeGraph
from zcspec.impl.compiler.memory import rules


MB = 1024 * 1024
# block_mem_ut::GraphBuilder::AddNode sizes every tensor align32(CalcTensorMemSize) + 32; default 1x1x224x224.
DEFAULT = 1 * 1 * 224 * 224 * 4 + 32


def _add_to_netoutput(op):
    g = GeGraph("add_netoutput")
    g.node("add", op=op, outs=(DEFAULT,))
    g.node("NETOUTPUT", op="NetOutput", outs=())
    g.edge("add", 0, "NETOUTPUT", 0)
    return g


def _check_not_zero_copy_on_unrefreshable_engine():
    fact(_add_to_netoutput("Mean").plan().tensor("add:0").zero_copy,
         '_add_to_netoutput("Mean").plan().tensor("add:0").zero_copy')
    plan = _add_to_netoutput("Mean").plan(no_zero_copy_ops={"Mean"})
    fact(not plan.tensor("add:0").zero_copy and plan.tensor("add:0").region == "feature_map",
         'not plan.tensor("add:0").zero_copy and plan.tensor("add:0").region == "feature_map"')


@ge_case("block_mem_assigner_unittest.cc")
def IsZeroCopyBlock_unsupport_dsa():
    """block_mem_assigner_unittest.cc TEST_F(UtestBlockMemAssigner, IsZeroCopyBlock_unsupport_dsa):
    add -> NETOUTPUT with add on the DSA engine; GE expects IsZeroCopyBlock(add, 0) == false
    (IsNodeSupportZeroCopy). The engine is modelled by listing the op in ``no_zero_copy_ops``; the same
    graph without it is zero copy. (The test's IsZeroCopyBlock(netout, 0) == true asks about an output
    the NetOutput does not have in zcspec; not ported.)"""
    _check_not_zero_copy_on_unrefreshable_engine()


@ge_case("block_mem_assigner_unittest.cc")
def IsZeroCopyBlock_unsupport_hccl():
    """block_mem_assigner_unittest.cc TEST_F(UtestBlockMemAssigner, IsZeroCopyBlock_unsupport_hccl):
    add -> NETOUTPUT with add on the HCCL engine (no address refresh); GE expects IsZeroCopyBlock(add, 0)
    == false. Modelled as in IsZeroCopyBlock_unsupport_dsa."""
    _check_not_zero_copy_on_unrefreshable_engine()


@ge_case("block_mem_assigner_unittest.cc")
def IsZeroCopyBlock_unsupport_addhccl():
    """block_mem_assigner_unittest.cc TEST_F(UtestBlockMemAssigner, IsZeroCopyBlock_unsupport_addhccl):
    add (HCCL engine) -> NETOUTPUT and add -> hccl; GE expects IsZeroCopyBlock(add, 0) == false."""
    g = GeGraph("add_hccl")
    g.node("add", op="Mean", outs=(DEFAULT,)).node("hccl", outs=(DEFAULT,))
    g.node("NETOUTPUT", op="NetOutput", outs=())
    g.edge("add", 0, "NETOUTPUT", 0).edge("add", 0, "hccl", 0)
    plan = g.plan(no_zero_copy_ops={"Mean"})
    fact(not plan.tensor("add:0").zero_copy, 'not plan.tensor("add:0").zero_copy')


@ge_cases("block_mem_assigner_unittest.cc", tuple(
    Param(f"{op_type}-{reusable}", dict(op_type=op_type, reusable=reusable), ge_test="MatchNoReuseType")
    for op_type, reusable in (("DropOutGenMask", False), ("DropOutGenMaskV3", False), ("DropOutGenMaskV5", True))))
def MatchNoReuseType(op_type, reusable):
    """block_mem_assigner_unittest.cc TEST_F(UtestBlockMemAssigner, MatchNoReuseType): the outputs of
    DropOutGenMask and DropOutGenMaskV3 are neither pre- nor post-reusable, DropOutGenMaskV5's are (only
    "V1".."V4" match the base type). zcspec's IR has no DropOutGenMask op, so this checks the rule table the
    planner consults (rules.reusable_producer)."""
    fact(rules.reusable_producer(op_type) is reusable, 'rules.reusable_producer(op_type) is reusable')


@ge_case("block_mem_assigner_unittest.cc")
def SeperateAtomicCleanAndContinousInput():
    """block_mem_assigner_unittest.cc TEST_F(UtestBlockMemAssigner, SeperateAtomicCleanAndContinousInput):
    a:1 (output 1 of two), b:1 -> c:3 (padding continuous input, separate atomic clean) -> d:2; GE expects
    the block of a's output 1 to be sized for all of c's inputs (real_size_list_[0] == 4096). The test's
    per-stream life ends (GetLifeEnd on streams 1, 2, 3) are BlockMemAssigner internals, not ported."""
    g = GeGraph("separate_clean_continuous")
    g.node("A", op="Split", outs=(2048, 2048), ws=(1024,), stream=1)
    g.node("B", outs=(2048,), ws=(1024,), stream=1)
    g.node("C", op="HcomAllReduce", outs=(4096,), ws=(1024,), stream=3)
    g.node("D", outs=(2048,), ws=(1024,), stream=2)
    g.edge("A", 1, "C", 0).edge("B", 0, "C", 1).edge("C", 0, "D", 0)
    plan = g.plan()
    a1 = plan.tensor("A:1")
    block = next(b for b in plan.blocks if b.id == a1.block)
    fact(block.offset == a1.offset and block.size == 4096 and "B:0" in block.tensors,
         'block.offset == a1.offset and block.size == 4096 and "B:0" in block.tensors')


@ge_case("block_mem_assigner_unittest.cc")
def SingleNoPaddingContinuousConnectContinuousNode():
    """block_mem_assigner_unittest.cc TEST_F(UtestBlockMemAssigner, SingleNoPaddingContinuousConnectContinuousNode)
    (graph DSL, BuildSingleNoPaddingContinuousConnectContinuousInputNode): a -> PhonyConcat (one input) ->
    hcombroadcast (continuous input) <- b, hcombroadcast -> c -> netoutput; GE expects the blocks of a and
    b to be continuous blocks: a one-input PhonyConcat has no continuous input
    (``MemReuseUtils::IsNoPaddingContinuousInput`` needs more than one input anchor; zcspec's
    ``rules.continuous_input`` too), its output is a ref of a. GE's hcombroadcast outputs are refs of its
    inputs (``reference``), which zcspec cannot express; they do not bear on the fact."""
    g = GeGraph("single_nopadding_into_continuous", dsl=True)
    g.node("a").node("PhonyConcat", op="PhonyConcat").node("hcombroadcast", op="HcomBroadcast", outs=(1024, 1024))
    g.node("c").node("b").node("netoutput", op="NetOutput", outs=())
    g.chain("a", "PhonyConcat", "hcombroadcast", "c")
    g.chain("b", "hcombroadcast", "c", "netoutput")
    plan = g.plan()
    expect(plan.tensor("a:0").block, plan.tensor("b:0").block, 'plan.tensor("a:0").block')


def _intersect(plan, a: str, a_len: int, b: str, b_len: int) -> bool:
    """The GE test's CheckIntersection over inclusive ranges [offset, offset + len]."""
    ta, tb = plan.tensor(a), plan.tensor(b)
    return not (ta.offset > tb.offset + b_len or ta.offset + a_len < tb.offset)


@ge_case("block_mem_assigner_unittest.cc")
def NoPaddingContinuousInput_MultiInputDiffStream():
    """block_mem_assigner_unittest.cc TEST_F(UtestBlockMemAssigner, NoPaddingContinuousInput_MultiInputDiffStream)
    (graph DSL, BuildNoPaddingContinuousMultiInputDiffStream): data -> a (8 MiB) -> b -> d (4 MiB) ->
    PhonyConcat (8 MiB) -> g, a ..ctrl..> c (stream 1, 4 MiB) -> PhonyConcat; order a, b, c, d
    (TopologicalSortingMock). GE expects a's and d's outputs not to intersect. zcspec has no control edge:
    the a -> c dependency only fixes the order here."""
    g = GeGraph("nopadding_multi_input_diff_stream", dsl=True)
    g.node("data", op="Data", outs=(2048,)).node("a", outs=(8 * MB,)).node("b", outs=(2048,))
    g.node("d", outs=(4 * MB,)).node("PhonyConcat", op="PhonyConcat", outs=(8 * MB,)).node("g", outs=(2048,))
    g.node("c", outs=(4 * MB,), stream=1)
    g.chain("data", "a", "b", "d", "PhonyConcat", "g")
    g.ctrl("a", "c")
    g.chain("c", "PhonyConcat")
    plan = g.plan(order=("data", "a", "b", "c", "d", "PhonyConcat", "g", "ge_netoutput"))
    fact(not _intersect(plan, "a:0", 8 * MB - 1, "d:0", 4 * MB),
         'not _intersect(plan, "a:0", 8 * MB - 1, "d:0", 4 * MB)')


@ge_case("block_mem_assigner_unittest.cc")
def NoPaddingContinuousInputAndMultiStream_FirstInputNotSmallestTopoId_SameSizeReuse():
    """block_mem_assigner_unittest.cc TEST_F(UtestBlockMemAssigner,
    NoPaddingContinuousInputAndMultiStream_FirstInputNotSmallestTopoId_SameSizeReuse) (graph DSL,
    BuildNoPaddingContinuousAndMultiStreamGraph): a (stream 1, 8 MiB) -> c -> d (4 MiB) -> PhonyConcat
    (8 MiB) -> g, b (4 MiB) -> PhonyConcat, b ..ctrl..> c; GE's DFS order a, b, c, d, PhonyConcat, g. GE
    expects a's and d's outputs not to intersect (d's group begins at b's id, before a's last reader)."""
    g = GeGraph("nopadding_multi_stream", dsl=True)
    g.node("a", outs=(8 * MB,), stream=1).node("c", outs=(2048,)).node("d", outs=(4 * MB,))
    g.node("PhonyConcat", op="PhonyConcat", outs=(8 * MB,)).node("g", outs=(2048,)).node("b", outs=(4 * MB,))
    g.chain("a", "c", "d", "PhonyConcat", "g")
    g.ctrl("b", "c")
    g.chain("b", "PhonyConcat")
    expect(g.ge_order(), ("a", "b", "c", "d", "PhonyConcat", "g"), 'g.ge_order()')
    fact(not _intersect(g.plan(), "a:0", 8 * MB, "d:0", 4 * MB),
         'not _intersect(g.plan(), "a:0", 8 * MB, "d:0", 4 * MB)')
