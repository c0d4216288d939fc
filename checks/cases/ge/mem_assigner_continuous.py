"""GE's ``tests/ge/ut/ge/graph/build/mem_assigner_unittest.cc`` (UtestMemoryAssignerTest), ported: continuous inputs.

The graphs built around a continuous-input group (NoPadding, ``PhonyConcat``, or padding,
``HcomAllReduce``), whose layout and life decide GE's number: MakeContinuousReuseGraph,
MakeFirstNotMaxLifeContinuousGraph, MakeCascadeContinuousGraph,
MakeNotFistContinuousInputAsSymbolGraph, MakePaddingInputContinuousReuseGraph(MultiRef) and the
graph-DSL NoPadding concats. The multi-stream graphs are mem_assigner_stream.py, the
other single-stream ones mem_assigner_single_stream.py.

How each case compares with GE (and what a deviation records): graph.py.
"""
from __future__ import annotations

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case, ge_cases, Param
from zcspec.checks.cases.ge.graph import GeGraph
from zcspec.checks.cases.ge.graph import reuses
from zcspec.checks.cases.ge.graph import some_op

# GE's separate clean (block_mem_assigner.cc IsSeparateCleanContinuousInputNode): the tests set
# need_gentask_atomic and ATOMIC_ATTR_INPUT_INDEX {-1} on a padding continuous-input node; zcspec's node
# attributes of the same names (rules.separate_clean).
SEPARATE_CLEAN = dict(need_gentask_atomic=True, atomic_input_index=(-1,))


def _continuous_reuse_graph():
    """MakeContinuousReuseGraph: A -> D -> {E, F, G}; B and C unconnected. D's continuous attrs sit on a
    one-input, one-output op, which GE plans as an ordinary op (IsContinuousInput/Output need > 1 anchor)."""
    g = GeGraph("continuous_reuse")
    g.node("A", ws=(512,), fixture=1).node("B", fixture=1).node("C", ws=(512,), fixture=1)
    g.node("D", ws=(512,), fixture=1).node("E", ws=(1024,), fixture=1)
    g.node("F", outs=(2048,), ws=(512,), fixture=1).node("G", fixture=1)
    g.edge("A", 0, "D", 0).edge("D", 0, "E", 0).edge("D", 0, "F", 0).edge("D", 0, "G", 0)
    return g


@ge_case("mem_assigner_unittest.cc")
def block_memory_assign_continuous_memory():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, block_memory_assign_continuous_memory):
    MakeContinuousReuseGraph through MemoryAssigner::AssignMemory; GE expects HBM offset 3584, the lower
    bound, which takes level 2's interval reuse (CanIntervalLifeReuse): 4608 without it."""
    expect(_continuous_reuse_graph().plan().attributes.memory_size, 3584,
           '_continuous_reuse_graph().plan().attributes.memory_size')


@ge_case("mem_assigner_unittest.cc")
def block_memory_assign_nopading_continuous_memory():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, block_memory_assign_nopading_continuous_memory):
    MakeContinuousReuseGraph(nopading) through HybridMemAssigner::Assign; GE expects 3584 (HBM)."""
    expect(_continuous_reuse_graph().plan().regions["feature_map"], 3584,
           '_continuous_reuse_graph().plan().regions["feature_map"]')


@ge_case("mem_assigner_unittest.cc")
def graph_first_not_max_life_continuous_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_first_not_max_life_continuous_reuse):
    MakeFirstNotMaxLifeContinuousGraph, a->d, b->e, c->f into h (NoPadding continuous input, 6144 B, output
    refs input 0) -> i -> j, and f also -> j (so d, the first input, does not live longest); GE expects
    HBM 11264. h is a PhonyConcat carrying h's 1024 B workspace."""
    g = GeGraph("first_not_max_life")
    for name in "ABCDEF":
        some_op(g, name)
    some_op(g, "H", 6144, op="PhonyConcat")
    some_op(g, "I")
    some_op(g, "J")
    for src, dst, into in [("A", "D", 0), ("B", "E", 0), ("C", "F", 0), ("D", "H", 0), ("E", "H", 1),
                           ("F", "H", 2), ("F", "J", 1), ("H", "I", 0), ("I", "J", 0)]:
        g.edge(src, 0, dst, into)
    expect(g.plan().attributes.memory_size, 11264, 'g.plan().attributes.memory_size')


@ge_case("mem_assigner_unittest.cc")
def graph_cascade_continuous_memory_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_cascade_continuous_memory_reuse):
    MakeCascadeContinuousGraph, a->d, b->e, c->f into h (NoPadding) and g (10240 B), h, i into j (NoPadding);
    GE expects HBM 13312. The cascade is laid out in place (graph_mem_assigner.cc ReAssignContinuousMemory):
    j's one block holds g | d e f (h's pieces, where h's output sits) | i, as large as g's set size, live
    from d's step (block_mem_assigner.cc GetContinuousNodeLifeTimeBegin) to j's."""
    g = GeGraph("cascade_continuous")
    for name in "ABCDEF":
        some_op(g, name)
    some_op(g, "G", 10240)
    some_op(g, "H", op="PhonyConcat")
    some_op(g, "I")
    some_op(g, "J", op="PhonyConcat")
    for src, dst, into in [("A", "D", 0), ("B", "E", 0), ("C", "F", 0), ("D", "H", 0), ("E", "H", 1),
                           ("F", "H", 2), ("G", "J", 0), ("H", "J", 1), ("I", "J", 2)]:
        g.edge(src, 0, dst, into)
    # The topo ids GE's test file draws for this topology (graph_ref_continuous_input_memory_reuse's comment).
    expect(g.ge_order(), tuple("ADBECFHGIJ"), 'g.ge_order()')
    plan = g.plan()
    expect(plan.attributes.memory_size, 13312, 'plan.attributes.memory_size')
    at = {t.name: t.offset for t in plan.tensors}
    expect(tuple(at[t] - at["G:0"] for t in ("D:0", "E:0", "F:0", "H:0", "I:0", "J:0")),
           (512, 1024, 1536, 512, 2048, 0), 'offsets of d, e, f, h, i, j from g')


@ge_case("mem_assigner_unittest.cc")
def graph_ref_continuous_input_memory_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_ref_continuous_input_memory_reuse):
    MakeRefContinuousInputGraph, a->d, b->e, c->f into h (1024 B, its output refs input 1, e) and g (10240 B),
    h, i into j (NoPadding continuous input, output refs input 0); GE expects HBM 17408. Every output is
    the fixture's 1x1x16x8 float (512 B) with its set size: j's pieces g:0, h:0, i:0 sit 512 B apart
    (graph_mem_assigner.cc GetMemorySize) in one block as large as g:0's set size, 10240 B."""
    g = GeGraph("ref_continuous_input")
    for name in "ABCDEF":
        some_op(g, name)
    some_op(g, "G", 10240)
    some_op(g, "H", 1024, op="Max", _reuse_input=1)
    some_op(g, "I")
    some_op(g, "J", op="PhonyConcat")
    for src, dst, into in [("A", "D", 0), ("B", "E", 0), ("C", "F", 0), ("D", "H", 0), ("E", "H", 1),
                           ("F", "H", 2), ("G", "J", 0), ("H", "J", 1), ("I", "J", 2)]:
        g.edge(src, 0, dst, into)
    expect(g.plan().attributes.memory_size, 17408, 'g.plan().attributes.memory_size')


def _not_first_graph(muti_ref=False, diff_stream=False, first_muti=True, second_ref=False, nopad=True):
    """MakeNotFistContinuousInputAsSymbolGraph: a -> b (refs a), c -> d (continuous input [b, c], NoPadding
    with output ref input 0, or padding with separate atomic clean) -> e -> f -> g -> h; optionally b or c
    also -> f, e..h on stream 0.

    Every output has the test's 2048 B set size on the fixture's 1x1x16x8 float (512 B): GE lays NoPadding
    pieces out by the shape (graph_mem_assigner.cc GetMemorySize, CalculateTensorRealSizeAndOutSize, which call
    TensorUtils' CalcTensorMemSize), b:0 and c:0 512 B apart, and sizes their block by the largest size set in
    the symbol (2048 B)."""
    g = GeGraph("not_first_continuous_input")
    some_op(g, "A")
    some_op(g, "B", op="Max", _reuse_input=True)
    if second_ref:
        some_op(g, "C", op="Max", _reuse_input=True)
    else:
        some_op(g, "C")
    if nopad:
        some_op(g, "D", op="PhonyConcat")
    else:
        some_op(g, "D", op="HcomAllReduce", **SEPARATE_CLEAN)
    for name in "EFGH":
        some_op(g, name, stream=0 if diff_stream else 1)
    g.edge("A", 0, "B", 0).edge("A", 0, "C", 0)
    if muti_ref:
        g.edge("B" if first_muti else "C", 0, "F", 1)
    g.edge("B", 0, "D", 0).edge("C", 0, "D", 1)
    for a, b in ("DE", "EF", "FG", "GH"):
        g.edge(a, 0, b, 0)
    return g


_NAME = "graph_not_first_continuous_input_as_symbol_reuse"


# (suffix of GE's TEST_F name, the graph's flags, GE's HBM)
_NOT_FIRST = (
    ("", dict(muti_ref=True), 7168),
    ("1", dict(), 5120),
    ("2", dict(diff_stream=True), 8192),
    ("3", dict(muti_ref=True, first_muti=False), 7168),
    ("4", dict(muti_ref=True, diff_stream=True, first_muti=False), 8192),
    ("5", dict(muti_ref=True, first_muti=False, second_ref=False), 7168),
    ("6", dict(muti_ref=True, diff_stream=True, first_muti=False, second_ref=False), 8192),
    ("7", dict(muti_ref=True, first_muti=False, second_ref=False, nopad=False), 9216))


@ge_cases("mem_assigner_unittest.cc", tuple(Param(_NAME + suffix, dict(kwargs=kwargs, expected=expected))
                                            for suffix, kwargs, expected in _NOT_FIRST))
def graph_not_first_continuous_input_as_symbol_reuse(kwargs, expected):
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_not_first_continuous_input_as_symbol_reuse
    and ..._reuse1 to _reuse7): MakeNotFistContinuousInputAsSymbolGraph with the test's flags (muti_ref,
    diff_stream, is_first_input_muti_ref, is_second_input_ref, is_no_padding); GE expects HBM 7168, 5120,
    8192, 7168, 8192, 7168, 8192, 9216. _reuse3/_reuse5 and _reuse4/_reuse6 build the same graph. The
    NoPadding pieces advance by their shape's 512 B, not their 2048 B set size (see _not_first_graph): laid
    out by their set sizes they would make a 4096 B group and zcspec would plan 2048 B more."""
    expect(_not_first_graph(**kwargs).plan().attributes.memory_size, expected,
           '_not_first_graph(**kwargs).plan().attributes.memory_size')


def _padding_continuous_graph():
    """MakePaddingInputContinuousReuseGraph: a, b -> c (padding continuous input, 4096 B) -> d; d, e -> f
    (padding continuous input); c and f clean their inputs separately (need_gentask_atomic with
    ATOMIC_ATTR_INPUT_INDEX), so each group is an ordinary reusable block of its first input (a:0, d:0),
    as large as the group. Both are HcomAllReduce here."""
    g = GeGraph("padding_continuous")
    some_op(g, "A")
    some_op(g, "B")
    some_op(g, "C", 4096, op="HcomAllReduce", **SEPARATE_CLEAN)
    some_op(g, "D")
    some_op(g, "E")
    some_op(g, "F", 4096, op="HcomAllReduce", **SEPARATE_CLEAN)
    g.edge("A", 0, "C", 0).edge("B", 0, "C", 1).edge("C", 0, "D", 0).edge("D", 0, "F", 0).edge("E", 0, "F", 1)
    return g


@ge_case("mem_assigner_unittest.cc")
def graph_continuous_input_memory_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_continuous_input_memory_reuse):
    MakePaddingInputContinuousReuseGraph; GE expects a:0 and d:0 to share memory (CheckReuse) and HBM 9216:
    f's group (d, e) takes the block c's group (a, b) released at c, as an ordinary block of the same size
    (units._clean_unit)."""
    plan = _padding_continuous_graph().plan()
    fact(reuses(plan, "A:0", "D:0"), 'reuses(plan, "A:0", "D:0")')
    expect(plan.attributes.memory_size, 9216, 'plan.attributes.memory_size')


def _multi_ref_graph(diff_stream):
    """MakePaddingInputContinuousReuseGraphMultiRef: a feeds two padding continuous inputs, c = [a, b] and
    g = [a, f]; i = [e, d, h] -> j -> k, h -> k; c, g and i clean their inputs separately, so a:0 starts
    both c's and g's group in one block as large as the larger (a, f), with b and f after a (never live at
    once)."""
    g = GeGraph("padding_continuous_multi_ref")
    some_op(g, "A")
    some_op(g, "B")
    some_op(g, "F", 4096)
    some_op(g, "C", 4096, op="HcomAllReduce", **SEPARATE_CLEAN)
    some_op(g, "G", 4096, op="HcomAllReduce", stream=0 if diff_stream else 1, **SEPARATE_CLEAN)
    for name in "HDE":
        some_op(g, name)
    some_op(g, "I", 4096, op="HcomAllReduce", **SEPARATE_CLEAN)
    some_op(g, "J")
    some_op(g, "K", stream=0 if diff_stream else 1)
    for edge in [("A", 0, "C", 0), ("B", 0, "C", 1), ("A", 0, "G", 0), ("F", 0, "G", 1), ("C", 0, "D", 0),
                 ("G", 0, "H", 0), ("E", 0, "I", 0), ("D", 0, "I", 1), ("H", 0, "I", 2), ("I", 0, "J", 0),
                 ("J", 0, "K", 0), ("H", 0, "K", 1)]:
        g.edge(*edge)
    return g


@ge_case("mem_assigner_unittest.cc")
def graph_continuous_input_memory_reuse_multi_ref():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_continuous_input_memory_reuse_multi_ref):
    GE expects a, b, f, i to share one block (CheckReuse) and HBM 17408: b and f sit at the same bytes after
    a:0 in its block (continuous_groups.clean_sets), and i:0 nests in it once g has run."""
    plan = _multi_ref_graph(False).plan()
    fact(reuses(plan, "A:0", "B:0", "F:0", "I:0"), 'reuses(plan, "A:0", "B:0", "F:0", "I:0")')
    expect(plan.attributes.memory_size, 17408, 'plan.attributes.memory_size')


@ge_case("mem_assigner_unittest.cc")
def graph_continuous_input_memory_reuse_multi_ref_diff_stream():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest,
    graph_continuous_input_memory_reuse_multi_ref_diff_stream): the multi-ref graph with g and k on
    stream 0; GE expects HBM 20480. a:0's block is read on both streams (c, g), so level 2 still gives it
    interval reuse (GE's diff_stream_life_time_ stays empty, ge_level2._remote) and i:0 nests in it."""
    expect(_multi_ref_graph(True).plan().attributes.memory_size, 20480,
           '_multi_ref_graph(True).plan().attributes.memory_size')


@ge_case("mem_assigner_unittest.cc")
def OneNodeConnectTwoPhonyConcat():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, OneNodeConnectTwoPhonyConcat) (graph DSL):
    c's two output anchors (the DSL gives each chain its own port) feed pc1 and pc2 (NoPadding), d -> pc1
    -> e, a -> b -> pc2 -> f, order a, b, d, c, pc2, pc1 (TopologicalSortingMock); GE asserts SUCCESS."""
    small, large = 1 * 1 * 448 * 224 * 4, 1 * 1 * 448 * 448 * 4
    g = GeGraph("one_node_two_phony_concat", dsl=True)
    g.node("c", op="Split", outs=(small, small)).node("pc1", op="PhonyConcat", outs=(large,))
    g.node("pc2", op="PhonyConcat", outs=(large,)).node("d", outs=(small,)).node("e", outs=(large,))
    g.node("netoutput", op="NetOutput", outs=()).node("a", outs=(large,)).node("b", outs=(small,))
    g.node("f", outs=(large,))
    g.chain("c", "pc1")
    g.chain("c", "pc2")
    g.chain("d", "pc1", "e", "netoutput")
    g.chain("a", "b", "pc2", "f", "netoutput")
    plan = g.plan(order=("a", "b", "d", "c", "pc2", "pc1", "e", "f", "netoutput"))
    fact(plan.tensor("c:0").alias_of == "pc1:0" and plan.tensor("c:1").alias_of == "pc2:0",
         'plan.tensor("c:0").alias_of == "pc1:0" and plan.tensor("c:1").alias_of == "pc2:0"')


@ge_case("mem_assigner_unittest.cc")
def NoPaddingConcatWithReshapeRefInput():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, NoPaddingConcatWithReshapeRefInput):
    relu0, relu1 -> concatd (NoPadding, output refs input 0) -> out; relu1, new_reshape(_arg_0) -> reshape
    (output refs input 0) -> identity -> out; concatd ..ctrl..> reshape. GE asserts SUCCESS; its comment:
    relu1 follows relu0 contiguously. The sizes are CalcTensorMemSize of 1x1x224x224 float (the test's
    UpdateGraphTensorSize overrides the 2048 it set)."""
    size = 1 * 1 * 224 * 224 * 4
    g = GeGraph("nopadding_concat_reshape")
    g.node("relu0", outs=(size,)).node("relu1", outs=(size,)).node("_arg_0", op="Data", outs=(size,))
    g.node("new_reshape", op="Reshape", outs=(size,)).node("concatd", op="PhonyConcat", outs=(2 * size,))
    g.node("reshape", op="Reshape", outs=(size,)).node("identity", outs=(size,))
    g.node("netoutput0", op="NetOutput", outs=())
    g.edge("_arg_0", 0, "new_reshape", 0).edge("relu0", 0, "concatd", 0).edge("relu1", 0, "concatd", 1)
    g.edge("relu1", 0, "reshape", 0).edge("new_reshape", 0, "reshape", 1).edge("concatd", 0, "netoutput0", 0)
    g.ctrl("concatd", "reshape").edge("reshape", 0, "identity", 0).edge("identity", 0, "netoutput0", 1)
    plan = g.plan()
    expect(plan.tensor("relu1:0").offset, plan.tensor("relu0:0").offset + size, 'plan.tensor("relu1:0").offset')


HCOM_PIECE, TENSOR = 48 * 448 * 4, 448 * 448 * 4   # {1, 1, 48, 448} and {1, 1, 448, 448} float


def _one_block(plan, pieces):
    """GE's ContinuousMemMng (continuous_mem.cc; block_mem_assigner.cc ApplyContinuousMemWithMng) gives a
    continuous output feeding a continuous input one block with the input's other pieces: ``pieces`` back to
    back in that order, each at the sum of the 512-aligned sizes before it (SetOffsetForContinuousMem). The
    order is the one GE's UtestContinuousMem tests (CheckContinuousMem) expect of the same graph builder."""
    ts = [plan.tensor(p) for p in pieces]
    fact(len({t.block for t in ts}) == 1, f"{pieces} share one block")
    expect(tuple(t.offset - ts[0].offset for t in ts),
           tuple(sum(t.aligned_size for t in ts[:k]) for k in range(len(ts))), f"offsets of {pieces} in the block")


@ge_case("mem_assigner_unittest.cc")
def ContinuousOutIn_SUCCESS_OutAsHeader():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, ContinuousOutIn_SUCCESS_OutAsHeader):
    BuildContinuousOutInWithOutAsHeader (test_memory_shared_graph.cc): hcom1 (continuous output, 3 outputs of
    1x1x48x448 float) -> a, hcom2 (continuous input: hcom1:1, hcom1:2, b) -> c (a, hcom2) -> d -> netoutput;
    GE expects AssignMemory to succeed (ContinuousMemMng: one block for hcom1's outputs and b, _one_block)."""
    g = GeGraph("continuous_out_in_out_as_header")
    g.node("hcom1", op="HcomAllReduce", outs=(48 * 448 * 4,) * 3, continuous_output=True)
    for name in "abcd":
        g.node(name, op="Add" if name in "c" else "Relu", outs=(448 * 448 * 4,))
    g.node("hcom2", op="HcomAllReduce", outs=(448 * 448 * 4,))
    g.node("netoutput", op="NetOutput", outs=())
    for edge in [("hcom1", 0, "a", 0), ("hcom1", 1, "hcom2", 0), ("hcom1", 2, "hcom2", 1), ("b", 0, "hcom2", 2),
                 ("hcom2", 0, "c", 1), ("a", 0, "c", 0), ("c", 0, "d", 0), ("d", 0, "netoutput", 0)]:
        g.edge(*edge)
    _one_block(g.plan(), ("hcom1:0", "hcom1:1", "hcom1:2", "b:0"))


def _assign(g, name):
    """GE's Assign with ATTR_NAME_REFERENCE ("ref" in, "ref" out): its output is its input 0's memory."""
    g.node(name, op="Relu", outs=(TENSOR,), _reuse_input=True)


@ge_case("mem_assigner_unittest.cc")
def ContinuousOutIn_SUCCESS_InAsHeaderAndTail():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, ContinuousOutIn_SUCCESS_InAsHeaderAndTail):
    BuildContinuousOutInWithInAsHeaderAndTail: c -> d -> b; a (stream 1), hcom1:0, hcom1:1 (continuous output),
    b -> hcom2 (continuous input) -> netoutput, in the mocked order c, d, b, hcom1, a; GE expects SUCCESS, with
    a, hcom1's outputs and b in one block (_one_block)."""
    g = GeGraph("continuous_out_in_in_as_header_and_tail")
    g.node("hcom1", op="HcomAllReduce", outs=(HCOM_PIECE,) * 2, continuous_output=True)
    for name in "cdab":
        g.node(name, op="Relu", outs=(TENSOR,), stream=1 if name == "a" else 0)
    g.node("hcom2", op="HcomAllReduce", outs=(TENSOR,))
    g.node("netoutput", op="NetOutput", outs=())
    for edge in [("c", 0, "d", 0), ("d", 0, "b", 0), ("a", 0, "hcom2", 0), ("hcom1", 0, "hcom2", 1),
                 ("hcom1", 1, "hcom2", 2), ("b", 0, "hcom2", 3), ("hcom2", 0, "netoutput", 0)]:
        g.edge(*edge)
    _one_block(g.plan(order=("c", "d", "b", "hcom1", "a", "hcom2", "netoutput")), ("a:0", "hcom1:0", "hcom1:1", "b:0"))


@ge_case("mem_assigner_unittest.cc")
def ContinuousOutIn_SUCCESS_TwoContinuousInNode():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, ContinuousOutIn_SUCCESS_TwoContinuousInNode):
    BuildContinuousOutInWithTwoContinuousInNode: hcom1 (continuous output, 6 outputs) -> a (stream 1), hcom2
    (outputs 1, 2), hcom3 (outputs 3, 4), b -> c -> d -> netoutput; GE expects SUCCESS, hcom1's outputs one block
    holding both inputs (_one_block). GE's a, hcom2 and hcom3 have no outputs; zcspec's ops need one, so each
    has an unconsumed output."""
    g = GeGraph("continuous_out_in_two_continuous_in")
    g.node("hcom1", op="HcomAllReduce", outs=(HCOM_PIECE,) * 6, continuous_output=True)
    g.node("a", op="Relu", outs=(TENSOR,), stream=1)
    for name in ("b", "c", "d"):
        g.node(name, op="Relu", outs=(TENSOR,))
    for name in ("hcom2", "hcom3"):
        g.node(name, op="HcomAllReduce", outs=(TENSOR,))
    g.node("netoutput", op="NetOutput", outs=())
    for edge in [("hcom1", 0, "a", 0), ("hcom1", 1, "hcom2", 0), ("hcom1", 2, "hcom2", 1), ("hcom1", 3, "hcom3", 0),
                 ("hcom1", 4, "hcom3", 1), ("hcom1", 5, "b", 0), ("b", 0, "c", 0), ("c", 0, "d", 0),
                 ("d", 0, "netoutput", 0)]:
        g.edge(*edge)
    _one_block(g.plan(order=("hcom1", "a", "hcom2", "hcom3", "b", "c", "d", "netoutput")),
               tuple(f"hcom1:{k}" for k in range(6)))


def _dsl_continuous(name, chains, continuous_out, continuous_in):
    """A graph of test_memory_shared_graph.cc's DSL builders: Relu, Assign (a ref) and HcomAllReduce nodes of
    {1, 1, 448, 448} float; ``continuous_out`` nodes get MemConflictShareGraph::SetContinuousOutput. A node
    without outputs in GE gets one unconsumed output (zcspec's ops need one)."""
    g = GeGraph(name, dsl=True)
    names = dict.fromkeys(n for chain in chains for n in chain)
    outs = {n: sum(1 for chain in chains for a in chain[:-1] if a == n) for n in names}
    for n in names:
        if n.startswith("asign") or n == "assign":
            _assign(g, n)
        elif n == "netoutput":
            g.node(n, op="NetOutput", outs=())
        elif n.startswith("hcom"):
            g.node(n, op="HcomAllReduce", outs=(TENSOR,) * max(outs[n], 1), continuous_output=n in continuous_out)
        else:
            g.node(n, op="Relu", outs=(TENSOR,))
    for chain in chains:
        g.chain(*chain)
    fact(all(n.startswith("hcom") for n in continuous_in),
         'all(n.startswith("hcom") for n in continuous_in)')   # HcomAllReduce has continuous inputs by type
    return g


@ge_case("mem_assigner_unittest.cc")
def ContinuousOutIn_SUCCESS_OneInput():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, ContinuousOutIn_SUCCESS_OneInput):
    BuildContinuousOutInWithOneInput: hcom1 (continuous output, 3 outputs) -> asign1 -> a -> netoutput,
    -> asign2 -> hcom2 (one input: no continuous input), -> asign3 -> c; GE expects SUCCESS."""
    chains = [("hcom1", "asign1", "a", "netoutput"), ("hcom1", "asign2", "hcom2"), ("hcom1", "asign3", "c")]
    p = _dsl_continuous("continuous_out_in_one_input", chains, {"hcom1"}, {"hcom2"}).plan()
    expect(len({p.tensor(f"hcom1:{k}").block for k in range(3)}), 1,
           'len({p.tensor(f"hcom1:{k}").block for k in range(3)})')


@ge_case("mem_assigner_unittest.cc")
def ContinuousOutIn_SUCCESS_OneOutput():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, ContinuousOutIn_SUCCESS_OneOutput):
    BuildContinuousOutInWithOneOutput: a, hcom1 (one output: no continuous output), b, each through an Assign,
    into hcom2 (continuous input) -> netoutput; GE expects SUCCESS."""
    chains = [("a", "asign1", "hcom2", "netoutput"), ("hcom1", "asign2", "hcom2"), ("b", "asign3", "hcom2")]
    _dsl_continuous("continuous_out_in_one_output", chains, {"hcom1"}, {"hcom2"}).plan()


@ge_case("mem_assigner_unittest.cc")
def ContinuousOutIn_SUCCESS_TwoContinuousOutNodeAndRefNode():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, ContinuousOutIn_SUCCESS_TwoContinuousOutNodeAndRefNode):
    BuildContinuousOutInWithTwoContinuousOutNodeAndRefNode: a, hcom1 (2 continuous outputs), b, hcom2 (2
    continuous outputs), c, each through an Assign, into hcom3 (7 continuous inputs) -> netoutput; GE expects
    SUCCESS, the seven in one block (_one_block; the Assigns' outputs are their inputs' memory)."""
    chains = [("a", "asign1", "hcom3", "netoutput"), ("hcom1", "asign2", "hcom3"), ("hcom1", "asign3", "hcom3"),
              ("b", "asign4", "hcom3"), ("hcom2", "asign5", "hcom3"), ("hcom2", "asign6", "hcom3"),
              ("c", "asign7", "hcom3")]
    plan = _dsl_continuous("continuous_out_in_two_out_ref", chains, {"hcom1", "hcom2"}, {"hcom3"}).plan()
    _one_block(plan, ("a:0", "hcom1:0", "hcom1:1", "b:0", "hcom2:0", "hcom2:1", "c:0"))


@ge_case("mem_assigner_unittest.cc")
def ContinuousOutIn_SUCCESS_ThreeNode():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, ContinuousOutIn_SUCCESS_ThreeNode):
    BuildContinuousOutInWithThreeNode: hcom1, hcom2, hcom3 (2 continuous outputs each) and a feed hcom4 (a,
    hcom1), hcom5 (hcom1, Assign of hcom2), hcom6 (hcom2, hcom3); hcom3 -> b -> netoutput; GE expects SUCCESS,
    the three in-groups chained through the three out-groups in one block (_one_block)."""
    chains = [("a", "hcom4"), ("hcom1", "hcom4"), ("hcom1", "hcom5"), ("hcom2", "assign", "hcom5"), ("hcom2", "hcom6"),
              ("hcom3", "hcom6"), ("hcom3", "b", "netoutput")]
    plan = _dsl_continuous("continuous_out_in_three", chains, {"hcom1", "hcom2", "hcom3"},
                           {"hcom4", "hcom5", "hcom6"}).plan()
    _one_block(plan, ("a:0", "hcom1:0", "hcom1:1", "hcom2:0", "hcom2:1", "hcom3:0", "hcom3:1"))
