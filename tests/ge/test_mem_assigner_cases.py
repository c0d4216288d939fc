"""GE's ``tests/ge/ut/ge/graph/build/mem_assigner_unittest.cc`` (UtestMemoryAssignerTest), ported.

Each test rebuilds one GE test's graph (``conftest.GeGraph``: GE's op sizes, workspaces,
streams and DFS order) and checks GE's expected number or fact against zcspec's plan.
``memory_size`` is GE's HBM total after ``MemoryAssigner::AssignMemory`` (feature map,
atomic and zero-copy memory); a test that reads ``HybridMemAssigner::GetMemOffsets``
compares the feature-map region (GE's planner score). A strict xfail records a
deviation: GE's value, zcspec's, and the GE function that decides it.
"""
from __future__ import annotations

import pytest

from zcspec.impl.compiler.memory import sizes
from zcspec.impl.compiler.memory.errors import PlanError

# GE puts a suspended output's block with the node's workspaces (stream_workspace_blocks_), freed at the
# start of the next AssignOutputMemoryWithReuse, before that node's outputs are placed.
SUSPENDED = ("zcspec frees an unconsumed output only after the next node's outputs are placed (ge_blocks."
             "first_stage); GE frees it with the workspaces before them (BlockMemAssigner::"
             "CheckAndReleaseSuspendedBlock)")
CROSS_STREAM = ("zcspec keeps a symbol read or written on another stream alive to the last step and merges "
                "blocks within one stream only (units._interval, ge_blocks.level_two); GE ends it at the stream "
                "dependency edge back (BlockMemAssigner::GetDiffStreamMaxLifeTime) and shares across streams in "
                "level 2 (CanBlockLifeReuse/GetDependLifeBegin)")


def _some(g, name, size=2048, ws=1024, stream=1, op="Sum", **attrs_):
    """``CreateOpWithWsSize(name, ws, "some", size)`` of the GE test fixture."""
    g.node(name, op=op, outs=size if isinstance(size, tuple) else (size,), ws=(ws,), stream=stream, **attrs_)


def _continuous_reuse_graph(ge_graph):
    """MakeContinuousReuseGraph: A -> D -> {E, F, G}; B and C unconnected. D's continuous attrs sit on a
    one-input, one-output op, which GE plans as an ordinary op (IsContinuousInput/Output need > 1 anchor)."""
    g = ge_graph("continuous_reuse")
    g.node("A", ws=(512,)).node("B").node("C", ws=(512,)).node("D", ws=(512,)).node("E", ws=(1024,))
    g.node("F", outs=(2048,), ws=(512,)).node("G")
    g.edge("A", 0, "D", 0).edge("D", 0, "E", 0).edge("D", 0, "F", 0).edge("D", 0, "G", 0)
    return g


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "GE: HBM 3584 (the lower bound); zcspec: 4608. " + SUSPENDED + " (with GE's timing zcspec gives 4096); "
    "the last 512 B presumably from GE's level-2 interval reuse (MemoryBlock::AddLifeReuseBlock with cloned "
    "partial blocks), which zcspec does not do"))
def test_block_memory_assign_continuous_memory(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, block_memory_assign_continuous_memory):
    MakeContinuousReuseGraph through MemoryAssigner::AssignMemory; GE expects HBM offset 3584."""
    assert _continuous_reuse_graph(ge_graph).plan().attributes.memory_size == 3584


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "GE: planner offset 3584; zcspec feature map: 4608 (same graph as block_memory_assign_continuous_memory: "
    "D's NoPadding attrs are ignored on a one-input op). " + SUSPENDED + "; the rest presumably GE's level-2 "
    "interval reuse"))
def test_block_memory_assign_nopading_continuous_memory(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, block_memory_assign_nopading_continuous_memory):
    MakeContinuousReuseGraph(nopading) through HybridMemAssigner::Assign; GE expects 3584 (HBM)."""
    assert _continuous_reuse_graph(ge_graph).plan().regions["feature_map"] == 3584


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
    _some(g, "A")
    _some(g, "B", op="Mean")
    _some(g, "C", op="Max", _reuse_input=True)
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
        _some(g, name)
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


def _multi_stream_graph(ge_graph, streams):
    """MakeMultiDiffStreamGraph(1): a -> b, c -> d -> e (4 outputs) -> f (4 inputs)."""
    g = ge_graph("multi_stream")
    a, b, c, rest = streams
    _some(g, "A", stream=a)
    _some(g, "B", 4096, stream=b)
    _some(g, "C", stream=c)
    _some(g, "D", stream=rest)
    _some(g, "E", (2048,) * 4, op="Split", stream=rest)
    _some(g, "F", stream=rest)
    g.edge("A", 0, "B", 0).edge("A", 0, "C", 0).edge("B", 0, "D", 1).edge("C", 0, "D", 0).edge("D", 0, "E", 0)
    for k in range(4):
        g.edge("E", k, "F", k)
    return g


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="GE: HBM 19456 (the lower bound); zcspec: 21504. "
                   + CROSS_STREAM)
def test_graph_multi_stream_memory_reuse(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_multi_stream_memory_reuse):
    MakeMultiDiffStreamGraph, a:1 -> b:0, c:2 -> d:1 -> e:1 (4 outputs) -> f:1; GE expects HBM 19456."""
    assert _multi_stream_graph(ge_graph, (1, 0, 2, 1)).plan().attributes.memory_size == 19456


def test_graph1_multi_stream_memory_reuse(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph1_multi_stream_memory_reuse):
    MakeMultiDiffStreamGraph1, a:1 -> b:0, c:2 -> d, e, f on stream 2 (the code sets b to stream 0);
    GE expects HBM 19456."""
    assert _multi_stream_graph(ge_graph, (1, 0, 2, 2)).plan().attributes.memory_size == 19456


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="GE: HBM 17408; zcspec: 19456. " + CROSS_STREAM)
def test_graph_multi_stream_dependence_memory_reuse(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_multi_stream_dependence_memory_reuse):
    MakeDiffStreamDependenceGraph, the chain a..e on stream 0 feeding f..j on stream 1, with a:1 -> g and
    b:1 -> h across; GE expects HBM 17408."""
    g = ge_graph("stream_dependence")
    _some(g, "A", (2048, 2048), op="Split", stream=0)
    _some(g, "B", (4608, 2048), op="Split", stream=0)
    for name in "CDE":
        _some(g, name, stream=0)
    _some(g, "F")
    _some(g, "G", 4096)
    _some(g, "H")
    _some(g, "I", 4608)
    _some(g, "J")
    for edge in [("A", 0, "B", 0), ("B", 0, "C", 0), ("C", 0, "D", 0), ("D", 0, "E", 0), ("E", 0, "F", 0),
                 ("F", 0, "G", 0), ("A", 1, "G", 1), ("G", 0, "H", 0), ("B", 1, "H", 1), ("H", 0, "I", 0),
                 ("I", 0, "J", 0)]:
        g.edge(*edge)
    assert g.plan().attributes.memory_size == 17408


def _diff_stream_ref_graph(ge_graph, g_stream):
    """MakeDiffStreamRefMemGraph: a:1 (2 outputs) -> b:0 (refs a:0) -> c -> g; a:1 -> h; a ..ctrl..> d:1
    (2 outputs) -> e:0 (refs d:0) -> f -> g; d -> i. b and e carry NoPadding-continuous-input attrs on a
    single input, which GE ignores (one anchor); their outputs are refs of input 0. The control edge joins
    two stream-1 nodes, so it only fixes the order."""
    g = ge_graph("diff_stream_ref")
    _some(g, "A", (2048, 2048), op="Split")
    _some(g, "B", op="Max", stream=0, _reuse_input=True)
    _some(g, "C", stream=0)
    _some(g, "D", (2048, 2048), op="Split")
    _some(g, "E", op="Max", stream=0, _reuse_input=True)
    _some(g, "F", stream=0)
    _some(g, "G", stream=g_stream)
    _some(g, "H", stream=0)
    _some(g, "I", stream=0)
    g.ctrl("A", "D")
    for edge in [("A", 0, "B", 0), ("A", 1, "H", 0), ("B", 0, "C", 0), ("C", 0, "G", 0), ("D", 0, "E", 0),
                 ("D", 0, "I", 0), ("E", 0, "F", 0), ("F", 0, "G", 1)]:
        g.edge(*edge)
    return g


def test_graph_diff_stream_ref_reuse(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_diff_stream_ref_reuse):
    MakeDiffStreamRefMemGraph with g on stream 1; GE expects HBM 14336."""
    plan = _diff_stream_ref_graph(ge_graph, 1).plan()
    assert plan.tensor("B:0").alias_of == "A:0" and plan.tensor("E:0").alias_of == "D:0"
    assert plan.attributes.memory_size == 14336


def test_graph_diff_stream_ref_no_return_reuse(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_diff_stream_ref_no_return_reuse):
    MakeDiffStreamRefMemGraph with g on stream 0; GE expects HBM 16384."""
    assert _diff_stream_ref_graph(ge_graph, 0).plan().attributes.memory_size == 16384


def test_graph_first_not_max_life_continuous_reuse(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_first_not_max_life_continuous_reuse):
    MakeFirstNotMaxLifeContinuousGraph, a->d, b->e, c->f into h (NoPadding continuous input, 6144 B, output
    refs input 0) -> i -> j, and f also -> j (so d, the first input, does not live longest); GE expects
    HBM 11264. h is a PhonyConcat carrying h's 1024 B workspace."""
    g = ge_graph("first_not_max_life")
    for name in "ABCDEF":
        _some(g, name)
    _some(g, "H", 6144, op="PhonyConcat")
    _some(g, "I")
    _some(g, "J")
    for src, dst, into in [("A", "D", 0), ("B", "E", 0), ("C", "F", 0), ("D", "H", 0), ("E", "H", 1),
                           ("F", "H", 2), ("F", "J", 1), ("H", "I", 0), ("I", "J", 0)]:
        g.edge(src, 0, dst, into)
    assert g.plan().attributes.memory_size == 11264


@pytest.mark.xfail(strict=True, raises=PlanError, reason=(
    "GE: HBM 13312 for a NoPadding concat h whose output is an input of another NoPadding concat j "
    "(cascade: BlockMemAssigner cascade_min_life_time_, GraphMemoryAssigner::ReAssignContinuousMemory ref "
    "cascades); zcspec raises PlanError: d:0 (h's first piece, the root of h's output) would sit in two "
    "continuous-input blocks (units._groups)"))
def test_graph_cascade_continuous_memory_reuse(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_cascade_continuous_memory_reuse):
    MakeCascadeContinuousGraph, a->d, b->e, c->f into h (NoPadding) and g (10240 B), h, i into j (NoPadding);
    GE expects HBM 13312."""
    g = ge_graph("cascade_continuous")
    for name in "ABCDEF":
        _some(g, name)
    _some(g, "G", 10240)
    _some(g, "H", op="PhonyConcat")
    _some(g, "I")
    _some(g, "J", op="PhonyConcat")
    for src, dst, into in [("A", "D", 0), ("B", "E", 0), ("C", "F", 0), ("D", "H", 0), ("E", "H", 1),
                           ("F", "H", 2), ("G", "J", 0), ("H", "J", 1), ("I", "J", 2)]:
        g.edge(src, 0, dst, into)
    # The topo ids GE's test file draws for this topology (graph_ref_continuous_input_memory_reuse's comment).
    assert g.ge_order() == tuple("ADBECFHGIJ")
    assert g.plan().attributes.memory_size == 13312


def _not_first_graph(ge_graph, muti_ref=False, diff_stream=False, first_muti=True, second_ref=False, nopad=True):
    """MakeNotFistContinuousInputAsSymbolGraph: a -> b (refs a), c -> d (continuous input [b, c], NoPadding
    with output ref input 0, or padding with separate atomic clean) -> e -> f -> g -> h; optionally b or c
    also -> f, e..h on stream 0."""
    g = ge_graph("not_first_continuous_input")
    _some(g, "A")
    _some(g, "B", op="Max", _reuse_input=True)
    if second_ref:
        _some(g, "C", op="Max", _reuse_input=True)
    else:
        _some(g, "C")
    _some(g, "D", op="PhonyConcat" if nopad else "HcomAllReduce")
    for name in "EFGH":
        _some(g, name, stream=0 if diff_stream else 1)
    g.edge("A", 0, "B", 0).edge("A", 0, "C", 0)
    if muti_ref:
        g.edge("B" if first_muti else "C", 0, "F", 1)
    g.edge("B", 0, "D", 0).edge("C", 0, "D", 1)
    for a, b in ("DE", "EF", "FG", "GH"):
        g.edge(a, 0, b, 0)
    return g


_NOT_FIRST = ("GE: HBM {ge}; zcspec: {zc}, zcspec's lower bound being {lb}: zcspec keeps the whole 4096 B "
              "NoPadding group of b and c live until the last reader of d's output (e), and GE's value is "
              "below that bound. GE lays NoPadding pieces out by their shape's raw size (the fixture's "
              "1x1x16x8 float, 512 B, not the 2048 B the test sets: GetNoAlignSize, ReAssignContinuousMemory); "
              "with 512 B shapes zcspec gives {zc512}, still apart from GE because every piece reserves its "
              "padded size (units._group_unit), and GE's first-input block of a NoPadding group is sized and "
              "timed by its own rules (GetNoNeedAssignMemoryFlag, CalNodeAsContinuousInputMaxLife)")


def _not_first_deviation(ge: int, zc: int, lb: int, diff_stream: bool = False):
    reason = _NOT_FIRST.format(ge=ge, zc=zc, lb=lb, zc512=ge + 512)
    if diff_stream:
        reason += "; with e..h on stream 0 the cross-stream rule adds the rest"
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)


_NAME = "graph_not_first_continuous_input_as_symbol_reuse"


@pytest.mark.parametrize("kwargs, expected", [
    pytest.param(dict(muti_ref=True), 7168, id=_NAME, marks=_not_first_deviation(7168, 9216, 9216)),
    pytest.param(dict(), 5120, id=_NAME + "1", marks=_not_first_deviation(5120, 7168, 7168)),
    pytest.param(dict(diff_stream=True), 8192, id=_NAME + "2", marks=_not_first_deviation(8192, 10240, 9216, True)),
    pytest.param(dict(muti_ref=True, first_muti=False), 7168, id=_NAME + "3",
                 marks=_not_first_deviation(7168, 9216, 9216)),
    pytest.param(dict(muti_ref=True, diff_stream=True, first_muti=False), 8192, id=_NAME + "4",
                 marks=_not_first_deviation(8192, 10240, 9216, True)),
    pytest.param(dict(muti_ref=True, first_muti=False, second_ref=False), 7168, id=_NAME + "5",
                 marks=_not_first_deviation(7168, 9216, 9216)),
    pytest.param(dict(muti_ref=True, diff_stream=True, first_muti=False, second_ref=False), 8192, id=_NAME + "6",
                 marks=_not_first_deviation(8192, 10240, 9216, True)),
    pytest.param(dict(muti_ref=True, first_muti=False, second_ref=False, nopad=False), 9216, id=_NAME + "7"),
])
def test_graph_not_first_continuous_input_as_symbol_reuse(ge_graph, kwargs, expected):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_not_first_continuous_input_as_symbol_reuse
    and ..._reuse1 to _reuse7): MakeNotFistContinuousInputAsSymbolGraph with the test's flags (muti_ref,
    diff_stream, is_first_input_muti_ref, is_second_input_ref, is_no_padding); GE expects HBM 7168, 5120,
    8192, 7168, 8192, 7168, 8192, 9216. _reuse3/_reuse5 and _reuse4/_reuse6 build the same graph."""
    assert _not_first_graph(ge_graph, **kwargs).plan().attributes.memory_size == expected


def _padding_continuous_graph(ge_graph):
    """MakePaddingInputContinuousReuseGraph: a, b -> c (padding continuous input, 4096 B) -> d; d, e -> f
    (padding continuous input); c and f also clean their inputs separately (need_gentask_atomic), which
    zcspec has no counterpart for. Both are HcomAllReduce here."""
    g = ge_graph("padding_continuous")
    _some(g, "A")
    _some(g, "B")
    _some(g, "C", 4096, op="HcomAllReduce")
    _some(g, "D")
    _some(g, "E")
    _some(g, "F", 4096, op="HcomAllReduce")
    g.edge("A", 0, "C", 0).edge("B", 0, "C", 1).edge("C", 0, "D", 0).edge("D", 0, "F", 0).edge("E", 0, "F", 1)
    return g


SEPARATE_CLEAN = ("c and f clean their inputs separately (need_gentask_atomic with ATOMIC_ATTR_INPUT_INDEX: "
                  "BlockMemAssigner IsSeparateCleanContinuousInputNode), so GE gives the first input of each an "
                  "ordinary reusable block sized for the group and the other inputs none (ApplyOutMemory with "
                  "as_input_continuous false); zcspec has no separate-clean mode: a continuous-input group is one "
                  "block that first-stage reuse never takes and level 2 never nests (ge_blocks._may_reuse, level_two)")


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "GE: HBM 9216 and d:0 inside a:0's block; zcspec: 13312 and a:0, d:0 apart. " + SEPARATE_CLEAN))
def test_graph_continuous_input_memory_reuse(ge_graph, reuses):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_continuous_input_memory_reuse):
    MakePaddingInputContinuousReuseGraph; GE expects a:0 and d:0 to share memory (CheckReuse) and HBM 9216."""
    plan = _padding_continuous_graph(ge_graph).plan()
    assert reuses(plan, "A:0", "D:0")
    assert plan.attributes.memory_size == 9216


def _multi_ref_graph(ge_graph, diff_stream):
    """MakePaddingInputContinuousReuseGraphMultiRef: a feeds two padding continuous inputs, c = [a, b] and
    g = [a, f]; i = [e, d, h] -> j -> k, h -> k."""
    g = ge_graph("padding_continuous_multi_ref")
    _some(g, "A")
    _some(g, "B")
    _some(g, "F", 4096)
    _some(g, "C", 4096, op="HcomAllReduce")
    _some(g, "G", 4096, op="HcomAllReduce", stream=0 if diff_stream else 1)
    for name in "HDE":
        _some(g, name)
    _some(g, "I", 4096, op="HcomAllReduce")
    _some(g, "J")
    _some(g, "K", stream=0 if diff_stream else 1)
    for edge in [("A", 0, "C", 0), ("B", 0, "C", 1), ("A", 0, "G", 0), ("F", 0, "G", 1), ("C", 0, "D", 0),
                 ("G", 0, "H", 0), ("E", 0, "I", 0), ("D", 0, "I", 1), ("H", 0, "I", 2), ("I", 0, "J", 0),
                 ("J", 0, "K", 0), ("H", 0, "K", 1)]:
        g.edge(*edge)
    return g


@pytest.mark.xfail(strict=True, raises=PlanError, reason=(
    "GE: HBM 17408 with a, b, f, i in one block: with separate clean one output may feed two continuous "
    "inputs (its block is ordinary, IsSeparateCleanContinuousInputNode); zcspec raises PlanError, a:0 would "
    "sit in two continuous-input blocks (units._groups; the compiler's continuous_copies pass would copy it)"))
def test_graph_continuous_input_memory_reuse_multi_ref(ge_graph, reuses):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_continuous_input_memory_reuse_multi_ref):
    GE expects a, b, f, i to share one block (CheckReuse) and HBM 17408."""
    plan = _multi_ref_graph(ge_graph, False).plan()
    assert reuses(plan, "A:0", "B:0", "F:0", "I:0")
    assert plan.attributes.memory_size == 17408


@pytest.mark.xfail(strict=True, raises=PlanError, reason=(
    "GE: HBM 20480 (separate clean, as in graph_continuous_input_memory_reuse_multi_ref); zcspec raises "
    "PlanError, a:0 would sit in two continuous-input blocks (units._groups)"))
def test_graph_continuous_input_memory_reuse_multi_ref_diff_stream(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest,
    graph_continuous_input_memory_reuse_multi_ref_diff_stream): the multi-ref graph with g and k on
    stream 0; GE expects HBM 20480."""
    assert _multi_ref_graph(ge_graph, True).plan().attributes.memory_size == 20480


def _make_graph(ge_graph):
    """MakeGraph: a:0 -> b:0, c:1; b -> d:2, e:3; c, e -> g:3; d -> f:2 -> h:2 -> i:2; g, i -> j
    (NetOutput:3 with a 256000 B workspace); 1024 B outputs, workspaces 6000..60000 B."""
    g = ge_graph("make_graph")
    for name, ws, stream in [("A", 6000, 0), ("B", 120000, 0), ("C", 16000, 1), ("D", 24000, 2),
                             ("E", 24000, 3), ("F", 30000, 2), ("G", 32000, 3), ("H", 48000, 2),
                             ("I", 60000, 2)]:
        g.node(name, ws=(ws,), stream=stream)
    g.node("J", op="NetOutput", outs=(), ws=(256000,), stream=3)
    for edge in [("A", 0, "B", 0), ("A", 0, "C", 0), ("B", 0, "D", 0), ("B", 0, "E", 0), ("C", 0, "G", 0),
                 ("D", 0, "F", 0), ("E", 0, "G", 1), ("F", 0, "H", 0), ("G", 0, "J", 0), ("H", 0, "I", 0),
                 ("I", 0, "J", 1)]:
        g.edge(*edge)
    return g


def test_test_l2_memory_type(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, test_l2_memory_type): MakeGraph with b's
    output memory type RT_MEMORY_L2, which GE plans as HBM (GetSymbolMemType keeps only P2P, HOST and
    HOST_SVM); GE expects HBM 459264 and two memory records (HBM and the always-present P2P one)."""
    plan = _make_graph(ge_graph).plan()
    assert plan.attributes.memory_size == 459264


def test_graph_memory_set_last_used_attr(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_memory_set_last_used_attr): MakeGraph;
    GE marks f's input 0 (d's output) ATTR_NAME_IS_END_OF_INPUTMEM_LIFECYCLE: f is the last reader of that
    memory. zcspec has no such attribute; the same fact is d's output's last step being f's."""
    plan = _make_graph(ge_graph).plan()
    assert plan.tensor("D:0").last == plan.order.index("F")


def test_block_memory_assign_with_release_first_reuse_first_strategy(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest,
    block_memory_assign_with_release_first_reuse_first_strategy): MakeGraph with graph attr
    _mem_release_first_reuse_first (PlanOptions.mem_release_first_reuse_first); GE asserts only SUCCESS."""
    plan = _make_graph(ge_graph).plan(mem_release_first_reuse_first=True)
    assert plan.attributes.memory_size > 0


def test_graph_memory_stream_reuse(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_memory_stream_reuse): MakeStreamGraph,
    a:39 -> b:39 -> h:42, f:6 -> g:6 -> e:17; a -> c:44 -> d:44 -> e; GE asserts only SUCCESS."""
    g = ge_graph("stream_graph")
    for name, ws, size, stream in [("A", 6000, 1024, 39), ("B", 120000, 1024, 39), ("C", 16000, 20480, 44),
                                   ("D", 24000, 40960, 44), ("E", 24000, 1024, 17), ("F", 30000, 1024, 6),
                                   ("G", 32000, 1024, 6), ("H", 48000, 1024, 42)]:
        g.node(name, outs=(size,), ws=(ws,), stream=stream)
    for edge in [("A", 0, "B", 0), ("A", 0, "C", 0), ("B", 0, "H", 0), ("B", 0, "F", 0), ("C", 0, "D", 0),
                 ("D", 0, "E", 0), ("F", 0, "G", 0), ("G", 0, "E", 1)]:
        g.edge(*edge)
    assert g.plan().attributes.memory_size > 0


def test_DiffStreamNoPaddingContinuousInputNotReuse(ge_graph, disjoint):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, DiffStreamNoPaddingContinuousInputNotReuse):
    MakeDiffStreamSameOutGraphWithNoPaddingContinousInput2, data -> A (two outputs, A:1 unread) -> B:0,
    and C:1, both into D:0 (NoPadding continuous input, output refs input 0); C's stream has no edge from
    stream 0, so the group's life begins at the start and A:1 must not share B's memory (CheckNotReuse).
    GE's data has a second, unused output; zcspec's Data has one."""
    g = ge_graph("diff_stream_nopadding2")
    g.node("data", op="Data", outs=(2048,))
    g.node("A", op="Split", outs=(2048, 2048))
    g.node("B", outs=(2048,))
    g.node("C", outs=(2048,), stream=1)
    g.node("D", op="PhonyConcat", outs=(4096,))
    g.edge("data", 0, "A", 0).edge("A", 0, "B", 0).edge("B", 0, "D", 0).edge("C", 0, "D", 1)
    assert disjoint(g.plan(), "A:1", "B:0")


def _same_out_graph(ge_graph, d_stream=2, d_before_f=False):
    """MakeDiffStreamSameOutGraphWithNoPaddingContinousInput: a:1 -> b:0, c:1; c, b -> d (NoPadding,
    output refs input 0); c -> e:1 -> f:1; optionally d ..ctrl..> f."""
    g = ge_graph("diff_stream_same_out")
    g.node("A", outs=(2048,), stream=1).node("B", outs=(2048,), stream=0).node("C", outs=(2048,), stream=1)
    g.node("D", op="PhonyConcat", outs=(2048,), stream=d_stream)
    g.node("E", outs=(2048,), stream=1).node("F", outs=(2048,), stream=1)
    g.edge("A", 0, "B", 0).edge("A", 0, "C", 0).edge("B", 0, "D", 1).edge("C", 0, "D", 0)
    g.edge("C", 0, "E", 0).edge("E", 0, "F", 0)
    if d_before_f:
        g.ctrl("D", "F")
    return g


def test_DiffStreamSameOut_NoPaddingContinousInput_NotReuse(ge_graph, disjoint):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, DiffStreamSameOut_NoPaddingContinousInput_NotReuse):
    b (stream 0) and f (stream 1) may run concurrently, and b shares c's NoPadding block, so f must not
    reuse b (CheckNotReuse(B, F))."""
    assert disjoint(_same_out_graph(ge_graph).plan(), "B:0", "F:0")


def test_DiffStreamSameOut_NoPaddingContinousInput_Reuse(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, DiffStreamSameOut_NoPaddingContinousInput_Reuse):
    the same graph with d on stream 1 and d ..ctrl..> f (same stream: order only); GE asserts only SUCCESS
    (its comment: f could reuse c in theory, GE does not)."""
    assert _same_out_graph(ge_graph, d_stream=1, d_before_f=True).plan().attributes.memory_size > 0


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "GE: f:0 inside c:0's memory (c, b -> d:1 NoPadding, d -> e -> f, all but b on stream 1); zcspec puts f "
    "apart: the NoPadding group holds b, written on stream 0, so " + CROSS_STREAM))
def test_graph_diff_stream_memory_reuse(ge_graph, reuses):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_diff_stream_memory_reuse):
    MakeDiffStreamGraph; GE expects c:0 and f:0 to share memory (CheckReuse)."""
    g = ge_graph("diff_stream")
    for name, stream in zip("ABCDEF", (1, 0, 1, 1, 1, 1)):
        _some(g, name, stream=stream, op="PhonyConcat" if name == "D" else "Sum")
    g.edge("A", 0, "B", 0).edge("A", 0, "C", 0).edge("B", 0, "D", 1).edge("C", 0, "D", 0)
    g.edge("D", 0, "E", 0).edge("E", 0, "F", 0)
    assert reuses(g.plan(), "C:0", "F:0")


def test_DiffStreamEdgeExcludeData(ge_graph, reuses):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, DiffStreamEdgeExcludeData) (graph DSL):
    _arg_0 -> A -> B -> C -> out, _arg_1 -> D -> out, E:1 -> F:1 -> out, C ..ctrl..> _arg_1 ..ctrl..> E.
    Data executes nothing, so its control edge gives no stream 0 -> 1 dependency: A and E must not share
    (CheckReuse false) and GE expects HBM 1456128. Sizes: Data 1x1x224x224 float, B 1x1x32x32, E 1x1x512x512,
    the untyped ops a scalar float (4 B)."""
    g = ge_graph("diff_stream_edge_exclude_data", dsl=True)
    data = 1 * 1 * 224 * 224 * 4
    g.node("_arg_0", op="Data", outs=(data,)).node("A", outs=(4,)).node("B", outs=(32 * 32 * 4,))
    g.node("C", outs=(4,)).node("Node_Output", op="NetOutput", outs=())
    g.node("_arg_1", op="Data", outs=(data,)).node("D", outs=(4,))
    g.node("E", outs=(512 * 512 * 4,), stream=1).node("F", outs=(4,), stream=1)
    g.chain("_arg_0", "A", "B", "C", "Node_Output")
    g.chain("_arg_1", "D", "Node_Output")
    g.chain("E", "F", "Node_Output")
    g.ctrl("C", "_arg_1").ctrl("_arg_1", "E")
    plan = g.plan()
    assert reuses(plan, "A:0", "E:0", reuse=False)
    assert plan.attributes.memory_size == 1456128


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


def test_OneNodeConnectTwoPhonyConcat(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, OneNodeConnectTwoPhonyConcat) (graph DSL):
    c's two output anchors (the DSL gives each chain its own port) feed pc1 and pc2 (NoPadding), d -> pc1
    -> e, a -> b -> pc2 -> f, order a, b, d, c, pc2, pc1 (TopologicalSortingMock); GE asserts SUCCESS."""
    small, large = 1 * 1 * 448 * 224 * 4, 1 * 1 * 448 * 448 * 4
    g = ge_graph("one_node_two_phony_concat", dsl=True)
    g.node("c", op="Split", outs=(small, small)).node("pc1", op="PhonyConcat", outs=(large,))
    g.node("pc2", op="PhonyConcat", outs=(large,)).node("d", outs=(small,)).node("e", outs=(large,))
    g.node("netoutput", op="NetOutput", outs=()).node("a", outs=(large,)).node("b", outs=(small,))
    g.node("f", outs=(large,))
    g.chain("c", "pc1")
    g.chain("c", "pc2")
    g.chain("d", "pc1", "e", "netoutput")
    g.chain("a", "b", "pc2", "f", "netoutput")
    plan = g.plan(order=("a", "b", "d", "c", "pc2", "pc1", "e", "f", "netoutput"))
    assert plan.tensor("c:0").alias_of == "pc1:0" and plan.tensor("c:1").alias_of == "pc2:0"


def test_NoPaddingConcatWithReshapeRefInput(ge_graph):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, NoPaddingConcatWithReshapeRefInput):
    relu0, relu1 -> concatd (NoPadding, output refs input 0) -> out; relu1, new_reshape(_arg_0) -> reshape
    (output refs input 0) -> identity -> out; concatd ..ctrl..> reshape. GE asserts SUCCESS; its comment:
    relu1 follows relu0 contiguously. The sizes are CalcTensorMemSize of 1x1x224x224 float (the test's
    UpdateGraphTensorSize overrides the 2048 it set)."""
    size = 1 * 1 * 224 * 224 * 4
    g = ge_graph("nopadding_concat_reshape")
    g.node("relu0", outs=(size,)).node("relu1", outs=(size,)).node("_arg_0", op="Data", outs=(size,))
    g.node("new_reshape", op="Reshape", outs=(size,)).node("concatd", op="PhonyConcat", outs=(2 * size,))
    g.node("reshape", op="Reshape", outs=(size,)).node("identity", outs=(size,))
    g.node("netoutput0", op="NetOutput", outs=())
    g.edge("_arg_0", 0, "new_reshape", 0).edge("relu0", 0, "concatd", 0).edge("relu1", 0, "concatd", 1)
    g.edge("relu1", 0, "reshape", 0).edge("new_reshape", 0, "reshape", 1).edge("concatd", 0, "netoutput0", 0)
    g.ctrl("concatd", "reshape").edge("reshape", 0, "identity", 0).edge("identity", 0, "netoutput0", 1)
    plan = g.plan()
    assert plan.tensor("relu1:0").offset == plan.tensor("relu0:0").offset + size


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
