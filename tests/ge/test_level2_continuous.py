"""Level 2's continuous path, GE's ``MemoryBlock::AddContinuousLifeReuseBlock`` (block_mem_assigner.cc), which
``AddLifeReuseBlock`` takes when either block feeds a continuous input (``IsNoAlignSizeReuseBlock``). No GE
unit test isolates it (``Resize`` builds blocks by hand: tests/ge/CASES.md), so these graphs are built for
each of its rules, in GE's unit-test sizes (``GE_SIZES``). zcspec plans a continuous group as one block
(here a NoPadding PhonyConcat of two 1000 B pieces: real size 2048 B)."""
from __future__ import annotations


def _concat_then(g, *tail):
    """A (1000 B), B (1000 B) -> PhonyConcat P -> C (512 B), then the nodes ``tail`` (name, size) in a chain."""
    g.node("A", outs=(1000,)).node("B", outs=(1000,)).node("P", op="PhonyConcat", outs=(2000,))
    g.node("C", outs=(512,))
    g.edge("A", 0, "P", 0).edge("B", 0, "P", 1).edge("P", 0, "C", 0)
    prev = "C"
    for name, size in tail:
        g.node(name, outs=(size,)).edge(prev, 0, name, 0)
        prev = name
    g.node("out", op="NetOutput", outs=()).edge(prev, 0, "out", 0)
    return g


def _block(plan, tensor):
    return next(b for b in plan.blocks if tensor in b.tensors)


def test_a_later_continuous_block_of_equal_size_takes_the_earlier_block(ge_graph):
    """X (2048 B) is read before the concat's pieces are written; X's block sorts first (equal aligned size,
    earlier begin), so it is the parent the concat's block is offered to. A continuous child of equal
    aligned size, no larger than its real size, takes a childless parent: X:0 goes into the group's block
    and the feature map is 2560 B (zcspec once kept them apart: 4608 B)."""
    g = ge_graph("later_continuous_parent")
    g.node("X", outs=(2048,)).node("Y", outs=(512,)).edge("X", 0, "Y", 0)
    g.node("A", outs=(1000,)).node("B", outs=(1000,)).node("P", op="PhonyConcat", outs=(2000,))
    g.node("C", outs=(512,)).node("out", op="NetOutput", outs=())
    g.edge("Y", 0, "A", 0).edge("Y", 0, "B", 0).edge("A", 0, "P", 0).edge("B", 0, "P", 1)
    g.edge("P", 0, "C", 0).edge("C", 0, "out", 0)
    plan = g.plan()
    assert _block(plan, "X:0").parent == _block(plan, "P:0").id
    assert plan.regions["feature_map"] == 2560


def test_a_continuous_parent_offers_nothing_to_its_children(ge_graph):
    """F (1100 B, aligned 1536) then D (1024 B), both after the concat, lives apart: the group's block takes F
    at its ``child_offset``; D no longer fits beside it (1536 + 1024 > 2048), and GE's continuous path does
    not offer D to F, where the ordinary path would nest it (F is free by then and holds 1536 B): D keeps
    its own block."""
    g = _concat_then(ge_graph("continuous_children"), ("F", 1100), ("E", 512), ("D", 1024), ("G", 512))
    plan = g.plan()
    group, d, f = _block(plan, "P:0"), _block(plan, "D:0"), _block(plan, "F:0")
    assert f.parent == group.id and f.offset == group.offset
    assert d.parent is None


def test_a_continuous_parent_takes_no_child_larger_than_its_real_size(ge_graph):
    """D (2100 B, aligned 2560) sorts before the group (2048): the group is offered to D as a child, and a
    continuous child smaller than its parent is refused (``AddContinuousLifeReuseBlock``: the continuous
    block's largest size must be at least the other's), so the two keep their own memory."""
    g = _concat_then(ge_graph("continuous_smaller"), ("D", 2100), ("E", 512))
    plan = g.plan()
    assert _block(plan, "D:0").parent is None and _block(plan, "P:0").parent is None


def test_a_continuous_output_block_is_an_ordinary_block_in_level_two(ge_graph):
    """F's two outputs (continuous_output, one 2048 B block) live after X (4096 B) is read. GE asks for a
    continuous output's block without ``continuous`` (``ApplyContinuousMemory``), so it is no
    ``continuous_block_``: level 2 offers it to X's block like any other, which takes it, and
    ``AssignContinuousBlocks`` (continuous inputs only) leaves it in place. zcspec once never let such a
    block be a child and moved it to the end of the list: 6656 B instead of 4608 B."""
    g = ge_graph("continuous_output_child")
    g.node("X", outs=(4096,)).node("Y", outs=(512,)).node("F", op="Split", outs=(1024, 1024), continuous_output=True)
    g.node("G", outs=(512,)).node("H", outs=(512,)).node("S", outs=(512,)).node("out", op="NetOutput", outs=())
    g.edge("X", 0, "Y", 0).edge("Y", 0, "F", 0).edge("F", 0, "G", 0).edge("F", 1, "H", 0)
    g.edge("G", 0, "S", 0).edge("H", 0, "S", 1).edge("S", 0, "out", 0)
    plan = g.plan()
    assert _block(plan, "F:0").parent == _block(plan, "X:0").id and _block(plan, "F:1") == _block(plan, "F:0")
    assert plan.regions["feature_map"] == 4608


def test_a_continuous_output_takes_a_released_block_at_the_first_stage(ge_graph):
    """X (2048 B) is released before F's two outputs (continuous_output, 2048 B together) are written, and
    S (2048 B) comes after them: GE's ``ApplyContinuousMemory`` asks without ``continuous``, so the walk gives
    F the block X released, and S the same block once F's outputs are read (``ReuseBlock`` refuses only a
    ``continuous_block_``): one block for the three."""
    g = ge_graph("continuous_output_first_stage")
    g.node("X", outs=(2048,)).node("Y", outs=(512,)).node("F", op="Split", outs=(1024, 1024), continuous_output=True)
    g.node("G", outs=(512,)).node("H", outs=(512,)).node("S", outs=(2048,)).node("T", outs=(512,))
    g.node("out", op="NetOutput", outs=())
    g.edge("X", 0, "Y", 0).edge("Y", 0, "F", 0).edge("F", 0, "G", 0).edge("F", 1, "H", 0)
    g.edge("G", 0, "S", 0).edge("H", 0, "S", 1).edge("S", 0, "T", 0).edge("T", 0, "out", 0)
    plan = g.plan()
    assert _block(plan, "X:0") == _block(plan, "F:0") == _block(plan, "F:1") == _block(plan, "S:0")
