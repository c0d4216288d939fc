"""Level 2 across streams: two blocks of different streams share memory only where GE's
``CanBlockLifeReuse`` (block_mem_assigner.cc) finds a stream dependency edge from the end of one to the
start of the other (``ge_level2._follows``, on the stream clocks of ``stream_order.known_before``), and
the spec's LAYOUT-STREAM-ORDER recomputes that order from the plan alone."""
from __future__ import annotations

import pytest

from zcspec.impl.compiler.memory import ge_level2
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.observe import observe_plan
from zcspec.spec.invariants.layout import NO_OVERLAP
from zcspec.spec.invariants.layout_streams import STREAM_ORDER

from zcspec.checks.cases.ge.graph import GE_SIZES, GeGraph


def _two_branches(edge: bool) -> GeGraph:
    """S (stream 0) feeds P (stream 1, a 4096 B output read by R on stream 1, then V) and Q -> T -> U on
    stream 0, T's output as large as P's; with ``edge`` a control edge V -> T orders stream 1's branch
    before T. The edge leaves V, a node after P's last reader: GE asks the stream's latest node known
    before T to come after P's life end (``depend_node_id > GetLifeEnd``), so R -> T would not do."""
    g = GeGraph("two_branches")
    g.node("S", outs=(1024,), stream=0)
    g.node("P", outs=(4096,), stream=1).node("R", outs=(1024,), stream=1).node("V", outs=(1024,), stream=1)
    g.node("Q", outs=(1024,), stream=0).node("T", outs=(4096,), stream=0).node("U", outs=(1024,), stream=0)
    g.edge("S", 0, "P", 0).edge("P", 0, "R", 0).edge("S", 0, "Q", 0).edge("Q", 0, "T", 0).edge("T", 0, "U", 0)
    g.edge("R", 0, "V", 0)
    if edge:
        g.ctrl("V", "T")
    return g


def _plan(g: GeGraph):
    graph = g.build()
    return graph, plan_memory(graph, GE_SIZES, order=g.order())


def test_blocks_of_two_streams_share_only_after_an_edge_between_them():
    for edge in (False, True):
        graph, plan = _plan(_two_branches(edge))
        p, t = plan.tensor("P:0"), plan.tensor("T:0")
        shared = p.offset < t.offset + t.size and t.offset < p.offset + p.size
        assert shared == edge, f"edge={edge}: P:0 at {p.offset}, T:0 at {t.offset}"
        assert list(STREAM_ORDER.predicate(observe_plan(graph, plan))) == []


def test_sharing_by_steps_alone_passes_no_overlap_and_fails_stream_order(monkeypatch):
    """Broken on purpose: level 2 merging across streams by steps (the fault variant
    streams-shared-by-steps). The steps of P's and T's memory do not meet, so LAYOUT-NO-OVERLAP holds,
    but nothing orders R (stream 1) before T (stream 0)."""
    monkeypatch.setattr(ge_level2, "_follows", lambda a, b: a.end < b.begin)
    graph, plan = _plan(_two_branches(False))
    obs = observe_plan(graph, plan)
    assert list(NO_OVERLAP.predicate(obs)) == []
    found = list(STREAM_ORDER.predicate(obs))
    assert found and any("'P:0'" in v.culprit and "'T:0'" in v.culprit for v in found), found


def test_a_control_edge_through_a_data_orders_nothing():
    """GE builds no stream edge out of a Data (GetDiffStreamEdgeLife skips GE-local nodes), so V -> Data
    -> T leaves the two branches unordered: no sharing."""
    g = _two_branches(False)
    g.node("D", op="Data", outs=(1024,), stream=0)
    g.ctrl("V", "D").ctrl("D", "T")
    graph, plan = _plan(g)
    p, t = plan.tensor("P:0"), plan.tensor("T:0")
    assert p.offset >= t.offset + t.size or t.offset >= p.offset + p.size


@pytest.mark.parametrize("streams", [{"n0": 0, "n1": 1, "n2": 0}])
def test_the_claim_reads_control_edges_and_refuses_backward_ones(streams):
    from zcspec.spec.examples.build import plan
    rows = [("a", "feature_map", 0, 512, 0, 1), ("b", "feature_map", 0, 512, 2, 2)]
    facts = dict(blocks=[("a", "b")], producers={"a": "n0", "b": "n2"}, consumers={"a": (1,)}, streams=streams)
    assert list(STREAM_ORDER.predicate(plan(rows, **facts)))
    assert not list(STREAM_ORDER.predicate(plan(rows, control={"n2": ("n1",)}, **facts)))
    backward = list(STREAM_ORDER.predicate(plan(rows, control={"n1": ("n2",)}, **facts)))
    assert any("node 'n1'" == v.culprit and "later in order" in v.message for v in backward)


def test_a_plan_naming_an_unknown_node_in_streams_or_control_is_refused():
    from zcspec.spec.errors import ObservationConsistencyError
    from zcspec.spec.examples.build import plan
    rows = [("a", "feature_map", 0, 512, 0, 1)]
    with pytest.raises(ObservationConsistencyError, match="'ghost'"):
        plan(rows, streams={"ghost": 1})
    with pytest.raises(ObservationConsistencyError, match="'ghost'"):
        plan(rows, control={"n1": ("ghost",)})


def test_the_reported_lower_bound_holds_when_another_stream_takes_memory_held_for_the_streams():
    """P:0 is read by R on stream 1 and Y on stream 0; no node of stream 0 is known to run after R, so P:0's
    block is held on stream 0 to the end, but B on stream 1 (after R, and after Y through a data edge) may
    take it (GE's GetLifeEnd: the read on B's stream). The bound counts P:0 until its last reader, not to
    the end. Broken on purpose once: with ``bounds.unit_intervals`` counting every unit to its ``last``,
    the plan reported a bound of 9728 B for a 5632 B feature map and LAYOUT-LOWER-BOUND failed."""
    from zcspec.spec.invariants.layout import LOWER_BOUND
    g = GeGraph("held_for_the_streams")
    g.node("P", outs=(4096,), stream=0).node("R", outs=(512,), stream=1).node("Y", outs=(512,), stream=0)
    g.node("B", outs=(4096,), stream=1).node("Z", outs=(512,), stream=1)
    g.edge("P", 0, "R", 0).edge("P", 0, "Y", 0).edge("Y", 0, "B", 0).edge("B", 0, "Z", 0).edge("R", 0, "Z", 1)
    graph = g.build()
    plan = plan_memory(graph, GE_SIZES, order=("P", "R", "Y", "B", "Z", "ge_netoutput"))
    assert plan.tensor("B:0").offset == plan.tensor("P:0").offset
    assert plan.lower_bound <= plan.regions["feature_map"]
    obs = observe_plan(graph, plan)
    assert list(LOWER_BOUND.predicate(obs)) == [] and list(STREAM_ORDER.predicate(obs)) == []
    assert list(NO_OVERLAP.predicate(obs)) == []
