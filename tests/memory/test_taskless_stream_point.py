"""A node without a task holds its stream where a stream edge lands on it (issue 36, old row P1).

GE builds a stream edge into any node that is not GE-local, a PhonyConcat without a task too
(block_mem_assigner.cc ``GetDiffStreamEdgeLife``), and its stream allocator attaches the edge's
receive event to that node (stream_allocator.cc ``InsertOneEventInTwoNodes``), a Recv node in front
of it on its stream (``GenerateSyncEventNodes``): the next task of that stream waits. zcspec has one
rule for it (``stream_order.takes_place``), read by the planner's clocks and by task generation,
which puts what the point stands for on other streams in the next task's ``TaskDef.after``.

The graph here: A on stream 1 feeds B on stream 0; X, a Reshape of B's output on stream 1, has no
task; Y on stream 1 comes next and reads only the graph input. A:0 is free on stream 1 from X on
(B is known done there), so Y's output takes A:0's memory, and Y must wait for B.
"""
from __future__ import annotations

import attrs
import numpy as np
import pytest

from zcspec.checks.cases.ge.mem_assigner_stream import graph_diff_stream_memory_reuse
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.memory import stream_order
from zcspec.impl.compiler.observe import observe_plan
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.tasks import stream_waits
from zcspec.impl.compiler.tasks.tasklist import TaskDef
from zcspec.impl.compiler.topology import execution_order
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import load
from zcspec.impl.runtime.v2.runner import run
from zcspec.spec.check import check
from zcspec.spec.examples.build import plan as example_plan
from zcspec.spec.registry import all_invariants

FM = "feature_map"
X_IN = (np.arange(16, dtype=np.float32).reshape(4, 4) - 7.5) * 0.25
OPTIONS = CompileOptions(strategy="ge")


def point_graph():
    b = GraphBuilder("taskless_point")
    x = b.input("x", (4, 4))
    a = b.op("Neg", [x], name="A", stream=1)
    relu = b.op("Relu", [a], name="B", stream=0)
    view = b.op("Reshape", [relu], name="X", stream=1, shape=(16,))
    y = b.op("Exp", [x], name="Y", stream=1)
    b.output(view, b.op("Neg", [y], name="Y2", stream=1))
    return b.build()


WANT = {"X:0": np.maximum(-X_IN, 0).reshape(16), "Y2:0": -np.exp(X_IN)}


def _task(model, node):
    return next(t for t in model.tasks.tasks if t.node == node)


def test_a_stream_edge_makes_a_taskless_node_a_point_of_its_stream():
    g = point_graph()
    order = execution_order(g)
    step = {n: i for i, n in enumerate(order)}
    node = g.node
    assert stream_order.takes_place(g, node["X"])            # B (stream 0) -> X (stream 1)
    assert not stream_order.takes_place(g, node["x"])        # a Data holds nothing
    assert not stream_order.takes_place(g, node["NetOutput"])  # reads stream 1 on stream 0, but ends the model
    clock = stream_order.known_before(g, order)
    assert clock["X"] == {0: step["B"], 1: step["X"]}
    assert clock["Y"][0] == step["B"]                        # the next node of stream 1 knows B


def test_a_view_on_its_producers_stream_is_no_point():
    b = GraphBuilder("same_stream_view")
    a = b.op("Neg", [b.input("x", (4, 4))], name="A", stream=1)
    b.output(b.op("Relu", [b.op("Reshape", [a], name="V", stream=1, shape=(16,))], name="R", stream=1))
    g = b.build()
    assert not stream_order.takes_place(g, g.node["V"])


def test_ges_diff_stream_case_reuses_c_for_f():
    """The ported GE case (mem_assigner_unittest.cc graph_diff_stream_memory_reuse) is a match."""
    graph_diff_stream_memory_reuse()


def test_the_next_task_after_a_taskless_point_waits_and_both_runtimes_compute_the_graph():
    g = point_graph()
    model = build_model(g, OPTIONS)
    plan = model.plan
    assert plan.tensor("Y:0").block == plan.tensor("A:0").block, "A:0 is free on stream 1 from X on"
    assert _task(model, "B").index in _task(model, "Y").after, "Y must wait for B's event"
    report = check(observe_plan(g, plan))
    assert report.ok, [str(v) for v in report.violations]
    for runtime in ("v1", "v2"):
        dev = Device()
        ins, outs = stage_inputs(dev, model, {"x": X_IN}), alloc_outputs(dev, model)
        if runtime == "v1":
            lm = load(dev, model)
            lm.execute(ins, outs)
            lm.unload()
        else:
            run(model, dev, ins, outs, zero_copy=True)
        got = read_outputs(dev, model, outs)
        free_buffers(dev, ins + outs)
        for name, want in WANT.items():
            np.testing.assert_allclose(got[name], want, rtol=1e-6, err_msg=f"{runtime} {name}")


def _violated(graph, claims=None):
    scenario = Scenario("execution", graph, OPTIONS,
                        {"runtime": "differential", "zero_copy": True, "inputs": "normal", "seed": 0})
    return {i for r in evaluate(scenario, claims) for i in r.violated()}


def test_the_execution_keeps_every_claim():
    assert _violated(point_graph()) == set()


def test_without_the_wait_at_the_point_the_reuse_races(monkeypatch):
    """Break on purpose: the next task of stream 1 forgets the point's wait; Y overwrites A:0 while B may
    still read it on stream 0, and the device trace shows it."""
    after = stream_waits.StreamWaits.after

    def forgetful(self, name):
        self.pending.clear()
        return after(self, name)
    monkeypatch.setattr(stream_waits.StreamWaits, "after", forgetful)
    assert "EXEC-NO-RACE" in _violated(point_graph(), ("EXEC-NO-RACE",))


def test_the_spec_counts_the_point_only_from_its_stream_label():
    """LAYOUT-STREAM-ORDER rebuilds the point from the plan's ``stream_labels``: without them the same plan
    shares A:0's memory in no order the streams guarantee."""
    g = point_graph()
    obs = observe_plan(g, build_model(g, OPTIONS).plan)
    assert obs.stream_labels["X"] == 1
    bare = attrs.evolve(obs, stream_labels={})
    failed = {v.invariant_id for v in check(bare).violations}
    # and GE's hold (LAYOUT-STREAM-HOLD): without the point no node of stream 1 is known to run after B's read
    # of A:0, so GE holds A:0's block to the end and Y's output may not take it
    assert failed == {"LAYOUT-STREAM-ORDER", "LAYOUT-STREAM-HOLD"}


def test_planner_and_waits_read_one_rule(monkeypatch):
    """Counting only tasks as points (the old rule) changes both sides at once: Y keeps its own memory and
    waits for nothing."""
    monkeypatch.setattr(stream_order, "takes_place", lambda graph, node: bool(stream_order.ops.task_kinds(node)))
    g = point_graph()
    model = build_model(g, OPTIONS)
    assert model.plan.tensor("Y:0").block != model.plan.tensor("A:0").block
    assert _task(model, "Y").after == ()
    assert _violated(g) == set()


@pytest.mark.parametrize("strategy", ["ge", "compact"])
def test_both_strategies_plan_the_point_graph_within_the_spec(strategy):
    g = point_graph()
    model = build_model(g, CompileOptions(strategy=strategy))
    report = check(observe_plan(g, model.plan))
    assert report.ok, [str(v) for v in report.violations]


def _fake_task(index, node, stream, batch=""):
    return TaskDef(index, node, "kernel", "Neg", stream, (), batch=batch)


def test_tasks_of_one_branch_do_not_use_up_the_points_wait():
    """A task of one dynamic-batch branch may not launch, so each following task of the stream waits too, up
    to the first task outside any branch."""
    g = point_graph()
    waits = stream_waits.StreamWaits(g)
    index = 0
    for name in execution_order(g):
        if name in ("x", "X", "NetOutput"):   # no task
            waits.ran(name, [])
            continue
        after = waits.after(name)
        batch = "b1" if name == "Y" else ""
        if name in ("Y", "Y2"):
            assert after == (1,), (name, after)             # B's task, on stream 0
        waits.ran(name, [_fake_task(index, name, g.node[name].stream, batch)])
        index += 1


def _hand_plan(**extra):
    """The spec's own view, no planner: a (stream 1, n0) is read by n1 on stream 0; a control edge n1 -> n2
    lands on n2, which runs no task and is labelled stream 1; n3 on stream 1 writes b into a's bytes."""
    return example_plan([("a", FM, 0, 512, 0, 1), ("b", FM, 0, 512, 3, 3)], blocks=[("a", "b")], steps=4,
                        producers={"a": "n0", "b": "n3"}, consumers={"a": (1,)}, control={"n2": ("n1",)},
                        streams={"n0": 1, "n1": 0, "n3": 1}, **extra)


def test_layout_stream_order_counts_a_labelled_taskless_node_where_an_edge_lands():
    stream_order_claim = [i for i in all_invariants() if i.id == "LAYOUT-STREAM-ORDER"]
    assert check(_hand_plan(stream_labels={"n2": 1}), invariants=stream_order_claim).ok
    bare = check(_hand_plan(), invariants=stream_order_claim)
    assert {v.invariant_id for v in bare.violations} == {"LAYOUT-STREAM-ORDER"}
    # labelled with stream 0, the edge from n1 stays on its stream: n2 holds nothing of stream 1
    same = check(_hand_plan(stream_labels={"n2": 0}), invariants=stream_order_claim)
    assert {v.invariant_id for v in same.violations} == {"LAYOUT-STREAM-ORDER"}


def ge_case_shape():
    """graph_diff_stream_memory_reuse with kernels the device runs: C, B -> D (PhonyConcat, stream 1), B on
    stream 0, then E, F and G on stream 1."""
    b = GraphBuilder("diff_stream_concat")
    a = b.op("Neg", [b.input("x", (4, 4))], name="A", stream=1)
    d = b.op("PhonyConcat", [b.op("Neg", [a], name="C", stream=1), b.op("Relu", [a], name="B", stream=0)],
             name="D", stream=1, shape=(8, 4), axis=0)
    f = b.op("Neg", [b.op("Relu", [d], name="E", stream=1)], name="F", stream=1, shape=(8, 4))
    b.output(b.op("Exp", [f], name="G", stream=1, shape=(8, 4)))
    return b.build()


def test_the_ge_case_shape_reuses_as_ge_and_runs_race_free():
    g = ge_case_shape()
    model = build_model(g, OPTIONS)
    plan = model.plan
    assert plan.tensor("E:0").block == plan.tensor("A:0").block      # A:0 free on stream 1 from D on
    assert plan.tensor("F:0").offset == plan.tensor("C:0").offset     # f reuses c
    assert _task(model, "B").index in _task(model, "E").after
    assert _violated(g) == set()
