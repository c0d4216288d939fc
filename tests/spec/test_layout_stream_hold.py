"""LAYOUT-STREAM-HOLD: memory read on another stream is held, in GE's step numbers, until its own stream knows
the read is done (GetDiffStreamMaxLifeTime), and nothing of that stream takes it before.

The mutation run's unit_facts.py:124 (the same-stream test of ``stream_last`` negated: readers on other streams
no longer hold anything) planned GE's multi-ref graph on two streams in 18432 bytes where GE's test expects
20480: K, on G's stream, took G's bytes at the very node that first knows H's read is done. Every safety claim
held (the streams order it); only GE's unit-test numbers saw it."""
from __future__ import annotations

import attrs
from hypothesis import given, settings

from zcspec.checks.cases.ge.graph import GE_SIZES
from zcspec.checks.cases.ge.mem_assigner_continuous import _multi_ref_graph
from zcspec.checks.strategies.graphs import graphs
from zcspec.checks.strategies.planning_graphs import decorate
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.memory import unit_facts
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.observe import observe_plan
from zcspec.spec.check import check
from zcspec.spec.invariants import layout_stream_hold
from zcspec.spec.registry import get

CLAIM = "LAYOUT-STREAM-HOLD"


def _ge_plan(diff_stream: bool = True):
    g = _multi_ref_graph(diff_stream)
    graph = g.build()
    return observe_plan(graph, plan_memory(graph, GE_SIZES, order=g.order()))


def test_ge_s_two_stream_graph_holds_and_exercises_the_claim():
    obs = _ge_plan()
    held = {f.root: (hold, reader, knower) for f, hold, reader, knower in layout_stream_hold._held(obs)}
    assert held == {"G:0": (10, "H", "K"), "J:0": (11, "K", None)}, held
    report = check(obs, invariants=[get(CLAIM)])
    assert report.ok and CLAIM in report.exercised, str(report)


def test_one_stream_is_not_judged():
    assert not get(CLAIM).exercised(_ge_plan(diff_stream=False))


def test_a_life_that_ends_at_the_reader_fails_through_the_claim(monkeypatch):
    monkeypatch.setattr(unit_facts.Facts, "stream_last", lambda self, r, stream, last: last)
    found = list(get(CLAIM).violations(_ge_plan()))
    assert {v.culprit for v in found} == {"tensor 'K:0'", "tensor 'K#ws0'"}, found
    assert all(v.values["held"] == "G:0" and v.values["until"] == 10 and v.values["reader"] == "H" for v in found)


def test_memory_taken_on_the_reader_s_stream_is_left_to_stream_order():
    """relu_1 (stream 1) is read only by slice_2 on stream 0, and no node of stream 1 is known to run after
    it: GE holds relu_1's block to the end for stream 1, yet lets transpose_5, on stream 0 after slice_2, take
    it (CanBlockLifeReuse). The claim judges only pieces of memory on the held tensor's own stream."""
    def build(b):
        x = b.input("x", (2,))
        r = b.op("Relu", [x], stream=1)
        s = b.op("Slice", [r], starts=(0,), ends=(1,), axes=(0,))
        t = b.op("Transpose", [b.op("Neg", [b.op("Abs", [x], stream=1)], stream=1)], perm=(0,))
        b.output(s, b.op("Relu", [t]))
    from zcspec.impl.compiler.builder import GraphBuilder
    b = GraphBuilder("hold")
    build(b)
    stages = compile_stages(b.build())
    obs = observe_plan(stages.graph, stages.plan)
    assert "relu_1:0" in [f.root for f, *_ in layout_stream_hold._held(obs)]
    taken, held = obs.tensor["transpose_5:0"], obs.tensor["relu_1:0"]
    assert (taken.region, taken.offset) == (held.region, held.offset) and obs.streams["transpose_5"] == 0
    assert check(obs, invariants=[get(CLAIM), get("LAYOUT-STREAM-ORDER")]).ok


@settings(max_examples=150, deadline=None)
@given(graphs(max_nodes=10, max_dim=40).flatmap(lambda g: decorate(g, True, other_stream=3, streams=3)))
def test_the_planner_s_plans_on_several_streams_hold_the_claim(graph):
    stages = compile_stages(graph)
    obs = observe_plan(stages.graph, stages.plan)
    assert not list(get(CLAIM).violations(obs)) if get(CLAIM).exercised(obs) else True


def test_a_piece_of_another_dynamic_batch_branch_is_exempt():
    obs = _ge_plan()
    k = obs.tensor["K:0"]
    moved = attrs.evolve(obs, tensors=tuple(attrs.evolve(t, offset=obs.tensor["G:0"].offset) if t.name == "K:0"
                                            else t for t in obs.tensors))
    assert list(get(CLAIM).violations(moved)) and k.offset != obs.tensor["G:0"].offset
    branched = attrs.evolve(moved, batch_labels={"G:0": "b1", "K:0": "b2"})
    assert not [v for v in get(CLAIM).violations(branched) if v.culprit == "tensor 'K:0'"]
