"""Level 2's interval reuse (block_mem_assigner.cc ``CanIntervalLifeReuse``, called from
``MemoryBlock::AddLifeReuseBlock``): on one stream, the members of a block whose lifetimes cross none of a
parent's members may live in the parent's memory even though the two blocks' spans meet; the members that
cross leave for a clone block (``ge_level2._interval``)."""
from __future__ import annotations

from zcspec.impl.compiler.memory import ge_level2, offsets
from zcspec.impl.compiler.memory.lifetimes import lifetimes
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.memory.units import build_units
from zcspec.impl.compiler.observe import observe_plan
from zcspec.spec.invariants.layout import NO_OVERLAP

from zcspec.checks.cases.ge.graph import GE_SIZES, GeGraph


def _chain() -> GeGraph:
    """N0 -> N1 -> ... -> N6, one stream. First-stage reuse makes three blocks: X (1024 B: x_a read at step 1,
    then x_b written at step 4), Q (512 B: q, r, s one after another) and P (2048 B: p, steps 2-3). X's span
    (0-5) meets P's, but neither x_a nor x_b is alive while p is; q and r are."""
    g = GeGraph("interval_chain")
    for name, size in [("N0", 1024), ("N1", 512), ("N2", 2048), ("N3", 512), ("N4", 1024), ("N5", 512)]:
        g.node(name, outs=(size,))
    g.node("N6", outs=(512,))
    for a, b in zip(["N0", "N1", "N2", "N3", "N4", "N5"], ["N1", "N2", "N3", "N4", "N5", "N6"]):
        g.edge(a, 0, b, 0)
    return g


def _plan():
    g = _chain()
    graph = g.build()
    return graph, plan_memory(graph, GE_SIZES, order=g.order())


def _inside(plan, name: str, host: str) -> bool:
    t, h = plan.tensor(name), plan.tensor(host)
    return h.offset <= t.offset and t.offset + t.size <= h.offset + h.aligned_size


def test_members_that_cross_no_member_of_the_parent_live_in_its_memory():
    graph, plan = _plan()
    assert _inside(plan, "N0:0", "N2:0") and _inside(plan, "N4:0", "N2:0")
    assert not _inside(plan, "N1:0", "N2:0") and not _inside(plan, "N3:0", "N2:0")
    # the lower bound: p and one 512 B tensor are alive at steps 2 and 3
    assert plan.regions["feature_map"] == 2048 + 512
    assert list(NO_OVERLAP.predicate(observe_plan(graph, plan))) == []


def _binary_feature_map() -> int:
    """The binary-block planner's feature map alone (the max-block planner, which has no level 2, also
    reaches 2560 B on this chain, and the plan keeps the smaller)."""
    graph = _chain().build()
    units = build_units(graph, lifetimes(graph, _chain().order()), GE_SIZES)
    return offsets._feature_map(units.units, units.steps, GE_SIZES, False)[3]


def test_without_interval_reuse_the_spans_keep_the_blocks_apart(monkeypatch):
    assert _binary_feature_map() == 2048 + 512
    monkeypatch.setattr(ge_level2, "_interval", lambda *args: False)
    assert _binary_feature_map() == 2048 + 1024 + 512


def test_keeping_the_crossing_members_is_caught_by_no_overlap(monkeypatch):
    """Broken on purpose: no member counts as crossing, so q and r stay in the 512 B block that joins p's
    memory while p is alive; the spec's LAYOUT-NO-OVERLAP names them."""
    monkeypatch.setattr(ge_level2, "_crossing", lambda parent, units, window: [])
    graph, plan = _plan()
    found = list(NO_OVERLAP.predicate(observe_plan(graph, plan)))
    assert found and any("N2:0" in v.culprit for v in found), found
