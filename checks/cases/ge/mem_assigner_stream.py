"""GE's ``tests/ge/ut/ge/graph/build/mem_assigner_unittest.cc`` (UtestMemoryAssignerTest), ported: several streams.

The graphs whose nodes run on several streams, where cross-stream lifetimes decide what may
share memory: MakeMultiDiffStreamGraph(1), MakeDiffStreamDependenceGraph, MakeDiffStreamRefMemGraph,
MakeGraph and MakeStreamGraph, the NoPadding groups fed from two streams
(MakeDiffStreamSameOutGraphWithNoPaddingContinousInput(2), MakeDiffStreamGraph) and the graph-DSL
DiffStreamEdgeExcludeData. The continuous-input graphs are mem_assigner_continuous.py.

How each case compares with GE (and what a deviation records): graph.py.
"""
from __future__ import annotations

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case
from zcspec.checks.cases.ge.graph import GeGraph
from zcspec.checks.cases.ge.graph import disjoint, reuses
from zcspec.checks.cases.ge.graph import some_op


def _multi_stream_graph(streams):
    """MakeMultiDiffStreamGraph(1): a -> b, c -> d -> e (4 outputs) -> f (4 inputs)."""
    g = GeGraph("multi_stream")
    a, b, c, rest = streams
    some_op(g, "A", stream=a)
    some_op(g, "B", 4096, stream=b)
    some_op(g, "C", stream=c)
    some_op(g, "D", stream=rest)
    some_op(g, "E", (2048,) * 4, op="Split", stream=rest)
    some_op(g, "F", stream=rest)
    g.edge("A", 0, "B", 0).edge("A", 0, "C", 0).edge("B", 0, "D", 1).edge("C", 0, "D", 0).edge("D", 0, "E", 0)
    for k in range(4):
        g.edge("E", k, "F", k)
    return g


@ge_case("mem_assigner_unittest.cc")
def graph_multi_stream_memory_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_multi_stream_memory_reuse):
    MakeMultiDiffStreamGraph, a:1 -> b:0, c:2 -> d:1 -> e:1 (4 outputs) -> f:1; GE expects HBM 19456 (the
    lower bound): a:0, read by b on stream 0 and c on stream 2, is free on stream 1 from d on, the first
    node of stream 1 known to run after both (GetDiffStreamMaxLifeTime); held to the end, 21504."""
    expect(_multi_stream_graph((1, 0, 2, 1)).plan().attributes.memory_size, 19456,
           '_multi_stream_graph((1, 0, 2, 1)).plan().attributes.memory_size')


@ge_case("mem_assigner_unittest.cc")
def graph1_multi_stream_memory_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph1_multi_stream_memory_reuse):
    MakeMultiDiffStreamGraph1, a:1 -> b:0, c:2 -> d, e, f on stream 2 (the code sets b to stream 0);
    GE expects HBM 19456."""
    expect(_multi_stream_graph((1, 0, 2, 2)).plan().attributes.memory_size, 19456,
           '_multi_stream_graph((1, 0, 2, 2)).plan().attributes.memory_size')


@ge_case("mem_assigner_unittest.cc")
def graph_multi_stream_dependence_memory_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_multi_stream_dependence_memory_reuse):
    MakeDiffStreamDependenceGraph, the chain a..e on stream 0 feeding f..j on stream 1, with a:1 -> g and
    b:1 -> h across; GE expects HBM 17408. Level 2 puts I:0 (stream 1) in B:0's block (stream 0: CanBlockLifeReuse
    through the edge e -> f) and G:0 in I:0's. Interval reuse then splits stream 1's workspace block (f..j's
    workspaces): g's and h's cross no member of I:0, so they join I:0 after G:0, 4096 + 1024 B inside I:0's
    4608 B with AddLifeReuseBlock's 512 B slack, and the block grows to 5120 B: 16896 without interval reuse."""
    g = GeGraph("stream_dependence")
    some_op(g, "A", (2048, 2048), op="Split", stream=0)
    some_op(g, "B", (4608, 2048), op="Split", stream=0)
    for name in "CDE":
        some_op(g, name, stream=0)
    some_op(g, "F")
    some_op(g, "G", 4096)
    some_op(g, "H")
    some_op(g, "I", 4608)
    some_op(g, "J")
    for edge in [("A", 0, "B", 0), ("B", 0, "C", 0), ("C", 0, "D", 0), ("D", 0, "E", 0), ("E", 0, "F", 0),
                 ("F", 0, "G", 0), ("A", 1, "G", 1), ("G", 0, "H", 0), ("B", 1, "H", 1), ("H", 0, "I", 0),
                 ("I", 0, "J", 0)]:
        g.edge(*edge)
    plan = g.plan()
    expect(plan.attributes.memory_size, 17408, 'plan.attributes.memory_size')
    # the layout the docstring explains (GE's test asserts only the total): I:0 and G:0 at B:0's head, g's
    # and h's workspaces split off their block and stacked after G:0, 512 B past I:0's 4608
    head = plan.tensor("B:0").offset
    fact(plan.tensor("I:0").offset == plan.tensor("G:0").offset == head,
         'plan.tensor("I:0").offset == plan.tensor("G:0").offset == head')
    fact(plan.tensor("G#ws0").offset == plan.tensor("H#ws0").offset == head + 4096,
         'plan.tensor("G#ws0").offset == plan.tensor("H#ws0").offset == head + 4096')
    fact(plan.tensor("G#ws0").block != plan.tensor("F#ws0").block,
         'plan.tensor("G#ws0").block != plan.tensor("F#ws0").block')


def _diff_stream_ref_graph(g_stream):
    """MakeDiffStreamRefMemGraph: a:1 (2 outputs) -> b:0 (refs a:0) -> c -> g; a:1 -> h; a ..ctrl..> d:1
    (2 outputs) -> e:0 (refs d:0) -> f -> g; d -> i. b and e carry NoPadding-continuous-input attrs on a
    single input, which GE ignores (one anchor); their outputs are refs of input 0. The control edge joins
    two stream-1 nodes, so it only fixes the order."""
    g = GeGraph("diff_stream_ref")
    some_op(g, "A", (2048, 2048), op="Split")
    some_op(g, "B", op="Max", stream=0, _reuse_input=True)
    some_op(g, "C", stream=0)
    some_op(g, "D", (2048, 2048), op="Split")
    some_op(g, "E", op="Max", stream=0, _reuse_input=True)
    some_op(g, "F", stream=0)
    some_op(g, "G", stream=g_stream)
    some_op(g, "H", stream=0)
    some_op(g, "I", stream=0)
    g.ctrl("A", "D")
    for edge in [("A", 0, "B", 0), ("A", 1, "H", 0), ("B", 0, "C", 0), ("C", 0, "G", 0), ("D", 0, "E", 0),
                 ("D", 0, "I", 0), ("E", 0, "F", 0), ("F", 0, "G", 1)]:
        g.edge(*edge)
    return g


@ge_case("mem_assigner_unittest.cc")
def graph_diff_stream_ref_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_diff_stream_ref_reuse):
    MakeDiffStreamRefMemGraph with g on stream 1; GE expects HBM 14336."""
    plan = _diff_stream_ref_graph(1).plan()
    fact(plan.tensor("B:0").alias_of == "A:0" and plan.tensor("E:0").alias_of == "D:0",
         'plan.tensor("B:0").alias_of == "A:0" and plan.tensor("E:0").alias_of == "D:0"')
    expect(plan.attributes.memory_size, 14336, 'plan.attributes.memory_size')


@ge_case("mem_assigner_unittest.cc")
def graph_diff_stream_ref_no_return_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_diff_stream_ref_no_return_reuse):
    MakeDiffStreamRefMemGraph with g on stream 0; GE expects HBM 16384."""
    expect(_diff_stream_ref_graph(0).plan().attributes.memory_size, 16384,
           '_diff_stream_ref_graph(0).plan().attributes.memory_size')


def _make_graph():
    """MakeGraph: a:0 -> b:0, c:1; b -> d:2, e:3; c, e -> g:3; d -> f:2 -> h:2 -> i:2; g, i -> j
    (NetOutput:3 with a 256000 B workspace); 1024 B outputs, workspaces 6000..60000 B."""
    g = GeGraph("make_graph")
    for name, ws, stream in [("A", 6000, 0), ("B", 120000, 0), ("C", 16000, 1), ("D", 24000, 2),
                             ("E", 24000, 3), ("F", 30000, 2), ("G", 32000, 3), ("H", 48000, 2),
                             ("I", 60000, 2)]:
        g.node(name, ws=(ws,), stream=stream, fixture=1)
    g.node("J", op="NetOutput", outs=(), ws=(256000,), stream=3)
    for edge in [("A", 0, "B", 0), ("A", 0, "C", 0), ("B", 0, "D", 0), ("B", 0, "E", 0), ("C", 0, "G", 0),
                 ("D", 0, "F", 0), ("E", 0, "G", 1), ("F", 0, "H", 0), ("G", 0, "J", 0), ("H", 0, "I", 0),
                 ("I", 0, "J", 1)]:
        g.edge(*edge)
    return g


@ge_case("mem_assigner_unittest.cc")
def test_l2_memory_type():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, test_l2_memory_type): MakeGraph with b's
    output memory type RT_MEMORY_L2, which GE plans as HBM (GetSymbolMemType keeps only P2P, HOST and
    HOST_SVM); GE expects HBM 459264 and two memory records (HBM and the always-present P2P one)."""
    plan = _make_graph().plan()
    expect(plan.attributes.memory_size, 459264, 'plan.attributes.memory_size')


@ge_case("mem_assigner_unittest.cc")
def graph_memory_set_last_used_attr():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_memory_set_last_used_attr): MakeGraph;
    GE marks f's input 0 (d's output) ATTR_NAME_IS_END_OF_INPUTMEM_LIFECYCLE: f is the last reader of that
    memory. zcspec has no such attribute; the same fact is d's output's last step being f's."""
    plan = _make_graph().plan()
    expect(plan.tensor("D:0").last, plan.order.index("F"), 'plan.tensor("D:0").last')


@ge_case("mem_assigner_unittest.cc")
def block_memory_assign_with_release_first_reuse_first_strategy():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest,
    block_memory_assign_with_release_first_reuse_first_strategy): MakeGraph with graph attr
    _mem_release_first_reuse_first (PlanOptions.mem_release_first_reuse_first); GE asserts only SUCCESS."""
    plan = _make_graph().plan(mem_release_first_reuse_first=True)
    fact(plan.attributes.memory_size > 0, 'plan.attributes.memory_size > 0')


@ge_case("mem_assigner_unittest.cc")
def graph_memory_stream_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_memory_stream_reuse): MakeStreamGraph,
    a:39 -> b:39 -> h:42, f:6 -> g:6 -> e:17; a -> c:44 -> d:44 -> e; GE asserts only SUCCESS."""
    g = GeGraph("stream_graph")
    for name, ws, size, stream in [("A", 6000, 1024, 39), ("B", 120000, 1024, 39), ("C", 16000, 20480, 44),
                                   ("D", 24000, 40960, 44), ("E", 24000, 1024, 17), ("F", 30000, 1024, 6),
                                   ("G", 32000, 1024, 6), ("H", 48000, 1024, 42)]:
        g.node(name, outs=(size,), ws=(ws,), stream=stream, fixture=1)
    for edge in [("A", 0, "B", 0), ("A", 0, "C", 0), ("B", 0, "H", 0), ("B", 0, "F", 0), ("C", 0, "D", 0),
                 ("D", 0, "E", 0), ("F", 0, "G", 0), ("G", 0, "E", 1)]:
        g.edge(*edge)
    fact(g.plan().attributes.memory_size > 0, 'g.plan().attributes.memory_size > 0')


@ge_case("mem_assigner_unittest.cc")
def DiffStreamNoPaddingContinuousInputNotReuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, DiffStreamNoPaddingContinuousInputNotReuse):
    MakeDiffStreamSameOutGraphWithNoPaddingContinousInput2, data -> A (two outputs, A:1 unread) -> B:0,
    and C:1, both into D:0 (NoPadding continuous input, output refs input 0); C's stream has no edge from
    stream 0, so the group's life begins at the start and A:1 must not share B's memory (CheckNotReuse).
    GE's data has a second, unused output; zcspec's Data has one."""
    g = GeGraph("diff_stream_nopadding2")
    g.node("data", op="Data", outs=(2048,), fixture=1)
    g.node("A", op="Split", outs=(2048, 2048), fixture=2)
    g.node("B", outs=(2048,), fixture=1)
    g.node("C", outs=(2048,), stream=1, fixture=1)
    g.node("D", op="PhonyConcat", outs=(4096,), fixture=1)
    g.edge("data", 0, "A", 0).edge("A", 0, "B", 0).edge("B", 0, "D", 0).edge("C", 0, "D", 1)
    fact(disjoint(g.plan(), "A:1", "B:0"), 'disjoint(g.plan(), "A:1", "B:0")')


@ge_case("mem_assigner_unittest.cc")
def DiffStreamNoPaddingContinuousInputHasEdgeCanReuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, DiffStreamNoPaddingContinuousInputHasEdgeCanReuse):
    MakeDiffStreamSameOutGraphWithNoPaddingContinousInput3, E (two outputs, E:1 unread) -> A (two outputs) -> B:0,
    and C:1, both into D:0 (NoPadding continuous input); a control edge A -> C. C's stream now knows stream 0 up
    to A, so the group's life begins at A and E:1, free before A, shares B's memory (CheckReuse)."""
    g = GeGraph("diff_stream_nopadding3")
    g.node("E", op="Split", outs=(2048, 2048), fixture=2)
    g.node("A", op="Split", outs=(2048, 2048), fixture=2)
    g.node("B", outs=(2048,), fixture=1)
    g.node("C", outs=(2048,), stream=1, fixture=1)
    g.node("D", op="PhonyConcat", outs=(4096,), fixture=1)
    g.edge("E", 0, "A", 0).edge("A", 0, "B", 0).edge("B", 0, "D", 0).edge("C", 0, "D", 1).ctrl("A", "C")
    fact(reuses(g.plan(), "E:1", "B:0"), 'reuses(g.plan(), "E:1", "B:0")')


@ge_case("mem_assigner_unittest.cc")
def DiffStreamNoPaddingContinuousInput_CanNotReuse_HasEdgeButLifeTimeTooBig():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest,
    DiffStreamNoPaddingContinuousInput_CanNotReuse_HasEdgeButLifeTimeTooBig):
    MakeDiffStreamSameOutGraphWithNoPaddingContinousInput4, G (3072, two outputs, G:1 unread) -> A -> C:0 and
    B:1 (two outputs) -> D:1, C and D into E:0 (NoPadding continuous input) -> F:1; a control edge A -> B. D's
    stream knows stream 0 up to A (through B), so the group's life begins at A and G:1 shares C's memory
    (CheckReuse, despite the test's name)."""
    g = GeGraph("diff_stream_nopadding4")
    g.node("G", op="Split", outs=(3072, 3072), fixture=2)
    g.node("A", outs=(2048,), fixture=1)
    g.node("B", op="Split", outs=(2048, 2048), stream=1, fixture=2)
    g.node("C", outs=(2048,), fixture=1)
    g.node("D", outs=(2048,), stream=1, fixture=1)
    g.node("E", op="PhonyConcat", outs=(4096,), fixture=1)
    g.node("F", outs=(1024,), stream=1, fixture=1)
    g.edge("G", 0, "A", 0).edge("A", 0, "C", 0).edge("B", 0, "D", 0).edge("C", 0, "E", 0).edge("D", 0, "E", 1)
    g.edge("E", 0, "F", 0).ctrl("A", "B")
    fact(reuses(g.plan(), "G:1", "C:0"), 'reuses(g.plan(), "G:1", "C:0")')


def _same_out_graph(d_stream=2, d_before_f=False):
    """MakeDiffStreamSameOutGraphWithNoPaddingContinousInput: a:1 -> b:0, c:1; c, b -> d (NoPadding,
    output refs input 0); c -> e:1 -> f:1; optionally d ..ctrl..> f."""
    g = GeGraph("diff_stream_same_out")
    g.node("A", outs=(2048,), stream=1, fixture=1).node("B", outs=(2048,), stream=0, fixture=1)
    g.node("C", outs=(2048,), stream=1, fixture=1)
    g.node("D", op="PhonyConcat", outs=(2048,), stream=d_stream, fixture=1)
    g.node("E", outs=(2048,), stream=1, fixture=1).node("F", outs=(2048,), stream=1, fixture=1)
    g.edge("A", 0, "B", 0).edge("A", 0, "C", 0).edge("B", 0, "D", 1).edge("C", 0, "D", 0)
    g.edge("C", 0, "E", 0).edge("E", 0, "F", 0)
    if d_before_f:
        g.ctrl("D", "F")
    return g


@ge_case("mem_assigner_unittest.cc")
def DiffStreamSameOut_NoPaddingContinousInput_NotReuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, DiffStreamSameOut_NoPaddingContinousInput_NotReuse):
    b (stream 0) and f (stream 1) may run concurrently, and b shares c's NoPadding block, so f must not
    reuse b (CheckNotReuse(B, F))."""
    fact(disjoint(_same_out_graph().plan(), "B:0", "F:0"), 'disjoint(_same_out_graph().plan(), "B:0", "F:0")')


@ge_case("mem_assigner_unittest.cc")
def DiffStreamSameOut_NoPaddingContinousInput_Reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, DiffStreamSameOut_NoPaddingContinousInput_Reuse):
    the same graph with d on stream 1 and d ..ctrl..> f (same stream: order only); GE asserts only SUCCESS
    (its comment: f could reuse c in theory, GE does not)."""
    fact(_same_out_graph(d_stream=1, d_before_f=True).plan().attributes.memory_size > 0,
         '_same_out_graph(d_stream=1, d_before_f=True).plan().attributes.memory_size > 0')


@ge_case("mem_assigner_unittest.cc")
def graph_diff_stream_memory_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_diff_stream_memory_reuse):
    MakeDiffStreamGraph (c, b -> d:1 NoPadding, d -> e -> f, all but b on stream 1); GE expects c:0 and
    f:0 to share memory (CheckReuse). Two rules give it: the stream edge b -> d lands on d, a PhonyConcat
    without a task, so a:0, read by b on stream 0, is free on stream 1 from d on (GetDiffStreamEdgeLife,
    GetDiffStreamMaxLifeTime; stream_order.takes_place) and e takes its block; and the NoPadding group
    ends at e, where its pieces' readers are known done on d's stream (CalNodeAsContinuousInputMaxLife),
    so f takes the group's block."""
    g = GeGraph("diff_stream")
    for name, stream in zip("ABCDEF", (1, 0, 1, 1, 1, 1)):
        some_op(g, name, stream=stream, op="PhonyConcat" if name == "D" else "Sum")
    g.edge("A", 0, "B", 0).edge("A", 0, "C", 0).edge("B", 0, "D", 1).edge("C", 0, "D", 0)
    g.edge("D", 0, "E", 0).edge("E", 0, "F", 0)
    fact(reuses(g.plan(), "C:0", "F:0"), 'reuses(g.plan(), "C:0", "F:0")')


@ge_case("mem_assigner_unittest.cc")
def DiffStreamEdgeExcludeData():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, DiffStreamEdgeExcludeData) (graph DSL):
    _arg_0 -> A -> B -> C -> out, _arg_1 -> D -> out, E:1 -> F:1 -> out, C ..ctrl..> _arg_1 ..ctrl..> E.
    Data executes nothing, so its control edge gives no stream 0 -> 1 dependency: A and E must not share
    (CheckReuse false) and GE expects HBM 1456128. Sizes: Data 1x1x224x224 float, B 1x1x32x32, E 1x1x512x512,
    the untyped ops a scalar float (4 B): "some" has no entry in the DSL's ``OpDescCfgRepo``
    (``op_desc_cfg_repo.cc``), so ``OpDescCfgBox::Build`` gives A, C, D and F no tensor (in and out counts 0)
    and ``GeGraphVisitor`` appends their anchors on the edges (``NodeUtils::AppendOutputAnchor``), whose
    desc has no shape. GE's value is then every tensor in its own block: 2 x 200704 (the Data, zero copy)
    + 1048576 (E) + 4096 (B) + 4 x 512 (A, C, D, F). Giving A, C, D and F the DSL's default 1x1x224x224
    instead plans 2256896: no zero-copy block is shared (GE's ``AddZeroCopyLifeReuseBlock`` runs only for
    io-reuse options or an unknown-shape root graph, ``InitIoReuseFlag``)."""
    g = GeGraph("diff_stream_edge_exclude_data", dsl=True)
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
    fact(reuses(plan, "A:0", "E:0", reuse=False), 'reuses(plan, "A:0", "E:0", reuse=False)')
    expect(plan.attributes.memory_size, 1456128, 'plan.attributes.memory_size')
    top = sorted(b.size for b in plan.blocks if b.parent is None and b.region in ("feature_map", "zero_copy"))
    expect(top, [512] * 4 + [4096, 200704, 200704, 1048576], 'top')


def _continuous_output_graph():
    """MakeContinuousOutputGraph: a, b, c (stream 1) -> d (stream 2: continuous inputs and continuous outputs,
    6144 + 2048 + 2048) -> e, f, g -> h, i, j (stream 1) -> k (as d) -> l, m, n (stream 1) -> o (stream 2)."""
    g = GeGraph("graph_continuous_output")
    for name in "ABC":
        some_op(g, name)
    some_op(g, "D", (6144, 2048, 2048), stream=2, op="HcomAllReduce", continuous_output=True)
    for name in "EFG":
        some_op(g, name, 2048, ws=2048)
    for name in "HIJ":
        some_op(g, name)
    some_op(g, "K", (6144, 2048, 2048), stream=2, op="HcomAllReduce", continuous_output=True)
    for name in "LMN":
        some_op(g, name)
    some_op(g, "O", 6144, stream=2)
    for srcs, dst in (("ABC", "D"), ("HIJ", "K"), ("LMN", "O")):
        for k, src in enumerate(srcs):
            g.edge(src, 0, dst, k)
    for src, dsts in (("D", "EFG"), ("K", "LMN")):
        for k, dst in enumerate(dsts):
            g.edge(src, k, dst, 0)
    for src, dst in zip("EFG", "HIJ"):
        g.edge(src, 0, dst, 0)
    return g


@ge_case("mem_assigner_unittest.cc")
def graph_continuous_output_memory_reuse():
    """mem_assigner_unittest.cc TEST_F(UtestMemoryAssignerTest, graph_continuous_output_memory_reuse):
    MakeContinuousOutputGraph; GE expects HBM 40960 (33792 with every node on one stream), which takes level 2
    across streams (CanBlockLifeReuse: ge_level2._follows) and padding continuous-input blocks used on another
    stream held to the end (units._group_unit; ended where their readers are known done, 38912). The continuous outputs themselves follow GE: one block,
    output i after the aligned sizes of the ones before it (ApplyContinuousMemory, AssignContinuousOutputMemory)."""
    p = _continuous_output_graph().plan()
    for node in "DK":
        d0, d1, d2 = (p.tensor(f"{node}:{k}") for k in range(3))
        fact(d0.block == d1.block == d2.block and (d1.offset, d2.offset) == (d0.offset + 6144, d0.offset + 8192),
             'd0.block == d1.block == d2.block and (d1.offset, d2.offset) == (d0.offset + 6144, d0.offset + 8192)')
    expect(p.attributes.memory_size, 40960, 'p.attributes.memory_size')
