"""The stages agree with each other: a plan that passes the spec compiles into a model file that loads and runs.

Every graph the planning strategies draw (dynamic-batch labels, streams, continuous groups, views,
in-place outputs, workspaces included), with both strategies: the plan is observed and checked by
the spec; a clean plan is compiled, encoded, loaded back (the loader recomputes the lower bound and
the I/O table with the compiler's own rules, so any disagreement between stages refuses a valid
file), and executed through both runtimes against each other and the oracle. A graph with
dynamic-batch labels runs once per branch; its random branches are not joined by a Merge, so the
outputs of a branch that did not run are not compared, only the execution claims that hold whatever
ran (no fault, no leak, failed calls change nothing).
"""
from __future__ import annotations

from hypothesis import given, note, reject

from zcspec.checks.scenario import Scenario, evaluate
from zcspec.checks.strategies.planning_graphs import planning_graphs
from zcspec.checks.zoo import control_edge_back, load as zoo_graph
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.observe import observe_plan
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes.mem_layout_conflict import mem_layout_conflict
from zcspec.spec.check import check

EXEC_NO_BATCH = None          # every invariant
EXEC_WITH_BATCH = ("EXEC-NO-FAULT", "EXEC-NO-LEAK", "EXEC-FAILED-CALL-NO-CHANGE")


def _stages(graph, strategy: str):
    try:
        return compile_stages(graph, CompileOptions(strategy=strategy))
    except PlanError:
        reject()  # a graph breaking a planning rule (e.g. a tensor in two continuous groups) is refused by design


def _pipeline_holds(graph, strategy: str) -> None:
    stages = _stages(graph, strategy)
    report = check(observe_plan(stages.graph, stages.plan))
    assert report.ok, str(report)
    loaded = load_model(encode(stages.model))
    assert loaded == stages.model
    labels = sorted({t.batch for t in loaded.tasks.tasks if t.batch})
    chosen = EXEC_WITH_BATCH if labels else EXEC_NO_BATCH
    for batch in labels or [None]:   # one execution per branch: a runtime launches the chosen one only
        runtime = {"runtime": "differential", "zero_copy": True, "inputs": "normal", "seed": 0}
        scenario = Scenario("execution", graph, CompileOptions(strategy=strategy),
                            runtime if batch is None else {**runtime, "batch": batch})
        for r in evaluate(scenario, chosen):
            assert r.ok, str(r)


@given(planning_graphs(max_nodes=8))
def test_a_plan_that_passes_the_spec_compiles_loads_and_runs(graph):
    graph = mem_layout_conflict(graph)
    note(f"batch labels: {sorted({n.attr('_batch_label', '') for n in graph.nodes} - {''})}")
    for strategy in ("ge", "compact"):
        _pipeline_holds(graph, strategy)


def test_a_view_of_an_input_as_output_compiles_loads_and_runs():
    """Data -> Reshape -> NetOutput compiled with exit 0 and its model file was then refused
    (plan.attributes.outputs[0] disagreed with the I/O table entry for 'reshape:0')."""
    for strategy in ("ge", "compact"):
        _pipeline_holds(zoo_graph("builtin:view_passthrough"), strategy)


def _batch_graph():
    """Two dynamic-batch branches (GE's _batch_label) of Relu -> Abs (twice as wide) -> Neg, joined by an Add."""
    b = GraphBuilder("batches")
    x = b.input("x", (1, 256))
    outs = []
    for label in ("b1", "b2"):
        t = b.op("Relu", [x], name=f"{label}_0", _batch_label=label)
        t = b.op("Abs", [t], name=f"{label}_1", _batch_label=label, shape=(1, 512))
        outs.append(b.op("Neg", [t], name=f"{label}_2", _batch_label=label, shape=(1, 256)))
    b.output(b.op("Add", outs, name="o"))
    return b.build()


def test_a_dynamic_batch_plan_loads_and_its_observation_keeps_the_labels():
    """The loader's copy of the lower bound ignored batch exclusivity (4096 against 5632) and the
    observer dropped the labels, so the spec saw overlaps between exclusive branches."""
    graph = _batch_graph()
    for strategy in ("ge", "compact"):
        stages = compile_stages(graph, CompileOptions(strategy=strategy))
        assert load_model(encode(stages.model)) == stages.model
        obs = observe_plan(stages.graph, stages.plan)
        assert obs.batch_labels["b1_0:0"] == "b1" and obs.batch_labels["b2_0:0"] == "b2"
        assert check(obs).ok, str(check(obs))


def _tail_piece_graph():
    """Relu (13x9 floats: 468 bytes, GE size 512) -> outer-axis Split (1, 12) -> Neg each. The second piece
    starts at byte 36 and is 432 bytes: its own padded size (480) from there reached byte 516."""
    b = GraphBuilder("tail_piece")
    r = b.op("Relu", [b.input("x", (13, 9))], name="r")
    a, c = b.op("Split", [r], name="s", outputs=[((1, 9), "float32"), ((12, 9), "float32")], axis=0, split=(1, 12))
    b.output(b.op("Neg", [a], name="n1"), b.op("Neg", [c], name="n2"))
    return b.build()


def test_a_view_piece_does_not_grow_its_root_past_the_roots_own_size():
    """The block of a tensor cut by an outer-axis Split was sized from the last piece's offset plus its own
    padded size (516 bytes, so 1024), while the model file's figures count the root's own size (512): the
    file was refused (plan.naive). GE's block is its largest member's size; a piece's bytes lie inside."""
    for strategy in ("ge", "compact"):
        stages = compile_stages(_tail_piece_graph(), CompileOptions(strategy=strategy))
        root = stages.plan.tensor("r:0")
        assert stages.plan.regions["feature_map"] == root.aligned_size == 512
        _pipeline_holds(_tail_piece_graph(), strategy)


def _split_split_allreduce():
    """The pipeline property's counterexample: Data in1 -> Split (1, 12) -> Split (1, 11); HcomAllReduce reads
    the first piece of each (the first is a view of the Data at offset 0)."""
    b = GraphBuilder("split_split_allreduce")
    x = b.input("in1", (13, 9))
    a, rest = b.op("Split", [x], name="split_3", outputs=[((1, 9), "float32"), ((12, 9), "float32")],
                   axis=0, split=(1, 12))
    c, d = b.op("Split", [rest], name="split_4", outputs=[((1, 9), "float32"), ((11, 9), "float32")],
                axis=0, split=(1, 11))
    o0, o1 = b.op("HcomAllReduce", [a, c], name="allreduce", outputs=[((1, 9), "float32"), ((1, 9), "float32")],
                  reduction="sum")
    b.output(d, o0, o1)
    return b.build()


def test_a_view_piece_feeding_a_continuous_input_is_copied_and_the_data_stays_zero_copy():
    """Input 0 of the collective was the Data's whole memory (the Split piece at offset 0 joined the group with
    its root), so input 1 sat at +1024 instead of +512 and the Data lost zero copy. GE copies it twice: the piece
    is a NoPadding continuous output in the continuous input's symbol (a copy before the collective's input), and
    the symbol holds a user input (a copy right after the Data, which all its readers read)."""
    for strategy in ("ge", "compact"):
        stages = compile_stages(_split_split_allreduce(), CompileOptions(strategy=strategy))
        assert stages.graph.node["allreduce"].inputs[0] == "identity_0_allreduce_MemLayoutConflict_0:0"
        assert stages.graph.node["identity_0_allreduce_MemLayoutConflict_0"].inputs == ("split_3:0",)
        assert stages.graph.node["split_3"].inputs == ("identity_0_split_3_MemLayoutConflict_1:0",)
        assert stages.graph.consumers["in1"] == ("identity_0_split_3_MemLayoutConflict_1",)
        assert stages.plan.tensor("in1").zero_copy
        _pipeline_holds(_split_split_allreduce(), strategy)


def _concat_of_a_slice_and_its_input(start: int):
    b = GraphBuilder("slice_and_input")
    x = b.input("in0", (4, 8))
    s = b.op("Slice", [x], name="slice", shape=(2, 8), starts=(start,), ends=(start + 2,), axes=(0,))
    b.output(b.op("Relu", [b.op("PhonyConcat", [s, x], name="concat", shape=(6, 8), axis=0)], name="out"))
    return b.build()


def test_a_concat_of_a_slice_of_a_graph_input_and_the_input_copies_both():
    """PhonyConcat(Slice(in0), in0), in0 a graph input: GE never lets the user's buffer be a piece of a
    continuous block (MemLayoutConflictOptimizer: user input x NoPadding continuous input: a copy after the
    Data), the slice's piece is a NoPadding continuous output in the concat's input symbol and the two
    inputs share one symbol (copies before both concat inputs), and in0 keeps zero copy."""
    for start in (0, 2):
        for strategy in ("ge", "compact"):
            stages = compile_stages(_concat_of_a_slice_and_its_input(start), CompileOptions(strategy=strategy))
            assert stages.graph.node["concat"].inputs == ("identity_0_concat_MemLayoutConflict_0:0",
                                                          "identity_1_concat_MemLayoutConflict_1:0")
            assert stages.graph.node["slice"].inputs == ("identity_0_slice_MemLayoutConflict_2:0",)
            assert stages.plan.tensor("in0").zero_copy
            _pipeline_holds(_concat_of_a_slice_and_its_input(start), strategy)


def test_a_fused_collective_with_continuous_outputs_compiles_loads_and_runs():
    """HcomAllReduce with continuous_output=True: one block for both outputs, copies before the NetOutput; the
    model runs through both runtimes with the oracle's results and the spec's claims on the plan."""
    b = GraphBuilder("fused_collective")
    x, y = b.input("x", (2, 8)), b.input("y", (2, 8))
    o0, o1 = b.op("HcomAllReduce", [b.op("Relu", [x], name="rx"), b.op("Neg", [y], name="ny")], name="ar",
                  outputs=[((2, 8), "float32")] * 2, continuous_output=True)
    b.output(b.op("Abs", [o0], name="a0"), o0, o1)
    for strategy in ("ge", "compact"):
        _pipeline_holds(b.build(), strategy)


def test_a_tensor_read_on_another_stream_is_reused_after_the_edge_back_and_runs_race_free():
    """GE's GetDiffStreamMaxLifeTime: a:0 (stream 1) is read by b on stream 0 and c on stream 2; d on stream 1
    waits for both, so from d on stream 1 may reuse a:0's memory (GE's graph_multi_stream_memory_reuse). The
    model runs through both runtimes with EXEC-NO-RACE judging every cross-stream access from the trace."""
    b = GraphBuilder("edge_back")
    x = b.input("x", (4, 64))
    a = b.op("Relu", [x], name="a", stream=1)
    bb = b.op("Neg", [a], name="b", stream=0)
    c = b.op("Abs", [a], name="c", stream=2)
    d = b.op("Add", [bb, c], name="d", stream=1)
    e = b.op("Relu", [d], name="e", stream=1)
    b.output(b.op("Neg", [e], name="f", stream=1))
    for strategy in ("ge", "compact"):
        p = _stages(b.build(), strategy).plan
        if strategy == "ge":
            assert p.tensor("e:0").block == p.tensor("a:0").block, "a:0 is free on stream 1 from d on"
        _pipeline_holds(b.build(), strategy)


def test_a_tensor_read_on_another_stream_is_not_reused_before_the_edge_back():
    """a:0 (stream 1) is read by b on stream 0; m and n on stream 1 may run while b still reads, and only d
    waits for b. Ending a:0's life at b's step let m take its memory: EXEC-NO-RACE and the oracle caught it."""
    b = GraphBuilder("before_edge_back")
    x = b.input("x", (4, 64))
    a = b.op("Relu", [x], name="a", stream=1)
    bb = b.op("Neg", [a], name="b", stream=0)
    n = b.op("Neg", [b.op("Abs", [x], name="m", stream=1)], name="n", stream=1)
    b.output(b.op("Add", [bb, n], name="d", stream=1))
    for strategy in ("ge", "compact"):
        p = _stages(b.build(), strategy).plan
        assert p.tensor("a:0").block not in {p.tensor("m:0").block, p.tensor("n:0").block}
        _pipeline_holds(b.build(), strategy)


def test_a_control_edge_back_frees_a_tensor_read_on_another_stream_and_runs_race_free():
    """builtin:control_edge_back: m (stream 1) follows b (stream 0) by a control edge, so from m on stream 1
    may reuse a:0's memory; both runtimes put their event on that edge."""
    p = _stages(control_edge_back(), "ge").plan
    assert p.tensor("n:0").block == p.tensor("a:0").block, "a:0 is free on stream 1 from m on"
    for strategy in ("ge", "compact"):
        _pipeline_holds(control_edge_back(), strategy)


def test_without_the_control_edges_event_the_reuse_races(monkeypatch):
    """Break on purpose: tasks that forget their control edges (no ``after``) let n overwrite a:0 while b
    may still read it on stream 0; the device trace shows it (EXEC-NO-RACE)."""
    from zcspec.impl.compiler.tasks import stream_waits
    monkeypatch.setattr(stream_waits.StreamWaits, "stands_for", lambda self, name: frozenset())
    scenario = Scenario("execution", control_edge_back(), CompileOptions(strategy="ge"),
                        {"runtime": "differential", "zero_copy": True, "inputs": "normal", "seed": 0})
    failed = {i for r in evaluate(scenario, ("EXEC-NO-RACE",)) for i in r.violated()}
    assert failed == {"EXEC-NO-RACE"}
