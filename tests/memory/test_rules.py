"""One small graph per GE placement or reuse rule; each assertion fails if the rule is dropped."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory

N = 256  # (1, N) float32: 1024 bytes, GE size 1056, one 1536-byte block


def _b(name="g"):
    return GraphBuilder(name)


def _overlap(p, a, b):
    ta, tb = p.tensor(a), p.tensor(b)
    return ta.region == tb.region and ta.offset < tb.offset + tb.aligned_size and tb.offset < ta.offset + ta.aligned_size


def test_sizes_follow_ge_padding_and_block_rounding():
    b = _b()
    x = b.input("x", (1, 10))  # 40 bytes -> align32 64 + 32 = 96
    b.output(b.op("Relu", [x], name="r"))
    p = plan_memory(b.build())
    assert (p.tensor("x").size, p.tensor("x").aligned_size) == (96, 512)
    p32 = plan_memory(b.build(), PlanOptions(block_align=32))
    assert p32.tensor("x").aligned_size == 96


def test_zero_copy_io_blocks_are_never_reused_or_merged():
    # After 'a' reads x, a same-sized intermediate could take x's block; it must not
    # (AddZeroCopyLifeReuseBlock, InitReuseFlag).
    b = _b()
    x = b.input("x", (1, N))
    a = b.op("Relu", [x], name="a")
    c = b.op("Abs", [a], name="c")
    d = b.op("Neg", [c], name="d")
    b.output(d)
    for strategy in ("ge", "compact"):
        p = plan_memory(b.build(), PlanOptions(strategy=strategy))
        assert {t.name for t in p.tensors if t.region == "zero_copy"} == {"x", "d:0"}
        for blk in p.blocks:
            if blk.zero_copy:
                assert len(blk.tensors) == 1
        assert p.regions["feature_map"] == 1536 * 2  # a and c; d is the output


def test_zero_copy_inputs_after_outputs_sorted_by_raw_size_and_together():
    b = _b()
    big = b.input("big", (1, 4 * N))
    small = b.input("small", (1, N))
    mid = b.input("mid", (1, 2 * N))
    s = b.op("Sum", [b.op("Relu", [big], name="r1", shape=(1, N)), small], name="s")
    b.output(b.op("Add", [s, b.op("Relu", [mid], name="r2", shape=(1, N))], name="o"))
    p = plan_memory(b.build())
    out = p.tensor("o:0")
    ins = [p.tensor(n) for n in ("small", "mid", "big")]
    assert out.offset == 0
    assert [t.offset for t in ins] == [1536, 1536 * 2, 1536 * 2 + 2560]  # ascending raw size, back to back
    assert p.regions["zero_copy"] == 1536 * 2 + 2560 + 4608
    attrs_ = p.attributes
    assert attrs_.zero_copy_memory_size == p.regions["zero_copy"]
    assert attrs_.memory_size == p.regions["feature_map"] + p.regions["zero_copy"]
    basic = {a.tensor: a.basic_offset for a in attrs_.inputs}
    assert basic["small"] == p.regions["feature_map"] + 1536
    assert all(a.is_zero_copy_block for a in attrs_.inputs)


def test_zero_copy_is_refused_for_ops_that_cannot_refresh_and_double_outputs():
    b = _b()
    x = b.input("x", (1, N))
    a = b.op("Relu", [x], name="a")
    c = b.op("Abs", [a], name="c")
    b.output(c, c)  # one tensor feeding two NetOutput inputs is not zero-copy (GetOutputFlowToNetoutputNum)
    p = plan_memory(b.build(), PlanOptions(no_zero_copy_ops={"Relu"}))  # IsNodeSupportZeroCopy: x's reader cannot refresh
    assert not p.tensor("x").zero_copy and p.tensor("x").region == "feature_map"
    assert not p.tensor("c:0").zero_copy
    assert [a.is_zero_copy_block for a in p.attributes.inputs] == [False]
    # Non-zero-copy I/O is never shared either: x and c stay apart although their lives do not meet.
    assert not _overlap(p, "x", "c:0")


def test_data_feeding_a_continuous_input_is_not_zero_copy():
    b = _b()
    x = b.input("x", (1, N))
    y = b.op("Relu", [x], name="y")
    r = b.op("HcomAllReduce", [x, y], name="ar", outputs=[((1, N), "float32"), ((1, N), "float32")])
    b.output(*r)
    p = plan_memory(b.build())
    assert p.tensor("x").region == "feature_map" and not p.tensor("x").zero_copy  # GE's IsZeroCopyBlock


def test_continuous_inputs_padding_are_contiguous_in_input_order():
    b = _b()
    x = b.input("x", (1, N))
    u = b.op("Relu", [x], name="u", shape=(1, 2 * N))
    v = b.op("Abs", [x], name="v")
    w = b.op("Neg", [x], name="w")
    r = b.op("HcomAllReduce", [w, u, v], name="ar", outputs=[((1, N), "float32")] * 3)
    b.output(*r)
    for strategy in ("ge", "compact"):
        p = plan_memory(b.build(), PlanOptions(strategy=strategy))
        w0 = p.tensor("w:0").offset
        assert p.tensor("u:0").offset == w0 + 1536
        assert p.tensor("v:0").offset == w0 + 1536 + 2560
        assert len({p.tensor(t).block for t in ("w:0", "u:0", "v:0")}) == 1


def test_continuous_inputs_nopadding_are_back_to_back_in_raw_bytes():
    b = _b()
    x = b.input("x", (1, 10))
    u = b.op("Relu", [x], name="u")
    v = b.op("Abs", [x], name="v")
    c = b.op("PhonyConcat", [u, v], name="pc", shape=(2, 10))
    b.output(b.op("Neg", [c], name="o", shape=(2, 10)))
    p = plan_memory(b.build())
    assert p.tensor("v:0").offset == p.tensor("u:0").offset + 40  # AssignContinuousInputMemory: the raw size, no padding
    assert p.tensor("u:0").alias_of == "pc:0" and p.tensor("pc:0").offset == p.tensor("u:0").offset


def test_continuous_conflicts_are_clear_errors():
    b = _b()
    x = b.input("x", (1, N))
    u = b.op("Relu", [x], name="u")
    b.output(b.op("PhonyConcat", [u, u], name="pc", shape=(2, N)))
    with pytest.raises(PlanError, match=r"'u:0'.*two continuous-input blocks") as e:
        plan_memory(b.build())
    assert e.value.node == "pc" and e.value.tensor == "u:0"
    b = _b()
    x = b.input("x", (1, N))
    w = b.weight("w", np.ones((1, N), np.float32))
    b.output(b.op("HcomAllReduce", [x, w], name="ar", outputs=[((1, N), "float32")] * 2)[0])
    with pytest.raises(PlanError, match="weight or variable"):
        plan_memory(b.build())


def test_atomic_outputs_live_the_whole_graph_after_the_reused_blocks():
    b = _b()
    x = b.input("x", (1, N))
    a = b.op("Relu", [x], name="a")
    s = b.op("ReduceSum", [a], name="s")          # atomic: cleaned then accumulated into (IsAtomicOutputMemory)
    c = b.op("Abs", [s], name="c")
    d = b.op("Neg", [c], name="d")
    e = b.op("Neg", [d], name="e")
    b.output(e)
    p = plan_memory(b.build())
    s_ = p.tensor("s:0")
    others = [t for t in p.tensors if t.region == "feature_map" and t.name != "s:0"]
    assert all(s_.offset >= t.offset + t.aligned_size for t in others)  # 3.3: after the feature-map blocks
    assert all(not _overlap(p, "s:0", t.name) for t in others)           # never shared
    assert p.lower_bound >= 1536 * 3  # whole-graph life counts at every step


def test_in_place_outputs_share_their_input_block():
    b = _b()
    x = b.input("x", (1, N))
    a = b.op("Relu", [x], name="a")
    i = b.op("Neg", [a], name="i", _reuse_input=True)
    b.output(b.op("Abs", [i], name="o"))
    p = plan_memory(b.build())
    assert p.tensor("i:0").alias_of == "a:0" and p.tensor("i:0").offset == p.tensor("a:0").offset
    assert p.tensor("i:0").block == p.tensor("a:0").block


def test_weights_and_variables_sit_in_their_own_regions():
    b = _b()
    x = b.input("x", (1, N))
    w = b.weight("w", np.ones((1, N), np.float32))
    w2 = b.weight("w2", np.ones((1, 3), np.float32))
    rw = b.op("Reshape", [w], name="rw", shape=(N,))
    v = b.op("Variable", [], name="v", shape=(1, N), dtype="float32")
    s = b.op("Sum", [x, w, v, w2], name="s")
    b.output(s, rw)
    p = plan_memory(b.build())
    assert (p.tensor("w").region, p.tensor("w").offset) == ("weight", 0)
    assert (p.tensor("w2").region, p.tensor("w2").offset) == ("weight", 1536)
    assert p.tensor("rw:0").alias_of == "w" and p.tensor("rw:0").region == "weight"
    assert p.tensor("v:0").region == "fixed"
    assert p.regions["feature_map"] == 0


def test_disable_reuse_shares_nothing():
    b = _b()
    x = b.input("x", (1, N))
    t = x
    for i in range(5):
        t = b.op("Relu", [t], name=f"r{i}")
    b.output(t)
    reuse = plan_memory(b.build())
    off = plan_memory(b.build(), PlanOptions(reuse=False))
    assert reuse.regions["feature_map"] == 1536 * 2
    assert off.regions["feature_map"] == 1536 * 4 == off.naive
    off_c = plan_memory(b.build(), PlanOptions(reuse=False, strategy="compact"))
    assert off_c.regions["feature_map"] == 1536 * 4


def test_no_reuse_flag_keeps_a_node_out_of_sharing():
    b = _b()
    x = b.input("x", (1, N))
    a = b.op("Relu", [x], name="a", _no_reuse=True)
    c = b.op("Abs", [a], name="c")
    d = b.op("Neg", [c], name="d")
    e = b.op("Neg", [d], name="e")
    b.output(e)
    for strategy in ("ge", "compact"):
        p = plan_memory(b.build(), PlanOptions(strategy=strategy))
        assert not any(_overlap(p, "a:0", t) for t in ("c:0", "d:0"))
        assert p.regions["feature_map"] == 1536 * 3


def _first_stage_blocks(graph, options) -> dict[str, int]:
    """Unit id -> block id after the binary planner's first stage, before level 2 (whose interval reuse
    may move a unit into a clone block)."""
    from zcspec.impl.compiler.memory.ge_blocks import first_stage
    from zcspec.impl.compiler.memory.lifetimes import lifetimes
    from zcspec.impl.compiler.memory.units import build_units

    units = build_units(graph, lifetimes(graph), options)
    return {u: blk.id for u, blk in first_stage(units.units, units.steps, options)[1].items()}


def test_first_stage_reuse_takes_the_last_released_same_size_block():
    b = _b()
    x = b.input("x", (1, N))
    p1 = b.op("Relu", [x], name="p1")
    p2 = b.op("Abs", [x], name="p2")
    s = b.op("Add", [p1, p2], name="s")   # releases p1 then p2 (input order)
    n = b.op("Neg", [s], name="n")        # LIFO: takes p2's block
    b.output(b.op("Add", [n, s], name="o"))
    lifo = _first_stage_blocks(b.build(), PlanOptions())
    assert lifo["n:0"] == lifo["p2:0"] != lifo["p1:0"]  # GetLastReleaseBlock LIFO
    fifo = _first_stage_blocks(b.build(), PlanOptions(mem_release_first_reuse_first=True))
    assert fifo["n:0"] == fifo["p1:0"] != fifo["p2:0"]


def test_first_stage_needs_an_exact_block_size_and_level_two_merges_smaller_blocks():
    b = _b()
    x = b.input("x", (1, N))
    big = b.op("Relu", [x], name="big", shape=(1, 4 * N))
    g = b.op("Abs", [big], name="g", shape=(1, N))
    small = b.op("Neg", [g], name="small", shape=(1, 2 * N))  # 2560-byte block: no exact match for big's 4608
    b.output(b.op("Relu", [small], name="o", shape=(1, N)))
    p = plan_memory(b.build())
    assert p.tensor("small:0").block != p.tensor("big:0").block
    # Level 2 (ReuseBlocksByLifeTime) puts small inside big's block: their lives do not meet.
    assert _overlap(p, "small:0", "big:0")
    blk = {bl.id: bl for bl in p.blocks}[p.tensor("small:0").block]
    assert blk.parent == p.tensor("big:0").block


def test_streams_never_share_blocks():
    b = _b()
    x = b.input("x", (1, N))
    a = b.op("Relu", [x], name="a", stream=1)
    c = b.op("Abs", [a], name="c", stream=1)
    d = b.op("Neg", [c], name="d")
    e = b.op("Neg", [d], name="e")
    b.output(e)
    for strategy in ("ge", "compact"):
        p = plan_memory(b.build(), PlanOptions(strategy=strategy))
        assert not _overlap(p, "a:0", "d:0")  # same size, disjoint lives, different streams


def _batch_graph():
    b = _b()
    x = b.input("x", (1, N))
    outs = []
    for label in ("b1", "b2"):
        t = b.op("Relu", [x], name=f"{label}_0", _batch_label=label)
        t = b.op("Abs", [t], name=f"{label}_1", _batch_label=label, shape=(1, 2 * N))
        t = b.op("Neg", [t], name=f"{label}_2", _batch_label=label, shape=(1, N))
        outs.append(t)
    b.output(b.op("Add", outs, name="o"))
    return b.build()


def test_dynamic_batch_branches_share_memory():
    g = _batch_graph()
    for strategy in ("ge", "compact"):
        p = plan_memory(g, PlanOptions(strategy=strategy))
        assert _overlap(p, "b1_0:0", "b2_0:0")  # branches are exclusive at run time (4)
    import attrs

    unlabelled = attrs.evolve(g, nodes=[n.with_attrs(_batch_label="") for n in g.nodes])
    assert plan_memory(g).regions["feature_map"] < plan_memory(unlabelled).regions["feature_map"]


def test_dynamic_batch_split_limit_makes_several_parents():
    g = _batch_graph()
    one = plan_memory(g)
    split = plan_memory(g, PlanOptions(batch_split_size=1536))
    parents_one = {bl.parent for bl in one.blocks if bl.parent is not None}
    parents_split = {bl.parent for bl in split.blocks if bl.parent is not None}
    assert len(parents_split) > len(parents_one)  # 4.2: a new parent whenever the next block passes the limit


def test_cross_stream_reads_keep_memory_to_the_end():
    b = _b()
    x = b.input("x", (1, N))
    a = b.op("Relu", [x], name="a")
    c = b.op("Abs", [a], name="c", stream=1)     # reads a on another stream
    d = b.op("Neg", [x], name="d")
    e = b.op("Neg", [d], name="e")
    f = b.op("Neg", [e], name="f")
    b.output(f, c)
    p = plan_memory(b.build())
    assert not _overlap(p, "a:0", "e:0")  # by step lifetimes they could share; the other stream may still read a


def test_ge_keeps_the_smaller_of_its_two_planners():
    from zcspec.impl.compiler.memory.lifetimes import lifetimes
    from zcspec.impl.compiler.memory.offsets import _feature_map
    from zcspec.impl.compiler.memory.units import build_units

    b = _b()
    t = b.input("x", (1, N))
    for i, k in enumerate((4, 1, 3, 1, 2, 4, 1, 3)):  # no two neighbours of one size: exact match rarely helps
        t = b.op("Relu", [t], name=f"r{i}", shape=(1, k * N))
    b.output(b.op("Relu", [t], name="o", shape=(1, N)))
    g, o = b.build(), PlanOptions()
    units = build_units(g, lifetimes(g), o)
    binary = _feature_map(units.units, units.steps, o, False)[3]
    max_block = _feature_map(units.units, units.steps, o, True)[3]
    assert binary != max_block  # the two planners disagree here
    assert plan_memory(g).arena == min(binary, max_block)  # HybridMemAssigner::Assign: the smaller score wins


def test_only_the_binary_planner_runs_level_two():
    # MaxBlockMemAssigner::NeedLevel2Reuse() is false (max_block_mem_assigner.h): its blocks keep
    # creation order and adopt no children; the binary planner sorts and merges (MaxBlockMemAssigner::NeedLevel2Reuse).
    from zcspec.impl.compiler.memory.ge_blocks import assign_blocks
    from zcspec.impl.compiler.memory.lifetimes import lifetimes
    from zcspec.impl.compiler.memory.units import build_units

    b = _b()
    t = b.input("x", (1, N))
    for i, k in enumerate((1, 4, 1, 2, 8, 1, 3)):
        t = b.op("Relu", [t], name=f"r{i}", shape=(1, k * N))
    b.output(b.op("Relu", [t], name="o", shape=(1, N)))
    g, o = b.build(), PlanOptions()
    units = build_units(g, lifetimes(g), o)
    binary, _ = assign_blocks(units.units, units.steps, o, max_block=False)
    max_block, _ = assign_blocks(units.units, units.steps, o, max_block=True)
    assert [blk.id for blk in max_block] == sorted(blk.id for blk in max_block)
    assert not any(blk.children or blk.parent for blk in max_block)
    assert [blk.id for blk in binary] != sorted(blk.id for blk in binary)


def test_mem_layout_conflict_pass_makes_conflicting_graphs_plannable():
    """u twice into one PhonyConcat and into an HcomAllReduce with a weight: every continuous input after the
    first reached by u's memory reads a copy (continuous_input_and_continuous_input.cc), the weight a copy
    (immutable x continuous input), and the graph output pc:0, in u's symbol with the collective's input,
    a copy before the NetOutput (user output x continuous input)."""
    from zcspec.impl.compiler.passes.mem_layout_conflict import mem_layout_conflict
    from tests.helpers.plan_check import check_plan

    b = _b()
    x = b.input("x", (1, N))
    u = b.op("Relu", [x], name="u")
    w = b.weight("w", np.ones((1, N), np.float32))
    pc = b.op("PhonyConcat", [u, u], name="pc", shape=(2, N))
    ar = b.op("HcomAllReduce", [u, w], name="ar", outputs=[((1, N), "float32")] * 2)
    b.output(pc, *ar)
    g = b.build()
    fixed = mem_layout_conflict(g)
    assert {n.name for n in fixed.nodes} - {n.name for n in g.nodes} == {
        "identity_1_pc_MemLayoutConflict_1", "identity_0_ar_MemLayoutConflict_2", "identity_1_ar_MemLayoutConflict_3",
        "identity_0_NetOutput_MemLayoutConflict_0"}
    assert fixed.node["pc"].inputs == ("u:0", "identity_1_pc_MemLayoutConflict_1:0")
    assert fixed.outputs == g.outputs, "the outputs keep their names"
    for strategy in ("ge", "compact"):
        assert check_plan(fixed, plan_memory(fixed, PlanOptions(strategy=strategy))) == []
    assert mem_layout_conflict(fixed) is fixed


def test_zero_copy_outputs_follow_the_level_two_order_largest_first():
    b = _b()
    x = b.input("x", (1, N))
    small = b.op("Relu", [x], name="small")
    big = b.op("Abs", [x], name="big", shape=(1, 4 * N))
    b.output(small, big)
    p = plan_memory(b.build())
    assert p.tensor("big:0").offset == 0 and p.tensor("small:0").offset == 4608  # CompareLifeInterval, AssignZeroCopyMemory
    off = plan_memory(b.build(), PlanOptions(reuse=False))
    assert off.tensor("small:0").offset == 0  # reuse off: creation order (AssignMemoryWithReuse)


def test_unconsumed_outputs_are_released_at_the_next_node():
    b = _b()
    x = b.input("x", (1, N))
    a, mask = b.op("MaxPool", [x], name="a", outputs=[((1, N), "float32"), ((1, N), "float32")])
    c = b.op("Abs", [a], name="c")    # could take mask's block at once; GE releases mask one node later
    d = b.op("Neg", [c], name="d")
    b.output(b.op("Neg", [d], name="o"))
    first = _first_stage_blocks(b.build(), PlanOptions())
    assert first["c:0"] != first["a:1"]
    assert first["d:0"] == first["a:1"]  # ReleaseMemory: free from the node after next


def test_atomic_outputs_of_each_batch_follow_one_another():
    b = _b()
    x = b.input("x", (1, N))
    outs = [b.op("Relu", [b.op("ReduceSum", [x], name=f"s{label}", _batch_label=label)], name=f"r{label}")
            for label in ("b1", "b2")]
    b.output(b.op("Add", outs, name="o"))
    p = plan_memory(b.build())
    # GE's ReAssignAtomicMemory (graph_mem_assigner.cc) starts each batch label at the running end
    # (r1.11 restarted them all from one start, so batches overlapped).
    b1, b2 = p.tensor("sb1:0"), p.tensor("sb2:0")
    assert b2.offset == b1.offset + b1.aligned_size



def _ref_piece_graph(reads_root_late: bool):
    """e (2048 B) -> h refs e with 1024 B; h, i (2048 B) into a NoPadding concat j; optionally k reads e:0 after j.
    The tensors' shapes hold their sizes (``uint8``, ``GeGraph.node``), so h:0's piece is smaller than its root."""
    from zcspec.checks.cases.ge.graph import GeGraph
    g = GeGraph("ref_piece")
    g.node("E", outs=(2048,), ws=(1024,), stream=1)
    g.node("H", "Max", outs=(1024,), ws=(1024,), stream=1, _reuse_input=True)
    g.node("I", outs=(2048,), ws=(1024,), stream=1)
    g.node("J", "PhonyConcat", outs=(2048,), ws=(1024,), stream=1)
    g.edge("E", 0, "H", 0).edge("H", 0, "J", 0).edge("I", 0, "J", 1)
    if reads_root_late:
        g.node("K", outs=(2048,), ws=(1024,), stream=1)
        g.edge("E", 0, "K", 0).edge("J", 0, "K", 1)
    return g


def test_a_nopadding_piece_smaller_than_its_root_is_followed_at_its_own_end():
    # AssignContinuousInputMemory lays the next piece after this input's bytes, even when the input is a smaller
    # ref of a larger tensor (mem_assigner_unittest.cc graph_ref_continuous_input_memory_reuse: h:0 refs e:0).
    p = _ref_piece_graph(reads_root_late=False).plan()   # judged by the spec's claims (MEM-CONT-INPUT among them)
    assert p.tensor("H:0").offset == p.tensor("E:0").offset     # h:0 is e:0's memory
    assert p.tensor("I:0").offset == p.tensor("H:0").offset + 1024
    # e:0's last 1024 B lie under i:0: sound only because e:0 is dead by then. When k reads e:0 after j, the
    # in-place guard gives h its own memory, and the plan still passes the spec (LAYOUT-NO-OVERLAP).
    p = _ref_piece_graph(reads_root_late=True).plan()
    assert p.tensor("H:0").alias_of != "E:0" and p.tensor("I:0").offset == p.tensor("H:0").offset + 1024
